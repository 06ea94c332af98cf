//! Reading a file that does not fit the format: every table, entry and
//! key on its own, so that each mistake is reported; and what is left once
//! the wrong keys are set aside, so that the problems of meaning are found
//! in the same pass.

use super::file;
use super::toml_errors::toml_problem;
use crate::diagnostic::{Problem, Source, did_you_mean};

/// The problems of types and keys, and those of meaning found in the rest
/// of the file, in file order. A problem of meaning is left out where it
/// overlaps a problem of type, or is about a whole table or entry that was
/// read without some of its keys (a key set aside is not missing: it is
/// wrong, and that is said already).
fn with_meaning(
    mut problems: Vec<Problem>,
    meaning: Vec<Problem>,
    partial: &[Partial],
    dropped: &[String],
    absent: &[String],
) -> Vec<Problem> {
    let spans: Vec<std::ops::Range<usize>> = problems.iter().filter_map(Problem::span).collect();
    let names_dropped = |p: &Problem| {
        dropped.iter().chain(absent).any(|t| {
            p.message.contains(t.as_str())
                || p.help.as_deref().is_some_and(|h| h.contains(t.as_str()))
        })
    };
    let overlaps = |p: &Problem| {
        names_dropped(p)
            || p.span().is_none_or(|m| {
                partial.iter().any(|t| t.echoes(p))
                    || spans
                        .iter()
                        .any(|t| m.start <= t.end && t.start <= m.end.max(m.start + 1))
            })
    };
    problems.extend(meaning.into_iter().filter(|p| !overlaps(p)));
    problems.sort_by_key(Problem::offset);
    problems
}

/// At most this many syntax errors are shown (later ones are often echoes
/// of the first).
const MAX_SYNTAX_PROBLEMS: usize = 10;

/// The problems of a file whose text or types are wrong, and, when every
/// table and entry could still be read once its wrong keys were set aside,
/// the file without them (so that the problems of meaning elsewhere are
/// found in the same pass).
pub(crate) struct Unreadable {
    problems: Vec<Problem>,
    rest: Option<Box<file::File>>,
    /// The tables and entries read without some of their keys.
    partial: Vec<Partial>,
    /// The tables that could not be read at all, as `[name]`.
    dropped: Vec<String>,
    /// What other tables would name the entries that could not be read.
    absent: Vec<String>,
}

impl Unreadable {
    /// Every problem, in file order: those of text and types, and those of
    /// meaning that `meaning` finds in the rest of the file.
    pub(crate) fn problems(self, meaning: impl FnOnce(file::File) -> Vec<Problem>) -> Vec<Problem> {
        let found = self.rest.map(|raw| meaning(*raw)).unwrap_or_default();
        with_meaning(
            self.problems,
            found,
            &self.partial,
            &self.dropped,
            &self.absent,
        )
    }
}

/// The document with spans. Syntax errors are all reported (up to
/// [`MAX_SYNTAX_PROBLEMS`]).
pub(crate) fn syntax<'i>(source: &Source, text: &'i str) -> Result<Root<'i>, Unreadable> {
    let (root, syntax) = toml::de::DeTable::parse_recoverable(text);
    if syntax.is_empty() {
        return Ok(root);
    }
    let problems = syntax
        .iter()
        .take(MAX_SYNTAX_PROBLEMS)
        .map(|e| toml_problem(source, e))
        .collect();
    Err(Unreadable {
        problems,
        rest: None,
        partial: Vec::new(),
        dropped: Vec::new(),
        absent: Vec::new(),
    })
}

/// A parsed document.
pub(crate) type Root<'i> = toml::Spanned<toml::de::DeTable<'i>>;

/// The document into the file's types. When the types do not fit, every
/// table and every entry of an array of tables is read on its own, so that
/// each mistake is reported, not just the first.
pub(super) fn read(source: &Source, root: Root<'_>) -> Result<file::File, Unreadable> {
    use serde::Deserialize;
    use toml::de::Deserializer;
    let first = match file::File::deserialize(Deserializer::from(root.clone())) {
        Ok(f) => return Ok(f),
        Err(e) => e,
    };
    let mut reading = Reading::default();
    let rest = piecewise(source, root.get_ref(), &mut reading);
    let mut problems = reading.problems;
    if problems.is_empty() {
        problems.push(toml_problem(source, &first));
    }
    problems.sort_by_key(|p| p.span().map_or(0, |r| r.start));
    let rest = rest.filter(|_| reading.whole).and_then(|t| {
        file::File::deserialize(Deserializer::from(toml::Spanned::new(root.span(), t)))
            .ok()
            .map(Box::new)
    });
    Err(Unreadable {
        problems,
        rest,
        partial: reading.partial,
        dropped: reading.dropped,
        absent: reading.absent,
    })
}

