//! Section 28.6: a producer that appends again when an append's
//! acknowledgement is lost; without idempotence each retry is a duplicate
//! record of the message.

use super::*;

/// 28.6's worked example: o1 at 0 loses its first append's
/// acknowledgement, o2 at 50ms, o3 at 150ms; a counter and an upsert.
fn worked_example(producer: &str, extra: &str) -> String {
    format!(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"1s\"\n\
         [producer]\n{producer}\n{extra}\
         [[sink]]\nname = \"counter\"\nkind = \"increment\"\n\
         [[sink]]\nname = \"rows\"\nkind = \"upsert\"\n\
         [[message]]\nid = \"o1\"\nfaults = [{{ lose_append_ack = {{ first = 1 }} }}]\n\
         [[message]]\nid = \"o2\"\nat = \"50ms\"\n\
         [[message]]\nid = \"o3\"\nat = \"150ms\"\n"
    )
}

/// Each record's message by offset, in partition 0, read from the
/// deliveries.
fn offsets(scenario: &Scenario, outcome: &Outcome) -> Vec<(u64, String)> {
    (outcome.transitions.iter())
        .filter_map(|t| match t.detail {
            Detail::Delivered {
                record: Some(r), ..
            } => Some((r.offset, scenario.message_id(t.message?).to_string())),
            _ => None,
        })
        .collect()
}

#[test]
fn s28_6_a_retry_without_idempotence_appends_a_duplicate_record() {
    let (scenario, outcome) = sim(&worked_example("idempotence = false", ""));
    let expected = [(0, "o1"), (1, "o2"), (2, "o1"), (3, "o3")];
    let expected: Vec<(u64, String)> = expected.iter().map(|&(o, m)| (o, m.to_string())).collect();
    assert_eq!(offsets(&scenario, &outcome), expected);
    let log = outcome.log.as_ref().unwrap();
    assert_eq!(log.partitions[0].0, 4, "end_offset");
    assert_eq!(outcome.totals.producer_retries, 1);
    assert_eq!(outcome.totals.appended_duplicates, 1);
    assert_eq!(outcome.sink_value(0, SinkField::Value), 4);
    assert_eq!(outcome.sink_value(0, SinkField::VisibleDuplicates), 1);
    assert_eq!(outcome.sink_value(1, SinkField::Value), 3);
    assert_eq!(outcome.sink_value(1, SinkField::VisibleDuplicates), 0);
    // The message's counts sum over its records; it is counted once.
    let o1 = msg(&scenario, &outcome, "o1");
    assert_eq!(
        (o1.total_receives, o1.effects, o1.state),
        (2, 2, State::Acked)
    );
    assert_eq!(outcome.totals.acked, 3);
    assert_eq!(outcome.totals.deliveries, 4);
    let retried = (outcome.transitions.iter())
        .find(|t| t.detail.kind() == EventKind::AppendRetried)
        .expect("a retry");
    assert_eq!(retried.time, 100);
    assert_eq!(
        crate::words::sentence::describe(&scenario, &retried.detail),
        "append retried by the producer, its acknowledgement lost: a duplicate record (partition 0, offset 2)"
    );
}

#[test]
fn s28_6_deduplication_absorbs_the_duplicate_record() {
    let (scenario, outcome) = sim(&worked_example(
        "idempotence = false",
        "[dedup]\nresult_retention = \"1d\"\n",
    ));
    assert_eq!(outcome.sink_value(0, SinkField::Value), 3);
    assert_eq!(msg(&scenario, &outcome, "o1").dedup_hits, 1);
}

#[test]
fn s28_6_an_idempotent_producer_appends_nothing_again() {
    // The default is Kafka's: idempotence on.
    for producer in ["idempotence = true", ""] {
        let (scenario, outcome) = sim(&worked_example(producer, ""));
        let expected: Vec<(u64, String)> = [(0, "o1"), (1, "o2"), (2, "o3")]
            .iter()
            .map(|&(o, m)| (o, m.to_string()))
            .collect();
        assert_eq!(offsets(&scenario, &outcome), expected);
        assert_eq!(outcome.log.as_ref().unwrap().partitions[0].0, 3);
        assert_eq!(outcome.totals.producer_retries, 1);
        assert_eq!(outcome.totals.appended_duplicates, 0);
        assert_eq!(outcome.sink_value(0, SinkField::Value), 3);
    }
}

