//! A versioned sink's part of the transcript (docs/model.md section
//! 28.9): its stale writes, and its rows by name with the value, version
//! and intent each holds. Only files with a versioned sink have it, so
//! every other transcript is unchanged.

use crate::engine::Outcome;
use crate::model::Scenario;
use crate::padded::table;

/// How many rows of one sink the transcript lists (by name).
pub const ROWS_SHOWN: usize = 50;

/// The `versioned rows:` section, or nothing without a versioned sink.
pub fn versioned_section(scenario: &Scenario, outcome: &Outcome) -> String {
    let mut out = String::new();
    for (k, rows) in outcome.sink_rows.iter().enumerate() {
        let Some(rows) = rows else {
            continue;
        };
        let name = &scenario.guarantees.sinks[k].name;
        out.push_str(&format!(
            "\nversioned rows of sink \"{name}\": {} stale overwrites, {} stale rejections\n",
            rows.stale_overwrites, rows.stale_rejections
        ));
        let header = ["row", "value", "version", "intent", "stale_writes"].map(String::from);
        let mut lines: Vec<Vec<String>> = (rows.rows.iter().take(ROWS_SHOWN))
            .map(|(row, r)| {
                vec![
                    row.clone(),
                    r.value.to_string(),
                    r.version.to_string(),
                    scenario.intent_name(r.intent).into_owned(),
                    r.stale.to_string(),
                ]
            })
            .collect();
        if rows.rows_held > ROWS_SHOWN as u64 {
            let more = format!("... {} more", rows.rows_held - ROWS_SHOWN as u64);
            lines.push(vec![
                more,
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        out.push_str(&table(&header, &lines));
    }
    out
}