/// What reading the pieces found: the problems, and whether every table
/// and entry could be read once its wrong keys were set aside.
struct Reading {
    problems: Vec<Problem>,
    whole: bool,
    partial: Vec<Partial>,
    /// The tables that could not be read at all, as `[name]`.
    dropped: Vec<String>,
    /// How the problems of meaning would name an entry that could not be
    /// read (`"a"` for message `a`, `"msg-` for the ids of a traffic
    /// block): such problems are echoes of its absence, left out.
    absent: Vec<String>,
}

/// A table or entry read without some of its keys.
struct Partial {
    /// Its header.
    span: std::ops::Range<usize>,
    /// Where its last value ends.
    end: usize,
    /// The keys set aside.
    keys: Vec<String>,
}

impl Partial {
    /// Whether a problem of meaning may be an echo of a key set aside: it
    /// is about the whole table, or, inside the table, names such a key.
    fn echoes(&self, p: &Problem) -> bool {
        let Some(at) = p.span() else { return true };
        if at == self.span {
            return true;
        }
        let inside = self.span.start <= at.start && at.start <= self.end;
        let names = |text: &str| self.keys.iter().any(|k| text.contains(&format!("`{k}")));
        inside && (names(&p.message) || p.help.as_deref().is_some_and(names))
    }
}

/// Where the last value of a table ends (its span is its header's).
fn extent(v: &DeValue<'_>) -> usize {
    match v.get_ref() {
        toml::de::DeValue::Table(t) => t
            .iter()
            .map(|(_, val)| extent(val))
            .fold(v.span().end, usize::max),
        _ => v.span().end,
    }
}

impl Default for Reading {
    fn default() -> Self {
        Reading {
            problems: Vec::new(),
            whole: true,
            partial: Vec::new(),
            dropped: Vec::new(),
            absent: Vec::new(),
        }
    }
}

type DeValue<'i> = toml::Spanned<toml::de::DeValue<'i>>;

/// Reads `v` as a `T` on its own; each error becomes a problem. For a
/// table, the key at fault is then set aside and the rest read again, so
/// that several mistakes in one table are all reported. Returns what could
/// be read (`v` without the keys at fault), or `None` when nothing could.
fn piece<'i, T: serde::Deserialize<'i>>(
    source: &Source,
    v: &DeValue<'i>,
    reading: &mut Reading,
) -> Option<DeValue<'i>> {
    use toml::de::DeValue as V;
    let mut current = v.clone();
    let mut set_aside = 0;
    let mut set_aside_keys = Vec::new();
    // Each round removes one key, so this ends.
    loop {
        let Err(e) = T::deserialize(toml::de::ValueDeserializer::from(current.clone())) else {
            if set_aside > 0 {
                reading.partial.push(Partial {
                    span: v.span(),
                    end: extent(v),
                    keys: set_aside_keys,
                });
            }
            return Some(current);
        };
        if set_aside > 0 && e.message().starts_with("missing field") {
            // Most likely a key this loop set aside; already reported.
            return None;
        }
        reading.problems.push(toml_problem(source, &e));
        let (V::Table(table), Some(at)) = (current.get_ref(), e.span()) else {
            return None;
        };
        let culprit = table.iter().position(|(k, val)| {
            let (ks, vs) = (k.span(), val.span());
            (ks.start <= at.start && at.end <= ks.end) || (vs.start <= at.start && at.end <= vs.end)
        });
        let culprit = culprit?;
        let mut rest = toml::de::DeTable::new();
        for (i, (k, val)) in table.iter().enumerate() {
            if i == culprit {
                set_aside_keys.push(k.get_ref().to_string());
            } else {
                rest.insert(k.clone(), val.clone());
            }
        }
        current = toml::Spanned::new(current.span(), V::Table(rest));
        set_aside += 1;
    }
}

