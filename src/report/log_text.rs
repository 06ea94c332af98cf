//! A partitioned log's part of the transcript (docs/model.md section 23):
//! each partition's end offset and committed position, each restart with
//! where it resumed and from which checkpoint, and each sink's missing
//! intents and most writes of one intent. Only files with `[log]` have it,
//! so every other transcript is unchanged.

use crate::duration::format as dur;
use crate::engine::Outcome;
use crate::model::{Scenario, SinkField};

use crate::padded::table;

/// How many partitions a restart's row names one by one.
const POSITIONS_SHOWN: usize = 8;

/// The `log:` section, or nothing without `[log]`.
pub fn log_section(scenario: &Scenario, outcome: &Outcome) -> String {
    let Some(log) = &outcome.log else {
        return String::new();
    };
    let mut out = String::from("\nlog:\n");
    let header = ["partition", "end_offset", "committed"].map(String::from);
    let rows: Vec<Vec<String>> = (log.partitions.iter().enumerate())
        .map(|(p, (end, committed))| vec![p.to_string(), end.to_string(), committed.to_string()])
        .collect();
    out.push_str(&table(&header, &rows));
    if !log.restarts.is_empty() {
        out.push('\n');
        let header = ["restart", "at", "checkpoint", "positions", "skipped"].map(String::from);
        let rows: Vec<Vec<String>> = (log.restarts.iter().enumerate())
            .map(|(r, record)| {
                let mut moves: Vec<String> = (record.partitions.iter())
                    .zip(record.positions_before.iter().zip(&record.resume_positions))
                    .take(POSITIONS_SHOWN)
                    .map(|(p, (before, resume))| format!("{p}: {before} -> {resume}"))
                    .collect();
                if record.partitions.len() > POSITIONS_SHOWN {
                    moves.push(format!(
                        "... {} more",
                        record.partitions.len() - POSITIONS_SHOWN
                    ));
                }
                vec![
                    (r + 1).to_string(),
                    dur(record.at),
                    record.checkpoint_time.map_or("-".to_string(), dur),
                    moves.join(", "),
                    record.skipped.to_string(),
                ]
            })
            .collect();
        out.push_str(&table(&header, &rows));
    }
    out.push('\n');
    let header = [
        "sink",
        "value",
        "visible_duplicates",
        "missing",
        "max_per_intent",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = (scenario.guarantees.sinks.iter().enumerate())
        .map(|(k, sink)| {
            let mut row = vec![sink.name.clone()];
            for field in [
                SinkField::Value,
                SinkField::VisibleDuplicates,
                SinkField::Missing,
                SinkField::MaxPerIntent,
            ] {
                row.push(outcome.sink_value(k as u32, field).to_string());
            }
            row
        })
        .collect();
    out.push_str(&table(&header, &rows));
    out
}
