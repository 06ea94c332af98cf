//! One test per rule of docs/model.md section 23 and decisions 26.1-26.4,
//! 26.12 and 27.9-27.17, 27.26: a partitioned log as the source.

use super::*;

fn log_of(outcome: &Outcome) -> &LogOutcome {
    outcome.log.as_ref().expect("a log run")
}

fn sink(outcome: &Outcome, k: u32, field: SinkField) -> i64 {
    outcome.sink_value(k, field)
}

/// `count` records of one partition, one a second from 0s, each taking
/// `service` to process, with `rest` after the `[log]` table.
fn steady(count: u64, service: &str, log: &str, rest: &str) -> (Scenario, Outcome) {
    sim(&format!(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\nservice_time = \"{service}\"\n{log}\n\
         [[traffic]]\ncount = {count}\nover = \"{count}s\"\nid_prefix = \"r\"\n{rest}"
    ))
}

fn resume_positions(outcome: &Outcome, r: usize) -> Vec<u64> {
    log_of(outcome).restarts[r].resume_positions.clone()
}

#[test]
fn s23_kafka_s_default_partitioner_places_each_key() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\npartitions = 3\ncheckpoint_interval = \"1s\"\n\
         [[message]]\nid = \"a\"\nkey = \"21\"\n\
         [[message]]\nid = \"b\"\nkey = \"foobar\"\n\
         [[message]]\nid = \"c\"\nkey = \"abc\"\n\
         [[message]]\nid = \"d\"\nkey = \"abc\"\npartition = 0\n\
         [[traffic]]\ncount = 50\nover = \"1s\"\n");
    let log = log_of(&outcome);
    for (m, &p) in log.partition_of.iter().enumerate() {
        let m = m as MessageIndex;
        let id = scenario.message_id(m);
        let want = match id.as_ref() {
            "a" => partition_of("21", 3),
            "b" => partition_of("foobar", 3),
            "c" => partition_of("abc", 3),
            "d" => 0,
            other => partition_of(other, 3),
        };
        assert_eq!(u32::from(p), want, "{id}");
    }
    // toPositive(-973932308) = 1173551340.
    assert_eq!(partition_of("21", 3), 1_173_551_340 % 3);
    let ends: u64 = log.partitions.iter().map(|p| p.0).sum();
    assert_eq!(ends, 54, "every record is appended once");
}

#[test]
fn s23_offsets_count_per_partition_in_append_order() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\npartitions = 2\ncheckpoint_interval = \"1s\"\nservice_time = \"10s\"\n\
         [[message]]\nid = \"x\"\nat = \"2s\"\npartition = 1\n\
         [[message]]\nid = \"y\"\nat = \"1s\"\npartition = 1\n\
         [[message]]\nid = \"z\"\nat = \"1s\"\npartition = 1\n\
         [[message]]\nid = \"w\"\npartition = 0\n");
    assert_eq!(log_of(&outcome).partitions[0].0, 1);
    assert_eq!(log_of(&outcome).partitions[1].0, 3);
    // Offsets of partition 1: y (1s), z (1s, after y in file order), x.
    let acked = |id| msg(&scenario, &outcome, id).acked_at();
    assert_eq!(acked("y"), Some(11_000));
    assert_eq!(acked("z"), Some(21_000));
    assert_eq!(acked("x"), Some(31_000));
    // Partitions run concurrently.
    assert_eq!(acked("w"), Some(10_000));
}

#[test]
fn s23_a_failed_record_is_retried_in_place_and_the_partition_waits() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 5\nretry_interval = \"5s\"\n\
         [log]\ncheckpoint_interval = \"1s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 2 } }]\n\
         [[message]]\nid = \"b\"\n");
    assert_eq!(msg(&scenario, &outcome, "a").acked_at(), Some(10_000));
    assert_eq!(msg(&scenario, &outcome, "b").acked_at(), Some(10_000));
    // b waited behind a: its one delivery is at 10s.
    let b = story(&scenario, &outcome, "b");
    assert_eq!(b.first(), Some(&(10_000, EventKind::Delivered)));
}

#[test]
fn s23_a_dead_lettered_record_moves_the_partition_on() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 2\nretry_interval = \"5s\"\n\
         [log]\ncheckpoint_interval = \"1s\"\n\
         [[message]]\nid = \"poison\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"b\"\n");
    assert_eq!(msg(&scenario, &outcome, "poison").state, State::Quarantined);
    assert_eq!(msg(&scenario, &outcome, "b").acked_at(), Some(5_000));
    assert_eq!(log_of(&outcome).partitions[0], (2, 2));
}

#[test]
fn s23_at_least_once_commits_every_position_at_each_checkpoint() {
    // Records done at 1s, 2s, ... 10s; checkpoints every 4s: at 4s, 8s;
    // the run ends at 10s, so the last checkpoint is at 8s with the 8
    // records done by then (the one done at 8s included: after the
    // instant's events).
    let (_, outcome) = steady(10, "1s", "checkpoint_interval = \"4s\"", "");
    let log = log_of(&outcome);
    assert_eq!(log.partitions[0], (10, 8));
    assert_eq!(log.checkpoints, 2);
    assert_eq!(log.last_checkpoint, Some(8_000));
    // One exactly at the end is included.
    let (_, outcome) = steady(10, "1s", "checkpoint_interval = \"5s\"", "");
    assert_eq!(log_of(&outcome).partitions[0], (10, 10));
}

