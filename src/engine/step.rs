//! The run's loop: one event is one call of [`Engine::step`]. The clock
//! moves to the next due time (or the operator's next inspection), the
//! limits are checked, and the schedule gives what is due then, which the
//! step hands to its part: a message due from the source (a queue's, or a
//! log's appends, restarts and resumes), the operator's inspection and
//! the redrives it asks for, the store's restart, an expiry, the end of a
//! delivery or its timer (`delivery.rs`), a write's call. The loops that
//! run the steps (to the end, to a modeled time, with a census) and the
//! public step by step are in `run.rs`.

use super::alarms;
use super::log::{Reach, RecordDue};
use super::operator::{Operator, Redrives};
use super::schedule::Due;
use super::settling::Settled;
use super::transition::Detail;
use super::{Engine, Limit, LimitReached};
use crate::model::{Identity, MessageIndex, Millis, OnLimit, State, StoppedBy};

impl<'s> Engine<'s> {
    /// Runs to the end: answering questions in passing, taking arrivals in
    /// runs where the run allows it, or one event at a time.
    pub(super) fn run_to_end(&mut self) -> Result<(), LimitReached> {
        if self.asks_questions() {
            self.run_answering()?;
        } else if self.takes_runs_of_arrivals() {
            while self.step()? {
                self.take_run_of_arrivals();
            }
        } else {
            while self.step()? {}
        }
        Ok(())
    }

    /// Whether a question asks about a time before the end: the run then
    /// answers it as it passes that time.
    pub(super) fn asks_questions(&self) -> bool {
        !self.core.observers.question_times.is_empty()
    }

    /// Runs to the end, answering each question as the run passes its
    /// `at`: the step by step of [`run_until`], so that a copy taken there
    /// is what `run_until(at)` would finish. Arrivals are taken in runs
    /// ([`Engine::take_run_of_arrivals`]) where the run allows it, never past
    /// the next question's time.
    pub(super) fn run_answering(&mut self) -> Result<(), LimitReached> {
        let in_runs = self.takes_runs_of_arrivals();
        loop {
            let next = self.next_time();
            self.answer_passed_questions(next);
            if next.is_none() || !self.step()? {
                return Ok(());
            }
            if in_runs {
                self.take_run_of_arrivals();
            }
        }
    }

    /// Every question time before `next` (the time of the next event) has
    /// been passed: each is answered from a copy of the run finished
    /// there, as `run_until` would finish it. A copy records nothing and
    /// lives only while its answers are read: one at a time, as large as
    /// the run's state (never its transcript).
    pub(super) fn answer_passed_questions(&mut self, next: Option<Millis>) {
        // A run with nothing left to do ends here: its questions are asked
        // of the end (`report::questions`).
        let Some(next) = next else {
            return;
        };
        while let Some(&t) = self.core.observers.question_times.last() {
            if next <= t {
                return;
            }
            self.core.observers.question_times.pop();
            // The copy takes the watches, not the transcript.
            let quiet = self
                .core
                .observers
                .recording
                .for_answers(self.core.scenario.message_count());
            let kept = std::mem::replace(&mut self.core.observers.recording, quiet);
            let mut copy = self.clone();
            self.core.observers.recording = kept;
            let done = copy.next_time().is_none();
            let then = copy.finish(if done { None } else { Some(t) });
            let scenario = self.core.scenario;
            for (q, answer) in scenario
                .questions
                .iter()
                .zip(&mut self.core.observers.answers)
            {
                if q.at == Some(t) {
                    *answer = Some(then.value(scenario, &q.answer));
                }
            }
        }
    }
}

/// What happens next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Something due in the schedule.
    Event,
    /// An operator inspection (not an event).
    Inspection,
    /// A quarantined message's continuous expiry (section 28.11): an
    /// event, before every other of its instant.
    Expiry,
    /// The deduplication store's restart (section 28.5): an event, after
    /// every other of its instant.
    StoreRestart,
}

