//! A log's producer that retries appends whose acknowledgement was lost
//! (docs/model.md section 28.6). A message whose `lose_append_ack =
//! { first = N }` fault holds is appended at its arrival and again every
//! `retry_backoff` until an append is acknowledged: N retries. Without
//! idempotence each retry appends a duplicate record of the message at
//! the end of the partition of its first append; with it the broker
//! recognises the retry and appends nothing.
//!
//! What it keeps: per message with retries still to make, how many and
//! where its first record went (at most one entry a message, gone with
//! its last retry); per duplicate record its append time, for the
//! dead-letter envelope's event time (one entry per duplicate, at most
//! `MAX_LOST_APPEND_ACKS` a message).

use rustc_hash::FxHashMap;

use super::super::{Core, Detail, Record};
use super::LogState;
use crate::model::{MessageIndex, Millis};

#[derive(Debug, Clone, Default)]
pub(super) struct Retries {
    /// Per message: the retries still to make, and the partition of its
    /// first append.
    left: FxHashMap<MessageIndex, (u64, u32)>,
    /// Each duplicate record's append time.
    appended_at: FxHashMap<Record, Millis>,
}

impl LogState {
    /// Message `m` was appended at its arrival: if its append's
    /// acknowledgement is lost, the producer appends again later.
    pub(in crate::engine) fn append_ack_lost(&mut self, core: &mut Core, m: MessageIndex) {
        let producer = &core.scenario.log.as_ref().expect("a log run").producer;
        if !producer.retries {
            return;
        }
        let lost = core.scenario.lost_append_acks(m);
        if lost == 0 {
            return;
        }
        let p = u32::from(self.partition_of[m as usize]);
        self.producer.left.insert(m, (lost, p));
        schedule_append_retry(core, m);
    }

    /// The producer's retry of `m`'s append is due: a duplicate record at
    /// the end of its first record's partition, or (idempotence) nothing.
    /// Returns the partition if it was idle and starts the duplicate
    /// (before anything else is scheduled), and whether a retry is left
    /// ([`schedule_append_retry`] then, after the start).
    pub(in crate::engine) fn append_again(
        &mut self,
        core: &mut Core,
        m: MessageIndex,
    ) -> (Option<usize>, bool) {
        let now = core.clock.now;
        core.clock.last_event = Some(now);
        let idempotence = (core.scenario.log.as_ref())
            .expect("a log run")
            .producer
            .idempotence;
        let Some(&(left, p)) = self.producer.left.get(&m) else {
            return (None, false);
        };
        if left > 1 {
            self.producer.left.insert(m, (left - 1, p));
        } else {
            self.producer.left.remove(&m);
        }
        core.measures.totals.producer_retries += 1;
        let record = match idempotence {
            true => None,
            false => {
                let offset = self.parts[p as usize].end();
                let record = Record {
                    partition: p,
                    offset,
                };
                self.producer.appended_at.insert(record, now);
                core.measures.totals.appended_duplicates += 1;
                Some(record)
            }
        };
        core.record(Some(m), Detail::AppendRetried { record });
        let starts = match record {
            Some(_) => self.append_to(m, p),
            None => None,
        };
        (starts, left > 1)
    }

    /// When the record `record` was appended, if a producer retry appended
    /// it (a duplicate: its own event time).
    pub(in crate::engine) fn duplicate_appended_at(&self, record: Record) -> Option<Millis> {
        self.producer.appended_at.get(&record).copied()
    }
}

/// The producer appends `m` again `retry_backoff` from now.
pub(in crate::engine) fn schedule_append_retry(core: &mut Core, m: MessageIndex) {
    let producer = &core.scenario.log.as_ref().expect("a log run").producer;
    let now = core.clock.now;
    let at = now.saturating_add(producer.retry_backoff);
    core.schedule.schedule_append(now, at, m);
}
