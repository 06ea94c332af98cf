//! The operator (docs/model.md section 6): after each cycle drains and the
//! step's wait, an inspection applies expiry, then repair, then the action.

use std::collections::BTreeSet;

use super::Engine;
use super::transition::Detail;
use crate::model::{Action, Identity, MessageIndex, Millis, Profile, SQS_REDRIVE_RATE, State};

/// At most this many canaries of one redrive are listed in its record.
pub const CANARIES_LISTED: usize = 100;

/// What a canary redrive did: when its step inspected, when the canaries
/// decided, which they were (at most [`CANARIES_LISTED`]) with their state
/// then, and how many others it redrove or left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanaryRecord {
    pub inspected_at: Millis,
    pub decided_at: Millis,
    pub passed: bool,
    pub canaries: u64,
    pub listed: Vec<(MessageIndex, State)>,
    pub rest: u64,
}

/// A canary redrive waiting for its canaries (section 20).
#[derive(Debug, Clone)]
pub(super) struct Canary {
    inspected_at: Millis,
    /// The canaries, in quarantine order (at most [`CANARIES_LISTED`]).
    members: Vec<MessageIndex>,
    /// Canaries not yet final or back in quarantine.
    waiting: BTreeSet<MessageIndex>,
    canaries: u64,
    acked: u64,
    /// The other targets, fixed at the inspection, in quarantine order.
    rest: Vec<MessageIndex>,
    identity: Identity,
    rate: Option<u64>,
}

/// Where the operator is in the scenario's list of steps.
#[derive(Debug, Default, Clone)]
pub(super) struct Operator {
    /// Index of the next step to run.
    pub(super) next_step: usize,
    /// Whether a step has repaired: from then on `until = "repair"` faults
    /// stop applying, for every later step too (decision 10.6).
    pub(super) repaired: bool,
    /// The next inspection, once the cycle before it has drained.
    pub(super) inspection_due: Option<Millis>,
    /// Drain time of each cycle: the source cycle, then one per step run.
    pub(super) drains: Vec<Millis>,
    /// A canary redrive whose canaries are still going round.
    pub(super) canary: Option<Canary>,
    /// Every canary redrive decided so far.
    pub(super) canary_records: Vec<CanaryRecord>,
    /// sqs-standard: each message's latest enqueue (its first arrival, or
    /// the instant its latest redrive made it ready); `Millis::MAX`: its
    /// arrival. Empty under other profiles.
    pub(super) enqueued: Vec<Millis>,
    /// `archive_after`: (when due, message, its entry) of each quarantine
    /// entry not yet archived, in entry order (so in due order): at most
    /// one per entry still in quarantine, and the stale ones until due.
    pub(super) archives: std::collections::VecDeque<(Millis, MessageIndex, Millis)>,
    /// Each quarantined message's envelope record and cause, and the
    /// messages archived (sections 28.2 and 28.11).
    pub(super) dead_letters: super::DeadLetters,
    /// Whether the envelope a redriven message left quarantine with is
    /// kept: only where something reads envelopes (a recorded run, whose
    /// JSON rows show them, or an expectation or question on one).
    pub(super) keeps_left: bool,
}

