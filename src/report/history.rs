//! Each message's snapshot row over time: what the HTML report's time
//! scrubber shows. The engine emits each message's state after every
//! change ([`Outcome::state_changes`]); this module only turns those states
//! into rows, so the scrubber and the snapshot share one computation.

use serde_json::{Value as Json, json};

use super::rows::XDeath;
use crate::engine::{HISTORY_MESSAGES, MessageState, Outcome, Recorder};
use crate::model::{Millis, Scenario, State};
use crate::words::line::{Row, row_of};

/// A row as of `time` and until the next version; `time` `None` is the
/// row before the run starts. `step` is the number of transitions recorded
/// before it: the row from playback step `step` on.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    pub time: Option<Millis>,
    pub step: u32,
    pub row: Row,
    /// In quarantine under a RabbitMQ profile: the `x-death` entry of its
    /// latest dead-lettering, as the quarantine pane lists it.
    pub x_death: Option<String>,
}

/// The versions of every message's row, oldest first; several changes with
/// no transition between them make one version (so playback finds the
/// row at every step, every kept transition of the run). Needs a run recorded with
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
                step: 0,
                row: row_of(scenario, m, &MessageState::new(), 0),
                x_death: None,
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
        let x_death = (change.state.state == State::Quarantined)
            .then(|| XDeath::of_state(scenario, &change.state))
            .flatten()
            .map(|x| x.to_string());
        match versions.last_mut() {
            Some(last) if last.time == Some(change.time) && last.step == change.step => {
                last.row = row;
                last.x_death = x_death;
            }
            _ => versions.push(Version {
                time: Some(change.time),
                step: change.step,
                row,
                x_death,
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
    aged(v, t)
}

/// A message's row at playback step `step` (`step` transitions applied, the
/// last of them at `t`, 0 before the first): every change made before
/// transition `step + 1`, up to modeled time `t`. A change recorded after
/// the last transition but later in time (an arrival in the gap before the
/// next transition) is not there yet.
pub fn row_at_step(versions: &[Version], step: u32, t: Millis) -> Option<Row> {
    let v = versions.iter().rev().find(|v| match v.time {
        None => true,
        Some(vt) => v.step < step || (v.step == step && vt <= t),
    })?;
    aged(v, t)
}

fn aged(v: &Version, t: Millis) -> Option<Row> {
    let mut row = v.row.clone();
    row.age = (row.state == State::Quarantined)
        .then(|| row.last_quarantined_at.map(|q| t.saturating_sub(q)))
        .flatten();
    Some(row)
}

/// The compact JSON the scrubber reads: per message its id and versions
/// `[time, state, key, cycle, cycle_receives, total_receives, effects,
/// dedup_hits, last_quarantined_at, last_reason, step]`, time -1 before
/// the run; in quarantine under a RabbitMQ profile, with the `x-death`
/// entry's text last.
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
                        let mut version = json!([
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
                            v.step,
                        ]);
                        if let (Some(x), Json::Array(cells)) = (&v.x_death, &mut version) {
                            cells.push(json!(x));
                        }
                        version
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
    use crate::engine::run;
    use crate::words::line::row;

    /// Every bundled scenario small enough to keep its history, run and
    /// recorded, with each message's versions.
    fn recorded() -> Vec<(std::path::PathBuf, Scenario, Outcome, Vec<Vec<Version>>)> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir("scenarios").unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for scenario in crate::scenario::scenarios("s.toml", &text).unwrap() {
                if scenario.message_count() > 200 {
                    continue;
                }
                let outcome = run(&scenario, Recorder::All).unwrap();
                let all = versions(&scenario, &outcome).unwrap();
                out.push((path.clone(), scenario, outcome, all));
            }
        }
        out
    }

    /// Every bundled scenario small enough to record: the history's row at
    /// every instant something happened (and just before) is the row of a
    /// run stopped at that instant.
    #[test]
    fn history_matches_the_engine_at_every_instant() {
        let mut checked = 0;
        for (path, scenario, outcome, all) in recorded() {
            let mut times: Vec<Millis> = outcome.transitions.iter().map(|t| t.time).collect();
            times.extend(outcome.transitions.iter().map(|t| t.time.saturating_sub(1)));
            times.push(outcome.totals.end_time);
            times.sort();
            times.dedup();
            let mut stops = crate::engine::Stops::new(&scenario);
            for t in times {
                let at = stops.at(t);
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
        assert!(checked > 1000, "only {checked} rows checked");
    }

    /// Playback: at every step the row of the transition's message shows
    /// what the transition did, and at the last step of each instant every
    /// row is the row of a run stopped at that instant.
    #[test]
    fn rows_follow_the_transitions_step_by_step() {
        use crate::engine::Detail;
        let mut checked = 0;
        for (path, scenario, outcome, all) in recorded() {
            let ts = &outcome.transitions;
            let time = |n: usize| if n == 0 { 0 } else { ts[n - 1].time };
            let mut stops = crate::engine::Stops::new(&scenario);
            for n in 0..=ts.len() {
                let t = time(n);
                let at = |m: usize, n: usize| row_at_step(&all[m], n as u32, time(n)).unwrap();
                if ts.get(n).is_none_or(|next| next.time > t) {
                    let stopped = stops.at(t);
                    for m in 0..all.len() {
                        let expected = row(&scenario, &stopped, m);
                        assert_eq!(at(m, n), expected, "{} step {n}", path.display());
                    }
                }
                // Playback steps through every kept transition.
                let Some(tr) = n.checked_sub(1).map(|k| ts[k]) else {
                    continue;
                };
                let Some(m) = tr.message.map(|m| m as usize) else {
                    continue;
                };
                let (before, after) = (at(m, n - 1), at(m, n));
                let here = format!("{} step {n}: {:?}", path.display(), tr.detail);
                match tr.detail {
                    Detail::Delivered {
                        cycle,
                        cycle_receives,
                        total_receives,
                        ..
                    } => {
                        assert_eq!(after.cycle, cycle, "{here}");
                        assert_eq!(after.cycle_receives, cycle_receives, "{here}");
                        assert_eq!(after.total_receives, total_receives, "{here}");
                    }
                    Detail::Committed { .. } => {
                        assert_eq!(after.effects, before.effects + 1, "{here}")
                    }
                    Detail::DedupHit { .. } => {
                        assert_eq!(after.dedup_hits, before.dedup_hits + 1, "{here}")
                    }
                    Detail::Failed { reason, .. } => assert_eq!(
                        after.last_reason.as_deref(),
                        Some(scenario.reasons[reason as usize].as_str()),
                        "{here}"
                    ),
                    Detail::Acked => assert_eq!(after.state, State::Acked, "{here}"),
                    Detail::Quarantined { .. } => {
                        assert_eq!(after.state, State::Quarantined, "{here}");
                        assert_eq!(after.last_quarantined_at, Some(t), "{here}");
                    }
                    Detail::Expired { .. } => assert_eq!(after.state, State::Expired),
                    Detail::Purged => assert_eq!(after.state, State::Purged, "{here}"),
                    Detail::Dropped { .. } => assert_eq!(after.state, State::Dropped),
                    Detail::RecordSkipped { .. } => assert_eq!(after.state, State::Skipped),
                    Detail::Redriven { cycle, .. } => {
                        assert_eq!(after.cycle, cycle, "{here}");
                        assert_eq!(after.cycle_receives, 0, "{here}");
                    }
                    _ => continue,
                }
                checked += 1;
            }
        }
        assert!(checked > 500, "only {checked} steps checked");
    }

    /// Past the steps a page lists for its first paint, a message still
    /// has a version per transition of one instant: playback steps through
    /// every kept transition, and each step's rows are exact.
    #[test]
    fn past_the_listed_steps_every_transition_keeps_its_row() {
        use crate::report::playback::PLAYBACK_STEPS;
        let text = "[delivery]\nmax_receives = 40\nretry_interval = \"1s\"\n\
                    [[traffic]]\ncount = 100\nover = \"1s\"\n\
                    faults = [{ fail = { first = 30 } }]\n";
        let (scenario, _) = crate::scenario::load_str("t.toml", text).unwrap();
        let outcome = run(&scenario, Recorder::All).unwrap();
        assert!(outcome.transitions.len() > 3 * PLAYBACK_STEPS);
        let all = versions(&scenario, &outcome).unwrap();
        let late_same_instant = all
            .iter()
            .flat_map(|vs| vs.windows(2))
            .filter(|w| w[0].time == w[1].time && w[0].step as usize > PLAYBACK_STEPS)
            .count();
        assert!(late_same_instant > 100, "{late_same_instant}");
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
