//! The live counters and panes: what a run has done, and where its
//! messages wait, as of one moment of it. `show --at` prints them from
//! the run stopped at that moment (the engine's own state then); the HTML
//! page's playback draws the same at every position from what this
//! module gives it: what each transition counts, each alarm's name, each
//! message's dead-letter headers, and per census sample what the run had
//! done.

use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use super::rows::XDeath;
use crate::duration::Dur;
use crate::engine::{Detail, Outcome, QUARANTINE_PANE, SOURCE_PANE};
use crate::model::{MessageIndex, Millis, Scenario, State};
use crate::padded;

/// A pane shows at most this many messages; the rest are counted.
pub const PANE_ROWS: usize = 20;

/// The live counters as of a moment of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counters {
    pub acked: u64,
    /// Deliveries (attempts) made.
    pub deliveries: u64,
    /// The sum of the retry delays scheduled.
    pub retry_delay_paid: Millis,
    /// Messages in quarantine (the DLQ's depth).
    pub dlq_depth: u64,
    /// Each alarm of the file, in file order: firing or quiet.
    pub alarms: Vec<(String, bool)>,
}

/// The counters of `outcome` as of its end, or as of the time it was
/// stopped at (`run_until`).
pub fn counters(scenario: &Scenario, outcome: &Outcome) -> Counters {
    let t = &outcome.totals;
    Counters {
        acked: t.acked,
        deliveries: t.deliveries,
        retry_delay_paid: t.retry_delay_paid,
        dlq_depth: t.final_dlq_depth,
        alarms: (scenario.alarms.iter())
            .zip(&outcome.alarms)
            .map(|(a, r)| (a.name.clone(), r.firing))
            .collect(),
    }
}

/// A message waiting in the source: ready to be taken, or waiting for a
/// retry due at `due` (when the run recorded it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    pub m: MessageIndex,
    pub ready: bool,
    pub total_receives: u32,
    pub due: Option<Millis>,
}

/// A message in quarantine: why, after how many receives, since when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantined {
    pub m: MessageIndex,
    pub reason: Option<String>,
    pub total_receives: u32,
    pub age: Millis,
}

/// The messages waiting in the source as of the outcome's moment, in
/// message order: the first [`PANE_ROWS`] and how many there are.
pub fn source_pane(outcome: &Outcome) -> (Vec<Waiting>, u64) {
    let mut dues: std::collections::BTreeMap<MessageIndex, Millis> = Default::default();
    for t in &outcome.transitions {
        if let (Some(m), Detail::RetryScheduled { due, .. }) = (t.message, t.detail) {
            dues.insert(m, due);
        }
    }
    let mut rows = Vec::new();
    let mut count = 0;
    for m in 0..outcome.messages.len() as MessageIndex {
        let s = outcome.messages.get(m);
        let ready = s.state == State::Ready;
        if !(ready || (s.state == State::Waiting && s.has_arrived())) {
            continue;
        }
        count += 1;
        if rows.len() < PANE_ROWS {
            rows.push(Waiting {
                m,
                ready,
                total_receives: s.total_receives,
                due: if ready { None } else { dues.get(&m).copied() },
            });
        }
    }
    (rows, count)
}

/// The messages in quarantine as of the outcome's moment, in message
/// order: the first [`PANE_ROWS`] and how many there are.
pub fn quarantine_pane(scenario: &Scenario, outcome: &Outcome) -> (Vec<Quarantined>, u64) {
    let mut rows = Vec::new();
    let mut count = 0;
    for m in 0..outcome.messages.len() as MessageIndex {
        let s = outcome.messages.get(m);
        if s.state != State::Quarantined {
            continue;
        }
        count += 1;
        if rows.len() < PANE_ROWS {
            rows.push(Quarantined {
                m,
                reason: s
                    .last_reason()
                    .map(|r| scenario.reasons[r as usize].clone()),
                total_receives: s.total_receives,
                age: s.quarantine_age(outcome.as_of).unwrap_or(0),
            });
        }
    }
    (rows, count)
}

/// The dead-letter headers message `m` carries in quarantine as of the
/// outcome's moment besides its reason, receives and age, as one line:
/// those of [`fixed_headers`] and, under a RabbitMQ profile, the
/// `x-death` entry of its latest dead-lettering.
pub fn headers(scenario: &Scenario, outcome: &Outcome, m: MessageIndex) -> String {
    let mut out = fixed_headers(scenario, outcome, m);
    if let Some(x) = XDeath::of_state(scenario, &outcome.messages.get(m)) {
        let _ = write!(out, ", {x}");
    }
    out
}

