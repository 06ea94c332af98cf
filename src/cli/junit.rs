//! `--junit FILE`: a testsuite per scenario file, a testcase per
//! expectation, the colour-free diagnostic as a failure's text.

use super::batch::{self, FileResult};

/// The JUnit document of a batch.
pub(super) fn junit_xml(files: &[String], results: &[FileResult]) -> String {
    use crate::report::junit::{Suite, document, failure_text};
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
            FileResult::Invalid(inv) => Some(Suite {
                name: f.clone(),
                file: f.clone(),
                cases: vec![(
                    "valid scenario file".to_string(),
                    Some(
                        inv.problems
                            .iter()
                            .map(failure_text)
                            .collect::<Vec<_>>()
                            .join("\n"),
                    ),
                )],
            }),
            FileResult::Stopped {
                source,
                scenario,
                limit,
            } => Some(Suite {
                name: scenario.name.clone(),
                file: f.clone(),
                cases: vec![(
                    "run finishes within its limits".to_string(),
                    Some(failure_text(&batch::limit_problem(source, scenario, limit))),
                )],
            }),
            FileResult::Filtered | FileResult::Skipped => None,
        })
        .collect();
    document(&suites)
}