#[test]
fn s23_at_most_once_commits_when_the_first_delivery_of_the_attempt_starts() {
    // The last record starts at 9s and ends at 10s: committed past it.
    let (_, outcome) = steady(10, "1s", "guarantee = \"at_most_once\"", "");
    assert_eq!(log_of(&outcome).partitions[0], (10, 10));
    // A record failing its first delivery is committed past at once: a
    // restart while it waits for its retry skips it, and it is missing
    // (decisions 26.3, 27.10).
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n\
         [log]\nguarantee = \"at_most_once\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[message]]\nid = \"b\"\n\
         [[restart]]\nat = \"5s\"\n");
    assert_eq!(resume_positions(&outcome, 0), vec![1]);
    assert_eq!(outcome.totals.skipped, 1);
    assert_eq!(msg(&scenario, &outcome, "a").effects, 0);
    assert_eq!(msg(&scenario, &outcome, "b").acked_at(), Some(5_000));
    assert_eq!(sink(&outcome, 0, SinkField::Missing), 1);
    assert_eq!(log_of(&outcome).restarts[0].checkpoint_time, None);
    // The retry was cancelled: the run ends at the restart, not at 10s.
    assert_eq!(outcome.totals.end_time, 5_000);
}

#[test]
fn s23_a_stale_resume_reprocesses_every_record_done_after_its_checkpoint() {
    // 30 records, 1 a second, 1s each; checkpoints every 10s; a restart at
    // 25s from the checkpoint at or before 15s (10s, position 10).
    let (_, outcome) = steady(
        30,
        "1s",
        "checkpoint_interval = \"10s\"",
        "[[restart]]\nat = \"25s\"\nresume = \"stale\"\ncheckpoint_age = \"10s\"\n\
         [[sink]]\nname = \"rows\"\nkind = \"upsert\"\n\
         [[sink]]\nname = \"appends\"\nkind = \"increment\"\n",
    );
    assert_eq!(resume_positions(&outcome, 0), vec![10]);
    assert_eq!(log_of(&outcome).restarts[0].checkpoint_time, Some(10_000));
    assert_eq!(log_of(&outcome).restarts[0].positions_before, vec![25]);
    // Records 10..24 (done) are processed again: 15 reprocessed
    // deliveries; r26, in flight at the restart, has its effect twice too.
    assert_eq!(outcome.totals.reprocessed, 15);
    assert_eq!(outcome.totals.effects, 46);
    assert_eq!(sink(&outcome, 1, SinkField::VisibleDuplicates), 16);
    assert_eq!(sink(&outcome, 1, SinkField::MaxPerIntent), 2);
    // An upsert absorbs them.
    assert_eq!(sink(&outcome, 0, SinkField::VisibleDuplicates), 0);
    assert_eq!(sink(&outcome, 0, SinkField::MaxPerIntent), 1);
    assert_eq!(outcome.totals.max_lag, 16);
}

#[test]
fn s23_committed_earliest_and_latest_resume_positions() {
    let rest = |resume: &str| {
        format!("[[restart]]\nat = \"25s\"\nresume = \"{resume}\"\ndown_for = \"100s\"\n")
    };
    let interval = "checkpoint_interval = \"10s\"";
    // Committed: the checkpoint at 20s (position 20).
    let (_, outcome) = steady(30, "1s", interval, &rest("committed"));
    assert_eq!(resume_positions(&outcome, 0), vec![20]);
    assert_eq!(log_of(&outcome).restarts[0].checkpoint_time, Some(20_000));
    let (_, outcome) = steady(30, "1s", interval, &rest("earliest"));
    assert_eq!(resume_positions(&outcome, 0), vec![0]);
    assert_eq!(outcome.totals.reprocessed, 25);
    assert_eq!(log_of(&outcome).restarts[0].checkpoint_time, None);
    // Latest: the log end at 25s (r26 arrived at 25s: decision 27.26),
    // so r26, in flight and never done, is skipped; r27..r30 arrive while
    // the consumer is down and are processed at 125s.
    let (_, outcome) = steady(30, "1s", interval, &rest("latest"));
    assert_eq!(resume_positions(&outcome, 0), vec![26]);
    assert_eq!(outcome.totals.skipped, 1);
    assert_eq!(outcome.totals.end_time, 129_000);
    // Lag is measured against the resume position while down: at 29s,
    // 4 records appended past it.
    assert_eq!(outcome.totals.max_lag, 4);
}

#[test]
fn s23_skip_passes_over_records_never_done_and_is_capped_at_the_log_end() {
    // Committed at 20s is position 20; the restart at 25s skips 3 more:
    // records 20..22 were done (kept), 23..25 are reprocessed.
    let interval = "checkpoint_interval = \"10s\"";
    let (_, outcome) = steady(30, "1s", interval, "[[restart]]\nat = \"25s\"\nskip = 3\n");
    assert_eq!(resume_positions(&outcome, 0), vec![23]);
    assert_eq!(outcome.totals.skipped, 0);
    assert_eq!(outcome.totals.reprocessed, 2);
    // A skip past the records never done: skipped.
    let (_, outcome) = steady(30, "1s", interval, "[[restart]]\nat = \"25s\"\nskip = 8\n");
    assert_eq!(resume_positions(&outcome, 0), vec![26]);
    assert_eq!(outcome.totals.skipped, 1, "r26, in flight");
    // A skipped record's message is passed over, not pending: the run
    // drains.
    assert_eq!(outcome.totals.pending, 0);
    assert_eq!(outcome.totals.stopped_by, StoppedBy::Drained as u64);
    // Capped at the log end at the restart (decision 26.12).
    let (_, outcome) = steady(
        30,
        "1s",
        interval,
        "[[restart]]\nat = \"25s\"\nskip = 1000\n",
    );
    assert_eq!(resume_positions(&outcome, 0), vec![26]);
    assert_eq!(log_of(&outcome).partitions[0].0, 30);
    // r26's effect was decided when its delivery started: it stays
    // (decision 27.10), so nothing is missing.
    assert_eq!(sink(&outcome, 0, SinkField::Missing), 0);
}

