//! What an error of the `toml` and `serde` crates says, read from its text.
//! The texts are the dependencies' own, not ours: each shape below has a
//! test that provokes it from the real parser, so a dependency upgrade that
//! changes a text fails here, loudly, rather than degrading a diagnostic.

use crate::diagnostic::{Problem, Source, did_you_mean};
use crate::model::MessageField;

/// One message, by shape. Words are the ones the message puts in backticks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Shape<'m> {
    /// "unknown field `x`, expected one of `a`, `b`" (or "expected `a`").
    UnknownField {
        word: &'m str,
        expected: Vec<&'m str>,
    },
    /// "unknown variant `x`, expected one of `a`, `b`".
    UnknownVariant {
        word: &'m str,
        expected: Vec<&'m str>,
    },
    /// "missing field `x`".
    MissingField { word: &'m str },
    /// "invalid type: string \"2\", expected u32", reworded for people.
    InvalidType { message: String },
    /// Anything else (syntax errors, our own duration errors): the first
    /// line, and the rest as help.
    Other { first: &'m str, rest: String },
}

/// Reads a message's shape.
pub(super) fn shape(message: &str) -> Shape<'_> {
    let ticked: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    let word = ticked.first().copied().unwrap_or("");
    let expected = ticked.iter().skip(1).copied().collect();
    if message.starts_with("unknown field") {
        Shape::UnknownField { word, expected }
    } else if message.starts_with("unknown variant") {
        Shape::UnknownVariant { word, expected }
    } else if message.starts_with("missing field") {
        Shape::MissingField { word }
    } else if message.starts_with("invalid type") {
        Shape::InvalidType {
            message: message
                .replace("invalid type: ", "wrong type: ")
                .replace("expected i64", "expected an integer")
                .replace("expected u64", "expected an integer"),
        }
    } else {
        Shape::Other {
            first: message.lines().next().unwrap_or(""),
            rest: message.lines().skip(1).collect::<Vec<_>>().join("\n"),
        }
    }
}

/// Turns a TOML syntax or type error into a located problem with a
/// "did you mean" for misspelt keys and enum values.
pub(crate) fn toml_problem(source: &Source, e: &toml::de::Error) -> Problem {
    let message = e.message().trim();
    let (headline, label, help) = match shape(message) {
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
                match e.span().and_then(|s| key_before(&source.text, s.start)) {
                    Some(key) => format!("write a list: {key} = [{written}]"),
                    None => format!("write a list: [{written}]"),
                }
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

/// The key as written before the value at `value` (`only` in `only = "a"`
/// or in `{ only = "a" }`), if the value follows `KEY =` on its line.
fn key_before(text: &str, value: usize) -> Option<&str> {
    let before = text.get(..value)?;
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let key = line.trim_end().strip_suffix('=')?.trim_end();
    let key = key
        .rsplit(|c: char| c == '{' || c == ',' || c.is_whitespace())
        .next()?;
    (!key.is_empty()).then_some(key)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::file::File;

    /// The message the real parser gives for this file.
    fn message_of(text: &str) -> String {
        match toml::from_str::<File>(text) {
            Ok(_) => panic!("the file parsed: {text}"),
            Err(e) => e.message().trim().to_string(),
        }
    }

    #[test]
    fn a_list_s_help_names_the_key_as_written() {
        for (text, key) in [
            ("only = \"a\"", Some("only")),
            ("  only   =   \"a\"", Some("only")),
            ("x = { only = \"a\" }", Some("only")),
            ("x = { y = 1, only = \"a\" }", Some("only")),
            ("\"a\"", None),
        ] {
            let value = text.find("\"a\"").unwrap();
            assert_eq!(key_before(text, value), key, "{text}");
        }
    }

    #[test]
    fn an_unknown_key_names_it_and_the_allowed_keys() {
        let message = message_of("[delivery]\nmax_receives = 2\nretry_intervall = \"1s\"\n");
        let Shape::UnknownField { word, expected } = shape(&message) else {
            panic!("not an unknown field: {message}");
        };
        assert_eq!(word, "retry_intervall");
        assert!(expected.contains(&"retry_interval"), "{expected:?}");
        assert!(expected.contains(&"max_receives"), "{expected:?}");
    }

    #[test]
    fn an_unknown_value_names_it_and_the_allowed_values() {
        let message = message_of(
            "[delivery]\nmax_receives = 2\nbackoff = { base = \"1s\", jitter = \"fulll\" }\n",
        );
        assert_eq!(
            shape(&message),
            Shape::UnknownVariant {
                word: "fulll",
                expected: vec!["none", "full", "equal", "decorrelated"],
            }
        );
    }

    #[test]
    fn a_missing_key_names_it() {
        let message = message_of("[delivery]\nmax_receives = 2\n[[message]]\nat = \"1s\"\n");
        assert_eq!(shape(&message), Shape::MissingField { word: "id" });
    }

    #[test]
    fn a_wrong_type_is_reworded() {
        let message = message_of("[scenario]\nseed = \"seven\"\n");
        let Shape::InvalidType { message: reworded } = shape(&message) else {
            panic!("not a wrong type: {message}");
        };
        assert!(
            reworded.starts_with("wrong type: string \"seven\""),
            "{reworded}"
        );
        assert!(reworded.ends_with("expected an integer"), "{reworded}");
    }

    #[test]
    fn other_messages_keep_their_first_line_as_the_headline() {
        let message = message_of("[delivery]\nmax_receives = 2\nretry_interval = \"10\"\n");
        let Shape::Other { first, .. } = shape(&message) else {
            panic!("not another message: {message}");
        };
        assert!(
            crate::duration::DurationError::is_duration_message(first),
            "{first}"
        );
        let syntax = message_of("[delivery\nmax_receives = 2\n");
        assert!(matches!(shape(&syntax), Shape::Other { .. }), "{syntax}");
    }

    #[test]
    fn too_deep_a_nesting_says_recursion_and_has_no_place() {
        let keys = vec!["k"; 130].join(".");
        let text =
            format!("[delivery]\nmax_receives = 2\n[[message]]\nid = \"a\"\npayload.{keys} = 1\n");
        let error = toml::from_str::<File>(&text).unwrap_err();
        assert!(error.message().contains("recursion"), "{}", error.message());
        assert_eq!(error.span(), None);
        assert!(matches!(shape(error.message()), Shape::Other { .. }));
    }
}
