//! `[[question]]`: what a trainer asks the reader before revealing it. The
//! answer names a value of the run (a measure, a message's field, a mix
//! kind's, an alarm's or a sink's), so it is computed and never goes stale.

use super::{Millis, Target};

/// Generic over what the answer names: a queue scenario's [`Target`] by
/// default, a dataflow's own target for a dataflow file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question<T = Target> {
    pub ask: String,
    /// The modeled time the question is about (and shown at, in playback);
    /// `None`: the end of the run.
    pub at: Option<Millis>,
    /// What answers it, and its name as written (`effects`,
    /// `message.uncertain.key`).
    pub answer: T,
    pub answer_name: String,
    /// Optional words shown with the computed answer.
    pub explain: Option<String>,
}
