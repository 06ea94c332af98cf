//! One test per rule of docs/model.md section 24 and decisions 26.5-26.7,
//! 26.13-26.14 and 27.18-27.28: one write to several sinks.

use super::*;

fn value(outcome: &Outcome, k: u32) -> i64 {
    outcome.sink_value(k, SinkField::Value)
}

fn sinkf(outcome: &Outcome, k: u32, field: SinkField) -> i64 {
    outcome.sink_value(k, field)
}

const RETRY: &str = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n";

#[test]
fn s24_direct_calls_in_order_and_the_first_failure_ends_the_write() {
    let (scenario, outcome) = sim(&format!(
        "{RETRY}[[sink]]\nname = \"a\"\nkind = \"increment\"\nlatency = \"10ms\"\n\
         [[sink]]\nname = \"b\"\nkind = \"increment\"\nfaults = [{{ fail = {{ first = 1 }} }}]\n\
         [[sink]]\nname = \"c\"\nkind = \"increment\"\n\
         [[message]]\nid = \"p\"\n"
    ));
    // a at 0s, b fails at 10ms, c never called; the delivery fails at
    // 10ms; the retry at 1s10ms calls all three again.
    assert_eq!(
        [value(&outcome, 0), value(&outcome, 1), value(&outcome, 2)],
        [2, 1, 1]
    );
    assert_eq!(sinkf(&outcome, 0, SinkField::VisibleDuplicates), 1);
    assert_eq!(
        outcome.totals.effects, 2,
        "the ledger records each write started"
    );
    let p = msg(&scenario, &outcome, "p");
    assert_eq!(p.total_receives, 2);
    assert_eq!(p.acked_at(), Some(1_020));
    // Write 1: a alone from 0s to the end (1s20ms); write 2: a alone
    // from 1s10ms to 1s20ms.
    assert_eq!(outcome.totals.partial_visible, 1_020 + 10);
    assert!(matches!(
        outcome.write_notes[0],
        crate::engine::WriteNote::Failed {
            at: 10,
            sink: 1,
            ..
        }
    ));
    assert_eq!(
        scenario.reasons[p.last_reason().unwrap() as usize],
        "sink error"
    );
}

#[test]
fn s24_direct_stores_the_result_only_when_every_call_succeeded() {
    let text = |faults: &str| {
        format!(
            "{RETRY}[dedup]\nresult_retention = \"1h\"\n\
             [[sink]]\nname = \"a\"\nkind = \"increment\"\n\
             [[sink]]\nname = \"b\"\nkind = \"increment\"\nfaults = [{faults}]\n\
             [[message]]\nid = \"p\"\nfaults = [{{ lose_ack = {{ first = 1 }} }}]\n"
        )
    };
    // Every call succeeds: the lost ack's redelivery is a hit.
    let (_, outcome) = sim(&text(""));
    assert_eq!((outcome.totals.effects, outcome.totals.dedup_hits), (1, 1));
    // b's call fails: nothing stored, the retry writes again.
    let (_, outcome) = sim(&text("{ fail = { first = 1 } }"));
    assert_eq!((outcome.totals.effects, outcome.totals.dedup_hits), (2, 0));
    assert_eq!(value(&outcome, 0), 2);
}

#[test]
fn s24_a_lost_reply_duplicates_an_increment_and_not_an_upsert() {
    let (_, outcome) = sim(&format!(
        "{RETRY}[[sink]]\nname = \"count\"\nkind = \"increment\"\n\
         [[sink]]\nname = \"rows\"\nkind = \"upsert\"\nfaults = [{{ lose_reply = {{ first = 1 }} }}]\n\
         [[message]]\nid = \"p\"\n"
    ));
    assert_eq!(value(&outcome, 0), 2);
    assert_eq!(sinkf(&outcome, 0, SinkField::VisibleDuplicates), 1);
    assert_eq!(value(&outcome, 1), 1);
    assert_eq!(sinkf(&outcome, 1, SinkField::VisibleDuplicates), 0);
}

#[test]
fn s24_a_sink_outage_fails_every_call_inside_it() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 2\nretry_interval = \"10s\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\noutage = { from = \"0s\", duration = \"5s\" }\n\
         [[message]]\nid = \"p\"\n");
    let p = msg(&scenario, &outcome, "p");
    assert_eq!((p.total_receives, p.acked_at()), (2, Some(10_000)));
    assert_eq!(value(&outcome, 0), 1);
    assert!(matches!(
        outcome.write_notes[0],
        crate::engine::WriteNote::Failed { reason, class: Class::Transient, .. }
            if scenario.reasons[reason as usize] == "sink unavailable"
    ));
}

#[test]
fn s24_outbox_relays_each_row_to_each_sink_and_dead_letters_per_sink() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"outbox\"\nrelay_retry = \"1s\"\nrelay_attempts = 3\n\
         [[sink]]\nname = \"lake\"\nkind = \"upsert\"\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"100ms\"\n\
         faults = [{ fail = { intents = [\"bad\"] }, reason = \"poisoned row\", class = \"permanent\" }]\n\
         [[sink]]\nname = \"metrics\"\nkind = \"increment\"\nfaults = [{ lose_reply = { first = 1 } }]\n\
         [[message]]\nid = \"good\"\n[[message]]\nid = \"bad\"\n");
    assert_eq!(
        outcome.totals.acked, 2,
        "the delivery acks once its row is written"
    );
    assert_eq!(outcome.totals.outbox_dead_letters, 1);
    assert_eq!(value(&outcome, 0), 2, "the lake converges");
    assert_eq!(value(&outcome, 1), 1);
    assert_eq!(sinkf(&outcome, 1, SinkField::Missing), 1);
    // Each row's first metrics reply is lost: retried after 1s, applied twice.
    assert_eq!(value(&outcome, 2), 4);
    assert_eq!(sinkf(&outcome, 2, SinkField::VisibleDuplicates), 2);
    assert_eq!(sinkf(&outcome, 2, SinkField::MaxLag), 1_000);
    assert_eq!(sinkf(&outcome, 1, SinkField::MaxLag), 0);
    // bad's olap calls: 0s, 1s100ms, 2s200ms: the run ends when the
    // last one's reply is heard (27.36).
    assert_eq!(outcome.totals.end_time, 2_300);
    let target = Target::Sink(2, SinkField::MaxLag);
    assert_eq!(outcome.value(&scenario, &target), Value::Time(1_000));
}

#[test]
fn s24_two_phase_aborts_everywhere_when_a_prepare_fails() {
    let (scenario, outcome) = sim(&format!(
        "{RETRY}[write]\nstrategy = \"two_phase\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\nprepare = true\nlatency = \"10ms\"\n\
         [[sink]]\nname = \"b\"\nkind = \"increment\"\nprepare = true\nlatency = \"30ms\"\n\
         faults = [{{ fail = {{ first = 1 }} }}]\n\
         [[message]]\nid = \"p\"\n"
    ));
    // Attempt 1 aborts at 30ms (a held its lock 30ms); the retry at
    // 1s30ms commits at 1s60ms, both locks held 30ms.
    assert_eq!([value(&outcome, 0), value(&outcome, 1)], [1, 1]);
    assert_eq!(msg(&scenario, &outcome, "p").acked_at(), Some(1_060));
    assert_eq!(outcome.totals.lock_held, 30 + 2 * 30);
    assert_eq!(outcome.totals.max_lock, 30);
    assert_eq!(outcome.totals.max_in_doubt, 1);
    assert_eq!(
        outcome.totals.partial_visible, 0,
        "both sinks apply at the decision"
    );
}

#[test]
fn s24_a_coordinator_crash_holds_every_lock_and_later_writes_to_the_key_wait() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"two_phase\"\n\
         [coordinator]\ncrash = { first = 1 }\nrecovers_after = \"1m\"\n\
         [[sink]]\nname = \"a\"\nkind = \"upsert\"\nprepare = true\n\
         [[sink]]\nname = \"b\"\nkind = \"upsert\"\nprepare = true\n\
         [[message]]\nid = \"m1\"\nkey = \"k\"\n\
         [[message]]\nid = \"m2\"\nkey = \"k\"\nat = \"1s\"\n\
         [[message]]\nid = \"m3\"\nkey = \"other\"\nat = \"1s\"\n");
    let acked = |id| msg(&scenario, &outcome, id).acked_at();
    assert_eq!(acked("m1"), Some(60_000));
    assert_eq!(acked("m2"), Some(60_000), "waits behind m1's lock");
    assert_eq!(acked("m3"), Some(1_000), "another key does not wait");
    assert_eq!(outcome.totals.lock_held, 2 * 60_000);
    assert_eq!(outcome.totals.max_lock, 60_000);
    assert_eq!(outcome.totals.max_in_doubt, 1);
    let waited = outcome.write_notes.iter().find_map(|n| match *n {
        crate::engine::WriteNote::Waited {
            from,
            until,
            holder_crashed_at,
            ..
        } => Some((from, until, holder_crashed_at)),
        _ => None,
    });
    assert_eq!(waited, Some((1_000, 60_000, Some(0))));
}

#[test]
fn s24_two_phase_needs_every_sink_to_prepare() {
    let problems = invalid(&format!(
        "{RETRY}[write]\nstrategy = \"two_phase\"\n\
         [[sink]]\nname = \"lake\"\nkind = \"upsert\"\nprepare = true\n\
         [[sink]]\nname = \"metrics\"\nkind = \"increment\"\n\
         [[message]]\nid = \"p\"\n"
    ));
    assert_eq!(
        problems,
        ["sink \"metrics\" cannot take part in two-phase commit"]
    );
    // The implicit counter can prepare (decision 27.28).
    let (_, outcome) = sim(&format!(
        "{RETRY}[write]\nstrategy = \"two_phase\"\n[[message]]\nid = \"p\"\n"
    ));
    assert_eq!(value(&outcome, 0), 1);
}

fn saga(n: u64, idempotent: bool, metrics_faults: &str) -> (Scenario, Outcome) {
    sim(&format!(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"saga\"\nidempotent_compensation = {idempotent}\n\
         [[sink]]\nname = \"metrics\"\nkind = \"increment\"\nfaults = [{metrics_faults}]\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"5ms\"\n\
         faults = [{{ fail = {{ every = 5 }}, reason = \"constraint violation\", class = \"permanent\" }}]\n\
         [[sink]]\nname = \"lake\"\nkind = \"upsert\"\n\
         [[traffic]]\ncount = {n}\nover = \"{n}s\"\n"
    ))
}

#[test]
fn s24_a_saga_compensates_what_applied_in_reverse_and_acks() {
    let (_, outcome) = saga(10, true, "");
    // Intents 5 and 10 fail at olap after the metrics increment.
    assert_eq!(outcome.totals.compensations, 2);
    assert_eq!(outcome.totals.over_compensations, 0);
    assert_eq!(outcome.totals.acked, 10, "a compensated saga is finished");
    assert_eq!(value(&outcome, 0), 8, "the counter is exact");
    assert_eq!(value(&outcome, 1), 8);
    assert_eq!(value(&outcome, 2), 8, "the lake is never called for them");
    assert_eq!(sinkf(&outcome, 0, SinkField::Missing), 0, "visible a while");
    // A failed write is visible in metrics alone until its compensation
    // 5ms later (olap's reply); a good one is in the lake 5ms after the
    // others (after olap's round trip).
    assert_eq!(outcome.totals.partial_visible, 2 * 5 + 8 * 5);
}

