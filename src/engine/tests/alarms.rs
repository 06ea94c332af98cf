//! docs/model.md section 15 (alarms) and decision 16.11.

use super::*;

/// (time, fired?) of alarm `name`'s transitions.
fn alarm_story(scenario: &Scenario, outcome: &Outcome, name: &str) -> Vec<(Millis, bool)> {
    let a = scenario.alarms.iter().position(|x| x.name == name).unwrap() as u32;
    outcome
        .transitions
        .iter()
        .filter_map(|t| match t.detail {
            Detail::AlarmFired { alarm, .. } if alarm == a => Some((t.time, true)),
            Detail::AlarmCleared { alarm } if alarm == a => Some((t.time, false)),
            _ => None,
        })
        .collect()
}

const BASE: &str = "[delivery]\nmax_receives = 2\nretry_interval = \"10s\"\n\
                    [[operator]]\nwait = \"30s\"\nrepair = true\naction = \"redrive_all\"\n\
                    [[message]]\nid = \"a\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
                    [[message]]\nid = \"b\"\nat = \"5s\"\nfaults = [{ fail = { until = \"repair\" } }]\n";

fn with(alarm: &str) -> (Scenario, Outcome) {
    sim(&format!("{BASE}[[alarm]]\nname = \"x\"\n{alarm}"))
}

