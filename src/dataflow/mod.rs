//! Dataflow scenarios (model section 25): a second world beside the
//! queue. A file with `[[node]]` entries describes nodes joined by FIFO
//! channels of one or more partitions, values sent between them, and
//! Chandy-Lamport snapshot attempts; the run records each attempt's cut
//! and the file's expectations are judged against it.
//!
//! | file | concept |
//! |---|---|
//! | `file.rs` | the file's tables as written, with spans |
//! | `validate.rs` | from the tables to the model, every problem located |
//! | `model.rs` | the validated dataflow and its expectations |
//! | `world.rs` | the run: sends, markers, recordings, timeouts |
//! | `judge.rs` | verdicts, and diagnostics that explain a failure |
//! | `text.rs` | the transcript and the space-time diagram |
//! | `json.rs` | the JSON report |

pub mod model;
pub mod world;

pub use model::Dataflow;
pub use world::{Outcome, Stop, run};

#[cfg(test)]
mod tests;
