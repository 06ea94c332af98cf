//! Section 28.7: checkpoints that fail or are aborted commit nothing; the
//! resumes, the exactly-once transaction and the checkpoint history follow
//! the completed ones; and their transitions (28.13).

use super::*;

fn log_of(outcome: &Outcome) -> &LogOutcome {
    outcome.log.as_ref().expect("a log run")
}

/// 28.7's worked example: 30 records over 5 minutes, checkpoints every
/// minute, those at 2m and 3m failing, a restart at 3m30s.
fn worked_example(failures: &str) -> String {
    format!(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"1m\"\n\
         [[traffic]]\ncount = 30\nover = \"300s\"\n\
         {failures}\
         [[restart]]\nat = \"3m30s\"\n"
    )
}

#[test]
fn s28_7_a_restart_resumes_at_the_last_completed_checkpoint() {
    let (scenario, outcome) = sim(&worked_example(
        "[[checkpoint_failure]]\nfrom = \"2m\"\nduration = \"2m\"\n",
    ));
    let log = log_of(&outcome);
    assert_eq!(log.restarts[0].resume_positions, vec![7]);
    assert_eq!(log.restarts[0].checkpoint_time, Some(60_000));
    assert_eq!(outcome.totals.reprocessed, 15);
    assert_eq!(outcome.totals.effects, 45);
    assert_eq!(outcome.totals.duplicated_effects, 15);
    assert_eq!(outcome.totals.checkpoints_completed, 2);
    assert_eq!(outcome.totals.checkpoints_failed, 2);
    assert_eq!(outcome.totals.last_checkpoint_at, 240_000);
    let status = |k| log.checkpoint_status(scenario.log.as_ref().unwrap(), k);
    assert_eq!(status(1), Some(CheckpointStatus::Completed));
    assert_eq!(status(2), Some(CheckpointStatus::Failed));
    assert_eq!(status(3), Some(CheckpointStatus::Failed));
    assert_eq!(status(4), Some(CheckpointStatus::Completed));
    // None after the end (4m50s), decision 27.12.
    assert_eq!(status(5), None);
    // Without the failures: resume at checkpoint 3m's 19.
    let (_, outcome) = sim(&worked_example(""));
    assert_eq!(log_of(&outcome).restarts[0].resume_positions, vec![19]);
    assert_eq!(outcome.totals.reprocessed, 3);
    assert_eq!(outcome.totals.effects, 33);
    assert_eq!(outcome.totals.checkpoints_completed, 4);
    assert_eq!(outcome.totals.checkpoints_failed, 0);
}

/// A partition's committed position is the last completed checkpoint's,
/// and aborted checkpoints behave as failed ones.
#[test]
fn s28_7_the_committed_position_is_the_last_completed_checkpoint_s() {
    let text = "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\n\
         [[traffic]]\ncount = 30\nover = \"30s\"\n\
         [[checkpoint_failure]]\nnumbers = [2, 3]\nstatus = \"aborted\"\n";
    let (scenario, outcome) = sim(text);
    // Checkpoint 1 at 10s commits 11; 2 (20s) aborted; 3 would be at 30s,
    // past the last record at 29s: not taken.
    assert_eq!(log_of(&outcome).partitions[0], (30, 11));
    assert_eq!(outcome.totals.last_checkpoint_at, 10_000);
    let status = log_of(&outcome).checkpoint_status(scenario.log.as_ref().unwrap(), 2);
    assert_eq!(status, Some(CheckpointStatus::Aborted));
}

/// A stale resume takes the latest completed checkpoint at or before
/// `at - checkpoint_age`.
#[test]
fn s28_7_a_stale_resume_skips_failed_checkpoints() {
    let text = |failures: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
             [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\n\
             [[traffic]]\ncount = 60\nover = \"60s\"\n\
             {failures}\
             [[restart]]\nat = \"55s\"\nresume = \"stale\"\ncheckpoint_age = \"15s\"\n"
        )
    };
    // at - age = 40s: checkpoint 4 (positions 41); with 3 and 4 failed,
    // checkpoint 2 at 20s (21).
    let (_, outcome) = sim(&text(""));
    let restart = &log_of(&outcome).restarts[0];
    assert_eq!(
        (restart.resume_positions.clone(), restart.checkpoint_time),
        (vec![41], Some(40_000))
    );
    let (_, outcome) = sim(&text(
        "[[checkpoint_failure]]\nfrom = \"25s\"\nduration = \"20s\"\n",
    ));
    let restart = &log_of(&outcome).restarts[0];
    assert_eq!(
        (restart.resume_positions.clone(), restart.checkpoint_time),
        (vec![21], Some(20_000))
    );
}

