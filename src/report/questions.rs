//! The answers to a scenario's `[[question]]`s, computed from the run: as of
//! the question's `at` (the scenario run again, stopped then) or at the
//! end. Every report shows them: HTML reveals one on request, Markdown
//! folds them away, JSON lists them.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use crate::engine::{Outcome, Recorder, run_until};
use crate::model::{Millis, Scenario, Value, Verdict};

/// A value as a reader reads it: texts without quotes, times as durations.
pub fn text(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `[{ask, at, answer, value, value_text, explain}]`, with `expected` and
/// `held` when the file expects the same value at the end of the run.
pub fn answers(scenario: &Scenario, outcome: &Outcome, verdicts: &[Verdict]) -> Json {
    let end = outcome.totals.end_time;
    // One run per distinct time asked about (at most MAX_QUESTIONS).
    let mut earlier: BTreeMap<Millis, Option<Outcome>> = BTreeMap::new();
    let list = scenario.questions.iter().map(|q| {
        let at = q.at.filter(|&t| t < end);
        let value = match at {
            None => Some(outcome.value(scenario, &q.answer)),
            Some(t) => earlier
                .entry(t)
                .or_insert_with(|| run_until(scenario, Recorder::Off, t).ok())
                .as_ref()
                .map(|o| o.value(scenario, &q.answer)),
        };
        let mut item = json!({
            "ask": q.ask,
            "at": q.at,
            "answer": q.answer_name,
            "value": value.as_ref().map_or(Json::Null, Value::to_json),
            "value_text": value.as_ref().map_or_else(|| "the run stopped before then".into(), text),
            "explain": q.explain,
        });
        if at.is_none() {
            let expected = verdicts
                .iter()
                .find(|v| scenario.expectations[v.index].target == q.answer);
            if let Some(v) = expected {
                item["expected"] = json!(scenario.expectations[v.index].check.to_string());
                item["held"] = json!(v.passed);
            }
        }
        item
    });
    Json::Array(list.collect())
}
