//! Settling at once: in a run where nothing reads the steps of a
//! delivery one by one, a first delivery that acks at once is settled in
//! one write of the message's record (`Engine::ack_at_once` in
//! `delivery.rs`; a log's record at its append in `step.rs`), and the
//! arrivals that come before anything scheduled are taken one after
//! another without going through [`Engine::step`] for each
//! (`Engine::take_run_of_arrivals`, `step.rs`); a delivery of a message
//! without faults during an outage fails without the full path's tests
//! for what such a run cannot have. The outcome is the one stepping gives.
//! Here: how such a delivery ended, and the tests.
//!
//! [`Engine::step`]: crate::engine::Engine

/// How a delivery settling at once settled ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine) enum Settled {
    /// Acked in one write; nothing was scheduled.
    Acked,
    /// Failed in an outage; a retry or the quarantine followed.
    Failed,
}

#[cfg(test)]
mod tests {
    use crate::engine::schedule::Due;
    use crate::engine::{Engine, Outcome, Recorder};
    use crate::model::Scenario;
    use crate::scenario::load_str;

    /// A run of arrivals stops at the earliest scheduled entry: an arrival
    /// at the same instant still comes first (decision 10.1), one a
    /// millisecond later waits for it; and it stops at an arrival the
    /// one-write path cannot settle, which goes the full way.
    #[test]
    fn a_run_of_arrivals_stops_at_the_earliest_scheduled_entry() {
        let (scenario, _) = load_str(
            "t.toml",
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
             [[message]]\nid = \"a\"\n\
             [[message]]\nid = \"f\"\nat = \"1s\"\nfaults = [{ fail = { first = 1 } }]\n\
             [[message]]\nid = \"g\"\nat = \"1s\"\n\
             [[message]]\nid = \"b\"\nat = \"2s\"\n\
             [[message]]\nid = \"c\"\nat = \"2s\"\n\
             [[message]]\nid = \"d\"\nat = \"2001ms\"\n",
        )
        .unwrap();
        let mut engine = Engine::new(&scenario, Recorder::Off);
        assert!(engine.consumer.settling.at_once);
        assert_eq!(engine.step(), Ok(true));
        assert_eq!(engine.core.schedule.arrived(), 1);
        // f fails and ends the run of arrivals before g: its retry is due
        // at 2s.
        engine.take_run_of_arrivals();
        assert_eq!(engine.core.schedule.arrived(), 2);
        assert_eq!(engine.core.clock.now, 1_000);
        assert_eq!(engine.core.measures.retries, 1);
        // g at 1s, then b and c at 2s, before the retry due at 2s.
        assert_eq!(engine.step(), Ok(true));
        engine.take_run_of_arrivals();
        assert_eq!(engine.core.schedule.arrived(), 5);
        assert_eq!(engine.core.clock.now, 2_000);
        assert_eq!(engine.core.measures.totals.acked, 4);
        let f = scenario.find_message("f").unwrap();
        assert!(matches!(
            engine.core.schedule.take(2_000),
            Some(Due::Ready { message, .. }) if message == f
        ));
    }

    /// A delivery that fails in an outage ends the run of arrivals: its
    /// retry, scheduled then, is due before the next arrival.
    #[test]
    fn an_outage_failure_ends_the_run_of_arrivals() {
        let (scenario, _) = load_str(
            "t.toml",
            "[delivery]\nmax_receives = 2\nretry_interval = \"5ms\"\n\
             [[outage]]\nfrom = \"5ms\"\nduration = \"1ms\"\n\
             [[message]]\nid = \"a\"\n\
             [[message]]\nid = \"b\"\nat = \"5ms\"\n\
             [[message]]\nid = \"c\"\nat = \"20ms\"\n",
        )
        .unwrap();
        let mut engine = Engine::new(&scenario, Recorder::Off);
        assert!(engine.takes_runs_of_arrivals());
        assert_eq!(engine.step(), Ok(true));
        engine.take_run_of_arrivals();
        // b failed at 5ms; c waits for b's retry at 10ms.
        assert_eq!(engine.core.schedule.arrived(), 2);
        assert_eq!(engine.core.clock.now, 5);
        assert_eq!(engine.core.measures.retries, 1);
        let b = scenario.find_message("b").unwrap();
        assert!(matches!(
            engine.core.schedule.take(10),
            Some(Due::Ready { message, .. }) if message == b
        ));
    }

    /// A first delivery settled in one write stores its result when the
    /// store keeps results: a later message with the same key is a hit
    /// while the result lives (strictly before its expiry, 10 s after the
    /// commit), and commits again from then on.
    #[test]
    fn a_delivery_in_one_write_keeps_its_result_in_the_store() {
        let (scenario, _) = load_str(
            "t.toml",
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
             [dedup]\nresult_retention = \"10s\"\n\
             [[message]]\nid = \"a\"\nkey = \"k\"\n\
             [[message]]\nid = \"b\"\nkey = \"k\"\nat = \"9999ms\"\n\
             [[message]]\nid = \"c\"\nkey = \"k\"\nat = \"10s\"\n\
             [[message]]\nid = \"d\"\nat = \"10s\"\n",
        )
        .unwrap();
        assert!(
            Engine::new(&scenario, Recorder::Off)
                .consumer
                .settling
                .at_once
        );
        let off = unrecorded_as_recorded(&scenario);
        assert_eq!(off.totals.dedup_hits, 1);
        assert_eq!(off.totals.effects, 3);
        assert_eq!(off.totals.duplicated_effects, 1);
        assert_eq!(off.totals.acked, 4);
    }

    /// During an outage a message without faults fails on the short path
    /// as on the full one: its first delivery is a call offered but not a
    /// retry, and the unrecorded run's calls are the recorded run's. (The
    /// expectation on a calls measure has the run count calls window by
    /// window.)
    #[test]
    fn an_outage_fails_a_delivery_on_the_short_path_as_on_the_full_one() {
        let (scenario, _) = load_str(
            "t.toml",
            "[delivery]\nmax_receives = 3\nretry_interval = \"5s\"\n\
             [[outage]]\nfrom = \"0s\"\nduration = \"3s\"\n\
             [[traffic]]\ncount = 20\nover = \"0s\"\n\
             [expect]\npeak_offered = 20\n",
        )
        .unwrap();
        let off = unrecorded_as_recorded(&scenario);
        // 20 first deliveries fail at 0s, their 20 retries ack at 5s: the
        // first of the two busiest windows is the peak, without a retry.
        assert_eq!(off.calls.peak_window, Some(0));
        assert_eq!(off.calls.peak_retries, 0);
        assert_eq!(off.totals.calls_offered, 40);
        assert_eq!(off.totals.deliveries, 40);
        assert_eq!(off.totals.acked, 20);
    }

    /// The unrecorded run (which takes settling at once), after checking
    /// that its totals, states and calls are the recorded run's.
    fn unrecorded_as_recorded(scenario: &Scenario) -> Outcome {
        let off = crate::engine::run(scenario, Recorder::Off).unwrap();
        let all = crate::engine::run(scenario, Recorder::All).unwrap();
        assert_eq!(off.totals, all.totals);
        assert_eq!(off.messages, all.messages);
        assert_eq!(off.calls, all.calls);
        off
    }
}
