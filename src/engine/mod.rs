//! The event engine: modeled time, one seeded RNG, the delivery rules of
//! model.md sections 3-6. It knows nothing of files or terminals; it turns a
//! [`Scenario`] into an [`Outcome`].

mod arrivals;
mod transition;

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use transition::{Detail, Effect, MessageState, NEVER, NO_REASON, Transition};

use crate::model::*;
use arrivals::Arrivals;

/// Runs with at most this many messages keep every transition wherever a
/// transcript is shown (failure explanations, golden transcripts).
pub const FULL_TRANSCRIPT_MESSAGES: u64 = 10_000;

/// Which transitions to keep. Totals and per-message state are always kept;
/// the transcript only when something will read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorder {
    Off,
    /// Every transition and the effect ledger.
    All,
    /// Operator transitions and those of these messages.
    Only(BTreeSet<MessageIndex>),
}

impl Recorder {
    #[inline]
    fn wants(&self, m: Option<MessageIndex>) -> bool {
        match self {
            Recorder::Off => false,
            Recorder::All => true,
            Recorder::Only(set) => m.is_none_or(|m| set.contains(&m)),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Totals {
    pub messages: u64,
    pub deliveries: u64,
    pub acked: u64,
    pub quarantined: u64,
    pub expired: u64,
    pub purged: u64,
    pub effects: u64,
    pub duplicated_effects: u64,
    pub dedup_hits: u64,
    pub quarantine_entries: u64,
    pub retry_delay_paid: Millis,
    pub max_dlq_depth: u64,
    pub final_dlq_depth: u64,
    pub drain_time: Millis,
    pub end_time: Millis,
}

impl Totals {
    pub fn get(&self, t: Total) -> Value {
        match t {
            Total::Deliveries => Value::Count(self.deliveries),
            Total::Acked => Value::Count(self.acked),
            Total::Quarantined => Value::Count(self.quarantined),
            Total::Expired => Value::Count(self.expired),
            Total::Purged => Value::Count(self.purged),
            Total::Effects => Value::Count(self.effects),
            Total::DuplicatedEffects => Value::Count(self.duplicated_effects),
            Total::DedupHits => Value::Count(self.dedup_hits),
            Total::QuarantineEntries => Value::Count(self.quarantine_entries),
            Total::RetryDelayPaid => Value::Time(self.retry_delay_paid),
            Total::MaxDlqDepth => Value::Count(self.max_dlq_depth),
            Total::FinalDlqDepth => Value::Count(self.final_dlq_depth),
            Total::DrainTime => Value::Time(self.drain_time),
            Total::EndTime => Value::Time(self.end_time),
        }
    }
}

/// A run stopped by one of the scenario's `[limits]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitReached {
    pub limit: Limit,
    /// Modeled time when the run stopped.
    pub at: Millis,
    pub deliveries: u64,
    pub pending: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Events(u64),
    Time(Millis),
}

impl std::fmt::Display for LimitReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.limit {
            Limit::Events(n) => write!(
                f,
                "the run stopped at the event limit ([limits] max_events = {n})"
            ),
            Limit::Time(t) => write!(
                f,
                "the run stopped at the modeled-time limit ([limits] max_time = \"{}\")",
                crate::duration::format(t)
            ),
        }
    }
}

/// The result of a run: what reports and expectations read.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub totals: Totals,
    pub messages: Vec<MessageState>,
    /// Kept according to the [`Recorder`].
    pub transitions: Vec<Transition>,
    /// The effect ledger; kept with [`Recorder::All`].
    pub ledger: Vec<Effect>,
    pub recorder: Recorder,
    /// Drain time of each cycle: the source cycle, then one per operator step
    /// that has run.
    pub drains: Vec<Millis>,
    /// The modeled time the snapshot describes (the end, or `--at`).
    pub as_of: Millis,
    /// Whether the run reached its end (false for a snapshot at a time).
    pub finished: bool,
    /// Taken by [`run_with_census`].
    pub census: Option<Census>,
}

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
}

pub const STATE_COUNT: usize = State::ALL.len();
pub const CENSUS_SAMPLES: usize = 600;

/// The census's steps: each a multiple of the one before, all readable.
const CENSUS_STEPS: [Millis; 19] = [
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
        if t >= self.end {
            return self.last;
        }
        let k = (t / self.step) as usize;
        self.samples.get(k).copied().unwrap_or(self.last)
    }
}

