//! Comparing an [`Outcome`] with the scenario's expectations, and the
//! diagnostics that explain a difference from the run itself.

mod explain;
mod flow_stories;
mod guarantee_stories;
mod log_stories;
mod write_stories;

use crate::diagnostic::{Problem, Source};
use crate::engine::Outcome;
use crate::model::*;

pub use crate::model::{Verdict, describe};

/// The value expectation `index`'s target has in the outcome.
pub fn actual(scenario: &Scenario, outcome: &Outcome, index: usize) -> Value {
    match scenario.expectations[index].target {
        Target::Event { .. } => event_value(outcome, index),
        ref target => outcome.value(scenario, target),
    }
}

/// What an event expectation saw: when its event happened, or that it never did.
fn event_value(outcome: &Outcome, index: usize) -> Value {
    let seen = outcome.events_seen.get(&index).cloned().unwrap_or_default();
    if seen.count == 0 {
        return Value::Text("never happened".into());
    }
    let shown: Vec<String> = seen
        .times
        .iter()
        .map(|&t| crate::duration::format(t))
        .collect();
    let more = match seen.count - seen.times.len() as u64 {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let prefix = if seen.at_time {
        "happened"
    } else {
        "happened only"
    };
    Value::Text(format!("{prefix} at {}{more}", shown.join(", ")))
}

/// Whether an event expectation's event happened (at its time, if given).
fn event_occurs(outcome: &Outcome, index: usize) -> bool {
    outcome
        .events_seen
        .get(&index)
        .is_some_and(|seen| seen.at_time && seen.count > 0)
}

/// Judges every expectation of the scenario against the outcome.
pub fn judge(scenario: &Scenario, outcome: &Outcome) -> Vec<Verdict> {
    scenario
        .expectations
        .iter()
        .enumerate()
        .map(|(index, e)| {
            let actual = actual(scenario, outcome, index);
            let passed = match &e.target {
                Target::Event { never, .. } => event_occurs(outcome, index) != *never,
                _ => e.check.holds(&actual),
            };
            Verdict {
                index,
                passed,
                actual,
            }
        })
        .collect()
}

/// A failed expectation as a located diagnostic with an explanation drawn
/// from the run. `o` should hold the transitions of the messages concerned
/// (see [`explain::recorder_for_failures`]).
pub fn failure(source: &Source, scenario: &Scenario, outcome: &Outcome, v: &Verdict) -> Problem {
    failure_told(source, scenario, outcome, v, &mut Told::default())
}

/// The diagnostics of the failed expectations, in order. A message's
/// transitions are shown under the first of its failed expectations; the
/// others refer to that one.
pub fn failures(
    source: &Source,
    scenario: &Scenario,
    outcome: &Outcome,
    failed: &[&Verdict],
) -> Vec<Problem> {
    let mut told = Told::default();
    failed
        .iter()
        .map(|v| failure_told(source, scenario, outcome, v, &mut told))
        .collect()
}

/// The messages whose transitions a diagnostic has shown, with the line
/// of the expectation it belongs to.
pub(crate) type Told = std::collections::BTreeMap<crate::model::MessageIndex, usize>;

fn failure_told(
    source: &Source,
    scenario: &Scenario,
    outcome: &Outcome,
    v: &Verdict,
    told: &mut Told,
) -> Problem {
    let e = &scenario.expectations[v.index];
    let (message, label) = match &e.target {
        Target::Event { never: true, .. } => (
            format!(
                "expected {}, but it {}",
                describe(scenario, e),
                v.actual_text()
            ),
            format!("expected never, but it {}", v.actual_text()),
        ),
        Target::Event { .. } => (
            format!(
                "expected {}, but it {}",
                describe(scenario, e),
                v.actual_text()
            ),
            format!("it {}", v.actual_text()),
        ),
        _ => (
            format!("expected {}, got {}", describe(scenario, e), v.actual),
            format!("expected {}, got {}", e.check, v.actual),
        ),
    };
    let mut help = String::new();
    if let Some(d) = &e.description {
        help.push_str(d.trim());
        help.push_str("\n\n");
    }
    let line = source
        .text
        .get(..e.span.start)
        .map_or(1, |b| b.matches('\n').count() + 1);
    help.push_str(&explain::explain(scenario, outcome, &e.target, told, line));
    Problem::new(source, Some(e.span.clone()), message, label).with_help(help.trim_end())
}

impl Verdict {
    fn actual_text(&self) -> String {
        match &self.actual {
            Value::Text(t) => t.clone(),
            other => other.to_string(),
        }
    }
}

pub use explain::recorder_for_failures;

#[cfg(test)]
mod tests;
