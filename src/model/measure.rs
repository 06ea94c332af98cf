//! The measures of a run, defined once. Each entry of [`for_each_measure!`]
//! names a measure's field, its unit, how a failed expectation on it is
//! explained and what it means. From that one list follow the [`Totals`]
//! the engine fills, the [`Total`] an expectation targets, the `[expect]`
//! keys of the file format (and so its JSON Schema), the JSON report's
//! `totals`, the transcript's totals block and the explanations. Adding a
//! measure is one entry here plus its computation in the engine.

use super::{Millis, State, Value};

/// What a measure counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A number of things.
    Count,
    /// Modeled milliseconds, written as a duration.
    Time,
}

/// How a failed expectation on a measure is explained from the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Story {
    /// The effect ledger, by message.
    Ledger,
    /// Effects per intent, the intents with more than one.
    PerIntent,
    /// The messages whose final state is this one.
    FinalState(State),
    /// Deduplication hits by message.
    DedupHits,
    /// Receives by message.
    Receives,
    /// The messages that entered quarantine.
    QuarantineEntries,
    /// The retry delays scheduled, by message.
    RetryDelays,
    /// Each cycle's drain and each operator step's inspection.
    Drains,
}

/// Calls `$callback!` with every measure, in the order the file format,
/// the transcript and the JSON report list them:
/// `field Variant Unit story, "what it means";`.
#[macro_export]
macro_rules! for_each_measure {
    ($callback:ident) => {
        $callback! {
            deliveries Deliveries Count $crate::model::Story::Receives,
                "deliveries (worker attempts), every cycle included";
            acked Acked Count $crate::model::Story::FinalState($crate::model::State::Acked),
                "messages whose final state is acked";
            quarantined Quarantined Count
                $crate::model::Story::FinalState($crate::model::State::Quarantined),
                "messages still in quarantine at the end";
            expired Expired Count $crate::model::Story::FinalState($crate::model::State::Expired),
                "messages that expired in quarantine";
            purged Purged Count $crate::model::Story::FinalState($crate::model::State::Purged),
                "messages the operator purged";
            effects Effects Count $crate::model::Story::Ledger,
                "committed effects (the ledger's length)";
            duplicated_effects DuplicatedEffects Count $crate::model::Story::PerIntent,
                "effects beyond the first of each intent";
            dedup_hits DedupHits Count $crate::model::Story::DedupHits,
                "deliveries answered from the deduplication store";
            quarantine_entries QuarantineEntries Count $crate::model::Story::QuarantineEntries,
                "times a message entered quarantine";
            retry_delay_paid RetryDelayPaid Time $crate::model::Story::RetryDelays,
                "the sum of every scheduled retry delay";
            max_dlq_depth MaxDlqDepth Count $crate::model::Story::QuarantineEntries,
                "the most messages in quarantine at once";
            final_dlq_depth FinalDlqDepth Count $crate::model::Story::QuarantineEntries,
                "messages in quarantine at the end";
            drain_time DrainTime Time $crate::model::Story::Drains,
                "when the source cycle drained (its last delivery)";
            end_time EndTime Time $crate::model::Story::Drains,
                "the last event, inspections included";
        }
    };
}

macro_rules! define_measures {
    ($($field:ident $variant:ident $unit:ident $story:expr, $doc:literal;)*) => {
        /// A run's measures. `messages` is the scenario's size, not a
        /// measure an expectation can name.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
        pub struct Totals {
            pub messages: u64,
            $(#[doc = $doc] pub $field: u64,)*
        }

        /// A measure an expectation can name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum Total {
            $($variant,)*
        }

        impl Total {
            /// Every measure, in order.
            pub const ALL: &'static [Total] = &[$(Total::$variant,)*];

            /// The name in the file, the JSON report and the transcript.
            pub fn name(self) -> &'static str {
                match self {
                    $(Total::$variant => stringify!($field),)*
                }
            }

            pub fn unit(self) -> Unit {
                match self {
                    $(Total::$variant => Unit::$unit,)*
                }
            }

            pub fn story(self) -> Story {
                match self {
                    $(Total::$variant => $story,)*
                }
            }

            /// What the measure means, in a few words.
            pub fn doc(self) -> &'static str {
                match self {
                    $(Total::$variant => $doc,)*
                }
            }
        }

        impl Totals {
            /// The measure's raw number (a count, or milliseconds).
            pub fn number(&self, t: Total) -> u64 {
                match t {
                    $(Total::$variant => self.$field,)*
                }
            }
        }
    };
}

for_each_measure!(define_measures);

/// Number of states; `State as usize` indexes arrays of this length.
pub const STATE_COUNT: usize = State::ALL.len();

impl Total {
    /// A measure by its name in the file.
    pub fn from_name(name: &str) -> Option<Total> {
        Total::ALL.iter().copied().find(|t| t.name() == name)
    }
}

impl Totals {
    /// The measure as an expectation compares it.
    pub fn get(&self, t: Total) -> Value {
        let n: Millis = self.number(t);
        match t.unit() {
            Unit::Count => Value::Count(n),
            Unit::Time => Value::Time(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_serialised_in_order() {
        let mut totals = Totals::default();
        for (i, t) in Total::ALL.iter().enumerate() {
            assert_eq!(Total::from_name(t.name()), Some(*t));
            // Each field reads its own slot.
            match *t {
                Total::Deliveries => totals.deliveries = i as u64 + 1,
                Total::Acked => totals.acked = i as u64 + 1,
                Total::Quarantined => totals.quarantined = i as u64 + 1,
                Total::Expired => totals.expired = i as u64 + 1,
                Total::Purged => totals.purged = i as u64 + 1,
                Total::Effects => totals.effects = i as u64 + 1,
                Total::DuplicatedEffects => totals.duplicated_effects = i as u64 + 1,
                Total::DedupHits => totals.dedup_hits = i as u64 + 1,
                Total::QuarantineEntries => totals.quarantine_entries = i as u64 + 1,
                Total::RetryDelayPaid => totals.retry_delay_paid = i as u64 + 1,
                Total::MaxDlqDepth => totals.max_dlq_depth = i as u64 + 1,
                Total::FinalDlqDepth => totals.final_dlq_depth = i as u64 + 1,
                Total::DrainTime => totals.drain_time = i as u64 + 1,
                Total::EndTime => totals.end_time = i as u64 + 1,
            }
        }
        for (i, t) in Total::ALL.iter().enumerate() {
            assert_eq!(totals.number(*t), i as u64 + 1, "{}", t.name());
        }
        let json = serde_json::to_value(totals).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut expected = vec!["messages"];
        expected.extend(Total::ALL.iter().map(|t| t.name()));
        assert_eq!(keys, expected);
    }

    #[test]
    fn units_decide_the_value() {
        let totals = Totals {
            drain_time: 5,
            effects: 5,
            ..Totals::default()
        };
        assert_eq!(totals.get(Total::DrainTime), Value::Time(5));
        assert_eq!(totals.get(Total::Effects), Value::Count(5));
    }
}
