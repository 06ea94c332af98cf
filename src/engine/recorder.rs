//! What a run keeps besides its totals and final states: the transitions,
//! the effect ledger and each message's state after every change. A big
//! run keeps only what something will read.

use std::collections::BTreeSet;

use super::messages::Messages;
use super::state::MessageState;
use super::transition::{Detail, Effect, Transition};
use super::watch::Watches;
use crate::model::{EventKind, MessageIndex, Millis};

/// The most transitions (and effects, and state changes) a run keeps: a
/// run that would record more (a crash loop of a few messages under a huge
/// event limit) keeps the first ones and counts the rest, so that no file
/// can make the transcript exhaust memory: with the state changes and
/// effects, each capped alike, at most about 170 MB (tests/resources.rs).
pub const TRANSITIONS_KEPT: usize = 1_000_000;

/// Runs with at most this many messages keep every transition wherever a
/// transcript is shown (failure explanations, golden transcripts).
pub const FULL_TRANSCRIPT_MESSAGES: u64 = 10_000;

/// Runs with at most this many messages also keep each message's state
/// after every change (the HTML report's swimlanes and scrubber read it);
/// larger runs are shown in aggregate, so this costs nothing at scale.
pub const HISTORY_MESSAGES: u64 = 200;

/// Which transitions to keep. Totals and per-message state are always kept;
/// the transcript only when something will read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorder {
    Off,
    /// Every transition, the effect ledger and every state change.
    All,
    /// Operator transitions and those of these messages.
    Only(BTreeSet<MessageIndex>),
    /// Every transition counted and none kept (the effect ledger is
    /// kept): a writer reads them by playing the run again
    /// ([`super::Replay`]), so a transcript written out costs no memory
    /// however long it is.
    Replayed,
}

impl Recorder {
    #[inline]
    fn wants(&self, m: Option<MessageIndex>) -> bool {
        match self {
            Recorder::Off => false,
            Recorder::All | Recorder::Replayed => true,
            Recorder::Only(set) => m.is_none_or(|m| set.contains(&m)),
        }
    }
}

/// A message's state right after it changed: the engine emits one per
/// message an event touched, so the state over time is computed once, by
/// the engine, and a reader never replays transitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateChange {
    pub time: Millis,
    /// How many transitions were recorded before it: the playback step at
    /// which the message's row becomes this state.
    pub step: u32,
    pub message: MessageIndex,
    pub state: MessageState,
}

/// What has been recorded so far.
#[derive(Clone)]
pub(super) struct Recording {
    pub(super) recorder: Recorder,
    /// Whether state changes are kept: everything is recorded and the run
    /// has at most [`HISTORY_MESSAGES`] messages.
    history: bool,
    /// Whether the effect ledger is kept ([`Recorder::All`] and
    /// [`Recorder::Replayed`]).
    keeps_ledger: bool,
    pub(super) transitions: Vec<Transition>,
    pub(super) ledger: Vec<Effect>,
    pub(super) state_changes: Vec<StateChange>,
    /// Transitions wanted so far, up to [`TRANSITIONS_KEPT`] (kept unless
    /// replayed; a [`super::Replay`] empties `transitions` as it reads).
    wanted: usize,
    /// Transitions past [`TRANSITIONS_KEPT`], counted and not kept.
    pub(super) dropped: u64,
    /// Whether the state changes are complete (none were dropped).
    pub(super) history_complete: bool,
    pub(super) watches: Watches,
    /// Nothing reads transitions: recording off and no event expectation.
    quiet: bool,
    /// Transitions recorded between two events' instants, at times of
    /// their own (a log's checkpoints), may be out of time order with the
    /// alarms' and the writes' of the same gap: [`Recording::order_gap`]
    /// puts them in order.
    pub(super) gap_out_of_order: bool,
}

impl Recording {
    /// What a copy of the run taken for a question needs: the watches as
    /// they stand, nothing else recorded (the answer is read from the
    /// totals and states).
    pub(super) fn for_answers(&self, messages: u64) -> Self {
        Recording::new(Recorder::Off, messages, self.watches.clone())
    }

    pub(super) fn new(recorder: Recorder, messages: u64, watches: Watches) -> Self {
        Recording {
            quiet: recorder == Recorder::Off && watches.is_empty(),
            dropped: 0,
            history_complete: true,
            watches,
            history: recorder == Recorder::All && messages <= HISTORY_MESSAGES,
            keeps_ledger: matches!(recorder, Recorder::All | Recorder::Replayed),
            recorder,
            gap_out_of_order: false,
            wanted: 0,
            transitions: Vec::new(),
            ledger: Vec::new(),
            state_changes: Vec::new(),
        }
    }

    /// Records a transition, unless nothing reads transitions; the
    /// message's state right after it is kept with the history so that
    /// playback can show each message's row transition by transition.
    #[inline]
    pub(super) fn transition(
        &mut self,
        time: Millis,
        message: Option<MessageIndex>,
        detail: Detail,
        messages: &Messages,
    ) {
        if !self.quiet {
            self.keep(time, message, detail, messages);
        }
    }