struct CensusTaker {
    step: Millis,
    next: Millis,
    counts: [u64; STATE_COUNT],
    samples: Vec<[u64; STATE_COUNT]>,
}

impl CensusTaker {
    fn new(messages: u64) -> Self {
        let mut counts = [0; STATE_COUNT];
        counts[State::Waiting as usize] = messages;
        CensusTaker {
            step: 1,
            next: 0,
            counts,
            samples: Vec::new(),
        }
    }

    /// Time is about to reach `t`: every sample before it is final.
    fn advance(&mut self, t: Millis) {
        while self.next < t {
            self.samples.push(self.counts);
            if self.samples.len() == CENSUS_SAMPLES {
                let step = census_step_after(self.step);
                let ratio = (step / self.step) as usize;
                let kept: Vec<_> = self.samples.iter().step_by(ratio).copied().collect();
                self.samples = kept;
                self.step = step;
            }
            self.next = (self.samples.len() as Millis).saturating_mul(self.step);
        }
    }

    fn finish(mut self, end: Millis) -> Census {
        self.advance(end.saturating_add(1));
        Census {
            step: self.step,
            samples: self.samples,
            end,
            last: self.counts,
        }
    }
}

impl Outcome {
    /// A message's current deduplication key.
    pub fn key(&self, s: &Scenario, m: MessageIndex) -> KeyRef {
        self.messages[m as usize].key(s.intent(m))
    }
}

/// Runs a scenario to its end.
pub fn run(s: &Scenario, recorder: Recorder) -> Result<Outcome, LimitReached> {
    let mut e = Engine::new(s, recorder);
    while e.step()? {}
    Ok(e.finish(None))
}

/// Runs a scenario to its end and also takes its [`Census`]: how many
/// messages are in each state over modeled time, at any scale.
pub fn run_with_census(s: &Scenario, recorder: Recorder) -> Result<Outcome, LimitReached> {
    let mut e = Engine::new(s, recorder);
    e.census = Some(CensusTaker::new(s.message_count()));
    while e.step()? {}
    Ok(e.finish(None))
}

/// Runs a scenario up to and including modeled time `t`.
pub fn run_until(s: &Scenario, recorder: Recorder, t: Millis) -> Result<Outcome, LimitReached> {
    let mut e = Engine::new(s, recorder);
    while e.next_time().is_some_and(|next| next <= t) {
        e.step()?;
    }
    let done = e.next_time().is_none();
    Ok(e.finish(if done { None } else { Some(t) }))
}

struct Engine<'s> {
    s: &'s Scenario,
    now: Millis,
    seq: u64,
    events: u64,
    states: Vec<MessageState>,
    /// Retries and redrives: (due, sequence, message); the sequence breaks ties.
    queue: BinaryHeap<Reverse<(Millis, u64, MessageIndex)>>,
    arrivals: Arrivals,
    rng: ChaCha8Rng,
    /// Result expiry per intent's own key (0: none, which never hits).
    dedup_own: Vec<Millis>,
    /// Result expiry of fresh keys given by redrive.
    dedup_fresh: HashMap<KeyRef, Millis>,
    effects_per_intent: Vec<u32>,
    /// Quarantined messages in order of entering.
    dlq: Vec<MessageIndex>,
    repaired: bool,
    next_step: usize,
    last_delivery: Option<Millis>,
    last_inspection: Option<Millis>,
    pending_inspection: Option<Millis>,
    totals: Totals,
    recorder: Recorder,
    transitions: Vec<Transition>,
    ledger: Vec<Effect>,
    drains: Vec<Millis>,
    census: Option<CensusTaker>,
}

impl<'s> Engine<'s> {
    fn new(s: &'s Scenario, recorder: Recorder) -> Self {
        let n = s.message_count() as usize;
        let states = vec![MessageState::new(); n];
        let dedup_own = if s.dedup_retention.is_some() {
            vec![0; s.intent_count()]
        } else {
            Vec::new()
        };
        Engine {
            s,
            now: 0,
            seq: 0,
            events: 0,
            states,
            queue: BinaryHeap::new(),
            arrivals: Arrivals::new(s),
            rng: ChaCha8Rng::seed_from_u64(s.seed),
            dedup_own,
            dedup_fresh: HashMap::new(),
            effects_per_intent: vec![0; s.intent_count()],
            dlq: Vec::new(),
            repaired: false,
            next_step: 0,
            last_delivery: None,
            last_inspection: None,
            pending_inspection: None,
            totals: Totals {
                messages: n as u64,
                ..Totals::default()
            },
            recorder,
            transitions: Vec::new(),
            ledger: Vec::new(),
            drains: Vec::new(),
            census: None,
        }
    }