#[test]
fn s23_a_checkpoint_at_the_restart_s_instant_is_taken_before_it() {
    // Checkpoint at 20s, restart at 20s: the record done at 20s is in
    // the checkpoint (position 20), so nothing is reprocessed but r21,
    // which started at 20s.
    let (_, outcome) = steady(
        30,
        "1s",
        "checkpoint_interval = \"10s\"",
        "[[restart]]\nat = \"20s\"\n",
    );
    assert_eq!(resume_positions(&outcome, 0), vec![20]);
    assert_eq!(log_of(&outcome).restarts[0].checkpoint_time, Some(20_000));
    assert_eq!(outcome.totals.reprocessed, 0);
    assert_eq!(outcome.totals.effects, 31);
}

#[test]
fn s23_a_reprocessed_record_starts_a_fresh_attempt() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"100s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[restart]]\nat = \"5s\"\nresume = \"earliest\"\n");
    let a = msg(&scenario, &outcome, "a");
    // Acked at 1s on its second receive, processed again at 5s: one
    // receive of the new attempt, three in total, same cycle.
    assert_eq!((a.cycle, a.cycle_receives, a.total_receives), (1, 1, 3));
    assert_eq!(a.acked_at(), Some(5_000));
    assert_eq!(outcome.totals.reprocessed, 1);
    assert_eq!(outcome.totals.acked, 1);
}

#[test]
fn s23_a_restart_during_a_retry_wait_cancels_the_retry() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n\
         [log]\ncheckpoint_interval = \"100s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[restart]]\nat = \"3s\"\n");
    let a = msg(&scenario, &outcome, "a");
    // Processed again at 3s (fresh attempt, receive 2 of its life: the
    // fault is over); the retry due at 10s never happens.
    assert_eq!(a.acked_at(), Some(3_000));
    assert_eq!(a.total_receives, 2);
    assert_eq!(outcome.totals.end_time, 3_000);
    assert_eq!(outcome.totals.deliveries, 2);
}

#[test]
fn s23_a_restart_while_down_replaces_the_pending_resume() {
    let (_, outcome) = steady(
        10,
        "1s",
        "checkpoint_interval = \"100s\"",
        "[[restart]]\nat = \"3s\"\ndown_for = \"100s\"\n\
         [[restart]]\nat = \"5s\"\ndown_for = \"5s\"\n",
    );
    // Down from 3s; the second restart at 5s resumes at 10s, not 103s.
    // No checkpoint: both resume at 0; 10 records from 10s.
    assert_eq!(resume_positions(&outcome, 1), vec![0]);
    assert_eq!(outcome.totals.end_time, 20_000);
    assert_eq!(outcome.totals.reprocessed, 3);
}

/// 27.31: a done record being processed again when a later restart
/// resumes past it keeps its outcome, and is counted so.
#[test]
fn r27_31_a_done_record_passed_over_while_reprocessed_keeps_its_outcome() {
    let restarts = "[[restart]]\nat = \"4s\"\nresume = \"earliest\"\n\
                    [[restart]]\nat = \"4500ms\"\nresume = \"latest\"\n";
    let (scenario, outcome) = steady(10, "1s", "checkpoint_interval = \"100s\"", restarts);
    // r1-r4 done by 4s and r5 started; the restart at 4s abandons r5 and
    // starts over: r1 is processed again from 4s. At 4.5s the second
    // restart resumes at the log end (5): r1 keeps its ack, r5 (never
    // done) is skipped, r6-r10 are done as they come.
    let r1 = scenario.find_message("r1").unwrap();
    assert_eq!(outcome.messages.state(r1), State::Acked);
    assert_eq!(outcome.totals.acked, 9);
    assert_eq!(outcome.totals.skipped, 1);
    assert_eq!(outcome.totals.effects, 11);
    // Also when its attempt was abandoned by an earlier restart that
    // resumed below it: at 4.5s r1's attempt is abandoned and the
    // partition is down until 6.5s; at 5.5s a restart resumes at the log
    // end (6) while r1 waits to be processed again. r1 stays acked; r5
    // and r6, never done, are skipped; r7-r10 are done from 6s.
    let restarts_while_down = "[[restart]]\nat = \"4s\"\nresume = \"earliest\"\n\
                    [[restart]]\nat = \"4500ms\"\nresume = \"earliest\"\ndown_for = \"2s\"\n\
                    [[restart]]\nat = \"5500ms\"\nresume = \"latest\"\n";
    let (scenario, outcome) = steady(
        10,
        "1s",
        "checkpoint_interval = \"100s\"",
        restarts_while_down,
    );
    let r1 = scenario.find_message("r1").unwrap();
    assert_eq!(outcome.messages.state(r1), State::Acked);
    assert_eq!(outcome.totals.acked, 8);
    assert_eq!(outcome.totals.skipped, 2);
    // A quarantined record goes back to quarantine.
    let (scenario, outcome) = sim(&format!(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\nservice_time = \"1s\"\ncheckpoint_interval = \"100s\"\n\
         [[message]]\nid = \"bad\"\nfaults = [{{ fail = {{ first = 1 }} }}]\n\
         [[traffic]]\ncount = 9\nstart = \"1s\"\nover = \"9s\"\nid_prefix = \"r\"\n{restarts}"
    ));
    let bad = scenario.find_message("bad").unwrap();
    assert_eq!(outcome.messages.state(bad), State::Quarantined);
    assert_eq!(outcome.totals.quarantined, 1);
    assert_eq!(outcome.totals.acked, 8);
}