/// How other tables name the entries of an array of tables.
#[derive(Clone, Copy)]
enum Named {
    /// Nothing names them.
    Not,
    /// By the string under this key (a message's `id`, an alarm's `name`).
    By(&'static str),
    /// A traffic block: its ids start with its `id_prefix` and its kinds
    /// are the names of its `[[traffic.mix]]` entries.
    Traffic,
}

impl Named {
    /// How the problems of meaning would name `entry`, an entry that could
    /// not be read; `None` when that cannot be told (its name is itself
    /// the key at fault), so that the rest cannot be checked.
    fn echoes(self, entry: &DeValue<'_>) -> Option<Vec<String>> {
        use toml::de::DeValue as V;
        let V::Table(table) = entry.get_ref() else {
            return None;
        };
        let text = |key: &str| match table.get(key).map(|v| v.get_ref()) {
            Some(V::String(s)) => Some(Some(s.to_string())),
            None => Some(None),
            Some(_) => None,
        };
        match self {
            Named::Not => Some(Vec::new()),
            Named::By(key) => Some(vec![format!("\"{}\"", text(key)??)]),
            Named::Traffic => {
                let prefix = text("id_prefix")?.unwrap_or_else(|| "msg-".to_string());
                let mut echoes = vec![format!("\"{prefix}")];
                if let Some(V::Array(mix)) = table.get("mix").map(|v| v.get_ref()) {
                    for kind in mix.iter() {
                        echoes.extend(Named::By("name").echoes(kind)?);
                    }
                }
                Some(echoes)
            }
        }
    }
}

/// Each entry of an array of tables on its own. When an entry that other
/// tables name cannot be read, the rest is still checked, without the
/// problems that only say it is missing (see [`Named::echoes`]).
fn pieces<'i, T: serde::Deserialize<'i>>(
    source: &Source,
    v: &DeValue<'i>,
    reading: &mut Reading,
    named: Named,
) -> Option<DeValue<'i>> {
    match v.get_ref() {
        toml::de::DeValue::Array(items) => {
            let mut read = toml::de::DeArray::new();
            for item in items.iter() {
                match piece::<T>(source, item, reading) {
                    Some(item) => read.push(item),
                    None => match named.echoes(item) {
                        Some(echoes) => reading.absent.extend(echoes),
                        None => reading.whole = false,
                    },
                }
            }
            Some(toml::Spanned::new(v.span(), toml::de::DeValue::Array(read)))
        }
        _ => {
            let read = piece::<Vec<T>>(source, v, reading);
            reading.whole &= read.is_some() || matches!(named, Named::Not);
            read
        }
    }
}

fn piecewise<'i>(
    source: &Source,
    root: &toml::de::DeTable<'i>,
    reading: &mut Reading,
) -> Option<toml::de::DeTable<'i>> {
    use file::*;
    let mut rest = toml::de::DeTable::new();
    for (key, v) in root.iter() {
        let read = match key.get_ref().as_ref() {
            "scenario" => piece::<ScenarioMeta>(source, v, reading),
            "delivery" => piece::<Delivery>(source, v, reading),
            "quarantine" => piece::<Quarantine>(source, v, reading),
            "dedup" => piece::<Dedup>(source, v, reading),
            "producer" => piece::<ProducerTable>(source, v, reading),
            "limits" => piece::<Limits>(source, v, reading),
            "operator" => pieces::<Operator>(source, v, reading, Named::Not),
            "message" => pieces::<Message>(source, v, reading, Named::By("id")),
            "traffic" => pieces::<Traffic>(source, v, reading, Named::Traffic),
            "outage" => pieces::<Outage>(source, v, reading, Named::Not),
            "workers" => piece::<WorkersTable>(source, v, reading),
            "downstream" => piece::<DownstreamTable>(source, v, reading),
            "log" => piece::<LogTable>(source, v, reading),
            "restart" => pieces::<RestartTable>(source, v, reading, Named::Not),
            "checkpoint_failure" => {
                pieces::<CheckpointFailureTable>(source, v, reading, Named::Not)
            }
            "alarm" => pieces::<super::alarms::AlarmTable>(source, v, reading, Named::By("name")),
            "sink" => pieces::<SinkTable>(source, v, reading, Named::By("name")),
            "write" => piece::<WriteTable>(source, v, reading),
            "coordinator" => piece::<CoordinatorTable>(source, v, reading),
            "question" => pieces::<super::questions::QuestionTable>(source, v, reading, Named::Not),
            "expect" => expect_pieces(source, v, reading),
            other => {
                let help = match did_you_mean(other, file::TABLES) {
                    Some(k) => format!("did you mean `{k}`?"),
                    None => format!("allowed tables: {}", file::TABLES.join(", ")),
                };
                reading.problems.push(
                    Problem::new(
                        source,
                        Some(key.span()),
                        format!("unknown key `{other}`"),
                        "unknown key",
                    )
                    .with_help(help),
                );
                None
            }
        };
        match read {
            Some(read) => {
                rest.insert(key.clone(), read);
            }
            None => reading.dropped.push(format!("[{}]", key.get_ref())),
        }
    }
    Some(rest)
}

