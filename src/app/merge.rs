//! `scenario-run merge OUT_DIR SHARD_JSON...`: the results of the shards
//! of a batch (`--shard I/N` runs with `--format json`, or their
//! `index.json`) combined into the batch an unsharded run gives: the same
//! index, JUnit file, step summary and exit code. A sweep whose points
//! ran on several shards becomes one entry again, its points in order,
//! and its golden table is compared here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::entry::{Entry, Record};
use super::reports::{self, ReportFormat};
use super::shards::{check_shards, combine, join_docs};
use crate::report::templates::Templates;

/// A shard's result is read up to this size (the `--format json` output
/// of a batch of 1,000 scenarios of 1,000 messages is about 150 MB).
pub const MAX_SHARD_BYTES: u64 = 1 << 30;

/// The most memory `merge` holds per byte of its inputs, whatever they
/// hold (measured on forged 100 MB shards, release build: a sweep's 33
/// million one-character cells 15.7 bytes per byte, the worst shape
/// found; an entry's 2.6 million empty testcases 10.7; 5,000 whole
/// entries 9.7). `tests/resources.rs` holds it to this.
pub const MEMORY_PER_INPUT_BYTE: usize = 32;

/// What `merge` is asked to do.
#[derive(Debug, Clone)]
pub struct MergeRequest {
    /// Where the index files and `junit.xml` go.
    pub out_dir: PathBuf,
    /// The shards' JSON results.
    pub inputs: Vec<PathBuf>,
    pub formats: Vec<ReportFormat>,
    pub templates: Option<PathBuf>,
    /// Where to append the batch's Markdown table.
    pub summary_markdown: Option<PathBuf>,
    /// The golden files, for the tables of sweeps whose points ran on
    /// several shards.
    pub golden: Option<PathBuf>,
}

/// A merged batch and the files written.
pub struct Merged {
    pub record: Record,
    pub written: Vec<PathBuf>,
}

/// Reads, checks and combines the shards' results, then writes the index
/// files and `junit.xml` into `out_dir` (and appends the step summary).
/// Nothing is written unless every input is a shard of one batch and
/// every shard is there.
pub fn merge(request: &MergeRequest) -> Result<Merged, String> {
    let templates = Templates::load(request.templates.as_deref()).map_err(|problems| {
        problems
            .iter()
            .map(|p| crate::diagnostic::render(p, false))
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    let mut records = Vec::new();
    let mut parts: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    let mut copies = Vec::new();
    // Read in parallel, taken in input order.
    let read_all: Vec<Result<ShardResult, String>> = {
        use rayon::prelude::*;
        request.inputs.par_iter().map(|p| read(p)).collect()
    };
    for (path, shard) in request.inputs.iter().zip(read_all) {
        let shard = shard?;
        if let Some(dir) = &shard.reports {
            copies.extend(reports_to_copy(dir, &shard.record)?);
        }
        for doc in shard.sweep_parts {
            let file = doc["file"].as_str().unwrap_or_default().to_string();
            parts.entry(file).or_default().push(doc);
        }
        records.push((path.clone(), shard.record));
    }
    check_shards(&records)?;
    let record = combine(
        records.into_iter().map(|(_, r)| r).collect(),
        request.golden.as_deref(),
    )?;
    let mut formats = request.formats.clone();
    formats.sort();
    formats.dedup();
    let template_error = |problems| reports::ReportError::Template(problems).render(false);
    // Rendered first, written only when all rendered; the index last.
    // A killed run's temporaries go first (not the index's, staged now).
    crate::output::remove_stale_temporaries(&request.out_dir);
    let existed = request.out_dir.exists();
    let index =
        reports::index_files(&request.out_dir, &formats, &templates, &record).map_err(|e| {
            // The staged files are gone; a folder made for them goes too.
            if !existed {
                let _ = std::fs::remove_dir(&request.out_dir);
            }
            e.render(false)
        })?;
    let mut outputs = Vec::new();
    for entry in &record.scenarios {
        let (Some(name), Some(docs)) = (&entry.report, parts.remove(&entry.file)) else {
            continue;
        };
        let doc = join_docs(docs, entry)?;
        for &format in &formats {
            let text = reports::sweep_report(&templates, format, &doc)
                .map_err(|p| template_error(vec![*p]))?;
            outputs.push((format!("{name}.{}", format.extension()), text));
        }
    }
    let mut written = copy_reports(&request.out_dir, &copies)?;
    outputs.push((
        "junit.xml".to_string(),
        super::junit::junit_xml(&record.scenarios),
    ));
    written.extend(reports::write_all(&request.out_dir, outputs).map_err(|e| e.render(false))?);
    written.extend(reports::commit_all(index).map_err(|e| e.render(false))?);
    if let Some(path) = &request.summary_markdown {
        reports::append_summary(path, &templates, &record).map_err(|e| e.render(false))?;
    }
    Ok(Merged { record, written })
}

/// The report files a shard wrote next to its `index.json` for the files
/// it ran whole (a split sweep's are written from the joined document).
/// A name that is not a plain file name (`../x`, `a/b`) is never joined
/// to a path; a link, a FIFO or a device is never read.
fn reports_to_copy(dir: &Path, record: &Record) -> Result<Vec<(PathBuf, String)>, String> {
    let mut copies = Vec::new();
    for name in record
        .scenarios
        .iter()
        .filter(|e| !is_part(e))
        .filter_map(|e| e.report.as_ref())
    {
        for (_, format) in ReportFormat::ALL {
            let file = format!("{name}.{}", format.extension());
            let from = crate::output::inside(dir, &file)
                .map_err(|e| format!("{}: a report name in index.json: {e}", dir.display()))?;
            // A report in a format the shard did not write is not there.
            match std::fs::symlink_metadata(&from) {
                Ok(m) if m.file_type().is_file() => copies.push((from, file)),
                Ok(_) => {
                    return Err(format!(
                        "{} is not a regular file (a link, a folder or a device): not copied",
                        from.display()
                    ));
                }
                Err(_) => {}
            }
        }
    }
    Ok(copies)
}

/// Copies the shards' report files into `out_dir`, each atomically.
fn copy_reports(out_dir: &Path, copies: &[(PathBuf, String)]) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for (from, name) in copies {
        let to = crate::output::inside(out_dir, name).map_err(|e| e.to_string())?;
        if to == *from {
            continue;
        }
        let mut source = crate::output::open_regular(from)
            .map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        crate::output::write_in_folder_with(&to, |w| std::io::copy(&mut source, w).map(|_| ()))
            .map_err(|e| format!("cannot write {}: {e}", to.display()))?;
        written.push(to);
    }
    Ok(written)
}

/// One shard's result, as read: its record, the JSON documents of the
/// sweeps it ran only some points of (from which `merge` writes those
/// sweeps' reports whole), and, for an `index.json`, the folder of the
/// shard's reports (which `merge` copies).
struct ShardResult {
    record: Record,
    sweep_parts: Vec<Json>,
    reports: Option<PathBuf>,
}

/// The top of a shard's result: a `--format json` output has `batch` (the
/// record) and `scenarios` (every scenario's document); an `index.json` is
/// the record itself. Documents are kept raw: only those of split sweeps
/// are parsed.
#[derive(serde::Deserialize)]
struct Top<'a> {
    format_version: Option<u64>,
    #[serde(borrow)]
    batch: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    scenarios: Option<&'a serde_json::value::RawValue>,
}