    #[inline(never)]
    fn keep(
        &mut self,
        time: Millis,
        message: Option<MessageIndex>,
        detail: Detail,
        messages: &Messages,
    ) {
        if !self.watches.is_empty() {
            self.watches.saw(&detail, message, time);
        }
        if self.recorder.wants(message) {
            if self.wanted < TRANSITIONS_KEPT {
                self.wanted += 1;
                if self.recorder != Recorder::Replayed {
                    self.transitions.push(Transition {
                        time,
                        message,
                        detail,
                    });
                }
            } else {
                self.dropped += 1;
            }
        }
        if let Some(m) = message {
            self.state_change(time, m, messages);
        }
    }

    /// Plays the run again for a [`super::Replay`]: transitions alone (no
    /// history, no ledger: the replayed run kept its ledger).
    pub(super) fn for_replay(&mut self) {
        self.history = false;
        self.keeps_ledger = false;
    }

    /// Whether [`TRANSITIONS_KEPT`] transitions have been wanted: any
    /// more are only counted.
    pub(super) fn full(&self) -> bool {
        self.wanted >= TRANSITIONS_KEPT
    }

    /// Whether a transition without a message is recorded one at a time:
    /// the transcript wants it and still has room.
    pub(super) fn keeps_one_by_one(&self) -> bool {
        !self.quiet && self.recorder.wants(None) && !self.full()
    }

    /// Transitions of `kind` without a message at `k x interval` for every
    /// `k` from `first` to `last`, not kept (past the transcript's room, or
    /// nothing keeps them): counted as dropped where the transcript wanted
    /// them, and told to the watches in one step, however many they are.
    pub(super) fn passed_unkept(
        &mut self,
        kind: EventKind,
        first: u64,
        last: u64,
        interval: Millis,
    ) {
        if self.quiet || first > last {
            return;
        }
        if self.recorder.wants(None) {
            self.dropped += last - first + 1;
        }
        self.watches.saw_every(kind, first, last, interval);
    }

    /// The transitions from `transitions` and state changes from `changes`
    /// on were recorded between two events' instants: sorted by time
    /// (stable), each state change's playback step following its
    /// transition. Only when [`Recording::gap_out_of_order`] says some were
    /// recorded out of order.
    pub(super) fn order_gap(&mut self, transitions: usize, changes: usize) {
        if !std::mem::take(&mut self.gap_out_of_order) {
            return;
        }
        let from = transitions.min(self.transitions.len());
        // Every transition wanted in the gap is kept (none past the cap).
        let (wanted, dropped) = (self.wanted, self.dropped);
        let gap = &mut self.transitions[from..];
        if gap.is_sorted_by_key(|t| t.time) || wanted < gap.len() || dropped > 0 {
            return;
        }
        // Where each transition of the gap goes: state changes recorded
        // after the k-th of them show after its new place.
        let mut order: Vec<usize> = (0..gap.len()).collect();
        order.sort_by_key(|&i| gap[i].time);
        let mut new_place = vec![0; gap.len()];
        for (place, &i) in order.iter().enumerate() {
            new_place[i] = place;
        }
        let sorted: Vec<Transition> = order.iter().map(|&i| gap[i]).collect();
        gap.copy_from_slice(&sorted);
        // A state change shows after the transition recorded last before it
        // (`base + k`: the k-th of the gap, its own): after that
        // transition's new place. The changes then follow their steps.
        let base = (wanted - gap.len()) as u32;
        let from = changes.min(self.state_changes.len());
        let moved = &mut self.state_changes[from..];
        for change in moved.iter_mut() {
            if change.step > base {
                let k = ((change.step - base) as usize).min(gap.len());
                change.step = base + new_place[k - 1] as u32 + 1;
            }
        }
        moved.sort_by_key(|c| c.step);
    }

    /// Whether nothing is kept or watched: no transition, effect or
    /// state change is read after the run.
    pub(super) fn quiet(&self) -> bool {
        self.quiet
    }

    #[inline]
    pub(super) fn effect(&mut self, effect: Effect) {
        if self.keeps_ledger && self.ledger.len() < TRANSITIONS_KEPT {
            self.ledger.push(effect);
        }
    }

    #[inline(always)]
    pub(super) fn state_change(
        &mut self,
        time: Millis,
        message: MessageIndex,
        messages: &Messages,
    ) {
        if self.history {
            self.keep_state_change(time, message, messages);
        }
    }

    #[inline(never)]
    fn keep_state_change(&mut self, time: Millis, message: MessageIndex, messages: &Messages) {
        if self.state_changes.len() >= TRANSITIONS_KEPT {
            // An incomplete history would show wrong states: none at all.
            self.history = false;
            self.history_complete = false;
            self.state_changes = Vec::new();
        }
        if self.history {
            self.state_changes.push(StateChange {
                time,
                step: self.wanted as u32,
                message,
                state: messages.get(message),
            });
        }
    }
}
