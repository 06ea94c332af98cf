//! Alarms (docs/model.md section 15): each metric is read after every
//! instant that has events, and at the instants where time alone changes
//! it (the oldest quarantined message reaching the threshold age, an entry
//! leaving the `dlq_arrivals` window) that fall between them. Alarms only
//! observe: they add transitions, never change a message.

use std::collections::VecDeque;

use super::Messages;
use super::recorder::Recording;
use super::transition::Detail;
use crate::model::{Alarm, Metric, Millis, Scenario};

/// What an alarm did over the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlarmRecord {
    pub times_fired: u64,
    pub first_fired_at: Option<Millis>,
    pub firing: bool,
    /// The first [`ALARM_CHANGES_KEPT`] times the alarm fired or cleared,
    /// with the metric's value then.
    pub changes: Vec<AlarmChange>,
    /// Changes past those kept.
    pub changes_dropped: u64,
    /// The metric's highest value over the run: the highest it was read
    /// at, and for `oldest_age`, which grows with time alone, the age the
    /// oldest message reached before it left quarantine or the run ended.
    pub peak: u64,
}

/// The alarm fired (or cleared) at `time`, the metric then at `value`
/// (none: `oldest_age` of an empty quarantine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlarmChange {
    pub time: Millis,
    pub fired: bool,
    pub value: Option<u64>,
}

/// Fire and clear instants kept per alarm: enough for a report's
/// timeline, bounded whatever an alarm that flaps does.
pub const ALARM_CHANGES_KEPT: usize = 200;

#[derive(Debug, Default, Clone)]
pub(super) struct Alarms {
    pub(super) records: Vec<AlarmRecord>,
    /// Quarantine entry times within the longest `dlq_arrivals` window.
    entries: VecDeque<Millis>,
    longest_window: Option<Millis>,
    /// Whether the current instant has had an event or an inspection.
    pub(super) instant_has_events: bool,
    /// The fires and clears by time alone between two event instants,
    /// one list reused for the whole run: (time, alarm, value).
    driven: Vec<(Millis, usize, Option<u64>)>,
    /// Per alarm: since when its condition (the metric at least the
    /// threshold) has differed from its state, while it waits out `for`
    /// or `clear_for`.
    pending: Vec<Option<Millis>>,
    /// The entry time of the oldest message in quarantine when alarms were
    /// last read at an event instant: until the next one it stays the
    /// oldest, so its age then is the most `oldest_age` reached between.
    /// Read only when an alarm measures `oldest_age`.
    oldest_read: Option<Millis>,
    wants_oldest: bool,
    /// Per alarm on `outbox_dead_letter_arrivals`: the instants of its
    /// sink's (or every sink's) dead letters within its window; empty for
    /// the others.
    dead_letters: Vec<VecDeque<Millis>>,
    /// Whether an alarm counts outbox dead letters in a window.
    pub(super) wants_dead_letters: bool,
}

impl Alarms {
    pub(super) fn new(scenario: &crate::model::Scenario) -> Self {
        Alarms {
            records: vec![AlarmRecord::default(); scenario.alarms.len()],
            pending: vec![None; scenario.alarms.len()],
            wants_oldest: scenario
                .alarms
                .iter()
                .any(|a| a.metric == Metric::OldestAge),
            longest_window: scenario
                .alarms
                .iter()
                .filter_map(|a| match a.metric {
                    Metric::DlqArrivals { window } => Some(window),
                    _ => None,
                })
                .max(),
            dead_letters: vec![VecDeque::new(); scenario.alarms.len()],
            wants_dead_letters: (scenario.alarms.iter())
                .any(|a| matches!(a.metric, Metric::OutboxDeadLetterArrivals { .. })),
            ..Alarms::default()
        }
    }

    /// An outbox row was dead-lettered for `sink` at `t`.
    pub(super) fn dead_lettered(&mut self, scenario: &Scenario, t: Millis, sink: u32) {
        for (a, alarm) in scenario.alarms.iter().enumerate() {
            if let Metric::OutboxDeadLetterArrivals { sink: wanted, .. } = alarm.metric
                && wanted.is_none_or(|w| w == sink)
            {
                self.dead_letters[a].push_back(t);
            }
        }
    }

    /// A message entered quarantine at `t`.
    #[inline]
    pub(super) fn entered(&mut self, t: Millis) {
        if self.longest_window.is_some() {
            self.entries.push_back(t);
        }
    }

    /// The positions of the entries in (t - window, t]: entries are kept
    /// in time order, so a binary search for the first. None is after t:
    /// a message enters at the clock's time, and alarms are read at the
    /// clock's time or later.
    #[inline]
    fn in_window(entries: &VecDeque<Millis>, t: Millis, window: Millis) -> std::ops::Range<usize> {
        debug_assert!(entries.back().is_none_or(|&e| e <= t));
        let start = match t.checked_sub(window) {
            Some(from) => entries.partition_point(|&e| e <= from),
            None => 0,
        };
        start..entries.len()
    }

