//! A log's restarts (docs/model.md section 23, decisions 26.1-26.3,
//! 27.9-27.14, 27.30-27.32 and section 28.10): each restarted partition's
//! delivery in flight abandoned and its retry cancelled, its resume
//! position, the records it skips or makes pending again, the outcomes
//! of done records it passes over, its resume, and a replay of an
//! explicit gap that ends by going back to where the partition was.

use super::super::quarantine::Quarantine;
use super::super::sinks::Sinks;
use super::super::{Core, Detail, Record};
use super::LogState;
use super::{AGAIN, DONE, PENDING, SKIPPED};
use crate::model::{Guarantee, MessageIndex, Millis, Resume, State};

/// A replay of a gap (section 28.10), under way on a partition.
#[derive(Debug, Clone, Copy)]
pub(super) struct Replay {
    pub(super) until: u64,
    back_to: u64,
    restart: usize,
    k: usize,
}

/// What a restart did, for the outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartRecord {
    pub at: Millis,
    /// The restarted partitions, in order.
    pub partitions: Vec<u32>,
    /// Each restarted partition's position before the restart.
    pub positions_before: Vec<u64>,
    /// Each restarted partition's resume position.
    pub resume_positions: Vec<u64>,
    /// The checkpoint it resumed from: its time (none: no checkpoint).
    pub checkpoint_time: Option<Millis>,
    /// Records newly skipped by this restart.
    pub skipped: u64,
    /// Effects of the transaction it aborted (exactly-once).
    pub aborted_effects: u64,
    /// With `replay_until` (section 28.10): per restarted partition, where
    /// its replay ended with a jump back (`None`: it did not).
    pub replayed_until: Vec<Option<u64>>,
}

/// What a restart reaches beyond the log: a checkpoint due at its
/// instant makes writes visible (`sinks`), a done record passed over
/// returns to the `quarantine`, and a delivery abandoned is no longer in
/// flight (the consumer's `in_flight`).
pub(in crate::engine) struct Reach<'a> {
    pub(in crate::engine) sinks: &'a mut Sinks,
    pub(in crate::engine) quarantine: &'a mut Quarantine,
    pub(in crate::engine) in_flight: &'a mut u64,
}

impl LogState {
    /// Partition `p` reached its replay's end (section 28.10): it goes on
    /// where it was before the restart, the records between keeping their
    /// outcomes (skipped ones stay skipped).
    pub(super) fn replay_ends(&mut self, core: &mut Core, p: usize) {
        let log = &mut *self;
        let Some(replay) = log.parts[p].replay.take() else {
            return;
        };
        let from = log.parts[p].position;
        if replay.back_to <= from {
            return;
        }
        log.set_position(p, replay.back_to);
        if let Some(record) = log.restart_records.get_mut(replay.restart) {
            record.replayed_until[replay.k] = Some(from);
        }
        let detail = Detail::ReplayEnded {
            partition: p as u32,
            from,
            to: replay.back_to,
        };
        core.record(None, detail);
    }

    /// The next restart or resume, due now (after the instant's other
    /// events).
    pub(in crate::engine) fn event(&mut self, core: &mut Core, reach: Reach, resume: bool) {
        let now = core.clock.now;
        core.clock.last_event = Some(now);
        let scenario = core.scenario;
        let log_spec = scenario.log.as_ref().expect("a log run");
        let log = &mut *self;
        let restart = log_spec
            .restarts
            .get(log.next_restart)
            .filter(|r| !resume && r.at == now);
        if let Some(restart) = restart {
            let r = log.next_restart;
            log.next_restart += 1;
            self.restart(core, reach, r, restart);
            return;
        }
        let Some((&at, _)) = log.resumes.iter().next() else {
            return;
        };
        let partitions = log.resumes.remove(&at).unwrap_or_default();
        for p in partitions {
            let part = &mut self.parts[p as usize];
            if part.resume_at == Some(at) {
                part.resume_at = None;
                part.down = false;
                let position = part.position;
                core.record(
                    None,
                    Detail::Resumed {
                        partition: p,
                        position,
                    },
                );
                self.kick(core, p as usize);
            }
        }
    }

