//! docs/model.md section 13 (a downstream with limited capacity) and
//! decisions 16.4-16.5.

use super::*;

#[test]
fn s13_a_full_window_throttles_as_a_transient_failure() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n[downstream]\nlimit = 2\n\
         [[traffic]]\ncount = 5\nover = \"1s\"\nid_prefix = \"m\"\n",
    );
    // Arrivals at 0, 200 .. 800ms: in [0s, 1s) m1 and m2 are accepted,
    // m3-m5 throttled; their retries at 1.4s, 1.6s, 1.8s: m3 and m4
    // accepted, m5 throttled again and accepted at 2.8s.
    let t = &outcome.totals;
    assert_eq!(t.acked, 5);
    assert_eq!(t.throttled, 4);
    assert_eq!(t.calls_offered, 9);
    assert_eq!(t.calls_accepted, 5);
    assert_eq!(t.peak_offered, 5);
    let m3 = msg(&scenario, &outcome, "m3");
    assert_eq!(
        scenario.reasons[m3.last_reason().unwrap() as usize],
        "throttled"
    );
    assert_eq!(m3.last_class(), Class::Transient);
}

#[test]
fn s13_the_five_steps_in_order() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[dedup]\nresult_retention = \"1h\"\n\
         [downstream]\nlimit = 1\nper = \"10s\"\n[[outage]]\nfrom = \"5s\"\nduration = \"1s\"\n\
         [[message]]\nid = \"fault\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[message]]\nid = \"first\"\n\
         [[message]]\nid = \"hit\"\nkey = \"first\"\n\
         [[message]]\nid = \"full\"\n\
         [[message]]\nid = \"down\"\nat = \"5s\"\n",
    );
    let reason = |id| {
        msg(&scenario, &outcome, id)
            .last_reason()
            .map(|r| scenario.reasons[r as usize].as_str())
    };
    // 1. A message fault: no call. 3. A dedup hit: no call. 4. The window
    // [0s, 10s) already accepted 1: throttled. 2. An outage: offered.
    assert_eq!(reason("fault"), Some("handler error"));
    assert_eq!(msg(&scenario, &outcome, "first").state, State::Acked);
    assert_eq!(msg(&scenario, &outcome, "hit").dedup_hits, 1);
    assert_eq!(reason("full"), Some("throttled"));
    assert_eq!(reason("down"), Some("downstream unavailable"));
    let t = &outcome.totals;
    assert_eq!((t.calls_offered, t.calls_accepted, t.throttled), (3, 1, 1));
}

#[test]
fn d16_5_calls_are_counted_without_a_downstream() {
    let file = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[traffic]]\ncount = 10\nover = \"2s\"\nid_prefix = \"m\"\n";
    // A file that expects, asks or sweeps a measure of the calls gets the
    // busiest window too.
    for asks in [
        "[expect]\npeak_offered = 5\n",
        "[expect]\nthrottled = 0\n",
        "[[question]]\nask = \"How many at once?\"\nanswer = \"peak_offered\"\n",
    ] {
        let (_, outcome) = sim(&format!("{file}{asks}"));
        let t = &outcome.totals;
        assert_eq!(
            (t.calls_offered, t.calls_accepted, t.throttled),
            (10, 10, 0),
            "{asks}"
        );
        assert_eq!(t.peak_offered, 5, "{asks}");
        assert_eq!(outcome.calls.peak_window, Some(0), "{asks}");
        assert_eq!(outcome.calls.rows.len(), 2, "{asks}");
    }
    // One that names none counts the calls, not their windows (nothing
    // would show them).
    let (_, outcome) = sim(file);
    let t = &outcome.totals;
    assert_eq!(
        (t.calls_offered, t.calls_accepted, t.peak_offered),
        (10, 10, 0)
    );
    assert_eq!(outcome.calls.rows, []);
}

#[test]
fn d16_4_outage_and_throttled_calls_take_the_service_time() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n[workers]\ncount = 5\nservice_time = \"300ms\"\n\
         [downstream]\nlimit = 1\n[[outage]]\nfrom = \"0s\"\nduration = \"1ms\"\n\
         [[message]]\nid = \"down\"\n[[message]]\nid = \"ok\"\nat = \"1ms\"\n[[message]]\nid = \"full\"\nat = \"1ms\"\n",
    );
    let story = |id| story(&scenario, &outcome, id);
    use EventKind::*;
    assert_eq!(
        story("down")[..3],
        [(0, Delivered), (300, Failed), (300, RetryScheduled)]
    );
    assert_eq!(
        story("full")[..3],
        [(1, Delivered), (301, Failed), (301, RetryScheduled)]
    );
    assert_eq!(outcome.totals.worker_busy, 300 * 5);
}

#[test]
fn d14_4_a_percentile_expected_or_asked_is_computed_without_the_flow_keys() {
    // Arrivals at 0, 250, 500 and 750ms; the outage [0, 500ms) fails the
    // first two, acked 1s later: latencies 1s, 1s, 0, 0.
    let file = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
         [[outage]]\nfrom = \"0s\"\nduration = \"500ms\"\n\
         [[traffic]]\ncount = 4\nover = \"1s\"\n";
    let (_, outcome) = sim(file);
    assert_eq!(outcome.totals.latency_max, crate::model::NO_TIME);
    for asks in [
        "[expect]\nlatency_max = \"1s\"\n",
        "[[question]]\nask = \"How slow?\"\nanswer = \"latency_p50\"\n",
    ] {
        let (_, outcome) = sim(&format!("{file}{asks}"));
        let t = &outcome.totals;
        assert_eq!((t.latency_p50, t.latency_max), (0, 1_000), "{asks}");
    }
}
