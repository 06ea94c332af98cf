//! Reading a scenario file: TOML with spans, then validation into the
//! model. Every problem is located; nothing runs until the file is valid.

mod alarms;
mod expect;
pub mod file;
mod file_expect;
mod flow;
mod messages;
mod problems;
mod toml_errors;
mod validate;

use crate::diagnostic::{Problem, Source, did_you_mean};
use crate::model::{MessageField, Scenario};
use toml_errors::Shape;

pub use problems::{MAX_DESCRIPTION, MAX_ID, MAX_NAME, MAX_REASON, MAX_SUMMARY};

/// Files larger than this are refused before parsing.
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// A file that could not become a scenario, with every problem found.
#[derive(Debug)]
pub struct Invalid {
    pub source: Source,
    pub problems: Vec<Problem>,
}

/// Reads and validates a scenario from raw bytes.
pub fn load_bytes(name: &str, bytes: &[u8]) -> Result<(Scenario, Source), Box<Invalid>> {
    if bytes.len() > MAX_FILE_BYTES {
        let source = Source::new(name, "");
        let p = Problem::new(
            &source,
            None,
            format!("the file is larger than {MAX_FILE_BYTES} bytes, the limit for scenario files"),
            "",
        )
        .with_help(
            "describe large traffic with a [[traffic]] generator instead of listing messages",
        );
        return Err(Box::new(Invalid {
            source,
            problems: vec![p],
        }));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => load_str(name, text),
        Err(e) => {
            let source = Source::new(name, String::from_utf8_lossy(bytes).into_owned());
            let at = e.valid_up_to();
            let p = Problem::new(
                &source,
                Some(at..at + 1),
                "the file is not valid UTF-8",
                "this byte is not UTF-8",
            )
            .with_help("save the scenario as UTF-8 text");
            Err(Box::new(Invalid {
                source,
                problems: vec![p],
            }))
        }
    }
}

/// Reads and validates a scenario from text.
pub fn load_str(name: &str, text: &str) -> Result<(Scenario, Source), Box<Invalid>> {
    let source = Source::new(name, text);
    let invalid = |problems| {
        Box::new(Invalid {
            source: source.clone(),
            problems,
        })
    };
    if text.trim().is_empty() {
        let p = Problem::new(&source, None, "the file is empty", "").with_help(
            "a scenario needs at least a [delivery] table and one [[message]] or [[traffic]]; \
             scenarios/ holds commented examples",
        );
        return Err(invalid(vec![p]));
    }
    let raw = match parse(&source, text) {
        Ok(raw) => raw,
        Err(problems) => return Err(invalid(problems)),
    };
    let stem = std::path::Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    match validate::validate(&source, raw, &stem) {
        Ok(scenario) => Ok((scenario, source)),
        Err(problems) => Err(invalid(problems)),
    }
}

/// At most this many syntax errors are shown (later ones are often echoes
/// of the first).
const MAX_SYNTAX_PROBLEMS: usize = 10;

/// TOML into the file's types. Syntax errors are all reported (up to
/// [`MAX_SYNTAX_PROBLEMS`]); when the types do not fit, every table and
/// every entry of an array of tables is read on its own, so that each
/// mistake is reported, not just the first.
fn parse(source: &Source, text: &str) -> Result<file::File, Vec<Problem>> {
    use serde::Deserialize;
    use toml::de::{DeTable, Deserializer};
    let (root, syntax) = DeTable::parse_recoverable(text);
    if !syntax.is_empty() {
        return Err(syntax
            .iter()
            .take(MAX_SYNTAX_PROBLEMS)
            .map(|e| toml_problem(source, e))
            .collect());
    }
    match file::File::deserialize(Deserializer::from(root)) {
        Ok(f) => Ok(f),
        Err(first) => {
            // Only on this path: parse again and read the pieces.
            let (root, _) = DeTable::parse_recoverable(text);
            let mut problems = piecewise(source, root.get_ref());
            if problems.is_empty() {
                problems.push(toml_problem(source, &first));
            }
            problems.sort_by_key(|p| p.span().map_or(0, |r| r.start));
            Err(problems)
        }
    }
}

