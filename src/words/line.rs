//! A transcript line (time, who, what happened) and a message's row of
//! the snapshot table: how the transcript, the reports and the
//! explanations of a failed expectation write one transition or one
//! message.

use super::sentence::Sentence;
use crate::duration::Dur;
use crate::engine::{Detail, MessageState, Outcome, Transition};
use crate::model::{EventKind, MessageIndex, Millis, Scenario, State};

/// One transcript line: time, message, what happened.
pub fn line(scenario: &Scenario, t: &Transition, id_width: usize) -> String {
    Line(scenario, t, id_width).to_string()
}

/// Who a transition without a message is about: an alarm, a log's
/// consumer (its restarts and resumes), the deduplication store, or the
/// operator.
pub fn actor(detail: Detail) -> &'static str {
    actor_of(detail.kind())
}

/// [`actor`] by kind: what the reports' templates read (`actors`),
/// declared with the kind ([`EventKind::about`]).
pub fn actor_of(kind: EventKind) -> &'static str {
    kind.about().actor()
}

/// One transcript line ([`line()`]), written without building a string.
pub struct Line<'a>(pub &'a Scenario, pub &'a Transition, pub usize);

impl std::fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Line(scenario, t, id_width) = *self;
        write!(f, "{:>10}  ", Dur(t.time))?;
        match (t.message, t.detail) {
            (Some(m), _) => write!(f, "{:<id_width$}", scenario.name_of_message(m))?,
            (None, detail) => write!(f, "{:<id_width$}", actor(detail))?,
        }
        write!(f, "  {}", Sentence(scenario, &t.detail))
    }
}

pub fn id_width(scenario: &Scenario, outcome: &Outcome) -> usize {
    let widest = outcome
        .transitions
        .iter()
        .filter_map(|t| t.message)
        .map(|m| scenario.name_of_message(m).len())
        .max()
        .unwrap_or(0);
    widest.clamp(8, 32)
}

/// A row of the snapshot table, as of `as_of`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: String,
    pub key: String,
    pub state: State,
    pub last_reason: Option<String>,
    pub cycle: u32,
    pub cycle_receives: u32,
    pub total_receives: u32,
    pub effects: u32,
    pub dedup_hits: u32,
    pub last_quarantined_at: Option<u64>,
    /// Time in quarantine as of the snapshot, while quarantined.
    pub age: Option<u64>,
}

pub fn row(scenario: &Scenario, outcome: &Outcome, m: usize) -> Row {
    row_of(
        scenario,
        m as MessageIndex,
        &outcome.messages.get(m as MessageIndex),
        outcome.as_of,
    )
}

/// The row of message `m` in state `message`, as of `as_of`.
pub fn row_of(scenario: &Scenario, m: MessageIndex, message: &MessageState, as_of: Millis) -> Row {
    Row {
        id: scenario.message_id(m).into_owned(),
        key: scenario.key_name(message.key(scenario.intent(m))),
        state: message.state,
        last_reason: message
            .last_reason()
            .map(|r| scenario.reasons[r as usize].clone()),
        cycle: message.cycle,
        cycle_receives: message.cycle_receives,
        total_receives: message.total_receives,
        effects: message.effects,
        dedup_hits: message.dedup_hits,
        last_quarantined_at: message.last_quarantined_at(),
        age: message.quarantine_age(as_of),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transition without a message names who it is about, in the
    /// transcript as in the reports' tables.
    #[test]
    fn a_transition_without_a_message_names_its_actor() {
        let alarm = Detail::AlarmCleared { alarm: 0 };
        let restart = Detail::Resumed {
            partition: 0,
            position: 3,
        };
        let store = Detail::StoreRestarted {
            live: 1,
            lost: true,
        };
        let step = Detail::Inspected { step: 1, depth: 0 };
        assert_eq!(
            [alarm, restart, store, step].map(actor),
            ["alarm", "log", "store", "operator"]
        );
    }
}
