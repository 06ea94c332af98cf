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
    /// An operator step's choice (`operator.N.action`): hold, redrive
    /// all, redrive only one message (the action and its `only`), purge;
    /// for a step the file does not have, also none.
    Action,
}

/// An operator step's choice that redrives one message: `redrive only ID`.
const REDRIVE_ONLY: &str = "redrive only ";

/// At most this many messages get a `redrive only` choice.
const ONLY_CHOICES: usize = 20;

/// The choice of an operator step the file does not have.
pub const NO_STEP: &str = "none";

use crate::scenario::sweep::UNSET;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    /// The path `--set` takes: `delivery.max_receives`, `traffic.1.count`.
    pub path: String,
    /// What the panel calls it: the thing's name (`message poison: fault
    /// 1: fail first`), the path being its tooltip.
    pub label: String,
    pub kind: Kind,
    /// The file's value as the control shows it (a string without quotes;
    /// empty for an axis: every point).
    pub file_value: String,
    /// An axis's values, as TOML writes them; a word's allowed words.
    pub choices: Vec<String>,
    /// Keys the file writes beside this value that only one of its values
    /// takes (`checkpoint_age` goes with `resume = "stale"` alone): each
    /// key's path and that value. Another value removes the key.
    pub goes_with: Vec<(String, String)>,
}

/// Keys a restart takes with one value of its `resume` only.
const RESUME_KEYS: [(&str, &str); 3] = [
    ("checkpoint_age", "stale"),
    ("offsets", "offsets"),
    ("replay_until", "offsets"),
];

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
                    label: label(&doc, path),
                    kind: Kind::Axis,
                    file_value: String::new(),
                    choices: values.iter().map(toml::Value::to_string).collect(),
                    goes_with: Vec::new(),
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
            label: "seed".into(),
            kind: Kind::Integer,
            file_value: seed.to_string(),
            choices: Vec::new(),
            goes_with: Vec::new(),
        });
    }
    // The values a trainer would add come before the file's many others;
    // a dataflow file has no operator and no deduplication store.
    if !crate::scenario::is_dataflow(text) {
        offer(&doc, &swept, &mut out);
    }
    let offered: Vec<String> = out.iter().map(|c| c.path.clone()).collect();
    let mut skipped = swept.clone();
    // An operator step's action and `only` are its choice.
    skipped.extend(offered.iter().map(|p| p.replace(".action", ".only")));
    skipped.extend(offered);
    let mut more = false;
    for (key, value) in doc
        .iter()
        .filter(|(k, _)| !NOT_VARIED.contains(&k.as_str()))
    {
        walk(key, value, &skipped, &mut out, &mut more);
    }
    for c in &mut out {
        if c.label.is_empty() {
            c.label = label(&doc, &c.path);
        }
    }
    (out, more)
}

