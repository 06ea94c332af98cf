//! Rules that no other test pins down: each test here fails if the rule it
//! names is broken.

use super::*;
use rand::SeedableRng;

/// Deliveries at one instant, by message id, in execution order.
fn delivered_at(scenario: &Scenario, outcome: &Outcome, t: Millis) -> Vec<String> {
    outcome
        .transitions
        .iter()
        .filter(|tr| tr.time == t && tr.detail.kind() == EventKind::Delivered)
        .map(|tr| scenario.message_id(tr.message.unwrap()).into_owned())
        .collect()
}

#[test]
fn ties_follow_the_scheduling_sequence_not_the_message_index() {
    // "b" (index 1) fails at 0s and 1s: its second retry, due at 3s, is
    // scheduled at 1s. "a" (index 0) arrives at 2s and fails: its retry, due
    // at 3s too, is scheduled at 2s, later. At 3s "b" goes first.
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 3\nbackoff = { base = \"1s\" }\n\
         [[message]]\nid = \"a\"\nat = \"2s\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[message]]\nid = \"b\"\nfaults = [{ fail = { first = 2 } }]\n",
    );
    assert_eq!(deliveries_of(&scenario, &outcome, "b"), [0, 1_000, 3_000]);
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [2_000, 3_000]);
    assert_eq!(delivered_at(&scenario, &outcome, 3_000), ["b", "a"]);
}

fn limited(max_time: &str, interval: &str) -> Result<Outcome, LimitReached> {
    let (scenario, _) = load_str(
        "t.toml",
        &format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"{interval}\"\n\
             [limits]\nmax_time = \"{max_time}\"\n\
             [[message]]\nid = \"p\"\nfaults = [{{ fail = {{ first = 1 }} }}]\n"
        ),
    )
    .unwrap();
    run(&scenario, Recorder::Off)
}

#[test]
fn an_event_exactly_at_max_time_runs_and_one_past_it_stops() {
    // The retry is due at 10s.
    let outcome = limited("10s", "10s").expect("an event at max_time runs");
    assert_eq!(outcome.totals.acked, 1);
    assert_eq!(outcome.totals.end_time, 10_000);
    let err = limited("9s999ms", "10s").unwrap_err();
    assert_eq!(err.limit, Limit::Time(9_999));
    // Stopped before the retry: the clock is still at the last event.
    assert_eq!(err.at, 0);
    assert_eq!(err.deliveries, 1);
    assert_eq!(err.pending, 1);
}

#[test]
fn a_run_that_jumps_far_past_max_time_stops_at_the_jump() {
    let err = limited("1m", "365d").unwrap_err();
    assert_eq!(err.limit, Limit::Time(60_000));
    assert_eq!(err.at, 0);
    assert_eq!(err.deliveries, 1);
}

#[test]
fn the_pending_count_of_a_limit_counts_every_due_delivery() {
    // Three messages that never succeed, one still to arrive, a generator
    // with three of its four messages still to arrive, and one whose
    // messages have all arrived.
    let (scenario, _) = load_str(
        "t.toml",
        "[delivery]\nmax_receives = 1000\nretry_interval = \"1s\"\n[limits]\nmax_events = 10\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"b\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"c\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"late\"\nat = \"1h\"\n\
         [[traffic]]\ncount = 4\nover = \"1h\"\nid_prefix = \"g-\"\n\
         [[traffic]]\ncount = 2\nover = \"1ms\"\nid_prefix = \"h-\"\n",
    )
    .unwrap();
    let err = run(&scenario, Recorder::Off).unwrap_err();
    assert_eq!(err.limit, Limit::Events(10));
    assert_eq!(err.deliveries, 10);
    // Deliveries at 0s (a, b, c, g-1, h-1, h-2), 1s (a, b, c), 2s (a);
    // the 11th would stop.
    assert_eq!(err.at, 2_000);
    // Retries of a, b and c; late; g-2, g-3 and g-4.
    assert_eq!(err.pending, 7);
}