#[test]
fn s24_an_untracked_compensation_whose_reply_is_lost_over_compensates() {
    let lost = "{ lose_reply = { first = 1 }, compensation = true }";
    let (_, outcome) = saga(10, false, lost);
    assert_eq!(outcome.totals.compensations, 4);
    assert_eq!(outcome.totals.over_compensations, 2);
    assert_eq!(value(&outcome, 0), 6, "2 below the truth");
    assert_eq!(sinkf(&outcome, 0, SinkField::VisibleDuplicates), -2);
    // Tracked, the retry applies nothing.
    let (scenario, outcome) = saga(10, true, lost);
    assert_eq!(outcome.totals.compensations, 2);
    assert_eq!(value(&outcome, 0), 8);
    let target = Target::Sink(0, SinkField::VisibleDuplicates);
    assert_eq!(outcome.value(&scenario, &target), Value::Int(0));
}

#[test]
fn s24_an_irreversible_send_before_a_failure_is_a_false_notice() {
    let text = |first: &str, second: &str| {
        format!("{RETRY}[write]\nstrategy = \"saga\"\n{first}{second}[[message]]\nid = \"p\"\n")
    };
    let sms = "[[sink]]\nname = \"sms\"\nkind = \"irreversible\"\n";
    let olap = "[[sink]]\nname = \"olap\"\nkind = \"upsert\"\n\
                faults = [{ fail = { first = 1 }, class = \"permanent\" }]\n";
    let (_, first) = sim(&text(sms, olap));
    assert_eq!(first.totals.false_notices, 1);
    assert_eq!(value(&first, 0), 1);
    let (_, last) = sim(&text(olap, sms));
    assert_eq!(last.totals.false_notices, 0);
    assert_eq!(value(&last, 1), 0, "never called");
}

#[test]
fn s24_a_saga_step_retries_transient_failures_step_attempts_times() {
    let text = |attempts: u32| {
        format!(
            "{RETRY}[write]\nstrategy = \"saga\"\nstep_attempts = {attempts}\nrelay_retry = \"1s\"\n\
             [[sink]]\nname = \"metrics\"\nkind = \"increment\"\n\
             [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nfaults = [{{ fail = {{ first = 2 }} }}]\n\
             [[message]]\nid = \"p\"\n"
        )
    };
    // Three tries: olap fails at 0s and 1s, succeeds at 2s.
    let (scenario, outcome) = sim(&text(3));
    assert_eq!(msg(&scenario, &outcome, "p").acked_at(), Some(2_000));
    assert_eq!(outcome.totals.compensations, 0);
    assert_eq!(value(&outcome, 0), 1);
    // One try: the write fails transiently, metrics is compensated, the
    // delivery fails and its retry (1s later) fails olap's second call
    // and is compensated again: quarantined after 2 receives.
    let (scenario, outcome) = sim(&text(1));
    assert_eq!(outcome.totals.compensations, 2);
    assert_eq!(value(&outcome, 0), 0);
    assert_eq!(msg(&scenario, &outcome, "p").state, State::Quarantined);
}

#[test]
fn s24_without_sink_faults_every_strategy_gives_section_19_s_values() {
    let body = "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
        [dedup]\nresult_retention = \"1s\"\n\
        [[sink]]\nname = \"inc\"\nkind = \"increment\"\nprepare = true\n\
        [[sink]]\nname = \"up\"\nkind = \"upsert\"\nprepare = true\n\
        [[sink]]\nname = \"sms\"\nkind = \"irreversible\"\nprepare = true\n\
        [[message]]\nid = \"a\"\nfaults = [{ lose_ack = { first = 2 } }]\n\
        [[message]]\nid = \"b\"\nkey = \"a\"\nat = \"3s\"\n\
        [[traffic]]\ncount = 20\nover = \"2s\"\nfaults = [{ fail = { first = 1 } }]\n";
    let (_, plain) = sim(body);
    for strategy in ["direct", "outbox", "two_phase", "saga"] {
        let (_, outcome) = sim(&format!("[write]\nstrategy = \"{strategy}\"\n{body}"));
        assert_eq!(outcome.sinks, plain.sinks, "{strategy}");
        assert_eq!(outcome.totals.effects, plain.totals.effects, "{strategy}");
        assert_eq!(outcome.totals.partial_visible, 0, "{strategy}");
    }
}

#[test]
fn s24_selectors_pick_calls_per_intent() {
    // every = 2: intents numbered by first call (r1, r2, ...): r2 and r4.
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\nfaults = [{ fail = { every = 2 } }]\n\
         [[traffic]]\ncount = 4\nover = \"4s\"\nid_prefix = \"r\"\n");
    let states: Vec<State> = ["r1", "r2", "r3", "r4"]
        .iter()
        .map(|id| msg(&scenario, &outcome, id).state)
        .collect();
    use State::*;
    assert_eq!(states, [Acked, Quarantined, Acked, Quarantined]);
    // until = "repair": fails until the operator repairs, then the
    // redrive succeeds.
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\nfaults = [{ lose_reply = { until = \"repair\" } }]\n\
         [[operator]]\nwait = \"1m\"\nrepair = true\naction = \"redrive_all\"\n\
         [[message]]\nid = \"p\"\n");
    assert_eq!(outcome.totals.acked, 1);
    assert_eq!(value(&outcome, 0), 2, "the lost reply's write stays");
}

#[test]
fn s24_bad_input_is_refused_where_it_is_written() {
    let base = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[[message]]\nid = \"p\"\n";
    let cases = [
        (
            "[[sink]]\nname = \"a\"\nkind = \"increment\"\nfaults = [{ fail = { every = 0 } }]\n",
            "`every` must be between 1 and",
        ),
        (
            "[write]\nstrategy = \"two_phase\"\n[coordinator]\ncrash = { first = 1 }\n",
            "[coordinator] needs `recovers_after`",
        ),
        (
            "[[sink]]\nname = \"a\"\nkind = \"increment\"\nfaults = [{ lose_reply = { first = 1 }, compensation = true }]\n",
            "a compensation fault goes with strategy = \"saga\"",
        ),
        (
            "[write]\nrelay_retry = \"2s\"\n",
            "`relay_retry` goes with strategy = \"outbox\" or \"saga\"",
        ),
        (
            "[write]\nstrategy = \"saga\"\nstep_attempts = 0\n",
            "`step_attempts` must be between 1 and 1000",
        ),
        (
            "[[sink]]\nname = \"a\"\nkind = \"increment\"\nfaults = [{ fail = { intents = [\"nobody\"] } }]\n",
            "nobody",
        ),
        (
            "[write]\nstrategy = \"saga\"\n[expect.sink.counter]\nmax_lag = \"1s\"\n",
            "a sink's `max_lag` goes with [write] strategy = \"outbox\"",
        ),
    ];
    for (text, want) in cases {
        let problems = invalid(&format!("{base}{text}"));
        assert!(
            problems.iter().any(|p| p.contains(want)),
            "{want:?} not in {problems:?}"
        );
    }
}

#[test]
fn s24_sink_calls_count_against_max_events() {
    // 10 rows, each called 1,000 times in vain: 10,000 calls, far over
    // the limit of 500 events, stop the run at the events limit.
    let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
        [limits]\nmax_events = 500\n\
        [write]\nstrategy = \"outbox\"\nrelay_attempts = 1000\n\
        [[sink]]\nname = \"a\"\nkind = \"increment\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
        [[traffic]]\ncount = 10\nover = \"10s\"\n";
    let (scenario, _) = load_str("t.toml", text).expect("valid");
    let stopped = run(&scenario, Recorder::Off).expect_err("the limit stops it");
    assert_eq!(stopped.limit, Limit::Events(500));
    // Within the limit the same file runs: 10 dead letters.
    let (_, outcome) = sim(&text.replace("max_events = 500", "max_events = 20000"));
    assert_eq!(outcome.totals.outbox_dead_letters, 10);
}

#[test]
fn s24_the_json_report_gives_an_outbox_sink_s_max_lag() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"outbox\"\nrelay_retry = \"3s\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[message]]\nid = \"p\"\n");
    let sinks = crate::report::guarantee_json::sinks(&scenario, &outcome);
    assert_eq!(sinks[0]["max_lag"], 3_000);
    assert_eq!(sinks[0]["value"], 1);
}

/// The reports' sequence diagrams: a traced write keeps its calls in the
/// order made, each with its reply and whether it applied; a tracked
/// compensation sent again applies nothing.
#[test]
fn a_traced_saga_write_keeps_its_calls_replies_and_compensations() {
    use crate::engine::{CallKind, Reply};
    let (scenario, outcome) = sim(&format!(
        "{RETRY}[write]\nstrategy = \"saga\"\nrelay_retry = \"1s\"\n\
         [[sink]]\nname = \"sms\"\nkind = \"irreversible\"\n\
         [[sink]]\nname = \"metrics\"\nkind = \"increment\"\nlatency = \"5ms\"\n\
         faults = [{{ lose_reply = {{ first = 1 }}, compensation = true }}]\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"10ms\"\n\
         faults = [{{ fail = {{ intents = [\"p2\"] }}, class = \"permanent\" }}]\n\
         [[message]]\nid = \"p1\"\n[[message]]\nid = \"p2\"\nat = \"1s\"\n"
    ));
    // p1 is the run's first write; p2 the one worth a look.
    let traces = &outcome.write_traces;
    assert_eq!(traces.len(), 2);
    assert_eq!(scenario.message_id(traces[0].message), "p1");
    let p2 = &traces[1];
    assert_eq!(scenario.message_id(p2.message), "p2");
    let calls: Vec<_> = (p2.calls.iter())
        .map(|c| (c.sink, c.kind, c.at, c.heard_at, c.reply, c.applied))
        .collect();
    let declined = Reply::Failed(
        scenario
            .reasons
            .iter()
            .position(|r| r == "sink error")
            .unwrap() as u32,
    );
    assert_eq!(
        calls,
        [
            (0, CallKind::Call, 1_000, 1_000, Reply::Ok, true),
            (1, CallKind::Call, 1_000, 1_005, Reply::Ok, true),
            (2, CallKind::Call, 1_005, 1_015, declined, false),
            // metrics compensated when olap's failure is heard; its reply
            // lost, the retry 1s after that reply applies nothing.
            (1, CallKind::Compensation, 1_015, 1_020, Reply::Lost, true),
            (1, CallKind::Compensation, 2_020, 2_025, Reply::Ok, false),
        ]
    );
    assert_eq!(p2.false_notices, [0]);
    assert!(outcome.lock_spans.is_empty());
}

