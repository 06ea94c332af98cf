//! The answers to a scenario's `[[question]]`s, computed from the run: as of
//! the question's `at` (read by the run as it passed that time, from a
//! copy of itself finished there: `Outcome::answers`) or at the end. Every
//! report shows them: HTML reveals one on request, Markdown folds them
//! away, JSON lists them.

use std::collections::BTreeSet;

use serde_json::{Value as Json, json};

use super::text::shown;
use crate::engine::{Outcome, Recorder, run_until};
use crate::model::{Millis, Question, Scenario, Value, Verdict};

/// `[{ask, at, answer, value, value_text, explain}]`, with `expected` and
/// `held` when the file expects the same value at the end of the run.
pub fn answers(scenario: &Scenario, outcome: &Outcome, verdicts: &[Verdict]) -> Json {
    let end = outcome.totals.end_time;
    let asked_at = |q: &Question| q.at.filter(|&t| t < end);
    let mut values: Vec<Option<Value>> = scenario
        .questions
        .iter()
        .enumerate()
        .map(|(i, q)| match asked_at(q) {
            None => Some(outcome.value(scenario, &q.answer)),
            Some(_) => outcome.answers.get(i).cloned().flatten(),
        })
        .collect();
    // A time the run did not answer as it passed (its run stopped at a
    // limit first): the scenario run again to then, one extra outcome in
    // memory at a time.
    let times: BTreeSet<Millis> = scenario
        .questions
        .iter()
        .zip(&values)
        .filter(|(_, v)| v.is_none())
        .filter_map(|(q, _)| asked_at(q))
        .collect();
    for t in times {
        let Ok(then) = run_until(scenario, Recorder::Off, t) else {
            continue;
        };
        for (q, value) in scenario.questions.iter().zip(&mut values) {
            if asked_at(q) == Some(t) && value.is_none() {
                *value = Some(then.value(scenario, &q.answer));
            }
        }
    }
    let list = scenario.questions.iter().zip(values).map(|(q, value)| {
        let mut item = json!({
            "ask": q.ask,
            "at": q.at,
            "answer": q.answer_name,
            "value": value.as_ref().map_or(Json::Null, Value::to_json),
            "value_text": value.map_or_else(|| "the run stopped before then".into(), shown),
            "explain": q.explain,
        });
        let expected = verdicts
            .iter()
            .find(|v| scenario.expectations[v.index].target == q.answer);
        if let (None, Some(v)) = (asked_at(q), expected) {
            item["expected"] = json!(scenario.expectations[v.index].check.to_string());
            item["held"] = json!(v.passed);
        }
        item
    });
    Json::Array(list.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::run;

    /// The first fixture with questions at 10s, at its end, past its end,
    /// and on a value that has none.
    #[test]
    fn answers_are_the_runs_values_as_of_their_time() {
        let text = std::fs::read_to_string("scenarios/01-dlq-is-not-proof-nothing-happened.toml")
            .unwrap()
            + "\n[[question]]\nask = \"a\"\nat = \"10s\"\nanswer = \"quarantined\"\n\
               [[question]]\nask = \"b\"\nanswer = \"  effects \"\n\
               [[question]]\nask = \"c\"\nat = \"1h\"\nanswer = \"message.healthy.state\"\n\
               [[question]]\nask = \"d\"\nat = \"0s\"\nanswer = \"message.healthy.last_quarantined_at\"\n\
               [[question]]\nask = \"e\"\nat = \"9s\"\nanswer = \"effects\"\n";
        let (scenario, _) = crate::scenario::load_str("q.toml", &text).unwrap();
        let outcome = run(&scenario, Recorder::Off).unwrap();
        let verdicts = crate::expect::judge(&scenario, &outcome);
        let all = answers(&scenario, &outcome, &verdicts);
        let asked: Vec<&Json> = all.as_array().unwrap()[2..].iter().collect();
        let texts: Vec<&str> = asked
            .iter()
            .map(|a| a["value_text"].as_str().unwrap())
            .collect();
        // Three quarantined at 10s (none at 9s, when two effects were
        // already committed at 0s); 2 effects at the end; acked at 1h
        // (past the end); never quarantined: no value.
        assert_eq!(texts, ["3", "2", "acked", "-", "2"]);
        assert_eq!(asked[0]["value"], 3);
        assert_eq!(asked[3]["value"], Json::Null);
        // The end's value meets the file's own `effects = 2`; the name is
        // kept without its padding.
        assert_eq!(asked[1]["answer"], "effects");
        assert_eq!(asked[1]["expected"], "2");
        assert_eq!(asked[1]["held"], true);
        // An answer as of an earlier time is not judged by the expectation.
        assert!(asked[0].get("held").is_none());
        assert!(asked[4].get("held").is_none());
    }
}

#[cfg(test)]
mod section_28 {
    use super::*;
    use crate::engine::run;

    /// An answer may name a dead-letter envelope's field (28.2) and a
    /// checkpoint's status (28.7).
    #[test]
    fn answers_name_envelopes_and_checkpoints() {
        let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
             [log]\npartitions = 1\ncheckpoint_interval = \"1s\"\n\
             [[checkpoint_failure]]\nnumbers = [2]\n\
             [[message]]\nid = \"ok\"\n\
             [[message]]\nid = \"bad.v2\"\nat = \"2500ms\"\nfaults = [{ fail = { first = 1 } }]\n\
             [[question]]\nask = \"a\"\nanswer = \"message.bad.v2.envelope.offset\"\n\
             [[question]]\nask = \"b\"\nanswer = \"checkpoint.2.status\"\n\
             [[question]]\nask = \"c\"\nanswer = \"checkpoint.9.status\"\n";
        assert_eq!(answer_texts(text), ["1", "failed", "-"]);
        let refused = |answer: &str, says: &str| {
            let text = format!("{text}[[question]]\nask = \"d\"\nanswer = \"{answer}\"\n");
            let problems = crate::scenario::load_str("q.toml", &text)
                .unwrap_err()
                .problems;
            assert!(
                problems.iter().any(|p| p.message.contains(says)),
                "{answer}: {problems:?}"
            );
        };
        refused("message.bad.v2.envelope.offst", "offst");
        refused("checkpoint.0.status", "no checkpoint");
    }

    /// A question may ask a sink's fields listed only for some files: a
    /// changed write mode (28.8), compensations given up.
    #[test]
    fn answers_name_a_sink_s_changed_write_mode() {
        let text = "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n\
             [[sink]]\nname = \"orders\"\nkind = \"upsert\"\n\
             becomes = { kind = \"increment\", at = \"5s\" }\n\
             [[message]]\nid = \"m1\"\nfaults = [{ lose_ack = { first = 1 } }]\n\
             [[message]]\nid = \"m2\"\nat = \"1s\"\n\
             [[question]]\nask = \"a\"\nanswer = \"sink.orders.kind_at_end\"\n\
             [[question]]\nask = \"b\"\nanswer = \"sink.orders.writes_after_change\"\n\
             [[question]]\nask = \"c\"\nanswer = \"sink.orders.visible_duplicates\"\n";
        assert_eq!(answer_texts(text), ["increment", "1", "1"]);
    }

    /// The answers' texts of the file `text`, run to its end.
    fn answer_texts(text: &str) -> Vec<String> {
        let (scenario, _) = crate::scenario::load_str("q.toml", text).unwrap();
        let outcome = run(&scenario, Recorder::Off).unwrap();
        let all = answers(&scenario, &outcome, &[]);
        (all.as_array().unwrap().iter())
            .map(|a| a["value_text"].as_str().unwrap().to_string())
            .collect()
    }
}
