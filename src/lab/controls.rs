//! The experiment panel's controls: one per value a scenario file sets
//! that a learner would vary (numbers, durations, words, booleans), named
//! by the path `--set` takes, and one per swept path of a `[sweep]`
//! offering its values. What a request's query asks for becomes the
//! `--set` list of a rerun.

/// At most this many controls a file (a file listing thousands of
/// messages would otherwise give a page of inputs); the rest take
/// `--set`.
pub const MAX_CONTROLS: usize = 200;

/// Tables a learner does not vary: what the file says of itself, what it
/// expects and asks, and the sweep (its axes are controls of their own).
const NOT_VARIED: [&str; 4] = ["expect", "question", "sweep", "scenario"];

/// Keys that name or describe rather than set a value.
const NAMES: [&str; 11] = [
    "id",
    "name",
    "description",
    "summary",
    "tags",
    "payload",
    "id_prefix",
    "label",
    "text",
    "reason",
    "columns",
];

/// How a control is shown and how its value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Integer,
    Float,
    Bool,
    /// A string: a duration, a word, a name of something.
    Text,
    /// A swept path: one of the sweep's values, or every point.
    Axis,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    /// The path `--set` takes: `delivery.max_receives`, `traffic.1.count`.
    pub path: String,
    pub kind: Kind,
    /// The file's value as the control shows it (a string without quotes;
    /// empty for an axis: every point).
    pub file_value: String,
    /// An axis's values, as TOML writes them; a word's allowed words.
    pub choices: Vec<String>,
}

/// The words the JSON Schema allows at a path of a file (`delivery.backoff.jitter`:
/// none, full, equal, decorrelated), where it lists them.
pub fn words(schema: &serde_json::Value, path: &str) -> Vec<String> {
    use serde_json::Value;
    fn resolve<'a>(schema: &'a Value, mut node: &'a Value) -> &'a Value {
        // A reference leads to a definition (a few hops at most).
        for _ in 0..8 {
            match node.get("$ref").and_then(Value::as_str) {
                Some(r) => match r.strip_prefix("#/$defs/") {
                    Some(name) => node = &schema["$defs"][name],
                    None => break,
                },
                None => break,
            }
        }
        node
    }
    /// A node and the alternatives it lists, a few levels deep (a schema
    /// that refers to itself cannot make this run on).
    fn branches<'a>(schema: &'a Value, node: &'a Value, depth: u32) -> Vec<&'a Value> {
        let node = resolve(schema, node);
        let mut out = vec![node];
        if depth == 0 {
            return out;
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(list) = node.get(key).and_then(Value::as_array) {
                for b in list {
                    out.extend(branches(schema, b, depth - 1));
                }
            }
        }
        out
    }
    const DEPTH: u32 = 6;
    let mut nodes: Vec<&Value> = branches(schema, schema, DEPTH);
    for segment in path.split('.') {
        let mut next = Vec::new();
        for n in nodes {
            if let Some(p) = n.get("properties").and_then(|p| p.get(segment)) {
                next.extend(branches(schema, p, DEPTH));
            }
            if segment.parse::<usize>().is_ok()
                && let Some(items) = n.get("items")
            {
                next.extend(branches(schema, items, DEPTH));
            }
        }
        if next.is_empty() {
            return Vec::new();
        }
        nodes = next;
    }
    let mut out: Vec<String> = Vec::new();
    for n in nodes {
        let listed = n
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        let constant = n.get("const").into_iter();
        for w in listed.chain(constant).filter_map(Value::as_str) {
            if !out.iter().any(|o| o == w) {
                out.push(w.to_string());
            }
        }
    }
    out
}