type DeValue<'i> = toml::Spanned<toml::de::DeValue<'i>>;

/// Reads `v` as a `T` on its own; each error becomes a problem. For a
/// table, the key at fault is then set aside and the rest read again, so
/// that several mistakes in one table are all reported.
fn piece<'i, T: serde::Deserialize<'i>>(source: &Source, v: &DeValue<'i>, out: &mut Vec<Problem>) {
    use toml::de::DeValue as V;
    let mut current = v.clone();
    let mut set_aside = 0;
    // Each round removes one key, so this ends.
    loop {
        let Err(e) = T::deserialize(toml::de::ValueDeserializer::from(current.clone())) else {
            return;
        };
        if set_aside > 0 && e.message().starts_with("missing field") {
            // Most likely a key this loop set aside; already reported.
            return;
        }
        out.push(toml_problem(source, &e));
        let (V::Table(table), Some(at)) = (current.get_ref(), e.span()) else {
            return;
        };
        let culprit = table.iter().position(|(k, val)| {
            let (ks, vs) = (k.span(), val.span());
            (ks.start <= at.start && at.end <= ks.end) || (vs.start <= at.start && at.end <= vs.end)
        });
        let Some(culprit) = culprit else {
            return;
        };
        let mut rest = toml::de::DeTable::new();
        for (i, (k, val)) in table.iter().enumerate() {
            if i != culprit {
                rest.insert(k.clone(), val.clone());
            }
        }
        current = toml::Spanned::new(current.span(), V::Table(rest));
        set_aside += 1;
    }
}

/// Each entry of an array of tables on its own.
fn pieces<'i, T: serde::Deserialize<'i>>(source: &Source, v: &DeValue<'i>, out: &mut Vec<Problem>) {
    match v.get_ref() {
        toml::de::DeValue::Array(items) => {
            for item in items.iter() {
                piece::<T>(source, item, out);
            }
        }
        _ => piece::<Vec<T>>(source, v, out),
    }
}

fn piecewise(source: &Source, root: &toml::de::DeTable<'_>) -> Vec<Problem> {
    use file::*;
    let mut out = Vec::new();
    for (key, v) in root.iter() {
        match key.get_ref().as_ref() {
            "scenario" => piece::<ScenarioMeta>(source, v, &mut out),
            "delivery" => piece::<Delivery>(source, v, &mut out),
            "quarantine" => piece::<Quarantine>(source, v, &mut out),
            "dedup" => piece::<Dedup>(source, v, &mut out),
            "limits" => piece::<Limits>(source, v, &mut out),
            "operator" => pieces::<Operator>(source, v, &mut out),
            "message" => pieces::<Message>(source, v, &mut out),
            "traffic" => pieces::<Traffic>(source, v, &mut out),
            "outage" => pieces::<Outage>(source, v, &mut out),
            "expect" => expect_pieces(source, v, &mut out),
            other => {
                let help = match did_you_mean(other, file::TABLES) {
                    Some(k) => format!("did you mean `{k}`?"),
                    None => format!("allowed tables: {}", file::TABLES.join(", ")),
                };
                out.push(
                    Problem::new(
                        source,
                        Some(key.span()),
                        format!("unknown key `{other}`"),
                        "unknown key",
                    )
                    .with_help(help),
                );
            }
        }
    }
    out
}

