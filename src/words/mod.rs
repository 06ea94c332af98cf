//! A run told in words, for every reader of it (the transcript, the
//! reports, the explanations of a failed expectation): each transition's
//! sentence (`sentence.rs`), a transcript line and a message's row
//! (`line.rs`), and counts that agree in number (here). It reads the
//! model and the engine's records, and nothing that reads it.

pub mod line;
pub mod sentence;

/// "1 effect", "2 effects": a count that agrees in number.
pub fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}