/// 27.32: a restart at the instant an earlier restart's resume is due
/// runs after that resume.
#[test]
fn r27_32_a_restart_at_a_resume_s_instant_runs_after_the_resume() {
    let (_, outcome) = steady(
        10,
        "1s",
        "checkpoint_interval = \"100s\"",
        "[[restart]]\nat = \"3s\"\ndown_for = \"2s\"\n[[restart]]\nat = \"5s\"\n",
    );
    // r1-r3 done by 3s and r4 started (4 effects); the restart at 3s
    // abandons r4 and resumes at 0 at 5s. At 5s the resume comes first:
    // r1 starts (effect 5), then the restart abandons it and resumes at
    // 0 at once: r1 to r10 from 5s (10 more effects), the last done at
    // 15s. Dropping the resume instead would make 14 effects.
    assert_eq!(outcome.totals.effects, 15);
    assert_eq!(outcome.totals.deliveries, 15);
    assert_eq!(resume_positions(&outcome, 1), vec![0]);
    assert_eq!(outcome.totals.end_time, 15_000);
}

#[test]
fn s23_a_skipped_record_is_pending_again_when_a_later_restart_resumes_below_it() {
    let (_, outcome) = steady(
        10,
        "1s",
        "checkpoint_interval = \"100s\"",
        "[[restart]]\nat = \"3s\"\nresume = \"latest\"\ndown_for = \"1s\"\n\
         [[restart]]\nat = \"6s\"\nresume = \"earliest\"\n",
    );
    // At 3s r4 is in flight and skipped; at 6s processing starts over.
    assert_eq!(log_of(&outcome).restarts[0].skipped, 1);
    assert_eq!(outcome.totals.skipped, 0);
    assert_eq!(outcome.totals.acked, 10);
}

#[test]
fn s23_a_dead_lettered_record_processed_again_leaves_quarantine() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"100s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[restart]]\nat = \"5s\"\nresume = \"earliest\"\n");
    let a = msg(&scenario, &outcome, "a");
    assert_eq!(a.state, State::Acked);
    assert_eq!(a.quarantine_entries, 1);
    assert_eq!(outcome.totals.quarantined, 0);
    assert_eq!(outcome.totals.quarantine_entries, 1);
}

#[test]
fn s23_exactly_once_aborts_the_open_transaction_at_a_restart() {
    // Checkpoints every 10s; the restart at 25s aborts the writes of
    // r21..r25 (done after 20s) and of r26 (in flight); they are
    // processed again and become visible at the next checkpoint.
    let (_, outcome) = steady(
        30,
        "1s",
        "guarantee = \"exactly_once\"\ncheckpoint_interval = \"10s\"",
        "[[restart]]\nat = \"25s\"\n\
         [[sink]]\nname = \"appends\"\nkind = \"increment\"\n",
    );
    assert_eq!(outcome.totals.aborted_effects, 6);
    assert_eq!(outcome.totals.effects, 36);
    assert_eq!(sink(&outcome, 0, SinkField::Value), 30);
    assert_eq!(sink(&outcome, 0, SinkField::VisibleDuplicates), 0);
    assert_eq!(sink(&outcome, 0, SinkField::MaxPerIntent), 1);
    assert_eq!(sink(&outcome, 0, SinkField::Missing), 0);
}

#[test]
fn s23_the_dedup_store_is_outside_the_exactly_once_transaction() {
    // r21..r25's results are stored; after the abort their reprocessing
    // hits the store, so their writes never become visible (decision
    // 27.15). r26's result was stored too (the store answered at its
    // start).
    let (_, outcome) = steady(
        30,
        "1s",
        "guarantee = \"exactly_once\"\ncheckpoint_interval = \"10s\"",
        "[dedup]\n[[restart]]\nat = \"25s\"\n",
    );
    assert_eq!(outcome.totals.dedup_hits, 6);
    assert_eq!(sink(&outcome, 0, SinkField::Missing), 6);
    assert_eq!(sink(&outcome, 0, SinkField::Value), 24);
}

#[test]
fn s23_records_arriving_while_down_are_appended_and_lag_grows() {
    let (_, outcome) = steady(
        10,
        "0s",
        "checkpoint_interval = \"1s\"",
        "[[restart]]\nat = \"2s\"\ndown_for = \"5s\"\n",
    );
    // Down from 2s to 7s; records of 3s..6s wait (4), the one of 7s
    // arrives at the resume's instant, before it.
    assert_eq!(outcome.totals.max_lag, 4);
    assert_eq!(outcome.totals.acked, 10);
    assert_eq!(log_of(&outcome).partitions[0], (10, 10));
}

#[test]
fn s23_a_restart_after_the_log_drained_extends_the_run() {
    let (_, outcome) = steady(
        3,
        "1s",
        "checkpoint_interval = \"1s\"",
        "[[restart]]\nat = \"50s\"\nresume = \"latest\"\n",
    );
    assert_eq!(outcome.totals.end_time, 50_000);
    // The log's drain time is its last delivery's end.
    assert_eq!(outcome.totals.drain_time, 3_000);
}

#[test]
fn s23_a_redriven_record_is_appended_again() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\npartitions = 4\ncheckpoint_interval = \"1s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[operator]]\nwait = \"10s\"\nrepair = true\naction = \"redrive_all\"\nidentity = \"new\"\n");
    let a = msg(&scenario, &outcome, "a");
    assert_eq!((a.state, a.cycle), (State::Acked, 2));
    let log = log_of(&outcome);
    let ends: u64 = log.partitions.iter().map(|p| p.0).sum();
    assert_eq!(ends, 2, "two records of one message");
    assert_eq!(u32::from(log.partition_of[0]), partition_of("a~r1", 4));
    assert_eq!(a.acked_at(), Some(10_000));
    // The transcript names the record it is appended as (28.13), and the
    // delivery of that record names it too.
    let p = partition_of("a~r1", 4);
    let at = |kind| {
        let t = outcome.transitions.iter().find(|t| t.detail.kind() == kind);
        crate::words::sentence::describe(&scenario, &t.unwrap().detail)
    };
    let first = partition_of("a", 4);
    let offset = u64::from(first == p);
    assert_eq!(
        at(EventKind::Redriven),
        format!("redriven: cycle 2, key a~r1, appended at partition {p}, offset {offset}")
    );
    let mut last = outcome.transitions.iter().rev();
    let delivered = last.find(|t| t.detail.kind() == EventKind::Delivered);
    assert_eq!(
        delivered.unwrap().detail.partition(),
        Some(p),
        "the second delivery is of the redriven record"
    );
}

