//! Sweeps (`[sweep]`, `[[expect.point]]`) and command-line overrides
//! (`--set PATH=VALUE`): values written at a dotted path of the document,
//! before it is read into the file's types, so that each one is checked
//! exactly as if it were written in place, and located where it is
//! written.
//!
//! A path names tables by key and entries of an array of tables by their
//! 1-based position: `delivery.max_receives`, `traffic.1.mix.2.share`.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeArray, DeString, DeTable, DeValue};

use super::problems::Problems;
use crate::diagnostic::did_you_mean;
use crate::model::Total;

/// At most this many points in one sweep.
pub const MAX_POINTS: usize = 1_000;

/// Every point holds its own scenario until it runs: at most this many
/// `[[message]]` entries over all the points of a sweep (generated
/// messages cost nothing here), so that a large file swept many times
/// cannot fill memory before anything runs.
pub const MAX_SWEPT_MESSAGES: usize = 1_000_000;

/// Every point holds its own copy of the file's text in its scenario (a
/// payload, a description): at most this many bytes of the file over all
/// the points of a sweep (1,000 points of a 256 KiB file).
pub const MAX_SWEPT_BYTES: usize = 256 << 20;

/// The name of the table that holds `--set` values in the text a
/// diagnostic shows (appended after the file's own text).
pub(super) const SET_TABLE: &str = "--set";

type Value<'i> = Spanned<DeValue<'i>>;

/// One swept path and the values it takes, in the order written.
pub(crate) struct Axis<'i> {
    pub path: Spanned<String>,
    pub values: Vec<Value<'i>>,
}

/// What the `[sweep]` table asks for.
pub(crate) struct SweepSpec<'i> {
    pub axes: Vec<Axis<'i>>,
    /// The names `columns` lists, each once, as written: what they name
    /// depends on the kind of file (see [`total_columns`]).
    pub columns: Vec<Spanned<String>>,
    pub span: Range<usize>,
}

/// One `[[expect.point]]`: where it applies, and its expectations (the
/// entry without `where`).
pub(crate) struct PointExpect<'i> {
    pub at: Vec<(Spanned<String>, Value<'i>)>,
    pub fields: Value<'i>,
}

/// Removes `key` from a table, with its key's span.
fn take<'i>(table: &mut DeTable<'i>, key: &str) -> Option<(Range<usize>, Value<'i>)> {
    let found = table.keys().find(|k| k.get_ref() == key)?.clone();
    let value = table.remove(&found)?;
    Some((found.span(), value))
}

/// The `[sweep]` table, taken out of the document.
pub(crate) fn take_sweep<'i>(
    problems: &mut Problems,
    root: &mut DeTable<'i>,
) -> Option<SweepSpec<'i>> {
    let (span, sweep) = take(root, "sweep")?;
    let DeValue::Table(table) = sweep.into_inner() else {
        problems.error_help(
            Some(span),
            "`sweep` must be a table",
            "not a table",
            "write [sweep] with a list per path, e.g. \"delivery.max_receives\" = [3, 5, 10]",
        );
        return None;
    };
    let mut axes = Vec::new();
    let mut columns = Vec::new();
    for (key, value) in table {
        let key_span = key.span();
        let name = key.get_ref().to_string();
        let value_span = value.span();
        if name == "columns" {
            columns = sweep_columns(problems, value);
            continue;
        }
        match value.into_inner() {
            DeValue::Array(items) if items.is_empty() => problems.error_help(
                Some(value_span),
                format!("the sweep of `{name}` lists no value"),
                "empty list",
                "list the values to try, e.g. [3, 5, 10], or remove the key",
            ),
            DeValue::Array(items) => axes.push(Axis {
                path: Spanned::new(key_span, name),
                values: items.into_iter().collect(),
            }),
            _ => problems.error_help(
                Some(value_span),
                format!("the sweep of `{name}` must be a list of values"),
                "not a list",
                "write the values to try as a list, e.g. [3, 5, 10]",
            ),
        }
    }
    axes.sort_by_key(|a| a.path.span().start);
    if axes.is_empty() {
        problems.error_help(
            Some(span.clone()),
            "[sweep] names no path to sweep",
            "nothing to sweep",
            "add a path and its values, e.g. \"delivery.max_receives\" = [3, 5, 10]",
        );
    }
    let points = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
    if points.is_none_or(|n| n > MAX_POINTS) {
        problems.error_help(
            Some(span.clone()),
            format!(
                "this sweep has {} points; the limit is {MAX_POINTS}",
                points.map_or("more than 2^64".to_string(), |n| n.to_string())
            ),
            "too many points",
            "sweep fewer values, or split the sweep into several files",
        );
    }
    Some(SweepSpec {
        axes,
        columns,
        span,
    })
}