/// Two-phase locks are kept per sink and write, a crashed coordinator's
/// marked; a run keeps at most WRITE_TRACES_KEPT traces and
/// LOCK_SPANS_KEPT locks however many writes it makes.
#[test]
fn traces_and_locks_are_bounded_and_locks_name_the_crash() {
    use crate::engine::{CallKind, LOCK_SPANS_KEPT, WRITE_TRACES_KEPT};
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"two_phase\"\n\
         [coordinator]\ncrash = { first = 1 }\nrecovers_after = \"1m\"\n\
         [[sink]]\nname = \"a\"\nkind = \"upsert\"\nprepare = true\nlatency = \"20ms\"\n\
         [[sink]]\nname = \"b\"\nkind = \"increment\"\nprepare = true\nlatency = \"50ms\"\n\
         faults = [{ fail = { every = 2 } }]\n\
         [[traffic]]\ncount = 1000\nover = \"1000s\"\nid_prefix = \"w\"\n");
    assert_eq!(outcome.write_traces.len(), WRITE_TRACES_KEPT);
    assert_eq!(outcome.lock_spans.len(), LOCK_SPANS_KEPT);
    let first = &outcome.lock_spans[..2];
    assert!(
        first
            .iter()
            .all(|l| l.crashed && l.from == 0 && l.until == 60_000)
    );
    assert_eq!(scenario.message_id(first[0].message), "w1");
    // w2's prepare fails at b: only a locked, until the last reply.
    let w2 = &outcome.lock_spans[2];
    assert_eq!(
        (w2.sink, w2.from, w2.until, w2.crashed),
        (0, 1_000, 1_050, false)
    );
    let aborted = &outcome.write_traces[1];
    assert_eq!(scenario.message_id(aborted.message), "w2");
    let kinds: Vec<_> = aborted.calls.iter().map(|c| (c.sink, c.kind)).collect();
    assert_eq!(
        kinds,
        [
            (0, CallKind::Prepare),
            (1, CallKind::Prepare),
            (0, CallKind::Abort)
        ]
    );
}

/// Scenario 49 with a sink that cannot prepare is refused, located on
/// that sink.
#[test]
fn scenario_49_is_refused_when_a_sink_cannot_prepare() {
    let text = std::fs::read_to_string("scenarios/49-two-phase-coordinator-crash-holds-locks.toml")
        .unwrap();
    assert_eq!(text.matches("prepare = true\n").count(), 2);
    let refused = text.replacen("prepare = true\n", "", 1);
    let problems = invalid(&refused);
    assert_eq!(
        problems,
        ["sink \"ledger\" cannot take part in two-phase commit"]
    );
}

/// Decision 27.18: with deduplication the result is stored when the last
/// call is heard to succeed (here 0s + 10ms + 10ms), valid until the
/// commit instant plus the retention: a delivery of the same key before
/// then writes again; one at or after it is a hit.
#[test]
fn s27_18_a_result_is_seen_once_the_last_call_is_heard() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [dedup]\nresult_retention = \"100ms\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\nlatency = \"10ms\"\n\
         [[sink]]\nname = \"b\"\nkind = \"increment\"\nlatency = \"10ms\"\n\
         [[message]]\nid = \"m1\"\nkey = \"k\"\n\
         [[message]]\nid = \"m2\"\nkey = \"k\"\nat = \"19ms\"\n\
         [[message]]\nid = \"m3\"\nkey = \"k\"\nat = \"39ms\"\n\
         [[message]]\nid = \"m4\"\nkey = \"k\"\nat = \"60ms\"\n");
    // m1 commits at 0s, its result seen from 20ms: m2 at 19ms writes again
    // (seen from 39ms); m3 at 39ms is a hit; m4 at 60ms too (m2's result
    // lasts until 19ms + 100ms).
    assert_eq!(msg(&scenario, &outcome, "m1").effects, 1);
    assert_eq!(msg(&scenario, &outcome, "m2").effects, 1);
    assert_eq!(msg(&scenario, &outcome, "m3").dedup_hits, 1);
    assert_eq!(msg(&scenario, &outcome, "m4").dedup_hits, 1);
    assert_eq!(value(&outcome, 0), 2);
    // Without [write] faults or latency a result is seen at its commit.
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [dedup]\nresult_retention = \"100ms\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\n\
         [[message]]\nid = \"m1\"\nkey = \"k\"\n\
         [[message]]\nid = \"m2\"\nkey = \"k\"\nat = \"1ms\"\n");
    assert_eq!(msg(&scenario, &outcome, "m2").dedup_hits, 1);
}

/// 27.36: an outbox relay call is pending until its reply is heard, so the
/// run, its partial visibility and a log's checkpoints end with the last
/// reply, not the last call.
#[test]
fn r27_36_an_outbox_run_ends_at_the_last_relay_reply() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"outbox\"\n\
         [[sink]]\nname = \"a\"\nkind = \"upsert\"\n\
         [[sink]]\nname = \"b\"\nkind = \"upsert\"\nlatency = \"250ms\"\n\
         [[message]]\nid = \"p\"\n");
    // a applied at 0s, b at 0s (its reply heard at 250ms): the run ends
    // then; nothing is partial (both sinks show the row from 0s).
    assert_eq!(outcome.totals.end_time, 250);
    assert_eq!(outcome.totals.partial_visible, 0);
    // A retried relay call: b fails first, retried 1s after the reply
    // (at 1s250ms), heard at 1s500ms; b shows the row from 1s250ms.
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"outbox\"\n\
         [[sink]]\nname = \"a\"\nkind = \"upsert\"\n\
         [[sink]]\nname = \"b\"\nkind = \"upsert\"\nlatency = \"250ms\"\n\
         faults = [{ fail = { first = 1 } }]\n\
         [[message]]\nid = \"p\"\n");
    assert_eq!(outcome.totals.end_time, 1_500);
    assert_eq!(outcome.totals.partial_visible, 1_250);
}

/// 27.37: the store keeps, per key, the result of the latest write that
/// stored one; a second write of the key stores only when its own last
/// call is heard, and until then the first write's result answers.
#[test]
fn r27_37_an_earlier_result_answers_until_a_later_write_stores_its_own() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [dedup]\nresult_retention = \"100ms\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\nlatency = \"10ms\"\n\
         [[sink]]\nname = \"b\"\nkind = \"increment\"\nlatency = \"10ms\"\n\
         [[message]]\nid = \"m1\"\nkey = \"k\"\n\
         [[message]]\nid = \"m2\"\nkey = \"k\"\nat = \"10ms\"\n\
         [[message]]\nid = \"m3\"\nkey = \"k\"\nat = \"25ms\"\n\
         [[message]]\nid = \"m4\"\nkey = \"k\"\nat = \"105ms\"\n");
    // m1 commits at 0s (seen from 20ms, valid until 100ms); m2 at 10ms
    // finds nothing seen and writes (seen from 30ms, valid until 110ms).
    // m3 at 25ms: m1's result answers. m4 at 105ms: m2's result replaced
    // m1's at 30ms, so it is still valid.
    assert_eq!(msg(&scenario, &outcome, "m2").effects, 1);
    assert_eq!(msg(&scenario, &outcome, "m3").dedup_hits, 1);
    assert_eq!(msg(&scenario, &outcome, "m4").dedup_hits, 1);
    assert_eq!(value(&outcome, 0), 2);
}

/// 27.38: a sink shows a write while the write's net count there is
/// above 0. A saga step retried after a lost reply applies an increment
/// twice; the one compensation leaves it shown, so the write stays
/// partial until the run ends. An upsert written twice is one row: its
/// compensation hides it.
#[test]
fn r27_38_partial_visible_follows_the_net_count_in_each_sink() {
    let text = |kind: &str| {
        format!(
            "{RETRY}[write]\nstrategy = \"saga\"\nstep_attempts = 2\nrelay_retry = \"1s\"\n\
             [[sink]]\nname = \"first\"\nkind = \"{kind}\"\nfaults = [{{ lose_reply = {{ first = 1 }} }}]\n\
             [[sink]]\nname = \"olap\"\nkind = \"upsert\"\n\
             faults = [{{ fail = {{ intents = [\"p\"] }}, class = \"permanent\" }}]\n\
             [[message]]\nid = \"p\"\n[[message]]\nid = \"q\"\nat = \"5s\"\n"
        )
    };
    // p: first applied at 0s (reply lost) and again at 1s, olap rejects
    // at 1s, one compensation at 1s: net 1, shown until the end (6s). q:
    // first at 5s (reply lost) and 6s, olap at 6s: partial for 1s.
    let (_, outcome) = sim(&text("increment"));
    assert_eq!(outcome.totals.compensations, 1);
    assert_eq!(value(&outcome, 0), 3, "p's net 1 and q's 2");
    assert_eq!(outcome.totals.end_time, 6_000);
    assert_eq!(outcome.totals.partial_visible, 6_000 + 1_000);
    // The same with an upsert: p's row is deleted at 1s.
    let (_, outcome) = sim(&text("upsert"));
    assert_eq!(outcome.totals.partial_visible, 1_000 + 1_000);
}

/// 28.16's first worked example (issue: a compensation that gives up
/// leaves a trace): a compensation whose `relay_attempts` calls all fail
/// is given up, counted apart from `compensations`, per sink too, and the
/// transcript tells each compensation call and the giving up.
#[test]
fn s28_16_a_compensation_that_gives_up_is_counted_and_told() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"saga\"\nrelay_retry = \"1s\"\nrelay_attempts = 3\n\
         [[sink]]\nname = \"metrics\"\nkind = \"increment\"\n\
         faults = [{ fail = { first = 3 }, compensation = true }]\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"5ms\"\n\
         faults = [{ fail = { intents = [\"bad\"] }, class = \"permanent\" }]\n\
         [[message]]\nid = \"good\"\n[[message]]\nid = \"bad\"\nat = \"1s\"\n");
    // bad: metrics applied at 1s, olap's rejection heard at 1s5ms; the
    // compensation calls at 1s5ms, 2s5ms, 3s5ms all fail: given up at
    // 3s5ms, bad acked then.
    assert_eq!(outcome.totals.compensations, 0);
    assert_eq!(outcome.totals.compensations_given_up, 1);
    assert_eq!(sinkf(&outcome, 0, SinkField::CompensationsGivenUp), 1);
    assert_eq!(sinkf(&outcome, 1, SinkField::CompensationsGivenUp), 0);
    assert_eq!((value(&outcome, 0), value(&outcome, 1)), (2, 1));
    assert_eq!(outcome.totals.partial_visible, 2_005);
    assert_eq!(msg(&scenario, &outcome, "bad").acked_at(), Some(3_005));
    let told: Vec<(Millis, String)> = (outcome.transitions.iter())
        .filter(|t| t.detail.kind().is_write_kind())
        .map(|t| {
            (
                t.time,
                crate::words::sentence::describe(&scenario, &t.detail),
            )
        })
        .collect();
    let failed = "compensation sent to sink \"metrics\": failed: sink error";
    assert_eq!(
        told,
        [
            (1_005, failed.to_string()),
            (2_005, failed.to_string()),
            (3_005, failed.to_string()),
            (
                3_005,
                "compensation given up: its 3 calls to sink \"metrics\" all failed; \
                 the write stays visible there"
                    .to_string()
            ),
        ]
    );
    // The transcript stays in time order, the write's transitions among
    // the others.
    assert!(
        outcome
            .transitions
            .windows(2)
            .all(|w| w[0].time <= w[1].time)
    );
    // An expectation can name them.
    let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"saga\"\nrelay_retry = \"1s\"\nrelay_attempts = 3\n\
         [[sink]]\nname = \"metrics\"\nkind = \"increment\"\n\
         faults = [{ fail = { first = 3 }, compensation = true }]\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"5ms\"\n\
         faults = [{ fail = { intents = [\"bad\"] }, class = \"permanent\" }]\n\
         [[message]]\nid = \"good\"\n[[message]]\nid = \"bad\"\nat = \"1s\"\n\
         [expect]\ncompensations_given_up = 1\n\
         [expect.sink.metrics]\ncompensations_given_up = 1\n\
         [[expect.event]]\nkind = \"compensation_given_up\"\nmessage = \"bad\"\nat = \"3s5ms\"\n\
         [[expect.event]]\nkind = \"compensation_given_up\"\nsink = \"metrics\"\n\
         [[expect.event]]\nkind = \"compensation_sent\"\nsink = \"olap\"\nnever = true\n\
         [[expect.event]]\nkind = \"compensation_sent\"\nsink = \"metrics\"\nnever = true\n";
    let (scenario, _) = crate::scenario::load_str("t.toml", text).unwrap();
    let outcome = run(&scenario, Recorder::Off).unwrap();
    let verdicts = crate::expect::judge(&scenario, &outcome);
    let passed: Vec<bool> = verdicts.iter().map(|v| v.passed).collect();
    // The last: compensations were sent to metrics (28.13's `sink`).
    assert_eq!(passed, [true, true, true, true, true, false]);
    let refused = |extra: &str, says: &str| {
        let problems = crate::scenario::load_str("t.toml", &format!("{text}{extra}"))
            .unwrap_err()
            .problems;
        assert!(
            problems.iter().any(|p| p.message.contains(says)),
            "{problems:?}"
        );
    };
    refused(
        "[[expect.event]]\nkind = \"acked\"\nsink = \"metrics\"\n",
        "names no sink",
    );
    refused(
        "[[expect.event]]\nkind = \"compensation_sent\"\nsink = \"lake\"\n",
        "lake",
    );
}

