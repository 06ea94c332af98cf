//! docs/model.md section 12 (workers, service time, ordering, limits as an
//! outcome, the measures) and decisions 16.3-16.12.

use super::*;

/// (time, kind, message id) of every transition.
fn trace(scenario: &Scenario, outcome: &Outcome) -> Vec<(Millis, EventKind, String)> {
    outcome
        .transitions
        .iter()
        .map(|t| {
            (
                t.time,
                t.detail.kind(),
                t.message
                    .map_or("operator".into(), |m| scenario.message_id(m).into_owned()),
            )
        })
        .collect()
}

fn delivered(scenario: &Scenario, outcome: &Outcome) -> Vec<(Millis, String)> {
    trace(scenario, outcome)
        .into_iter()
        .filter(|(_, k, _)| *k == EventKind::Delivered)
        .map(|(t, _, m)| (t, m))
        .collect()
}

fn at(t: Millis, id: &str) -> (Millis, String) {
    (t, id.to_string())
}

const TWO: &str = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n";

#[test]
fn s12_a_worker_takes_the_message_that_became_ready_first() {
    let (scenario, outcome) = sim(&format!(
        "{TWO}[workers]\ncount = 1\nservice_time = \"100ms\"\n\
         [[message]]\nid = \"late\"\nat = \"50ms\"\n[[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\n"
    ));
    // a and b arrive at 0 (file order), late at 50ms: a, b, late.
    assert_eq!(
        delivered(&scenario, &outcome),
        [at(0, "a"), at(100, "b"), at(200, "late")]
    );
    assert_eq!(msg(&scenario, &outcome, "a").acked_at(), Some(100));
    assert_eq!(wait(&scenario, &outcome, "late"), 150);
    assert_eq!(
        outcome.latency(&scenario, scenario.find_message("late").unwrap()),
        Some(250)
    );
    assert_eq!(outcome.totals.max_queue_wait, 150);
    assert_eq!(outcome.totals.worker_busy, 300);
    assert_eq!(outcome.totals.max_in_flight, 1);
    // After instant 0 b waits (a in flight), after 50ms late too.
    assert_eq!(outcome.totals.max_queue_depth, 2);
    assert_eq!(outcome.totals.drain_time, 300);
}

#[test]
fn s12_everything_is_decided_at_the_start_and_learnt_at_the_end() {
    let (scenario, outcome) = sim(&format!(
        "{TWO}[dedup]\nresult_retention = \"1s\"\n[workers]\ncount = 2\nservice_time = \"400ms\"\n\
         [[message]]\nid = \"u\"\nfaults = [{{ lose_ack = {{ first = 1 }} }}]\n"
    ));
    let u = scenario.find_message("u");
    let story: Vec<_> = trace(&scenario, &outcome)
        .into_iter()
        .map(|(t, k, _)| (t, k))
        .collect();
    use EventKind::*;
    assert_eq!(
        story,
        [
            (0, Delivered),
            (0, Committed),
            (400, AckLost),
            // The retry delay counts from the end.
            (400, RetryScheduled),
            (1_400, Delivered),
            // The stored result expires at 0 + 1s: 1.4s executes again.
            (1_400, Committed),
            (1_800, Acked),
        ]
    );
    assert_eq!(
        outcome
            .ledger
            .iter()
            .filter(|e| Some(e.message) == u)
            .count(),
        2
    );
}

#[test]
fn s12_a_message_is_in_flight_during_its_service() {
    let text = format!(
        "{TWO}[workers]\ncount = 1\nservice_time = \"1s\"\n[[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\n"
    );
    let (scenario, _) = crate::scenario::load_str("t.toml", &text).unwrap();
    let mid = run_until(&scenario, Recorder::Off, 500).unwrap();
    let state = |o: &Outcome, id| msg(&scenario, o, id).state;
    assert_eq!(state(&mid, "a"), State::InFlight);
    assert_eq!(state(&mid, "b"), State::Ready);
    let later = run_until(&scenario, Recorder::Off, 1_000).unwrap();
    assert_eq!(state(&later, "a"), State::Acked);
    assert_eq!(state(&later, "b"), State::InFlight);
}

#[test]
fn s12_a_failing_fault_holds_its_worker_for_takes() {
    let (scenario, outcome) = sim(&format!(
        "{TWO}[workers]\ncount = 1\nservice_time = \"10ms\"\n\
         [[message]]\nid = \"slow\"\nfaults = [{{ fail = {{ first = 1 }}, takes = \"5s\" }}]\n\
         [[message]]\nid = \"next\"\n"
    ));
    assert_eq!(
        delivered(&scenario, &outcome),
        [at(0, "slow"), at(5_000, "next"), at(6_000, "slow")]
    );
    assert_eq!(outcome.totals.worker_busy, 5_000 + 10 + 10);
    assert_eq!(wait(&scenario, &outcome, "next"), 5_000);
}