#[test]
fn the_pending_count_of_a_limit_counts_messages_not_timers() {
    // One message in flight under a visibility timeout shorter than its
    // service time: the schedule holds its delivery's end, its timer and
    // another delivery's, but one message is pending, not four.
    let (scenario, _) = load_str(
        "t.toml",
        "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"1s\"\nvisibility_timeout = \"1s\"\n\
         [workers]\ncount = 1\nservice_time = \"5s\"\n[limits]\nmax_time = \"10s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    )
    .unwrap();
    let err = run(&scenario, Recorder::Off).unwrap_err();
    assert_eq!(err.limit, Limit::Time(10_000));
    assert_eq!(err.pending, 1);
}

#[test]
fn repair_lasts_across_later_operator_steps() {
    // Step 1 repairs but holds; step 2 redrives without repairing again:
    // the repair still holds, so poison and uncertain succeed.
    let (scenario, outcome) = sim(&fixture(
        DELIVERY,
        "",
        "[[operator]]\nrepair = true\naction = \"hold\"\n\
         [[operator]]\naction = \"redrive_all\"\n",
    ));
    assert_eq!(msg(&scenario, &outcome, "poison").state, State::Acked);
    assert_eq!(msg(&scenario, &outcome, "uncertain").state, State::Acked);
    assert_eq!(msg(&scenario, &outcome, "poison").cycle, 2);
    assert_eq!(outcome.totals.acked, 4);
}

#[test]
fn decorrelated_jitter_starts_again_from_base_each_cycle() {
    let (scenario, outcome) = sim("[scenario]\nseed = 7\n[delivery]\nmax_receives = 3\n\
         backoff = { base = \"1s\", jitter = \"decorrelated\" }\n\
         [[operator]]\naction = \"redrive_all\"\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n");
    let delays = retry_delays(&scenario, &outcome, "p");
    assert_eq!(delays.len(), 4, "two retries in each of two cycles");
    let draw = |reset: bool| {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let base = 1_000u64;
        let mut previous = base;
        let mut out = Vec::new();
        for cycle in 0..2 {
            if cycle == 1 && reset {
                previous = base;
            }
            for _ in 0..2 {
                previous = rng.random_range(base..=previous * 3);
                out.push(previous);
            }
        }
        out
    };
    assert_eq!(delays, draw(true));
    // The rule is visible with this seed: carrying the delay over differs.
    assert_ne!(delays, draw(false));
}

#[test]
fn redriving_an_expired_or_purged_message_is_skipped_with_its_state() {
    let (scenario, outcome) = sim(&fixture(
        DELIVERY,
        "[quarantine]\nretention = \"20s\"\n",
        "[[operator]]\nwait = \"5s\"\naction = \"purge\"\n\
         [[operator]]\nwait = \"30s\"\naction = \"redrive\"\nonly = [\"poison\"]\n",
    ));
    // poison was purged at step 1 (15s), before it could expire.
    let skipped: Vec<_> = outcome
        .transitions
        .iter()
        .filter_map(|t| match t.detail {
            Detail::RedriveSkipped { state } => Some((t.time, t.message, state)),
            _ => None,
        })
        .collect();
    assert_eq!(
        skipped,
        [(45_000, scenario.find_message("poison"), State::Purged)]
    );

    let (scenario, outcome) = sim(&fixture(
        DELIVERY,
        "[quarantine]\nretention = \"20s\"\n",
        "[[operator]]\nwait = \"30s\"\nrepair = true\naction = \"redrive\"\nonly = [\"poison\"]\n",
    ));
    // Inspected at 40s: poison has been quarantined 30s, so it expires first.
    assert_eq!(msg(&scenario, &outcome, "poison").state, State::Expired);
    assert!(outcome.transitions.iter().any(|t| {
        t.message == scenario.find_message("poison")
            && t.time == 40_000
            && t.detail
                == Detail::RedriveSkipped {
                    state: State::Expired,
                }
    }));
}

#[test]
fn the_ledger_records_the_cycle_and_key_of_each_effect() {
    // uncertain commits in cycle 1 (key "uncertain"), then, redriven with a
    // new identity after repair, in cycle 2 (key "uncertain~r1").
    let (scenario, outcome) = sim(&fixture(
        DELIVERY,
        "",
        "[[operator]]\nwait = \"30s\"\nrepair = true\nidentity = \"new\"\naction = \"redrive\"\nonly = [\"uncertain\"]\n",
    ));
    let uncertain = scenario.find_message("uncertain").unwrap();
    let effects: Vec<_> = outcome
        .ledger
        .iter()
        .filter(|e| e.message == uncertain)
        .map(|e| (e.time, e.cycle, scenario.key_name(e.key)))
        .collect();
    assert_eq!(
        effects,
        [
            (0, 1, "uncertain".to_string()),
            (10_000, 1, "uncertain".to_string()),
            (40_000, 2, "uncertain~r1".to_string()),
        ]
    );
    assert!(
        outcome
            .ledger
            .iter()
            .all(|e| e.intent == scenario.intent(e.message))
    );
}

#[test]
fn a_requarantined_message_carries_its_latest_quarantine_in_its_state() {
    // poison, redriven with a new identity but not repaired, fails its
    // second cycle: quarantined again at 40s + 10s, cycle 2, 2 receives in
    // the cycle, 4 in all, key poison~r1, the permanent failure's class.
    let (scenario, outcome) = sim(&fixture(
        DELIVERY,
        "",
        "[[operator]]\nwait = \"30s\"\nidentity = \"new\"\naction = \"redrive\"\nonly = [\"poison\"]\n",
    ));
    let poison = msg(&scenario, &outcome, "poison");
    assert_eq!(poison.state, State::Quarantined);
    assert_eq!(poison.last_quarantined_at(), Some(50_000));
    assert_eq!(poison.quarantine_age(60_000), Some(10_000));
    assert_eq!(poison.cycle, 2);
    assert_eq!(poison.cycle_receives, 2);
    assert_eq!(poison.total_receives, 4);
    assert_eq!(poison.quarantine_entries, 2);
    assert_eq!(poison.last_class(), Class::Permanent);
    let key = outcome.key(&scenario, scenario.find_message("poison").unwrap());
    assert_eq!(scenario.key_name(key), "poison~r1");
}

#[test]
fn the_engine_emits_each_state_after_every_change() {
    let (scenario, outcome) = sim(&fixture(DELIVERY, BASE_EXTRA, BASE_OP));
    // Every message's last emitted state is its final state.
    for (m, final_state) in outcome.messages.iter().enumerate() {
        let last = outcome
            .state_changes
            .iter()
            .rev()
            .find(|c| c.message as usize == m)
            .expect("every message changed");
        assert_eq!(last.state, final_state, "{}", scenario.message_id(m as u32));
    }
    // One change per delivery and one per redrive, plus one after each
    // transition of a message (playback's rows step by transition).
    let redrives = outcome
        .transitions
        .iter()
        .filter(|t| t.detail.kind() == EventKind::Redriven)
        .count() as u64;
    let of_a_message = outcome
        .transitions
        .iter()
        .filter(|t| t.message.is_some())
        .count() as u64;
    assert_eq!(
        outcome.state_changes.len() as u64,
        outcome.totals.deliveries + redrives + of_a_message
    );
    // Each change after a transition names the transitions before it.
    assert!(
        outcome
            .state_changes
            .windows(2)
            .all(|w| w[0].step <= w[1].step)
    );
    assert_eq!(
        outcome.state_changes.last().unwrap().step as usize,
        outcome.transitions.len()
    );
    assert!(
        outcome
            .state_changes
            .windows(2)
            .all(|w| w[0].time <= w[1].time)
    );
    // Nothing is emitted unless everything is recorded.
    let quiet = run(&scenario, Recorder::Only(Default::default())).unwrap();
    assert!(quiet.state_changes.is_empty());
}

#[test]
fn asking_for_the_next_event_after_the_end_changes_nothing() {
    // run_until asks once more whether anything is left after the last
    // event: that must not record another drain.
    for operator in ["", BASE_OP, "[[operator]]\naction = \"hold\"\n"] {
        let (scenario, _) = load_str("t.toml", &fixture(DELIVERY, BASE_EXTRA, operator)).unwrap();
        let whole = run(&scenario, Recorder::Off).unwrap();
        let until = run_until(&scenario, Recorder::Off, Millis::MAX).unwrap();
        assert!(until.finished);
        assert_eq!(until.drains, whole.drains, "{operator}");
        assert_eq!(until.totals, whole.totals, "{operator}");
        assert_eq!(whole.drains.len(), 1 + scenario.operators.len());
    }
}

#[test]
fn only_small_runs_keep_their_state_over_time() {
    let text = |count: u64| {
        format!(
            "{DELIVERY}[[traffic]]\ncount = {count}\nover = \"1m\"\nfaults = [{{ fail = {{ first = 1 }} }}]\n"
        )
    };
    let (small, _) = load_str("t.toml", &text(HISTORY_MESSAGES)).unwrap();
    let kept = run(&small, Recorder::All).unwrap();
    // Two deliveries per message, and one change after each of its six
    // transitions (delivered, failed, retry scheduled, delivered,
    // committed, acked).
    assert_eq!(kept.state_changes.len() as u64, 8 * HISTORY_MESSAGES);
    let (large, _) = load_str("t.toml", &text(HISTORY_MESSAGES + 1)).unwrap();
    let outcome = run(&large, Recorder::All).unwrap();
    assert!(outcome.state_changes.is_empty());
    // One more message: delivered, failed, retry scheduled, delivered,
    // committed, acked.
    assert_eq!(
        outcome.transitions.len() as u64,
        kept.transitions.len() as u64 + 6
    );
}

#[test]
fn a_long_fault_list_decides_as_its_first_applying_faults_do() {
    // Padded with faults that can never apply first (a `first = n` after
    // a larger n of its kind, a second repair fault), a list of more than
    // eight (indexed, not scanned) gives the run of the short list: in the
    // compact path and in the tracked one, where a crash after an applying
    // lose_ack does not apply (decision 22.2).
    let run = |delivery: &str, faults: &[&str]| {
        let text = format!(
            "[delivery]\nmax_receives = 6\nretry_interval = \"1s\"\n{delivery}\
             [[message]]\nid = \"m\"\nfaults = [{}]\n",
            faults.join(", ")
        );
        let (scenario, outcome) = sim(&text);
        (story(&scenario, &outcome, "m"), outcome.totals)
    };
    let padding = [
        "{ fail = { first = 1 } }",
        "{ lose_ack = { first = 2 } }",
        "{ crash = { first = 1 }, at = \"before_effect\" }",
    ];
    let padded = |short: &[&'static str], kinds: usize| {
        let mut all = short.to_vec();
        for _ in 0..10 {
            all.extend(&padding[..kinds]);
        }
        all
    };
    let compact = ["{ fail = { first = 2 } }", "{ lose_ack = { first = 3 } }"];
    let (short, long) = (run("", &compact), run("", &padded(&compact, 2)));
    assert_eq!(short, long);
    assert_eq!(short.1.deliveries, 4);
    assert_eq!(short.1.crashes, 0);
    let tracked = [
        "{ lose_ack = { first = 2 } }",
        "{ crash = { first = 3 }, at = \"after_effect\" }",
        "{ fail = { first = 4 } }",
    ];
    let vt = "visibility_timeout = \"30s\"\n";
    let (short, long) = (run(vt, &tracked), run(vt, &padded(&tracked, 3)));
    assert_eq!(short, long);
    assert_eq!(short.1.crashes, 1);
}

#[test]
fn values_past_the_compact_record_read_back_exactly() {
    // Each message's state is kept in 8 bytes while it fits (times under
    // 2^32 ms, about 49.7 days; receives and effects under 256); past
    // that it moves aside whole. Either way it reads back exactly.
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"1ms\"\n\
         [[message]]\nid = \"late\"\nat = \"60d\"\n\
         [[message]]\nid = \"late-failure\"\nat = \"60d\"\n\
         faults = [{ fail = { first = 1 }, reason = \"r\", class = \"permanent\" }]\n\
         [[message]]\nid = \"loop\"\nfaults = [{ fail = { first = 70000 } }]\n\
         [[message]]\nid = \"short-loop\"\nfaults = [{ fail = { first = 300 } }]\n",
    );
    let day: Millis = 86_400_000;
    let late = msg(&scenario, &outcome, "late");
    assert_eq!(late.acked_at(), Some(60 * day));
    assert_eq!((late.total_receives, late.effects), (1, 1));
    let failed = msg(&scenario, &outcome, "late-failure");
    assert_eq!(failed.acked_at(), Some(60 * day + 1));
    assert_eq!(reason(&scenario, failed), "r");
    assert_eq!(failed.last_class(), Class::Permanent);
    let looped = msg(&scenario, &outcome, "loop");
    assert_eq!(looped.state, State::Acked);
    assert_eq!(
        (looped.cycle_receives, looped.total_receives),
        (70_001, 70_001)
    );
    assert_eq!(looped.acked_at(), Some(70_000));
    let short = msg(&scenario, &outcome, "short-loop");
    assert_eq!((short.total_receives, short.acked_at()), (301, Some(300)));
    assert_eq!(outcome.totals.deliveries, 70_004 + 301);
    assert_eq!(outcome.messages.in_side_table(), 4);
}