/// A failed checkpoint at a restart's instant fails before the restart
/// (decision 26.2): the restart resumes from the one before.
#[test]
fn s28_7_a_failure_at_a_restart_s_instant_comes_first() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\n\
         [[traffic]]\ncount = 30\nover = \"30s\"\n\
         [[checkpoint_failure]]\nnumbers = [2]\n\
         [[restart]]\nat = \"20s\"\n");
    let restart = &log_of(&outcome).restarts[0];
    assert_eq!(restart.resume_positions, vec![11]);
    assert_eq!(restart.checkpoint_time, Some(10_000));
    assert_eq!(outcome.totals.reprocessed, 10);
}

/// Under exactly-once the open transaction is not committed at a failed
/// checkpoint: it carries on to the next completed one, and a restart
/// before that aborts all of it.
#[test]
fn s28_7_an_exactly_once_transaction_carries_across_a_failed_checkpoint() {
    let text = |failures: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
             [log]\npartitions = 1\nguarantee = \"exactly_once\"\ncheckpoint_interval = \"10s\"\n\
             [[traffic]]\ncount = 30\nover = \"30s\"\n\
             {failures}\
             [[restart]]\nat = \"25s\"\n"
        )
    };
    // Checkpoint 2 at 20s commits 21 records' writes; the restart aborts
    // the 4 since (21..24 done at 21s..24s, and 25's is in progress).
    let (_, outcome) = sim(&text(""));
    let aborted = outcome.totals.aborted_effects;
    assert_eq!(log_of(&outcome).restarts[0].resume_positions, vec![21]);
    // With 2 failed: the transaction open since 10s is aborted, 14 more.
    let (_, failed) = sim(&text("[[checkpoint_failure]]\nnumbers = [2]\n"));
    assert_eq!(log_of(&failed).restarts[0].resume_positions, vec![11]);
    assert_eq!(failed.totals.aborted_effects, aborted + 10);
    // Every record's write is visible once in the end either way.
    let sink = |o: &Outcome| o.sink_value(0, SinkField::Value);
    assert_eq!((sink(&outcome), sink(&failed)), (30, 30));
}

/// Each failed checkpoint is a transition at its own instant; completed
/// ones are transitions only with checkpoint_events (or failures).
#[test]
fn s28_13_checkpoints_are_transitions_at_their_instants() {
    let text = |extra: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
             [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\n{extra}\
             [[traffic]]\ncount = 3\nover = \"30s\"\n"
        )
    };
    let kinds = |outcome: &Outcome| -> Vec<(Millis, EventKind)> {
        (outcome.transitions.iter())
            .filter(|t| t.message.is_none())
            .map(|t| (t.time, t.detail.kind()))
            .collect()
    };
    // Records at 0s, 10s, 20s: checkpoints 1 and 2 (at 10s, 20s).
    let (_, plain) = sim(&text(""));
    assert_eq!(kinds(&plain), vec![]);
    let (_, events) = sim(&text("checkpoint_events = true\n"));
    let completed = EventKind::CheckpointCompleted;
    assert_eq!(
        kinds(&events),
        vec![(10_000, completed), (20_000, completed)]
    );
    let (scenario, failed) = sim(&text("[[checkpoint_failure]]\nnumbers = [1]\n"));
    assert_eq!(
        kinds(&failed),
        vec![(10_000, EventKind::CheckpointFailed), (20_000, completed)]
    );
    let line = |t: &Transition| crate::words::sentence::describe(&scenario, &t.detail);
    let lines: Vec<String> = failed
        .transitions
        .iter()
        .filter(|t| t.message.is_none())
        .map(line)
        .collect();
    assert_eq!(
        lines,
        [
            "checkpoint 1 failed: nothing committed, the positions stay those of the last completed checkpoint",
            "checkpoint 2 completed: position 3 committed",
        ]
    );
    // Measures and the transcript agree whatever is recorded.
    assert_eq!(plain.totals.checkpoints_completed, 2);
}

