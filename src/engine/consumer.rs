//! The consumer side: one delivery of a taken message, decided by the rules
//! of docs/model.md section 3 (with the downstream's order of section 13)
//! when it starts, and what follows when it ends (step 5). Without workers
//! and service time the start and the end are one atomic step.

use super::ack_pending::AckPending;
use super::dedup::DedupStore;
use super::pages;
use super::ready::ReadySet;
use super::receipts::{Decision, Receipts, Record, Writing};
use super::schedule::{Due, Finish};
use super::settling::EndsAhead;
use super::settling::Settling;
use super::write::Writes;
use super::{Core, Draws};
use crate::model::{
    Class, CrashAt, MessageIndex, Millis, REASON_CONSUMER_CRASHED, Scenario, State,
};

/// The consumer: its workers, the ready set they take from, the
/// deliveries in flight and their ends.
#[derive(Clone)]
pub(super) struct Consumer {
    /// Ready messages not yet taken, and which may be taken.
    pub(super) ready: ReadySet,
    /// nats-jetstream's MaxAckPending, when it can bind: messages held in
    /// the stream while as many are pending.
    pub(super) ack_pending: Option<AckPending>,
    /// Unlimited workers and no ordering: a ready message is taken at
    /// once, and the ready set is never used.
    pub(super) direct: bool,
    /// What the run settles at a delivery's start, as every part allows
    /// (`settling.rs`).
    pub(super) settling: Settling,
    /// Deliveries settled at their start, for the tests that show which
    /// path a run took.
    #[cfg(test)]
    pub(super) settled: u64,
    /// The ends of settled deliveries still in flight.
    pub(super) ends_ahead: EndsAhead,
    /// Workers delivering now.
    pub(super) busy_workers: u64,
    /// Deliveries in flight (with a service time).
    pub(super) in_flight: u64,
    pub(super) service_time: Millis,
    /// Per message, time ready but not taken; only with workers,
    /// ordering or a MaxAckPending that can bind (otherwise nothing ever
    /// waits).
    pub(super) queue_waits: Vec<Millis>,
    /// Per message, decorrelated jitter's previous delay in its cycle;
    /// only with decorrelated jitter.
    pub(super) prev_delays: Vec<Millis>,
    /// Per message, when its cycle's first delivery started; only with
    /// `max_elapsed` (section 28.3).
    pub(super) cycle_starts: Vec<Millis>,
    /// The first deliveries that came after their message's arrival, for
    /// the dead-letter envelope's `first_delivery` (decision 10.12).
    pub(super) first_deliveries: super::FirstDeliveries,
    /// The `max_elapsed` quarantine in hand: the retry's due time and the
    /// cycle's start, for its transition.
    pub(super) over_elapsed: Option<(Millis, Millis)>,
    /// Whether each delivery keeps a receipt of its own (the file uses
    /// sections 17-22, or `[write]`): only the latest reaches the broker.
    pub(super) with_receipts: bool,
    /// The deliveries in flight, one receipt each.
    pub(super) receipts: Receipts,
    /// The most deliveries in flight at once the run keeps (sections
    /// 17-22): one per message, and [`super::receipts::EXTRA_DELIVERIES_IN_FLIGHT`].
    pub(super) in_flight_cap: u64,
}

impl Consumer {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let count = scenario.message_count();
        let flow = &scenario.flow;
        let waits = flow.workers.is_some() || flow.ordering != crate::model::Ordering::None;
        let decorrelated = matches!(
            scenario.delivery.retry,
            crate::model::Retry::Backoff {
                jitter: crate::model::Jitter::Decorrelated,
                ..
            }
        );
        let per_message = |wanted: bool| pages::zeroed(if wanted { count as usize } else { 0 });
        let ack_pending = AckPending::new(scenario);
        // A queue whose messages wait for a worker, a group or MaxAckPending
        // keeps one per message, as it keeps their waits; a log only those
        // of records that waited for a busy or stopped partition.
        let first_deliveries = match (waits || ack_pending.is_some(), &scenario.log) {
            (true, _) => super::FirstDeliveries::Dense(per_message(true)),
            (false, Some(_)) => super::FirstDeliveries::Sparse(Default::default()),
            (false, None) => super::FirstDeliveries::AtArrival,
        };
        Consumer {
            ready: ReadySet::new(scenario),
            queue_waits: per_message(waits || ack_pending.is_some()),
            ack_pending,
            direct: !waits,
            settling: Settling::NOTHING,
            #[cfg(test)]
            settled: 0,
            ends_ahead: EndsAhead::default(),
            busy_workers: 0,
            in_flight: 0,
            service_time: match &scenario.log {
                Some(log) => log.service_time,
                None => scenario.flow.workers.map_or(0, |w| w.service_time),
            },
            prev_delays: per_message(decorrelated),
            cycle_starts: per_message(scenario.delivery.max_elapsed.is_some()),
            first_deliveries,
            over_elapsed: None,
            with_receipts: scenario.guarantees.extended || scenario.write.is_some(),
            receipts: Receipts::new(scenario),
            in_flight_cap: count.saturating_add(super::receipts::EXTRA_DELIVERIES_IN_FLIGHT),
        }
    }

    /// `m`'s first delivery ever starts now: kept when it waited.
    #[cold]
    pub(super) fn first_delivery_waited(&mut self, core: &Core, draws: &Draws, m: MessageIndex) {
        let now = core.clock.now;
        if now > draws.arrival(core.scenario, m) {
            match &mut self.first_deliveries {
                super::FirstDeliveries::Dense(all) => all[m as usize] = now,
                super::FirstDeliveries::Sparse(some) => {
                    some.insert(m, now);
                }
                super::FirstDeliveries::AtArrival => {}
            }
        }
    }

    /// `m`'s cycle began now when this is its first delivery (`max_elapsed`
    /// budgets count from there).
    #[inline(always)]
    pub(super) fn cycle_starts(&mut self, core: &Core, m: MessageIndex, cycle_receives: u32) {
        if cycle_receives == 1
            && let Some(start) = self.cycle_starts.get_mut(m as usize)
        {
            *start = core.clock.now;
        }
    }

    /// Whether a retry of `m` due at `due` is past its cycle's
    /// `max_elapsed` budget (section 28.3: due exactly at the budget's end
    /// is within it); if so, the quarantine that follows is told so and
    /// counted.
    pub(super) fn over_elapsed(&mut self, core: &mut Core, m: MessageIndex, due: Millis) -> bool {
        let Some(budget) = core.scenario.delivery.max_elapsed else {
            return false;
        };
        let began = self.cycle_starts[m as usize];
        if due.saturating_sub(began) <= budget {
            return false;
        }
        self.over_elapsed = Some((due, began));
        core.measures.totals.elapsed_exhausted += 1;
        true
    }
}

