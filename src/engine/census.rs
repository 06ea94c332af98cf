//! The census: how many messages are in each state over modeled time, at
//! any scale, in one pass and O(1) per state change.

use rustc_hash::FxHashMap;

use super::messages::Messages;
use crate::model::{Class, MessageIndex, Millis, ReasonIndex, STATE_COUNT, State};

/// Messages per state over modeled time: `samples[k]` holds the counts as of
/// `k * step` (every event at that instant included), and `last` the counts
/// at the end. The step grows along [`census_step_after`] as the run grows,
/// so a census holds at most [`CENSUS_SAMPLES`] samples whatever the run's
/// length, and every sample falls on a readable time (a multiple of 1, 2 or
/// 5 units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Census {
    pub step: Millis,
    /// Counts indexed by `State as usize`.
    pub samples: Vec<[u64; STATE_COUNT]>,
    pub end: Millis,
    pub last: [u64; STATE_COUNT],
    /// Of the messages waiting, those that have not arrived (never
    /// received: [`crate::engine::MessageState::has_arrived`] is false), as
    /// of each sample; the rest wait for a retry. The reports draw the two
    /// apart.
    pub not_arrived: Vec<u64>,
    /// The same at the end.
    pub last_not_arrived: u64,
    /// The first messages of each pane (the source's: ready or waiting
    /// for a retry; the quarantine's), in message order, as of each
    /// sample: at most [`PANE_SAMPLE_ROWS`] each.
    pub panes: Vec<Panes>,
    /// The same at the end.
    pub last_panes: Panes,
    /// What the run had done as of each sample (deliveries made, retry
    /// delay paid): the lab's live counters between two samples.
    pub progress: Vec<Progress>,
    /// The same at the end.
    pub last_progress: Progress,
    /// The counts at the instants where things change that a round time
    /// would miss (each operator inspection, each outage edge), in time
    /// order; at most [`CENSUS_MARKS`].
    pub marks: Vec<Mark>,
}

/// The first messages of the two panes as of a sample: the source's
/// (ready, or waiting for a retry) and the quarantine's.
pub type Panes = [Vec<PaneRow>; 2];

/// The source's pane ([`Panes`]).
pub const SOURCE_PANE: usize = 0;
/// The quarantine's pane ([`Panes`]).
pub const QUARANTINE_PANE: usize = 1;

/// How many messages of each pane a sample keeps.
pub const PANE_SAMPLE_ROWS: usize = 5;

/// A message a pane lists as of a sample, as it was then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneRow {
    pub message: MessageIndex,
    pub state: State,
    pub total_receives: u32,
    pub reason: Option<ReasonIndex>,
    pub quarantined_at: Option<Millis>,
    /// A message waiting for a retry: when the retry is due.
    pub due: Option<Millis>,
    /// The class of its last failure and its entries into quarantine so
    /// far (a RabbitMQ dead letter's `x-death` reads them).
    pub last_class: Class,
    pub quarantine_entries: u32,
}

/// What a run had done as of a sample, besides the messages per state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub deliveries: u64,
    pub retry_delay_paid: Millis,
}

impl Progress {
    pub(super) fn of(totals: &crate::model::Totals) -> Progress {
        Progress {
            deliveries: totals.deliveries,
            retry_delay_paid: totals.retry_delay_paid,
        }
    }
}

/// The counts as of a marked instant, every event at it included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub time: Millis,
    /// What happens then: "operator step 1 inspects", "outage starts"...
    pub label: String,
    pub counts: [u64; STATE_COUNT],
}

pub const CENSUS_SAMPLES: usize = 600;

/// Marked instants kept by one census (the file bounds how many outages and
/// operator steps there are; this bounds what a report shows).
pub const CENSUS_MARKS: usize = 100;

/// The census's steps: each a multiple of the one before, all readable.
pub(super) const CENSUS_STEPS: [Millis; 19] = [
    1, 2, 10, 20, 100, 200, 1_000, 2_000, 10_000, 20_000, 60_000, 120_000, 600_000, 1_200_000,
    3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000,
];

