//! The operator (docs/model.md section 6): after each cycle drains and the
//! step's wait, an inspection applies expiry, then repair, then the action.

use std::collections::BTreeSet;

use super::Engine;
use super::transition::Detail;
use crate::model::{Action, Identity, MessageIndex, Millis, State};

/// Where the operator is in the scenario's list of steps.
#[derive(Debug, Default)]
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
        let drained = self.clock.quiet_since();
        operator.drains.push(drained);
        if let Some(step) = self.scenario.operators.get(operator.next_step) {
            operator.inspection_due = Some(drained.saturating_add(step.wait));
        }
    }

    /// An operator inspection.
    pub(super) fn inspect(&mut self) {
        let now = self.clock.now;
        let step_index = self.operator.next_step;
        self.operator.next_step += 1;
        self.operator.inspection_due = None;
        self.clock.last_inspection = Some(now);
        let step = &self.scenario.operators[step_index];
        if let Some(census) = &mut self.measures.census {
            census.mark(now, &format!("operator step {} inspects", step_index + 1));
        }
        self.record(
            None,
            Detail::Inspected {
                step: step_index as u32 + 1,
                depth: self.broker.depth(),
            },
        );

        // 1. Expiry, measured from entering quarantine.
        let retained = self.expire();

        // 2. Repair: until = "repair" faults stop applying from now on.
        if step.repair {
            self.operator.repaired = true;
            self.record(None, Detail::Repaired);
        }

        // 3. The action.
        match &step.action {
            Action::Hold => self.broker.quarantine = retained,
            Action::Purge => {
                for m in retained {
                    self.set_state(m, State::Purged);
                    self.measures.totals.purged += 1;
                    self.record(Some(m), Detail::Purged);
                    self.state_changed(m);
                }
            }
            Action::RedriveAll => {
                for m in retained {
                    self.redrive(m, step.identity);
                }
            }
            Action::Redrive(only) => {
                let chosen: BTreeSet<MessageIndex> = only.iter().copied().collect();
                let mut keep = Vec::new();
                let mut redriven = BTreeSet::new();
                for m in retained {
                    if chosen.contains(&m) {
                        redriven.insert(m);
                        self.redrive(m, step.identity);
                    } else {
                        keep.push(m);
                    }
                }
                self.broker.quarantine = keep;
                // Ids not redriven are reported after the redrives, in the
                // order of `only`.
                for &m in only {
                    if !redriven.contains(&m) {
                        let state = self.messages[m as usize].state;
                        self.record(Some(m), Detail::RedriveSkipped { state });
                    }
                }
            }
        }
    }

    /// Applies quarantine retention; returns the messages still retained,
    /// in the order they entered quarantine.
    fn expire(&mut self) -> Vec<MessageIndex> {
        let now = self.clock.now;
        let quarantine = std::mem::take(&mut self.broker.quarantine);
        let mut retained = Vec::with_capacity(quarantine.len());
        for m in quarantine {
            let age = self.messages[m as usize].quarantine_age(now).unwrap_or(0);
            if self.scenario.quarantine_retention.is_some_and(|r| age >= r) {
                self.set_state(m, State::Expired);
                self.measures.totals.expired += 1;
                self.record(Some(m), Detail::Expired { age });
                self.state_changed(m);
            } else {
                retained.push(m);
            }
        }
        retained
    }

    /// A new cycle for a quarantined message, delivered again now.
    fn redrive(&mut self, m: MessageIndex, identity: Identity) {
        let scenario = self.scenario;
        self.set_state(m, State::Waiting);
        let message = &mut self.messages[m as usize];
        message.cycle += 1;
        message.cycle_receives = 0;
        if identity == Identity::New {
            let intent = scenario.intent(m);
            message.set_key(scenario.fresh_key(intent, message.cycle - 1));
        }
        let (cycle, key) = (message.cycle, message.key(scenario.intent(m)));
        self.record(Some(m), Detail::Redriven { cycle, key });
        self.state_changed(m);
        self.broker.queue.put_back(self.clock.now, m);
    }
}
