//! Limits, snapshots at a time, and the census.

use super::*;

// ---- Limits and snapshots ----

#[test]
fn a_run_that_cannot_drain_stops_at_a_limit() {
    let (scenario, _) = load_str(
        "t.toml",
        "[delivery]\nmax_receives = 4000000000\nretry_interval = \"1s\"\n[limits]\nmax_events = 1000\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    )
    .unwrap();
    let err = run(&scenario, Recorder::Off).unwrap_err();
    assert_eq!(err.limit, Limit::Events(1000));
    assert_eq!(err.deliveries, 1000);
}

#[test]
fn a_run_past_max_time_stops() {
    let (scenario, _) = load_str(
        "t.toml",
        "[delivery]\nmax_receives = 100\nretry_interval = \"1h\"\n[limits]\nmax_time = \"10h\"\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    )
    .unwrap();
    let err = run(&scenario, Recorder::Off).unwrap_err();
    assert_eq!(err.limit, Limit::Time(36_000_000));
}

#[test]
fn a_snapshot_at_t_includes_every_event_at_t() {
    let (scenario, _) = load_str("t.toml", &fixture(DELIVERY, BASE_EXTRA, BASE_OP)).unwrap();
    let outcome = run_until(&scenario, Recorder::All, 10_000).unwrap();
    assert!(!outcome.finished);
    assert_eq!(outcome.as_of, 10_000);
    assert_eq!(outcome.totals.quarantine_entries, 3);
    assert!(outcome.transitions.iter().all(|t| t.time <= 10_000));
    let outcome = run_until(&scenario, Recorder::All, 9_999).unwrap();
    assert_eq!(outcome.totals.quarantine_entries, 0);
    let p = outcome
        .messages
        .get(scenario.find_message("poison").unwrap());
    // Its retry is due at 10s: it waits.
    assert_eq!(p.state, State::Waiting);
}

#[test]
fn a_run_keeps_at_most_a_million_transitions_and_counts_the_rest() {
    // One message failing 1,100,000 times: 3.3 million transitions, and
    // 1.1 million state changes.
    let scenario = one_message(1_100_000, "fail");
    let outcome = run(&scenario, Recorder::All).unwrap();
    assert_eq!(outcome.transitions.len(), TRANSITIONS_KEPT);
    assert_eq!(
        outcome.transitions_dropped,
        3_300_000 - TRANSITIONS_KEPT as u64
    );
    // The history would be incomplete: it is dropped whole.
    assert!(!outcome.history_complete);
    assert!(outcome.state_changes.is_empty());
    assert_eq!(outcome.totals.deliveries, 1_100_000);
}

#[test]
fn a_run_keeps_at_most_a_million_effects_in_its_ledger() {
    // One message whose ack is lost 1,000,003 times: as many effects,
    // every one counted, the first million kept (by a kept run and by
    // one that replays its transcript, which keeps its ledger).
    let scenario = one_message(1_000_003, "lose_ack");
    let outcome = run(&scenario, Recorder::Replayed).unwrap();
    assert_eq!(outcome.totals.effects, 1_000_003);
    assert_eq!(outcome.ledger.len(), TRANSITIONS_KEPT);
    assert_eq!(outcome.ledger.last().map(|e| e.time), Some(999_999));
}

#[test]
fn recording_does_not_change_the_run() {
    let (scenario, _) = load_str("t.toml", &fixture(DELIVERY, BASE_EXTRA, BASE_OP)).unwrap();
    let all = run(&scenario, Recorder::All).unwrap();
    let off = run(&scenario, Recorder::Off).unwrap();
    assert_eq!(all.totals, off.totals);
    assert_eq!(all.messages, off.messages);
    assert!(off.transitions.is_empty());
}

fn state_counts(outcome: &Outcome) -> [u64; STATE_COUNT] {
    let mut c = [0; STATE_COUNT];
    for message in outcome.messages.iter() {
        c[message.state as usize] += 1;
    }
    c
}

#[test]
fn the_census_matches_a_snapshot_at_every_sample() {
    // Long enough (hours) that the census halves its resolution many times.
    let text = format!(
        "{}{}[[operator]]\nwait = \"2h\"\naction = \"redrive_all\"\nrepair = true\n\
         [[operator]]\nwait = \"1h\"\naction = \"purge\"\n\
         [[traffic]]\ncount = 300\nover = \"3h\"\nid_prefix = \"t-\"\n\
         faults = [{{ fail = {{ first = 1 }} }}]\n\
         [[outage]]\nfrom = \"1h\"\nduration = \"20m\"\n",
        DELIVERY, BASE_EXTRA
    );
    let (scenario, _) = load_str("t.toml", &fixture("", &text, "")).unwrap();
    let outcome = run_with_census(&scenario, Recorder::Off).unwrap();
    let c = outcome.census.as_ref().expect("census taken");
    assert!(c.step >= 10_000, "step {} did not grow", c.step);
    assert!(
        CENSUS_STEPS.contains(&c.step),
        "step {} is not readable",
        c.step
    );
    assert!(c.samples.len() < CENSUS_SAMPLES);
    assert!(c.samples.len() >= CENSUS_SAMPLES / 5);
    assert_eq!(c.end, outcome.totals.end_time);
    assert_eq!(c.last, state_counts(&outcome));
    assert_eq!(
        outcome.totals,
        run(&scenario, Recorder::Off).unwrap().totals
    );
    for k in (0..c.samples.len()).step_by(7) {
        let t = k as Millis * c.step;
        let at = run_until(&scenario, Recorder::Off, t).unwrap();
        assert_eq!(c.samples[k], state_counts(&at), "sample {k} at {t} ms");
        let not_arrived = at.messages.iter().filter(|s| !s.has_arrived()).count() as u64;
        assert_eq!(c.not_arrived[k], not_arrived, "sample {k} at {t} ms");
        if t + c.step / 2 < c.end {
            assert_eq!(c.at(t + c.step / 2), c.samples[k]);
            assert_eq!(c.sample_time(t + c.step / 2), t);
        }
    }
    let total: u64 = c.samples[0].iter().sum();
    assert_eq!(total, outcome.totals.messages);
    // Traffic over 3 h: everything waits at first, nothing by the end,
    // and the messages that have not arrived fall as the traffic comes.
    assert_eq!(c.not_arrived[0], 300 - 1);
    assert_eq!(c.last_not_arrived, 0);
    assert_eq!(c.not_arrived.len(), c.samples.len());
    assert!(c.not_arrived.windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn census_steps_are_a_chain_of_multiples() {
    for w in CENSUS_STEPS.windows(2) {
        assert_eq!(w[1] % w[0], 0, "{} is not a multiple of {}", w[1], w[0]);
    }
    assert_eq!(census_step_after(86_400_000), 172_800_000);
    assert_eq!(census_step_after(3), 10);
}

#[test]
fn census_counts_are_indexed_by_state_all() {
    for (i, state) in State::ALL.into_iter().enumerate() {
        assert_eq!(state as usize, i, "{}", state.as_str());
    }
}

#[test]
fn a_run_to_a_time_past_a_stop_ends_at_the_stop() {
    // max_time 5s under on_limit = "stop": stepping to 60s stops at 5s,
    // as the whole run does, instead of stepping at the limit for ever.
    let text = "[delivery]\nmax_receives = 3\nretry_interval = \"2s\"\n\
                [limits]\nmax_time = \"5s\"\non_limit = \"stop\"\n\
                [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
                [[message]]\nid = \"late\"\nat = \"10s\"\n";
    let (scenario, outcome) = sim(text);
    let at = run_until(&scenario, Recorder::All, 60_000).unwrap();
    assert_eq!(at.totals.end_time, outcome.totals.end_time);
    assert_eq!(at.totals.stopped_by, outcome.totals.stopped_by);
    assert_eq!(at.transitions.len(), outcome.transitions.len());
}

/// Each census sample keeps what the run had done then (deliveries, retry
/// delay paid) and the first messages of the two panes (the source's:
/// ready or waiting for a retry; the quarantine's), in message order, as
/// the run stopped at that time has them: retries, an outage, an
/// operator who redrives and purges, and a resolution that halves. A row
/// waiting for a retry has the retry's due time (the last one scheduled,
/// as the transcript tells it); every row its last failure's class and
/// its entries into quarantine so far.
#[test]
fn each_sample_keeps_the_progress_and_the_panes_first_rows_of_its_time() {
    use crate::engine::{PANE_SAMPLE_ROWS, QUARANTINE_PANE, SOURCE_PANE};
    let text = format!(
        "{}{}[[operator]]\nwait = \"2h\"\naction = \"redrive_all\"\nrepair = true\n\
         [[operator]]\nwait = \"1h\"\naction = \"purge\"\n\
         [[traffic]]\ncount = 300\nover = \"3h\"\nid_prefix = \"t-\"\n\
         faults = [{{ fail = {{ first = 1 }} }}]\n\
         [[traffic]]\ncount = 40\nover = \"2h\"\nid_prefix = \"bad-\"\n\
         faults = [{{ fail = {{ until = \"repair\" }} }}]\n\
         [[outage]]\nfrom = \"1h\"\nduration = \"20m\"\n",
        DELIVERY, BASE_EXTRA
    );
    let (scenario, _) = load_str("t.toml", &fixture("", &text, "")).unwrap();
    let outcome = run_with_census(&scenario, Recorder::Off).unwrap();
    let c = outcome.census.as_ref().expect("census taken");
    assert_eq!(c.progress.len(), c.samples.len());
    assert_eq!(c.panes.len(), c.samples.len());
    let firsts = |at: &Outcome, keep: &dyn Fn(&crate::engine::MessageState) -> bool| {
        (0..at.messages.len() as u32)
            .filter(|&m| keep(&at.messages.get(m)))
            .take(PANE_SAMPLE_ROWS)
            .collect::<Vec<u32>>()
    };
    let mut seen = [false; 3];
    for k in (0..c.samples.len()).step_by(3) {
        let t = k as Millis * c.step;
        let at = run_until(&scenario, Recorder::All, t).unwrap();
        let mut dues = std::collections::BTreeMap::new();
        for tr in &at.transitions {
            if let (Some(m), crate::engine::Detail::RetryScheduled { due, .. }) =
                (tr.message, tr.detail)
            {
                dues.insert(m, due);
            }
        }
        let p = c.progress[k];
        assert_eq!(p.deliveries, at.totals.deliveries, "at {t}");
        assert_eq!(p.retry_delay_paid, at.totals.retry_delay_paid, "at {t}");
        let source = firsts(&at, &|s| {
            s.state == State::Ready || (s.state == State::Waiting && s.has_arrived())
        });
        let quarantine = firsts(&at, &|s| s.state == State::Quarantined);
        let rows = &c.panes[k];
        let ids = |pane: usize| rows[pane].iter().map(|r| r.message).collect::<Vec<u32>>();
        assert_eq!(ids(SOURCE_PANE), source, "the source at {t}");
        assert_eq!(ids(QUARANTINE_PANE), quarantine, "the quarantine at {t}");
        for r in rows.iter().flatten() {
            let s = at.messages.get(r.message);
            let due = (s.state == State::Waiting).then(|| dues.get(&r.message).copied());
            assert_eq!(
                (r.state, r.total_receives, r.reason, r.quarantined_at, r.due),
                (
                    s.state,
                    s.total_receives,
                    s.last_reason(),
                    s.last_quarantined_at(),
                    due.flatten()
                ),
                "{} at {t}",
                r.message
            );
            assert_eq!(
                (r.last_class, r.quarantine_entries),
                (s.last_class(), s.quarantine_entries),
                "{} at {t}",
                r.message
            );
            seen[2] |= r.due.is_some();
        }
        seen[0] |= !source.is_empty();
        seen[1] |= quarantine.len() == PANE_SAMPLE_ROWS;
    }
    assert_eq!(
        seen,
        [true, true, true],
        "both panes were read while full, a retry's due time with them"
    );
    assert_eq!(c.last_progress.deliveries, outcome.totals.deliveries);
}