/// 28.16: an outbox row dead-lettered for a sink is told at its last call.
#[test]
fn s28_16_an_outbox_dead_letter_is_told_at_its_last_call() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"outbox\"\nrelay_retry = \"1s\"\nrelay_attempts = 3\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"5ms\"\n\
         faults = [{ fail = { intents = [\"bad\"] }, class = \"permanent\" }]\n\
         [[message]]\nid = \"bad\"\n");
    let told: Vec<(Millis, Option<MessageIndex>, EventKind)> = (outcome.transitions.iter())
        .filter(|t| t.detail.kind().is_write_kind())
        .map(|t| (t.time, t.message, t.detail.kind()))
        .collect();
    // Calls at 0, 1s5ms, 2s10ms.
    assert_eq!(
        told,
        [(
            2_010,
            scenario.find_message("bad"),
            EventKind::OutboxDeadLettered
        )]
    );
}

/// The message of the first failed call noted at sink `k`.
fn failed_at_sink(scenario: &Scenario, outcome: &Outcome, k: u32) -> String {
    let failed = outcome.write_notes.iter().find_map(|n| match *n {
        WriteNote::Failed { message, sink, .. } if sink == k => Some(message),
        _ => None,
    });
    scenario
        .message_id(failed.expect("a failed call"))
        .to_string()
}

/// 27.35: sink calls are made one at a time, each at its own instant, and
/// a sink's `every = N` numbers intents by their first call in the order
/// the calls are made across writes. p commits first but its call to `a`
/// falls in a's outage and is retried at 1s; q commits at 600ms and
/// reaches `b` first. b's every-2nd intent is therefore p.
#[test]
fn r27_35_every_numbers_intents_in_the_order_calls_are_made() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"saga\"\nstep_attempts = 2\nrelay_retry = \"1s\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\n\
         outage = { from = \"0s\", duration = \"500ms\" }\n\
         [[sink]]\nname = \"b\"\nkind = \"increment\"\nlatency = \"10ms\"\n\
         faults = [{ fail = { every = 2 }, class = \"permanent\" }]\n\
         [[message]]\nid = \"p\"\n[[message]]\nid = \"q\"\nat = \"600ms\"\n");
    assert_eq!(failed_at_sink(&scenario, &outcome, 1), "p");
    // p's write fails at b (1s, heard at 1s10ms) and is compensated in a.
    assert_eq!(outcome.totals.compensations, 1);
    assert_eq!(value(&outcome, 0), 1, "q's increment only");
    assert_eq!(value(&outcome, 1), 1, "q's increment only");
    assert_eq!(outcome.totals.end_time, 1_010);
}

/// 27.35: a call not yet made when a restart abandons its delivery is
/// never made. m's call to `a` is made at 0 (heard at 10ms); the restart
/// at 5ms abandons the delivery before its call to `b`, and m is
/// processed again from 5ms: a twice, b once.
#[test]
fn r27_35_a_restart_cancels_the_calls_its_delivery_had_not_made() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"100s\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\nlatency = \"10ms\"\n\
         [[sink]]\nname = \"b\"\nkind = \"increment\"\n\
         [[message]]\nid = \"m\"\n\
         [[restart]]\nat = \"5ms\"\nresume = \"earliest\"\n");
    assert_eq!(value(&outcome, 0), 2);
    assert_eq!(value(&outcome, 1), 1);
    assert_eq!(outcome.totals.effects, 2);
    assert_eq!(outcome.totals.acked, 1);
    // Its second delivery: a at 5ms, b at 15ms, acked then.
    assert_eq!(outcome.totals.end_time, 15);
}

/// 27.39: an arrival at the instant a retry is due runs before it (it was
/// scheduled before the run). p's call to `a` fails in a's outage and is
/// retried at 1s, the instant q arrives: q calls first, so b's every-2nd
/// intent is p.
#[test]
fn r27_39_an_arrival_at_a_retry_s_instant_runs_before_it() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"saga\"\nstep_attempts = 2\nrelay_retry = \"1s\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\n\
         outage = { from = \"0s\", duration = \"1ms\" }\n\
         [[sink]]\nname = \"b\"\nkind = \"increment\"\n\
         faults = [{ fail = { every = 2 }, class = \"permanent\" }]\n\
         [[message]]\nid = \"p\"\n[[message]]\nid = \"q\"\nat = \"1s\"\n");
    assert_eq!(failed_at_sink(&scenario, &outcome, 1), "p");
    assert_eq!(value(&outcome, 1), 1);
}

