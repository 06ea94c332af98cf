//! The broker side: the source queue of messages waiting for a delivery,
//! the quarantine (the dead-letter queue) and the deduplication store.
//! The end of each delivery in flight is scheduled in the queue.

use super::dedup::DedupStore;
use super::quarantine::Quarantine;
use super::queue::SourceQueue;
use crate::model::Scenario;

#[derive(Clone)]
pub(super) struct Broker {
    pub(super) queue: SourceQueue,
    /// Quarantined messages in the order they entered.
    pub(super) quarantine: Quarantine,
    pub(super) dedup: DedupStore,
}

impl Broker {
    pub(super) fn new(
        scenario: &Scenario,
        poisson: Vec<Option<std::sync::Arc<super::traffic::Offsets>>>,
    ) -> Self {
        Broker {
            queue: SourceQueue::new(scenario, poisson),
            quarantine: Quarantine::default(),
            dedup: DedupStore::new(scenario),
        }
    }

    /// The DLQ depth: messages in quarantine now.
    pub(super) fn depth(&self) -> u64 {
        self.quarantine.len()
    }
}
