//! Alarms (docs/model.md section 15): each metric is read after every
//! instant that has events, and at the instants where time alone changes
//! it (the oldest quarantined message reaching the threshold age, an entry
//! leaving the `dlq_arrivals` window) that fall between them. Alarms only
//! observe: they add transitions, never change a message.

use std::collections::VecDeque;

use super::Engine;
use super::transition::Detail;
use crate::model::{Metric, Millis};

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

#[derive(Debug, Default)]
pub(super) struct Alarms {
    pub(super) records: Vec<AlarmRecord>,
    /// Quarantine entry times within the longest `dlq_arrivals` window.
    entries: VecDeque<Millis>,
    longest_window: Option<Millis>,
    /// Whether the current instant has had an event or an inspection.
    pub(super) instant_has_events: bool,
    /// The time-driven changes between two event instants, one list
    /// reused for the whole run: (time, alarm, value).
    driven: Vec<(Millis, usize, Option<u64>)>,
    /// The entry time of the oldest message in quarantine when alarms were
    /// last read at an event instant: until the next one it stays the
    /// oldest, so its age then is the most `oldest_age` reached between.
    oldest_read: Option<Millis>,
}

impl Alarms {
    pub(super) fn new(scenario: &crate::model::Scenario) -> Self {
        Alarms {
            records: vec![AlarmRecord::default(); scenario.alarms.len()],
            longest_window: scenario
                .alarms
                .iter()
                .filter_map(|a| match a.metric {
                    Metric::DlqArrivals { window } => Some(window),
                    _ => None,
                })
                .max(),
            ..Alarms::default()
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
    fn in_window(&self, t: Millis, window: Millis) -> std::ops::Range<usize> {
        debug_assert!(self.entries.back().is_none_or(|&e| e <= t));
        let start = match t.checked_sub(window) {
            Some(from) => self.entries.partition_point(|&e| e <= from),
            None => 0,
        };
        start..self.entries.len()
    }

    #[inline]
    fn arrivals(&self, t: Millis, window: Millis) -> u64 {
        self.in_window(t, window).len() as u64
    }
}

impl Engine<'_> {
    /// Reads every alarm after the instant now (if it had events), then at
    /// the time-driven instants before `next` (exclusive).
    #[inline]
    pub(super) fn observe_alarms(&mut self, next: Millis) {
        if !self.scenario.alarms.is_empty() {
            self.observe_each_alarm(next);
        }
    }

    #[inline(never)]
    fn observe_each_alarm(&mut self, next: Millis) {
        let now = self.clock.now;
        if self.alarms.instant_has_events {
            self.alarms.instant_has_events = false;
            // The age the last oldest message reached by now, had it left.
            let reached = self.alarms.oldest_read.map(|e| now.saturating_sub(e));
            for a in 0..self.scenario.alarms.len() {
                if self.scenario.alarms[a].metric == Metric::OldestAge {
                    let record = &mut self.alarms.records[a];
                    record.peak = record.peak.max(reached.unwrap_or(0));
                }
                let value = self.metric(a, now);
                self.set_alarm(a, now, value);
            }
            self.alarms.oldest_read = self.oldest_entry();
        }
        // Time alone changes each alarm at most once between two event
        // instants (no entry arrives, none leaves): in time order, then
        // file order.
        let mut driven = std::mem::take(&mut self.alarms.driven);
        driven.clear();
        driven.extend(
            (0..self.scenario.alarms.len())
                .filter_map(|a| self.time_driven(a, now, next).map(|(t, v)| (t, a, v))),
        );
        driven.sort_by_key(|&(t, a, _)| (t, a));
        for &(t, a, value) in &driven {
            self.set_alarm(a, t, value);
        }
        self.alarms.driven = driven;
        if let Some(from) = self
            .alarms
            .longest_window
            .and_then(|window| now.checked_sub(window))
        {
            while self.alarms.entries.front().is_some_and(|&e| e <= from) {
                self.alarms.entries.pop_front();
            }
        }
    }

    /// Alarm `a`'s metric at `t` (`None`: no value, below any threshold).
    fn metric(&self, a: usize, t: Millis) -> Option<u64> {
        match self.scenario.alarms[a].metric {
            Metric::DlqDepth => Some(self.broker.depth()),
            Metric::QueueDepth => Some(self.ready.depth),
            Metric::DlqArrivals { window } => Some(self.alarms.arrivals(t, window)),
            Metric::OldestAge => self.oldest_entry().map(|e| t.saturating_sub(e)),
        }
    }

    /// When the earliest message now in quarantine entered it.
    fn oldest_entry(&self) -> Option<Millis> {
        let m = self.broker.quarantine.first()?;
        self.messages.get(m).last_quarantined_at()
    }

    /// The instant in (now, next) where time alone changes alarm `a`'s
    /// state, and the metric's value then.
    fn time_driven(&self, a: usize, now: Millis, next: Millis) -> Option<(Millis, Option<u64>)> {
        let alarm = &self.scenario.alarms[a];
        let firing = self.alarms.records[a].firing;
        let at = match alarm.metric {
            // The oldest message's age reaches the threshold.
            Metric::OldestAge if !firing => self.oldest_entry()?.checked_add(alarm.at_least)?,
            // Entries leave the window one by one: the count falls below
            // the threshold when the (n - at_least + 1)-th oldest leaves.
            Metric::DlqArrivals { window } if firing => {
                let range = self.alarms.in_window(now, window);
                let k = (range.len() as u64).checked_sub(alarm.at_least)? as usize;
                self.alarms
                    .entries
                    .get(range.start + k)?
                    .checked_add(window)?
            }
            _ => return None,
        };
        (at > now && at < next).then(|| (at, self.metric(a, at)))
    }

    fn set_alarm(&mut self, a: usize, t: Millis, value: Option<u64>) {
        let at_least = self.scenario.alarms[a].at_least;
        let above = value.is_some_and(|v| v >= at_least);
        let record = &mut self.alarms.records[a];
        record.peak = record.peak.max(value.unwrap_or(0));
        if above == record.firing {
            return;
        }
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
        self.recording.transition(t, None, detail, &self.messages);
    }
}