/// 27.40: a waiting two-phase write takes the released lock inside the
/// event that releases it, before any other event of that instant. w1
/// holds k's lock from 0 to 50ms; w2 waits from 10ms; r's first delivery
/// fails at 0 and its retry, scheduled before the release, is due at
/// 50ms too. w2 takes the lock at 50ms (decided at 100ms), r waits for
/// it and is decided at 150ms.
#[test]
fn r27_40_a_waiting_write_takes_the_lock_inside_the_releasing_event() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 2\nretry_interval = \"50ms\"\n\
         [write]\nstrategy = \"two_phase\"\n\
         [[sink]]\nname = \"a\"\nkind = \"upsert\"\nprepare = true\nlatency = \"50ms\"\n\
         [[message]]\nid = \"w1\"\nkey = \"k\"\n\
         [[message]]\nid = \"r\"\nkey = \"k\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[message]]\nid = \"w2\"\nkey = \"k\"\nat = \"10ms\"\n");
    let acked = |id: &str| {
        let m = scenario.find_message(id).unwrap();
        outcome.messages.acked_at(m)
    };
    assert_eq!(acked("w1"), Some(50));
    assert_eq!(acked("w2"), Some(100));
    assert_eq!(acked("r"), Some(150));
    // w2 waited from 10ms to 50ms, r from 50ms to 100ms, each behind the
    // write before it.
    let waits: Vec<_> = (outcome.write_notes.iter())
        .filter_map(|n| match *n {
            WriteNote::Waited {
                message,
                from,
                until,
                holder,
                ..
            } => Some((
                scenario.message_id(message).to_string(),
                from,
                until,
                scenario.message_id(holder).to_string(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        waits,
        [
            ("w2".to_string(), 10, 50, "w1".to_string()),
            ("r".to_string(), 50, 100, "w2".to_string()),
        ]
    );
}

/// 27.35 with a two-phase lock: a write still waiting for its key's lock
/// when a restart abandons its delivery never sends its prepares. a (on
/// partition 0) holds k's lock from 0 to 100ms; b (partition 1) waits from
/// 10ms; partition 1 restarts at 50ms and b is processed again, waiting
/// again. At 100ms the abandoned write leaves the line without a call and
/// b's new write prepares (decided at 200ms): b's increment counts once.
#[test]
fn r27_35_a_write_waiting_for_a_lock_when_its_delivery_is_abandoned_sends_nothing() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\npartitions = 2\ncheckpoint_interval = \"100s\"\n\
         [write]\nstrategy = \"two_phase\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\nprepare = true\nlatency = \"100ms\"\n\
         [[message]]\nid = \"a\"\nkey = \"k\"\npartition = 0\n\
         [[message]]\nid = \"b\"\nkey = \"k\"\npartition = 1\nat = \"10ms\"\n\
         [[restart]]\nat = \"50ms\"\npartition = 1\nresume = \"earliest\"\n");
    assert_eq!(value(&outcome, 0), 2);
    assert_eq!(outcome.totals.effects, 3, "b committed twice in the ledger");
    let b = scenario.find_message("b").unwrap();
    assert_eq!(outcome.messages.acked_at(b), Some(200));
    assert_eq!(outcome.totals.end_time, 200);
    // One lock each for a and for b's second write.
    assert_eq!(outcome.totals.lock_held, 200);
}

/// The two sinks of 28.15's worked examples (both prepare), with `[coordinator]`
/// `coordinator` and messages `messages`.
fn coordinated(
    delivery: &str,
    ledger: &str,
    olap: &str,
    coordinator: &str,
    messages: &str,
) -> (Scenario, Outcome) {
    sim(&format!(
        "[delivery]\n{delivery}\n[write]\nstrategy = \"two_phase\"\n[coordinator]\n{coordinator}\n\
         [[sink]]\nname = \"ledger\"\nkind = \"upsert\"\nprepare = true\nlatency = \"{ledger}\"\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nprepare = true\nlatency = \"{olap}\"\n{messages}"
    ))
}

/// 28.15, the commit round trip: the decision at 50ms is a second call to
/// each sink; ledger's lock is released when its reply comes (100ms),
/// olap's at 70ms; the delivery acks with the last reply.
#[test]
fn s28_15_the_commit_round_trip_holds_each_lock_until_its_reply() {
    let once = "max_receives = 1\nretry_interval = \"1s\"";
    let message = "[[message]]\nid = \"pay-1\"\n";
    let (scenario, outcome) =
        coordinated(once, "50ms", "20ms", "commit_round_trip = true", message);
    assert_eq!(outcome.totals.lock_held, 170);
    assert_eq!(outcome.totals.max_lock, 100);
    let pay = scenario.find_message("pay-1").unwrap();
    assert_eq!(outcome.messages.acked_at(pay), Some(100));
    assert_eq!(outcome.totals.max_in_doubt, 1);
    // Without it: both locks until the decision at 50ms.
    let (scenario, outcome) =
        coordinated(once, "50ms", "20ms", "commit_round_trip = false", message);
    assert_eq!(outcome.totals.lock_held, 100);
    assert_eq!(outcome.totals.max_lock, 50);
    let pay = scenario.find_message("pay-1").unwrap();
    assert_eq!(outcome.messages.acked_at(pay), Some(50));
}

/// 28.15, a coordinator that never recovers: pay-1 stays in doubt holding
/// acct's locks to the end; pay-2 waits for them and never starts; pay-3
/// (another key) commits at 20s50ms, the last event.
#[test]
fn s28_15_a_coordinator_that_never_recovers_holds_its_locks_to_the_end() {
    let (scenario, outcome) = coordinated(
        "max_receives = 1\nretry_interval = \"1s\"",
        "50ms",
        "50ms",
        "crash = { first = 1 }\nrecovers_after = \"never\"",
        "[[message]]\nid = \"pay-1\"\nkey = \"acct\"\n\
         [[message]]\nid = \"pay-2\"\nkey = \"acct\"\nat = \"10s\"\n\
         [[message]]\nid = \"pay-3\"\nkey = \"other\"\nat = \"20s\"\n",
    );
    assert_eq!(outcome.totals.end_time, 20_050);
    assert_eq!(outcome.totals.lock_held, 2 * 20_050 + 2 * 50);
    assert_eq!(outcome.totals.max_lock, 20_050);
    assert_eq!(outcome.totals.in_doubt_at_end, 1);
    assert_eq!(outcome.totals.blocked_at_end, 1);
    assert_eq!(outcome.totals.acked, 1);
    assert_eq!(outcome.totals.max_in_doubt, 2);
    for id in ["pay-1", "pay-2"] {
        assert_eq!(msg(&scenario, &outcome, id).state, State::InFlight, "{id}");
    }
    assert!(Total::listed(&scenario).any(|t| t == Total::InDoubtAtEnd));
}

/// 28.15, a crash before the decision was logged: the recovered
/// coordinator aborts at 30s (presumed abort), the delivery fails and its
/// retry at 40s commits at 40s50ms. After the log, recovery commits.
#[test]
fn s28_15_a_crash_before_the_log_aborts_at_recovery() {
    let retries = "max_receives = 3\nretry_interval = \"10s\"";
    let message = "[[message]]\nid = \"pay-1\"\n";
    let crash = "crash = { first = 1 }\nrecovers_after = \"30s\"\n";
    let (scenario, outcome) = coordinated(
        retries,
        "50ms",
        "50ms",
        &format!("{crash}crash_at = \"before_log\""),
        message,
    );
    assert_eq!(outcome.totals.effects, 2);
    assert_eq!(value(&outcome, 0), 1);
    assert_eq!(value(&outcome, 1), 1);
    assert_eq!(outcome.totals.lock_held, 2 * 30_000 + 2 * 50);
    let pay = scenario.find_message("pay-1").unwrap();
    assert_eq!(outcome.messages.acked_at(pay), Some(40_050));
    let reasons = msg(&scenario, &outcome, "pay-1");
    assert_eq!(reasons.total_receives, 2);
    let (scenario, outcome) = coordinated(
        retries,
        "50ms",
        "50ms",
        &format!("{crash}crash_at = \"after_log\""),
        message,
    );
    assert_eq!(outcome.totals.effects, 1);
    assert_eq!(outcome.totals.lock_held, 60_000);
    let pay = scenario.find_message("pay-1").unwrap();
    assert_eq!(outcome.messages.acked_at(pay), Some(30_000));
}

/// 28.15's keys refused where they cannot apply, each at its key.
#[test]
fn s28_15_coordinator_keys_that_cannot_apply_are_refused() {
    let file = |coordinator: &str| {
        format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[write]\nstrategy = \"two_phase\"\n\
             [coordinator]\n{coordinator}\n[[sink]]\nname = \"a\"\nkind = \"upsert\"\nprepare = true\n"
        )
    };
    refused(
        &file("recovers_after = \"30s\""),
        "`recovers_after` goes with `crash`",
    );
    refused(
        &file("crash_at = \"before_log\""),
        "`crash_at` goes with `crash`",
    );
    refused(
        &file("crash = { first = 1 }\nrecovers_after = \"never\"\ncrash_at = \"before_log\""),
        "`crash_at` needs a coordinator that recovers",
    );
    refused(
        &file("crash = { first = 1 }\nrecovers_after = \"soon\""),
        "is not a duration",
    );
    refused(&file("crash = { first = 1 }"), "needs `recovers_after`");
}

/// 28.16, an alarm on outbox dead letters: bad's calls to olap at 0,
/// 1s5ms and 2s10ms all fail; dead-lettered at 2s10ms, when the alarm
/// fires, still firing at the end (dead letters never leave). A window
/// of 1s counts it until 3s10ms (good, at 5s, keeps the run going); an
/// alarm on the other sink never fires.
#[test]
fn s28_16_an_alarm_on_outbox_dead_letters_fires_at_the_last_call() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"outbox\"\nrelay_retry = \"1s\"\nrelay_attempts = 3\n\
         [[sink]]\nname = \"lake\"\nkind = \"upsert\"\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"5ms\"\n\
         faults = [{ fail = { intents = [\"bad\"] }, class = \"permanent\" }]\n\
         [[message]]\nid = \"bad\"\n[[message]]\nid = \"good\"\nat = \"5s\"\n\
         [[alarm]]\nname = \"dead\"\nmetric = \"outbox_dead_letters\"\nat_least = 1\n\
         [[alarm]]\nname = \"olap\"\nmetric = \"outbox_dead_letters\"\nsink = \"olap\"\nat_least = 1\n\
         [[alarm]]\nname = \"lake\"\nmetric = \"outbox_dead_letters\"\nsink = \"lake\"\nat_least = 1\n\
         [[alarm]]\nname = \"recent\"\nmetric = \"outbox_dead_letter_arrivals\"\nwindow = \"1s\"\nat_least = 1\n");
    assert_eq!(outcome.totals.outbox_dead_letters, 1);
    let [dead, olap, lake, recent] = &outcome.alarms[..] else {
        panic!("four alarms")
    };
    for a in [dead, olap] {
        assert_eq!(a.first_fired_at, Some(2_010));
        assert!(a.firing);
    }
    assert_eq!(lake.times_fired, 0);
    assert_eq!(recent.first_fired_at, Some(2_010));
    assert!(!recent.firing);
    let cleared: Vec<_> = recent.changes.iter().map(|c| (c.time, c.fired)).collect();
    assert_eq!(cleared, [(2_010, true), (3_010, false)]);
}

/// 28.16's alarm metrics refused where they cannot count.
#[test]
fn s28_16_outbox_alarm_metrics_need_an_outbox() {
    let file = |strategy: &str, alarm: &str| {
        format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[write]\nstrategy = \"{strategy}\"\n\
             [[sink]]\nname = \"a\"\nkind = \"upsert\"\n[[alarm]]\nname = \"x\"\nat_least = 1\n{alarm}\n"
        )
    };
    refused(
        &file("saga", "metric = \"outbox_dead_letters\""),
        "metric \"outbox_dead_letters\" needs an outbox",
    );
    refused(
        &file("outbox", "metric = \"outbox_dead_letter_arrivals\""),
        "needs a `window`",
    );
    refused(
        &file("outbox", "metric = \"outbox_dead_letters\"\nsink = \"b\""),
        "no outbox sink is named \"b\"",
    );
    refused(
        &file("outbox", "metric = \"dlq_depth\"\nsink = \"a\""),
        "`sink` goes with metric",
    );
}

/// 28.16, a corrective notice (scenario 52's shape): order-5's sms is sent
/// at 4s, olap's rejection heard at 4s5ms, and the saga sends sms a
/// corrective notice then. Its sends stay 5. When every corrective call
/// fails it is given up and the false notice stays uncorrected.
#[test]
fn s28_16_a_corrective_notice_follows_a_false_notice() {
    let file = |sms_faults: &str| {
        format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
             [write]\nstrategy = \"saga\"\nrelay_retry = \"1s\"\nrelay_attempts = 3\n\
             [[sink]]\nname = \"sms\"\nkind = \"irreversible\"\ncorrective_notice = true\nfaults = [{sms_faults}]\n\
             [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"5ms\"\n\
             faults = [{{ fail = {{ every = 5 }}, class = \"permanent\" }}]\n\
             [[traffic]]\ncount = 5\nover = \"5s\"\nid_prefix = \"order-\"\n"
        )
    };
    let (scenario, outcome) = sim(&file(""));
    assert_eq!(outcome.totals.false_notices, 1);
    assert_eq!(outcome.totals.corrective_notices, 1);
    assert_eq!(outcome.totals.uncorrected_false_notices, 0);
    assert_eq!(outcome.totals.compensations, 0);
    assert_eq!(value(&outcome, 0), 5);
    assert_eq!(outcome.totals.end_time, 4_005);
    assert!(Total::listed(&scenario).any(|t| t == Total::CorrectiveNotices));
    let (_, outcome) = sim(&file("{ fail = { first = 3 }, compensation = true }"));
    assert_eq!(outcome.totals.corrective_notices, 0);
    assert_eq!(outcome.totals.uncorrected_false_notices, 1);
    assert_eq!(outcome.totals.compensations_given_up, 1);
    // Corrective calls at 4s5ms, 5s5ms and 6s5ms (0ms each): given up then.
    assert_eq!(outcome.totals.end_time, 6_005);
    refused(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[write]\nstrategy = \"direct\"\n\
         [[sink]]\nname = \"sms\"\nkind = \"irreversible\"\ncorrective_notice = true\n",
        "`corrective_notice` goes with an irreversible sink under strategy = \"saga\"",
    );
    refused(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[write]\nstrategy = \"saga\"\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\ncorrective_notice = true\n",
        "`corrective_notice` goes with an irreversible sink",
    );
}