    /// A message changes state: keeps the census's counts current.
    #[inline]
    fn set_state(&mut self, m: MessageIndex, to: State) {
        let st = &mut self.states[m as usize];
        if let Some(c) = &mut self.census {
            c.counts[st.state as usize] -= 1;
            c.counts[to as usize] += 1;
        }
        st.state = to;
    }

    /// Time of the next event, if any (settling a drain first).
    fn next_time(&mut self) -> Option<Millis> {
        let a = self.arrivals.peek().map(|(t, _)| t);
        let q = self.queue.peek().map(|Reverse((t, _, _))| *t);
        match (a, q) {
            (Some(a), Some(q)) => Some(a.min(q)),
            (Some(t), None) | (None, Some(t)) => Some(t),
            (None, None) => {
                self.settle_drain();
                self.pending_inspection
            }
        }
    }

    /// Nothing is pending: record the cycle's drain and plan the next step.
    fn settle_drain(&mut self) {
        if self.pending_inspection.is_some() || self.drains.len() > self.next_step {
            return;
        }
        let drained = match (self.last_delivery, self.last_inspection) {
            (Some(d), Some(i)) => d.max(i),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => 0,
        };
        self.drains.push(drained);
        if let Some(step) = self.s.operators.get(self.next_step) {
            self.pending_inspection = Some(drained.saturating_add(step.wait));
        }
    }

    /// Processes one event; false when the run has ended.
    fn step(&mut self) -> Result<bool, LimitReached> {
        let Some(t) = self.next_time() else {
            return Ok(false);
        };
        if t > self.s.limits.max_time {
            return Err(self.limit(Limit::Time(self.s.limits.max_time)));
        }
        self.events += 1;
        if self.events > self.s.limits.max_events {
            return Err(self.limit(Limit::Events(self.s.limits.max_events)));
        }
        if let Some(c) = &mut self.census {
            c.advance(t);
        }
        self.now = t;
        // Arrivals were all scheduled before the run: they win ties.
        if let Some((at, m)) = self.arrivals.peek()
            && at == t
        {
            self.arrivals.pop();
            self.set_state(m, State::Pending);
            self.deliver(m);
        } else if let Some(Reverse((_, _, m))) = self.queue.pop() {
            self.deliver(m);
        } else {
            self.pending_inspection = None;
            self.inspect();
        }
        Ok(true)
    }

    fn limit(&self, limit: Limit) -> LimitReached {
        LimitReached {
            limit,
            at: self.now,
            deliveries: self.totals.deliveries,
            pending: self.queue.len() as u64 + self.arrivals.remaining(),
        }
    }

    #[inline]
    fn record(&mut self, message: Option<MessageIndex>, detail: Detail) {
        if self.recorder.wants(message) {
            self.transitions.push(Transition {
                time: self.now,
                message,
                detail,
            });
        }
    }