    /// The entries alarm `a` counts in a window: the quarantine's, or its
    /// outbox dead letters.
    fn entries_of(&self, alarms: &[Alarm], a: usize) -> &VecDeque<Millis> {
        match alarms[a].metric {
            Metric::OutboxDeadLetterArrivals { .. } => &self.dead_letters[a],
            _ => &self.entries,
        }
    }
}

/// What the alarms read of the other parts after an instant: the values
/// of the metrics that change only with events.
#[derive(Clone, Copy)]
pub(super) struct Readings<'a> {
    /// Messages in quarantine.
    pub(super) quarantine_depth: u64,
    /// Ready messages not taken.
    pub(super) queue_depth: u64,
    /// When the earliest message now in quarantine entered it.
    pub(super) oldest_entry: Option<Millis>,
    /// A log's records appended and not done.
    pub(super) consumer_lag: u64,
    /// The source, for one partition's lag.
    pub(super) source: &'a super::source::Source,
    /// Per sink, the outbox rows dead-lettered so far.
    pub(super) outbox_dead_letters: &'a [u64],
}

/// Where an alarm's changes are written: the transcript, with the
/// messages' states it shows beside them.
pub(super) struct Written<'a> {
    pub(super) recording: &'a mut Recording,
    pub(super) messages: &'a Messages,
}

impl Alarms {
    /// Reads every alarm after the instant `now` (if it had events), then
    /// at the time-driven instants before `next` (exclusive).
    #[inline(never)]
    pub(super) fn observe(
        &mut self,
        scenario: &Scenario,
        now: Millis,
        next: Millis,
        readings: &Readings<'_>,
        mut out: Written,
    ) {
        let alarms = &scenario.alarms;
        if self.instant_has_events {
            self.instant_has_events = false;
            // The age the last oldest message reached by now, had it left.
            let reached = self.oldest_read.map(|e| now.saturating_sub(e));
            // The oldest entry now, read once: until the next event it is
            // what `oldest_age` measures from.
            self.oldest_read = if self.wants_oldest {
                readings.oldest_entry
            } else {
                None
            };
            for a in 0..alarms.len() {
                if alarms[a].metric == Metric::OldestAge {
                    let record = &mut self.records[a];
                    record.peak = record.peak.max(reached.unwrap_or(0));
                }
                let value = self.metric(alarms, readings, a, now);
                self.read_alarm(alarms, a, now, value, &mut out);
            }
        }
        // Between two event instants no entry arrives and none leaves, so
        // time alone changes each alarm's condition at most once; with the
        // waits of `for` and `clear_for`, that is at most two changes of
        // state. In time order, then file order.
        let mut driven = std::mem::take(&mut self.driven);
        driven.clear();
        for a in 0..alarms.len() {
            self.time_driven(alarms, readings, a, now, next, &mut driven);
        }
        driven.sort_by_key(|&(t, a, _)| (t, a));
        for &(t, a, value) in &driven {
            self.change_alarm(a, t, value, &mut out);
        }
        self.driven = driven;
        if let Some(from) = self
            .longest_window
            .and_then(|window| now.checked_sub(window))
        {
            while self.entries.front().is_some_and(|&e| e <= from) {
                self.entries.pop_front();
            }
        }
        for (a, alarm) in alarms.iter().enumerate() {
            if let Metric::OutboxDeadLetterArrivals { window, .. } = alarm.metric
                && let Some(from) = now.checked_sub(window)
            {
                let entries = &mut self.dead_letters[a];
                while entries.front().is_some_and(|&e| e <= from) {
                    entries.pop_front();
                }
            }
        }
    }

    /// Alarm `a`'s metric at `t` (`None`: no value, below any threshold).
    fn metric(
        &self,
        alarms: &[Alarm],
        readings: &Readings<'_>,
        a: usize,
        t: Millis,
    ) -> Option<u64> {
        match alarms[a].metric {
            Metric::DlqDepth => Some(readings.quarantine_depth),
            Metric::QueueDepth => Some(readings.queue_depth),
            Metric::ConsumerLag { partition: None } => Some(readings.consumer_lag),
            Metric::ConsumerLag { partition: Some(p) } => Some(readings.source.partition_lag(p)),
            Metric::DlqArrivals { window } | Metric::OutboxDeadLetterArrivals { window, .. } => {
                Some(Self::in_window(self.entries_of(alarms, a), t, window).len() as u64)
            }
            Metric::OutboxDeadLetters { sink: None } => {
                Some(readings.outbox_dead_letters.iter().sum())
            }
            Metric::OutboxDeadLetters { sink: Some(k) } => Some(
                readings
                    .outbox_dead_letters
                    .get(k as usize)
                    .copied()
                    .unwrap_or(0),
            ),
            Metric::OldestAge => self.oldest_read.map(|e| t.saturating_sub(e)),
        }
    }

