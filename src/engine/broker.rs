//! The broker side: the source queue of messages waiting for a delivery,
//! the quarantine (the dead-letter queue) and the deduplication store.
//! Deliveries are instantaneous in this model, so nothing is in flight
//! between taking a message and deciding its delivery; in-flight
//! deliveries (workers, visibility timeouts) belong here beside the queue.

use super::dedup::DedupStore;
use super::queue::SourceQueue;
use crate::model::{MessageIndex, Scenario};

pub(super) struct Broker {
    pub(super) queue: SourceQueue,
    /// Quarantined messages in the order they entered.
    pub(super) quarantine: Vec<MessageIndex>,
    pub(super) dedup: DedupStore,
}

impl Broker {
    pub(super) fn new(scenario: &Scenario) -> Self {
        Broker {
            queue: SourceQueue::new(scenario),
            quarantine: Vec::new(),
            dedup: DedupStore::new(scenario),
        }
    }

    /// The DLQ depth: messages in quarantine now.
    pub(super) fn depth(&self) -> u64 {
        self.quarantine.len() as u64
    }
}