    fn schedule(&mut self, at: Millis, m: MessageIndex) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, m)));
    }

    /// One delivery (model.md section 3).
    fn deliver(&mut self, m: MessageIndex) {
        let t = self.now;
        let s = self.s;
        self.totals.deliveries += 1;
        self.last_delivery = Some(t);
        let st = &mut self.states[m as usize];
        st.cycle_receives = st.cycle_receives.saturating_add(1);
        st.total_receives = st.total_receives.saturating_add(1);
        let (cycle, cycle_receives, total_receives) =
            (st.cycle, st.cycle_receives, st.total_receives);
        self.record(
            Some(m),
            Detail::Delivered {
                cycle,
                cycle_receives,
                total_receives,
            },
        );

        // 2. The handler: the message's own faults in file order, then outages.
        let faults = s.faults(m);
        let failure = faults
            .iter()
            .find(|f| f.kind == FaultKind::Fail && f.applies(total_receives as u64, self.repaired))
            .map(|f| (f.reason, f.class))
            .or_else(|| {
                s.outages
                    .iter()
                    .any(|o| o.contains(t))
                    .then_some((REASON_DOWNSTREAM_UNAVAILABLE, Class::Transient))
            });
        if let Some((reason, class)) = failure {
            self.record(Some(m), Detail::Failed { reason, class });
            self.after_failure(m, reason, class);
            return;
        }

        // 3. Commit, unless the deduplication store holds a live result.
        let key = self.states[m as usize].key(s.intent(m));
        match s.dedup_retention {
            Some(retention) => {
                let slot = if key.generation == 0 {
                    &mut self.dedup_own[key.intent as usize]
                } else {
                    self.dedup_fresh.entry(key).or_insert(0)
                };
                if t < *slot {
                    let expires_at = *slot;
                    let st = &mut self.states[m as usize];
                    st.dedup_hits = st.dedup_hits.saturating_add(1);
                    self.totals.dedup_hits += 1;
                    self.record(Some(m), Detail::DedupHit { key, expires_at });
                } else {
                    *slot = t.saturating_add(retention);
                    self.commit(m, key);
                }
            }
            None => self.commit(m, key),
        }

        // 4. Acknowledgement.
        let ack_lost = faults.iter().any(|f| {
            f.kind == FaultKind::LoseAck && f.applies(total_receives as u64, self.repaired)
        });
        if ack_lost {
            self.record(Some(m), Detail::AckLost);
            self.after_failure(m, REASON_ACK_LOST, Class::Transient);
        } else {
            self.set_state(m, State::Acked);
            self.totals.acked += 1;
            self.record(Some(m), Detail::Acked);
        }
    }

    fn commit(&mut self, m: MessageIndex, key: KeyRef) {
        let intent = self.s.intent(m);
        let st = &mut self.states[m as usize];
        st.effects = st.effects.saturating_add(1);
        let cycle = st.cycle;
        let count = &mut self.effects_per_intent[intent as usize];
        *count = count.saturating_add(1);
        if *count > 1 {
            self.totals.duplicated_effects += 1;
        }
        self.totals.effects += 1;
        if self.recorder == Recorder::All {
            self.ledger.push(Effect {
                time: self.now,
                message: m,
                key,
                intent,
                cycle,
            });
        }
        let effect = self.totals.effects;
        self.record(Some(m), Detail::Committed { key, effect });
    }

    /// Step 5: route permanent failures, retry within budget, or quarantine.
    fn after_failure(&mut self, m: MessageIndex, reason: ReasonIndex, class: Class) {
        let st = &mut self.states[m as usize];
        st.last_reason = reason;
        st.last_class = class;
        let cycle_receives = st.cycle_receives;
        if class == Class::Permanent && self.s.delivery.permanent == Permanent::Quarantine {
            self.quarantine(m);
        } else if cycle_receives < self.s.delivery.max_receives {
            let delay = self.retry_delay(m);
            let due = self.now.saturating_add(delay);
            self.totals.retry_delay_paid = self.totals.retry_delay_paid.saturating_add(delay);
            self.schedule(due, m);
            self.record(Some(m), Detail::RetryScheduled { delay, due });
        } else {
            self.quarantine(m);
        }
    }

    /// The wait after the n-th failed delivery of the cycle (section 4).
    fn retry_delay(&mut self, m: MessageIndex) -> Millis {
        let st = &mut self.states[m as usize];
        match self.s.delivery.retry {
            Retry::Fixed(d) => d,
            Retry::Backoff { base, cap, jitter } => {
                let cap = cap.unwrap_or(Millis::MAX);
                let n = st.cycle_receives.max(1);
                let doubled = 1u64
                    .checked_shl(n - 1)
                    .and_then(|f| base.checked_mul(f))
                    .unwrap_or(Millis::MAX);
                let d = doubled.min(cap);
                match jitter {
                    Jitter::None => d,
                    Jitter::Full => self.rng.random_range(0..=d),
                    Jitter::Equal => {
                        let half = d / 2;
                        half + self.rng.random_range(0..=half)
                    }
                    Jitter::Decorrelated => {
                        let previous = if st.cycle_receives <= 1 {
                            base
                        } else {
                            st.prev_delay
                        };
                        let high = previous.saturating_mul(3).max(base);
                        let delay = self.rng.random_range(base..=high).min(cap);
                        st.prev_delay = delay;
                        delay
                    }
                }
            }
        }
    }

    fn quarantine(&mut self, m: MessageIndex) {
        self.set_state(m, State::Quarantined);
        let st = &mut self.states[m as usize];
        st.quarantined_at = self.now;
        st.quarantine_entries += 1;
        let (reason, class) = (st.last_reason, st.last_class);
        self.dlq.push(m);
        self.totals.quarantine_entries += 1;
        let depth = self.dlq.len() as u64;
        self.totals.max_dlq_depth = self.totals.max_dlq_depth.max(depth);
        self.record(
            Some(m),
            Detail::Quarantined {
                reason,
                class,
                depth,
            },
        );
    }

    /// An operator inspection (section 6).
    fn inspect(&mut self) {
        let step_index = self.next_step;
        self.next_step += 1;
        self.last_inspection = Some(self.now);
        let step = &self.s.operators[step_index];
        self.record(
            None,
            Detail::Inspected {
                step: step_index as u32 + 1,
                depth: self.dlq.len() as u64,
            },
        );

        // 1. Expiry, measured from entering quarantine.
        let dlq = std::mem::take(&mut self.dlq);
        let mut retained = Vec::with_capacity(dlq.len());
        for m in dlq {
            let age = self.now - self.states[m as usize].quarantined_at;
            if self.s.quarantine_retention.is_some_and(|r| age >= r) {
                self.set_state(m, State::Expired);
                self.totals.expired += 1;
                self.record(Some(m), Detail::Expired { age });
            } else {
                retained.push(m);
            }
        }

        // 2. Repair: until = "repair" faults stop applying from now on.
        if step.repair {
            self.repaired = true;
            self.record(None, Detail::Repaired);
        }

        // 3. The action.
        match &step.action {
            Action::Hold => self.dlq = retained,
            Action::Purge => {
                for m in retained {
                    self.set_state(m, State::Purged);
                    self.totals.purged += 1;
                    self.record(Some(m), Detail::Purged);
                }
            }
            Action::RedriveAll => {
                for m in retained {
                    self.redrive(m, step.identity);
                }
            }
            Action::Redrive(only) => {
                let chosen: BTreeSet<MessageIndex> = only.iter().copied().collect();
                let mut keep = Vec::new();
                let mut redriven = BTreeSet::new();
                for m in retained {
                    if chosen.contains(&m) {
                        redriven.insert(m);
                        self.redrive(m, step.identity);
                    } else {
                        keep.push(m);
                    }
                }
                self.dlq = keep;
                for &m in only {
                    if !redriven.contains(&m) {
                        let state = self.states[m as usize].state;
                        self.record(Some(m), Detail::RedriveSkipped { state });
                    }
                }
            }
        }
    }

    fn redrive(&mut self, m: MessageIndex, identity: Identity) {
        let s = self.s;
        self.set_state(m, State::Pending);
        let st = &mut self.states[m as usize];
        st.cycle += 1;
        st.cycle_receives = 0;
        if identity == Identity::New {
            let fresh = s.fresh_key(s.intent(m), st.cycle - 1);
            st.key_intent = fresh.intent;
            st.key_generation = fresh.generation;
        }
        let (cycle, key) = (st.cycle, st.key(s.intent(m)));
        self.record(Some(m), Detail::Redriven { cycle, key });
        self.schedule(self.now, m);
    }

    fn finish(mut self, as_of: Option<Millis>) -> Outcome {
        let finished = as_of.is_none();
        let end = match (self.last_delivery, self.last_inspection) {
            (Some(d), Some(i)) => d.max(i),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => 0,
        };
        self.totals.quarantined = self.dlq.len() as u64;
        self.totals.final_dlq_depth = self.dlq.len() as u64;
        self.totals.drain_time = self.drains.first().copied().unwrap_or(end);
        self.totals.end_time = end;
        let census = self.census.map(|c| c.finish(self.now.max(end)));
        Outcome {
            totals: self.totals,
            messages: self.states,
            transitions: self.transitions,
            ledger: self.ledger,
            recorder: self.recorder,
            drains: self.drains,
            as_of: as_of.unwrap_or(end),
            finished,
            census,
        }
    }
}

#[cfg(test)]
mod tests;
