//! Comparing an [`Outcome`] with the scenario's expectations, and the
//! diagnostics that explain a difference from the run itself.

mod explain;

use std::collections::BTreeSet;

use crate::diagnostic::{Problem, Source};
use crate::engine::{Outcome, Recorder};
use crate::model::*;

/// One expectation's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Index into [`Scenario::expectations`].
    pub index: usize,
    pub passed: bool,
    pub actual: Value,
}

/// The recorder a run needs so that every expectation can be judged:
/// event expectations read the transitions of the messages they name.
pub fn recorder_for(s: &Scenario) -> Recorder {
    let mut named = BTreeSet::new();
    let mut any = false;
    for e in &s.expectations {
        if let Target::Event { message, .. } = e.target {
            any = true;
            match message {
                Some(m) => {
                    named.insert(m);
                }
                None => return Recorder::All,
            }
        }
    }
    if any {
        Recorder::Only(named)
    } else {
        Recorder::Off
    }
}

/// The value an expectation's target has in the outcome.
pub fn actual(s: &Scenario, o: &Outcome, target: &Target) -> Value {
    match *target {
        Target::Total(t) => o.totals.get(t),
        Target::Message(m, field) => {
            let st = &o.messages[m as usize];
            match field {
                MessageField::State => Value::Text(st.state.as_str().to_string()),
                MessageField::Key => Value::Text(s.key_name(o.key(s, m))),
                MessageField::Cycle => Value::Count(st.cycle as u64),
                MessageField::CycleReceives => Value::Count(st.cycle_receives as u64),
                MessageField::TotalReceives => Value::Count(st.total_receives as u64),
                MessageField::Effects => Value::Count(st.effects as u64),
                MessageField::DedupHits => Value::Count(st.dedup_hits as u64),
                MessageField::LastReason => st
                    .last_reason()
                    .map_or(Value::Never, |r| Value::Text(s.reasons[r as usize].clone())),
                MessageField::QuarantinedAt => {
                    st.quarantined_at().map_or(Value::Never, Value::Time)
                }
            }
        }
        Target::Event {
            kind, message, at, ..
        } => {
            let times: Vec<Millis> = o
                .transitions
                .iter()
                .filter(|t| t.detail.kind() == kind && (message.is_none() || t.message == message))
                .map(|t| t.time)
                .collect();
            let matched = times.iter().any(|&t| at.is_none_or(|a| a == t));
            if times.is_empty() {
                Value::Text("never happened".into())
            } else {
                let shown: Vec<String> = times
                    .iter()
                    .take(8)
                    .map(|&t| crate::duration::format(t))
                    .collect();
                let more = if times.len() > 8 {
                    format!(" and {} more", times.len() - 8)
                } else {
                    String::new()
                };
                let prefix = if matched { "happened" } else { "happened only" };
                Value::Text(format!("{prefix} at {}{more}", shown.join(", ")))
            }
        }
    }
}

fn event_occurs(o: &Outcome, target: &Target) -> bool {
    let Target::Event {
        kind, message, at, ..
    } = *target
    else {
        return false;
    };
    o.transitions.iter().any(|t| {
        t.detail.kind() == kind
            && (message.is_none() || t.message == message)
            && at.is_none_or(|a| a == t.time)
    })
}

/// Judges every expectation of the scenario against the outcome.
pub fn judge(s: &Scenario, o: &Outcome) -> Vec<Verdict> {
    s.expectations
        .iter()
        .enumerate()
        .map(|(index, e)| {
            let actual = actual(s, o, &e.target);
            let passed = match &e.target {
                Target::Event { never, .. } => event_occurs(o, &e.target) != *never,
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

/// What the expectation says, e.g. `effects = 4` or `message "poison" state = "acked"`.
pub fn describe(s: &Scenario, e: &Expectation) -> String {
    match &e.target {
        Target::Total(t) => format!("{} {}", t.name(), check_words(&e.check)),
        Target::Message(m, f) => {
            format!(
                "message \"{}\" {} {}",
                s.message_id(*m),
                f.name(),
                check_words(&e.check)
            )
        }
        Target::Event {
            kind,
            message,
            at,
            never,
        } => {
            let who = message.map_or(String::new(), |m| format!(" of \"{}\"", s.message_id(m)));
            let when = at.map_or(String::new(), |a| {
                format!(" at {}", crate::duration::format(a))
            });
            let verb = if *never { "never happens" } else { "happens" };
            format!("event {}{who}{when} {verb}", kind.as_str())
        }
    }
}

fn check_words(c: &Check) -> String {
    match c {
        Check::Equals(v) => format!("= {v}"),
        other => format!("is {other}"),
    }
}

/// A failed expectation as a located diagnostic with an explanation drawn
/// from the run. `o` should hold the transitions of the messages concerned
/// (see [`explain::recorder_for_failures`]).
pub fn failure(source: &Source, s: &Scenario, o: &Outcome, v: &Verdict) -> Problem {
    let e = &s.expectations[v.index];
    let (message, label) = match &e.target {
        Target::Event { never: true, .. } => (
            format!("expected {}, but it {}", describe(s, e), v.actual_text()),
            format!("expected never, but it {}", v.actual_text()),
        ),
        Target::Event { .. } => (
            format!("expected {}, but it {}", describe(s, e), v.actual_text()),
            format!("it {}", v.actual_text()),
        ),
        _ => (
            format!("expected {}, got {}", describe(s, e), v.actual),
            format!("expected {}, got {}", e.check, v.actual),
        ),
    };
    let mut help = String::new();
    if let Some(d) = &e.description {
        help.push_str(d.trim());
        help.push_str("\n\n");
    }
    help.push_str(&explain::explain(s, o, &e.target));
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
