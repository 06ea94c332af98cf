//! Dataflow scenarios (model section 25): a second world beside the
//! queue. A file with `[[node]]` entries describes nodes joined by FIFO
//! channels of one or more partitions, values sent between them, and
//! Chandy-Lamport snapshot attempts; the run records each attempt's cut
//! and the file's expectations are judged against it.
//!
//! | file | concept |
//! |---|---|
//! | `file.rs` | the file's tables as written, with spans |
//! | `validate.rs` | from the tables to the model, every problem located |
//! | `expect.rs` | `[expect]` and `[[question]]`: what each names, checked |
//! | `model.rs` | the validated dataflow and its expectations |
//! | `world.rs` | the run: sends, markers, recordings, timeouts |
//! | `outcome.rs` | what a run produces: attempts, records, happenings, stops |
//! | `judge.rs` | verdicts, and diagnostics that explain a failure |
//! | `sweep.rs` | `[sweep]`: its points, and the columns of its table |
//! | `text.rs` | the transcript and the space-time diagram |
//! | `json.rs` | the JSON report |

pub mod diagram;
mod expect;
pub mod file;
pub mod json;
pub mod judge;
pub mod model;
pub mod outcome;
pub mod sweep;
pub mod text;
pub mod validate;
pub mod world;

pub use model::Dataflow;
pub use outcome::{Outcome, Stop};
pub use world::run;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::diagnostic::{Problem, Source};
use crate::model::Verdict;

/// A dataflow file that ran: its run (or where it stopped), verdicts and
/// the diagnostics of failed expectations.
pub struct Ran {
    pub source: Source,
    pub flow: Arc<Dataflow>,
    pub run: Result<Arc<Outcome>, Stop>,
    pub verdicts: Vec<Verdict>,
    pub failures: Vec<Problem>,
}

impl Ran {
    pub fn passed(&self) -> bool {
        self.run.is_ok() && self.failures.is_empty()
    }

    /// passed, failed or stopped.
    pub fn status(&self) -> &'static str {
        match (&self.run, self.failures.is_empty()) {
            (Err(_), _) => "stopped",
            (Ok(_), true) => "passed",
            (Ok(_), false) => "failed",
        }
    }

    /// The diagnostics: the failures, or the limit that stopped the run.
    pub fn problems(&self) -> Vec<crate::diagnostic::Located> {
        match &self.run {
            Err(stop) => vec![stop_problem(&self.source, stop).located()],
            Ok(_) => self.failures.iter().map(Problem::located).collect(),
        }
    }
}

/// Runs and judges a validated dataflow.
pub fn run_and_judge(source: Source, flow: Dataflow) -> Ran {
    match world::run(&flow) {
        Ok(outcome) => {
            let verdicts = judge::judge(&flow, &outcome);
            let failed: Vec<&Verdict> = verdicts.iter().filter(|v| !v.passed).collect();
            let failures = judge::failures(&source, &flow, &outcome, &failed);
            Ran {
                source,
                flow: Arc::new(flow),
                run: Ok(Arc::new(outcome)),
                verdicts,
                failures,
            }
        }
        Err(stop) => Ran {
            source,
            flow: Arc::new(flow),
            run: Err(stop),
            verdicts: Vec::new(),
            failures: Vec::new(),
        },
    }
}

/// The JSON Schema of a dataflow file (one with `[[node]]` entries, at
/// least one), with `[sweep]` and `[[expect.point]]`: a swept column names
/// a value as a question's answer does.
pub fn schema() -> serde_json::Value {
    let answer = serde_json::json!({
        "type": "string",
        "pattern": "^(snapshot\\.[0-9]+\\..+|node\\..+\\.state)$"
    });
    let mut flow = crate::scenario::schema::of_file::<file::File>(
        answer,
        "ExpectTable",
        "DataflowExpectPoint",
    );
    flow["required"] = serde_json::json!(["node"]);
    flow["properties"]["node"]["minItems"] = serde_json::json!(1);
    flow
}

/// The diagnostic of a run stopped at a limit or the recording budget.
pub fn stop_problem(source: &Source, stop: &Stop) -> Problem {
    let span = source
        .text
        .find("[limits]")
        .map(|i| i..i + "[limits]".len());
    let help = match stop {
        Stop::Recorded { .. } => format!(
            "a recording grows while its partition's marker has not come; a lost or held marker without a timeout does this. Give the [[snapshot]] a timeout, or fix the channel: the budget, {} values, keeps a run's memory bounded",
            model::MAX_RECORDED_VALUES
        ),
        _ => "raise the limit in [limits] (max_events, max_time), or send less".to_string(),
    };
    Problem::new(source, span, stop.to_string(), "limit reached").with_help(help)
}

/// A valid dataflow file: one dataflow, or a sweep of points.
pub enum Loaded {
    One(Box<Dataflow>),
    Sweep(sweep::Sweep),
}

/// Reads and validates a dataflow file from text (see
/// [`crate::scenario::is_dataflow`]), with `sets` (`--set PATH=VALUE`)
/// written in place first; a `[sweep]` gives one dataflow per point,
/// every point valid before any runs.
pub fn load(
    name: &str,
    text: &str,
    sets: &[(String, String)],
) -> Result<(Loaded, Source), Box<crate::scenario::Invalid>> {
    use crate::scenario::{points, reading};
    let (full, source) = crate::scenario::prepared(name, text, sets);
    let invalid = |mut problems: Vec<Problem>| {
        problems.sort_by_key(Problem::offset);
        problems.truncate(crate::scenario::MAX_PROBLEMS);
        Box::new(crate::scenario::Invalid {
            source: source.clone(),
            problems,
        })
    };
    let stem = std::path::Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    let root = reading::syntax(&source, &full).map_err(|u| invalid(u.problems(|_| Vec::new())))?;
    let prepared = points::prepare(&source, root, "node.1.state");
    let read = match &prepared.spec {
        None => validate::read(&source, prepared.root, &stem, Vec::new())
            .map(|flow| Loaded::One(Box::new(flow))),
        Some(spec) => sweep::points(
            &source,
            &prepared.root,
            &stem,
            spec,
            &prepared.expect_points,
        )
        .map(Loaded::Sweep),
    };
    match points::with_early(prepared.early, read) {
        Ok(loaded) => Ok((loaded, source)),
        Err(problems) => Err(invalid(problems)),
    }
}

/// Reads and validates a dataflow file without a sweep.
pub fn load_one(
    name: &str,
    text: &str,
    sets: &[(String, String)],
) -> Result<(Dataflow, Source), Box<crate::scenario::Invalid>> {
    let (loaded, source) = load(name, text, sets)?;
    match loaded {
        Loaded::One(flow) => Ok((*flow, source)),
        Loaded::Sweep(sweep) => Err(crate::scenario::sweeps(
            source,
            sweep.span,
            sweep.points.len(),
        )),
    }
}

impl Ran {
    /// Drops what a sweep's point is not read for once its table row and
    /// diagnostics are made: the happenings, the final states, and each
    /// attempt's node and partition records (its outcome, times,
    /// consistency and `max_recorded` stay), so that a point keeps a
    /// bounded few numbers per attempt whatever the dataflow's size.
    pub fn lighten(&mut self) {
        let Ok(outcome) = &mut self.run else { return };
        // Just made: the only holder.
        if let Some(outcome) = Arc::get_mut(outcome) {
            outcome.log = Vec::new();
            outcome.states = Vec::new();
            outcome.watched = Default::default();
            for attempt in &mut outcome.attempts {
                attempt.nodes = Vec::new();
                attempt.partitions = Vec::new();
            }
        }
    }
}
