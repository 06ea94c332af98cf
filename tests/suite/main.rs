//! The integration tests, as one test binary: each module was a binary of
//! its own, and linking a copy of the crate into each took most of a test
//! build's time and disk. Five stay binaries of their own: the browser
//! tests (`tests/browser.rs`, `tests/playback.rs`) and the live
//! conformance tests (`tests/conform.rs`), which CI runs by name with
//! `--ignored` or `--features conform`, and the two that install a global
//! allocator of their own (`tests/resources.rs` counts the process's peak
//! memory, which other tests running beside it would add to;
//! `tests/fuzz.rs` caps it). Run one module with
//! `cargo test --test suite cli::`. A property test's failing cases are
//! kept in `tests/proptest-regressions/<module>.txt` (proptest's place for
//! a crate with a `main.rs`) and replayed before new cases.

#[path = "../common/mod.rs"]
mod common;
mod reference;

mod ci_formats;
mod cli;
mod compare;
mod dataflow;
mod flow_properties;
mod flow_reports;
mod lab;
mod layering;
mod log_properties;
mod planted;
mod properties;
mod prose;
mod readme;
mod reports;
mod settling;
mod shards;
mod subcommands;
mod sweeps;
mod timeline_labels;
mod write_properties;
mod writes;