    /// Restart `r` now (section 23's steps 1 and 2, decisions 26.1-26.3
    /// and 27.9-27.11).
    fn restart(
        &mut self,
        core: &mut Core,
        reach: Reach,
        r: usize,
        restart: &crate::model::Restart,
    ) {
        let now = core.clock.now;
        // A checkpoint at this instant comes first (decision 26.2).
        self.instants_before(core, &mut *reach.sinks, now.saturating_add(1));
        let valid_from = core.schedule.next_sequence();
        let log = &mut *self;
        let mut aborted = 0;
        if let Some(t) = &mut log.transaction {
            aborted = t.done.len() as u64 + t.current.iter().map(|c| c.len() as u64).sum::<u64>();
            t.done.clear();
            t.current.iter_mut().for_each(Vec::clear);
        }
        core.measures.totals.aborted_effects += aborted;
        let partitions: Vec<u32> = match restart.partition {
            Some(p) => vec![p],
            None => (0..self.parts.len() as u32).collect(),
        };
        let checkpoint_time = match (restart.resume, self.guarantee) {
            (_, Guarantee::AtMostOnce) => None,
            (Resume::Committed, _) => self.last_checkpoint,
            (Resume::Stale(age), _) => {
                // The latest completed checkpoint at or before `at - age`.
                let interval = self.interval.unwrap_or(1);
                let failures = &core
                    .scenario
                    .log
                    .as_ref()
                    .expect("a log run")
                    .checkpoint_failures;
                now.checked_sub(age)
                    .map(|t| failures.completed_at_or_before(t / interval) * interval)
                    .filter(|&c| c > 0)
            }
            (Resume::Earliest | Resume::Latest | Resume::Offsets, _) => None,
        };
        let mut record = RestartRecord {
            at: now,
            partitions: partitions.clone(),
            positions_before: Vec::new(),
            resume_positions: Vec::new(),
            checkpoint_time,
            skipped: 0,
            aborted_effects: aborted,
            replayed_until: Vec::new(),
        };
        let restart_index = self.restart_records.len();
        // Each restarted partition's resume position (a delivery's
        // abandonment moves no position).
        let log = &*self;
        let resumes: Vec<u64> = (partitions.iter().enumerate())
            .map(|(k, &p)| {
                let part = &log.parts[p as usize];
                let resume = match restart.resume {
                    Resume::Committed => part.committed,
                    Resume::Stale(_) => log.kept[r].as_ref().map_or(0, |kept| kept[p as usize]),
                    Resume::Earliest => 0,
                    Resume::Latest => part.end(),
                    // Capped at the log end, as `skip` is.
                    Resume::Offsets => restart.offsets[k],
                };
                resume.saturating_add(restart.skip).min(part.end())
            })
            .collect();
        core.record(
            None,
            Detail::Restarted {
                restart: r as u32,
                partition: match partitions.len() {
                    1 => Some(partitions[0]),
                    _ => None,
                },
                checkpoint: checkpoint_time,
                position: resumes[0],
            },
        );
        for (k, (p, resume)) in partitions.into_iter().zip(resumes).enumerate() {
            let p = p as usize;
            self.abandon(core, &mut *reach.in_flight, p, valid_from);
            let log = &mut *self;
            let before = log.parts[p].position;
            // A restart during a replay replaces it; this one's replay, if
            // it asks for one, goes back to where the partition is now.
            log.parts[p].replay = restart.replay_until.get(k).map(|&until| Replay {
                until,
                back_to: before,
                restart: restart_index,
                k,
            });
            if !restart.replay_until.is_empty() {
                record.replayed_until.push(None);
            }
            record.positions_before.push(before);
            record.resume_positions.push(resume);
            let reopened = !log.reopened.is_empty();
            let mut passed_over = Vec::new();
            let mut skipped = 0;
            for offset in before..resume {
                let part = &mut self.parts[p];
                match part.status(offset) {
                    PENDING => {
                        part.set_status(offset, SKIPPED);
                        let m = part.message_at(offset);
                        skipped += 1;
                        self.skip_record(core, m, p, offset);
                    }
                    AGAIN if reopened => passed_over.push(offset),
                    _ => {}
                }
            }
            for offset in passed_over {
                self.keep_outcome(core, &mut *reach.quarantine, p, offset);
            }
            // Records skipped by an earlier restart at or above the new
            // resume position are pending again (decision 27.30), but for
            // those a replay jumps over: they stay skipped (28.10).
            let replayed = (self.parts[p].replay).map_or(before, |r| r.until.min(before));
            for offset in resume..replayed {
                let part = &mut self.parts[p];
                if part.status(offset) == SKIPPED {
                    part.set_status(offset, PENDING);
                    let m = part.message_at(offset);
                    core.measures.totals.skipped -= 1;
                    if core.messages.state(m) == State::Skipped {
                        self.skipped_messages -= 1;
                        core.set_state(m, State::Ready);
                        core.state_changed(m);
                    }
                }
            }
            record.skipped += skipped;
            core.measures.totals.skipped += skipped;
            let log = &mut *self;
            log.set_position(p, resume);
            if let Some(replay) = log.parts[p].replay
                && resume >= replay.until
            {
                // Resumed at or past the replay's end already (a skip).
                log.parts[p].replay = None;
                if replay.back_to > resume {
                    log.set_position(p, replay.back_to);
                    record.replayed_until[k] = Some(resume);
                }
            }
            let part = &mut log.parts[p];
            if let Some(old) = part.resume_at.take()
                && let Some(list) = log.resumes.get_mut(&old)
            {
                list.retain(|&q| q as usize != p);
                if list.is_empty() {
                    log.resumes.remove(&old);
                }
            }
            let part = &mut log.parts[p];
            if restart.down_for > 0 {
                let at = now.saturating_add(restart.down_for);
                part.down = true;
                part.resume_at = Some(at);
                let resumes = log.resumes.entry(at).or_default();
                let first = resumes.is_empty();
                resumes.push(p as u32);
                if first {
                    // Before the restarts of its instant (decision 27.32).
                    core.schedule.schedule_source_event(at, true, 0);
                }
            } else {
                part.down = false;
                core.record(
                    None,
                    Detail::Resumed {
                        partition: p as u32,
                        position: resume,
                    },
                );
                self.kick(core, p);
            }
        }
        self.restart_records.push(record);
    }

