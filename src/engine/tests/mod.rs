//! One test per rule of docs/model.md sections 1-6 and decision of section 10.
//! Each builds a small scenario, runs it with every transition recorded,
//! and asserts what the rule says must happen.

use super::*;
use crate::model::*;
use crate::scenario::load_str;
use census::CENSUS_STEPS;
use rand::RngExt;

pub(super) fn sim(text: &str) -> (Scenario, Outcome) {
    let (scenario, _) = match load_str("test.toml", text) {
        Ok(ok) => ok,
        Err(inv) => panic!(
            "invalid test scenario: {:?}",
            inv.problems
                .iter()
                .map(|p| p.message.clone())
                .collect::<Vec<_>>()
        ),
    };
    let outcome = run(&scenario, Recorder::All).expect("run finishes");
    (scenario, outcome)
}

/// `text` is refused, one of its problems saying `says`.
pub(super) fn refused(text: &str, says: &str) {
    let Err(invalid) = load_str("t.toml", text) else {
        panic!("{text} is refused");
    };
    let problems: Vec<&String> = invalid.problems.iter().map(|p| &p.message).collect();
    assert!(
        problems.iter().any(|p| p.contains(says)),
        "{text}: {problems:?}"
    );
}

/// One message `p` whose `fault` (`fail`, `lose_ack`) lasts until a
/// repair that never comes: it is received `receives` times, 1 ms apart.
pub(crate) fn one_message(receives: u64, fault: &str) -> Scenario {
    let text = format!(
        "[delivery]\nmax_receives = {receives}\nretry_interval = \"1ms\"\n\
         [[message]]\nid = \"p\"\nfaults = [{{ {fault} = {{ until = \"repair\" }} }}]\n"
    );
    load_str("t.toml", &text).expect("a valid scenario").0
}

/// Message `id`'s time ready but not taken, over its deliveries.
pub(super) fn wait(scenario: &Scenario, outcome: &Outcome, id: &str) -> Millis {
    outcome.queue_wait(scenario.find_message(id).expect("message exists"))
}

/// When message `id` first arrived, if it has.
pub(super) fn arrived(scenario: &Scenario, outcome: &Outcome, id: &str) -> Option<Millis> {
    outcome.arrived_at(scenario, scenario.find_message(id).expect("message exists"))
}

pub(super) fn msg(scenario: &Scenario, outcome: &Outcome, id: &str) -> MessageState {
    outcome
        .messages
        .get(scenario.find_message(id).expect("message exists"))
}

/// (time, kind) of a message's transitions.
pub(super) fn story(scenario: &Scenario, outcome: &Outcome, id: &str) -> Vec<(Millis, EventKind)> {
    let m = scenario.find_message(id);
    outcome
        .transitions
        .iter()
        .filter(|t| t.message == m)
        .map(|t| (t.time, t.detail.kind()))
        .collect()
}

/// The ids of the messages whose transitions were of `kind`, in order.
pub(super) fn order_of(scenario: &Scenario, outcome: &Outcome, kind: EventKind) -> Vec<String> {
    outcome
        .transitions
        .iter()
        .filter(|t| t.detail.kind() == kind)
        .map(|t| scenario.message_id(t.message.unwrap()).into_owned())
        .collect()
}

/// When message `id` had transitions of `kind`.
pub(super) fn times(
    scenario: &Scenario,
    outcome: &Outcome,
    id: &str,
    kind: EventKind,
) -> Vec<Millis> {
    story(scenario, outcome, id)
        .into_iter()
        .filter(|(_, k)| *k == kind)
        .map(|(t, _)| t)
        .collect()
}

/// The problems of a file that must be refused.
pub(super) fn invalid(text: &str) -> Vec<String> {
    match load_str("t.toml", text) {
        Ok(_) => panic!("expected the file to be refused"),
        Err(inv) => inv.problems.iter().map(|p| p.message.clone()).collect(),
    }
}

pub(super) fn deliveries_of(scenario: &Scenario, outcome: &Outcome, id: &str) -> Vec<Millis> {
    story(scenario, outcome, id)
        .into_iter()
        .filter(|(_, k)| *k == EventKind::Delivered)
        .map(|(t, _)| t)
        .collect()
}

pub(super) fn retry_delays(scenario: &Scenario, outcome: &Outcome, id: &str) -> Vec<Millis> {
    let m = scenario.find_message(id);
    outcome
        .transitions
        .iter()
        .filter(|t| t.message == m)
        .filter_map(|t| match t.detail {
            Detail::RetryScheduled { delay, .. } => Some(delay),
            _ => None,
        })
        .collect()
}

pub(super) fn reason(scenario: &Scenario, state: MessageState) -> String {
    state
        .last_reason()
        .map(|r| scenario.reasons[r as usize].clone())
        .unwrap_or_default()
}

pub(super) const DELIVERY: &str = "[delivery]\nmax_receives = 2\nretry_interval = \"10s\"\n";

/// The four-message fixture with the acceptance baseline, plus `extra`
/// tables and the given operator step.
pub(super) fn fixture(delivery: &str, extra: &str, operator: &str) -> String {
    format!(
        r#"{delivery}
{extra}
{operator}
[[message]]
id = "healthy"
[[message]]
id = "transient"
faults = [{{ fail = {{ first = 2 }}, reason = "upstream timeout" }}]
[[message]]
id = "poison"
faults = [{{ fail = {{ until = "repair" }}, reason = "schema", class = "permanent" }}]
[[message]]
id = "uncertain"
faults = [{{ lose_ack = {{ until = "repair" }} }}]
"#
    )
}

pub(super) const BASE_EXTRA: &str =
    "[quarantine]\nretention = \"120s\"\n[dedup]\nresult_retention = \"60s\"\n";
pub(super) const BASE_OP: &str =
    "[[operator]]\nwait = \"30s\"\nrepair = true\naction = \"redrive_all\"\n";

mod alarms;
mod checkpoints;
mod decisions;
mod delivery;
mod downstream;
mod jetstream;
mod limits_and_census;
mod log;
mod operator;
mod ordering;
mod pinned;
mod producer;
mod profiles;
mod rabbitmq;
mod rabbitmq_classic;
mod retry_delay;
mod time_and_keys;
mod traffic;
mod visibility;
mod workers;
mod write;