#[test]
fn s23_with_no_service_time_a_partition_processes_every_available_record_at_once() {
    let (_, outcome) = steady(
        5,
        "0s",
        "checkpoint_interval = \"1s\"",
        "[[restart]]\nat = \"10s\"\nresume = \"earliest\"\n",
    );
    assert_eq!(outcome.totals.reprocessed, 5);
    assert_eq!(outcome.totals.end_time, 10_000);
    assert_eq!(log_of(&outcome).partitions[0], (5, 5));
}

#[test]
fn s23_one_partition_restarts_while_the_others_go_on() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\npartitions = 2\ncheckpoint_interval = \"100s\"\nservice_time = \"1s\"\n\
         [[message]]\nid = \"a\"\npartition = 0\n\
         [[message]]\nid = \"b\"\npartition = 1\n\
         [[restart]]\nat = \"5s\"\npartition = 1\nresume = \"earliest\"\n");
    let r = &log_of(&outcome).restarts[0];
    assert_eq!(
        (r.partitions.clone(), r.resume_positions.clone()),
        (vec![1], vec![0])
    );
    assert_eq!(outcome.totals.reprocessed, 1);
}

#[test]
fn s19_missing_and_max_per_intent_hold_for_queue_runs_too() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[message]]\nid = \"b\"\nkey = \"k\"\n\
         [[message]]\nid = \"c\"\nkey = \"k\"\n\
         [[sink]]\nname = \"rows\"\nkind = \"upsert\"\n\
         [[sink]]\nname = \"count\"\nkind = \"increment\"\n");
    // a quarantined: its intent never visible. b and c share intent k.
    assert_eq!(sink(&outcome, 0, SinkField::Missing), 1);
    assert_eq!(sink(&outcome, 1, SinkField::Missing), 1);
    assert_eq!(sink(&outcome, 0, SinkField::MaxPerIntent), 1);
    assert_eq!(sink(&outcome, 1, SinkField::MaxPerIntent), 2);
}

/// 27.30: a skipped record's message is in state `skipped`, final and
/// not pending, until a later restart resumes below it; then it is
/// pending again (ready) and is processed.
#[test]
fn r27_30_a_skipped_record_s_message_is_skipped_until_a_later_restart_resumes_below_it() {
    let first = "[[restart]]\nat = \"3s\"\nresume = \"latest\"\ndown_for = \"1s\"\n";
    let (scenario, outcome) = steady(10, "1s", "checkpoint_interval = \"100s\"", first);
    // At 3s r4 has just started (delivered, committed): abandoned, then
    // skipped (the log end is 4).
    let r4 = scenario.find_message("r4").unwrap();
    assert_eq!(outcome.messages.state(r4), State::Skipped);
    assert_eq!(outcome.totals.skipped, 1);
    assert_eq!(outcome.totals.pending, 0);
    assert_eq!(
        story(&scenario, &outcome, "r4")[2..],
        [
            (3_000, EventKind::DeliveryAbandoned),
            (3_000, EventKind::RecordSkipped),
        ]
    );
    let skipped_at_5s = crate::engine::Stops::new(&scenario).at(5_000);
    assert_eq!(skipped_at_5s.messages.state(r4), State::Skipped);
    // A later restart that resumes below it makes it pending again.
    let second = format!("{first}[[restart]]\nat = \"6s\"\nresume = \"earliest\"\n");
    let (scenario, outcome) = steady(10, "1s", "checkpoint_interval = \"100s\"", &second);
    assert_eq!(outcome.messages.state(r4), State::Acked);
    assert_eq!(outcome.totals.skipped, 0);
    let ready_at_6s = crate::engine::Stops::new(&scenario).at(6_000);
    assert_ne!(ready_at_6s.messages.state(r4), State::Skipped);
    // An expectation names the state.
    let text = format!(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\nservice_time = \"1s\"\ncheckpoint_interval = \"100s\"\n\
         [[traffic]]\ncount = 10\nover = \"10s\"\nid_prefix = \"r\"\n{first}\
         [expect.message.r4]\nstate = \"skipped\"\n"
    );
    let (scenario, _) = crate::scenario::load_str("t.toml", &text).unwrap();
    let outcome = run(&scenario, Recorder::Off).unwrap();
    assert!(
        crate::expect::judge(&scenario, &outcome)
            .iter()
            .all(|v| v.passed)
    );
}

