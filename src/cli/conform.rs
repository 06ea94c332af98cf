//! `scenario-run conform`: the command (the comparison itself is
//! `crate::conform`).

use super::{EXIT_FAILED, EXIT_INVALID, EXIT_PASSED};
use crate::conform::{self, NotReady};
use crate::diagnostic::render;

/// Prepares every file, then runs them against the broker; exit 0 when
/// every file conforms, 1 when one differs, 2 when a file or the broker
/// keeps the run from happening.
pub(super) fn conform(
    url: &str,
    patterns: &[String],
    time_scale: Option<u64>,
    json: bool,
    color: bool,
) -> u8 {
    let files = match super::files(patterns) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let target = match conform::Target::of(url) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INVALID;
        }
    };
    let mut prepared = Vec::new();
    let mut refused = false;
    for file in &files {
        match conform::prepare(file, target, time_scale) {
            Ok(p) => prepared.push(p),
            Err(NotReady::Invalid(invalid)) => {
                for p in &invalid.problems {
                    eprintln!("{}", render(p, color));
                }
                refused = true;
            }
            Err(NotReady::Unsupported(why)) => {
                eprintln!("error: {file}: conform cannot check this file: {why}");
                refused = true;
            }
        }
    }
    if refused {
        return EXIT_INVALID;
    }
    let (broker, checked) = match conform::live(url, &prepared) {
        Ok(done) => done,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INVALID;
        }
    };
    let text = if json {
        conform::json(&broker, url, &checked)
    } else {
        conform::render(&broker, url, &checked)
    };
    print!("{text}");
    if checked.iter().all(|c| c.conforms()) {
        EXIT_PASSED
    } else {
        EXIT_FAILED
    }
}
