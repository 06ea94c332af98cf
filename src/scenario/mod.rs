//! Reading a scenario file: TOML with spans, then validation into the
//! model. Every problem is located; nothing runs until the file is valid.

mod alarms;
mod expect;
pub mod file;
mod file_expect;
mod flow;
mod messages;
mod problems;
mod reading;
mod toml_errors;
mod validate;

use crate::diagnostic::{Problem, Source};
use crate::model::Scenario;
use reading::parse;

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
    let stem = std::path::Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    match parse(&source, text) {
        Ok(raw) => match validate::validate(&source, raw, &stem) {
            Ok(scenario) => Ok((scenario, source)),
            Err(problems) => Err(invalid(problems)),
        },
        Err(unreadable) => Err(invalid(unreadable.problems(|raw| {
            validate::validate(&source, raw, &stem)
                .err()
                .unwrap_or_default()
        }))),
    }
}