/// 28.13's worked example: the restart, the retry it cancels, the resume
/// and the delivery after it are transitions at the restart's instant,
/// in that order, and each delivery names its record.
#[test]
fn s28_13_a_restart_is_told_in_the_transcript() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 5\nretry_interval = \"10s\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"40s\"\n\
         [[message]]\nid = \"poison\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[restart]]\nat = \"25s\"\n[[restart]]\nat = \"50s\"\n");
    let at_25s: Vec<String> = outcome
        .transitions
        .iter()
        .filter(|t| t.time == 25_000)
        .map(|t| crate::words::sentence::describe(&scenario, &t.detail))
        .collect();
    assert_eq!(
        at_25s[..4],
        [
            "restarted: partition 0 resumes at offset 0 (no checkpoint)",
            "retry cancelled by the restart (partition 0, offset 0, was due at 30s)",
            "resumed: partition 0 processes from offset 0",
            "delivered (cycle 1, receive 1 of the cycle, 4 in all, partition 0, offset 0)",
        ]
    );
    let kinds: Vec<EventKind> = outcome
        .transitions
        .iter()
        .map(|t| t.detail.kind())
        .collect();
    assert_eq!(
        kinds.iter().filter(|&&k| k == EventKind::Restarted).count(),
        2
    );
    assert!(!kinds.contains(&EventKind::DeliveryAbandoned), "service 0");
    assert_eq!(msg(&scenario, &outcome, "poison").total_receives, 11);
    // A delivery in flight is abandoned; its write stays.
    let (scenario, outcome) = steady(
        5,
        "2s",
        "checkpoint_interval = \"100s\"",
        "[[restart]]\nat = \"1s\"\ndown_for = \"3s\"\n",
    );
    let told: Vec<(Millis, Option<MessageIndex>, String)> = outcome
        .transitions
        .iter()
        .filter(|t| (1_000..=4_000).contains(&t.time))
        .map(|t| {
            let says = crate::words::sentence::describe(&scenario, &t.detail);
            (t.time, t.message, says)
        })
        .collect();
    let r1 = scenario.find_message("r1");
    assert_eq!(
        told[..3],
        [
            (
                1_000,
                None,
                "restarted: partition 0 resumes at offset 0 (no checkpoint), down until 4s".into()
            ),
            (
                1_000,
                r1,
                "delivery abandoned by the restart (partition 0, offset 0): its write stays".into()
            ),
            (
                4_000,
                None,
                "resumed: partition 0 processes from offset 0".into()
            ),
        ]
    );
}

/// 28.13: `[[expect.event]]` takes the log's kinds, and `partition`
/// narrows a kind to the transitions that name that partition.
#[test]
fn s28_13_event_expectations_take_the_log_kinds_and_a_partition() {
    let text = |expect: &str| {
        format!(
            "[delivery]\nmax_receives = 5\nretry_interval = \"10s\"\n\
             [log]\npartitions = 2\ncheckpoint_interval = \"40s\"\n\
             [[message]]\nid = \"poison\"\npartition = 1\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n\
             [[message]]\nid = \"fine\"\npartition = 0\n\
             [[restart]]\nat = \"25s\"\n[[restart]]\nat = \"50s\"\n{expect}"
        )
    };
    let verdicts = |expect: &str| {
        let (scenario, _) = crate::scenario::load_str("t.toml", &text(expect)).unwrap();
        let outcome = run(&scenario, Recorder::Off).unwrap();
        crate::expect::judge(&scenario, &outcome)
            .iter()
            .map(|v| v.passed)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        verdicts(
            "[[expect.event]]\nkind = \"retry_cancelled\"\nmessage = \"poison\"\nat = \"25s\"\n\
             [[expect.event]]\nkind = \"delivery_abandoned\"\nnever = true\n\
             [[expect.event]]\nkind = \"resumed\"\npartition = 1\nat = \"50s\"\n\
             [[expect.event]]\nkind = \"delivered\"\npartition = 1\nat = \"25s\"\n\
             [[expect.event]]\nkind = \"delivered\"\npartition = 0\nat = \"25s\"\n\
             [[expect.event]]\nkind = \"delivered\"\npartition = 0\nat = \"50s\"\nnever = true\n"
        ),
        [true; 6]
    );
    // fine is done again at 25s (no checkpoint yet), not at 50s (the
    // checkpoint at 40s holds position 1 on partition 0). The same kinds
    // on the wrong partition do not match.
    assert_eq!(
        verdicts(
            "[[expect.event]]\nkind = \"retry_cancelled\"\npartition = 0\n\
             [[expect.event]]\nkind = \"delivered\"\npartition = 0\nat = \"50s\"\n"
        ),
        [false, false]
    );
}

/// 28.4's worked example: a consumer that restarts faster than its budget
/// never dead-letters its poison record unless the count is carried on the
/// record itself.
#[test]
fn s28_4_a_carried_attempt_count_stops_a_poison_record_across_restarts() {
    let text = |carry: bool| {
        format!(
            "[delivery]\nmax_receives = 5\nretry_interval = \"10s\"\n\
             [log]\npartitions = 1\ncheckpoint_interval = \"40s\"\ncarry_attempts = {carry}\n\
             [[message]]\nid = \"poison\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n\
             [[restart]]\nat = \"25s\"\n[[restart]]\nat = \"50s\"\n"
        )
    };
    // Fresh attempts: 0, 10s, 20s; 25s, 35s, 45s; 50s .. 90s: 11.
    let (scenario, outcome) = sim(&text(false));
    let poison = msg(&scenario, &outcome, "poison");
    assert_eq!(poison.total_receives, 11);
    assert_eq!(poison.state, State::Quarantined);
    assert_eq!(poison.last_quarantined_at(), Some(90_000));
    assert_eq!(outcome.totals.end_time, 90_000);
    assert_eq!(outcome.totals.reprocessed, 0);
    assert_eq!(outcome.totals.attempts_carried, 0);
    // Carried: 0, 10s, 20s (1-3); 25s (4), 35s (5): dead-lettered at 35s.
    let (scenario, outcome) = sim(&text(true));
    let poison = msg(&scenario, &outcome, "poison");
    assert_eq!(poison.total_receives, 5);
    assert_eq!(poison.last_quarantined_at(), Some(35_000));
    assert_eq!(log_of(&outcome).partitions[0], (1, 1), "committed at 40s");
    assert_eq!(resume_positions(&outcome, 1), vec![1]);
    assert_eq!(outcome.totals.end_time, 50_000);
    assert_eq!(outcome.totals.attempts_carried, 1);
    let delivered_at_25s = outcome
        .transitions
        .iter()
        .find(|t| t.time == 25_000 && t.detail.kind() == EventKind::Delivered)
        .map(|t| crate::words::sentence::describe(&scenario, &t.detail));
    assert_eq!(
        delivered_at_25s.as_deref(),
        Some("delivered (cycle 1, receive 4 of the cycle, 4 in all, partition 0, offset 0)")
    );
}