    /// Whether `value` meets alarm `a`'s threshold.
    fn condition(alarms: &[Alarm], a: usize, value: Option<u64>) -> bool {
        value.is_some_and(|v| v >= alarms[a].at_least)
    }

    /// The first instant after `now` at which time alone changes alarm
    /// `a`'s condition, from `holds`: the oldest message's age reaching the
    /// threshold, or the `dlq_arrivals` count falling below it as entries
    /// leave the window one by one (below the threshold once the
    /// (n - at_least + 1)-th oldest has left). The other metrics change
    /// only with events.
    fn condition_changes(
        &self,
        alarms: &[Alarm],
        a: usize,
        now: Millis,
        holds: bool,
    ) -> Option<Millis> {
        let alarm = &alarms[a];
        match alarm.metric {
            Metric::OldestAge if !holds => self.oldest_read?.checked_add(alarm.at_least),
            Metric::DlqArrivals { window } | Metric::OutboxDeadLetterArrivals { window, .. }
                if holds =>
            {
                let entries = self.entries_of(alarms, a);
                let range = Self::in_window(entries, now, window);
                let k = (range.len() as u64).checked_sub(alarm.at_least)? as usize;
                entries.get(range.start + k)?.checked_add(window)
            }
            _ => None,
        }
    }

    /// Alarm `a`'s fires and clears by time alone in (now, next), pushed
    /// onto `out` with the metric's value then; its pending wait is
    /// brought up to `next`. A wait ends in a change of state at its
    /// deadline only if the condition still holds there: a change of the
    /// condition at the deadline itself cancels it.
    fn time_driven(
        &mut self,
        alarms: &[Alarm],
        readings: &Readings<'_>,
        a: usize,
        now: Millis,
        next: Millis,
        out: &mut Vec<(Millis, usize, Option<u64>)>,
    ) {
        let mut firing = self.records[a].firing;
        let mut since = self.pending[a];
        // Each round either ends, or changes the condition (at most once,
        // see above) or the state (at most once after each change of the
        // condition); four rounds are more than enough.
        for _ in 0..4 {
            let holds = firing != since.is_some();
            let change = self
                .condition_changes(alarms, a, now, holds)
                .filter(|&t| t > now && t < next);
            let deadline = since
                .and_then(|s| s.checked_add(alarms[a].hold(firing)))
                .filter(|&d| d < next && change.is_none_or(|c| d < c));
            if let Some(d) = deadline {
                out.push((d, a, self.metric(alarms, readings, a, d)));
                firing = !firing;
                since = None;
            } else if let Some(c) = change {
                since = match since {
                    Some(_) => None,
                    None => Some(c),
                };
            } else {
                break;
            }
        }
        self.pending[a] = since;
    }

    /// Alarm `a`'s metric read at the event instant `t`: the condition
    /// starts, keeps or cancels a wait, and a wait that has lasted `for`
    /// (or `clear_for`) changes the state now.
    fn read_alarm(
        &mut self,
        alarms: &[Alarm],
        a: usize,
        t: Millis,
        value: Option<u64>,
        out: &mut Written,
    ) {
        let holds = Self::condition(alarms, a, value);
        let record = &mut self.records[a];
        record.peak = record.peak.max(value.unwrap_or(0));
        let firing = record.firing;
        if holds == firing {
            self.pending[a] = None;
            return;
        }
        let since = *self.pending[a].get_or_insert(t);
        let hold = alarms[a].hold(firing);
        if since.checked_add(hold).is_some_and(|d| d <= t) {
            self.pending[a] = None;
            self.change_alarm(a, t, value, out);
        }
    }

    /// Alarm `a` fires (or clears) at `t`, the metric then at `value`.
    fn change_alarm(&mut self, a: usize, t: Millis, value: Option<u64>, out: &mut Written) {
        let record = &mut self.records[a];
        record.peak = record.peak.max(value.unwrap_or(0));
        let above = !record.firing;
        record.firing = above;
        if record.changes.len() < ALARM_CHANGES_KEPT {
            record.changes.push(AlarmChange {
                time: t,
                fired: above,
                value,
            });
        } else {
            record.changes_dropped += 1;
        }
        let detail = if above {
            record.times_fired += 1;
            record.first_fired_at.get_or_insert(t);
            Detail::AlarmFired {
                alarm: a as u32,
                value: value.unwrap_or(0),
            }
        } else {
            Detail::AlarmCleared { alarm: a as u32 }
        };
        out.recording.transition(t, None, detail, out.messages);
    }
}
