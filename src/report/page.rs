//! What the HTML report keeps for the reader's browser: a hash of the
//! scenario file (baselines are stored per file version, so an edited file
//! never compares with a stale one), the JSON report itself, compressed,
//! for "Export run", and the scrubber's data as JSON safe in a `<script>`.

use std::fmt;
use std::io::Write;
use std::sync::Arc;

use base64::Engine as _;
use minijinja::value::{Enumerator, Object, ObjectRepr, Serde, Value};
use serde_json::{Value as Json, json};

use crate::report::document::Document;

/// FNV-1a, 64 bits: stable across platforms and releases, which is all a
/// storage key needs (no security rests on it).
pub fn file_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// What `write` writes, as gzip in base64: the retry storm's 1,134 KB
/// JSON report (scenario 22) becomes 72 KB of page; the browser unpacks
/// it with `DecompressionStream`.
/// The text goes straight into the compressor, never whole in memory.
/// The fastest level: the lab makes a page at every rerun, and the
/// default level took 15% of the retry storm's page (scenario 22) to
/// make its packed run 20% smaller (1,134 KB of JSON: 54 KB gzipped at
/// level 1, 43 KB at level 6).
pub fn packed(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> String {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = write(&mut gz);
    let bytes = gz.finish().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The `page` the HTML templates of a scenario and of a dataflow file
/// receive, and embed for the page's script: the scenario's `name` and
/// `file`, the `hash` of the file's own text (`file_text`, without the
/// run's `--set` values: a baseline and notes outlive a change of
/// values), and the JSON report packed for "Export run".
pub fn page(file_text: &str, report: &Document) -> Json {
    json!({
        "name": report.head["name"],
        "file": report.head["file"],
        "hash": file_hash(file_text),
        "run_gz": packed(|w| report.write_json(w)),
    })
}

/// `value` as JSON safe inside `<script type="application/json">`, as
/// minijinja's `tojson` makes it safe: `<`, `>`, `&` and `'` written as
/// `\u003c`, `\u003e`, `\u0026` and `\u0027`. JSON has these characters
/// only inside strings, where the escape reads back the same. Made here
/// rather than by `tojson` in the template: turning the scrubber's data
/// (every step of a retry storm) into template values and back to JSON
/// took more than a third of its page.
pub fn script_json(value: &Json) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".to_string());
    if !text.contains(['<', '>', '&', '\'']) {
        return text;
    }
    let mut safe = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        match c {
            '<' => safe.push_str("\\u003c"),
            '>' => safe.push_str("\\u003e"),
            '&' => safe.push_str("\\u0026"),
            '\'' => safe.push_str("\\u0027"),
            c => safe.push(c),
        }
    }
    safe
}

/// A JSON object a template reads an entry at a time: an entry becomes a
/// template value only when the template reads it (the built-in page
/// reads none of `scrub`, and embeds [`script_json`] instead).
pub fn lazy(value: Json) -> Value {
    match value {
        Json::Object(_) => Value::from_object(LazyJson(value)),
        other => Value::from(Serde(&other)),
    }
}

struct LazyJson(Json);

impl fmt::Debug for LazyJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<json object>")
    }
}

impl Object for LazyJson {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let entry = self.0.get(key.as_str()?)?;
        Some(Value::from(Serde(entry)))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let keys = self.0.as_object().map_or_else(Vec::new, |map| {
            map.keys().map(|k| Value::from(k.as_str())).collect()
        });
        Enumerator::Values(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// What `script_json` writes reads back as the same JSON, with none
    /// of the characters that could end or open a tag or an attribute,
    /// as `tojson` writes it; and a lazy object reads as the value does.
    #[test]
    fn script_json_is_the_value_safe_in_a_script() {
        let value = json!({
            "id": "</script><b title='x'>&amp;",
            "steps": [[1, "a>b"], [2, null]],
            "end": 40,
        });
        let safe = script_json(&value);
        assert!(!safe.contains(['<', '>', '&', '\'']), "{safe}");
        assert_eq!(serde_json::from_str::<Json>(&safe).unwrap(), value);
        let env = minijinja::Environment::new();
        let tojson = env
            .render_str(
                "{{ v | tojson }}",
                minijinja::context! { v => Value::from(Serde(&value)) },
            )
            .unwrap();
        assert_eq!(serde_json::from_str::<Json>(&tojson).unwrap(), value);
        let read = env
            .render_str(
                "{{ v.end }} {{ v.steps[0][1] }} {{ v | tojson }}",
                minijinja::context! { v => lazy(value.clone()) },
            )
            .unwrap();
        let (head, json) = read.split_at(read.find('{').unwrap());
        assert_eq!(head, "40 a>b ");
        assert_eq!(serde_json::from_str::<Json>(json).unwrap(), value);
        assert_eq!(script_json(&json!({"n": 1})), "{\"n\":1}");
    }

    #[test]
    fn the_hash_is_fnv1a_and_tells_files_apart() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(file_hash(""), "cbf29ce484222325");
        assert_eq!(file_hash("a"), "af63dc4c8601ec8c");
        assert_ne!(file_hash("seed = 1\n"), file_hash("seed = 2\n"));
    }

    #[test]
    fn the_packed_report_unpacks_to_the_same_bytes() {
        let text = "{\n  \"name\": \"x\"\n}\n".repeat(50);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(packed(|w| w.write_all(text.as_bytes())))
            .unwrap();
        let mut out = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, text);
        assert!(bytes.len() < text.len() / 10);
    }
}