/// Reads one shard's result: the `--format json` output of a `--shard`
/// run, or the `index.json` of its reports.
fn read(path: &Path) -> Result<ShardResult, String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_SHARD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_SHARD_BYTES {
        return Err(format!(
            "{shown} is larger than {} MiB, more than any shard's result",
            MAX_SHARD_BYTES >> 20
        ));
    }
    no_controls(&shown.to_string(), &bytes)?;
    let top: Top =
        serde_json::from_slice(&bytes).map_err(|e| format!("{shown} is not JSON: {e}"))?;
    let ours = u64::from(crate::report::json::REPORT_FORMAT_VERSION);
    if top.format_version != Some(ours) {
        return Err(format!(
            "{shown} is not a result of this version of scenario-run (format_version {}, expected {ours}): \
             give the output of `scenario-run --shard I/N --format json` or its report's index.json",
            top.format_version
                .map_or("absent".to_string(), |v| v.to_string())
        ));
    }
    let not_batch = |e: serde_json::Error| format!("{shown} is not a batch result: {e}");
    let forged = |e: String| format!("{shown} {e}: not the result of a run");
    let Some(batch) = top.batch else {
        forged_line(&bytes).map_err(forged)?;
        let record: Record = serde_json::from_slice(&bytes).map_err(not_batch)?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        // A split sweep's points are in its JSON report: without it the
        // sweep cannot be joined, so a missing or broken one is an error.
        let mut sweep_parts = Vec::new();
        for e in record.scenarios.iter().filter(|e| is_part(e)) {
            let part = e.report.as_ref().ok_or_else(|| {
                format!(
                    "{shown}: the sweep {} has no report to read its points from",
                    e.file
                )
            })?;
            let at = crate::output::inside(&dir, &format!("{part}.json"))
                .map_err(|err| format!("{shown}: a report name: {err}"))?;
            let bytes = crate::output::read_regular(&at, MAX_SHARD_BYTES).map_err(|err| {
                format!(
                    "cannot read {} (the points of {} in {shown}): {err}",
                    at.display(),
                    e.file
                )
            })?;
            no_controls(&at.display().to_string(), &bytes)?;
            let doc: Json = serde_json::from_slice(&bytes).map_err(|err| {
                format!(
                    "{} (the points of {} in {shown}) is not a sweep's JSON report: {err}",
                    at.display(),
                    e.file
                )
            })?;
            sweep_parts.push(doc);
        }
        return Ok(ShardResult {
            record,
            sweep_parts,
            reports: Some(dir),
        });
    };
    forged_line(batch.get().as_bytes()).map_err(forged)?;
    let record: Record = serde_json::from_str(batch.get()).map_err(not_batch)?;
    let docs: Vec<&serde_json::value::RawValue> = match top.scenarios {
        Some(raw) => serde_json::from_str(raw.get()).map_err(not_batch)?,
        None => Vec::new(),
    };
    // The documents are those of the record's entries, in the same order.
    let sweep_parts = record
        .scenarios
        .iter()
        .zip(docs)
        .filter(|(e, _)| is_part(e))
        .map(|(_, doc)| serde_json::from_str(doc.get()).map_err(not_batch))
        .collect::<Result<_, _>>()?;
    Ok(ShardResult {
        record,
        sweep_parts,
        reports: None,
    })
}

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
fn no_controls(shown: &str, json: &[u8]) -> Result<(), String> {
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
fn forged_line(json: &[u8]) -> Result<(), String> {
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

/// Whether an entry is a sweep of which the shard ran only some points.
fn is_part(e: &Entry) -> bool {
    e.sweep
        .as_ref()
        .is_some_and(|s| s.points.len() < s.points_total)
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
