//! A log's checkpoints (docs/model.md section 23 and 28.7): taken
//! together between two events (the positions are the same at each
//! instant between them), the failed ones committing nothing, and their
//! transitions at their own instants (28.13).

use super::super::sinks::Sinks;
use super::super::{Core, Detail};
use super::LogState;
use crate::model::{EventKind, Millis};

impl LogState {
    /// Every checkpoint instant and kept position before `t`: the
    /// positions now are those of every instant up to `t`.
    #[inline]
    pub(in crate::engine) fn instants_before(
        &mut self,
        core: &mut Core,
        sinks: &mut Sinks,
        t: Millis,
    ) {
        let log = &*self;
        let checkpoint_due = log.interval.is_some() && log.next_checkpoint < t;
        let position_wanted = log
            .wanted
            .get(log.next_wanted)
            .is_some_and(|&(at, _)| at < t);
        if checkpoint_due || position_wanted {
            self.instants_taken(core, sinks, t);
        }
    }

    /// [`instants_before`](Self::instants_before) when a
    /// checkpoint or a position for a stale resume is due before `t`.
    #[inline(never)]
    fn instants_taken(&mut self, core: &mut Core, sinks: &mut Sinks, t: Millis) {
        let spec = core.scenario.log.as_ref().expect("a log run");
        let log = &mut *self;
        if let Some(interval) = log.interval
            && log.next_checkpoint < t
        {
            // Checkpoints `first` to `last` by number: the positions are
            // the same at each; those that fail commit nothing (28.7).
            let (first, last) = (log.next_checkpoint / interval, (t - 1) / interval);
            let failures = &spec.checkpoint_failures;
            let failed: u64 = (failures.failed_between(first, last))
                .map(|(a, b, _)| b - a + 1)
                .sum();
            log.checkpoints += last - first + 1 - failed;
            log.checkpoints_failed += failed;
            log.next_checkpoint = last.saturating_add(1).saturating_mul(interval);
            let completed = failures.completed_at_or_before(last);
            if completed >= first {
                log.last_checkpoint = Some(completed * interval);
                // Only the partitions whose position moved: a checkpoint
                // costs what changed, not every partition, however short
                // the interval.
                for p in log.moved.drain(..) {
                    let part = &mut log.parts[p as usize];
                    part.committed = part.position;
                    part.dirty = false;
                }
                self.commit_writes(sinks, false);
            }
            if spec.checkpoint_events {
                self.checkpoint_transitions(core, first, last, interval);
            }
        }
        let log = &mut *self;
        while let Some(&(instant, r)) = log.wanted.get(log.next_wanted) {
            if instant >= t {
                break;
            }
            log.next_wanted += 1;
            log.kept[r] = Some(log.parts.iter().map(|p| p.committed).collect());
        }
    }

    /// The transitions of checkpoints `first` to `last` (section 28.13),
    /// each at its own instant: failed ones, and completed ones (a file
    /// that writes them). Past what the transcript keeps, they are counted
    /// and told to the event expectations in one step.
    #[cold]
    fn checkpoint_transitions(&self, core: &mut Core, first: u64, last: u64, interval: Millis) {
        let spec = core.scenario.log.as_ref().expect("a log run");
        let log = self;
        let (partitions, position) = (log.parts.len() as u32, log.parts[0].committed);
        let mut k = first;
        let failed = spec.checkpoint_failures.failed_between(first, last);
        let mut segments: Vec<(u64, u64, Option<crate::model::CheckpointStatus>)> = Vec::new();
        for (a, b, status) in failed {
            if k < a {
                segments.push((k, a - 1, None));
            }
            segments.push((a, b, Some(status)));
            k = b + 1;
        }
        if k <= last {
            segments.push((k, last, None));
        }
        for (a, b, status) in segments {
            let kind = match status {
                None => EventKind::CheckpointCompleted,
                Some(_) => EventKind::CheckpointFailed,
            };
            let mut number = a;
            while number <= b && core.observers.recording.keeps_one_by_one() {
                let detail = match status {
                    None => Detail::CheckpointCompleted {
                        number,
                        partitions,
                        position,
                    },
                    Some(status) => Detail::CheckpointFailed { number, status },
                };
                let at = number.saturating_mul(interval);
                let recording = &mut core.observers.recording;
                recording.transition(at, None, detail, &core.messages);
                number += 1;
            }
            // The rest in one step: a 1ms interval over a day is no loop.
            (core.observers.recording).passed_unkept(kind, number, b, interval);
        }
        core.observers.recording.gap_out_of_order = true;
    }
}