/// 28.15's transition: a coordinator that crashed after the prepares and
/// recovers tells it at the recovery, with its decision; an event
/// expectation takes the kind (two-phase files only).
#[test]
fn s28_15_the_coordinator_s_recovery_is_told_with_its_decision() {
    let text = |crash_at: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n[write]\nstrategy = \"two_phase\"\n\
             [coordinator]\ncrash = {{ first = 1 }}\nrecovers_after = \"30s\"\ncrash_at = \"{crash_at}\"\n\
             [[sink]]\nname = \"ledger\"\nkind = \"upsert\"\nprepare = true\nlatency = \"50ms\"\n\
             [[message]]\nid = \"pay-1\"\n\
             [[expect.event]]\nkind = \"coordinator_recovered\"\nmessage = \"pay-1\"\nat = \"30s\"\n"
        )
    };
    for (crash_at, said) in [
        ("after_log", "its decision was logged; committed everywhere"),
        (
            "before_log",
            "no decision in its log; aborted everywhere (presumed abort)",
        ),
    ] {
        let (scenario, _) = crate::scenario::load_str("t.toml", &text(crash_at)).unwrap();
        let outcome = run(&scenario, Recorder::All).unwrap();
        let verdicts = crate::expect::judge(&scenario, &outcome);
        assert!(verdicts.iter().all(|v| v.passed), "{crash_at}");
        let told: Vec<_> = (outcome.transitions.iter())
            .filter(|t| t.detail.kind() == EventKind::CoordinatorRecovered)
            .map(|t| {
                (
                    t.time,
                    crate::words::sentence::describe(&scenario, &t.detail),
                )
            })
            .collect();
        assert_eq!(told.len(), 1, "{crash_at}");
        assert_eq!(told[0].0, 30_000);
        assert!(told[0].1.contains(said), "{}", told[0].1);
    }
    refused(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[write]\nstrategy = \"saga\"\n\
         [[sink]]\nname = \"a\"\nkind = \"upsert\"\n\
         [[expect.event]]\nkind = \"coordinator_recovered\"\n",
        "two_phase",
    );
}

/// 28.8's worked example: an upsert silently downgraded to an append at
/// 5s. m1 at 0 writes a row, m2 at 1s a second; m1's redelivery at 10s
/// adds one to the append: value 3, one visible duplicate, one write after
/// the change. Without `becomes`: 2 and 0.
#[test]
fn s28_8_an_upsert_downgraded_to_an_append_counts_later_writes_again() {
    let file = |becomes: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n\
             [[sink]]\nname = \"orders\"\nkind = \"upsert\"\n{becomes}\
             [[message]]\nid = \"m1\"\nfaults = [{{ lose_ack = {{ first = 1 }} }}]\n\
             [[message]]\nid = \"m2\"\nat = \"1s\"\n"
        )
    };
    let (scenario, outcome) = sim(&file("becomes = { kind = \"increment\", at = \"5s\" }\n"));
    assert_eq!(value(&outcome, 0), 3);
    assert_eq!(sinkf(&outcome, 0, SinkField::VisibleDuplicates), 1);
    assert_eq!(sinkf(&outcome, 0, SinkField::WritesAfterChange), 1);
    let kind = Target::Sink(0, SinkField::KindAtEnd);
    assert_eq!(
        outcome.value(&scenario, &kind),
        Value::Text("increment".into())
    );
    let changed: Vec<_> = (outcome.transitions.iter())
        .filter(|t| t.detail.kind() == EventKind::SinkChanged)
        .map(|t| {
            (
                t.time,
                crate::words::sentence::describe(&scenario, &t.detail),
            )
        })
        .collect();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0].0, 5_000);
    assert!(
        changed[0].1.contains("now applies writes as an append"),
        "{}",
        changed[0].1
    );
    let (_, outcome) = sim(&file(""));
    assert_eq!(value(&outcome, 0), 2);
    assert_eq!(sinkf(&outcome, 0, SinkField::VisibleDuplicates), 0);
    assert!(outcome.sink_becomes.is_empty());
}

/// 28.8 the other way: an increment that becomes an upsert at 5s. m1's
/// count at 0 stays; its redelivery at 10s finds its key counted and
/// changes nothing; m2's new key at 6s adds a row.
#[test]
fn s28_8_an_increment_that_becomes_an_upsert_writes_new_keys_once() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n\
         [[sink]]\nname = \"counter\"\nkind = \"increment\"\n\
         becomes = { kind = \"upsert\", at = \"5s\" }\n\
         [[message]]\nid = \"m1\"\nfaults = [{ lose_ack = { first = 1 } }]\n\
         [[message]]\nid = \"m2\"\nat = \"6s\"\n");
    assert_eq!(value(&outcome, 0), 2);
    assert_eq!(sinkf(&outcome, 0, SinkField::VisibleDuplicates), 0);
    assert_eq!(sinkf(&outcome, 0, SinkField::WritesAfterChange), 2);
    assert_eq!(sinkf(&outcome, 0, SinkField::MaxPerIntent), 1);
}

/// 28.8: a compensation removes what the write added by the kind in force
/// when it applied. bad's row (1s, an upsert then) is compensated at 6s,
/// after the change to an append: the row is deleted, not a count taken
/// away; g's write at 7s adds one.
#[test]
fn s28_8_a_compensation_removes_by_the_kind_in_force_when_the_write_applied() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [write]\nstrategy = \"saga\"\n\
         [[sink]]\nname = \"orders\"\nkind = \"upsert\"\n\
         becomes = { kind = \"increment\", at = \"5s\" }\n\
         [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"5s\"\n\
         faults = [{ fail = { intents = [\"bad\"] }, class = \"permanent\" }]\n\
         [[message]]\nid = \"bad\"\nat = \"1s\"\n[[message]]\nid = \"g\"\nat = \"7s\"\n");
    assert_eq!(outcome.totals.compensations, 1);
    assert_eq!(value(&outcome, 0), 1);
    assert_eq!(sinkf(&outcome, 0, SinkField::VisibleDuplicates), 0);
    assert_eq!(sinkf(&outcome, 0, SinkField::Missing), 0);
}

/// 28.8's refusals, each at the key.
#[test]
fn s28_8_becomes_is_refused_where_it_cannot_apply() {
    let file = |kind: &str, becomes: &str| {
        format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
             [[sink]]\nname = \"s\"\nkind = \"{kind}\"\nbecomes = {{ kind = \"{becomes}\", at = \"1s\" }}\n"
        )
    };
    refused(
        &file("irreversible", "increment"),
        "an irreversible sink cannot change its write mode",
    );
    refused(
        &file("upsert", "irreversible"),
        "a sink cannot become irreversible",
    );
    refused(
        &file("upsert", "upsert"),
        "`becomes` names the sink's own kind",
    );
    refused(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[sink]]\nname = \"s\"\nkind = \"upsert\"\n[expect.sink.s]\nkind_at_end = \"upsert\"\n",
        "a sink's `kind_at_end` goes with its `becomes`",
    );
}

/// A visibility timer scheduled when a write delivery starts (its end is
/// not known while its calls are in flight: `b` is called when `a`'s
/// reply comes, at 1s) that turns out not to be wanted is no event: w
/// acks at 1s, its 5s timer does nothing, and the queue drains at 1s, so
/// the operator's inspection (wait 0s) redrives p at 1s, not after the
/// timer. The run's 9 events fit `max_events = 9`: the timer is not a
/// tenth.
#[test]
fn a_visibility_timer_not_wanted_after_a_write_is_no_event() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         visibility_timeout = \"5s\"\npermanent = \"quarantine\"\n\
         [[sink]]\nname = \"a\"\nkind = \"increment\"\nlatency = \"1s\"\n\
         [[sink]]\nname = \"b\"\nkind = \"increment\"\n\
         [[message]]\nid = \"w\"\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" }, class = \"permanent\" }]\n\
         [[operator]]\nwait = \"0s\"\nrepair = true\naction = \"redrive_all\"\n\
         [limits]\non_limit = \"stop\"\nmax_events = 9\n");
    assert_eq!(outcome.totals.stopped_by, StoppedBy::Drained as u64);
    let at = |id: &str| {
        outcome
            .messages
            .acked_at(scenario.find_message(id).unwrap())
    };
    assert_eq!(at("w"), Some(1_000));
    // p's redriven delivery writes at 1s and is heard at 2s.
    assert_eq!(at("p"), Some(2_000));
    assert_eq!(outcome.totals.end_time, 2_000);
    assert!(
        !(outcome.transitions.iter()).any(|t| t.detail.kind() == EventKind::VisibleAgain),
        "no timer fired"
    );
}

/// 28.9's worked example: v2 is dead-lettered at 1s, v3..v5 write
/// acct-1 up to version 5 at 4s, and the redrive at 1m4s writes version 2
/// over it. "overwrite": one stale overwrite, the row holds 120 at version
/// 2; "reject": one stale rejection, the row keeps 150 at version 5.
#[test]
fn s28_9_a_redriven_old_version_overwrites_the_row_or_is_rejected() {
    let file = |stale: &str| {
        let mut text = String::from(
            "[log]\npartitions = 1\ncheckpoint_interval = \"1s\"\n\
             [delivery]\nmax_receives = 1\nretry_interval = \"1s\"\npermanent = \"quarantine\"\n",
        );
        text.push_str(&format!(
            "[[sink]]\nname = \"balances\"\nkind = \"upsert\"\nversioned = true\n{stale}"
        ));
        text.push_str(
            "[[message]]\nid = \"v2\"\nat = \"1s\"\nrow = \"acct-1\"\nversion = 2\nvalue = 120\n\
             faults = [{ fail = { until = \"repair\" }, class = \"permanent\" }]\n",
        );
        for (n, at) in [(3, 2), (4, 3), (5, 4)] {
            text.push_str(&format!(
                "[[message]]\nid = \"v{n}\"\nat = \"{at}s\"\nrow = \"acct-1\"\nversion = {n}\nvalue = {}\n",
                100 + 10 * n
            ));
        }
        text.push_str("[[operator]]\nwait = \"1m\"\nrepair = true\naction = \"redrive_all\"\n");
        text
    };
    let row = |scenario: &Scenario, outcome: &Outcome, field| {
        let target = Target::Row {
            sink: 0,
            row: "acct-1".into(),
            field,
        };
        outcome.value(scenario, &target)
    };
    let (scenario, outcome) = sim(&file(""));
    assert_eq!(outcome.totals.drain_time, 4_000);
    assert_eq!(sinkf(&outcome, 0, SinkField::StaleOverwrites), 1);
    assert_eq!(sinkf(&outcome, 0, SinkField::StaleRejections), 0);
    assert_eq!(row(&scenario, &outcome, RowField::Value), Value::Int(120));
    assert_eq!(row(&scenario, &outcome, RowField::Version), Value::Int(2));
    assert_eq!(
        [value(&outcome, 0), sinkf(&outcome, 0, SinkField::Missing)],
        [1, 0]
    );
    let told: Vec<_> = (outcome.transitions.iter())
        .filter(|t| t.detail.kind() == EventKind::StaleOverwrite)
        .map(|t| {
            (
                t.time,
                crate::words::sentence::describe(&scenario, &t.detail),
            )
        })
        .collect();
    assert_eq!(told.len(), 1);
    assert_eq!(told[0].0, 64_000);
    assert!(
        told[0]
            .1
            .contains("wrote version 2 over version 5 of row \"acct-1\""),
        "{}",
        told[0].1
    );
    let (scenario, outcome) = sim(&file("stale_writes = \"reject\"\n"));
    assert_eq!(sinkf(&outcome, 0, SinkField::StaleOverwrites), 0);
    assert_eq!(sinkf(&outcome, 0, SinkField::StaleRejections), 1);
    assert_eq!(row(&scenario, &outcome, RowField::Value), Value::Int(150));
    assert_eq!(row(&scenario, &outcome, RowField::Version), Value::Int(5));
    // 29.2.4: v2's only write was rejected: missing there.
    assert_eq!(sinkf(&outcome, 0, SinkField::Missing), 1);
    assert!(!(outcome.transitions.iter()).any(|t| t.detail.kind() == EventKind::StaleOverwrite));
    let absent = Target::Row {
        sink: 0,
        row: "acct-2".into(),
        field: RowField::Value,
    };
    assert_eq!(outcome.value(&scenario, &absent), Value::Never);
}