/// The headers of a dead letter that stay the same whenever it is read:
/// its queue and first delivery, and a log record's partition, offset,
/// event time and schema version (section 28.2).
pub fn fixed_headers(scenario: &Scenario, outcome: &Outcome, m: MessageIndex) -> String {
    let mut out = format!("queue {}", scenario.delivery.queue);
    if let Some(t) = outcome.first_delivery(scenario, m) {
        let _ = write!(out, ", first delivery {}", Dur(t));
    }
    if let Some(r) = outcome.dead_letters.records.get(&m) {
        let _ = write!(out, ", partition {}, offset {}", r.partition, r.offset);
        if let Some(t) = outcome.event_time(scenario, m) {
            let _ = write!(out, ", event time {}", Dur(t));
        }
    }
    if let Some(v) = scenario.schema_version(m) {
        let _ = write!(out, ", schema {v}");
    }
    out
}

/// What a transition counts, as the page's playback reads it: `1` a
/// delivery, `[2, delay]` a retry scheduled `delay` later, `[3, alarm]`
/// an alarm fired, `[4, alarm]` one cleared; nothing else is counted
/// (acked and the DLQ's depth are counted from the messages' rows).
pub fn step_count(detail: &Detail) -> Option<Json> {
    match *detail {
        Detail::Delivered { .. } => Some(json!(1)),
        Detail::RetryScheduled { delay, .. } => Some(json!([2, delay])),
        Detail::AlarmFired { alarm, .. } => Some(json!([3, alarm])),
        Detail::AlarmCleared { alarm } => Some(json!([4, alarm])),
        _ => None,
    }
}

/// What the page's playback needs besides the steps: the alarms' names
/// (the JSON report's transitions name them), and per message the
/// dead-letter headers it would carry whenever read (the `x-death` of each
/// dead-lettering is in the message's history).
pub fn lanes_data(scenario: &Scenario, outcome: &Outcome) -> Json {
    let headers: Vec<String> = (0..outcome.messages.len() as MessageIndex)
        .map(|m| fixed_headers(scenario, outcome, m))
        .collect();
    json!({
        "alarms": scenario.alarms.iter().map(|a| &a.name).collect::<Vec<_>>(),
        "headers": headers,
    })
}

/// Per census point (as [`crate::engine::Census::points`]), what the run
/// had done then, which alarms were firing (`null` for an alarm whose
/// changes by then were past those kept), and the panes' first rows when
/// they differ from the point before (`panes`: the source's rows
/// `[message, ready (1) or waiting for a retry (0), total receives, the
/// retry's due time or null]`, the quarantine's `[message, reason index or
/// null, total receives, quarantined at, x-death or null]`); and the
/// messages those rows name, each as `[id, dead-letter headers]` (those
/// that stay the same: [`fixed_headers`]).
pub fn sample_data(scenario: &Scenario, outcome: &Outcome) -> (Vec<Json>, Json) {
    let Some(census) = &outcome.census else {
        return (Vec::new(), Json::Null);
    };
    let mut named = std::collections::BTreeMap::new();
    let mut before: Option<&crate::engine::Panes> = None;
    let samples = (census.progress_points().into_iter())
        .zip(census.pane_points())
        .map(|((t, p), (_, panes))| {
            let alarms: Vec<Json> = (outcome.alarms.iter())
                .take(scenario.alarms.len())
                .map(|r| firing_at(r, t))
                .collect();
            let mut sample = json!({
                "deliveries": p.deliveries,
                "retry_delay_paid": p.retry_delay_paid,
                "alarms": alarms,
            });
            if before != Some(panes) {
                for r in panes.iter().flatten() {
                    named.entry(r.message).or_insert_with(|| {
                        json!([
                            scenario.message_id(r.message),
                            fixed_headers(scenario, outcome, r.message)
                        ])
                    });
                }
                let source: Vec<Json> = (panes[SOURCE_PANE].iter())
                    .map(|r| {
                        json!([
                            r.message,
                            u8::from(r.state == State::Ready),
                            r.total_receives,
                            r.due
                        ])
                    })
                    .collect();
                let quarantine: Vec<Json> = (panes[QUARANTINE_PANE].iter())
                    .map(|r| {
                        let x = (r.quarantined_at).and_then(|at| {
                            XDeath::of(scenario, r.last_class, r.quarantine_entries, at)
                        });
                        let x = x.map(|x| x.to_string());
                        json!([r.message, r.reason, r.total_receives, r.quarantined_at, x])
                    })
                    .collect();
                sample["panes"] = json!([source, quarantine]);
                before = Some(panes);
            }
            sample
        })
        .collect();
    let named: serde_json::Map<String, Json> =
        named.into_iter().map(|(m, v)| (m.to_string(), v)).collect();
    let pane_data = json!({ "messages": named, "reasons": scenario.reasons });
    (samples, pane_data)
}

