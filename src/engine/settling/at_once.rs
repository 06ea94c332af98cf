//! Settling at once: in a run where nothing reads the steps of a
//! delivery one by one, a first delivery that acks at once is settled in
//! one write of the message's record, and the arrivals that come before
//! anything scheduled are taken one after another without going through
//! [`Engine::step`] for each; a delivery of a message without faults
//! during an outage fails without the full path's tests for what such a
//! run cannot have. The outcome is the one stepping gives.

use crate::engine::Engine;
use crate::model::{Class, IntentIndex, KeyRef, MessageIndex, REASON_DOWNSTREAM_UNAVAILABLE};

/// How a delivery settling at once settled ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine) enum Settled {
    /// Acked in one write; nothing was scheduled.
    Acked,
    /// Failed in an outage; a retry or the quarantine followed.
    Failed,
}

impl Engine<'_> {
    /// A delivery of message `m` now, in a run that allows the one-write
    /// path, when the message has no faults: acked in one write outside an
    /// outage ([`ack_at_once`](Self::ack_at_once)), failed
    /// during one ([`outage_failure_delivery`](Self::outage_failure_delivery)).
    /// `None` when it is not such a one (nothing is changed then): the
    /// full path takes it.
    #[inline(always)]
    pub(in crate::engine) fn settle_at_once(&mut self, m: MessageIndex) -> Option<Settled> {
        if !self.source.draws.faults(self.core.scenario, m).is_empty() {
            return None;
        }
        if self.downstream.outages.contains(self.core.clock.now) {
            self.outage_failure_delivery(m);
            return Some(Settled::Failed);
        }
        self.ack_at_once(m).then_some(Settled::Acked)
    }

    /// The first delivery of a message without faults, outside an outage,
    /// in a run that allows it ([`super::Settling::at_once`]):
    /// what becoming ready and [`start_delivery`](Self::start_delivery)
    /// would do for it, in one write of its record. It receives, commits
    /// its effect (the call is accepted; the store, if it keeps results,
    /// keeps this one under the message's own key) and acks; no
    /// transition, census or sink row records any of it. The message was
    /// never quarantined, so no canary waits for it, and with direct
    /// deliveries it is in no ordering group. False when the record is
    /// not a first delivery's, or when the store holds a live result for
    /// its key (a hit, which the full path takes): nothing is changed
    /// then.
    #[inline(always)]
    pub(in crate::engine) fn ack_at_once(&mut self, m: MessageIndex) -> bool {
        let now = self.core.clock.now;
        let (intent, key) = self.first_delivery_key(m);
        if self.store.live(key, now).is_some() || !self.core.messages.ack_first_delivery(m, now) {
            return false;
        }
        self.store.store(key, now);
        #[cfg(test)]
        {
            self.consumer.settled += 1;
        }
        self.core.measures.count_effect(intent);
        let totals = &mut self.core.measures.totals;
        totals.deliveries += 1;
        self.downstream.calls.offer(now, false, totals);
        totals.acked += 1;
        self.core.clock.last_delivery = Some(now);
        true
    }

    /// The intent of `m` and the key of its first delivery: its own
    /// intent's (only a redrive gives another).
    #[inline(always)]
    pub(in crate::engine) fn first_delivery_key(&self, m: MessageIndex) -> (IntentIndex, KeyRef) {
        let intent = self.core.scenario.intent(m);
        let key = KeyRef {
            intent,
            generation: 0,
        };
        (intent, key)
    }

    /// Whether the run takes runs of arrivals through
    /// [`take_run_of_arrivals`](Self::take_run_of_arrivals).
    pub(in crate::engine) fn takes_runs_of_arrivals(&self) -> bool {
        self.consumer.settling.runs_of_arrivals
    }

    /// A delivery of a message without faults during an outage, in a run
    /// that allows settling at once: it fails as
    /// [`start_delivery`](Self::start_delivery) would fail it (the outage
    /// comes after the message's own faults, decision 10.2, and it has
    /// none), and what follows the failure is the full path's
    /// [`after_failure`](Self::after_failure).
    #[inline(always)]
    fn outage_failure_delivery(&mut self, m: MessageIndex) {
        let now = self.core.clock.now;
        // Ready, then in flight for no time: `after_failure` sets the state
        // that follows (waiting, quarantined or dropped).
        self.core.measures.totals.deliveries += 1;
        let (_, cycle_receives, _) = self.core.messages.receive(m);
        self.consumer.cycle_starts(&self.core, m, cycle_receives);
        let retry = cycle_receives > 1;
        self.downstream
            .calls
            .offer_during_outage(now, retry, &mut self.core.measures.totals);
        self.core.clock.last_delivery = Some(now);
        let (reason, class) = (REASON_DOWNSTREAM_UNAVAILABLE, Class::Transient);
        self.core.messages.set_failure(m, reason, class);
        self.after_failure(m, reason, class, now);
    }

    /// After an event, in a run that allows settling at once or settles
    /// writes at their start (`settling/writes.rs`) and has no alarms: the
    /// arrivals that come next, at or before the earliest scheduled entry
    /// (arrivals win ties, decision 10.1) and within `max_time` and
    /// `max_events`, each taken as [`Engine::step`] would take it. A
    /// delivery in one write, or a settled one, schedules nothing, so that
    /// bound is read once for the whole run of arrivals (the events left
    /// at each arrival: a write's calls count too). The first arrival the
    /// one-write path cannot settle goes the full way (or fails in an
    /// outage) and ends the run of arrivals, since it may schedule
    /// something; with settled writes every arrival goes the full way, and
    /// the first that schedules something ends it. So does the next
    /// question's time. Alarms look at every instant, so a run with alarms
    /// steps through each arrival.
    pub(in crate::engine) fn take_run_of_arrivals(&mut self) {
        if !self.takes_runs_of_arrivals() {
            return;
        }
        let limits = &self.core.scenario.limits;
        let mut until = self
            .core
            .schedule
            .scheduled_at()
            .map_or(limits.max_time, |at| at.min(limits.max_time));
        // A question's time is answered between its instant and the next
        // (`Engine::answer_passed_questions`): a run of arrivals ends there.
        if let Some(&at) = self.core.observers.question_times.last() {
            until = until.min(at);
        }
        // Read at each arrival: a write's calls and a settled end count as
        // events too.
        while self.core.clock.events_left(limits) > 0
            && let Some((t, m, sequence)) = self.core.schedule.take_arrival_until(until)
        {
            if t > self.core.clock.now {
                self.observe_instant();
                self.source_instants_before(t.min(limits.max_time.saturating_add(1)));
            }
            self.core.clock.advance_within(t);
            self.alarms.instant_has_events = true;
            if self.consumer.settling.writes {
                if self.settle_plain_write(m) {
                    continue;
                }
                // The full path; a delivery it did not settle may have
                // scheduled something, which ends the run of arrivals.
                let scheduled = self.core.schedule.next_sequence();
                self.becomes_ready(m, sequence);
                if self.core.schedule.next_sequence() != scheduled {
                    return;
                }
                continue;
            }
            if self.source.log.is_some() {
                // A log's arrival: an event of the queue's schedule.
                self.core.clock.last_event = Some(t);
                if !self.settle_record_at_once(m) {
                    return self.log_ready(m, sequence);
                }
                continue;
            }
            match self.settle_at_once(m) {
                Some(Settled::Acked) => {}
                Some(Settled::Failed) => return,
                None => return self.becomes_ready_in_full(m, sequence),
            }
        }
    }
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
