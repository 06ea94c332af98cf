//! The operator (docs/model.md section 6): after each cycle drains and the
//! step's wait, an inspection applies expiry, then repair, then the action.

use std::collections::BTreeSet;

use super::quarantine::Quarantine;
use super::source::Source;
use super::transition::Detail;
use super::{Core, Messages};
use crate::model::{
    Action, Identity, MessageIndex, Millis, Profile, SQS_REDRIVE_RATE, Scenario, State,
};

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

/// The redrives an inspection or a canary's decision asks for, in order:
/// the messages (already out of quarantine), with the identity and the
/// rate of the step. The engine redrives them (a log appends each, which
/// may start its delivery at once).
pub(super) struct Redrives {
    pub(super) messages: Vec<MessageIndex>,
    pub(super) identity: Identity,
    pub(super) rate: Option<u64>,
    /// A canary step with no canary decides right after.
    pub(super) canary_decides: bool,
    /// The ids of a step's `only` that it does not redrive, in the order
    /// of `only`: reported after the redrives
    /// ([`Operator::redrives_skipped`]).
    pub(super) skipped: Vec<MessageIndex>,
}

impl Operator {
    /// Nothing is pending: records the cycle's drain (the later of the last
    /// delivery and the last inspection, decision 10.9) and plans the next
    /// step's inspection.
    pub(super) fn settle_drain(&mut self, core: &Core, source: &mut Source) {
        if self.inspection_due.is_some() || self.drains.len() > self.next_step {
            return;
        }
        let drained = core.clock.quiet_since();
        self.drains.push(drained);
        source.drained(core.clock.last_delivery);
        if let Some(step) = core.scenario.operators.get(self.next_step) {
            self.inspection_due = Some(drained.saturating_add(step.wait));
        }
    }

    /// An operator inspection: expiry, then repair, then the action. A
    /// purge is done here; the redrives it asks for are returned (those
    /// messages out of quarantine already), then
    /// [`redrives_skipped`](Self::redrives_skipped).
    pub(super) fn inspect(
        &mut self,
        core: &mut Core,
        quarantine: &mut Quarantine,
    ) -> Option<Redrives> {
        let now = core.clock.now;
        let step_index = self.next_step;
        self.next_step += 1;
        self.inspection_due = None;
        core.clock.last_inspection = Some(now);
        let step = &core.scenario.operators[step_index];
        if let Some(census) = &mut core.measures.census {
            census.mark(now, &format!("operator step {} inspects", step_index + 1));
        }
        core.record(
            None,
            Detail::Inspected {
                step: step_index as u32 + 1,
                depth: quarantine.len(),
            },
        );

        // 1. Expiry, measured from entering quarantine.
        self.expire(core, quarantine);

        // 2. Repair: until = "repair" faults stop applying from now on.
        if step.repair {
            self.repaired = true;
            core.record(None, Detail::Repaired);
        }

        // 3. The action.
        let rate = redrive_rate(core.scenario, step.redrive_rate);
        let targets = match &step.action {
            Action::Hold => return None,
            Action::Purge => {
                for m in quarantine.take_all() {
                    core.set_state(m, State::Purged);
                    core.measures.totals.purged += 1;
                    core.record(Some(m), Detail::Purged);
                    core.state_changed(m);
                }
                return None;
            }
            Action::RedriveAll if step.canary.is_none() => {
                // Everything leaves at once, without a lookup per message.
                let all = quarantine.take_all();
                return Some(Redrives {
                    messages: all,
                    identity: step.identity,
                    rate,
                    canary_decides: false,
                    skipped: Vec::new(),
                });
            }
            Action::RedriveAll => quarantine.in_order(),
            Action::Redrive(only) => {
                let mut targets: Vec<MessageIndex> = only
                    .iter()
                    .copied()
                    .filter(|&m| quarantine.contains(m))
                    .collect();
                targets.sort_by_key(|&m| quarantine.rank(m));
                targets
            }
        };
        let skipped = match &step.action {
            Action::Redrive(only) => {
                let targets: BTreeSet<MessageIndex> = targets.iter().copied().collect();
                only.iter()
                    .copied()
                    .filter(|m| !targets.contains(m))
                    .collect()
            }
            _ => Vec::new(),
        };
        let (messages, canary_decides) = match step.canary {
            None => (targets, false),
            Some(n) => {
                let n = (n as usize).min(targets.len());
                // The rest stay in quarantine, in their places, until the
                // canaries decide.
                let (canaries, rest) = targets.split_at(n);
                self.canary = Some(Canary {
                    inspected_at: now,
                    members: canaries.iter().copied().take(CANARIES_LISTED).collect(),
                    waiting: canaries.iter().copied().collect(),
                    canaries: n as u64,
                    acked: 0,
                    rest: rest.to_vec(),
                    identity: step.identity,
                    rate,
                });
                (canaries.to_vec(), n == 0)
            }
        };
        for &m in &messages {
            quarantine.remove(m);
        }
        Some(Redrives {
            messages,
            identity: step.identity,
            rate,
            canary_decides,
            skipped,
        })
    }

    /// After an inspection's redrives, the ids of its `only` it did not
    /// redrive are reported, with their state now.
    pub(super) fn redrives_skipped(core: &mut Core, skipped: &[MessageIndex]) {
        for &m in skipped {
            let state = core.messages.state(m);
            core.record(Some(m), Detail::RedriveSkipped { state });
        }
    }

    /// A message became final or returned to quarantine (`acked`: it was
    /// acked): true if it is a canary and the last one (the canary
    /// decides, [`canary_decides`](Self::canary_decides)).
    pub(super) fn canary_settled(&mut self, m: MessageIndex, acked: bool) -> bool {
        let Some(c) = &mut self.canary else {
            return false;
        };
        if !c.waiting.remove(&m) {
            return false;
        }
        c.acked += acked as u64;
        c.waiting.is_empty()
    }