/// Whether an alarm was firing as of `t` (every event at `t` included),
/// from its kept changes; `null` when changes were dropped and `t` lies
/// past the last one kept.
fn firing_at(r: &crate::engine::AlarmRecord, t: Millis) -> Json {
    let last_kept = r.changes.last().map_or(0, |c| c.time);
    if r.changes_dropped > 0 && t > last_kept {
        return Json::Null;
    }
    let change = r.changes.iter().rev().find(|c| c.time <= t);
    json!(change.is_some_and(|c| c.fired))
}

/// The counters and panes as `show --at` prints them after the snapshot.
pub fn text(scenario: &Scenario, outcome: &Outcome) -> String {
    let at = Dur(outcome.as_of);
    let c = counters(scenario, outcome);
    let mut out = format!("\ncounters as of {at}:\n");
    let mut lines: Vec<(String, String)> = vec![
        ("acked".into(), c.acked.to_string()),
        ("deliveries".into(), c.deliveries.to_string()),
        (
            "retry_delay_paid".into(),
            Dur(c.retry_delay_paid).to_string(),
        ),
        ("dlq_depth".into(), c.dlq_depth.to_string()),
    ];
    for (name, firing) in &c.alarms {
        let state = if *firing { "firing" } else { "quiet" };
        lines.push((format!("alarm {name}"), state.into()));
    }
    let w = lines.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in lines {
        let _ = writeln!(out, "{k:<w$}  {v}");
    }
    let (waiting, count) = source_pane(outcome);
    let _ = writeln!(out, "\nwaiting in the source as of {at}: {count}");
    let table: Vec<Vec<String>> = waiting
        .iter()
        .map(|r| {
            vec![
                scenario.message_id(r.m).into_owned(),
                if r.ready {
                    "ready"
                } else {
                    "waiting for retry"
                }
                .into(),
                r.total_receives.to_string(),
                r.due.map_or("-".into(), |d| Dur(d).to_string()),
            ]
        })
        .collect();
    if !table.is_empty() {
        out.push_str(&padded::table(
            &header(&["id", "state", "total rcv", "next due"]),
            &table,
        ));
    }
    more(&mut out, waiting.len(), count);
    let (quarantined, count) = quarantine_pane(scenario, outcome);
    let _ = writeln!(out, "\nin quarantine as of {at}: {count}");
    let table: Vec<Vec<String>> = quarantined
        .iter()
        .map(|r| {
            vec![
                scenario.message_id(r.m).into_owned(),
                r.reason.clone().unwrap_or_else(|| "-".into()),
                r.total_receives.to_string(),
                Dur(r.age).to_string(),
                headers(scenario, outcome, r.m),
            ]
        })
        .collect();
    if !table.is_empty() {
        let head = header(&["id", "reason", "total rcv", "age", "headers"]);
        out.push_str(&padded::table(&head, &table));
    }
    more(&mut out, quarantined.len(), count);
    out
}

/// "... and N more" under a pane that shows `shown` of `count`.
fn more(out: &mut String, shown: usize, count: u64) {
    if count > shown as u64 {
        let _ = writeln!(out, "... and {} more", count - shown as u64);
    }
}