/// 28.9's defaults and decision 29.12: the row is the current key, the
/// version the first arrival in ms, the value the version; an equal
/// version overwrites without being stale. A lost ack redelivers "a" at
/// 10s with version 0 (its first arrival) after "b" wrote row "k" at 5s
/// (version 5000): a stale overwrite. Each message's row is its key.
#[test]
fn s28_9_versions_default_to_the_first_arrival_and_rows_to_the_key() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n\
         [[sink]]\nname = \"rows\"\nkind = \"upsert\"\nversioned = true\n\
         [[message]]\nid = \"a\"\nkey = \"k\"\nfaults = [{ lose_ack = { first = 1 } }]\n\
         [[message]]\nid = \"b\"\nkey = \"k\"\nat = \"5s\"\n\
         [[message]]\nid = \"c\"\nat = \"6s\"\n\
         [[message]]\nid = \"d\"\nat = \"7s\"\nrow = \"c\"\nversion = 6000\nvalue = -4\n");
    let row = |name: &str, field| {
        let target = Target::Row {
            sink: 0,
            row: name.into(),
            field,
        };
        outcome.value(&scenario, &target)
    };
    // a at 0 (v0), b at 5s (v5000), a again at 10s: v0 over v5000.
    assert_eq!(row("k", RowField::Version), Value::Int(0));
    assert_eq!(row("k", RowField::Value), Value::Int(0));
    // d writes c's row with an equal version at 7s: not stale.
    assert_eq!(row("c", RowField::Version), Value::Int(6_000));
    assert_eq!(row("c", RowField::Value), Value::Int(-4));
    assert_eq!(sinkf(&outcome, 0, SinkField::StaleOverwrites), 1);
    // Rows k and c, held by a and d: b and c were overwritten, not missing.
    assert_eq!(value(&outcome, 0), 2);
    assert_eq!(sinkf(&outcome, 0, SinkField::Missing), 0);
}

/// 28.9's refusals, each located.
#[test]
fn s28_9_versioned_keys_are_refused_where_they_mean_nothing() {
    let base = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n";
    refused(
        &format!("{base}[[sink]]\nname = \"a\"\nkind = \"increment\"\nversioned = true\n"),
        "`versioned` goes with kind = \"upsert\"",
    );
    refused(
        &format!("{base}[[sink]]\nname = \"a\"\nkind = \"upsert\"\nstale_writes = \"reject\"\n"),
        "`stale_writes` goes with versioned = true",
    );
    refused(
        &format!(
            "{base}[[sink]]\nname = \"a\"\nkind = \"upsert\"\nversioned = true\n\
             becomes = {{ kind = \"increment\", at = \"1s\" }}\n"
        ),
        "a versioned sink cannot change its write mode",
    );
    for key in ["row = \"r\"", "version = 3", "value = 3"] {
        refused(
            &format!(
                "{base}[[sink]]\nname = \"a\"\nkind = \"upsert\"\n[[message]]\nid = \"m\"\n{key}\n"
            ),
            "goes with a versioned sink",
        );
    }
    refused(
        &format!("{base}[[traffic]]\ncount = 2\nover = \"1s\"\nrow = \"r\"\n"),
        "`row` goes with a versioned sink",
    );
    refused(
        &format!(
            "{base}[[sink]]\nname = \"a\"\nkind = \"upsert\"\nversioned = true\n\
             [[message]]\nid = \"m\"\nversion = -1\n"
        ),
        "version",
    );
    refused(
        &format!(
            "{base}[[sink]]\nname = \"a\"\nkind = \"upsert\"\n\
             [expect.sink.a]\nstale_overwrites = 0\n"
        ),
        "a sink's `stale_overwrites` goes with versioned = true",
    );
    refused(
        &format!(
            "{base}[[sink]]\nname = \"a\"\nkind = \"upsert\"\n\
             [expect.sink.a.row.r]\nvalue = 1\n"
        ),
        "goes with versioned = true",
    );
    refused(
        "[log]\npartitions = 1\nguarantee = \"exactly_once\"\n[delivery]\nmax_receives = 1\n\
         retry_interval = \"1s\"\n[[sink]]\nname = \"a\"\nkind = \"upsert\"\nversioned = true\n",
        "a versioned sink is not modeled inside an exactly_once transaction",
    );
    refused(
        &format!(
            "{base}[[sink]]\nname = \"a\"\nkind = \"upsert\"\nversioned = true\n\
             [expect.sink.a.row.\"r\\u0007\"]\nvalue = 1\n"
        ),
        "a row",
    );
}

/// 28.1's first worked example: one write through every strategy.
/// metrics (saga) at 0; ledger's prepare at 0, decided and committed at
/// 10ms; audit (direct) at 10ms, heard at 15ms; sms (direct) at 15ms; the
/// outbox row at 15ms, when the delivery acks and the relay applies it to
/// the lake.
fn every_strategy(audit_faults: &str, ledger_after_audit: bool) -> String {
    let ledger = "[[sink]]\nname = \"ledger\"\nkind = \"upsert\"\nstrategy = \"two_phase\"\n\
                  prepare = true\nlatency = \"10ms\"\n";
    let audit = format!(
        "[[sink]]\nname = \"audit\"\nkind = \"increment\"\nstrategy = \"direct\"\n\
         latency = \"5ms\"\n{audit_faults}"
    );
    let (second, third) = match ledger_after_audit {
        false => (ledger.to_string(), audit),
        true => (audit, ledger.to_string()),
    };
    format!(
        "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\npermanent = \"quarantine\"\n\
         [[sink]]\nname = \"metrics\"\nkind = \"increment\"\nstrategy = \"saga\"\n\
         {second}{third}\
         [[sink]]\nname = \"lake\"\nkind = \"upsert\"\nstrategy = \"outbox\"\n\
         [[sink]]\nname = \"sms\"\nkind = \"irreversible\"\nstrategy = \"direct\"\n\
         [[message]]\nid = \"order-1\"\n"
    )
}

fn by_name(scenario: &Scenario, outcome: &Outcome, name: &str, field: SinkField) -> i64 {
    let k = (scenario.guarantees.sinks.iter()).position(|s| s.name == name);
    sinkf(outcome, k.unwrap() as u32, field)
}

#[test]
fn s28_1_one_write_through_every_strategy() {
    let (scenario, outcome) = sim(&every_strategy("", false));
    let values: Vec<i64> = ["metrics", "ledger", "audit", "lake", "sms"]
        .iter()
        .map(|n| by_name(&scenario, &outcome, n, SinkField::Value))
        .collect();
    assert_eq!(values, [1, 1, 1, 1, 1]);
    assert_eq!(msg(&scenario, &outcome, "order-1").acked_at(), Some(15));
    assert_eq!(outcome.totals.lock_held, 10);
    assert_eq!(outcome.totals.partial_visible, 15);
    assert_eq!(scenario.write.as_ref().unwrap().strategy_name(), "mixed");
}

/// The variant: audit's call fails for good at 10ms, heard at 15ms.
/// metrics is compensated then; ledger keeps its committed row; sms is
/// never called; no outbox row; the failing step is direct: quarantined
/// at 15ms. With ledger after audit, its step is never made.
#[test]
fn s28_1_a_failed_step_compensates_saga_sinks_only_and_writes_no_row() {
    let fails =
        "faults = [{ fail = { first = 1 }, reason = \"constraint\", class = \"permanent\" }]\n";
    let (scenario, outcome) = sim(&every_strategy(fails, false));
    let value = |n| by_name(&scenario, &outcome, n, SinkField::Value);
    assert_eq!(
        ["metrics", "ledger", "audit", "lake", "sms"].map(value),
        [0, 1, 0, 0, 0]
    );
    assert_eq!(outcome.totals.compensations, 1);
    assert_eq!(
        by_name(&scenario, &outcome, "metrics", SinkField::Compensations),
        1
    );
    assert_eq!(by_name(&scenario, &outcome, "lake", SinkField::Missing), 1);
    assert_eq!(outcome.totals.false_notices, 0);
    let order = msg(&scenario, &outcome, "order-1");
    assert_eq!(order.state, State::Quarantined);
    assert_eq!(order.last_quarantined_at(), Some(15));
    let (scenario, outcome) = sim(&every_strategy(fails, true));
    assert_eq!(by_name(&scenario, &outcome, "ledger", SinkField::Value), 0);
    assert_eq!(outcome.totals.lock_held, 0, "its step was never made");
}

/// 28.1's second worked example, at 2,000 events: event-1000 and
/// event-2000's olap rows fail three times and are dead-lettered at
/// t + 2s10ms, heard at t + 2s15ms, when metrics is compensated (with
/// "compensate"). Every event acks at its arrival; the lake keeps every
/// write.
#[test]
fn s28_1_a_dead_lettered_outbox_row_compensates_the_saga_sink_late() {
    let file = |dead_letter: &str| {
        format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
             [write]\nrelay_retry = \"1s\"\nrelay_attempts = 3\noutbox_dead_letter = \"{dead_letter}\"\n\
             [[sink]]\nname = \"metrics\"\nkind = \"increment\"\nstrategy = \"saga\"\n\
             [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nstrategy = \"outbox\"\nlatency = \"5ms\"\n\
             faults = [{{ fail = {{ every = 1000 }}, reason = \"constraint violation\", class = \"permanent\" }}]\n\
             [[sink]]\nname = \"lake\"\nkind = \"upsert\"\nstrategy = \"outbox\"\n\
             [[traffic]]\ncount = 2000\nover = \"2s\"\nid_prefix = \"event-\"\n"
        )
    };
    let (scenario, outcome) = sim(&file("compensate"));
    let value = |n| by_name(&scenario, &outcome, n, SinkField::Value);
    assert_eq!(
        ["metrics", "olap", "lake"].map(value),
        [1_998, 1_998, 2_000]
    );
    assert_eq!(outcome.totals.acked, 2_000);
    assert_eq!(
        (
            outcome.totals.compensations,
            outcome.totals.outbox_dead_letters
        ),
        (2, 2)
    );
    assert_eq!(by_name(&scenario, &outcome, "olap", SinkField::Missing), 2);
    // event-2000 arrives at 1s999ms: compensated at 4s14ms, the last event.
    assert_eq!(outcome.totals.end_time, 1_999 + 2_015);
    // Failed write k (t_k = 1000k - 1) is partial from t_k to the end.
    assert_eq!(outcome.totals.partial_visible, 2 * 4_014 - (999 + 1_999));
    let late: Vec<_> = (outcome.transitions.iter())
        .filter(|t| t.detail.kind() == EventKind::WriteFailedLate)
        .map(|t| (t.time, scenario.message_id(t.message.unwrap()).into_owned()))
        .collect();
    assert_eq!(
        late,
        [(3_014, "event-1000".into()), (4_014, "event-2000".into())]
    );
    let (scenario, outcome) = sim(&file("keep"));
    let value = |n| by_name(&scenario, &outcome, n, SinkField::Value);
    assert_eq!(
        ["metrics", "olap", "lake"].map(value),
        [2_000, 1_998, 2_000]
    );
    assert_eq!(outcome.totals.compensations, 0);
    // The last olap call at 4s9ms is pending until its reply (27.36).
    assert_eq!(outcome.totals.end_time, 4_014);
}

