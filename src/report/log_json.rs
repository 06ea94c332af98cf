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
        // Section 28.7: the failed checkpoints (number, time, status), the
        // first FAILED_LISTED of them; their count is `checkpoints_failed`.
        if let Some(interval) = spec.checkpoint_interval
            && !spec.checkpoint_failures.is_empty()
        {
            let taken = log.checkpoints + log.checkpoints_failed;
            let failed: Vec<Json> = (spec.checkpoint_failures.failed_between(1, taken))
                .flat_map(|(a, b, status)| (a..=b).map(move |k| (k, status)))
                .take(FAILED_LISTED)
                .map(|(k, status)| {
                    json!({"number": k, "at": k.saturating_mul(interval), "status": status.as_str()})
                })
                .collect();
            doc["log"]["checkpoints_failed"] = json!(log.checkpoints_failed);
            doc["log"]["failed_checkpoints"] = json!(failed);
        }
    }
}

/// The most failed checkpoints the JSON report lists one by one.
pub const FAILED_LISTED: usize = 1000;