#[test]
fn s15_dlq_depth_fires_and_clears_at_event_instants() {
    // a is quarantined at 10s, b at 15s; both redriven at 45s.
    let (s, o) = with("metric = \"dlq_depth\"\nat_least = 2\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(15_000, true), (45_000, false)]);
    assert_eq!(o.alarms[0].times_fired, 1);
    assert_eq!(o.alarms[0].first_fired_at, Some(15_000));
    assert!(!o.alarms[0].firing);
}

#[test]
fn s15_oldest_age_fires_when_time_alone_reaches_the_threshold() {
    // The oldest entry is a's at 10s: age 7s at 17s, between events.
    let (s, o) = with("metric = \"oldest_age\"\nat_least = \"7s\"\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(17_000, true), (45_000, false)]);
}

#[test]
fn s15_dlq_arrivals_clears_when_an_entry_leaves_the_window() {
    // Entries at 10s and 15s; window 8s: two in (7s, 15s] at 15s, one
    // in (10s, 18s] at 18s.
    let (s, o) = with("metric = \"dlq_arrivals\"\nwindow = \"8s\"\nat_least = 2\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(15_000, true), (18_000, false)]);
}

#[test]
fn s15_dlq_arrivals_clears_when_the_oldest_entry_still_counted_leaves() {
    // Entries at 10s, 20s and 22s; window 8s: the one at 10s has left
    // by 22s, when two are in the window; the count falls to one when
    // the entry at 20s leaves, at 28s. A second alarm's longer window
    // keeps the entry at 10s in the list, before the ones counted.
    let text = BASE.replace("at = \"5s\"", "at = \"10s\"")
        + "[[message]]\nid = \"c\"\nat = \"12s\"\nfaults = [{ fail = { until = \"repair\" } }]\n";
    let (s, o) = sim(&format!(
        "{text}[[alarm]]\nname = \"x\"\nmetric = \"dlq_arrivals\"\nwindow = \"8s\"\nat_least = 2\n\
         [[alarm]]\nname = \"long\"\nmetric = \"dlq_arrivals\"\nwindow = \"60s\"\nat_least = 9\n"
    ));
    assert_eq!(alarm_story(&s, &o, "x"), [(22_000, true), (28_000, false)]);
    assert_eq!(alarm_story(&s, &o, "long"), []);
}

#[test]
fn s15_a_threshold_reached_at_an_event_instant_is_read_after_its_events() {
    // a's age reaches 5s at 15s, the instant b is quarantined: the
    // alarm is read after b's transitions there, as after any instant.
    let (s, o) = with("metric = \"oldest_age\"\nat_least = \"5s\"\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(15_000, true), (45_000, false)]);
    let at_15: Vec<EventKind> = o
        .transitions
        .iter()
        .filter(|t| t.time == 15_000)
        .map(|t| t.detail.kind())
        .collect();
    assert_eq!(at_15.last(), Some(&EventKind::AlarmFired), "{at_15:?}");
    assert!(at_15.contains(&EventKind::Quarantined), "{at_15:?}");
}

#[test]
fn s15_queue_depth_reads_ready_messages_not_taken() {
    let (s, o) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[workers]\ncount = 1\nservice_time = \"1s\"\n\
         [[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\n[[message]]\nid = \"c\"\n\
         [[alarm]]\nname = \"x\"\nmetric = \"queue_depth\"\nat_least = 2\n",
    );
    // After 0s, b and c wait; after 1s only c.
    assert_eq!(alarm_story(&s, &o, "x"), [(0, true), (1_000, false)]);
}

/// A log of ten records appended at 0s to one partition, each processed
/// in 1s, with alarm `x` on `consumer_lag`.
fn log_lag(alarm: &str) -> (Scenario, Outcome) {
    sim(&format!(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"1m\"\nservice_time = \"1s\"\n\
         [[traffic]]\ncount = 10\nover = \"0s\"\n\
         [[alarm]]\nname = \"x\"\nmetric = \"consumer_lag\"\n{alarm}"
    ))
}

#[test]
fn s15_consumer_lag_reads_a_logs_records_not_done() {
    // After 0s: ten appended, none done (lag 10); one more done each
    // second: 9 after 1s, 8 after 2s, 7 after 3s.
    let (s, o) = log_lag("at_least = 8\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(0, true), (3_000, false)]);
    assert_eq!(o.alarms[0].peak, 10);
    assert_eq!(o.totals.max_lag, 10);
    // `for` waits as for every metric: at least 8 since 0s, 2s later.
    let (s, o) = log_lag("at_least = 8\nfor = \"2s\"\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(2_000, true), (3_000, false)]);
    // Ten records one second each: the lag is 1 until the last is done.
    let (s, o) = log_lag("at_least = 1\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(0, true), (10_000, false)]);
}

#[test]
fn d16_11_an_instant_after_the_last_event_is_not_observed() {
    // Without operator steps the run ends at 15s: a's age would reach
    // 10s at 20s, after the end.
    let text = BASE.replace(
        "[[operator]]\nwait = \"30s\"\nrepair = true\naction = \"redrive_all\"\n",
        "",
    );
    let (s, o) = sim(&format!(
        "{text}[[alarm]]\nname = \"x\"\nmetric = \"oldest_age\"\nat_least = \"10s\"\n"
    ));
    assert_eq!(o.totals.end_time, 15_000);
    assert_eq!(alarm_story(&s, &o, "x"), []);
    // An empty quarantine has no age: below any threshold.
    let (s, o) = sim(&format!(
        "{text}[[alarm]]\nname = \"x\"\nmetric = \"oldest_age\"\nat_least = \"1ms\"\n"
    ));
    assert_eq!(alarm_story(&s, &o, "x"), [(10_001, true)]);
    assert!(o.alarms[0].firing);
}

#[test]
fn s15_alarms_never_change_the_run() {
    let plain = fixture(DELIVERY, BASE_EXTRA, BASE_OP);
    let alarms = "[[alarm]]\nname = \"d\"\nmetric = \"dlq_depth\"\nat_least = 1\n\
                  [[alarm]]\nname = \"o\"\nmetric = \"oldest_age\"\nat_least = \"1s\"\n\
                  [[alarm]]\nname = \"w\"\nmetric = \"dlq_arrivals\"\nwindow = \"5s\"\nat_least = 1\n";
    let (_, a) = sim(&plain);
    let (_, b) = sim(&format!("{plain}{alarms}"));
    assert_eq!(a.totals, b.totals);
    assert_eq!(a.messages, b.messages);
    let without: Vec<_> = b
        .transitions
        .iter()
        .filter(|t| {
            !matches!(
                t.detail,
                Detail::AlarmFired { .. } | Detail::AlarmCleared { .. }
            )
        })
        .copied()
        .collect();
    assert_eq!(a.transitions, without);
}

#[test]
fn an_alarm_keeps_its_changes_with_the_metric_and_its_peak() {
    // dlq_depth: 1 at 10s, 2 at 15s, 0 after the redrive at 45s.
    let (_, o) = with("metric = \"dlq_depth\"\nat_least = 2\n");
    let r = &o.alarms[0];
    assert_eq!(
        r.changes,
        [
            AlarmChange {
                time: 15_000,
                fired: true,
                value: Some(2)
            },
            AlarmChange {
                time: 45_000,
                fired: false,
                value: Some(0)
            }
        ]
    );
    assert_eq!((r.peak, r.changes_dropped), (2, 0));
    // An alarm that never fires still knows how high its metric went.
    let (_, o) = with("metric = \"dlq_depth\"\nat_least = 3\n");
    assert_eq!((o.alarms[0].times_fired, o.alarms[0].peak), (0, 2));
    assert!(o.alarms[0].changes.is_empty());
}

#[test]
fn a_flapping_alarm_keeps_200_changes_and_counts_the_rest() {
    // A message that fails forever, redriven a second after each
    // quarantine, leaves the DLQ for a second each time: the alarm clears
    // at every redrive and fires a second later.
    let mut text = String::from(
        "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[alarm]]\nname = \"x\"\nmetric = \"dlq_depth\"\nat_least = 1\n",
    );
    for _ in 0..150 {
        text.push_str("[[operator]]\nwait = \"1s\"\naction = \"redrive_all\"\n");
    }
    let (_, o) = sim(&text);
    let r = &o.alarms[0];
    assert_eq!(r.changes.len(), ALARM_CHANGES_KEPT);
    assert_eq!(r.times_fired, 151);
    // 151 firings and 150 clearings.
    assert_eq!(r.changes.len() as u64 + r.changes_dropped, 301);
    assert!(r.changes.iter().step_by(2).all(|c| c.fired));
}

#[test]
fn s15_oldest_age_peaks_at_the_age_its_oldest_message_reached() {
    // a is quarantined at 10s and redriven at 45s: the oldest age grows to
    // 35s with no event between 15s and 45s. Every oldest_age alarm, fired
    // or not, reports that peak; clearing on an empty quarantine has no
    // value (not 0s).
    let (s, o) = sim(&format!(
        "{BASE}[[alarm]]\nname = \"low\"\nmetric = \"oldest_age\"\nat_least = \"1s\"\n\
         [[alarm]]\nname = \"high\"\nmetric = \"oldest_age\"\nat_least = \"1h\"\n"
    ));
    assert_eq!(
        alarm_story(&s, &o, "low"),
        [(11_000, true), (45_000, false)]
    );
    assert_eq!((o.alarms[0].peak, o.alarms[1].peak), (35_000, 35_000));
    assert_eq!(
        o.alarms[0].changes,
        [
            AlarmChange {
                time: 11_000,
                fired: true,
                value: Some(1_000)
            },
            AlarmChange {
                time: 45_000,
                fired: false,
                value: None
            }
        ]
    );
}

#[test]
fn s15_oldest_age_peaks_at_the_end_of_a_run_it_never_leaves() {
    // Without the operator a and b stay quarantined; the run ends at 15s
    // (the last event), when a has been there 5s.
    let text = BASE.replace(
        "[[operator]]\nwait = \"30s\"\nrepair = true\naction = \"redrive_all\"\n",
        "",
    );
    let (_, o) = sim(&format!(
        "{text}[[alarm]]\nname = \"x\"\nmetric = \"oldest_age\"\nat_least = \"1h\"\n"
    ));
    assert_eq!(o.totals.end_time, 15_000);
    assert_eq!(o.alarms[0].peak, 5_000);
}

#[test]
fn s15_for_fires_once_the_condition_has_held_that_long() {
    // a enters quarantine at 10s: the depth is at least 1 from then on,
    // so the alarm fires at 20s, between events; cleared at 45s at once.
    let (s, o) = with("metric = \"dlq_depth\"\nat_least = 1\nfor = \"10s\"\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(20_000, true), (45_000, false)]);
    assert_eq!(o.alarms[0].first_fired_at, Some(20_000));
}

#[test]
fn s15_for_counts_from_where_time_alone_met_the_threshold() {
    // a's age reaches 7s at 17s, and has been at least 7s for 5s at 22s:
    // two steps of time alone between the events at 15s and 45s.
    let (s, o) = with("metric = \"oldest_age\"\nat_least = \"7s\"\nfor = \"5s\"\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(22_000, true), (45_000, false)]);
}

#[test]
fn s15_a_condition_that_ends_at_the_deadline_has_not_held_for_it() {
    // Two entries in the 8s window over [15s, 18s): held for 2999ms at
    // 17.999s, but at 18s it is already below, so `for = "3s"` never fires.
    let arrivals = "metric = \"dlq_arrivals\"\nwindow = \"8s\"\nat_least = 2\n";
    let (s, o) = with(&format!("{arrivals}for = \"3s\"\n"));
    assert_eq!(alarm_story(&s, &o, "x"), []);
    assert_eq!(o.alarms[0].times_fired, 0);
    let (s, o) = with(&format!("{arrivals}for = \"2999ms\"\n"));
    assert_eq!(alarm_story(&s, &o, "x"), [(17_999, true), (18_000, false)]);
}

#[test]
fn s15_clear_for_keeps_firing_until_the_metric_has_stayed_below() {
    // The redrive at 45s empties quarantine and the run ends there: the
    // 5s the alarm would wait to clear are never observed.
    let (s, o) = with("metric = \"dlq_depth\"\nat_least = 1\nclear_for = \"5s\"\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(10_000, true)]);
    assert!(o.alarms[0].firing);
    // Over [15s, 18s) the arrivals alarm is firing; below from 18s, it
    // clears at 18s + 20s = 38s, before the next event at 45s.
    let (s, o) =
        with("metric = \"dlq_arrivals\"\nwindow = \"8s\"\nat_least = 2\nclear_for = \"20s\"\n");
    assert_eq!(alarm_story(&s, &o, "x"), [(15_000, true), (38_000, false)]);
}

/// 28.12's worked example: a consumer-lag alarm sees a backlog grow while
/// the consumer is down; `partition` reads one partition's lag.
#[test]
fn s28_12_consumer_lag_pages_while_the_consumer_is_down() {
    let text = |alarm: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
             [log]\npartitions = {}\ncheckpoint_interval = \"1m\"\n\
             [[traffic]]\ncount = 600\nover = \"10m\"\npartition = 0\n\
             [[restart]]\nat = \"2m\"\ndown_for = \"5m\"\n\
             [[alarm]]\nname = \"lag\"\nmetric = \"consumer_lag\"\nat_least = 100\n{alarm}",
            if alarm.contains("partition") { 2 } else { 1 }
        )
    };
    // Down from 2m: the lag at 2m + k s is k; 100 at 3m40s; the resume at
    // 7m takes the backlog at once.
    let (s, o) = sim(&text(""));
    assert_eq!(
        alarm_story(&s, &o, "lag"),
        [(220_000, true), (420_000, false)]
    );
    assert_eq!(o.alarms[0].times_fired, 1);
    assert_eq!(o.totals.max_lag, 299);
    // The same records on partition 0 of two: its lag alone is read.
    let (s, o) = sim(&text("partition = 0\n"));
    assert_eq!(
        alarm_story(&s, &o, "lag"),
        [(220_000, true), (420_000, false)]
    );
    // Partition 1 gets nothing: never lagging.
    let (s, o) = sim(&text("partition = 1\n"));
    assert_eq!(alarm_story(&s, &o, "lag"), []);
    // `partition` is consumer_lag's and must name a partition the log has.
    for (key, says) in [
        ("partition = 2\n", "partition"),
        ("", "goes with metric = \"consumer_lag\""),
    ] {
        let bad = match key {
            "" => text("partition = 0\n")
                .replace("metric = \"consumer_lag\"", "metric = \"dlq_depth\""),
            k => text(k),
        };
        refused(&bad, says);
    }
}
