//! `[[question]]` as written, and its validation: a question to ask, an
//! optional modeled time, and an answer named like an `[expect]` key
//! (`effects`, `message.uncertain.key`, `kind.poison.acked`,
//! `alarm.backlog.fired`, `sink.counter.value`).

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned as S;

use super::problems::{MAX_DESCRIPTION, MAX_SUMMARY, Problems, unknown_message};
use crate::diagnostic::did_you_mean;
use crate::duration::Duration;
use crate::model::{
    AlarmField, KindField, MessageField, Question, Scenario, SinkField, Target, Total,
};

/// At most this many questions in a file: each question with its own `at`
/// re-runs the scenario up to that time when a report is written.
pub const MAX_QUESTIONS: usize = 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionTable {
    /// What the reader is asked, e.g. "How many effects have committed?".
    #[schemars(with = "String", length(min = 1))]
    pub ask: S<String>,
    /// The modeled time the question is about; playback shows it there.
    /// Without it: the end of the run.
    #[schemars(with = "Option<Duration>")]
    pub at: Option<S<Duration>>,
    /// What answers it, named as in [expect]: a measure (`effects`), or
    /// `message.ID.FIELD`, `kind.NAME.FIELD`, `alarm.NAME.FIELD`,
    /// `sink.NAME.FIELD`.
    #[schemars(with = "String")]
    pub answer: S<String>,
    /// Words shown with the computed answer (Markdown).
    #[schemars(with = "Option<String>")]
    pub explain: Option<S<String>>,
}

pub(super) fn questions(
    problems: &mut Problems,
    raw: &[S<QuestionTable>],
    scenario: &Scenario,
) -> Vec<Question> {
    let mut out = Vec::new();
    if let Some(extra) = raw.get(MAX_QUESTIONS) {
        problems.error_help(
            Some(extra.span()),
            format!("a file may ask at most {MAX_QUESTIONS} questions, this one asks {}", raw.len()),
            "one too many",
            "split the lesson into several files; each question may re-run the scenario up to its `at`",
        );
    }
    for q in raw {
        let q = q.get_ref();
        problems.plain_spanned(&q.ask, "a question", MAX_SUMMARY);
        if q.ask.get_ref().trim().is_empty() {
            problems.error(q.ask.span(), "a question cannot be empty", "nothing to ask");
        }
        if let Some(e) = &q.explain {
            problems.plain(
                e.get_ref(),
                e.span(),
                "an explanation",
                true,
                MAX_DESCRIPTION,
            );
        }
        let Some(answer) = answer(problems, scenario, &q.answer) else {
            continue;
        };
        out.push(Question {
            ask: q.ask.get_ref().clone(),
            at: q.at.as_ref().map(|a| a.get_ref().0),
            answer,
            answer_name: q.answer.get_ref().clone(),
            explain: q
                .explain
                .as_ref()
                .map(|e| super::problems::lines(e.get_ref())),
        });
    }
    out
}

/// The forms an answer can take, for help texts.
const FORMS: &str = "a measure such as `effects`, or `message.ID.FIELD`, `kind.NAME.FIELD`, \
    `alarm.NAME.FIELD`, `sink.NAME.FIELD`";

/// The value an answer names, or a located problem.
fn answer(problems: &mut Problems, scenario: &Scenario, raw: &S<String>) -> Option<Target> {
    let text = raw.get_ref().trim();
    let span = raw.span();
    let mut fail = |message: String, label: &str, help: String| {
        problems.error_help(Some(span.clone()), message, label, help);
        None
    };
    let Some((table, rest)) = text.split_once('.') else {
        return match Total::from_name(text) {
            Some(t) => Some(Target::Total(t)),
            None => {
                let names = Total::ALL.iter().map(|t| t.name());
                let help = match did_you_mean(text, names) {
                    Some(c) => format!("did you mean `{c}`?"),
                    None => format!("an answer is {FORMS}"),
                };
                fail(format!("unknown measure `{text}`"), "not a measure", help)
            }
        };
    };
    let Some((name, field)) = rest.rsplit_once('.') else {
        return fail(
            format!("`{text}` names no field"),
            "which field?",
            format!("write {table}.NAME.FIELD; an answer is {FORMS}"),
        );
    };
    let name = name.trim_matches('"');
    macro_rules! field {
        ($kind:ty, $what:literal) => {
            match <$kind>::ALL.iter().copied().find(|f| f.name() == field) {
                Some(f) => f,
                None => {
                    let names = <$kind>::ALL.iter().map(|f| f.name());
                    let known: Vec<&str> = names.clone().collect();
                    let help = match did_you_mean(field, names) {
                        Some(c) => format!("did you mean `{c}`?"),
                        None => format!("the fields are: {}", known.join(", ")),
                    };
                    return fail(
                        format!("unknown {} field `{field}`", $what),
                        "no such field",
                        help,
                    );
                }
            }
        };
    }
    let unknown = |what: &str, names: Vec<&str>| {
        let help = match did_you_mean(name, names.iter().copied()) {
            Some(c) => format!("did you mean \"{c}\"?"),
            None if names.is_empty() => format!("this file has no {what}"),
            None => format!("known: {}", names.join(", ")),
        };
        (format!("unknown {what} \"{name}\""), help)
    };
    match table {
        "message" => {
            let f = field!(MessageField, "message");
            match scenario.find_message(name) {
                Some(m) => Some(Target::Message(m, f)),
                None => {
                    unknown_message(problems, scenario, &S::new(span.clone(), name.to_string()));
                    None
                }
            }
        }
        "kind" => {
            let f = field!(KindField, "kind");
            match scenario.kinds.iter().position(|k| k == name) {
                Some(k) => Some(Target::Kind(k as u32, f)),
                None => {
                    let (m, h) = unknown(
                        "mix kind",
                        scenario.kinds.iter().map(String::as_str).collect(),
                    );
                    fail(m, "no [[traffic.mix]] entry has this name", h)
                }
            }
        }
        "alarm" => {
            let f = field!(AlarmField, "alarm");
            match scenario.alarms.iter().position(|a| a.name == name) {
                Some(a) => Some(Target::Alarm(a as u32, f)),
                None => {
                    let (m, h) = unknown(
                        "alarm",
                        scenario.alarms.iter().map(|a| a.name.as_str()).collect(),
                    );
                    fail(m, "no [[alarm]] has this name", h)
                }
            }
        }
        "sink" => {
            let f = field!(SinkField, "sink");
            let sinks = &scenario.guarantees.sinks;
            match sinks.iter().position(|s| s.name == name) {
                Some(s) => Some(Target::Sink(s as u32, f)),
                None => {
                    let (m, h) = unknown("sink", sinks.iter().map(|s| s.name.as_str()).collect());
                    fail(
                        m,
                        "no [[sink]] has this name (without [[sink]] the one sink is \"counter\")",
                        h,
                    )
                }
            }
        }
        other => {
            let help = match did_you_mean(other, ["message", "kind", "alarm", "sink"]) {
                Some(c) => format!("did you mean `{c}.{rest}`?"),
                None => format!("an answer is {FORMS}"),
            };
            fail(
                format!("`{other}` is not something an answer can name"),
                "unknown table",
                help,
            )
        }
    }
}
