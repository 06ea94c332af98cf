//! Reading a finished run: the text transcript and golden transcripts, the
//! JSON report, JUnit XML, and what the templates receive (the HTML timeline's
//! geometry, each message's history), rendered by `templates`.

pub mod chart;
pub mod compare;
pub mod document;
pub mod flow_chart;
pub mod guarantee_chart;
pub mod guarantee_json;
pub mod history;
pub mod interesting;
pub mod json;
pub mod junit_xml;
pub mod live;
pub mod log_chart;
pub mod log_json;
pub mod log_text;
pub mod page;
pub mod parameters;
pub mod playback;
pub mod questions;
pub mod row_text;
pub mod rows;
pub mod scale;
pub mod sweep_chart;
pub mod templates;
pub mod text;
pub mod transition_json;

use serde_json::{Value as Json, json};

use crate::engine::Outcome;
use crate::model::Scenario;

/// The buffer between serde_json's pretty writer and a JSON report's file
/// or standard output: the writer makes many small writes, the file gets
/// few large ones.
pub const JSON_CHUNK: usize = 64 * 1024;

/// What the HTML report draws and scrubs besides the JSON report: the
/// timeline's geometry (`chart`) and the data its time scrubber reads
/// (`scrub`: each message's rows over time, or the census's samples).
pub fn timeline(scenario: &Scenario, outcome: &Outcome) -> (Json, Json) {
    let versions = history::versions(scenario, outcome).filter(|v| v.len() <= chart::LANE_LIMIT);
    let chart = chart::chart(scenario, outcome, versions.as_deref());
    let scrub = match chart.get("mode").and_then(Json::as_str) {
        Some("lanes") => json!({
            "mode": "lanes",
            "end": outcome.totals.end_time,
            "left": chart["left"],
            "right": chart["right"],
            "segments": chart["pieces"],
            "history": versions.as_deref().map_or(Json::Null, history::json),
            "steps": playback::steps(scenario, outcome),
            "steps_total": playback::total(outcome),
            "live": live::lanes_data(scenario, outcome),
        }),
        Some(_) => {
            let (progress, panes) = live::sample_data(scenario, outcome);
            json!({
                "mode": "aggregate",
                "end": outcome.totals.end_time,
                "step": outcome.census.as_ref().map_or(1, |c| c.step),
                "left": chart["left"],
                "right": chart["right"],
                "segments": chart["pieces"],
                "samples": with_progress(&chart["samples"], progress),
                "alarms": scenario.alarms.iter().map(|a| &a.name).collect::<Vec<_>>(),
                "panes": panes,
            })
        }
        None => Json::Null,
    };
    (chart, scrub)
}

/// The census samples the aggregate page scrubs, each with what the run
/// had done then (`progress`, one per sample).
fn with_progress(samples: &Json, progress: Vec<Json>) -> Json {
    let Some(samples) = samples.as_array() else {
        return Json::Null;
    };
    let rows = samples.iter().zip(
        progress
            .into_iter()
            .map(Some)
            .chain(std::iter::repeat(None)),
    );
    Json::Array(
        rows.map(|(sample, done)| {
            let mut sample = sample.clone();
            if let (Json::Object(row), Some(Json::Object(done))) = (&mut sample, done) {
                row.extend(done);
            }
            sample
        })
        .collect(),
    )
}