/// 28.1 step 6: with `irreversible_last`, the relay calls the SMS only
/// once the lake's call is heard to succeed (at 7ms); a dead letter of
/// the lake's row withholds it.
#[test]
fn s28_1_irreversible_last_waits_for_the_other_outbox_sinks() {
    let file = |lake_faults: &str| {
        format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
             [write]\nstrategy = \"outbox\"\nrelay_retry = \"1s\"\nrelay_attempts = 2\nirreversible_last = true\n\
             [[sink]]\nname = \"sms\"\nkind = \"irreversible\"\n\
             [[sink]]\nname = \"lake\"\nkind = \"upsert\"\nlatency = \"7ms\"\n{lake_faults}\
             [[message]]\nid = \"m\"\n"
        )
    };
    let (scenario, outcome) = sim(&file(""));
    assert_eq!(by_name(&scenario, &outcome, "sms", SinkField::Value), 1);
    assert_eq!(outcome.totals.notices_withheld, 0);
    // Both shown from 7ms and 0ms: partial from the lake's call to the sms.
    assert_eq!(outcome.totals.partial_visible, 7);
    let (scenario, outcome) = sim(&file("faults = [{ fail = { first = 2 } }]\n"));
    assert_eq!(by_name(&scenario, &outcome, "sms", SinkField::Value), 0);
    assert_eq!(outcome.totals.notices_withheld, 1);
    assert_eq!(outcome.totals.outbox_dead_letters, 1);
    let listed: Vec<Total> = Total::listed(&scenario).collect();
    assert!(listed.contains(&Total::NoticesWithheld));
}

/// 28.1's refusals, each located.
#[test]
fn s28_1_per_sink_strategies_are_refused_where_they_mean_nothing() {
    let base = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n";
    let sink = |name: &str, strategy: &str| {
        format!("[[sink]]\nname = \"{name}\"\nkind = \"increment\"\nstrategy = \"{strategy}\"\n")
    };
    refused(
        &format!("{base}{}", sink("a", "two_phase")),
        "sink \"a\" cannot take part in two-phase commit",
    );
    refused(
        &format!(
            "{base}{}{}[coordinator]\n",
            sink("a", "saga"),
            sink("b", "outbox")
        ),
        "[coordinator] goes with strategy = \"two_phase\"",
    );
    refused(
        &format!(
            "{base}[write]\nstep_attempts = 2\n{}{}",
            sink("a", "direct"),
            sink("b", "outbox")
        ),
        "`step_attempts` goes with strategy = \"saga\"",
    );
    refused(
        &format!(
            "{base}[write]\nrelay_retry = \"2s\"\n{}{}",
            sink("a", "direct"),
            sink("b", "two_phase") + "prepare = true\n"
        ),
        "`relay_retry` goes with",
    );
    refused(
        &format!(
            "{base}[[sink]]\nname = \"a\"\nkind = \"increment\"\nstrategy = \"outbox\"\n\
             faults = [{{ fail = {{ first = 1 }}, compensation = true }}]\n{}",
            sink("b", "saga")
        ),
        "a compensation fault goes with strategy = \"saga\"",
    );
    refused(
        &format!(
            "{base}[write]\noutbox_dead_letter = \"compensate\"\n{}{}",
            sink("a", "direct"),
            sink("b", "outbox")
        ),
        "outbox_dead_letter = \"compensate\" needs an outbox sink and a saga sink",
    );
    refused(
        &format!(
            "{base}[write]\nirreversible_last = true\n{}",
            sink("a", "saga")
        ),
        "irreversible_last needs an irreversible sink",
    );
    refused(
        &format!(
            "{base}[write]\nirreversible_last = true\n{}\
             [[sink]]\nname = \"sms\"\nkind = \"irreversible\"\nstrategy = \"saga\"\n",
            sink("a", "outbox")
        ),
        "every irreversible sink to be outbox too",
    );
    refused(
        &format!(
            "[log]\npartitions = 1\nguarantee = \"exactly_once\"\n{base}{}{}",
            sink("a", "direct"),
            sink("b", "saga")
        ),
        "only strategy = \"direct\" works with guarantee = \"exactly_once\"",
    );
    refused(
        &format!(
            "{base}{}{}[expect.sink.a]\ncompensations = 0\n",
            sink("a", "direct"),
            sink("b", "saga")
        ),
        "a sink's `compensations` goes with [write] strategy = \"saga\"",
    );
    refused(
        &format!(
            "{base}{}{}[expect.sink.a]\nmax_lag = \"0s\"\n",
            sink("a", "direct"),
            sink("b", "outbox")
        ),
        "a sink's `max_lag` goes with [write] strategy = \"outbox\"",
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// A mixed write's steps (28.1) agree with section 24's direct and saga
    /// writes where they must: a file whose irreversible sink is already
    /// last runs the same with `irreversible_last` (which takes the mixed
    /// path) as without, whatever its faults, latencies and strategy.
    #[test]
    fn s28_1_a_plan_of_one_strategy_runs_as_section_24(
        saga in proptest::bool::ANY,
        faults in proptest::collection::vec((0usize..3, 0usize..6), 0..4),
        latencies in proptest::collection::vec(0u64..20, 3),
        lose_ack in proptest::bool::ANY,
    ) {
        let strategy = if saga { "saga" } else { "direct" };
        let fault = |n: usize| match n {
            0 => "{ fail = { first = 1 } }",
            1 => "{ fail = { first = 1 }, class = \"permanent\" }",
            2 => "{ lose_reply = { first = 1 } }",
            3 => "{ fail = { every = 2 } }",
            4 => "{ fail = { intents = [\"m2\"] }, class = \"permanent\" }",
            _ => "{ fail = { first = 2 } }",
        };
        let mut text = format!(
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\npermanent = \"quarantine\"\n\
             [write]\nstrategy = \"{strategy}\"\n{}",
            if saga { "step_attempts = 2\nrelay_attempts = 2\n" } else { "" }
        );
        for (k, (name, kind)) in [("a", "increment"), ("b", "upsert"), ("c", "irreversible")]
            .iter()
            .enumerate()
        {
            let mine: Vec<&str> = (faults.iter()).filter(|f| f.0 == k).map(|f| fault(f.1)).collect();
            text.push_str(&format!(
                "[[sink]]\nname = \"{name}\"\nkind = \"{kind}\"\nlatency = \"{}ms\"\nfaults = [{}]\n",
                latencies[k],
                mine.join(", ")
            ));
        }
        for (m, at) in [("m1", 0), ("m2", 3), ("m3", 5)] {
            text.push_str(&format!("[[message]]\nid = \"{m}\"\nat = \"{at}ms\"\n"));
            if lose_ack && m == "m1" {
                text.push_str("faults = [{ lose_ack = { first = 1 } }]\n");
            }
        }
        let (s1, plain) = sim(&text);
        let (s2, planned) = sim(&text.replace("[write]\n", "[write]\nirreversible_last = true\n"));
        proptest::prop_assert!(s1.write.as_ref().unwrap().plan.is_none());
        proptest::prop_assert!(s2.write.as_ref().unwrap().plan.is_some());
        for &t in Total::ALL.iter() {
            if t != Total::NoticesWithheld {
                proptest::prop_assert_eq!(plain.totals.get(t), planned.totals.get(t), "{}", t.name());
            }
        }
        proptest::prop_assert_eq!(&plain.sinks, &planned.sinks);
        let lines = |s: &Scenario, o: &Outcome| -> Vec<String> {
            o.transitions.iter().map(|t| crate::words::line::line(s, t, 8)).collect()
        };
        proptest::prop_assert_eq!(lines(&s1, &plain), lines(&s2, &planned));
    }
}

/// 28.9: a traffic block's `row` makes every message of the block write
/// that row, each at its first arrival as version and value: the last
/// arrival holds it, and nothing is stale in arrival order.
#[test]
fn s28_9_a_traffic_block_writes_one_row() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[sink]]\nname = \"rows\"\nkind = \"upsert\"\nversioned = true\n\
         [[traffic]]\ncount = 5\nover = \"5s\"\nrow = \"total\"\n");
    let row = |field| {
        let target = Target::Row {
            sink: 0,
            row: "total".into(),
            field,
        };
        outcome.value(&scenario, &target)
    };
    assert_eq!(row(RowField::Version), Value::Int(4_000));
    assert_eq!(row(RowField::Value), Value::Int(4_000));
    assert_eq!(value(&outcome, 0), 1);
    assert_eq!(sinkf(&outcome, 0, SinkField::StaleOverwrites), 0);
    assert_eq!(
        sinkf(&outcome, 0, SinkField::Missing),
        0,
        "overwritten, not missing"
    );
}

/// Section 28.1 with an `every` selector (it numbers intents in the order
/// of their first call to the sink): m2's outbox row is written at 16s,
/// its first relay call to "rows" still ahead, when m3's write commits.
/// m3's calls may not be made ahead of that call (decision 27.35): m2 is
/// the second intent to call "rows", m3 the third, so m3's row is the one
/// dead-lettered, after calls at 18.5s, 19.5s and 20.5s, and the run ends
/// at the last reply. Settled or stepped, the same.
#[test]
fn s28_1_a_relayed_rows_first_call_ahead_keeps_its_place_in_every_numbering() {
    let text = r#"
[delivery]
max_receives = 2
retry_interval = "2s"
[[message]]
id = "m0"
at = "0s"
[[message]]
id = "m1"
at = "0s"
[[message]]
id = "m2"
at = "12s"
faults = [{ fail = { first = 1 }, class = "transient" }]
[[message]]
id = "m3"
at = "16s"
[write]
strategy = "direct"
relay_retry = "1s"
relay_attempts = 3
[[sink]]
name = "rows"
kind = "upsert"
latency = "0ms"
prepare = true
faults = [{ fail = { every = 3 } }]
strategy = "outbox"
[[sink]]
name = "counts"
kind = "increment"
latency = "0ms"
strategy = "direct"
[[sink]]
name = "texts"
kind = "irreversible"
latency = "2500ms"
faults = [{ fail = { intents = ["m0"] } }]
strategy = "direct"
"#;
    let (scenario, all) = sim(text);
    let off = run(&scenario, Recorder::Off).expect("run finishes");
    assert_eq!(all.totals, off.totals);
    assert_eq!(off.totals.end_time, 20_500);
    assert_eq!(off.totals.outbox_dead_letters, 1);
    assert_eq!(off.totals.partial_visible, 46_000);
    // The dead letter is m3's (message 3), for "rows" (sink 0).
    let notes: Vec<String> = all.write_notes.iter().map(|n| format!("{n:?}")).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("DeadLettered { message: 3, sink: 0,")
                && n.contains("last_at: 20500")),
        "{notes:?}"
    );
}
