//! What a shard's result may hold, checked on its bytes before anything
//! is parsed from them: `merge` prints, annotates and renders a shard's
//! strings, so a control character ([`no_controls`]) or a line the shard
//! did not earn ([`forged_line`]) is refused.

/// Whether JSON text holds a control character other than a line break,
/// a carriage return or a tab in one of its strings (a run's results never
/// do: names are checked, file names refused, diagnostics and diffs
/// written without them). JSON writes a control character in a string as
/// an escape (`\u001b`, `\b`, `\f`) or, for DEL and C1, as itself: one
/// pass over the bytes, nothing parsed or built.
fn holds_control(json: &[u8]) -> bool {
    let hex = |b: &[u8]| {
        std::str::from_utf8(b)
            .ok()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            b'\\' => match json.get(i + 1) {
                Some(b'b' | b'f') => return true,
                Some(b'u') => {
                    let code = json.get(i + 2..i + 6).and_then(hex);
                    if code
                        .and_then(char::from_u32)
                        .is_some_and(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
                    {
                        return true;
                    }
                    i += 6;
                    continue;
                }
                _ => i += 2,
            },
            0x7f => return true,
            0xc2 if json.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b)) => return true,
            _ => i += 1,
        }
    }
    false
}

/// Refuses a shard's data that holds a control character (see
/// [`holds_control`]): it would reach terminals, annotations and reports.
pub(super) fn no_controls(shown: &str, json: &[u8]) -> Result<(), String> {
    if holds_control(json) {
        Err(format!(
            "{shown} holds a control character in a string: not the result of a run"
        ))
    } else {
        Ok(())
    }
}

/// The keys whose strings may span lines: a diagnostic's `text` (what
/// the terminal shows), `help`, `message` and `label`. Every other string
/// of a shard's record (a name, a file, a status, a cell of a sweep's
/// row) is one line as a run writes it.
const MULTI_LINE_KEYS: [&str; 4] = ["text", "help", "message", "label"];

/// The deepest nesting a shard's record may have (serde_json's own limit
/// for what it parses): the scan keeps a key per level.
const MAX_DEPTH: usize = 128;