/// The controls of a file's text: its swept paths first, its seed, then
/// every value of its tables, tables in the order of their names and
/// entries of a list in theirs (at most [`MAX_CONTROLS`] in all), and
/// whether some were left out. A text that is not TOML has none.
pub fn controls(text: &str) -> (Vec<Control>, bool) {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return (Vec::new(), false);
    };
    let mut out = Vec::new();
    if let Some(toml::Value::Table(sweep)) = doc.get("sweep") {
        for (path, values) in sweep.iter().filter(|(k, _)| *k != "columns") {
            if let toml::Value::Array(values) = values {
                out.push(Control {
                    path: path.clone(),
                    kind: Kind::Axis,
                    file_value: String::new(),
                    choices: values.iter().map(toml::Value::to_string).collect(),
                });
            }
        }
    }
    let swept: Vec<String> = out.iter().map(|c| c.path.clone()).collect();
    if let Some(toml::Value::Integer(seed)) = doc
        .get("scenario")
        .and_then(|s| s.get("seed"))
        .filter(|_| !swept.iter().any(|p| p == "scenario.seed"))
    {
        out.push(Control {
            path: "scenario.seed".into(),
            kind: Kind::Integer,
            file_value: seed.to_string(),
            choices: Vec::new(),
        });
    }
    let mut more = false;
    for (key, value) in doc
        .iter()
        .filter(|(k, _)| !NOT_VARIED.contains(&k.as_str()))
    {
        walk(key, value, &swept, &mut out, &mut more);
    }
    (out, more)
}

fn walk(
    path: &str,
    value: &toml::Value,
    swept: &[String],
    out: &mut Vec<Control>,
    more: &mut bool,
) {
    let leaf = |kind: Kind, shown: String| Control {
        path: path.to_string(),
        kind,
        file_value: shown,
        choices: Vec::new(),
    };
    let last = path.rsplit('.').next().unwrap_or(path);
    let control = match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                walk(&format!("{path}.{k}"), v, swept, out, more);
            }
            return;
        }
        toml::Value::Array(items) if items.iter().all(toml::Value::is_table) => {
            for (i, v) in items.iter().enumerate() {
                walk(&format!("{path}.{}", i + 1), v, swept, out, more);
            }
            return;
        }
        _ if NAMES.contains(&last) || swept.iter().any(|s| s == path) => return,
        // A key holding a dot cannot be named by a path.
        _ if path.split('.').any(str::is_empty) => return,
        toml::Value::Integer(n) => leaf(Kind::Integer, n.to_string()),
        toml::Value::Float(x) => leaf(Kind::Float, toml::Value::Float(*x).to_string()),
        toml::Value::Boolean(b) => leaf(Kind::Bool, b.to_string()),
        toml::Value::String(s) => leaf(Kind::Text, s.clone()),
        _ => return,
    };
    if out.len() < MAX_CONTROLS {
        out.push(control);
    } else {
        *more = true;
    }
}

/// The `--set` list a query asks for: each `PATH=VALUE` pair whose PATH is
/// a control and whose VALUE differs from the file's (an empty value, or
/// an axis's empty choice, leaves the path as the file has it). A text
/// control's value is written as a string, so that `1s` and `true` stay
/// words; the others are TOML as `--set` reads them.
pub fn sets(controls: &[Control], query: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (path, value) in query {
        let Some(c) = controls.iter().find(|c| &c.path == path) else {
            continue;
        };
        let value = value.trim();
        if value.is_empty() || value == c.file_value {
            continue;
        }
        let written = match c.kind {
            Kind::Text => toml::Value::String(value.to_string()).to_string(),
            _ => value.to_string(),
        };
        out.retain(|(p, _)| p != path);
        out.push((path.clone(), written));
    }
    out
}