/// The values a trainer would add that the file does not write: each
/// operator step's choice (with a redrive of one message), an operator
/// step after the first pass where the file has none, and the
/// deduplication store where the file has no `[dedup]`.
fn offer(doc: &toml::Table, swept: &[String], out: &mut Vec<Control>) {
    let ids: Vec<String> = (doc.get("message").and_then(toml::Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("id").and_then(toml::Value::as_str))
        .take(ONLY_CHOICES)
        .map(str::to_string)
        .collect();
    let choices = |none: bool| {
        let mut c: Vec<String> = Vec::new();
        if none {
            c.push(NO_STEP.into());
        }
        c.extend(["hold", "redrive_all"].map(String::from));
        c.extend(ids.iter().map(|id| format!("{REDRIVE_ONLY}{id}")));
        c.push("purge".into());
        c
    };
    let steps = doc.get("operator").and_then(toml::Value::as_array);
    let mut action_at = |path: String, file_value: String, none: bool| {
        if !swept.contains(&path) {
            out.push(Control {
                path,
                label: String::new(),
                kind: Kind::Action,
                file_value,
                choices: choices(none),
                goes_with: Vec::new(),
            });
        }
    };
    match steps {
        Some(steps) if !steps.is_empty() => {
            for (i, step) in steps.iter().enumerate() {
                let action = step
                    .get("action")
                    .and_then(toml::Value::as_str)
                    .unwrap_or("hold");
                let only = step.get("only").and_then(toml::Value::as_array);
                let file_value = match only.map(Vec::as_slice) {
                    Some([one]) if action == "redrive" => {
                        format!("{REDRIVE_ONLY}{}", one.as_str().unwrap_or_default())
                    }
                    Some(_) if action == "redrive" => "redrive".into(),
                    _ => action.to_string(),
                };
                action_at(format!("operator.{}.action", i + 1), file_value, false);
            }
        }
        _ => action_at("operator.1.action".into(), NO_STEP.into(), true),
    }
    if doc.get("dedup").is_none() && !swept.iter().any(|p| p.starts_with("dedup.")) {
        out.push(Control {
            path: "dedup.enabled".into(),
            label: String::new(),
            kind: Kind::Bool,
            file_value: "false".into(),
            choices: Vec::new(),
            goes_with: Vec::new(),
        });
    }
}

/// What the panel calls the value at `path` of the file: each table by
/// its key, each entry of a list by its `id` or `name` (else its
/// position), underscores as spaces: `message poison: faults 1: fail
/// first`, `operator step 1: action`.
pub fn label(doc: &toml::Table, path: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut node: Option<&toml::Value> = None;
    let mut segments = path.split('.').peekable();
    while let Some(segment) = segments.next() {
        let child = match node {
            None => doc.get(segment),
            Some(v) => v.get(segment),
        };
        let list = child.and_then(toml::Value::as_array);
        let word = segment.replace('_', " ");
        match (list, segments.peek().and_then(|n| n.parse::<usize>().ok())) {
            (Some(items), Some(n)) => {
                let position = segments.next().unwrap_or_default();
                let entry = n.checked_sub(1).and_then(|k| items.get(k));
                let name = (entry.and_then(|e| e.get("id").or_else(|| e.get("name"))))
                    .and_then(toml::Value::as_str);
                parts.push(match (segment, name) {
                    ("operator", _) => format!("operator step {position}"),
                    (_, Some(name)) => format!("{word} {name}"),
                    (_, None) => format!("{word} {position}"),
                });
                node = entry;
            }
            (None, Some(_)) if segment == "operator" => {
                let position = segments.next().unwrap_or_default();
                parts.push(format!(
                    "operator step {position} (added after the first pass)"
                ));
                node = None;
            }
            _ => {
                parts.push(word);
                node = child;
            }
        }
    }
    if parts.first().is_some_and(|p| p == "scenario") {
        parts.remove(0);
    }
    parts.join(": ")
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
        label: String::new(),
        kind,
        file_value: shown,
        choices: Vec::new(),
        goes_with: Vec::new(),
    };
    let last = path.rsplit('.').next().unwrap_or(path);
    let control = match value {
        toml::Value::Table(t) => {
            let at = out.len();
            for (k, v) in t {
                walk(&format!("{path}.{k}"), v, swept, out, more);
            }
            // A restart's `resume` and the keys one of its values takes.
            if let Some(resume) = out[at..]
                .iter_mut()
                .find(|c| c.path == format!("{path}.resume"))
            {
                resume.goes_with = (RESUME_KEYS.iter())
                    .filter(|(key, _)| t.contains_key(*key))
                    .map(|(key, with)| (format!("{path}.{key}"), with.to_string()))
                    .collect();
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
        if c.kind == Kind::Action {
            let only = path.replace(".action", ".only");
            out.retain(|(p, _)| p != path && *p != only);
            match value.strip_prefix(REDRIVE_ONLY) {
                Some(id) => {
                    out.push((path.clone(), "\"redrive\"".into()));
                    out.push((only, toml::Value::Array(vec![id.into()]).to_string()));
                }
                None if value == NO_STEP => {}
                None => {
                    out.push((path.clone(), toml::Value::String(value.into()).to_string()));
                    // A step that redrove one message names it no more.
                    if c.file_value.starts_with(REDRIVE_ONLY) || c.file_value == "redrive" {
                        out.push((only, UNSET.into()));
                    }
                }
            }
            continue;
        }
        for (key, with) in &c.goes_with {
            out.retain(|(p, _)| p != key);
            if value != with {
                out.push((key.clone(), UNSET.into()));
            }
        }
        let written = match c.kind {
            // A word of a field that also takes a number (`max_receives =
            // "unlimited"`): a number typed there is one.
            Kind::Text if !c.choices.is_empty() && value.parse::<i64>().is_ok() => {
                value.to_string()
            }
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

/// A value of a sweep's list as the panel shows it: a string without
/// quotes (`1s`), a list as its values, a table as its keys and values
/// (`base 1s, cap 30s, jitter full`), never as TOML.
pub fn readable(v: &str) -> String {
    fn show(v: &toml::Value) -> String {
        match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
            toml::Value::Table(t) => (t.iter())
                .map(|(k, v)| format!("{} {}", k.replace('_', " "), show(v)))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        }
    }
    format!("x = {v}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("x").map(show))
        .unwrap_or_else(|| v.to_string())
}

/// The value a control shows under these sets: the set one, or the file's.
pub fn shown(control: &Control, sets: &[(String, String)]) -> String {
    if control.kind == Kind::Action {
        let only = control.path.replace(".action", ".only");
        let set = |p: &str| sets.iter().find(|(q, _)| q == p).map(|(_, v)| v.as_str());
        return match (set(&control.path), set(&only)) {
            (Some(_), Some(ids)) if ids != UNSET => {
                let list = format!("x = {ids}").parse::<toml::Table>().ok();
                let first = (list.as_ref()).and_then(|t| {
                    t.get("x")?
                        .as_array()?
                        .first()?
                        .as_str()
                        .map(str::to_string)
                });
                format!("{REDRIVE_ONLY}{}", first.unwrap_or_default())
            }
            (Some(v), _) => unquoted(v),
            (None, _) => control.file_value.clone(),
        };
    }
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
                "operator.1.action",
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
        assert_eq!(controls[2].kind, Kind::Action);
        assert_eq!(controls[2].file_value, NO_STEP);
        assert_eq!(
            controls[2].choices,
            [
                "none",
                "hold",
                "redrive_all",
                "redrive only a",
                "redrive only b",
                "purge"
            ]
        );
        assert_eq!(
            controls[2].label,
            "operator step 1 (added after the first pass): action"
        );
        assert_eq!(controls[3].kind, Kind::Bool);
        assert_eq!(controls[4].file_value, "1h");
        assert_eq!(controls[9].label, "message a: faults 1: fail: first");
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

    /// An operator step's choice is its action and `only` together: a
    /// redrive of one message writes both, another choice drops `only`,
    /// none adds no step; a number typed in a field of words that also
    /// takes one (`max_receives = "unlimited"`) is a number.
    #[test]
    fn a_step_choice_writes_its_action_and_only() {
        let file = "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"1s\"\n\
            [[message]]\nid = \"poison\"\n[[message]]\nid = \"ok\"\n\
            [[operator]]\naction = \"redrive\"\nonly = [\"poison\"]\n";
        let (mut controls, _) = controls(file);
        let step = controls
            .iter()
            .find(|c| c.path == "operator.1.action")
            .unwrap();
        assert_eq!(step.file_value, "redrive only poison");
        assert!(!controls.iter().any(|c| c.path == "operator.1.only"));
        let budget = controls
            .iter_mut()
            .find(|c| c.path == "delivery.max_receives")
            .unwrap();
        budget.choices = vec!["unlimited".into()];
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            (pairs.iter())
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let to_all = sets(&controls, &q(&[("operator.1.action", "redrive_all")]));
        assert_eq!(
            to_all,
            q(&[
                ("operator.1.action", "\"redrive_all\""),
                ("operator.1.only", UNSET)
            ])
        );
        let to_ok = sets(&controls, &q(&[("operator.1.action", "redrive only ok")]));
        assert_eq!(
            to_ok,
            q(&[
                ("operator.1.action", "\"redrive\""),
                ("operator.1.only", "[\"ok\"]")
            ])
        );
        let step = controls
            .iter()
            .find(|c| c.path == "operator.1.action")
            .unwrap();
        assert_eq!(shown(step, &to_ok), "redrive only ok");
        assert_eq!(shown(step, &to_all), "redrive_all");
        let budget = sets(&controls, &q(&[("delivery.max_receives", "5")]));
        assert_eq!(budget, q(&[("delivery.max_receives", "5")]));
        // A file without a step: none adds nothing, a choice adds one.
        let (controls, _) = controls_of_plain();
        assert!(sets(&controls, &q(&[("operator.1.action", "none")])).is_empty());
        assert_eq!(
            sets(
                &controls,
                &q(&[("operator.1.action", "purge"), ("dedup.enabled", "true")])
            ),
            q(&[
                ("operator.1.action", "\"purge\""),
                ("dedup.enabled", "true")
            ])
        );
    }

    /// A restart's `resume` changed to a value that refuses a key the
    /// file writes beside it removes that key; back to its value, keeps it.
    #[test]
    fn a_new_resume_removes_the_keys_it_refuses() {
        let file = "[log]\npartitions = 1\n[[restart]]\nat = \"1m\"\nresume = \"stale\"\ncheckpoint_age = \"15m\"\n";
        let (controls, _) = controls(file);
        let resume = controls
            .iter()
            .find(|c| c.path == "restart.1.resume")
            .unwrap();
        assert_eq!(
            resume.goes_with,
            [("restart.1.checkpoint_age".to_string(), "stale".to_string())]
        );
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            (pairs.iter())
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            sets(&controls, &q(&[("restart.1.resume", "latest")])),
            q(&[
                ("restart.1.checkpoint_age", UNSET),
                ("restart.1.resume", "\"latest\"")
            ])
        );
        assert_eq!(
            sets(&controls, &q(&[("restart.1.checkpoint_age", "5m")])),
            q(&[("restart.1.checkpoint_age", "\"5m\"")])
        );
    }

    fn controls_of_plain() -> (Vec<Control>, bool) {
        controls("[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n[[message]]\nid = \"a\"\n")
    }

    /// A swept value is shown as a value: a string without quotes, a table
    /// as its keys and values.
    #[test]
    fn swept_values_read_as_values() {
        assert_eq!(readable("\"1s\""), "1s");
        assert_eq!(readable("5"), "5");
        assert_eq!(
            readable("{ base = \"1s\", cap = \"30s\", jitter = \"full\" }"),
            "base 1s, cap 30s, jitter full"
        );
        assert_eq!(readable("[\"a\", \"b\"]"), "a, b");
    }

    /// A dataflow file is not offered what only a queue has (an operator
    /// step, the deduplication store): either would be refused.
    #[test]
    fn a_dataflow_file_is_offered_no_operator_and_no_store() {
        let text = "[[node]]\nname = \"A\"\nstate = 10\n[[channel]]\nfrom = \"A\"\nto = \"A\"\nlatency = \"1ms\"\n";
        let (dataflow, _) = controls(text);
        let paths: Vec<&str> = dataflow.iter().map(|c| c.path.as_str()).collect();
        assert!(paths.contains(&"channel.1.latency"), "{paths:?}");
        assert!(
            !paths
                .iter()
                .any(|p| p.starts_with("operator.") || p.starts_with("dedup.")),
            "{paths:?}"
        );
        let (queue, _) = controls_of_plain();
        assert!(queue.iter().any(|c| c.path == "operator.1.action"));
        assert!(queue.iter().any(|c| c.path == "dedup.enabled"));
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