fn sweep_columns(problems: &mut Problems, value: Value<'_>) -> Vec<Spanned<String>> {
    let span = value.span();
    let DeValue::Array(items) = value.into_inner() else {
        problems.error_help(
            Some(span),
            "`columns` must be a list of measure names",
            "not a list",
            "e.g. columns = [\"quarantined\", \"latency_p99\"]",
        );
        return Vec::new();
    };
    let mut columns: Vec<Spanned<String>> = Vec::new();
    for item in items {
        let item_span = item.span();
        let DeValue::String(name) = item.get_ref() else {
            problems.error(item_span, "a column is a measure's name", "not a string");
            continue;
        };
        // Once each: the table (and what every point computes for it)
        // stays within the measures there are.
        if columns.iter().any(|c| c.get_ref() == name.as_ref()) {
            problems.error(
                item_span,
                format!("the column \"{name}\" is listed twice"),
                "listed already",
            );
            continue;
        }
        columns.push(Spanned::new(item_span, name.to_string()));
    }
    columns
}

/// A queue scenario's columns: totals of `[expect]`, each located when
/// it names none.
pub(crate) fn total_columns(problems: &mut Problems, names: &[Spanned<String>]) -> Vec<Total> {
    let mut columns = Vec::new();
    for name in names {
        match Total::ALL.iter().find(|t| t.name() == name.get_ref()) {
            Some(&t) => columns.push(t),
            None => {
                let help = match did_you_mean(name.get_ref(), Total::ALL.iter().map(|t| t.name())) {
                    Some(s) => format!("did you mean \"{s}\"?"),
                    None => "a column names a total of [expect], such as \"quarantined\"".into(),
                };
                problems.error_help(
                    Some(name.span()),
                    format!("unknown measure \"{}\"", name.get_ref()),
                    "unknown measure",
                    help,
                );
            }
        }
    }
    columns
}

/// The `[[expect.point]]` entries, taken out of `[expect]`.
pub(crate) fn take_points<'i>(
    problems: &mut Problems,
    root: &mut DeTable<'i>,
) -> Vec<PointExpect<'i>> {
    let Some(expect) = root
        .iter_mut()
        .find(|(k, _)| k.get_ref() == "expect")
        .map(|(_, v)| v)
    else {
        return Vec::new();
    };
    let DeValue::Table(expect) = expect.get_mut() else {
        return Vec::new();
    };
    let Some((span, points)) = take(expect, "point") else {
        return Vec::new();
    };
    let DeValue::Array(entries) = points.into_inner() else {
        problems.error_help(
            Some(span),
            "`expect.point` must be an array of tables",
            "not [[expect.point]]",
            "write each as [[expect.point]] with where = { \"PATH\" = VALUE } and the values to expect",
        );
        return Vec::new();
    };
    entries
        .into_iter()
        .filter_map(|entry| point(problems, entry))
        .collect()
}

fn point<'i>(problems: &mut Problems, entry: Value<'i>) -> Option<PointExpect<'i>> {
    let entry_span = entry.span();
    let DeValue::Table(mut table) = entry.into_inner() else {
        problems.error(
            entry_span,
            "an [[expect.point]] entry must be a table",
            "not a table",
        );
        return None;
    };
    let Some((_, at)) = take(&mut table, "where") else {
        problems.error_help(
            Some(entry_span),
            "an [[expect.point]] needs `where`",
            "where missing",
            "say which points it applies to, e.g. where = { \"delivery.max_receives\" = 3 }",
        );
        return None;
    };
    let at_span = at.span();
    let DeValue::Table(at) = at.into_inner() else {
        problems.error(
            at_span,
            "`where` must be a table of paths and values",
            "not a table",
        );
        return None;
    };
    Some(PointExpect {
        at: at
            .into_iter()
            .map(|(k, v)| (Spanned::new(k.span(), k.get_ref().to_string()), v))
            .collect(),
        fields: Spanned::new(entry_span, DeValue::Table(table)),
    })
}

