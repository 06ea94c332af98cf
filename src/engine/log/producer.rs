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

use super::super::{Detail, Engine, Record};
use crate::model::{MessageIndex, Millis};

#[derive(Debug, Clone, Default)]
pub(super) struct Retries {
    /// Per message: the retries still to make, and the partition of its
    /// first append.
    left: FxHashMap<MessageIndex, (u64, u32)>,
    /// Each duplicate record's append time.
    appended_at: FxHashMap<Record, Millis>,
}

impl Engine<'_> {
    /// Message `m` was appended at its arrival: if its append's
    /// acknowledgement is lost, the producer appends again later.
    pub(super) fn append_ack_lost(&mut self, m: MessageIndex) {
        let producer = &self.scenario.log.as_ref().expect("a log run").producer;
        if !producer.retries {
            return;
        }
        let lost = self.scenario.lost_append_acks(m);
        if lost == 0 {
            return;
        }
        let log = self.log_mut();
        let p = u32::from(log.partition_of[m as usize]);
        log.producer.left.insert(m, (lost, p));
        self.schedule_append_retry(m);
    }

    fn schedule_append_retry(&mut self, m: MessageIndex) {
        let producer = &self.scenario.log.as_ref().expect("a log run").producer;
        let now = self.core.clock.now;
        let at = now.saturating_add(producer.retry_backoff);
        self.core.schedule.schedule_append(now, at, m);
    }

    /// The producer's retry of `m`'s append is due: a duplicate record at
    /// the end of its first record's partition, or (idempotence) nothing.
    pub(in crate::engine) fn append_again(&mut self, m: MessageIndex) {
        let now = self.core.clock.now;
        self.core.clock.last_event = Some(now);
        let idempotence = (self.scenario.log.as_ref())
            .expect("a log run")
            .producer
            .idempotence;
        let log = self.log_mut();
        let Some(&(left, p)) = log.producer.left.get(&m) else {
            return;
        };
        if left > 1 {
            log.producer.left.insert(m, (left - 1, p));
        } else {
            log.producer.left.remove(&m);
        }
        self.measures.totals.producer_retries += 1;
        let record = match idempotence {
            true => None,
            false => {
                let offset = self.log_mut().parts[p as usize].end();
                let record = Record {
                    partition: p,
                    offset,
                };
                self.log_mut().producer.appended_at.insert(record, now);
                self.measures.totals.appended_duplicates += 1;
                Some(record)
            }
        };
        self.record(Some(m), Detail::AppendRetried { record });
        if record.is_some() {
            self.append_to(m, p);
        }
        if left > 1 {
            self.schedule_append_retry(m);
        }
    }

    /// When the record `record` was appended, if a producer retry appended
    /// it (a duplicate: its own event time).
    pub(in crate::engine) fn duplicate_appended_at(&self, record: Record) -> Option<Millis> {
        let log = self.source.log.as_deref()?;
        log.producer.appended_at.get(&record).copied()
    }
}