/// `[expect]` without its sub-tables, then each `[expect.message.ID]` and
/// each `[[expect.event]]` on its own.
fn expect_pieces(source: &Source, v: &DeValue<'_>, out: &mut Vec<Problem>) {
    use toml::de::DeValue as V;
    let V::Table(table) = v.get_ref() else {
        piece::<file::Expect>(source, v, out);
        return;
    };
    let mut rest = toml::de::DeTable::new();
    for (k, val) in table.iter() {
        if !matches!(k.get_ref().as_ref(), "message" | "event") {
            rest.insert(k.clone(), val.clone());
        }
    }
    piece::<file::Expect>(source, &toml::Spanned::new(v.span(), V::Table(rest)), out);
    for (key, sub) in table.iter() {
        match (key.get_ref().as_ref(), sub.get_ref()) {
            ("message", V::Table(messages)) => {
                for m in messages.values() {
                    piece::<file::ExpectMessage>(source, m, out);
                }
            }
            ("message", _) => {
                piece::<std::collections::BTreeMap<String, file::ExpectMessage>>(source, sub, out)
            }
            ("event", _) => pieces::<file::ExpectEvent>(source, sub, out),
            _ => {}
        }
    }
}

/// Turns a TOML syntax or type error into a located problem with a
/// "did you mean" for misspelt keys and enum values.
fn toml_problem(source: &Source, e: &toml::de::Error) -> Problem {
    let message = e.message().trim();
    let (headline, label, help) = match toml_errors::shape(message) {
        Shape::UnknownField { word, expected } => {
            let in_expect = expected.contains(&"message") && expected.contains(&"event");
            let help = match did_you_mean(word, expected.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None if in_expect && MessageField::ALL.iter().any(|f| f.name() == word) => format!(
                    "`{word}` belongs to one message: write it under [expect.message.ID], \
                     e.g. [expect.message.poison]"
                ),
                None => format!("allowed keys here: {}", quoted(&expected, "`")),
            };
            (
                format!("unknown key `{word}`"),
                "unknown key".to_string(),
                help,
            )
        }
        Shape::UnknownVariant { word, expected } => {
            let help = match did_you_mean(word, expected.iter().copied()) {
                Some(s) => format!("did you mean \"{s}\"?"),
                None => format!("allowed values: {}", quoted(&expected, "\"")),
            };
            (
                format!("unknown value \"{word}\""),
                "unknown value".to_string(),
                help,
            )
        }
        Shape::MissingField { word } => (
            format!("missing key `{word}`"),
            format!("this table needs `{word}`"),
            String::new(),
        ),
        Shape::InvalidType { message } => {
            // A single value where a list belongs: show the list.
            let written = e.span().and_then(|s| source.text.get(s)).unwrap_or("");
            let help = if message.ends_with("expected a sequence") && !written.is_empty() {
                format!("write a list: [{written}]")
            } else {
                String::new()
            };
            (message, "wrong type".to_string(), help)
        }
        Shape::Other { first, .. } if first.contains("recursion") => (
            "this is nested too deeply for the TOML reader".to_string(),
            "most deeply nested line".to_string(),
            "use fewer levels of dotted keys, tables or arrays".to_string(),
        ),
        Shape::Other { first, rest } => {
            let label = if crate::duration::DurationError::is_duration_message(first) {
                "not a duration"
            } else {
                "here"
            };
            (first.to_string(), label.to_string(), rest)
        }
    };
    // The parser's nesting limit comes without a place: point at the most
    // deeply nested line.
    let span = e.span().or_else(|| {
        message
            .contains("recursion")
            .then(|| deepest_line(&source.text))
    });
    Problem::new(source, span, headline, label).with_help(help)
}

/// The line with the most nesting (dots of dotted keys, brackets and
/// braces) outside strings.
fn deepest_line(text: &str) -> std::ops::Range<usize> {
    let mut best = (0, 0..0);
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let mut depth = 0;
        let mut quote = None;
        for c in line.chars() {
            match (c, quote) {
                ('"' | '\'', None) => quote = Some(c),
                (q, Some(open)) if q == open => quote = None,
                ('#', None) => break,
                ('.' | '[' | '{', None) => depth += 1,
                _ => {}
            }
        }
        if depth > best.0 {
            best = (depth, start..start + line.trim_end().len());
        }
        start += line.len();
    }
    best.1
}

fn quoted(words: &[&str], quote: &str) -> String {
    words
        .iter()
        .map(|k| format!("{quote}{k}{quote}"))
        .collect::<Vec<_>>()
        .join(", ")
}