/// The `--set` table appended to the text, taken out of the document:
/// (path, value) in the order given.
pub(crate) fn take_sets<'i>(root: &mut DeTable<'i>) -> Vec<(Spanned<String>, Value<'i>)> {
    let Some((_, sets)) = take(root, SET_TABLE) else {
        return Vec::new();
    };
    let DeValue::Table(sets) = sets.into_inner() else {
        return Vec::new();
    };
    let mut sets: Vec<_> = sets
        .into_iter()
        .map(|(k, v)| (Spanned::new(k.span(), k.get_ref().to_string()), v))
        .collect();
    sets.sort_by_key(|(k, _)| k.span().start);
    sets
}

/// The text of `--set PATH=VALUE` overrides, as a TOML table to append to
/// the file's text: VALUE is TOML (`3`, `"10s"`, `[1, 2]`) or, when it is
/// not, a string (`10s`).
pub fn set_table(sets: &[(String, String)]) -> String {
    let mut out = set_header();
    for (path, value) in sets {
        if value == UNSET {
            out.push_str(&format!(
                "{} = {{ {UNSET_KEY} = true }}\n",
                toml_string(path)
            ));
            continue;
        }
        let is_toml =
            format!("x = {value}").parse::<toml::Table>().is_ok() && !value.contains('\n');
        let value = if is_toml {
            value.clone()
        } else {
            toml_string(value)
        };
        out.push_str(&format!("{} = {value}\n", toml_string(path)));
    }
    out
}

/// The file's own text of a source that has `--set` arguments written
/// after it (what a diagnostic quotes them from): the text before them.
pub fn without_sets(text: &str) -> &str {
    text.split_once(&set_header()).map_or(text, |(own, _)| own)
}

/// A set's value that removes the key at its path (`--unset PATH`): a
/// key another value refuses, such as `only` when an operator step stops
/// redriving named messages.
pub const UNSET: &str = "\u{0}unset";

/// How an `--unset` is written among the sets: a table of this one key.
const UNSET_KEY: &str = "unset";

/// Whether a set's value, as read back, removes its path.
pub(crate) fn is_unset(value: &Value<'_>) -> bool {
    match value.get_ref() {
        DeValue::Table(t) => t.len() == 1 && t.keys().any(|k| k.get_ref() == UNSET_KEY),
        _ => false,
    }
}

/// Removes the key at `path` of the document; why not, when the file
/// does not write it.
pub(crate) fn unset(root: &mut DeTable<'_>, path: &str) -> Result<(), String> {
    let segments: Vec<&str> = path.split('.').collect();
    let (last, parents) = segments.split_last().ok_or("no path")?;
    let none = || format!("the file has no `{path}`");
    let mut node: &mut DeTable<'_> = root;
    let mut rest = parents.iter();
    while let Some(segment) = rest.next() {
        let child = (node.iter_mut())
            .find(|(k, _)| k.get_ref() == *segment)
            .map(|(_, v)| v.get_mut())
            .ok_or_else(none)?;
        node = match child {
            DeValue::Table(t) => t,
            // A list: the next key is the entry's position.
            DeValue::Array(items) => {
                let n = (rest.next()).and_then(|p| p.parse::<usize>().ok()?.checked_sub(1));
                match n.and_then(|k| items.get_mut(k)).map(|v| v.get_mut()) {
                    Some(DeValue::Table(t)) => t,
                    _ => return Err(none()),
                }
            }
            _ => return Err(none()),
        };
    }
    let key = node.keys().find(|k| k.get_ref() == *last).cloned();
    match key {
        Some(k) => {
            node.remove(&k);
            Ok(())
        }
        None => Err(none()),
    }
}