#[test]
fn d16_3_without_workers_takes_still_holds_the_message_in_flight() {
    let (scenario, outcome) = sim(&format!(
        "{TWO}[[message]]\nid = \"slow\"\nfaults = [{{ fail = {{ first = 1 }}, takes = \"2s\" }}]\n\
         [[message]]\nid = \"other\"\n"
    ));
    // Unlimited workers: other is not held up.
    assert_eq!(
        delivered(&scenario, &outcome),
        [at(0, "slow"), at(0, "other"), at(3_000, "slow")]
    );
    assert_eq!(outcome.totals.max_in_flight, 1);
    assert_eq!(outcome.totals.worker_busy, 2_000);
}

#[test]
fn s12_zero_service_ends_after_every_event_already_scheduled_then() {
    let (scenario, outcome) = sim(&format!(
        "{TWO}[workers]\ncount = 1\n[[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\n"
    ));
    use EventKind::*;
    let t: Vec<_> = trace(&scenario, &outcome)
        .into_iter()
        .map(|(_, k, m)| (k, m))
        .collect();
    let e = |k, m: &str| (k, m.to_string());
    // b's arrival was scheduled before a's end: a starts, b becomes
    // ready, a ends, then b is taken.
    assert_eq!(
        t,
        [
            e(Delivered, "a"),
            e(Committed, "a"),
            e(Acked, "a"),
            e(Delivered, "b"),
            e(Committed, "b"),
            e(Acked, "b")
        ]
    );
    // Read after the instant, nothing is in flight or waiting (16.6).
    assert_eq!(outcome.totals.max_in_flight, 0);
    assert_eq!(outcome.totals.max_queue_depth, 0);
    assert_eq!(wait(&scenario, &outcome, "b"), 0);
}

#[test]
fn s12_zero_service_with_enough_workers_gives_the_same_results() {
    let base = fixture(DELIVERY, BASE_EXTRA, BASE_OP);
    let (s1, o1) = sim(&base);
    let (s2, o2) = sim(&format!("{base}\n[workers]\ncount = 100\n"));
    assert!(!s1.flow.extended && s2.flow.extended);
    // The file without the flow keys neither lists nor computes latencies
    // or the calls' busiest window.
    assert_eq!(o1.totals.latency_max, NO_TIME);
    assert_eq!(o1.totals.peak_offered, 0);
    assert!(o2.totals.peak_offered > 0);
    let o2_totals = Totals {
        latency_p50: NO_TIME,
        latency_p95: NO_TIME,
        latency_p99: NO_TIME,
        latency_max: NO_TIME,
        peak_offered: 0,
        ..o2.totals
    };
    assert_eq!(o1.totals, o2_totals);
    assert_eq!(o1.messages, o2.messages);
    assert_eq!(o1.ledger, o2.ledger);
}

#[test]
fn s12_unlimited_receives_never_quarantine_by_budget() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"1s\"\n\
         [[message]]\nid = \"flaky\"\nfaults = [{ fail = { first = 40 } }]\n\
         [[message]]\nid = \"bad\"\nfaults = [{ fail = { first = 3 }, class = \"permanent\" }]\n",
    );
    let flaky = msg(&scenario, &outcome, "flaky");
    assert_eq!((flaky.state, flaky.total_receives), (State::Acked, 41));
    let (s2, o2) = sim(
        "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"1s\"\npermanent = \"quarantine\"\n\
         [[message]]\nid = \"bad\"\nfaults = [{ fail = { first = 3 }, class = \"permanent\" }]\n",
    );
    // Permanent routing still applies.
    let bad = msg(&s2, &o2, "bad");
    assert_eq!((bad.state, bad.total_receives), (State::Quarantined, 1));
}

const STOP: &str = "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"1s\"\nordering = \"fifo\"\n\
                    [[message]]\nid = \"poison\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
                    [[message]]\nid = \"behind\"\n[[message]]\nid = \"later\"\nat = \"1h\"\n";

