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
        let now = self.core.clock.now;
        if self.alarms.instant_has_events {
            self.alarms.instant_has_events = false;
            // The age the last oldest message reached by now, had it left.
            let reached = self.alarms.oldest_read.map(|e| now.saturating_sub(e));
            // The oldest entry now, read once: until the next event it is
            // what `oldest_age` measures from.
            self.alarms.oldest_read = if self.alarms.wants_oldest {
                self.oldest_entry()
            } else {
                None
            };
            for a in 0..self.scenario.alarms.len() {
                if self.scenario.alarms[a].metric == Metric::OldestAge {
                    let record = &mut self.alarms.records[a];
                    record.peak = record.peak.max(reached.unwrap_or(0));
                }
                let value = self.metric(a, now);
                self.read_alarm(a, now, value);
            }
        }
        // Between two event instants no entry arrives and none leaves, so
        // time alone changes each alarm's condition at most once; with the
        // waits of `for` and `clear_for`, that is at most two changes of
        // state. In time order, then file order.
        let mut driven = std::mem::take(&mut self.alarms.driven);
        driven.clear();
        for a in 0..self.scenario.alarms.len() {
            self.time_driven(a, now, next, &mut driven);
        }
        driven.sort_by_key(|&(t, a, _)| (t, a));
        for &(t, a, value) in &driven {
            self.change_alarm(a, t, value);
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
            Metric::DlqDepth => Some(self.quarantine.len()),
            Metric::QueueDepth => Some(self.consumer.ready.depth),
            Metric::DlqArrivals { window } => Some(self.alarms.arrivals(t, window)),
            Metric::OldestAge => self.alarms.oldest_read.map(|e| t.saturating_sub(e)),
        }
    }

    /// When the earliest message now in quarantine entered it.
    fn oldest_entry(&self) -> Option<Millis> {
        let m = self.quarantine.first()?;
        self.messages.get(m).last_quarantined_at()
    }

    /// Whether `value` meets alarm `a`'s threshold.
    fn condition(&self, a: usize, value: Option<u64>) -> bool {
        value.is_some_and(|v| v >= self.scenario.alarms[a].at_least)
    }

    /// The first instant after `now` at which time alone changes alarm
    /// `a`'s condition, from `holds`: the oldest message's age reaching the
    /// threshold, or the `dlq_arrivals` count falling below it as entries
    /// leave the window one by one (below the threshold once the
    /// (n - at_least + 1)-th oldest has left). The other metrics change
    /// only with events.
    fn condition_changes(&self, a: usize, now: Millis, holds: bool) -> Option<Millis> {
        let alarm = &self.scenario.alarms[a];
        match alarm.metric {
            Metric::OldestAge if !holds => self.alarms.oldest_read?.checked_add(alarm.at_least),
            Metric::DlqArrivals { window } if holds => {
                let range = self.alarms.in_window(now, window);
                let k = (range.len() as u64).checked_sub(alarm.at_least)? as usize;
                self.alarms
                    .entries
                    .get(range.start + k)?
                    .checked_add(window)
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
        a: usize,
        now: Millis,
        next: Millis,
        out: &mut Vec<(Millis, usize, Option<u64>)>,
    ) {
        let mut firing = self.alarms.records[a].firing;
        let mut since = self.alarms.pending[a];
        // Each round either ends, or changes the condition (at most once,
        // see above) or the state (at most once after each change of the
        // condition); four rounds are more than enough.
        for _ in 0..4 {
            let holds = firing != since.is_some();
            let change = self
                .condition_changes(a, now, holds)
                .filter(|&t| t > now && t < next);
            let deadline = since
                .and_then(|s| s.checked_add(self.scenario.alarms[a].hold(firing)))
                .filter(|&d| d < next && change.is_none_or(|c| d < c));
            if let Some(d) = deadline {
                out.push((d, a, self.metric(a, d)));
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
        self.alarms.pending[a] = since;
    }

    /// Alarm `a`'s metric read at the event instant `t`: the condition
    /// starts, keeps or cancels a wait, and a wait that has lasted `for`
    /// (or `clear_for`) changes the state now.
    fn read_alarm(&mut self, a: usize, t: Millis, value: Option<u64>) {
        let holds = self.condition(a, value);
        let record = &mut self.alarms.records[a];
        record.peak = record.peak.max(value.unwrap_or(0));
        let firing = record.firing;
        if holds == firing {
            self.alarms.pending[a] = None;
            return;
        }
        let since = *self.alarms.pending[a].get_or_insert(t);
        let hold = self.scenario.alarms[a].hold(firing);
        if since.checked_add(hold).is_some_and(|d| d <= t) {
            self.alarms.pending[a] = None;
            self.change_alarm(a, t, value);
        }
    }

    /// Alarm `a` fires (or clears) at `t`, the metric then at `value`.
    fn change_alarm(&mut self, a: usize, t: Millis, value: Option<u64>) {
        let record = &mut self.alarms.records[a];
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
        self.observers
            .recording
            .transition(t, None, detail, &self.messages);
    }
}