/// The lines before the `--set` arguments' own (one per argument).
pub fn set_header() -> String {
    format!("\n\n# scenario-run --set\n[{}]\n", toml_string(SET_TABLE))
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The most keys a `[sweep]` or `--set` path may have: far more than the
/// format's deepest key, and few enough that writing one never runs deep.
pub const MAX_PATH_SEGMENTS: usize = 32;

/// A path as a message quotes it: whole up to 60 characters, then cut
/// (the span under it shows the rest).
pub(crate) fn shown_path(path: &str) -> String {
    match path.char_indices().nth(60) {
        Some((at, _)) => format!("{}...", &path[..at]),
        None => path.to_string(),
    }
}

/// Writes `value` at `path` of the document. The keys written take
/// `key_span`, so that a problem with one is shown where it is written.
/// Returns why not, when the path leads nowhere.
pub(crate) fn set<'i>(
    root: &mut DeTable<'i>,
    path: &str,
    key_span: Range<usize>,
    value: Value<'i>,
) -> Result<(), String> {
    if path.split('.').nth(MAX_PATH_SEGMENTS).is_some() {
        return Err(format!(
            "a path has at most {MAX_PATH_SEGMENTS} keys separated by dots; the deepest key of the format is 5 deep (\"traffic.1.mix.1.share\")"
        ));
    }
    let segments: Vec<&str> = path.split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(format!(
            "\"{path}\" is not a path: write keys separated by dots, such as \"delivery.max_receives\""
        ));
    }
    let mut node = DeValue::Table(std::mem::take(root));
    let set = set_in(&mut node, &segments, String::new(), &key_span, value);
    if let DeValue::Table(t) = node {
        *root = t;
    }
    set
}

fn set_in<'i>(
    node: &mut DeValue<'i>,
    segments: &[&str],
    walked: String,
    key_span: &Range<usize>,
    value: Value<'i>,
) -> Result<(), String> {
    let Some((segment, rest)) = segments.split_first() else {
        return Ok(());
    };
    let here = if walked.is_empty() {
        segment.to_string()
    } else {
        format!("{walked}.{segment}")
    };
    match node {
        DeValue::Table(table) => {
            let key = Spanned::new(key_span.clone(), DeString::from(segment.to_string()));
            if rest.is_empty() {
                table.insert(key, value);
                return Ok(());
            }
            let missing = !table.keys().any(|k| k.get_ref() == *segment);
            // A list the file does not have starts with its first entry.
            let list = rest[0].parse::<usize>().is_ok();
            if missing && list && rest[0] != "1" {
                return Err(format!(
                    "`{here}` has no entries; position {} does not exist (position 1 adds the first)",
                    rest[0]
                ));
            }
            let child = table.entry(key).or_insert_with(|| {
                let empty = match list {
                    true => DeValue::Array(DeArray::new()),
                    false => DeValue::Table(DeTable::new()),
                };
                Spanned::new(key_span.clone(), empty)
            });
            set_in(child.get_mut(), rest, here, key_span, value)
        }
        DeValue::Array(items) => {
            let entry = position_in(items, segment, &walked, key_span)?;
            if rest.is_empty() {
                *entry = value;
                return Ok(());
            }
            set_in(entry.get_mut(), rest, here, key_span, value)
        }
        _ => Err(format!(
            "`{walked}` is a value, not a table: the path cannot go inside it"
        )),
    }
}

