//! `compare`: two runs side by side. Each side is a queue scenario file
//! with its own `--set` values (two files, a file and its changed version,
//! or two points of a sweep), run as a batch runs it; their differences
//! are read by `report::compare`.
//!
//! Costs: two runs, each within its own budgets, then the comparison's
//! (`report::compare::differences`).

use std::sync::Arc;

use serde_json::Value as Json;

use super::Loaded;
use super::batch::{LoadError, load_file, run_scenario};
use super::result::{FileResult, Options, Ran, Transcript};
use crate::diagnostic::Problem;
pub use crate::report::compare::differences::{
    Compared, Comparison, DIFFERENCES_KEPT, Difference, OneSided, Section, Side, compare,
};

/// Why a side cannot be compared.
#[derive(Debug)]
pub enum SideError {
    Unreadable(std::io::Error),
    Invalid(Vec<Problem>),
    /// A sweep of more than one point: which paths to fix.
    Sweep {
        points: usize,
        keys: Vec<String>,
    },
    /// A dataflow file (model section 25): not a queue run.
    Dataflow,
    /// The run stopped at a limit.
    Stopped(Box<Problem>),
}

impl SideError {
    /// How `compare` ends: an unreadable or invalid file is invalid input,
    /// a sweep not fixed to one point or a dataflow is not what the
    /// command takes, a run stopped at a limit is stopped.
    pub fn exit(&self) -> super::Exit {
        use super::Exit;
        match self {
            SideError::Unreadable(_) | SideError::Invalid(_) => Exit::Invalid,
            SideError::Sweep { .. } | SideError::Dataflow => Exit::Usage,
            SideError::Stopped(_) => Exit::Stopped,
        }
    }

    /// What keeps side `name` (`A` or `B`, file `file`) from a comparison,
    /// colour-free.
    pub fn describe(&self, name: &str, file: &str) -> String {
        match self {
            SideError::Unreadable(e) => format!("error: run {name}: cannot read {file}: {e}"),
            SideError::Invalid(problems) => problems
                .iter()
                .map(|p| crate::diagnostic::render(p, false))
                .collect::<Vec<_>>()
                .join("\n"),
            SideError::Sweep { points, keys } => format!(
                "error: run {name}: {file} is a sweep of {points} points: fix {} to one of its values with --set-{} PATH=VALUE to compare one point",
                keys.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                name.to_lowercase()
            ),
            SideError::Dataflow => format!(
                "error: run {name}: {file} is a dataflow (model section 25); compare takes queue scenarios"
            ),
            SideError::Stopped(p) => crate::diagnostic::render(p.as_ref(), false),
        }
    }
}

/// Loads and runs one side.
pub fn side(file: &str, sets: &[(String, String)], seed: Option<u64>) -> Result<Side, SideError> {
    let (loaded, source) = match load_file(file, sets) {
        Ok(ok) => ok,
        Err(LoadError::Unreadable(e)) => return Err(SideError::Unreadable(e)),
        Err(LoadError::Invalid(inv)) => return Err(SideError::Invalid(inv.problems)),
    };
    let mut scenario = match loaded {
        Loaded::One(s) => *s,
        Loaded::Sweep(mut s) if s.points.len() == 1 => s.points.remove(0).scenario,
        Loaded::Sweep(s) => {
            return Err(SideError::Sweep {
                points: s.points.len(),
                keys: s.keys.clone(),
            });
        }
        Loaded::Dataflow(_) | Loaded::DataflowSweep(_) => return Err(SideError::Dataflow),
    };
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    let opts = Options {
        transcript: Transcript::Kept,
        census: true,
        ..Options::default()
    };
    let ran = match run_scenario(source, scenario, &opts) {
        FileResult::Ran(ran) => ran,
        FileResult::Stopped {
            source,
            scenario,
            limit,
        } => {
            return Err(SideError::Stopped(Box::new(super::result::limit_problem(
                &source, &scenario, &limit,
            ))));
        }
        _ => unreachable!("a scenario that ran or stopped"),
    };
    let report = report_of(file, &ran);
    Ok(Side {
        file: file.to_string(),
        sets: sets.to_vec(),
        scenario: Arc::clone(&ran.scenario),
        outcome: Arc::clone(&ran.outcome),
        passed: ran.failures.is_empty(),
        report,
    })
}

/// The run's JSON report, as `--format json` writes it, without its two
/// longest lists (the transitions and the ledger), which no comparison
/// reads.
fn report_of(file: &str, ran: &Ran) -> Json {
    let problems: Vec<_> = ran.failures.iter().map(Problem::located).collect();
    let mut doc = crate::report::json::document(file, &ran.run(), &ran.verdicts, &problems);
    if let Json::Object(head) = &mut doc.head {
        head.remove("transitions");
        head.remove("ledger");
    }
    serde_json::to_value(&doc).unwrap_or(Json::Null)
}