/// The step after `step` (beyond a day, doubling).
pub fn census_step_after(step: Millis) -> Millis {
    CENSUS_STEPS
        .iter()
        .copied()
        .find(|&s| s > step)
        .unwrap_or(step.saturating_mul(2))
}

impl Census {
    /// Whether reports show `state`: always, but `dropped` and `skipped`
    /// only for runs where some message was in that state (as of a
    /// sample, a marked instant or the end).
    pub fn shows(&self, state: State) -> bool {
        let i = state as usize;
        match state {
            State::Dropped | State::Skipped => {
                self.last[i] > 0
                    || self.samples.iter().any(|c| c[i] > 0)
                    || self.marks.iter().any(|m| m.counts[i] > 0)
            }
            _ => true,
        }
    }

    /// The counts to draw over time: every sample before the end, then
    /// the end.
    pub fn points(&self) -> Vec<(Millis, [u64; STATE_COUNT])> {
        self.over_time(&self.samples, self.last)
    }

    /// One series of samples (and its value at the end) over time: every
    /// sample before the end, then the end.
    fn over_time<T: Copy>(&self, samples: &[T], last: T) -> Vec<(Millis, T)> {
        let mut points: Vec<(Millis, T)> = (samples.iter().enumerate())
            .map(|(k, &v)| (k as Millis * self.step, v))
            .filter(|(t, _)| *t < self.end)
            .collect();
        points.push((self.end, last));
        points
    }

    /// One series' sample as of [`Census::sample_time`]`(t)`.
    fn as_of<T: Copy>(&self, samples: &[T], last: T, t: Millis) -> T {
        if t >= self.end {
            return last;
        }
        samples
            .get((t / self.step) as usize)
            .copied()
            .unwrap_or(last)
    }

    /// Time of the sample that describes modeled time `t`: the latest
    /// sample at or before it, or the end.
    pub fn sample_time(&self, t: Millis) -> Millis {
        if t >= self.end {
            return self.end;
        }
        let k = (t / self.step).min(self.samples.len().saturating_sub(1) as Millis);
        k * self.step
    }

    /// The counts as of [`Census::sample_time`]`(t)`.
    pub fn at(&self, t: Millis) -> [u64; STATE_COUNT] {
        self.as_of(&self.samples, self.last, t)
    }

    /// The messages not arrived as of [`Census::sample_time`]`(t)`.
    pub fn not_arrived_at(&self, t: Millis) -> u64 {
        self.as_of(&self.not_arrived, self.last_not_arrived, t)
    }

    /// The panes' first rows as of [`Census::sample_time`]`(t)`.
    pub fn panes_at(&self, t: Millis) -> &Panes {
        if t >= self.end {
            return &self.last_panes;
        }
        self.panes
            .get((t / self.step) as usize)
            .unwrap_or(&self.last_panes)
    }

    /// The panes' first rows at each of [`Census::points`].
    pub fn pane_points(&self) -> Vec<(Millis, &Panes)> {
        let mut points: Vec<(Millis, &Panes)> = (self.panes.iter().enumerate())
            .map(|(k, p)| (k as Millis * self.step, p))
            .filter(|(t, _)| *t < self.end)
            .collect();
        points.push((self.end, &self.last_panes));
        points
    }

    /// What the run had done as of [`Census::sample_time`]`(t)`.
    pub fn progress_at(&self, t: Millis) -> Progress {
        self.as_of(&self.progress, self.last_progress, t)
    }

    /// What the run had done at each of [`Census::points`].
    pub fn progress_points(&self) -> Vec<(Millis, Progress)> {
        self.over_time(&self.progress, self.last_progress)
    }

    /// The messages not arrived at each of [`Census::points`].
    pub fn not_arrived_points(&self) -> Vec<(Millis, u64)> {
        self.over_time(&self.not_arrived, self.last_not_arrived)
    }
}