fn header(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{HISTORY_MESSAGES, Recorder, run, run_until};

    /// What the steps count adds up, over every bundled run small enough
    /// for playback, to the run's deliveries and retry delay paid, and
    /// leaves each alarm in its state at the end; as of any time, to the
    /// run stopped then.
    #[test]
    fn the_steps_counts_add_up_to_the_run_at_every_time() {
        let mut checked = 0;
        for (path, s) in crate::scenario::bundled() {
            if s.message_count() > HISTORY_MESSAGES {
                continue;
            }
            let Ok(outcome) = run(&s, Recorder::All) else {
                continue;
            };
            if outcome.transitions_dropped > 0 {
                continue;
            }
            let end = outcome.totals.end_time;
            for t in [end / 3, end / 2, end] {
                let (mut deliveries, mut paid) = (0u64, 0);
                let mut alarms = vec![false; s.alarms.len()];
                for tr in outcome.transitions.iter().filter(|tr| tr.time <= t) {
                    match step_count(&tr.detail) {
                        Some(Json::Number(_)) => deliveries += 1,
                        Some(Json::Array(a)) => {
                            let (code, n) = (a[0].as_u64().unwrap(), a[1].as_u64().unwrap());
                            match code {
                                2 => paid += n,
                                3 | 4 => alarms[n as usize] = code == 3,
                                _ => unreachable!(),
                            }
                        }
                        _ => {}
                    }
                }
                let at = run_until(&s, Recorder::Off, t).unwrap();
                let c = counters(&s, &at);
                let name = path.display();
                assert_eq!(deliveries, c.deliveries, "{name} at {t}");
                assert_eq!(paid, c.retry_delay_paid, "{name} at {t}");
                let firing: Vec<bool> = c.alarms.iter().map(|a| a.1).collect();
                assert_eq!(alarms, firing, "{name} at {t}");
            }
            checked += 1;
        }
        assert!(checked >= 50, "{checked} runs checked");
    }

    /// Under a RabbitMQ profile, a reject and a delivery limit used up,
    /// both dead-lettered again after a redrive.
    const DEAD_LETTERED_TWICE: &str = "[delivery]\nprofile = \"rabbitmq-quorum\"\n\
        max_receives = 2\npermanent = \"quarantine\"\n\
        [[message]]\nid = \"bad\"\nfaults = [{ fail = { until = \"repair\" }, reason = \"schema\", class = \"permanent\" }]\n\
        [[message]]\nid = \"tired\"\nat = \"2500ms\"\nfaults = [{ fail = { first = 7 }, reason = \"timeout\" }]\n\
        [[operator]]\nwait = \"10s\"\naction = \"redrive_all\"\n";

    /// The `x-death` text of each message in quarantine as of `t`, from
    /// the run stopped then.
    fn x_deaths_at(s: &Scenario, t: Millis) -> Vec<Option<String>> {
        let at = run_until(s, Recorder::Off, t).unwrap();
        (0..at.messages.len() as MessageIndex)
            .map(|m| {
                let st = at.messages.get(m);
                (st.state == State::Quarantined)
                    .then(|| XDeath::of_state(s, &st))
                    .flatten()
                    .map(|x| x.to_string())
            })
            .collect()
    }

    /// The quarantine pane lists a RabbitMQ dead letter's `x-death` entry
    /// as of the time shown: `show --at`, an aggregate page's samples and
    /// a lane page's history each agree with the run stopped then (the
    /// entry of the latest dead-lettering, its reason and time).
    #[test]
    fn the_quarantine_pane_shows_the_x_death_of_its_time() {
        let (s, _) = crate::scenario::load_str("t.toml", DEAD_LETTERED_TWICE).unwrap();
        let at = run_until(&s, Recorder::All, 5_000).unwrap();
        insta::assert_snapshot!(super::text(&s, &at));
        let outcome = crate::engine::run_with_census(&s, Recorder::All).unwrap();
        let census = outcome.census.as_ref().unwrap();
        // The aggregate page's samples, each with its panes' rows when they
        // changed: a quarantine row is `[message, reason, receives,
        // quarantined at, x-death]`.
        let (samples, _) = sample_data(&s, &outcome);
        let mut seen = std::collections::BTreeSet::new();
        let mut rows = Json::Null;
        for ((t, _), sample) in census.pane_points().into_iter().zip(&samples) {
            if !sample["panes"].is_null() {
                rows = sample["panes"][QUARANTINE_PANE].clone();
            }
            let want = x_deaths_at(&s, t);
            for r in rows.as_array().unwrap() {
                let x = r[4].as_str().map(str::to_string);
                assert_eq!(x, want[r[0].as_u64().unwrap() as usize], "sample at {t}");
                seen.extend(x);
            }
        }
        let all = super::super::history::versions(&s, &outcome).unwrap();
        for t in [0, 2_499, 2_500, 5_000, 12_499, outcome.totals.end_time] {
            let want = x_deaths_at(&s, t);
            for (m, versions) in all.iter().enumerate() {
                let v = versions
                    .iter()
                    .rev()
                    .find(|v| v.time.is_none_or(|vt| vt <= t));
                assert_eq!(v.unwrap().x_death, want[m], "message {m} at {t}");
                seen.extend(want[m].clone());
            }
        }
        let seen: Vec<String> = seen.into_iter().collect();
        assert_eq!(
            seen,
            [
                "x-death delivery_limit, count 1, time 12s",
                "x-death delivery_limit, count 1, time 2s",
                "x-death rejected, count 1, time 0s",
                "x-death rejected, count 1, time 12s",
            ]
        );
    }

    /// `show --at` prints the counters, each alarm, and both panes with
    /// their first rows, due times and headers.
    #[test]
    fn the_text_lists_counters_alarms_and_both_panes() {
        let text = "[delivery]\nmax_receives = 2\nretry_interval = \"10s\"\n\
            [[message]]\nid = \"ok\"\n\
            [[message]]\nid = \"flaky\"\nfaults = [{ fail = { first = 1 } }]\n\
            [[message]]\nid = \"bad\"\nfaults = [{ fail = { until = \"repair\" }, reason = \"schema\", class = \"permanent\" }]\n\
            [[message]]\nid = \"late\"\nat = \"12s\"\nfaults = [{ fail = { first = 1 } }]\n\
            [[alarm]]\nname = \"dlq\"\nmetric = \"dlq_depth\"\nat_least = 1\n";
        let (s, _) = crate::scenario::load_str("t.toml", text).unwrap();
        let at = run_until(&s, Recorder::All, 15_000).unwrap();
        insta::assert_snapshot!(super::text(&s, &at));
    }
}
