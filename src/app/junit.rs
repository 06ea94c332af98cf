//! `--junit FILE`: a testsuite per scenario file, a testcase per
//! expectation, the colour-free diagnostic as a failure's text.

use super::batch::FileResult;

/// The JUnit document of a batch.
pub fn junit_xml(files: &[String], results: &[FileResult]) -> String {
    use crate::report::junit_xml::{Suite, document, failure_text};
    let suites: Vec<Suite> = files
        .iter()
        .zip(results)
        .filter_map(|(f, r)| match r {
            FileResult::Ran(ran) => {
                let mut failures = ran.failures.iter();
                let cases = ran
                    .verdicts
                    .iter()
                    .map(|v| {
                        let name = crate::expect::describe(
                            &ran.scenario,
                            &ran.scenario.expectations[v.index],
                        );
                        let failure = if v.passed {
                            None
                        } else {
                            failures.next().map(failure_text)
                        };
                        (name, failure)
                    })
                    .collect();
                Some(Suite {
                    name: ran.scenario.name.clone(),
                    file: f.clone(),
                    cases,
                })
            }
            FileResult::Invalid(_) | FileResult::Stopped { .. } => {
                let case = if matches!(r, FileResult::Invalid(_)) {
                    "valid scenario file"
                } else {
                    "run finishes within its limits"
                };
                Some(Suite {
                    name: r.scenario().map_or_else(|| f.clone(), |s| s.name.clone()),
                    file: f.clone(),
                    cases: vec![(case.to_string(), Some(r.problems().join("\n")))],
                })
            }
            FileResult::Filtered | FileResult::Skipped => None,
        })
        .collect();
    document(&suites)
}