#[test]
fn s12_a_stop_at_max_time_is_judged_with_what_is_pending() {
    let (scenario, outcome) = sim(&format!(
        "{STOP}[limits]\nmax_time = \"10s500ms\"\non_limit = \"stop\"\n"
    ));
    let t = &outcome.totals;
    assert_eq!(t.end_time, 10_500);
    assert_eq!(t.stopped_by, StoppedBy::MaxTime as u64);
    assert_eq!(t.pending, 3);
    // The poison's retries at 1s .. 10s ran; the one due at 11s did not.
    assert_eq!(msg(&scenario, &outcome, "poison").total_receives, 11);
    assert_eq!(msg(&scenario, &outcome, "poison").state, State::Waiting);
    // Head-of-line blocking: behind never got a delivery.
    let behind = msg(&scenario, &outcome, "behind");
    assert_eq!((behind.state, behind.total_receives), (State::Ready, 0));
    // A message that has not arrived is waiting, with no arrival.
    let later = msg(&scenario, &outcome, "later");
    assert_eq!(
        (later.state, arrived(&scenario, &outcome, "later")),
        (State::Waiting, None)
    );
    assert_eq!(t.latency_p50, NO_TIME);
}

#[test]
fn d16_9_a_stop_at_max_events_ends_at_the_last_processed_event() {
    // Events: poison and behind arrive at 0 (2), retries at 1s, 2s, ...
    let (_, outcome) = sim(&format!(
        "{STOP}[limits]\nmax_events = 5\non_limit = \"stop\"\n"
    ));
    let t = &outcome.totals;
    assert_eq!(t.stopped_by, StoppedBy::MaxEvents as u64);
    assert_eq!(t.deliveries, 4);
    assert_eq!(t.end_time, 3_000);
}

#[test]
fn d16_9_inspections_are_not_events() {
    // Two arrivals and one operator step: 2 events, so max_events = 2 is
    // enough although the inspection runs too.
    let (_, outcome) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[limits]\nmax_events = 2\n\
         [[operator]]\nwait = \"5s\"\naction = \"hold\"\n[[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\n",
    );
    assert_eq!(outcome.totals.end_time, 5_000);
}

#[test]
fn d16_8_worker_busy_counts_a_service_cut_off_by_a_stop() {
    let (_, outcome) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[workers]\ncount = 1\nservice_time = \"1m\"\n\
         [limits]\nmax_time = \"10s\"\non_limit = \"stop\"\n[[message]]\nid = \"a\"\n",
    );
    assert_eq!(outcome.totals.worker_busy, 60_000);
    assert_eq!(outcome.totals.pending, 1);
    assert_eq!(outcome.totals.max_in_flight, 1);
}

#[test]
fn s12_latency_percentiles_use_the_nearest_rank() {
    // Latencies 1s .. 10s: p50 = rank 5, p95 = rank ceil(9.5) = 10.
    let mut text = String::from(
        "[delivery]\nmax_receives = 20\nretry_interval = \"1s\"\nordering = \"none\"\n",
    );
    for j in 1..=10 {
        text.push_str(&format!(
            "[[message]]\nid = \"m{j}\"\nfaults = [{{ fail = {{ first = {j} }} }}]\n"
        ));
    }
    let (_, outcome) = sim(&text);
    let t = &outcome.totals;
    assert_eq!(
        (t.latency_p50, t.latency_p95, t.latency_p99, t.latency_max),
        (5_000, 10_000, 10_000, 10_000)
    );
}

#[test]
fn d16_10_with_service_time_the_drain_is_the_end_of_the_last_delivery() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[workers]\ncount = 1\nservice_time = \"3s\"\n\
         [[operator]]\nwait = \"10s\"\naction = \"redrive_all\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 } }]\n",
    );
    assert_eq!(outcome.drains[0], 3_000);
    // Inspected at 13s, redriven, delivered for 3s more.
    assert_eq!(msg(&scenario, &outcome, "a").acked_at(), Some(16_000));
    assert_eq!(outcome.totals.end_time, 16_000);
}

/// Decision 10.12: the envelope's first delivery is the first delivery
/// ever, which a message waiting for a worker makes after its arrival.
#[test]
fn d10_12_an_envelope_s_first_delivery_is_when_a_worker_took_it() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [workers]\ncount = 1\nservice_time = \"1s\"\n\
         [[message]]\nid = \"a\"\n\
         [[message]]\nid = \"b\"\nfaults = [{ fail = { first = 1 } }]\n");
    let b = scenario.find_message("b").unwrap();
    let field = |f| outcome.envelope_value(&scenario, b, f);
    assert_eq!(field(EnvelopeField::EventTime), Value::Time(0));
    assert_eq!(field(EnvelopeField::FirstDelivery), Value::Time(1_000));
    assert_eq!(field(EnvelopeField::QuarantinedAt), Value::Time(2_000));
}