#[derive(Clone)]
pub(super) struct CensusTaker {
    step: Millis,
    next: Millis,
    counts: [u64; STATE_COUNT],
    samples: Vec<[u64; STATE_COUNT]>,
    /// Messages waiting that have not arrived, now and at each sample.
    not_arrived: u64,
    /// Which messages are in each pane now, and the panes' first rows at
    /// each sample.
    members: [PaneBits; 2],
    /// Each message waiting for a retry: when it is due, and its total
    /// receives when the retry was scheduled (a later delivery makes the
    /// entry stale). Dropped when the message stops waiting.
    dues: FxHashMap<MessageIndex, (Millis, u32)>,
    pane_samples: Vec<Panes>,
    not_arrived_samples: Vec<u64>,
    /// What the run had done, now and at each sample.
    progress: Progress,
    progress_samples: Vec<Progress>,
    /// Instants to mark that time has not yet passed, with their labels.
    pending: std::collections::BTreeMap<Millis, String>,
    marks: Vec<Mark>,
}

impl CensusTaker {
    pub(super) fn new(messages: u64) -> Self {
        let mut counts = [0; STATE_COUNT];
        counts[State::Waiting as usize] = messages;
        CensusTaker {
            step: 1,
            next: 0,
            counts,
            samples: Vec::new(),
            not_arrived: messages,
            not_arrived_samples: Vec::new(),
            members: [PaneBits::new(messages), PaneBits::new(messages)],
            dues: FxHashMap::default(),
            pane_samples: Vec::new(),
            progress: Progress::default(),
            progress_samples: Vec::new(),
            pending: std::collections::BTreeMap::new(),
            marks: Vec::new(),
        }
    }

    /// Takes the counts as of `t` (every event at `t` included) when time
    /// passes it. Labels of one instant are joined.
    pub(super) fn mark(&mut self, t: Millis, label: &str) {
        if let Some(existing) = self.pending.get_mut(&t) {
            if !existing.split("; ").any(|l| l == label) {
                existing.push_str("; ");
                existing.push_str(label);
            }
        } else if self.pending.len() + self.marks.len() < CENSUS_MARKS {
            self.pending.insert(t, label.to_string());
        }
    }

    /// Time is about to reach `t`, the run having done `progress` so far
    /// and its messages as `messages` holds them: every sample and mark
    /// before it is final.
    pub(super) fn advance(&mut self, t: Millis, progress: Progress, messages: &Messages) {
        self.progress = progress;
        // The panes are read once for the samples this call takes (nothing
        // changed between them).
        let mut panes: Option<Panes> = None;
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() >= t {
                break;
            }
            let (time, label) = entry.remove_entry();
            self.marks.push(Mark {
                time,
                label,
                counts: self.counts,
            });
        }
        while self.next < t {
            self.samples.push(self.counts);
            self.not_arrived_samples.push(self.not_arrived);
            self.progress_samples.push(self.progress);
            let rows = panes.get_or_insert_with(|| {
                self.members
                    .each_mut()
                    .map(|b| b.rows(messages, &self.dues))
            });
            self.pane_samples.push(rows.clone());
            if self.samples.len() == CENSUS_SAMPLES {
                let step = census_step_after(self.step);
                let ratio = (step / self.step) as usize;
                thin(&mut self.samples, ratio);
                thin(&mut self.not_arrived_samples, ratio);
                thin(&mut self.progress_samples, ratio);
                self.pane_samples = self.pane_samples.iter().step_by(ratio).cloned().collect();
                self.step = step;
            }
            self.next = (self.samples.len() as Millis).saturating_mul(self.step);
        }
    }

    pub(super) fn finish(mut self, end: Millis, progress: Progress, messages: &Messages) -> Census {
        self.advance(end.saturating_add(1), progress, messages);
        let last_panes = self
            .members
            .each_mut()
            .map(|b| b.rows(messages, &self.dues));
        Census {
            step: self.step,
            samples: self.samples,
            end,
            last: self.counts,
            not_arrived: self.not_arrived_samples,
            last_not_arrived: self.not_arrived,
            progress: self.progress_samples,
            last_progress: self.progress,
            panes: self.pane_samples,
            last_panes,
            marks: self.marks,
        }
    }
}

