//! `[[question]]` as written, and its validation: a question to ask, an
//! optional modeled time, and an answer named like an `[expect]` key
//! (`effects`, `message.uncertain.key`, `kind.poison.acked`,
//! `alarm.backlog.fired`, `sink.counter.value`).

use std::ops::Range;

use crate::scenario::spanned::S;
use schemars::JsonSchema;
use serde::Deserialize;

use super::problems::{
    MAX_DESCRIPTION, MAX_SUMMARY, Problems, find_alarm, find_kind, find_sink, unknown_message,
};
use crate::diagnostic::did_you_mean;
use crate::duration::Duration;
use crate::model::{
    AlarmField, KindField, MessageField, PartitionField, Question, RestartField, Scenario,
    SinkField, Target, Total,
};

/// At most this many questions in a file: each question with its own `at`
/// re-runs the scenario up to that time when a report is written.
pub const MAX_QUESTIONS: usize = 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionTable {
    /// What the reader is asked, e.g. "How many effects have committed?".
    #[schemars(length(min = 1))]
    pub ask: S<String>,
    /// The modeled time the question is about; playback shows it there.
    /// Without it: the end of the run.
    pub at: Option<S<Duration>>,
    /// What answers it, named as in [expect]: a measure (`effects`), or
    /// `message.ID.FIELD`, `kind.NAME.FIELD`, `alarm.NAME.FIELD`,
    /// `sink.NAME.FIELD`, `partition.N.FIELD`, `restart.N.FIELD`.
    pub answer: S<String>,
    /// Words shown with the computed answer (Markdown).
    pub explain: Option<S<String>>,
}

pub(super) fn questions(
    problems: &mut Problems,
    raw: &[S<QuestionTable>],
    scenario: &Scenario,
) -> Vec<Question> {
    read_questions(
        problems,
        raw,
        "split the lesson into several files; each question may re-run the scenario up to its `at`",
        |problems, text| answer(problems, scenario, text),
    )
}