impl Engine<'_> {
    /// Time of the next event, if any (settling a drain first).
    pub(super) fn next_time(&mut self) -> Option<Millis> {
        self.next().map(|(t, _)| t)
    }

    /// The next thing to happen: its time, and what it is.
    #[inline(always)]
    pub(super) fn next(&mut self) -> Option<(Millis, Next)> {
        self.drop_cancelled_entries();
        let void_timers = self.consumer.receipts.void_timers();
        let relay_only = (self.downstream).relay_only(&mut self.core.schedule, void_timers);
        let next = match self.core.schedule.next_due() {
            Some(t) if !relay_only => Some((t, Next::Event)),
            due => {
                self.operator.settle_drain(&self.core, &mut self.source);
                match (self.operator.inspection_due, due) {
                    // A relay call and an inspection at one instant: the
                    // call first.
                    (Some(i), Some(t)) if i < t => Some((i, Next::Inspection)),
                    (_, Some(t)) => Some((t, Next::Event)),
                    (inspection, None) => inspection.map(|t| (t, Next::Inspection)),
                }
            }
        };
        // An expiry comes before the other events of its instant, a store
        // restart after them.
        let next = match (
            self.operator.next_expiry(&self.core, &self.quarantine),
            next,
        ) {
            (Some(e), Some((t, _))) if e <= t => Some((e, Next::Expiry)),
            (Some(e), None) => Some((e, Next::Expiry)),
            (_, next) => next,
        };
        // The store's restarts taken so far are those counted.
        let taken = self.core.measures.totals.store_restarts as usize;
        let restart = self.core.scenario.store_restarts.get(taken);
        match (restart, next) {
            (Some(&s), Some((t, _))) if s < t => Some((s, Next::StoreRestart)),
            (Some(&s), None) => Some((s, Next::StoreRestart)),
            (_, next) => next,
        }
    }

    /// Processes one event; false when the run has ended (drained, or
    /// stopped at a limit under `on_limit = "stop"`).
    pub(super) fn step(&mut self) -> Result<bool, LimitReached> {
        let Some((t, next)) = self.next() else {
            return Ok(false);
        };
        let is_event = next != Next::Inspection;
        let recording = &self.core.observers.recording;
        let gap = (recording.transitions.len(), recording.state_changes.len());
        if t > self.core.clock.now {
            self.observe_instant();
            self.observe_alarms(t.min(self.core.scenario.limits.max_time));
            self.source_instants_before(
                t.min(self.core.scenario.limits.max_time.saturating_add(1)),
            );
        }
        if let Err(limit) = self
            .core
            .clock
            .advance(t, &self.core.scenario.limits, is_event)
        {
            if self.core.scenario.flow.on_limit == OnLimit::Fail {
                return Err(self.limit_reached(limit));
            }
            self.stop(limit);
            return Ok(false);
        }
        if let Some(census) = &mut self.core.measures.census {
            census.advance(
                t,
                super::census::Progress::of(&self.core.measures.totals),
                &self.core.messages,
            );
        }
        // The writes' transitions up to this instant come before its events,
        // and so do the quarantine's archives and expiries.
        self.record_told(t);
        self.operator.archive_until(&mut self.core, t);
        // A log's checkpoints are recorded at their own instants, which
        // may fall among the gap's alarms and writes.
        self.core.observers.recording.order_gap(gap.0, gap.1);
        self.alarms.instant_has_events = true;
        if next == Next::Expiry {
            (self.operator).expire_continuously(&mut self.core, &mut self.quarantine);
            return Ok(true);
        }
        if next == Next::StoreRestart {
            self.store.restart_now(&mut self.core);
            return Ok(true);
        }
        if self.core.scenario.continuous_expiry {
            (self.operator).expire_continuously(&mut self.core, &mut self.quarantine);
        }
        let last_event = self.core.clock.last_event;
        if is_event {
            self.source.event_taken(&mut self.core.clock, t);
        }
        match self.core.schedule.take(t) {
            Some(Due::Source { resume }) => {
                self.source_event(resume);
                return Ok(true);
            }
            Some(Due::Ready { message, sequence }) => self.message_due(message, sequence),
            Some(Due::End { message, finish }) => {
                self.consumer.busy_workers = self.consumer.busy_workers.saturating_sub(1);
                self.end_delivery(message, finish, true, t);
            }
            Some(Due::EndOf { slot }) => {
                self.consumer.busy_workers = self.consumer.busy_workers.saturating_sub(1);
                self.end_of_receipt(slot);
            }
            Some(Due::Visible { slot, sequence }) => self.visible(slot, sequence),
            Some(Due::Append { message }) => self.append_again(message),
            Some(Due::Call { flight, sink }) => {
                if self.write_call_due(flight, sink) {
                    // A log drains with its last delivery, not with the
                    // relay (decision 27.26).
                    self.core.clock.last_event = last_event;
                }
            }
            None => self.inspect(),
        }
        self.take_ready();
        // Only tracked deliveries open records.
        if self.consumer.with_receipts
            && self.consumer.receipts.open_count() > self.consumer.in_flight_cap
        {
            return Err(self.limit_reached(Limit::InFlight(self.consumer.in_flight_cap)));
        }
        Ok(true)
    }

    /// An operator inspection (the operator's part), then the redrives
    /// it asks for, then the ids of its `only` it did not redrive.
    fn inspect(&mut self) {
        let Some(redrives) = self.operator.inspect(&mut self.core, &mut self.quarantine) else {
            return;
        };
        self.redrive(&redrives);
        if redrives.canary_decides {
            self.canary_decides();
        }
        Operator::redrives_skipped(&mut self.core, &redrives.skipped);
    }

    /// A message became final or returned to quarantine (`acked`: it was
    /// acked): the last canary of a canary redrive decides.
    pub(super) fn canary_settled(&mut self, m: MessageIndex, acked: bool) {
        if self.operator.canary_settled(m, acked) {
            self.canary_decides();
        }
    }

    /// The canaries decided: if all acked, the rest are redriven now.
    fn canary_decides(&mut self) {
        if let Some(redrives) = self
            .operator
            .canary_decides(&mut self.core, &mut self.quarantine)
        {
            self.redrive(&redrives);
        }
    }

    /// Redrives messages out of quarantine now, in order; with a rate the
    /// k-th becomes ready at now + floor(k * 1000 / rate).
    fn redrive(&mut self, redrives: &Redrives) {
        let now = self.core.clock.now;
        for (k, &m) in redrives.messages.iter().enumerate() {
            let at = match redrives.rate {
                Some(r) => now.saturating_add((k as u64).saturating_mul(1000) / r),
                None => now,
            };
            self.redrive_one(m, redrives.identity, at);
        }
    }

    /// A new cycle for a message out of quarantine, ready again at `at`
    /// (now, or later under a redrive rate): a queue takes it then, a log
    /// appends it now (decision 26.12).
    fn redrive_one(&mut self, m: MessageIndex, identity: Identity, at: Millis) {
        let scenario = self.core.scenario;
        self.operator.leaves_quarantine(&self.core.messages, m);
        self.core.set_state(m, State::Waiting);
        let (cycle, key) = self.core.messages.update(m, |message| {
            message.cycle += 1;
            message.cycle_receives = 0;
            if identity == Identity::New {
                let intent = scenario.intent(m);
                message.set_key(scenario.fresh_key(intent, message.cycle - 1));
            }
            (message.cycle, message.key(scenario.intent(m)))
        });
        let record = self.source.record_appended(&self.core, m);
        self.core
            .record(Some(m), Detail::Redriven { cycle, key, record });
        self.core.state_changed(m);
        self.operator.enqueued_again(m, at);
        let now = self.core.clock.now;
        if self.source.log.is_some() {
            self.core.set_state(m, State::Ready);
            self.append(m);
            return;
        }
        self.core.schedule.put_back(now, at, m);
    }

    // The source's events: an arrival, a retry or a redrive due, a log's
    // records, restarts and resumes, and the producer's retries.

    /// Message `m` is due from the source (its arrival, a retry, a
    /// redrive): it becomes ready in a queue; a log appends or continues
    /// its record.
    #[inline(always)]
    pub(super) fn message_due(&mut self, m: MessageIndex, sequence: u64) {
        if self.source.log.is_none() {
            return self.becomes_ready(m, sequence);
        }
        if self.consumer.settling.at_once
            && sequence < self.core.scenario.message_count()
            && self.settle_record_at_once(m)
        {
            return;
        }
        self.log_ready(m, sequence);
    }

    /// A log entry is due: an arrival appends a record; a retry or a
    /// record made due continues its partition.
    pub(super) fn log_ready(&mut self, m: MessageIndex, sequence: u64) {
        let count = self.core.scenario.message_count();
        match self.source.log_mut().ready(m, sequence, count) {
            RecordDue::Arrived => {
                self.core.set_state(m, State::Ready);
                self.core.state_changed(m);
                self.append(m);
                self.source.log_mut().append_ack_lost(&mut self.core, m);
            }
            RecordDue::Retry => self.start_delivery(m),
            RecordDue::Start(p) => self.start_record(p),
            RecordDue::Nothing => {}
        }
    }

    /// The arrival of `m` in a run that allows settling at once
    /// ([`crate::engine::settling::Settling::at_once`]): when its partition is idle with
    /// nothing pending, and its first delivery acks at once (no fault, no
    /// outage, no live result), what appending, starting, delivering and
    /// moving on would do. False when it is not such a one (nothing is
    /// changed then): the full path takes it.
    #[inline(always)]
    pub(super) fn settle_record_at_once(&mut self, m: MessageIndex) -> bool {
        if !self.source.draws.faults(self.core.scenario, m).is_empty()
            || self.downstream.outages.contains(self.core.clock.now)
        {
            return false;
        }
        let log = self.source.log.as_deref().expect("a log run");
        let Some(p) = log.idle_for(&self.core, m) else {
            return false;
        };
        if !self.ack_at_once(m) {
            return false;
        }
        self.source.log_mut().settled_at_once(m, p);
        true
    }

    /// `m` is appended to its partition now (its arrival, or a redrive:
    /// decision 26.12); an idle partition starts it at once.
    pub(super) fn append(&mut self, m: MessageIndex) {
        if let Some(p) = self.source.log_mut().append(&self.core, m) {
            self.start_record(p);
        }
    }

    /// The producer's retry of `m`'s append is due (section 28.6).
    pub(super) fn append_again(&mut self, m: MessageIndex) {
        let (starts, again) = self.source.log_mut().append_again(&mut self.core, m);
        if let Some(p) = starts {
            self.start_record(p);
        }
        if again {
            super::log::schedule_append_retry(&mut self.core, m);
        }
    }

    /// Partition `p` starts the record at its position: a message
    /// processed again leaves its outcome, and a fresh attempt counts its
    /// receives from zero.
    fn start_record(&mut self, p: usize) {
        let Some(begin) = self.source.log_mut().start_record(&mut self.core, p) else {
            return;
        };
        let m = begin.message;
        if let Some(state) = begin.reopened {
            self.reopen(m, state);
        }
        if begin.fresh && self.core.messages.cycle_receives(m) > 0 {
            self.core.messages.update(m, |s| s.cycle_receives = 0);
            if let Some(previous) = self.consumer.prev_delays.get_mut(m as usize) {
                *previous = 0;
            }
        }
        self.start_delivery(m);
    }

    /// A final message whose record is processed again is pending again.
    fn reopen(&mut self, m: MessageIndex, state: State) {
        if matches!(state, State::Quarantined | State::Expired | State::Purged) {
            self.operator.leaves_quarantine(&self.core.messages, m);
        }
        let totals = &mut self.core.measures.totals;
        match state {
            State::Acked => totals.acked -= 1,
            State::Quarantined => {
                self.quarantine.remove(m);
            }
            State::Expired => totals.expired -= 1,
            State::Purged => totals.purged -= 1,
            State::Dropped => totals.dropped -= 1,
            _ => {}
        }
        self.core.set_state(m, State::Ready);
    }

    /// `m` is acked, quarantined or dropped: a log's partition moves past
    /// its record.
    #[inline(always)]
    pub(super) fn source_moves_past(&mut self, m: MessageIndex) {
        if let Some(log) = self.source.log.as_deref_mut() {
            log.record_done(&mut self.core, m);
        }
    }

    /// The instants before `t` that the source keeps: a log's checkpoints
    /// and the positions its stale resumes will read.
    #[inline(always)]
    pub(super) fn source_instants_before(&mut self, t: Millis) {
        if let Some(log) = self.source.log.as_deref_mut() {
            log.instants_before(&mut self.core, &mut self.downstream.sinks, t);
        }
    }

    /// Drops the scheduled entries at the front that a log's restart
    /// cancelled: they are not events (decision 27.26). A cancelled
    /// delivery's end frees its receipt; a cancelled write's later calls
    /// are never made. Then a visibility timer found void.
    #[inline(always)]
    pub(super) fn drop_cancelled_entries(&mut self) {
        loop {
            if self.source.log.is_some() {
                self.drop_log_entries_cancelled();
            }
            if !self.consumer.drop_void_timer(&mut self.core) {
                return;
            }
        }
    }

    fn drop_log_entries_cancelled(&mut self) {
        let log = self.source.log.as_deref().expect("a log run");
        let schedule = &mut self.core.schedule;
        loop {
            let Some((at, sequence, due)) = schedule.peek_scheduled() else {
                return;
            };
            if schedule.arrival_due().is_some_and(|a| a <= at) {
                return;
            }
            let m = match due {
                Due::Ready { message, .. } | Due::End { message, .. } => message,
                Due::EndOf { slot } => self.consumer.receipts.message_of(slot),
                // A direct or saga write's next call is the consumer's; a
                // relay's or a coordinator's is not cancelled.
                Due::Call { flight, .. } => {
                    let writes = self.downstream.writes.as_ref();
                    match writes.and_then(|w| w.consumer_call_of(flight)) {
                        Some(m) => m,
                        None => return,
                    }
                }
                // The producer's: no restart of the consumer cancels it.
                Due::Visible { .. } | Due::Source { resume: false } | Due::Append { .. } => return,
                // A resume whose partitions all restarted again since.
                Due::Source { resume: true } => {
                    if log.resumes_at(at) {
                        return;
                    }
                    schedule.pop_scheduled();
                    continue;
                }
            };
            if !log.cancelled(m, sequence) {
                return;
            }
            schedule.pop_scheduled();
            match due {
                Due::EndOf { slot } => self.consumer.receipts.abandon(slot),
                Due::Call { flight, .. } => {
                    // Its later calls are never made (decision 27.35).
                    let writes = self.downstream.writes.as_mut().expect("a write");
                    if let Some(slot) = writes.cancel(flight) {
                        self.consumer.receipts.abandon(slot);
                    }
                }
                _ => {}
            }
        }
    }

    /// The source's own event, due now: a log's restart, or its resume.
    pub(super) fn source_event(&mut self, resume: bool) {
        let reach = Reach {
            sinks: &mut self.downstream.sinks,
            quarantine: &mut self.quarantine,
            in_flight: &mut self.consumer.in_flight,
        };
        let log = self.source.log.as_deref_mut().expect("a log run");
        log.event(&mut self.core, reach, resume);
    }

    /// The run ends at `end`.
    pub(super) fn source_close(&mut self, end: Millis) {
        if let Some(log) = self.source.log.as_deref_mut() {
            log.close(&mut self.core, &mut self.downstream.sinks, end);
        }
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

    /// After each instant: the queue depth and the deliveries in flight.
    pub(super) fn observe_instant(&mut self) {
        let totals = &mut self.core.measures.totals;
        totals.max_queue_depth = totals.max_queue_depth.max(self.consumer.ready.depth);
        let settled = self
            .consumer
            .ends_ahead
            .in_flight_after(self.core.clock.now);
        totals.max_in_flight = totals.max_in_flight.max(self.consumer.in_flight + settled);
        self.source.observe(self.core.clock.now, totals);
    }

    /// Reads every alarm after the instant now (if it had events), then at
    /// the time-driven instants before `next` (exclusive).
    #[inline]
    pub(super) fn observe_alarms(&mut self, next: Millis) {
        if self.core.scenario.alarms.is_empty() {
            return;
        }
        let readings = alarms::Readings {
            quarantine_depth: self.quarantine.len(),
            queue_depth: self.consumer.ready.depth,
            oldest_entry: self
                .quarantine
                .first()
                .and_then(|m| self.core.messages.get(m).last_quarantined_at()),
            consumer_lag: self.source.lag(),
            source: &self.source,
            outbox_dead_letters: self.downstream.outbox_dead_letters(),
        };
        let out = alarms::Written {
            recording: &mut self.core.observers.recording,
            messages: &self.core.messages,
        };
        let now = self.core.clock.now;
        self.alarms
            .observe(self.core.scenario, now, next, &readings, out);
    }

    /// `on_limit = "stop"`: the run ends at the limit. A time limit ends
    /// it at `max_time`; an event limit at the last processed event.
    pub(super) fn stop(&mut self, limit: Limit) {
        self.core.stopped_by = match limit {
            Limit::Time(max_time) => {
                self.core.clock.stop_at(max_time);
                StoppedBy::MaxTime
            }
            Limit::Events(_) | Limit::InFlight(_) => {
                self.core.clock.stop_at(self.core.clock.now);
                StoppedBy::MaxEvents
            }
        };
    }

    /// The messages not final (acked, quarantined, expired, purged or
    /// dropped): the `pending` total a stopped run reports. Not the
    /// schedule's entries, which also count retries' timers, ends of
    /// deliveries and visibility timeouts.
    fn pending_messages(&self) -> u64 {
        let t = &self.core.measures.totals;
        let done = t.acked + self.quarantine.len() + t.expired + t.purged + t.dropped;
        self.core.scenario.message_count().saturating_sub(done)
    }

    pub(super) fn limit_reached(&self, limit: Limit) -> LimitReached {
        LimitReached {
            limit,
            at: self.core.clock.now,
            deliveries: self.core.measures.totals.deliveries,
            pending: self.pending_messages(),
        }
    }
}
