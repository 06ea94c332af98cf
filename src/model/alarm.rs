//! Alarms (docs/model.md section 15): a metric of the queues read at each
//! instant, firing when it reaches a threshold and clearing when it falls
//! below. Alarms observe; they never change the run.

use super::Millis;

#[derive(Debug, Clone)]
pub struct Alarm {
    pub name: String,
    pub metric: Metric,
    /// The threshold: a count, or milliseconds for `oldest_age`; at least 1.
    pub at_least: u64,
    /// How long the metric must stay at least the threshold before the
    /// alarm fires (`for`; 0: at once).
    pub fire_for: Millis,
    /// How long it must stay below before the alarm clears (`clear_for`;
    /// 0: at once).
    pub clear_for: Millis,
}

impl Alarm {
    /// How long the condition must hold before the alarm leaves the state
    /// `firing`.
    pub fn hold(&self, firing: bool) -> Millis {
        if firing {
            self.clear_for
        } else {
            self.fire_for
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Messages in quarantine.
    DlqDepth,
    /// Quarantine entries with entry time in (t - window, t].
    DlqArrivals { window: Millis },
    /// t minus the earliest entry time of the messages in quarantine.
    OldestAge,
    /// Ready messages not yet taken.
    QueueDepth,
    /// With `[log]`: records appended and not yet done, summed over the
    /// partitions (each partition's log end minus its position), or of
    /// one partition.
    ConsumerLag { partition: Option<u32> },
    /// Outbox rows dead-lettered so far (they never leave), for every
    /// sink or one (section 28.16).
    OutboxDeadLetters { sink: Option<u32> },
    /// Outbox rows dead-lettered in (t - window, t], for every sink or one.
    OutboxDeadLetterArrivals { window: Millis, sink: Option<u32> },
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::DlqDepth => "dlq_depth",
            Metric::DlqArrivals { .. } => "dlq_arrivals",
            Metric::OldestAge => "oldest_age",
            Metric::QueueDepth => "queue_depth",
            Metric::ConsumerLag { .. } => "consumer_lag",
            Metric::OutboxDeadLetters { .. } => "outbox_dead_letters",
            Metric::OutboxDeadLetterArrivals { .. } => "outbox_dead_letter_arrivals",
        }
    }

    /// Whether the metric is a duration (its threshold is written as one).
    pub fn is_time(self) -> bool {
        self == Metric::OldestAge
    }
}

/// A field of `[expect.alarm."NAME"]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AlarmField {
    Fired,
    FirstFiredAt,
    TimesFired,
    FiringAtEnd,
}

impl AlarmField {
    /// What an expectation of this field takes.
    pub fn takes(self) -> super::Takes {
        match self {
            AlarmField::Fired | AlarmField::FiringAtEnd => super::Takes::Bool,
            AlarmField::FirstFiredAt => super::Takes::TimeOrNever,
            AlarmField::TimesFired => super::Takes::Count,
        }
    }

    pub const ALL: [AlarmField; 4] = [
        AlarmField::Fired,
        AlarmField::FirstFiredAt,
        AlarmField::TimesFired,
        AlarmField::FiringAtEnd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AlarmField::Fired => "fired",
            AlarmField::FirstFiredAt => "first_fired_at",
            AlarmField::TimesFired => "times_fired",
            AlarmField::FiringAtEnd => "firing_at_end",
        }
    }
}