    /// Every canary is final or back in quarantine: all acked, the rest
    /// are redriven now, behind this instant's other events (returned, out
    /// of quarantine); otherwise they stay in quarantine.
    pub(super) fn canary_decides(
        &mut self,
        core: &mut Core,
        quarantine: &mut Quarantine,
    ) -> Option<Redrives> {
        let c = self.canary.take()?;
        let listed = (c.members.iter())
            .map(|&m| (m, core.messages.state(m)))
            .collect();
        self.canary_records.push(CanaryRecord {
            inspected_at: c.inspected_at,
            decided_at: core.clock.now,
            passed: c.acked == c.canaries,
            canaries: c.canaries,
            listed,
            rest: c.rest.len() as u64,
        });
        if c.acked < c.canaries {
            let (acked, canaries) = (c.acked, c.canaries);
            core.record(None, Detail::CanaryFailed { acked, canaries });
            return None;
        }
        let count = c.rest.len() as u64;
        core.record(None, Detail::CanaryPassed { rest: count });
        for &m in &c.rest {
            quarantine.remove(m);
        }
        Some(Redrives {
            messages: c.rest,
            identity: c.identity,
            rate: c.rate,
            canary_decides: false,
            skipped: Vec::new(),
        })
    }

    /// Applies quarantine retention at an inspection. Measured from
    /// entering quarantine the expired messages are the oldest entries, so
    /// only they are touched; under sqs-standard (from the latest enqueue)
    /// the quarantine's index by enqueue gives them, in entry order.
    fn expire(&mut self, core: &mut Core, quarantine: &mut Quarantine) {
        let Some(retention) = core.scenario.quarantine_retention else {
            return;
        };
        let now = core.clock.now;
        if self.enqueued.is_empty() {
            while let Some(m) = quarantine.first() {
                let age = core.messages.get(m).quarantine_age(now).unwrap_or(0);
                if age < retention {
                    break;
                }
                expire_one(core, quarantine, m, age);
            }
            return;
        }
        // sqs-standard: counted from the latest enqueue (21.2).
        let Some(cutoff) = now.checked_sub(retention) else {
            return;
        };
        for (m, enqueued) in quarantine.enqueued_by(cutoff) {
            expire_one(core, quarantine, m, now - enqueued);
        }
    }

    /// Under `expiry = "continuous"` (section 28.11): when the next
    /// quarantined message's age reaches the retention (under
    /// sqs-standard counted from its latest enqueue, and not before now).
    pub(super) fn next_expiry(&self, core: &Core, quarantine: &Quarantine) -> Option<Millis> {
        if !core.scenario.continuous_expiry {
            return None;
        }
        let retention = core.scenario.quarantine_retention?;
        let from = match self.enqueued.is_empty() {
            true => {
                let m = quarantine.first()?;
                core.messages.get(m).last_quarantined_at()?
            }
            false => quarantine.first_enqueued()?,
        };
        Some(from.saturating_add(retention).max(core.clock.now))
    }

    /// Every quarantined message whose age has reached the retention
    /// expires now (section 28.11), as at an inspection.
    pub(super) fn expire_continuously(&mut self, core: &mut Core, quarantine: &mut Quarantine) {
        let now = core.clock.now;
        if self.next_expiry(core, quarantine).is_some_and(|e| e <= now) {
            core.clock.last_part_event = Some(now);
            self.expire(core, quarantine);
        }
    }

    /// Every archive due at or before `t` (section 28.11): a message still
    /// in quarantine from the same entry is copied to the archive, at its
    /// own instant; it stays in quarantine.
    pub(super) fn archive_until(&mut self, core: &mut Core, t: Millis) {
        while let Some(&(at, m, entered)) = self.archives.front() {
            if at > t {
                return;
            }
            self.archives.pop_front();
            let state = core.messages.get(m);
            if state.state != State::Quarantined || state.last_quarantined_at() != Some(entered) {
                continue;
            }
            core.measures.totals.archived += 1;
            self.dead_letters.archived.insert(m);
            (core.observers.recording).transition(
                at,
                Some(m),
                Detail::Archived { entered },
                &core.messages,
            );
        }
    }

    /// `m` leaves quarantine to be delivered again: its envelope stays the
    /// one it had (decision 10.12).
    pub(super) fn leaves_quarantine(&mut self, messages: &Messages, m: MessageIndex) {
        if !self.keeps_left {
            return;
        }
        self.dead_letters.left.insert(m, messages.get(m));
    }

    /// A redriven `m` is enqueued again at `at` (sqs-standard counts its
    /// retention from then).
    pub(super) fn enqueued_again(&mut self, m: MessageIndex, at: Millis) {
        if let Some(enqueued) = self.enqueued.get_mut(m as usize) {
            *enqueued = at;
        }
    }
}

/// Under sqs-standard, messages moved per second (section 21.3).
fn redrive_rate(scenario: &Scenario, rate: Option<u64>) -> Option<u64> {
    (scenario.guarantees.profile == Profile::SqsStandard).then(|| rate.unwrap_or(SQS_REDRIVE_RATE))
}

/// `m` expires from quarantine at age `age`.
fn expire_one(core: &mut Core, quarantine: &mut Quarantine, m: MessageIndex, age: Millis) {
    quarantine.remove(m);
    core.set_state(m, State::Expired);
    core.measures.totals.expired += 1;
    core.record(Some(m), Detail::Expired { age });
    core.state_changed(m);
}