/// `first = N`: N retries, `retry_backoff` apart from the arrival, each a
/// duplicate at the end of the partition of the first record.
#[test]
fn s28_6_the_k_th_retry_comes_k_backoffs_after_the_arrival() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\n\
         [producer]\nidempotence = false\nretry_backoff = \"2s\"\n\
         [[message]]\nid = \"a\"\nat = \"1s\"\nfaults = [{ lose_append_ack = { first = 3 } }]\n");
    let retries: Vec<Millis> = (outcome.transitions.iter())
        .filter(|t| t.detail.kind() == EventKind::AppendRetried)
        .map(|t| t.time)
        .collect();
    assert_eq!(retries, vec![3_000, 5_000, 7_000]);
    assert_eq!(
        deliveries_of(&scenario, &outcome, "a"),
        vec![1_000, 3_000, 5_000, 7_000]
    );
    assert_eq!(outcome.totals.appended_duplicates, 3);
    assert_eq!(outcome.totals.end_time, 7_000);
}

/// A message's state is that of its record processed last: a duplicate
/// processed after the first record was quarantined takes it out of
/// quarantine; one dead-lettered itself has its own event time.
#[test]
fn s28_6_the_state_is_the_last_processed_record_s() {
    let text = |fault: &str| {
        format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
             [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\n\
             [producer]\nidempotence = false\n\
             [[message]]\nid = \"a\"\n\
             faults = [{{ lose_append_ack = {{ first = 1 }} }}, {{ fail = {fault} }}]\n"
        )
    };
    // The first delivery fails (quarantined at 0), the duplicate's acks.
    let (scenario, outcome) = sim(&text("{ first = 1 }"));
    let a = msg(&scenario, &outcome, "a");
    assert_eq!((a.state, a.total_receives), (State::Acked, 2));
    assert_eq!(outcome.totals.quarantined, 0);
    assert_eq!(outcome.totals.acked, 1);
    assert_eq!(outcome.totals.quarantine_entries, 1);
    // Both fail: dead-lettered again from the duplicate, at offset 1, with
    // the duplicate's append time as its event time.
    let (scenario, outcome) = sim(&text("{ until = \"repair\" }"));
    let m = scenario.find_message("a").unwrap();
    assert_eq!(msg(&scenario, &outcome, "a").state, State::Quarantined);
    assert_eq!(outcome.totals.quarantined, 1);
    let field = |f| outcome.envelope_value(&scenario, m, f);
    assert_eq!(field(EnvelopeField::Offset), Value::Int(1));
    assert_eq!(field(EnvelopeField::EventTime), Value::Time(100));
    assert_eq!(field(EnvelopeField::QuarantinedAt), Value::Time(100));
}

/// A duplicate after a done record starts a fresh attempt, even with
/// carry_attempts (its record's attempt is its own).
#[test]
fn s28_6_a_duplicate_starts_a_fresh_attempt() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 2\nretry_interval = \"10ms\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\ncarry_attempts = true\n\
         [producer]\nidempotence = false\n\
         [[message]]\nid = \"a\"\n\
         faults = [{ lose_append_ack = { first = 1 } }, { fail = { first = 1 } }]\n");
    // 0s fails, 10ms acked (receive 2); the duplicate at 100ms: receive 1.
    let a = msg(&scenario, &outcome, "a");
    assert_eq!(
        (a.state, a.cycle_receives, a.total_receives),
        (State::Acked, 1, 3)
    );
}