/// 28.4: a done record processed again starts fresh even with
/// carry_attempts: its earlier attempt ended.
#[test]
fn s28_4_a_done_record_processed_again_starts_fresh() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"100s\"\ncarry_attempts = true\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 } }]\n\
         [[restart]]\nat = \"5s\"\nresume = \"earliest\"\n");
    // a fails at 0s, acked at 1s (receive 2); reprocessed at 5s: receive 1
    // of a fresh attempt, acked.
    let a = msg(&scenario, &outcome, "a");
    assert_eq!(
        (a.state, a.cycle_receives, a.total_receives),
        (State::Acked, 1, 3)
    );
    assert_eq!(outcome.totals.attempts_carried, 0);
}

/// 28.10's worked example: a restart that resumes at explicit offsets and
/// replays exactly the gap an offset reset left, then goes on where it was.
#[test]
fn s28_10_a_replay_of_exactly_the_gap_recovers_it_without_duplicates() {
    let text = |third: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
             [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\n\
             [[sink]]\nname = \"counter\"\nkind = \"increment\"\n\
             [[traffic]]\ncount = 60\nover = \"60s\"\nid_prefix = \"r\"\n\
             [[restart]]\nat = \"20s\"\ndown_for = \"20s\"\n\
             [[restart]]\nat = \"30s\"\nresume = \"latest\"\n\
             [[restart]]\nat = \"45s\"\n{third}"
        )
    };
    // Restart 2 resumes at the log end (31) during the down window:
    // offsets 21 to 30 are skipped. Restart 3 at 45s (position 46) replays
    // 21 .. 30 and jumps back to 46.
    let (scenario, outcome) = sim(&text(
        "resume = \"offsets\"\noffsets = [21]\nreplay_until = [31]\n",
    ));
    let t = &outcome.totals;
    assert_eq!((t.reprocessed, t.skipped), (0, 0));
    assert_eq!(sink(&outcome, 0, SinkField::Value), 60);
    assert_eq!(sink(&outcome, 0, SinkField::VisibleDuplicates), 0);
    assert_eq!(sink(&outcome, 0, SinkField::Missing), 0);
    assert_eq!(resume_positions(&outcome, 2), vec![21]);
    assert_eq!(log_of(&outcome).restarts[2].replayed_until, vec![Some(31)]);
    let jump = (outcome.transitions.iter())
        .find(|t| t.detail.kind() == EventKind::ReplayEnded)
        .unwrap();
    assert_eq!(jump.time, 45_000);
    assert_eq!(
        crate::words::sentence::describe(&scenario, &jump.detail),
        "replay ended: partition 0 reached offset 31 and goes on from 46, where it was before the restart"
    );
    // Without replay_until: 21 .. 45 at 45s, 15 of them done before.
    let (_, outcome) = sim(&text("resume = \"offsets\"\noffsets = [21]\n"));
    assert_eq!(outcome.totals.reprocessed, 15);
    assert_eq!(sink(&outcome, 0, SinkField::Value), 75);
    // A stale checkpoint 25s old (20s, position 21): the same duplicates.
    let (_, outcome) = sim(&text("resume = \"stale\"\ncheckpoint_age = \"25s\"\n"));
    assert_eq!(outcome.totals.reprocessed, 15);
    assert_eq!(sink(&outcome, 0, SinkField::Value), 75);
    // offsets and replay_until are checked where they are written.
    for (third, says) in [
        ("resume = \"offsets\"\n", "needs `offsets`"),
        ("offsets = [21]\n", "only with resume = \"offsets\""),
        (
            "resume = \"offsets\"\noffsets = [21, 3]\n",
            "lists 2 offsets for 1",
        ),
        (
            "resume = \"offsets\"\noffsets = [21]\nreplay_until = [21]\n",
            "above its `offsets` entry",
        ),
    ] {
        refused(&text(third), says);
    }
}