/// `[expect]` without its sub-tables, then each `[expect.message.ID]` and
/// each `[[expect.event]]` on its own.
fn expect_pieces<'i>(
    source: &Source,
    v: &DeValue<'i>,
    reading: &mut Reading,
) -> Option<DeValue<'i>> {
    use toml::de::DeValue as V;
    let V::Table(table) = v.get_ref() else {
        return piece::<file::Expect>(source, v, reading);
    };
    let mut rest = toml::de::DeTable::new();
    for (k, val) in table.iter() {
        if !matches!(k.get_ref().as_ref(), "message" | "event") {
            rest.insert(k.clone(), val.clone());
        }
    }
    let read = piece::<file::Expect>(
        source,
        &toml::Spanned::new(v.span(), V::Table(rest)),
        reading,
    );
    let Some(V::Table(mut read)) = read.map(toml::Spanned::into_inner) else {
        return None;
    };
    for (key, sub) in table.iter() {
        let sub_read = match (key.get_ref().as_ref(), sub.get_ref()) {
            ("message", V::Table(messages)) => {
                let mut each = toml::de::DeTable::new();
                for (id, m) in messages.iter() {
                    if let Some(m) = piece::<file::ExpectMessage>(source, m, reading) {
                        each.insert(id.clone(), m);
                    }
                }
                Some(toml::Spanned::new(sub.span(), V::Table(each)))
            }
            ("message", _) => piece::<std::collections::BTreeMap<String, file::ExpectMessage>>(
                source, sub, reading,
            ),
            ("event", _) => pieces::<file::ExpectEvent>(source, sub, reading, Named::Not),
            _ => continue,
        };
        if let Some(sub_read) = sub_read {
            read.insert(key.clone(), sub_read);
        }
    }
    Some(toml::Spanned::new(v.span(), V::Table(read)))
}

#[cfg(test)]
mod tests {
    use super::super::{file, load_str};

    /// The messages of the problems `load_str` finds in `text`.
    fn problems(text: &str) -> Vec<String> {
        match load_str("t.toml", text) {
            Ok(_) => Vec::new(),
            Err(invalid) => invalid.problems.iter().map(|p| p.message.clone()).collect(),
        }
    }

    #[test]
    fn every_table_of_the_format_is_read_piece_by_piece() {
        // A wrong type elsewhere makes the file be read table by table;
        // each table of the format must then be known, not an unknown key.
        for table in file::TABLES {
            if matches!(table, "delivery" | "sweep") {
                continue;
            }
            let text = format!("{table} = 7\n[delivery]\nmax_receives = 2\nretry_interval = 5\n");
            let found = problems(&text);
            assert!(
                found.iter().any(|m| m.contains("needs a unit")),
                "{table}: {found:?}"
            );
            assert!(
                !found.iter().any(|m| m.contains("unknown key")),
                "{table}: {found:?}"
            );
        }
    }

    #[test]
    fn an_entry_that_cannot_be_read_hides_no_other_problem() {
        let text = r#"
[delivery]
max_receives = 0
retry_interval = "5s"
[[message]]
id = "a"
[[alarm]]
name = "x"
metric = "bogus"
at_least = 1
[expect.alarm.x]
fired = true
[expect.message.b]
state = "acked"
"#;
        let found = problems(text);
        assert_eq!(
            found,
            [
                "`max_receives` must be at least 1",
                "unknown value \"bogus\"",
                "no message has id \"b\"",
            ],
            "the alarm's own problem, and those of meaning elsewhere, but not \
             the echo `unknown alarm \"x\"`"
        );
    }

    #[test]
    fn an_entry_whose_name_cannot_be_read_stops_the_checks_of_meaning() {
        // Nothing tells which id the message had, so the expectation of
        // "b" may be about it: it is not reported.
        let text = r#"
[delivery]
max_receives = 2
retry_interval = "5s"
[[message]]
id = 5
[expect.message.b]
state = "acked"
"#;
        let found = problems(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("wrong type"), "{found:?}");
    }
}