/// A set value as a text control holds it: a TOML string without its
/// quotes (anything else as written).
pub fn unquoted(v: &str) -> String {
    format!("x = {v}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("x").and_then(|x| x.as_str().map(str::to_string)))
        .unwrap_or_else(|| v.to_string())
}

/// The value a control shows under these sets: the set one, or the file's.
pub fn shown(control: &Control, sets: &[(String, String)]) -> String {
    match sets.iter().find(|(p, _)| *p == control.path) {
        Some((_, v)) if control.kind == Kind::Text => unquoted(v),
        Some((_, v)) => v.clone(),
        None => control.file_value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
[scenario]
name = "n"
seed = 7

[delivery]
max_receives = 3
retry_interval = "1s"
backoff = { base = "100ms", cap = "1m", jitter = "none" }

[[message]]
id = "a"
faults = [{ fail = { first = 2 } }]

[[message]]
id = "b"

[dedup]
enabled = true
result_retention = "1h"

[expect]
acked = 2

[sweep]
"delivery.max_receives" = [3, 5]
"#;

    #[test]
    fn a_control_per_value_the_file_sets_swept_paths_first() {
        let (controls, more) = controls(FILE);
        assert!(!more);
        let paths: Vec<&str> = controls.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "delivery.max_receives",
                "scenario.seed",
                "dedup.enabled",
                "dedup.result_retention",
                "delivery.backoff.base",
                "delivery.backoff.cap",
                "delivery.backoff.jitter",
                "delivery.retry_interval",
                "message.1.faults.1.fail.first",
            ]
        );
        assert_eq!(controls[0].kind, Kind::Axis);
        assert_eq!(controls[0].choices, ["3", "5"]);
        assert_eq!(controls[2].kind, Kind::Bool);
        assert_eq!(controls[3].file_value, "1h");
        assert_eq!(controls[1].file_value, "7");
    }

    #[test]
    fn a_query_becomes_the_sets_that_change_something() {
        let (controls, _) = controls(FILE);
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let sets = sets(
            &controls,
            &q(&[
                ("delivery.retry_interval", "5s"),
                ("dedup.result_retention", "1h"),
                ("dedup.enabled", "false"),
                ("delivery.max_receives", ""),
                ("no.such.path", "1"),
                ("scenario.seed", "8"),
            ]),
        );
        assert_eq!(
            sets,
            q(&[
                ("delivery.retry_interval", "\"5s\""),
                ("dedup.enabled", "false"),
                ("scenario.seed", "8"),
            ])
        );
        let retry = controls
            .iter()
            .find(|c| c.path == "delivery.retry_interval");
        assert_eq!(shown(retry.unwrap(), &sets), "5s");
    }

    #[test]
    fn controls_are_bounded() {
        let mut text = String::from("[delivery]\nmax_receives = 3\n");
        for i in 0..300 {
            text += &format!("[[message]]\nid = \"m{i}\"\nat = \"{i}s\"\n");
        }
        let (controls, more) = controls(&text);
        assert_eq!(controls.len(), MAX_CONTROLS);
        assert!(more);
    }
}

#[cfg(test)]
mod words_tests {
    use super::words;

    #[test]
    fn the_schema_gives_the_words_of_a_path() {
        let schema: serde_json::Value = serde_json::from_str(&crate::app::schema()).unwrap();
        assert_eq!(
            words(&schema, "delivery.backoff.jitter"),
            ["none", "full", "equal", "decorrelated"]
        );
        let action = words(&schema, "operator.1.action");
        assert!(action.contains(&"redrive_all".to_string()), "{action:?}");
        let class = words(&schema, "message.2.faults.1.class");
        assert!(class.contains(&"permanent".to_string()), "{class:?}");
        let markers = words(&schema, "snapshot.1.markers");
        assert_eq!(markers, ["every_partition", "first_partition"]);
        // A schema that refers to itself ends.
        let looped = serde_json::json!({
            "$defs": { "A": { "anyOf": [{ "$ref": "#/$defs/A" }, { "enum": ["x"] }] } },
            "properties": { "a": { "$ref": "#/$defs/A" } }
        });
        assert_eq!(words(&looped, "a"), ["x"]);
        // A duration or a name is not a word of a list.
        assert!(words(&schema, "delivery.retry_interval").is_empty());
        assert!(words(&schema, "no.such.path").is_empty());
    }
}
