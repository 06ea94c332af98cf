//! `--junit FILE`: a testsuite per scenario file, a testcase per
//! expectation (with the file and line it is written on), a testcase per
//! problem of an invalid file, and one for the golden transcript; a
//! failure carries the problem's message and its colour-free diagnostic.
//! Rendered from the batch's entries, so that `merge` writes the same file.

use super::entry::Entry;
use crate::report::junit_xml::{Suite, document};

/// The JUnit document of a batch.
pub fn junit_xml(entries: &[Entry]) -> String {
    let suites: Vec<Suite> = entries
        .iter()
        .map(|e| Suite {
            name: &e.name,
            file: &e.file,
            cases: e.all_cases().collect(),
        })
        .collect();
    document(&suites)
}
