//! The file as the lab's panel changed it (`/NAME.toml?...`): each set
//! value written in place of the file's, a value the file does not write
//! added to its table (or a new table at the end), a removed key's line
//! gone, everything else as it was.

use crate::scenario::sweep::UNSET;

/// The file's text with these sets written in place of the values they
/// change, everything else (comments, layout) as it was; a swept path is
/// fixed to its one value. A value the file does not write goes on a line
/// of its own after the last value of its table, or, for a table or an
/// entry of a list of tables the file does not have, in a new `[table]`
/// or `[[list]]` at the end; an unset key's line is removed. Any other
/// path (inside an inline table, a list of values) is an error.
pub fn changed_file(text: &str, sets: &[(String, String)]) -> Result<String, String> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).map_err(|e| e.to_string())?;
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    // New tables at the end: their header, then their keys in set order.
    let mut added: Vec<(String, Vec<String>)> = Vec::new();
    for (path, value) in sets {
        if value == UNSET {
            let span = find_any(doc.get_ref(), path)?.span();
            edits.push((line_of(text, span)?, String::new()));
            continue;
        }
        if find_any(doc.get_ref(), path).is_err() && !on_axis(doc.get_ref(), path) {
            let (parent, key) = path
                .rsplit_once('.')
                .ok_or_else(|| format!("the file has no `{path}`"))?;
            let line = format!("{key} = {}\n", toml_value(value));
            match table_end(text, doc.get_ref(), parent) {
                Some(at) => edits.push((at..at, line)),
                None => {
                    let header = new_header(doc.get_ref(), parent)?;
                    match added.iter_mut().find(|(h, _)| *h == header) {
                        Some((_, lines)) => lines.push(line),
                        None => added.push((header, vec![line])),
                    }
                }
            }
            continue;
        }
        let sweep = doc.get_ref().iter().find(|(k, _)| k.get_ref() == "sweep");
        let axis = sweep.and_then(|(_, s)| match s.get_ref() {
            DeValue::Table(t) => t.iter().find(|(k, _)| k.get_ref() == path.as_str()),
            _ => None,
        });
        let value = toml_value(value);
        let (span, written) = match axis {
            Some((_, list)) => (list.span(), format!("[{value}]")),
            None => (find(doc.get_ref(), path)?, value),
        };
        edits.push((span, written));
    }
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = text.to_string();
    for (span, written) in edits {
        out.replace_range(span, &written);
    }
    for (header, lines) in added {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("\n{header}\n{}", lines.concat()));
    }
    Ok(out)
}

/// Whether `path` is a swept path of the document (written in `[sweep]`).
fn on_axis(doc: &toml::de::DeTable<'_>, path: &str) -> bool {
    use toml::de::DeValue;
    let sweep = doc.iter().find(|(k, _)| k.get_ref() == "sweep");
    sweep.is_some_and(|(_, s)| match s.get_ref() {
        DeValue::Table(t) => t.iter().any(|(k, _)| k.get_ref() == path),
        _ => false,
    })
}

/// The whole line holding the value at `span` (its key before it), when
/// nothing else is on it: what removing a key removes.
fn line_of(text: &str, span: std::ops::Range<usize>) -> Result<std::ops::Range<usize>, String> {
    let start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[span.end..]
        .find('\n')
        .map_or(text.len(), |i| span.end + i + 1);
    let rest = text[span.end..end].trim();
    if rest.is_empty() || rest.starts_with('#') {
        Ok(start..end)
    } else {
        Err("a key shares its line with another: it cannot be removed alone".into())
    }
}

/// Where a new key of the standard table at `parent` goes: after the
/// line of its last value. None when the file has no such table.
fn table_end(text: &str, doc: &toml::de::DeTable<'_>, parent: &str) -> Option<usize> {
    let toml::de::DeValue::Table(t) = find_any(doc, parent).ok()?.get_ref() else {
        return None;
    };
    let last = t.iter().map(|(_, v)| v.span().end).max()?;
    // An inline table's values end inside its braces: not a line of its own.
    let line_end = text[last..].find('\n').map_or(text.len(), |i| last + i + 1);
    let rest = text[last..line_end].trim();
    (rest.is_empty() || rest.starts_with('#')).then_some(line_end)
}

/// The header of a table the file does not have: `[dedup]`, or `[[operator]]`
/// for the entry after a top-level list's last (or its first).
fn new_header(doc: &toml::de::DeTable<'_>, parent: &str) -> Result<String, String> {
    use toml::de::DeValue;
    let segments: Vec<&str> = parent.split('.').collect();
    let existing = doc
        .iter()
        .find(|(k, _)| k.get_ref() == segments[0])
        .map(|(_, v)| v.get_ref());
    match (segments.as_slice(), existing) {
        ([table], None) => Ok(format!("[{table}]")),
        ([list, n], None) if *n == "1" => Ok(format!("[[{list}]]")),
        ([list, n], Some(DeValue::Array(items))) if n.parse::<usize>() == Ok(items.len() + 1) => {
            Ok(format!("[[{list}]]"))
        }
        _ => Err(format!(
            "the changed file cannot add `{parent}`: write it in the file"
        )),
    }
}

