//! The census: how many messages are in each state over modeled time, at
//! any scale, in one pass and O(1) per state change.

use crate::model::{Millis, STATE_COUNT, State};

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

    /// Time is about to reach `t`, the run having done `progress` so far:
    /// every sample and mark before it is final.
    pub(super) fn advance(&mut self, t: Millis, progress: Progress) {
        self.progress = progress;
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
            if self.samples.len() == CENSUS_SAMPLES {
                let step = census_step_after(self.step);
                let ratio = (step / self.step) as usize;
                thin(&mut self.samples, ratio);
                thin(&mut self.not_arrived_samples, ratio);
                thin(&mut self.progress_samples, ratio);
                self.step = step;
            }
            self.next = (self.samples.len() as Millis).saturating_mul(self.step);
        }
    }

    pub(super) fn finish(mut self, end: Millis, progress: Progress) -> Census {
        self.advance(end.saturating_add(1), progress);
        Census {
            step: self.step,
            samples: self.samples,
            end,
            last: self.counts,
            not_arrived: self.not_arrived_samples,
            last_not_arrived: self.not_arrived,
            progress: self.progress_samples,
            last_progress: self.progress,
            marks: self.marks,
        }
    }
}

/// Keeps every `ratio`-th sample, the first included.
fn thin<T: Copy>(samples: &mut Vec<T>, ratio: usize) {
    *samples = samples.iter().step_by(ratio).copied().collect();
}

impl CensusTaker {
    /// A message moves from one state to another.
    #[inline]
    pub(super) fn moved(&mut self, from: State, to: State) {
        self.counts[from as usize] -= 1;
        self.counts[to as usize] += 1;
    }

    /// A state change took a message from not arrived to arrived
    /// (`was` false, `now` true), or back.
    #[inline]
    pub(super) fn arrival_changed(&mut self, was: bool, now: bool) {
        match (was, now) {
            (false, true) => self.not_arrived -= 1,
            (true, false) => self.not_arrived += 1,
            _ => {}
        }
    }
}