fn position_in<'a, 'i>(
    items: &'a mut DeArray<'i>,
    position: &str,
    walked: &str,
    key_span: &Range<usize>,
) -> Result<&'a mut Value<'i>, String> {
    let n: usize = position
        .parse()
        .map_err(|_| format!("`{walked}` is a list: `{position}` is not a position (1, 2, ...)"))?;
    let len = items.len();
    // The position after the last adds an entry (a table, as `[[...]]`
    // writes one), so that a file can gain an operator step or an outage.
    if n == len + 1 {
        items.push(Spanned::new(
            key_span.clone(),
            DeValue::Table(DeTable::new()),
        ));
    }
    match n.checked_sub(1).and_then(|k| items.get_mut(k)) {
        Some(entry) => Ok(entry),
        None => Err(format!(
            "`{walked}` has {len} {}; position {n} does not exist (position {} adds one)",
            if len == 1 { "entry" } else { "entries" },
            len + 1
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(text: &str) -> DeTable<'_> {
        DeTable::parse(text).unwrap().into_inner()
    }

    fn value(text: &str) -> Value<'_> {
        let table = DeTable::parse(text).unwrap().into_inner();
        table.into_iter().next().unwrap().1
    }

    fn written(root: DeTable<'_>) -> toml::Value {
        use serde::Deserialize;
        toml::Value::deserialize(toml::de::ValueDeserializer::from(Spanned::new(
            0..0,
            DeValue::Table(root),
        )))
        .unwrap()
    }

    #[test]
    fn a_path_writes_keys_and_list_positions() {
        let text = "[delivery]\nmax_receives = 2\n[[traffic]]\ncount = 1\n[[traffic]]\ncount = 2\n";
        let mut root = document(text);
        set(&mut root, "delivery.max_receives", 0..0, value("x = 5")).unwrap();
        set(&mut root, "traffic.2.count", 0..0, value("x = 7")).unwrap();
        // A missing table or key is created, as if written.
        set(
            &mut root,
            "dedup.result_retention",
            0..0,
            value("x = \"1m\""),
        )
        .unwrap();
        let v = written(root);
        assert_eq!(v["delivery"]["max_receives"].as_integer(), Some(5));
        assert_eq!(v["traffic"][0]["count"].as_integer(), Some(1));
        assert_eq!(v["traffic"][1]["count"].as_integer(), Some(7));
        assert_eq!(v["dedup"]["result_retention"].as_str(), Some("1m"));
    }

    /// The position after a list's last entry adds one, and position 1 of
    /// a list the file does not have starts it: an operator step or an
    /// outage can be added from the command line.
    #[test]
    fn the_position_after_the_last_adds_an_entry() {
        let text = "[delivery]\nmax_receives = 2\n[[traffic]]\ncount = 1\n";
        let mut root = document(text);
        set(&mut root, "traffic.2.count", 0..0, value("x = 7")).unwrap();
        set(&mut root, "operator.1.action", 0..0, value("x = \"purge\"")).unwrap();
        set(&mut root, "operator.1.wait", 0..0, value("x = \"1m\"")).unwrap();
        let v = written(root);
        assert_eq!(v["traffic"][1]["count"].as_integer(), Some(7));
        assert_eq!(v["operator"][0]["action"].as_str(), Some("purge"));
        assert_eq!(v["operator"][0]["wait"].as_str(), Some("1m"));
        assert_eq!(v["operator"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn a_path_that_leads_nowhere_says_why() {
        let text = "[delivery]\nmax_receives = 2\n[[traffic]]\ncount = 1\n";
        let mut root = document(text);
        let mut why = |path: &str| set(&mut root, path, 0..0, value("x = 1")).unwrap_err();
        assert_eq!(
            why("traffic.3.count"),
            "`traffic` has 1 entry; position 3 does not exist (position 2 adds one)"
        );
        assert_eq!(
            why("traffic.first.count"),
            "`traffic` is a list: `first` is not a position (1, 2, ...)"
        );
        assert_eq!(
            why("delivery.max_receives.x"),
            "`delivery.max_receives` is a value, not a table: the path cannot go inside it"
        );
        assert!(why("delivery..x").contains("is not a path"));
        assert_eq!(
            why("outage.2.from"),
            "`outage` has no entries; position 2 does not exist (position 1 adds the first)"
        );
    }

    #[test]
    fn set_values_are_toml_or_else_strings() {
        let table = set_table(&[
            ("a.b".to_string(), "3".to_string()),
            ("a.c".to_string(), "10s".to_string()),
            ("a.d".to_string(), "\"1m\"".to_string()),
            ("a.e".to_string(), "[1, 2]".to_string()),
        ]);
        let parsed: toml::Table = table.parse().unwrap();
        let sets = &parsed[SET_TABLE];
        assert_eq!(sets["a.b"].as_integer(), Some(3));
        assert_eq!(sets["a.c"].as_str(), Some("10s"));
        assert_eq!(sets["a.d"].as_str(), Some("1m"));
        assert_eq!(sets["a.e"].as_array().map(Vec::len), Some(2));
    }
}
