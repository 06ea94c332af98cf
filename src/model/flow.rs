//! The flow of messages through a consumer (docs/model.md sections 11-13):
//! workers and their service time, the ordering of deliveries within a
//! group, a downstream with limited capacity, and what a run does at a
//! limit. A scenario without these tables has unlimited workers, zero
//! service, no ordering and unlimited capacity: sections 1-10 unchanged.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{MessageIndex, Millis, Scenario};

#[derive(Debug, Clone, Default)]
pub struct Flow {
    /// `[workers]`; `None`: unlimited workers, zero service time.
    pub workers: Option<Workers>,
    pub ordering: Ordering,
    /// `[downstream]`; `None`: unlimited capacity.
    pub downstream: Option<Downstream>,
    /// Length of the windows calls are counted in (`[downstream] per`,
    /// default 1s), also without a limit (decision 16.5).
    pub call_window: Millis,
    pub on_limit: OnLimit,
    pub groups: Groups,
    /// Whether the file uses any of sections 11-13, so that the flow
    /// measures (latency, calls, workers) are listed in its outputs. A file
    /// written for sections 1-10 keeps its outputs byte for byte.
    pub extended: bool,
    /// The measures a sweep's table shows (`[sweep] columns`), set on
    /// each point: a run computes them even when the file does not list
    /// the flow measures.
    pub columns: Vec<super::Total>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workers {
    pub count: u64,
    pub service_time: Millis,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ordering {
    /// Every ready message is eligible.
    #[default]
    None,
    /// The whole queue is one group.
    Fifo,
    /// Each message's group is its `group` (default its intent).
    PerKey,
}

impl Ordering {
    pub fn as_str(self) -> &'static str {
        match self {
            Ordering::None => "none",
            Ordering::Fifo => "fifo",
            Ordering::PerKey => "per_key",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Downstream {
    /// Calls accepted per window, at least 1.
    pub limit: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnLimit {
    /// A run that hits a limit is an error.
    #[default]
    Fail,
    /// The run ends at the limit and is judged.
    Stop,
}

/// Why a run ended: what the `stopped_by` measure says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum StoppedBy {
    /// Nothing was left to do.
    #[default]
    Drained,
    MaxTime,
    MaxEvents,
}

impl StoppedBy {
    pub const ALL: [StoppedBy; 3] = [StoppedBy::Drained, StoppedBy::MaxTime, StoppedBy::MaxEvents];

    pub fn as_str(self) -> &'static str {
        match self {
            StoppedBy::Drained => "drained",
            StoppedBy::MaxTime => "max_time",
            StoppedBy::MaxEvents => "max_events",
        }
    }
}

/// Ordering groups, numbered without a string per message. A group is a
/// name (docs/model.md section 12): an explicit message's `group`, else its
/// key; a generated message's `<prefix>g<n>` when its block sets `groups`,
/// else its own id. Equal names are one group, and nothing else is: a
/// message's id never decides its group unless the id is the group's name.
///
/// Group numbers below the intent count are intents, named as the intent
/// (an explicit key, or a generated id); above them come the groups of
/// `[[traffic]]` blocks that set `groups`, then names only explicit
/// messages use. A name that is also an intent's name is that intent's
/// number, so equal names always have one number.
#[derive(Debug, Clone, Default)]
pub struct Groups {
    /// Group of each explicit message.
    pub of_explicit: Vec<u64>,
    /// Per `[[traffic]]` block: the first of its `groups` numbers.
    pub block_base: Vec<u64>,
    /// A block group whose name is an explicit intent's: (block, n) -> group.
    pub aliases: BTreeMap<(usize, u64), u64>,
    /// Block groups whose names may be another block's generated ids (a
    /// block `o-` with `groups` beside a block `o-g`), by the block that
    /// sets `groups` and the digits `D` of the other's prefix `<P>g<D>`:
    /// checked by arithmetic, so a million such names store nothing each.
    pub overlaps: BTreeMap<(usize, String), Overlap>,
    /// Names of the groups only explicit messages name, from `named_base`.
    pub named: Vec<String>,
    pub named_base: u64,
    /// How many group numbers there are.
    pub count: u64,
}

/// A block's group names `<P>g<n>` that are the ids `<Q><k>` of the
/// generated block starting at `first_index`, where `Q` is `<P>g<D>`:
/// group n is message k when n's decimal digits are `D` then k's.
#[derive(Debug, Clone)]
pub struct Overlap {
    pub first_index: MessageIndex,
    pub count: u64,
}

impl Scenario {
    /// Whether a run gathers every latency for the percentiles: the file
    /// lists the flow measures, or expects, asks or sweeps a percentile. (Other
    /// runs report none, and a run of millions of messages saves the work.)
    pub fn wants_latency(&self) -> bool {
        use super::Total;
        self.flow.extended
            || self.names_total(|t| {
                matches!(
                    t,
                    Total::LatencyP50 | Total::LatencyP95 | Total::LatencyP99 | Total::LatencyMax
                )
            })
    }

    /// Whether a run counts the downstream's calls window by window (the
    /// series, the busiest window): the file lists the flow measures, has
    /// a downstream (its limit is per window, so throttling needs the
    /// windows whatever else the file says), or expects, asks or sweeps a
    /// measure of the calls. Other runs count the calls only, and a run
    /// of millions of deliveries saves the work.
    pub fn wants_call_windows(&self) -> bool {
        self.flow.extended
            || self.flow.downstream.is_some()
            || self.names_total(|t| t.story() == super::Story::Calls)
    }

    /// Whether an expectation, a question or a sweep's column names a
    /// measure that `which` picks.
    fn names_total(&self, which: impl Fn(super::Total) -> bool) -> bool {
        use super::Target;
        let picked = |target: &Target| matches!(*target, Target::Total(t) if which(t));
        self.expectations.iter().any(|e| picked(&e.target))
            || self.questions.iter().any(|q| picked(&q.answer))
            || self.flow.columns.iter().any(|&t| which(t))
    }

    /// The ordering group of message `m` (its per-key group, whatever the
    /// ordering; under `fifo` every message is in the one queue).
    pub fn group(&self, m: MessageIndex) -> u64 {
        match self.generated(m) {
            None => self.flow.groups.of_explicit[m as usize],
            Some((g, j)) => match g.groups {
                None => self.intent(m) as u64,
                Some(groups) => {
                    let block = g.stream as usize - 1;
                    let n = (j - 1) % groups + 1;
                    match self.flow.groups.aliases.get(&(block, n)) {
                        Some(&alias) => alias,
                        None => match self.overlapping_id(block, n) {
                            Some(other) => self.intent(other) as u64,
                            None => self.flow.groups.block_base[block] + n - 1,
                        },
                    }
                }
            },
        }
    }

    /// The generated message whose id is block `block`'s group name n.
    fn overlapping_id(&self, block: usize, n: u64) -> Option<MessageIndex> {
        let overlaps = &self.flow.groups.overlaps;
        if overlaps.is_empty() {
            return None;
        }
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(n);
        // D is a proper prefix of n's digits: at most 20 lookups.
        (0..digits.len()).find_map(|cut| {
            let o = overlaps.get(&(block, digits[..cut].to_string()))?;
            let k = super::generated_number(&digits[cut..], "", o.count)?;
            Some(o.first_index + (k - 1) as MessageIndex)
        })
    }

    /// A group's name.
    pub fn group_name(&self, group: u64) -> Cow<'_, str> {
        let groups = &self.flow.groups;
        if group < self.intent_count() as u64 {
            return self.intent_name(group as u32);
        }
        if group >= groups.named_base {
            return Cow::Borrowed(&groups.named[(group - groups.named_base) as usize]);
        }
        for (block, g) in self.traffic.iter().enumerate().rev() {
            let base = groups.block_base[block];
            if g.groups.is_some() && group >= base {
                return Cow::Owned(format!("{}g{}", g.id_prefix, group - base + 1));
            }
        }
        Cow::Borrowed("")
    }
}