/// Checkpoints recorded at their instants stand in time order among an
/// alarm's transitions of the same gap between events.
#[test]
fn s28_13_checkpoint_transitions_keep_time_order_with_alarms() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\ncheckpoint_events = true\n\
         [[alarm]]\nname = \"dlq for 15s\"\nmetric = \"dlq_depth\"\nat_least = 1\nfor = \"15s\"\n\
         [[message]]\nid = \"bad\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"late\"\nat = \"60s\"\n");
    let times: Vec<Millis> = outcome.transitions.iter().map(|t| t.time).collect();
    assert!(times.is_sorted(), "{times:?}");
    let fired = (outcome.transitions.iter())
        .position(|t| t.detail.kind() == EventKind::AlarmFired)
        .expect("the alarm fires at 15s");
    assert_eq!(outcome.transitions[fired].time, 15_000);
    let checkpoints: Vec<Millis> = (outcome.transitions.iter())
        .filter(|t| t.detail.kind() == EventKind::CheckpointCompleted)
        .map(|t| t.time)
        .collect();
    assert_eq!(
        checkpoints,
        vec![10_000, 20_000, 30_000, 40_000, 50_000, 60_000]
    );
}

/// `[expect.checkpoint.K] status`, event expectations on checkpoint kinds,
/// and the keys refused (section 28.7).
#[test]
fn s28_7_checkpoint_expectations_and_refusals() {
    let base = "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\npartitions = 1\ncheckpoint_interval = \"10s\"\n\
         [[traffic]]\ncount = 3\nover = \"30s\"\n";
    let judged = |extra: &str| {
        let (scenario, _) = load_str("t.toml", &format!("{base}{extra}")).expect("valid");
        let outcome = run(&scenario, Recorder::Off).expect("runs");
        crate::expect::judge(&scenario, &outcome)
            .iter()
            .map(|r| r.passed)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        judged(
            "[[checkpoint_failure]]\nfrom = \"5s\"\nduration = \"10s\"\n\
             [expect.checkpoint.1]\nstatus = \"failed\"\n\
             [expect.checkpoint.2]\nstatus = \"completed\"\n\
             [expect.checkpoint.3]\nstatus = \"never\"\n\
             [expect.checkpoint.4]\nstatus = \"failed\"\n\
             [[expect.event]]\nkind = \"checkpoint_failed\"\nat = \"10s\"\n\
             [[expect.event]]\nkind = \"checkpoint_completed\"\nat = \"20s\"\n"
        ),
        [true, true, true, false, true, true]
    );
    refused(
        &format!("{base}[[expect.event]]\nkind = \"checkpoint_completed\"\n"),
        "writes no checkpoint_completed transitions",
    );
    refused(
        &format!("{base}[[checkpoint_failure]]\nfrom = \"5s\"\n"),
        "`from` with `duration`, or `numbers`",
    );
    refused(
        &format!("{base}[[checkpoint_failure]]\nnumbers = [2]\nfrom = \"5s\"\nduration = \"1s\"\n"),
        "`from` with `duration`, or `numbers`",
    );
    refused(
        &format!("{base}[[checkpoint_failure]]\nfrom = \"5s\"\nduration = \"0s\"\n"),
        "at least 1ms",
    );
    refused(
        &format!("{base}[[checkpoint_failure]]\nnumbers = [0]\n"),
        "numbered from 1",
    );
    refused(
        &format!("{base}[[checkpoint_failure]]\nnumbers = []\n"),
        "`numbers` lists 1 to",
    );
    refused(
        &format!("{base}[[checkpoint_failure]]\nnumbers = [1]\nstatus = \"lost\"\n"),
        "unknown value \"lost\"",
    );
    refused(
        &format!(
            "{base}{}",
            "[[checkpoint_failure]]\nnumbers = [1]\n".repeat(101)
        ),
        "at most 100 checkpoint failures",
    );
    refused(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\nguarantee = \"at_most_once\"\n[[checkpoint_failure]]\nnumbers = [1]\n",
        "does not apply with guarantee",
    );
    refused(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n[[checkpoint_failure]]\nnumbers = [1]\n",
        "[[checkpoint_failure]] needs [log]",
    );
    refused(
        &format!("{base}[expect.checkpoint.0]\nstatus = \"failed\"\n"),
        "no checkpoint \"0\"",
    );
    refused(
        &format!("{base}[expect.checkpoint.1]\nstatus = \"late\"\n"),
        "unknown checkpoint status",
    );
}

