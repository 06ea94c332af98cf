//! What the HTML report's playback steps through: the recorded transitions
//! in order, each with its time, its message and its sentence, so that the
//! page can say what just happened and move the snapshot (rows change at
//! the step their history version names, see `history`).

use serde_json::{Value as Json, json};

use crate::engine::Outcome;
use crate::model::Scenario;
use crate::report::live;
use crate::words::sentence::describe;

/// At most this many transitions are listed in a page for its first
/// paint (the transitions table shows as many); the page steps through
/// the rest once it has unpacked the packed run, which holds every kept
/// transition.
pub const PLAYBACK_STEPS: usize = 2000;

/// `[time, message index or -1, what happened]`, and what it counts
/// when it counts something ([`live::step_count`]), for the first
/// [`PLAYBACK_STEPS`] transitions.
pub fn steps(scenario: &Scenario, outcome: &Outcome) -> Json {
    Json::Array(
        outcome
            .transitions
            .iter()
            .take(PLAYBACK_STEPS)
            .map(|t| {
                let mut step = json!([
                    t.time,
                    t.message.map_or(-1, i64::from),
                    describe(scenario, &t.detail)
                ]);
                if let (Some(count), Json::Array(s)) = (live::step_count(&t.detail), &mut step) {
                    s.push(count);
                }
                step
            })
            .collect(),
    )
}

/// How many transitions the run had (recorded or not).
pub fn total(outcome: &Outcome) -> u64 {
    outcome.transitions.len() as u64 + outcome.transitions_dropped
}