impl Consumer {
    /// A delivery of `m` whose write is in flight starts now: it holds its
    /// worker until the write's last reply and its service time after it
    /// ([`write_heard`](Self::write_heard)). Its visibility timer is scheduled now when it does
    /// not move with heartbeats (whether it is wanted is known at the
    /// write's last reply), else then.
    pub(super) fn start_writing(
        &mut self,
        core: &mut Core,
        writes: Option<&mut Writes>,
        m: MessageIndex,
        receive: u32,
        decision: Decision,
        writing: Writing,
    ) {
        let now = core.clock.now;
        let scenario = core.scenario;
        let heartbeats = scenario
            .guarantees
            .sqs
            .is_some_and(|s| s.heartbeat.is_some());
        let n = core.messages.cycle_receives(m);
        let visible = scenario.visible_again_at(now, now, n);
        let timer = visible.filter(|_| !heartbeats);
        let slot = self.receipts.open(Record {
            // Known at the write's last reply.
            done_key: None,
            writing: Some(writing),
            ..Record::delivery(m, receive, now, visible, &decision, timer.is_some())
        });
        core.set_state(m, State::InFlight);
        self.in_flight += 1;
        core.state_changed(m);
        if let Some(writes) = writes {
            writes.set_owner(writing.flight, slot);
        }
        if let Some(at) = timer {
            core.schedule.schedule_visible(now, at, slot);
        }
    }

    /// The write of the delivery in `slot` is done (`done`): how the
    /// delivery ends follows, and its end is scheduled after its service
    /// time. A delivery that a restart abandoned meanwhile (`abandoned`)
    /// is let go.
    pub(super) fn write_heard(
        &mut self,
        core: &mut Core,
        abandoned: bool,
        store: &mut DedupStore,
        slot: u32,
        done: &super::write::Finished,
    ) {
        let now = core.clock.now;
        if abandoned {
            self.receipts.abandon(slot);
            return;
        }
        let scenario = core.scenario;
        let wrote = done.wrote;
        let heard = done.commit.saturating_add(wrote.took);
        let record = &mut self.receipts.slots[slot as usize];
        let Some(writing) = record.writing.take() else {
            return;
        };
        record.finish = match (record.crash, wrote.failed) {
            (Some(_), _) => Finish::Failed(REASON_CONSUMER_CRASHED, Class::Transient),
            (None, Some((reason, class))) => Finish::Failed(reason, class),
            (None, None) if writing.ack_lost => Finish::AckLost,
            (None, None) => Finish::Acked,
        };
        let stores = wrote.stores_result;
        if writing.lease {
            if matches!(record.crash, None | Some(CrashAt::AfterDone)) && stores {
                record.done_key = Some(done.key);
            }
        } else if stores {
            store.store_seen_from(done.key, done.commit, heard);
        }
        let record = self.receipts.slots[slot as usize];
        let end = heard.saturating_add(self.service_time);
        let busy = &mut core.measures.totals.worker_busy;
        *busy = busy.saturating_add(end - record.start);
        let unacked = match record.finish {
            Finish::Acked => false,
            Finish::AckLost => scenario.waits_for_ack_wait(true),
            Finish::Failed(..) => scenario.waits_for_ack_wait(false),
        };
        let wanted = |at: Millis| record.crash.is_some() || end > at || unacked;
        if record.wait != Millis::MAX {
            let heartbeats = scenario
                .guarantees
                .sqs
                .is_some_and(|s| s.heartbeat.is_some());
            if heartbeats {
                let n = core.messages.cycle_receives(record.message);
                let visible = scenario.visible_again_at(record.start, end, n);
                if let Some(at) = visible.filter(|&at| wanted(at)) {
                    self.receipts.slots[slot as usize].refs += 1;
                    core.schedule.schedule_visible(now, at.max(now), slot);
                }
            } else if !wanted(record.start.saturating_add(record.wait)) {
                self.receipts.slots[slot as usize].timer_void = true;
                self.receipts.void_timers += 1;
            }
        }
        core.schedule.schedule_end_of(now, end, slot);
    }

    /// Drops the visibility timer at the front of the schedule if it
    /// turned out not to be wanted (`write_heard`): it is no event. True
    /// when one was dropped.
    pub(super) fn drop_void_timer(&mut self, core: &mut Core) -> bool {
        if self.receipts.void_timers == 0 {
            return false;
        }
        let Some((_, _, Due::Visible { slot, .. })) = core.schedule.peek_scheduled() else {
            return false;
        };
        if !self.receipts.slots[slot as usize].timer_void {
            return false;
        }
        core.schedule.pop_scheduled();
        // What its firing would do: nothing but free its record.
        self.receipts.release(slot);
        self.receipts.void_timers -= 1;
        true
    }
}
