//! A scenario's report document as it is written and as templates read it.
//!
//! Its small parts (totals, expectations, census, charts' series: all
//! capped) are one JSON map, the `head`. Its three long lists, the
//! snapshot `messages`, the `transitions` and the `ledger`, are never built
//! as JSON: serde writes them item by item straight from the run, and a
//! template gets them as sequences that make an item only when it reads
//! it. So `--format json` and the reports cost the run's memory plus one
//! item, however long the transcript. A run that counted its transitions
//! and kept none ([`Recorder::Replayed`]) is played again as they are
//! written ([`Replay`]).

use std::fmt;
use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Serde, Value};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, SerializeStruct, Serializer};
use serde_json::Value as Json;

use crate::engine::{FULL_TRANSCRIPT_MESSAGES, Outcome, Recorder, Replay};
use crate::model::{MessageIndex, Scenario};
use crate::report::transition_json::TransitionJson;

/// Runs of up to [`FULL_TRANSCRIPT_MESSAGES`] list every message in JSON;
/// larger ones list this many (the first), so that a report of millions of
/// messages stays a file people can open.
pub const LARGE_RUN_MESSAGES: usize = 1_000;

/// How many messages JSON lists for this run.
pub fn listed(outcome: &Outcome) -> usize {
    let n = outcome.messages.len();
    if n as u64 <= FULL_TRANSCRIPT_MESSAGES {
        n
    } else {
        LARGE_RUN_MESSAGES
    }
}

/// A run whose lists a document writes.
#[derive(Clone)]
pub struct Run {
    pub scenario: Arc<Scenario>,
    pub outcome: Arc<Outcome>,
}

/// A report document: `head` in key order, with `null` where a list of
/// `run` goes. Without a run (a sweep, a file that did not run) it is
/// `head` alone.
pub struct Document {
    pub head: Json,
    pub run: Option<Run>,
}

/// The long lists of a scenario's document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    Messages,
    Transitions,
    Ledger,
}

impl List {
    /// The list's key in the document.
    pub fn key(self) -> &'static str {
        match self {
            List::Messages => "messages",
            List::Transitions => "transitions",
            List::Ledger => "ledger",
        }
    }

    fn named(key: &str) -> Option<List> {
        [List::Messages, List::Transitions, List::Ledger]
            .into_iter()
            .find(|l| l.key() == key)
    }

    /// The list's length in `outcome`; a replayed run's transitions are
    /// not in it (they are written from a [`Replay`], never read by
    /// index).
    pub fn len(self, outcome: &Outcome) -> usize {
        match self {
            List::Messages => listed(outcome),
            List::Transitions => outcome.transitions.len(),
            List::Ledger => outcome.ledger.len(),
        }
    }
}

/// The list `list` of a run, written as a JSON array.
pub struct Listed<'a> {
    pub list: List,
    pub scenario: &'a Scenario,
    pub outcome: &'a Outcome,
}

/// Item `index` of a list, written as a JSON object.
struct Item<'a> {
    list: List,
    scenario: &'a Scenario,
    outcome: &'a Outcome,
    index: usize,
}

/// One ledger entry: an effect that committed.
struct EffectJson<'a> {
    scenario: &'a Scenario,
    effect: &'a crate::engine::Effect,
}

impl Serialize for EffectJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (s, e) = (self.scenario, self.effect);
        let mut fields = serializer.serialize_struct("Effect", 5)?;
        fields.serialize_field("time", &e.time)?;
        fields.serialize_field("message", &s.name_of_message(e.message))?;
        fields.serialize_field("key", &s.name_of_key(e.key))?;
        fields.serialize_field("intent", &s.name_of_intent(e.intent))?;
        fields.serialize_field("cycle", &e.cycle)?;
        fields.end()
    }
}

impl Serialize for Item<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (scenario, outcome) = (self.scenario, self.outcome);
        match self.list {
            List::Messages => {
                super::rows::MessageRow::new(scenario, outcome, self.index as MessageIndex)
                    .serialize(serializer)
            }
            List::Transitions => TransitionJson {
                scenario,
                transition: &outcome.transitions[self.index],
                with_text: true,
            }
            .serialize(serializer),
            List::Ledger => EffectJson {
                scenario,
                effect: &outcome.ledger[self.index],
            }
            .serialize(serializer),
        }
    }
}

impl Serialize for Listed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let scenario = self.scenario;
        if self.outcome.recorder == Recorder::Replayed && self.list == List::Transitions {
            let mut seq = serializer.serialize_seq(None)?;
            for transition in Replay::new(scenario) {
                seq.serialize_element(&TransitionJson {
                    scenario,
                    transition: &transition,
                    with_text: true,
                })?;
            }
            return seq.end();
        }
        let len = self.list.len(self.outcome);
        let mut seq = serializer.serialize_seq(Some(len))?;
        for index in 0..len {
            seq.serialize_element(&Item {
                list: self.list,
                scenario: self.scenario,
                outcome: self.outcome,
                index,
            })?;
        }
        seq.end()
    }
}

impl Serialize for Document {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (Json::Object(head), Some(run)) = (&self.head, &self.run) else {
            return self.head.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(head.len()))?;
        for (key, value) in head {
            match List::named(key) {
                Some(list) => map.serialize_entry(
                    key,
                    &Listed {
                        list,
                        scenario: &run.scenario,
                        outcome: &run.outcome,
                    },
                )?,
                None => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

impl Document {
    /// A document of `head` alone.
    pub fn plain(head: Json) -> Document {
        Document { head, run: None }
    }

    /// The document as the JSON report file: pretty, with a final newline.
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        use std::io::Write;
        let mut out = std::io::BufWriter::with_capacity(super::JSON_CHUNK, out);
        serde_json::to_writer_pretty(&mut out, self)?;
        out.write_all(b"\n")?;
        out.flush()
    }

    /// The document as a template reads it (`report`): the head's values,
    /// and the lists as sequences that make an item when it is read.
    pub fn template_value(&self) -> Value {
        let (Json::Object(head), Some(run)) = (&self.head, &self.run) else {
            return Value::from(Serde(&self.head));
        };
        // Templates read an item at a time, in any order: reports keep
        // their transcript (`Transcript::Kept`), never replay it.
        debug_assert!(run.outcome.recorder != Recorder::Replayed);
        Value::from_pairs(head.iter().map(|(key, value)| {
            let value = match List::named(key) {
                Some(list) => Value::from_object(LazyList {
                    run: run.clone(),
                    list,
                }),
                None => Value::from(Serde(value)),
            };
            (key.as_str(), value)
        }))
    }
}

/// A list as a template sees it.
struct LazyList {
    run: Run,
    list: List,
}

impl fmt::Debug for LazyList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{} of {}>", self.list.key(), self.run.scenario.name)
    }
}

impl LazyList {
    fn len(&self) -> usize {
        self.list.len(&self.run.outcome)
    }
}

impl Object for LazyList {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let index = key.as_usize()?;
        (index < self.len()).then(|| {
            Value::from(Serde(&Item {
                list: self.list,
                scenario: &self.run.scenario,
                outcome: &self.run.outcome,
                index,
            }))
        })
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.len())
    }
}