/// `[[question]]` entries: their texts checked, at most
/// [`MAX_QUESTIONS`], each answer read by `answer` (a queue scenario's or
/// a dataflow's).
pub(crate) fn read_questions<T>(
    problems: &mut Problems,
    raw: &[S<QuestionTable>],
    too_many_help: &str,
    mut answer: impl FnMut(&mut Problems, &S<String>) -> Option<T>,
) -> Vec<Question<T>> {
    let mut out = Vec::new();
    if let Some(extra) = raw.get(MAX_QUESTIONS) {
        problems.error_help(
            Some(extra.span()),
            format!(
                "a file may ask at most {MAX_QUESTIONS} questions, this one asks {}",
                raw.len()
            ),
            "one too many",
            too_many_help,
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
        let Some(answer) = answer(problems, &q.answer) else {
            continue;
        };
        out.push(Question {
            ask: q.ask.get_ref().clone(),
            at: q.at.as_ref().map(|a| a.get_ref().0),
            answer,
            answer_name: q.answer.get_ref().trim().to_string(),
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
    `alarm.NAME.FIELD`, `sink.NAME.FIELD`, `partition.N.FIELD`, `restart.N.FIELD`, \
    `checkpoint.K.status`, `message.ID.envelope.FIELD`";

/// The value an answer names, or a located problem.
fn answer(problems: &mut Problems, scenario: &Scenario, raw: &S<String>) -> Option<Target> {
    let text = raw.get_ref().trim();
    let span = raw.span();
    let Some((table, rest)) = text.split_once('.') else {
        if let Some(t) = Total::from_name(text) {
            return Some(Target::Total(t));
        }
        let help = match did_you_mean(text, Total::ALL.iter().map(|t| t.name())) {
            Some(c) => format!("did you mean `{c}`?"),
            None => format!("an answer is {FORMS}"),
        };
        problems.error_help(
            Some(span),
            format!("unknown measure `{text}`"),
            "not a measure",
            help,
        );
        return None;
    };
    let Some((name, field)) = rest.rsplit_once('.') else {
        problems.error_help(
            Some(span),
            format!("`{text}` names no field"),
            "which field?",
            format!("write {table}.NAME.FIELD; an answer is {FORMS}"),
        );
        return None;
    };
    let name = S::new(span.clone(), name.trim_matches('"').to_string());
    match table {
        "message"
            if scenario.find_message(name.get_ref()).is_none()
                && name.get_ref().ends_with(".envelope") =>
        {
            // `message.ID.envelope.FIELD` (section 28.2).
            let f = named_field(
                problems,
                &span,
                &crate::model::EnvelopeField::ALL,
                crate::model::EnvelopeField::name,
                field,
                "envelope",
            )?;
            let id = S::new(
                span.clone(),
                name.get_ref().trim_end_matches(".envelope").to_string(),
            );
            let m = scenario.find_message(id.get_ref());
            if m.is_none() {
                unknown_message(problems, scenario, &id);
            }
            Some(Target::Envelope(m?, f))
        }
        "message" => {
            let f = named_field(
                problems,
                &span,
                &MessageField::ALL,
                MessageField::name,
                field,
                "message",
            )?;
            let m = scenario.find_message(name.get_ref());
            if m.is_none() {
                unknown_message(problems, scenario, &name);
            }
            Some(Target::Message(m?, f))
        }
        "kind" => {
            let f = named_field(
                problems,
                &span,
                &KindField::ALL,
                KindField::name,
                field,
                "kind",
            )?;
            Some(Target::Kind(find_kind(problems, scenario, &name)?, f))
        }
        "alarm" => {
            let f = named_field(
                problems,
                &span,
                &AlarmField::ALL,
                AlarmField::name,
                field,
                "alarm",
            )?;
            Some(Target::Alarm(find_alarm(problems, scenario, &name)?, f))
        }
        "sink" => {
            let f = named_field(
                problems,
                &span,
                &SinkField::ASKED,
                SinkField::name,
                field,
                "sink",
            )?;
            Some(Target::Sink(find_sink(problems, scenario, &name)?, f))
        }
        "partition" => {
            let f = named_field(
                problems,
                &span,
                &PartitionField::ALL,
                PartitionField::name,
                field,
                "partition",
            )?;
            let p = super::problems::find_partition(problems, scenario, &name)?;
            Some(Target::Partition(p, f))
        }
        "restart" => {
            let f = named_field(
                problems,
                &span,
                &RestartField::ALL,
                RestartField::name,
                field,
                "restart",
            )?;
            let r = super::problems::find_restart(problems, scenario, &name)?;
            Some(Target::Restart(r, f))
        }
        "checkpoint" => {
            let f = named_field(
                problems,
                &span,
                &crate::model::CheckpointField::ALL,
                crate::model::CheckpointField::name,
                field,
                "checkpoint",
            )?;
            let k = super::problems::find_checkpoint(problems, scenario, &name)?;
            Some(Target::Checkpoint(k, f))
        }
        other => {
            let tables = [
                "message",
                "kind",
                "alarm",
                "sink",
                "partition",
                "restart",
                "checkpoint",
            ];
            let help = match did_you_mean(other, tables) {
                Some(c) => format!("did you mean `{c}.{rest}`?"),
                None => format!("an answer is {FORMS}"),
            };
            let message = format!("`{other}` is not something an answer can name");
            problems.error_help(Some(span), message, "unknown table", help);
            None
        }
    }
}

/// The field of `all` whose name is `field`, or a located problem
/// suggesting the closest.
fn named_field<F: Copy>(
    problems: &mut Problems,
    span: &Range<usize>,
    all: &[F],
    named: fn(F) -> &'static str,
    field: &str,
    what: &str,
) -> Option<F> {
    let found = all.iter().copied().find(|&f| named(f) == field);
    if found.is_none() {
        let known: Vec<&str> = all.iter().map(|&f| named(f)).collect();
        let help = match did_you_mean(field, known.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None => format!("the fields are: {}", known.join(", ")),
        };
        let message = format!("unknown {what} field `{field}`");
        problems.error_help(Some(span.clone()), message, "no such field", help);
    }
    found
}