    /// The record of `m` at `offset` of partition `p` lies below a resume
    /// position and was never done: its message is skipped (decision
    /// 27.30), final unless a later restart resumes below it.
    fn skip_record(&mut self, core: &mut Core, m: MessageIndex, p: usize, offset: u64) {
        // A message done through another of its records (a producer's
        // duplicate, 28.6) keeps the state of the record processed last.
        let state = core.messages.state(m);
        let done = matches!(
            state,
            State::Acked | State::Quarantined | State::Expired | State::Purged | State::Dropped
        );
        if !done && state != State::Skipped {
            core.set_state(m, State::Skipped);
            self.skipped_messages += 1;
        }
        let record = Record {
            partition: p as u32,
            offset,
        };
        core.record(Some(m), Detail::RecordSkipped { record });
        core.state_changed(m);
    }

    /// Partition `p`'s record in progress is abandoned: its delivery's end
    /// or its retry is cancelled, its effect stays (decision 27.10).
    fn abandon(&mut self, core: &mut Core, in_flight: &mut u64, p: usize, valid_from: u64) {
        let log = &mut *self;
        let part = &mut log.parts[p];
        let Some(m) = part.message(part.position) else {
            return;
        };
        // A record made due is taken before any restart of its instant:
        // its entry comes before every source event there.
        debug_assert!(!part.kicked, "a restart found a record due but not started");
        let (busy, kicked) = (part.busy, part.kicked);
        part.busy = false;
        part.kicked = false;
        if !(busy || kicked) {
            return;
        }
        log.valid_from.insert(m, valid_from);
        let record = Record {
            partition: p as u32,
            offset: part.position,
        };
        let (due, aborted) = (part.retry_due, log.transaction.is_some());
        let carry = log.carry_attempts;
        let detail = if core.messages.state(m) == State::InFlight {
            *in_flight -= 1;
            Detail::DeliveryAbandoned { record, aborted }
        } else {
            Detail::RetryCancelled { record, due }
        };
        if busy && !carry {
            core.messages.update(m, |s| s.cycle_receives = 0);
        } else if busy && core.messages.cycle_receives(m) > 0 {
            // Carried on the record itself (28.4).
            self.carried.insert(m);
        }
        core.set_state(m, State::Ready);
        core.record(Some(m), detail);
        core.state_changed(m);
    }

    /// A done record at `offset` of partition `p`, processed again but not
    /// done again, lies below the new resume position: its message keeps
    /// the outcome it had (decision 27.31), counted so. A quarantined one
    /// goes back to quarantine, behind the messages there.
    fn keep_outcome(
        &mut self,
        core: &mut Core,
        quarantine: &mut Quarantine,
        p: usize,
        offset: u64,
    ) {
        let log = &mut *self;
        let m = log.parts[p].message_at(offset);
        let Some(state) = log.reopened.remove(&m) else {
            return;
        };
        log.parts[p].set_status(offset, DONE);
        let totals = &mut core.measures.totals;
        match state {
            State::Acked => totals.acked += 1,
            State::Quarantined => quarantine.push(m),
            State::Expired => totals.expired += 1,
            State::Purged => totals.purged += 1,
            State::Dropped => totals.dropped += 1,
            _ => {}
        }
        core.set_state(m, state);
        core.state_changed(m);
    }
}