/// The failures as ranges of numbers: an entry listed first wins a
/// number two entries list; the latest completed checkpoint steps back
/// over failed ranges.
#[test]
fn s28_7_failed_checkpoints_by_number() {
    use CheckpointStatus::{Aborted, Completed, Failed};
    let f = CheckpointFailures::new(&[(3, 5, Failed), (5, 8, Aborted), (10, 10, Failed)]);
    let statuses: Vec<_> = (1..=11).map(|k| f.status(k)).collect();
    assert_eq!(
        statuses,
        [
            Completed, Completed, Failed, Failed, Failed, Aborted, Aborted, Aborted, Completed,
            Failed, Completed
        ]
    );
    assert_eq!(f.completed_at_or_before(8), 2);
    assert_eq!(f.completed_at_or_before(10), 9);
    assert_eq!(f.completed_at_or_before(11), 11);
    assert_eq!(
        CheckpointFailures::new(&[(1, 4, Failed)]).completed_at_or_before(4),
        0
    );
    let between: Vec<_> = f.failed_between(4, 10).collect();
    assert_eq!(between, [(4, 5, Failed), (6, 8, Aborted), (10, 10, Failed)]);
}

/// A checkpoint concerns every partition: an event expectation cannot
/// name one.
#[test]
fn s28_13_a_checkpoint_event_names_no_partition() {
    refused(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\npartitions = 2\ncheckpoint_interval = \"10s\"\ncheckpoint_events = true\n\
         [[expect.event]]\nkind = \"checkpoint_completed\"\npartition = 1\n",
        "names no partition",
    );
}

/// A 1ms interval over an hour is 3,600,000 checkpoint transitions: the
/// transcript keeps its 1,000,000 and counts the rest, and an event
/// expectation still sees the last one, told in one step.
#[test]
fn s28_13_checkpoint_transitions_past_the_transcript_are_counted_and_watched() {
    let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"1ms\"\ncheckpoint_events = true\n\
         [[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\nat = \"1h\"\n\
         [[expect.event]]\nkind = \"checkpoint_completed\"\nat = \"59m59s999ms\"\n";
    let (scenario, _) = load_str("t.toml", text).unwrap();
    let outcome = run(&scenario, Recorder::All).unwrap();
    assert_eq!(outcome.totals.checkpoints_completed, 3_600_000);
    let kept = (outcome.transitions.iter())
        .filter(|t| t.detail.kind() == EventKind::CheckpointCompleted)
        .count() as u64;
    let others = outcome.transitions.len() as u64 - kept;
    assert_eq!(kept + others, TRANSITIONS_KEPT as u64);
    assert_eq!(
        outcome.transitions_dropped,
        3_600_000 - kept + (2 * 3 - others)
    );
    let verdicts = crate::expect::judge(&scenario, &outcome);
    assert!(verdicts.iter().all(|v| v.passed), "{verdicts:?}");
    assert_eq!(
        outcome.events_seen.get(&0).map(|e| e.count),
        Some(3_600_000)
    );
}

/// A gap's transitions put in time order keep each state change's
/// playback step on its own transition: an archive told after the gap's
/// checkpoints moves among them, and its state change moves with it.
#[test]
fn s28_13_a_state_change_follows_its_transition_into_time_order() {
    let (_, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [quarantine]\narchive_after = \"25s\"\n\
         [log]\ncheckpoint_interval = \"10s\"\ncheckpoint_events = true\n\
         [[message]]\nid = \"bad\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"late\"\nat = \"60s\"\n");
    let times: Vec<Millis> = outcome.transitions.iter().map(|t| t.time).collect();
    assert!(times.is_sorted(), "{times:?}");
    let archived = (outcome.transitions.iter())
        .position(|t| t.detail.kind() == EventKind::Archived)
        .expect("archived at 25s");
    assert_eq!(outcome.transitions[archived].time, 25_000);
    assert_eq!(outcome.transitions[archived - 1].time, 20_000);
    let change = (outcome.state_changes.iter())
        .find(|c| c.time == 25_000)
        .expect("the archive's state change");
    assert_eq!(change.step as usize, archived + 1);
    // Every state change shows after a transition no later than itself.
    for c in outcome.state_changes.iter().filter(|c| c.step > 0) {
        let t = &outcome.transitions[c.step as usize - 1];
        assert!(t.time <= c.time, "{c:?} after {t:?}");
    }
}