#[test]
fn s28_6_producer_keys_are_refused_where_they_cannot_apply() {
    let queue = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n";
    let log = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
               [log]\ncheckpoint_interval = \"1s\"\n";
    refused(
        &format!("{queue}[producer]\nidempotence = false\n"),
        "[producer] needs [log]",
    );
    refused(
        &format!(
            "{queue}[[message]]\nid = \"a\"\nfaults = [{{ lose_append_ack = {{ first = 1 }} }}]\n"
        ),
        "`lose_append_ack` needs [log]",
    );
    refused(
        &format!(
            "{log}[[message]]\nid = \"a\"\nfaults = [{{ lose_append_ack = {{ until = \"repair\" }} }}]\n"
        ),
        "`lose_append_ack` takes { first = N }",
    );
    refused(
        &format!(
            "{log}[[message]]\nid = \"a\"\nfaults = [{{ lose_append_ack = {{ first = 0 }} }}]\n"
        ),
        "first",
    );
    refused(
        &format!(
            "{log}[[message]]\nid = \"a\"\nfaults = [{{ lose_append_ack = {{ first = 1 }}, reason = \"x\" }}]\n"
        ),
        "`reason` does not go with `lose_append_ack`",
    );
    refused(
        &format!(
            "{log}[[message]]\nid = \"a\"\nfaults = [{{ lose_append_ack = {{ first = 1 }}, fail = {{ first = 1 }} }}]\n"
        ),
        "a fault names both",
    );
    refused(
        &format!(
            "{log}[[traffic]]\ncount = 10\nover = \"10s\"\n\
             [[traffic.mix]]\nname = \"k\"\nshare = 0.5\nfaults = [{{ lose_append_ack = {{ first = 1 }} }}]\n"
        ),
        "not a mix kind",
    );
    refused(
        &format!("{log}[producer]\nretry_backoff = \"0s\"\n"),
        "at least 1ms",
    );
}

/// The producer's measures are listed where the file writes a producer,
/// and every other file keeps its list.
#[test]
fn s28_6_the_producer_s_measures_are_listed_where_written() {
    let listed = |text: &str| {
        let (scenario, _) = load_str("t.toml", text).expect("valid");
        Total::listed(&scenario).any(|t| t == Total::ProducerRetries)
    };
    assert!(listed(&worked_example("", "")));
    let log = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
               [log]\ncheckpoint_interval = \"1s\"\n[[message]]\nid = \"a\"\n";
    assert!(!listed(log));
    // A traffic block's fault: each message of the block retries.
    let (_, outcome) = sim(&format!(
        "{log}[producer]\nidempotence = false\n\
         [[traffic]]\ncount = 4\nover = \"4s\"\nfaults = [{{ lose_append_ack = {{ first = 2 }} }}]\n"
    ));
    assert_eq!(outcome.totals.producer_retries, 8);
    assert_eq!(outcome.totals.appended_duplicates, 8);
    assert_eq!(outcome.totals.deliveries, 1 + 4 * 3);
}

/// A message with several records is counted once, by the record
/// processed last: a duplicate processed after its first record was
/// skipped takes the message out of `skipped`; a duplicate skipped after
/// its first record was acked leaves it acked (decision 29.2.2). The
/// skipped records are counted as records either way.
#[test]
fn s28_6_a_skipped_record_of_a_message_with_duplicates() {
    // The first record fails in an outage, is skipped by a restart that
    // resumes past it (at_most_once committed it); the duplicate acks.
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 3\nretry_interval = \"2s\"\n\
         [log]\nguarantee = \"at_most_once\"\n[producer]\nidempotence = false\n\
         [[outage]]\nfrom = \"13s\"\nduration = \"3s\"\n\
         [[restart]]\nat = \"15s\"\n\
         [[message]]\nid = \"m0\"\nat = \"13s\"\nfaults = [{ lose_append_ack = { first = 1 } }]\n");
    let m0 = msg(&scenario, &outcome, "m0");
    assert_eq!((m0.state, m0.last_reason().is_some()), (State::Acked, true));
    let t = &outcome.totals;
    assert_eq!((t.acked, t.skipped, t.pending), (1, 1, 0));
    assert_eq!(m0.acked_at(), Some(17_000));
    // The first record acks; the duplicate, appended at 5s while the
    // consumer is down, is skipped by a reset to the log end at 6s.
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"10s\"\n\
         [producer]\nidempotence = false\nretry_backoff = \"5s\"\n\
         [[restart]]\nat = \"1s\"\ndown_for = \"10s\"\n\
         [[restart]]\nat = \"6s\"\nresume = \"latest\"\n\
         [[message]]\nid = \"m0\"\nfaults = [{ lose_append_ack = { first = 1 } }]\n");
    let m0 = msg(&scenario, &outcome, "m0");
    assert_eq!((m0.state, m0.total_receives), (State::Acked, 1));
    let t = &outcome.totals;
    assert_eq!((t.acked, t.skipped, t.pending), (1, 1, 0));
}