/// 28.2's worked example: the dead-letter envelope of a log record names
/// its partition, offset, event time, schema version and cause.
#[test]
fn s28_2_a_log_record_s_envelope_names_where_it_came_from() {
    let text = |operator: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n\
             [log]\npartitions = 2\ncheckpoint_interval = \"1s\"\n\
             [[message]]\nid = \"p1-a\"\npartition = 1\n\
             [[message]]\nid = \"p1-b\"\nat = \"1s\"\npartition = 1\n\
             [[message]]\nid = \"bad-7\"\nat = \"4s\"\npartition = 1\nschema_version = \"orders.v3\"\n\
             payload = {{ amount = 7 }}\n\
             faults = [{{ fail = {{ until = \"repair\" }}, reason = \"schema: unknown field currency\" }}]\n\
             [[restart]]\nat = \"3s\"\ndown_for = \"2s\"\n{operator}"
        )
    };
    let (scenario, outcome) = sim(&text(""));
    let bad = scenario.find_message("bad-7").unwrap();
    let field = |f| outcome.envelope_value(&scenario, bad, f);
    use crate::model::EnvelopeField as F;
    assert_eq!(field(F::Partition), Value::Int(1));
    assert_eq!(field(F::Offset), Value::Int(2));
    assert_eq!(field(F::EventTime), Value::Time(4_000));
    // Appended while the consumer was down: first delivered at its
    // resume (decision 10.12: the first delivery ever).
    assert_eq!(field(F::FirstDelivery), Value::Time(5_000));
    assert_eq!(field(F::QuarantinedAt), Value::Time(25_000));
    assert_eq!(field(F::CycleReceives), Value::Int(3));
    assert_eq!(field(F::SchemaVersion), Value::Text("orders.v3".into()));
    assert_eq!(
        field(F::DeadLetterCause),
        Value::Text("max_receives".into())
    );
    assert_eq!(
        field(F::Reason),
        Value::Text("schema: unknown field currency".into())
    );
    // The JSON row carries the same.
    let row = crate::report::rows::row(&scenario, &outcome, bad as usize);
    let envelope = &row["envelope"];
    assert_eq!(envelope["partition"], 1);
    assert_eq!(envelope["offset"], 2);
    assert_eq!(envelope["event_time"], 4_000);
    assert_eq!(envelope["first_delivery"], 5_000);
    assert_eq!(envelope["schema_version"], "orders.v3");
    assert_eq!(envelope["dead_letter_cause"], "max_receives");
    // Redriven after a repair at 1m25s, appended again at offset 3 and
    // acked: its envelope stays the latest quarantine's (decision 10.12).
    let (redriven, after) = sim(&text(
        "[[operator]]\nwait = \"1m\"\nrepair = true\naction = \"redrive_all\"\n",
    ));
    let bad = redriven.find_message("bad-7").unwrap();
    assert_eq!(after.messages.get(bad).state, State::Acked);
    let kept = |f| after.envelope_value(&redriven, bad, f);
    assert_eq!(kept(F::Offset), Value::Int(2));
    assert_eq!(kept(F::QuarantinedAt), Value::Time(25_000));
    assert_eq!(kept(F::CycleReceives), Value::Int(3));
    assert_eq!(kept(F::TotalReceives), Value::Int(3));
    let row = crate::report::rows::row(&redriven, &after, bad as usize);
    assert_eq!(row["envelope"]["offset"], 2);
    assert_eq!(row["envelope"]["cycle"], 1);
    assert_eq!(row["state"], "acked");
    // Kept for an expectation on the envelope in a run that records
    // nothing, and not where nothing reads it.
    let expect = "[[operator]]\nwait = \"1m\"\nrepair = true\naction = \"redrive_all\"\n\
                  [expect.message.bad-7.envelope]\noffset = 2\ncycle_receives = 3\n";
    let (quiet, _) = crate::scenario::load_str("t.toml", &text(expect)).unwrap();
    let outcome = run(&quiet, Recorder::Off).unwrap();
    assert!(
        crate::expect::judge(&quiet, &outcome)
            .iter()
            .all(|v| v.passed)
    );
    let unread = run(&redriven, Recorder::Off).unwrap();
    assert!(unread.dead_letters.left.is_empty());
    let redrive = (after.transitions.iter())
        .find(|t| t.detail.kind() == EventKind::Redriven)
        .map(|t| (t.time, t.detail.partition()));
    assert_eq!(redrive, Some((85_000, Some(1))));
    // A message never quarantined has no envelope.
    let a = scenario.find_message("p1-a").unwrap();
    assert_eq!(
        outcome.envelope_value(&scenario, a, F::Offset),
        Value::Never
    );
    // Expectations name the fields.
    let expect = "[expect.message.bad-7.envelope]\npartition = 1\noffset = 2\n\
                  event_time = \"4s\"\nquarantined_at = \"25s\"\ncycle_receives = 3\n\
                  dead_letter_cause = \"max_receives\"\nschema_version = \"orders.v3\"\n";
    let (scenario, _) = crate::scenario::load_str("t.toml", &text(expect)).unwrap();
    let outcome = run(&scenario, Recorder::Off).unwrap();
    let verdicts = crate::expect::judge(&scenario, &outcome);
    assert_eq!(verdicts.len(), 7);
    assert!(verdicts.iter().all(|v| v.passed), "{verdicts:?}");
    // A permanent failure routed to quarantine says so.
    let routed = "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\npermanent = \"quarantine\"\n\
                  [[message]]\nid = \"x\"\nfaults = [{ fail = { first = 1 }, class = \"permanent\" }]\n";
    let (scenario, outcome) = sim(routed);
    let x = scenario.find_message("x").unwrap();
    assert_eq!(
        outcome.envelope_value(&scenario, x, F::DeadLetterCause),
        Value::Text("permanent".into())
    );
    assert_eq!(
        outcome.envelope_value(&scenario, x, F::Partition),
        Value::Never
    );
}

/// 28.10: records in [replay_until, the position before the restart) keep
/// their outcomes, skipped ones staying skipped: the replay jumps over
/// them, so they are not made pending again.
#[test]
fn s28_10_a_replay_leaves_records_skipped_beyond_its_end_skipped() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\n\
         [[traffic]]\ncount = 60\nover = \"60s\"\nid_prefix = \"r\"\n\
         [[restart]]\nat = \"20s\"\ndown_for = \"20s\"\n\
         [[restart]]\nat = \"30s\"\nresume = \"latest\"\n\
         [[restart]]\nat = \"38s\"\ndown_for = \"4s\"\n\
         [[restart]]\nat = \"41s\"\nresume = \"latest\"\n\
         [[restart]]\nat = \"45s\"\nresume = \"offsets\"\noffsets = [21]\nreplay_until = [31]\n");
    // Offsets 21-30 skipped at 30s, 39-41 at 41s; the replay at 45s takes
    // 21-30 and jumps from 31 to 46, over 39-41, which stay skipped.
    assert_eq!(outcome.totals.skipped, 3);
    assert_eq!(outcome.totals.pending, 0);
    for id in ["r40", "r41", "r42"] {
        assert_eq!(msg(&scenario, &outcome, id).state, State::Skipped, "{id}");
    }
    assert_eq!(msg(&scenario, &outcome, "r22").state, State::Acked);
    assert_eq!(log_of(&outcome).restarts[4].replayed_until, vec![Some(31)]);
}