impl Engine<'_> {
    /// Nothing is pending: records the cycle's drain (the later of the last
    /// delivery and the last inspection, decision 10.9) and plans the next
    /// step's inspection.
    pub(super) fn settle_drain(&mut self) {
        let operator = &mut self.operator;
        if operator.inspection_due.is_some() || operator.drains.len() > operator.next_step {
            return;
        }
        let drained = self.core.clock.quiet_since();
        operator.drains.push(drained);
        self.source.drained(self.core.clock.last_delivery);
        let operator = &mut self.operator;
        if let Some(step) = self.core.scenario.operators.get(operator.next_step) {
            operator.inspection_due = Some(drained.saturating_add(step.wait));
        }
    }

    /// An operator inspection.
    pub(super) fn inspect(&mut self) {
        let now = self.core.clock.now;
        let step_index = self.operator.next_step;
        self.operator.next_step += 1;
        self.operator.inspection_due = None;
        self.core.clock.last_inspection = Some(now);
        let step = &self.core.scenario.operators[step_index];
        if let Some(census) = &mut self.core.measures.census {
            census.mark(now, &format!("operator step {} inspects", step_index + 1));
        }
        self.core.record(
            None,
            Detail::Inspected {
                step: step_index as u32 + 1,
                depth: self.quarantine.len(),
            },
        );

        // 1. Expiry, measured from entering quarantine.
        self.expire();

        // 2. Repair: until = "repair" faults stop applying from now on.
        if step.repair {
            self.operator.repaired = true;
            self.core.record(None, Detail::Repaired);
        }

        // 3. The action.
        let targets = match &step.action {
            Action::Hold => return,
            Action::Purge => {
                for m in self.quarantine.take_all() {
                    self.core.set_state(m, State::Purged);
                    self.core.measures.totals.purged += 1;
                    self.core.record(Some(m), Detail::Purged);
                    self.core.state_changed(m);
                }
                return;
            }
            Action::RedriveAll if step.canary.is_none() => {
                // Everything leaves at once, without a lookup per message.
                let all = self.quarantine.take_all();
                let rate = self.redrive_rate(step.redrive_rate);
                return self.redrive_in_order(&all, step.identity, rate);
            }
            Action::RedriveAll => self.quarantine.in_order(),
            Action::Redrive(only) => {
                let quarantine = &mut self.quarantine;
                let mut targets: Vec<MessageIndex> = only
                    .iter()
                    .copied()
                    .filter(|&m| quarantine.contains(m))
                    .collect();
                targets.sort_by_key(|&m| quarantine.rank(m));
                targets
            }
        };
        let rate = self.redrive_rate(step.redrive_rate);
        match step.canary {
            None => self.redrive_all(&targets, step.identity, rate),
            Some(n) => {
                let n = (n as usize).min(targets.len());
                // The rest stay in quarantine, in their places, until the
                // canaries decide.
                let (canaries, rest) = targets.split_at(n);
                self.operator.canary = Some(Canary {
                    inspected_at: self.core.clock.now,
                    members: canaries.iter().copied().take(CANARIES_LISTED).collect(),
                    waiting: canaries.iter().copied().collect(),
                    canaries: n as u64,
                    acked: 0,
                    rest: rest.to_vec(),
                    identity: step.identity,
                    rate,
                });
                self.redrive_all(canaries, step.identity, rate);
                if n == 0 {
                    self.canary_decides();
                }
            }
        }
        if let Action::Redrive(only) = &step.action {
            // Ids not redriven are reported after the redrives, in the
            // order of `only`.
            let targets: BTreeSet<MessageIndex> = targets.iter().copied().collect();
            for &m in only {
                if !targets.contains(&m) {
                    let state = self.core.messages.state(m);
                    self.core.record(Some(m), Detail::RedriveSkipped { state });
                }
            }
        }
    }

    /// Under sqs-standard, messages moved per second (section 21.3).
    fn redrive_rate(&self, rate: Option<u64>) -> Option<u64> {
        (self.core.scenario.guarantees.profile == Profile::SqsStandard)
            .then(|| rate.unwrap_or(SQS_REDRIVE_RATE))
    }

    /// `ms` leave quarantine and are redriven now, in order
    /// ([`redrive_in_order`](Self::redrive_in_order)).
    fn redrive_all(&mut self, ms: &[MessageIndex], identity: Identity, rate: Option<u64>) {
        for &m in ms {
            self.quarantine.remove(m);
        }
        self.redrive_in_order(ms, identity, rate);
    }

    /// Redrives `ms` (which have left quarantine) now, in order; with a
    /// rate the k-th becomes ready at now + floor(k * 1000 / rate).
    fn redrive_in_order(&mut self, ms: &[MessageIndex], identity: Identity, rate: Option<u64>) {
        let now = self.core.clock.now;
        for (k, &m) in ms.iter().enumerate() {
            let at = match rate {
                Some(r) => now.saturating_add((k as u64).saturating_mul(1000) / r),
                None => now,
            };
            self.redrive(m, identity, at);
        }
    }

    /// A message became final or returned to quarantine (`acked`: it was
    /// acked): if it is a canary and the last one, the canary decides.
    pub(super) fn canary_settled(&mut self, m: MessageIndex, acked: bool) {
        let Some(c) = &mut self.operator.canary else {
            return;
        };
        if !c.waiting.remove(&m) {
            return;
        }
        c.acked += acked as u64;
        if c.waiting.is_empty() {
            self.canary_decides();
        }
    }

    /// Every canary is final or back in quarantine: all acked, the rest
    /// are redriven now, behind this instant's other events; otherwise
    /// they stay in quarantine.
    fn canary_decides(&mut self) {
        let Some(c) = self.operator.canary.take() else {
            return;
        };
        let listed = (c.members.iter())
            .map(|&m| (m, self.core.messages.state(m)))
            .collect();
        self.operator.canary_records.push(CanaryRecord {
            inspected_at: c.inspected_at,
            decided_at: self.core.clock.now,
            passed: c.acked == c.canaries,
            canaries: c.canaries,
            listed,
            rest: c.rest.len() as u64,
        });
        if c.acked < c.canaries {
            let (acked, canaries) = (c.acked, c.canaries);
            self.core
                .record(None, Detail::CanaryFailed { acked, canaries });
            return;
        }
        let count = c.rest.len() as u64;
        self.core.record(None, Detail::CanaryPassed { rest: count });
        self.redrive_all(&c.rest, c.identity, c.rate);
    }

    /// Applies quarantine retention at an inspection. Measured from
    /// entering quarantine the expired messages are the oldest entries, so
    /// only they are touched; under sqs-standard (from the latest enqueue)
    /// the quarantine's index by enqueue gives them, in entry order.
    fn expire(&mut self) {
        let Some(retention) = self.core.scenario.quarantine_retention else {
            return;
        };
        let now = self.core.clock.now;
        if self.operator.enqueued.is_empty() {
            while let Some(m) = self.quarantine.first() {
                let age = self.core.messages.get(m).quarantine_age(now).unwrap_or(0);
                if age < retention {
                    break;
                }
                self.expire_one(m, age);
            }
            return;
        }
        // sqs-standard: counted from the latest enqueue (21.2).
        let Some(cutoff) = now.checked_sub(retention) else {
            return;
        };
        for (m, enqueued) in self.quarantine.enqueued_by(cutoff) {
            self.expire_one(m, now - enqueued);
        }
    }

    /// Under `expiry = "continuous"` (section 28.11): when the next
    /// quarantined message's age reaches the retention (under
    /// sqs-standard counted from its latest enqueue, and not before now).
    pub(super) fn next_expiry(&self) -> Option<Millis> {
        if !self.core.scenario.continuous_expiry {
            return None;
        }
        let retention = self.core.scenario.quarantine_retention?;
        let from = match self.operator.enqueued.is_empty() {
            true => {
                let m = self.quarantine.first()?;
                self.core.messages.get(m).last_quarantined_at()?
            }
            false => self.quarantine.first_enqueued()?,
        };
        Some(from.saturating_add(retention).max(self.core.clock.now))
    }

    /// Every quarantined message whose age has reached the retention
    /// expires now (section 28.11), as at an inspection.
    pub(super) fn expire_continuously(&mut self) {
        let now = self.core.clock.now;
        if self.next_expiry().is_some_and(|e| e <= now) {
            self.core.clock.last_part_event = Some(now);
            self.expire();
        }
    }

    /// Every archive due at or before `t` (section 28.11): a message still
    /// in quarantine from the same entry is copied to the archive, at its
    /// own instant; it stays in quarantine.
    pub(super) fn archive_until(&mut self, t: Millis) {
        while let Some(&(at, m, entered)) = self.operator.archives.front() {
            if at > t {
                return;
            }
            self.operator.archives.pop_front();
            let state = self.core.messages.get(m);
            if state.state != State::Quarantined || state.last_quarantined_at() != Some(entered) {
                continue;
            }
            self.core.measures.totals.archived += 1;
            self.operator.dead_letters.archived.insert(m);
            self.core.observers.recording.transition(
                at,
                Some(m),
                Detail::Archived { entered },
                &self.core.messages,
            );
        }
    }

    /// The deduplication store restarts now (section 28.5), after every
    /// other event of the instant: without persistence every entry live
    /// now is lost, as if every result and lease had expired at once.
    pub(super) fn restart_store(&mut self) {
        let now = self.core.clock.now;
        self.core.clock.last_part_event = Some(now);
        let lost = self.core.scenario.store_loses_state;
        let live = self.store.restart(now, lost);
        let totals = &mut self.core.measures.totals;
        totals.store_restarts += 1;
        if lost {
            totals.entries_lost += live;
        }
        self.core
            .record(None, Detail::StoreRestarted { live, lost });
    }

    /// `m` leaves quarantine to be delivered again: its envelope stays the
    /// one it had (decision 10.12).
    pub(super) fn leaves_quarantine(&mut self, m: MessageIndex) {
        if !self.operator.keeps_left {
            return;
        }
        let state = self.core.messages.get(m);
        self.operator.dead_letters.left.insert(m, state);
    }

    fn expire_one(&mut self, m: MessageIndex, age: Millis) {
        self.quarantine.remove(m);
        self.core.set_state(m, State::Expired);
        self.core.measures.totals.expired += 1;
        self.core.record(Some(m), Detail::Expired { age });
        self.core.state_changed(m);
    }

    /// A new cycle for a quarantined message, ready again at `at` (now,
    /// or later under a redrive rate).
    fn redrive(&mut self, m: MessageIndex, identity: Identity, at: Millis) {
        let scenario = self.core.scenario;
        self.leaves_quarantine(m);
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
        if let Some(enqueued) = self.operator.enqueued.get_mut(m as usize) {
            *enqueued = at;
        }
        let now = self.core.clock.now;
        if self.source.log.is_some() {
            // Appended again at the inspection (decision 26.12).
            self.core.set_state(m, State::Ready);
            self.append(m);
            return;
        }
        self.core.schedule.put_back(now, at, m);
    }
}