/// Keeps every `ratio`-th sample, the first included.
fn thin<T: Copy>(samples: &mut Vec<T>, ratio: usize) {
    *samples = samples.iter().step_by(ratio).copied().collect();
}

impl CensusTaker {
    /// Message `m` moves from state `from` (arrived: `was`) to `to`
    /// (arrived: `now`).
    #[inline]
    pub(super) fn moved(&mut self, m: MessageIndex, from: State, was: bool, to: State, now: bool) {
        self.counts[from as usize] -= 1;
        self.counts[to as usize] += 1;
        match (was, now) {
            (false, true) => self.not_arrived -= 1,
            (true, false) => self.not_arrived += 1,
            _ => {}
        }
        let in_source =
            |s: State, arrived: bool| s == State::Ready || (s == State::Waiting && arrived);
        self.members[SOURCE_PANE].set(m, in_source(to, now), in_source(from, was));
        self.members[QUARANTINE_PANE].set(m, to == State::Quarantined, from == State::Quarantined);
        if from == State::Waiting && to != State::Waiting && !self.dues.is_empty() {
            self.dues.remove(&m);
        }
    }

    /// A retry of `m` is scheduled at `due`, `m` having been received
    /// `total_receives` times.
    pub(super) fn retry_due(&mut self, m: MessageIndex, due: Millis, total_receives: u32) {
        self.dues.insert(m, (due, total_receives));
    }
}

/// The messages in one pane, a bit each, with how many there are and the
/// lowest index that may be in it: reading its first rows skips the
/// messages below at once and stops at the last member.
#[derive(Clone)]
struct PaneBits {
    words: Vec<u64>,
    count: u64,
    low: usize,
}

impl PaneBits {
    fn new(messages: u64) -> Self {
        PaneBits {
            words: vec![0; (messages as usize).div_ceil(64)],
            count: 0,
            low: usize::MAX,
        }
    }

    /// `m` is in the pane (`now`) or not, having been (`was`) or not.
    #[inline]
    fn set(&mut self, m: MessageIndex, now: bool, was: bool) {
        if now == was {
            return;
        }
        let (w, bit) = (m as usize / 64, 1u64 << (m % 64));
        if now {
            self.words[w] |= bit;
            self.count += 1;
            self.low = self.low.min(w);
        } else {
            self.words[w] &= !bit;
            self.count -= 1;
        }
    }

    /// The first [`PANE_SAMPLE_ROWS`] members, as `messages` holds them.
    /// The lowest member's word becomes the next reading's start.
    fn rows(
        &mut self,
        messages: &Messages,
        dues: &FxHashMap<MessageIndex, (Millis, u32)>,
    ) -> Vec<PaneRow> {
        let mut rows = Vec::new();
        let want = (self.count as usize).min(PANE_SAMPLE_ROWS);
        if want == 0 {
            self.low = usize::MAX;
            return rows;
        }
        let first = (self.words.iter().skip(self.low)).position(|&w| w != 0);
        self.low += first.unwrap_or(0);
        for (w, &word) in self.words.iter().enumerate().skip(self.low) {
            let mut bits = word;
            while bits != 0 {
                let m = (w * 64) as MessageIndex + bits.trailing_zeros();
                bits &= bits - 1;
                let s = messages.get(m);
                let due = (dues.get(&m))
                    .filter(|&&(_, receives)| {
                        s.state == State::Waiting && receives == s.total_receives
                    })
                    .map(|&(due, _)| due);
                rows.push(PaneRow {
                    message: m,
                    state: s.state,
                    total_receives: s.total_receives,
                    reason: s.last_reason(),
                    quarantined_at: s.last_quarantined_at(),
                    due,
                    last_class: s.last_class(),
                    quarantine_entries: s.quarantine_entries,
                });
                if rows.len() == want {
                    return rows;
                }
            }
        }
        rows
    }
}
