//! The JSON report's part of a partitioned log (docs/model.md section
//! 23): the guarantee, each partition's end offset and committed
//! position, the checkpoints, and each restart. Only files with `[log]`
//! get it, so other reports keep their bytes.

use serde_json::{Value as Json, json};

use crate::engine::Outcome;
use crate::model::Scenario;

/// Adds `log` to the report `doc` when the scenario has one.
pub fn add(doc: &mut Json, scenario: &Scenario, outcome: &Outcome) {
    if let (Some(spec), Some(log)) = (&scenario.log, &outcome.log) {
        doc["log"] = json!({
            "partitions": log.partitions.iter().enumerate().map(|(p, &(end, committed))| json!({
                "partition": p,
                "end_offset": end,
                "committed": committed,
            })).collect::<Vec<_>>(),
            "guarantee": spec.guarantee.as_str(),
            "checkpoint_interval": spec.checkpoint_interval,
            "checkpoints": log.checkpoints,
            "last_checkpoint": log.last_checkpoint,
            "restarts": log.restarts.iter().enumerate().map(|(r, record)| {
                let mut restart = json!({
                    "restart": r + 1,
                    "at": record.at,
                    "resume": spec.restarts[r].resume.as_str(),
                    "partitions": record.partitions,
                    "positions_before": record.positions_before,
                    "resume_positions": record.resume_positions,
                    "checkpoint_time": record.checkpoint_time,
                    "skipped": record.skipped,
                    "aborted_effects": record.aborted_effects,
                    "down_for": spec.restarts[r].down_for,
                });
                // With replay_until (section 28.10): where each replay
                // jumped back, null where it did not.
                if !record.replayed_until.is_empty() {
                    restart["replayed_until"] = json!(record.replayed_until);
                }
                restart
            }).collect::<Vec<_>>(),
            "samples": log.samples.iter().map(|s| json!({
                "at": s.at,
                "lag": s.lag,
                "positions": s.positions,
                "ends": s.ends,
            })).collect::<Vec<_>>(),
        });
    }
}
