//! Each message's snapshot row over time: what the HTML report's time
//! scrubber shows. The engine emits each message's state after every
//! change ([`Outcome::state_changes`]); this module only turns those states
//! into rows, so the scrubber and the snapshot share one computation.

use serde_json::{Value as Json, json};

use crate::engine::{HISTORY_MESSAGES, MessageState, Outcome, Recorder};
use crate::model::{Millis, Scenario, State};
use crate::report::text::{Row, row_of};

/// A row as of `time` and until the next version; `time` `None` is the
/// row before the run starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    pub time: Option<Millis>,
    pub row: Row,
}

/// The versions of every message's row, oldest first; several changes at
/// one instant make one version. Needs a run recorded with
/// [`Recorder::All`] of at most [`HISTORY_MESSAGES`] messages; returns
/// `None` otherwise.
pub fn versions(scenario: &Scenario, outcome: &Outcome) -> Option<Vec<Vec<Version>>> {
    if outcome.recorder != Recorder::All
        || !outcome.history_complete
        || outcome.messages.len() as u64 > HISTORY_MESSAGES
    {
        return None;
    }
    let mut all: Vec<Vec<Version>> = (0..outcome.messages.len() as u32)
        .map(|m| {
            vec![Version {
                time: None,
                row: row_of(scenario, m, &MessageState::new(), 0),
            }]
        })
        .collect();
    for change in &outcome.state_changes {
        let versions = &mut all[change.message as usize];
        // The age depends on when the row is read: see `row_at`.
        let row = Row {
            age: None,
            ..row_of(scenario, change.message, &change.state, change.time)
        };
        match versions.last_mut() {
            Some(last) if last.time == Some(change.time) => last.row = row,
            _ => versions.push(Version {
                time: Some(change.time),
                row,
            }),
        }
    }
    Some(all)
}

/// A message's row as of `t`, with its age in quarantine.
pub fn row_at(versions: &[Version], t: Millis) -> Option<Row> {
    let v = versions
        .iter()
        .rev()
        .find(|v| v.time.is_none_or(|vt| vt <= t))?;
    let mut row = v.row.clone();
    row.age = (row.state == State::Quarantined)
        .then(|| row.last_quarantined_at.map(|q| t.saturating_sub(q)))
        .flatten();
    Some(row)
}

/// The compact JSON the scrubber reads: per message its id and versions
/// `[time, state, key, cycle, cycle_receives, total_receives, effects,
/// dedup_hits, last_quarantined_at, last_reason]`, time -1 before the run.
pub fn json(all: &[Vec<Version>]) -> Json {
    Json::Array(
        all.iter()
            .map(|versions| {
                let id = versions
                    .first()
                    .map(|v| v.row.id.clone())
                    .unwrap_or_default();
                let vs: Vec<Json> = versions
                    .iter()
                    .map(|v| {
                        let r = &v.row;
                        json!([
                            v.time.map_or(-1, |t| t as i64),
                            r.state.as_str(),
                            r.key,
                            r.cycle,
                            r.cycle_receives,
                            r.total_receives,
                            r.effects,
                            r.dedup_hits,
                            r.last_quarantined_at,
                            r.last_reason,
                        ])
                    })
                    .collect();
                json!({ "id": id, "versions": vs })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{run, run_until};
    use crate::report::text::row;

    /// Every bundled scenario small enough to record: the history's row at
    /// every instant something happened (and just before) is the row of a
    /// run stopped at that instant.
    #[test]
    fn history_matches_the_engine_at_every_instant() {
        let mut checked = 0;
        for entry in std::fs::read_dir("scenarios").unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            for scenario in crate::scenario::scenarios("s.toml", &text).unwrap() {
                if scenario.message_count() > 200 {
                    continue;
                }
                let outcome = run(&scenario, Recorder::All).unwrap();
                let all = versions(&scenario, &outcome).unwrap();
                let mut times: Vec<Millis> = outcome.transitions.iter().map(|t| t.time).collect();
                times.extend(outcome.transitions.iter().map(|t| t.time.saturating_sub(1)));
                times.push(outcome.totals.end_time);
                times.sort();
                times.dedup();
                for t in times {
                    let at = run_until(&scenario, Recorder::Off, t).unwrap();
                    for (m, vs) in all.iter().enumerate() {
                        let expected = row(&scenario, &at, m);
                        assert_eq!(
                            row_at(vs, t),
                            Some(expected),
                            "{} message {m} at {t} ms",
                            path.display()
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000, "only {checked} rows checked");
    }

    #[test]
    fn no_history_without_a_full_recording() {
        let text =
            std::fs::read_to_string("scenarios/01-dlq-is-not-proof-nothing-happened.toml").unwrap();
        let (scenario, _) = crate::scenario::load_str("s.toml", &text).unwrap();
        let outcome = run(&scenario, Recorder::Off).unwrap();
        assert!(versions(&scenario, &outcome).is_none());
    }
}