/// A `--set` value as the changed file writes it: a TOML value as TOML
/// writes it (on one line, without a comment), anything else as a TOML
/// string, as `--set` reads it. Whatever a query holds, it is one value in
/// place of one: it never adds a key or ends a line.
fn toml_value(value: &str) -> String {
    let one = format!("x = {value}")
        .parse::<toml::Table>()
        .ok()
        .filter(|t| t.len() == 1 && !value.contains(['\n', '\r']))
        .and_then(|t| t.get("x").map(toml::Value::to_string));
    one.unwrap_or_else(|| toml::Value::String(value.to_string()).to_string())
}

/// The span of the single value at a path of a parsed document: a value,
/// or a list of values (`only = ["poison"]`), never a table or a list of
/// tables.
fn find(table: &toml::de::DeTable<'_>, path: &str) -> Result<std::ops::Range<usize>, String> {
    use toml::de::DeValue;
    let value = find_any(table, path)?;
    match value.get_ref() {
        DeValue::Array(items)
            if !items
                .iter()
                .any(|i| matches!(i.get_ref(), DeValue::Table(_))) =>
        {
            Ok(value.span())
        }
        DeValue::Table(_) | DeValue::Array(_) => Err(format!("`{path}` is not a single value")),
        _ => Ok(value.span()),
    }
}

/// The value at a path of a parsed document, whatever it is.
fn find_any<'a, 'i>(
    table: &'a toml::de::DeTable<'i>,
    path: &str,
) -> Result<&'a toml::Spanned<toml::de::DeValue<'i>>, String> {
    use toml::de::DeValue;
    let mut segments = path.split('.');
    let first = segments.next().unwrap_or("");
    let mut value = table
        .iter()
        .find(|(k, _)| k.get_ref() == first)
        .map(|(_, v)| v)
        .ok_or_else(|| format!("the file has no `{first}`"))?;
    for segment in segments {
        value = match value.get_ref() {
            DeValue::Table(t) => t
                .iter()
                .find(|(k, _)| k.get_ref() == segment)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("the file has no `{path}`"))?,
            DeValue::Array(items) => segment
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|k| items.get(k))
                .ok_or_else(|| format!("the file has no `{path}`"))?,
            _ => return Err(format!("`{path}` goes through a value")),
        };
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn the_changed_file_keeps_everything_but_the_changed_values() {
        let text = "# a comment\n[delivery]\nmax_receives = 2   # the budget\nretry_interval = \"10s\"\n\n[[message]]\nid = \"a\"\nfaults = [{ fail = { first = 2 } }]\n\n[sweep]\n\"dedup.enabled\" = [true, false]\n";
        let changed = changed_file(
            text,
            &sets(&[
                ("delivery.retry_interval", "\"1m\""),
                ("message.1.faults.1.fail.first", "3"),
                ("dedup.enabled", "false"),
            ]),
        )
        .unwrap();
        assert_eq!(
            changed,
            "# a comment\n[delivery]\nmax_receives = 2   # the budget\nretry_interval = \"1m\"\n\n[[message]]\nid = \"a\"\nfaults = [{ fail = { first = 3 } }]\n\n[sweep]\n\"dedup.enabled\" = [false]\n"
        );
        // Inside an inline table, or a list of values, nothing is added.
        assert!(changed_file(text, &sets(&[("message.1.faults.1.fail.every", "1")])).is_err());
        // A value with a line break or a comment stays one value: a query
        // cannot add keys to the file.
        let forged = changed_file(
            text,
            &sets(&[(
                "delivery.retry_interval",
                "\"1m\"\n[limits]\nmax_events = 1",
            )]),
        )
        .unwrap();
        let parsed = forged.parse::<toml::Table>().unwrap();
        assert_eq!(
            parsed["delivery"]["retry_interval"].as_str(),
            Some("\"1m\"\n[limits]\nmax_events = 1")
        );
        assert!(parsed.get("limits").is_none(), "{forged}");
        let commented =
            changed_file(text, &sets(&[("message.1.faults.1.fail.first", "3 # x")])).unwrap();
        assert!(
            commented.contains("faults = [{ fail = { first = 3 } }]"),
            "{commented}"
        );
        assert!(changed_file(text, &sets(&[("message.3.id", "1")])).is_err());
    }

    /// A value the file does not write is added to its table, a table or
    /// a step the file does not have at the end, and an unset key's line
    /// goes.
    #[test]
    fn the_changed_file_adds_and_removes_keys() {
        let text = "[delivery]\nmax_receives = 2\n\n[[operator]]\naction = \"redrive\"\nonly = [\"a\"]   # the poison\nrepair = true\n";
        let changed = changed_file(
            text,
            &sets(&[
                ("operator.1.action", "\"redrive_all\""),
                ("operator.1.only", UNSET),
                ("delivery.retry_interval", "\"5s\""),
                ("dedup.enabled", "true"),
                ("operator.2.action", "\"purge\""),
                ("operator.2.wait", "\"1m\""),
            ]),
        )
        .unwrap();
        assert_eq!(
            changed,
            "[delivery]\nmax_receives = 2\nretry_interval = \"5s\"\n\n[[operator]]\naction = \"redrive_all\"\nrepair = true\n\n[dedup]\nenabled = true\n\n[[operator]]\naction = \"purge\"\nwait = \"1m\"\n"
        );
        assert!(changed.parse::<toml::Table>().is_ok());
        assert!(changed_file(text, &sets(&[("delivery.nope", UNSET)])).is_err());
    }
}