/// Finds a string in a shard's record that could print a line the shard
/// did not earn: a line break (LF, CR, VT, FF, NEL, LS, PS) in a string
/// that is one line as a run writes it, a lone CR anywhere, or a line of
/// a diagnostic's `text` that starts at the margin as `merge`'s own lines
/// do (`PASS  ...`, `2 passed, 0 failed`): a run's diagnostics indent
/// every line, and a golden diff's lines start with ` `, `-`, `+`, `@`,
/// `\` or `...`. One pass over the bytes, a key kept per level of
/// nesting; the error says what was found.
pub(super) fn forged_line(json: &[u8]) -> Result<(), String> {
    /// An open object (its current key) or array (the key it is under).
    struct Open {
        object: bool,
        key: Option<String>,
        key_next: bool,
    }
    let mut open: Vec<Open> = Vec::new();
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            c @ (b'{' | b'[') => {
                if open.len() == MAX_DEPTH {
                    return Err(format!("is nested more than {MAX_DEPTH} levels deep"));
                }
                let object = c == b'{';
                let key = if object {
                    None
                } else {
                    open.last().and_then(|o| o.key.clone())
                };
                open.push(Open {
                    object,
                    key,
                    key_next: object,
                });
            }
            b'}' | b']' => {
                open.pop();
            }
            b',' => {
                if let Some(o) = open.last_mut() {
                    o.key_next = o.object;
                }
            }
            b':' => {
                if let Some(o) = open.last_mut() {
                    o.key_next = false;
                }
            }
            b'"' => {
                let (text, end) = json_string(json, i + 1);
                match open.last_mut() {
                    Some(o) if o.key_next => o.key = Some(text),
                    o => check_line(&text, o.and_then(|o| o.key.as_deref()))?,
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The text of the JSON string whose contents start at `from` (escapes
/// read; one that is not valid becomes U+FFFD: the parse that follows
/// refuses it), and where the string ends.
fn json_string(json: &[u8], from: usize) -> (String, usize) {
    let mut out: Vec<u8> = Vec::new();
    let mut i = from;
    let hex = |at: usize| {
        json.get(at..at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    while i < json.len() {
        match json[i] {
            b'"' => return (String::from_utf8_lossy(&out).into_owned(), i + 1),
            b'\\' => {
                let (c, used) = match json.get(i + 1) {
                    Some(b'n') => ('\n', 2),
                    Some(b'r') => ('\r', 2),
                    Some(b't') => ('\t', 2),
                    Some(b'u') => match hex(i + 2) {
                        Some(hi @ 0xd800..=0xdbff) => {
                            let lo = (json.get(i + 6..i + 8) == Some(b"\\u"))
                                .then(|| hex(i + 8))
                                .flatten()
                                .filter(|lo| (0xdc00..=0xdfff).contains(lo));
                            match lo {
                                Some(lo) => (
                                    char::from_u32(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00))
                                        .unwrap_or('\u{fffd}'),
                                    12,
                                ),
                                None => ('\u{fffd}', 6),
                            }
                        }
                        Some(code) => (char::from_u32(code).unwrap_or('\u{fffd}'), 6),
                        None => ('\u{fffd}', 2),
                    },
                    Some(&other) => (char::from(other), 2),
                    None => ('\u{fffd}', 1),
                };
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                i += used;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), i)
}

/// Whether `c` starts a new line on a terminal or in a text reader.
fn breaks_line(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Checks one string of a shard's record, under `key` (see
/// [`forged_line`]).
fn check_line(text: &str, key: Option<&str>) -> Result<(), String> {
    let named = key.map_or("a string".to_string(), |k| format!("a `{k}`"));
    if text.replace("\r\n", "\n").contains('\r') {
        return Err(format!("holds a carriage return in {named}"));
    }
    let multi_line = key.is_some_and(|k| MULTI_LINE_KEYS.contains(&k));
    if !multi_line {
        if text.chars().any(breaks_line) {
            return Err(format!(
                "holds a line break in {named}, which a run writes on one line"
            ));
        }
        return Ok(());
    }
    if key == Some("text") {
        let indented = |line: &str| {
            line.is_empty()
                || line.starts_with([' ', '-', '+', '@', '\\'])
                || line.starts_with("...")
        };
        if let Some(line) = text.lines().find(|l| !indented(l)) {
            let shown: String = line.chars().take(40).collect();
            return Err(format!(
                "holds a diagnostic line that starts at the margin ({shown:?}), as no run writes one"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{forged_line, holds_control};

    #[test]
    fn line_breaks_are_found_under_their_key_as_json_writes_them() {
        for (json, found) in [
            (
                r#"{"name": "one line", "cases": [{"name": "a = 1"}]}"#,
                None,
            ),
            (r#"{"name": "two\nlines"}"#, Some("a `name`")),
            (r#"{"name": "two\u000alines"}"#, Some("a `name`")),
            (r#"{"rows": [["a", "b\u2028c"]]}"#, Some("a `rows`")),
            (
                r#"{"x": {"help": "a\nb"}, "file": "b\u2029"}"#,
                Some("a `file`"),
            ),
            (r#"{"summary": "a\rb"}"#, Some("carriage return")),
            (r#"{"text": "  x\r\n  y\n"}"#, None),
            (
                r#"{"text": "  × m\n--- g\n+++ actual run\n@@ -1 +1 @@\n-a\n+b\n c\n"}"#,
                None,
            ),
            (
                r#"{"text": "  × m\nFAIL  x"}"#,
                Some("starts at the margin"),
            ),
            (r#"{"message": "a\nb", "label": "c\nd"}"#, None),
            // An escaped quote does not end the string; a surrogate pair
            // is one character.
            (
                r#"{"name": "a\"b\ud83d\ude00", "file": "\n"}"#,
                Some("a `file`"),
            ),
            ("[\"top\nlevel\"]", Some("a string")),
        ] {
            let got = forged_line(json.as_bytes());
            match found {
                None => assert!(got.is_ok(), "{json}: {got:?}"),
                Some(says) => {
                    let e = got.expect_err(json);
                    assert!(e.contains(says), "{json}: {e}");
                }
            }
        }
        let deep = "[".repeat(200);
        assert!(forged_line(deep.as_bytes()).unwrap_err().contains("nested"));
    }

    #[test]
    fn control_characters_are_found_in_json_text_as_json_writes_them() {
        for (json, holds) in [
            (r#"{"a": "plain \n \t \r"}"#, false),
            (r#"{"a": "\u001b[2J"}"#, true),
            (r#"{"a": "\u0000"}"#, true),
            (r#"{"a": "\b"}"#, true),
            (r#"{"a": "\\u001b is text"}"#, false),
            (r#"{"a": "\u000A \u0009"}"#, false),
            (r#"{"a": "\u007f"}"#, true),
            ("{\"a\": \"\u{85}\"}", true),
            ("{\"a\": \"\u{7f}\"}", true),
            (r#"{"a": "é ü \u00e9"}"#, false),
        ] {
            assert_eq!(holds_control(json.as_bytes()), holds, "{json}");
        }
    }
}
