//! scenario-run: deterministic simulation of retries, dead-letter
//! quarantine, redrive, retention and deduplication, with expectations
//! checked against the run and diagnostics that explain the difference.

pub mod app;
pub mod cli;
pub mod conform;
pub mod dataflow;
pub mod diagnostic;
pub mod duration;
pub mod engine;
pub mod expect;
pub mod lab;
pub mod meter;
pub mod model;
pub(crate) mod output;
pub(crate) mod padded;
pub mod report;
pub mod scenario;
pub(crate) mod shell;
pub(crate) mod sim;
pub mod words;
