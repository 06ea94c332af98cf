//! Reading a scenario file: TOML with spans, then validation into the
//! model. Every problem is located; nothing runs until the file is valid.

mod expect;
pub mod file;
mod validate;

use crate::diagnostic::{Problem, Source, did_you_mean};
use crate::model::Scenario;

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
            format!(
                "the file is {} bytes; scenario files are limited to {} bytes",
                bytes.len(),
                MAX_FILE_BYTES
            ),
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
    let raw: file::File = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => return Err(invalid(vec![toml_problem(&source, &e)])),
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

/// Turns a TOML syntax or type error into a located problem with a
/// "did you mean" for misspelt keys and enum values.
fn toml_problem(source: &Source, e: &toml::de::Error) -> Problem {
    let message = e.message().trim().to_string();
    let span = e.span();
    let ticked: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    let (headline, label, help) = if message.starts_with("unknown field") {
        let word = ticked.first().copied().unwrap_or("");
        let expected = ticked.iter().skip(1).copied();
        let help = match did_you_mean(word, expected) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "allowed keys here: {}",
                ticked
                    .iter()
                    .skip(1)
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        (
            format!("unknown key `{word}`"),
            "unknown key".to_string(),
            help,
        )
    } else if message.starts_with("unknown variant") {
        let word = ticked.first().copied().unwrap_or("");
        let expected = ticked.iter().skip(1).copied();
        let help = match did_you_mean(word, expected) {
            Some(s) => format!("did you mean \"{s}\"?"),
            None => format!(
                "allowed values: {}",
                ticked
                    .iter()
                    .skip(1)
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        (
            format!("unknown value \"{word}\""),
            "unknown value".to_string(),
            help,
        )
    } else if message.starts_with("missing field") {
        let word = ticked.first().copied().unwrap_or("");
        (
            format!("missing key `{word}`"),
            format!("this table needs `{word}`"),
            String::new(),
        )
    } else if message.starts_with("invalid type") {
        (
            message.replace("invalid type: ", "wrong type: "),
            "wrong type".to_string(),
            String::new(),
        )
    } else {
        let first = message.lines().next().unwrap_or("").to_string();
        let rest = message.lines().skip(1).collect::<Vec<_>>().join("\n");
        let label = if crate::duration::DurationError::is_duration_message(&first) {
            "not a duration"
        } else {
            "here"
        };
        (first, label.to_string(), rest)
    };
    Problem::new(source, span, headline, label).with_help(help)
}
