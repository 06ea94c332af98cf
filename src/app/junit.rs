//! `--junit FILE`: a testsuite per scenario file, a testcase per
//! expectation (with the file and line it is written on), a testcase per
//! problem of an invalid file, and one for the golden transcript; a
//! failure carries the problem's message and its colour-free diagnostic.

use super::batch::FileResult;
use super::golden::Verdict;
use crate::diagnostic::Located;
use crate::report::junit_xml::{Case, Suite, document};

/// The JUnit document of a batch. `goldens` holds each file's golden
/// verdict (`None` without `--golden`).
pub fn junit_xml(files: &[String], results: &[FileResult], goldens: &[Option<Verdict>]) -> String {
    let suites: Vec<Suite> = files
        .iter()
        .zip(results)
        .zip(goldens)
        .filter(|((_, r), _)| r.counts())
        .map(|((file, r), golden)| {
            let mut cases = match r {
                FileResult::Ran(ran) => expectation_cases(file, ran),
                FileResult::Swept(sweep) => sweep_cases(file, sweep),
                _ => problem_cases(file, r),
            };
            if let Some(verdict) = golden {
                cases.push(Case {
                    name: "golden transcript matches".to_string(),
                    line: None,
                    failure: verdict.problem(file),
                });
            }
            Suite {
                name: r
                    .scenario()
                    .map_or_else(|| file.clone(), |s| s.name.clone()),
                file: file.clone(),
                cases,
            }
        })
        .collect();
    document(&suites)
}

/// A case per expectation, named by what it checks, on the line the
/// expectation is written.
fn expectation_cases(file: &str, ran: &super::Ran) -> Vec<Case> {
    let mut failures = ran.failures.iter();
    ran.verdicts
        .iter()
        .map(|v| {
            let expectation = &ran.scenario.expectations[v.index];
            let line = ran
                .source
                .text
                .get(..expectation.span.start)
                .map(|before| before.matches('\n').count() + 1);
            let failure = if v.passed {
                None
            } else {
                failures.next().map(|p| Located {
                    file: file.to_string(),
                    ..p.located()
                })
            };
            Case {
                name: crate::expect::describe(&ran.scenario, expectation),
                line,
                failure,
            }
        })
        .collect()
}

/// A sweep: each point's cases, named with the point's values.
fn sweep_cases(file: &str, sweep: &super::sweep::SweepRun) -> Vec<Case> {
    let mut cases = Vec::new();
    for point in &sweep.points {
        let at = sweep.describe(point);
        let point_cases = match &point.result {
            FileResult::Ran(ran) => expectation_cases(file, ran),
            other => problem_cases(file, other),
        };
        cases.extend(point_cases.into_iter().map(|c| Case {
            name: format!("[{at}] {}", c.name),
            ..c
        }));
    }
    cases
}

/// An invalid file: a failed case per problem, at its line; a run stopped
/// at a limit: one failed case.
fn problem_cases(file: &str, r: &FileResult) -> Vec<Case> {
    let what = if matches!(r, FileResult::Invalid(_)) {
        "valid scenario file"
    } else {
        "run finishes within its limits"
    };
    r.problems()
        .into_iter()
        .map(|p| Case {
            name: match p.line {
                Some(line) => format!("{what}: line {line}: {}", p.message),
                None => format!("{what}: {}", p.message),
            },
            line: p.line,
            failure: Some(Located {
                file: file.to_string(),
                ..p
            }),
        })
        .collect()
}
