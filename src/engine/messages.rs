//! Every message's state, stored in 8 bytes a message for the common
//! case. A run of ten million messages keeps ten million of these, so
//! their size is most of the run's memory.
//!
//! A message's full state is a [`MessageState`]; [`Messages`] stores it
//! as a compact [`Compact`] record while it fits one (first cycle, its own
//! key, at most one of an ack time and a quarantine time, each under 2^32
//! ms, receives and effects under 256, one of the first 127 failure
//! reasons, at most one deduplication hit). The first time it does not
//! (a redrive, a time past 49 days, a crash loop past 255 receives, a
//! second deduplication hit), the whole state moves to the side table, a
//! plain array of [`MessageState`]s, and stays there: the record then
//! holds only the state and its place in the side table. Readers get a
//! [`MessageState`] ([`Messages::get`]); the engine's per-delivery
//! operations change the record in place and go to the side table only
//! for the messages there. A message costs 8 bytes, and 56 more once it
//! is in the side table.

use bytemuck::{Pod, Zeroable};

use super::state::MessageState;
use crate::model::{Class, IntentIndex, KeyRef, MessageIndex, Millis, ReasonIndex, State};

/// A message's state in 8 bytes. All zeros is a message that has not
/// arrived, so the array is allocated zeroed (the system hands out zero
/// pages lazily) rather than written message by message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Zeroable, Pod)]
#[repr(C)]
struct Compact {
    /// The ack time or the quarantine time, as `bits`' time bits say;
    /// for a message in the side table, its place there.
    time: u32,
    /// Receives in the cycle (the first, so also in total).
    receives: u8,
    effects: u8,
    /// The last failure's reason plus one in [`REASON`] (0: none), and
    /// [`DEDUP_HIT`].
    reason: u8,
    /// `State as u8` in [`STATE`] (kept here even when the rest is in the
    /// side table), and the flags below.
    bits: u8,
}

/// The bits of `State as u8` (up to 16 states).
const STATE: u8 = 0b1111;
const _: () = assert!(State::ALL.len() <= 16);
/// The last failure was permanent.
const PERMANENT: u8 = 1 << 4;
/// The message's state is in the side table (all but the state), at the
/// place `time` holds.
const SIDE: u8 = 1 << 5;
/// What `time` holds: nothing, the ack time or the quarantine time.
const TIME: u8 = 0b11 << 6;
const TIME_ACKED: u8 = 1 << 6;
const TIME_QUARANTINED: u8 = 2 << 6;
/// In `reason`: the reason plus one (the first 127 reasons fit).
const REASON: u8 = 0x7f;
/// In `reason`: one deduplication hit (more need the side table).
const DEDUP_HIT: u8 = 1 << 7;

impl Compact {
    fn state(self) -> State {
        State::ALL[(self.bits & STATE) as usize]
    }

    fn set_state(&mut self, state: State) {
        self.bits = (self.bits & !STATE) | state as u8;
    }

    fn in_side_table(self) -> bool {
        self.bits & SIDE != 0
    }

    /// The state this record encodes (when it is not in the side table).
    fn decode(self) -> MessageState {
        let mut s = MessageState::new();
        s.state = self.state();
        s.cycle_receives = self.receives as u32;
        s.total_receives = self.receives as u32;
        s.effects = self.effects as u32;
        s.dedup_hits = (self.reason & DEDUP_HIT != 0) as u32;
        let reason = self.reason & REASON;
        if reason != 0 {
            let class = if self.bits & PERMANENT != 0 {
                Class::Permanent
            } else {
                Class::Transient
            };
            s.set_failure(reason as ReasonIndex - 1, class);
        }
        match self.bits & TIME {
            TIME_ACKED => s.set_acked_at(self.time as Millis),
            TIME_QUARANTINED => {
                s.set_quarantined_at(self.time as Millis);
                s.quarantine_entries = 1;
            }
            _ => {}
        }
        s
    }

    /// `s` as a record, if it fits one.
    fn encode(s: &MessageState) -> Option<Compact> {
        let small = |v: u32| u8::try_from(v).ok();
        let time = |t: Millis| u32::try_from(t).ok();
        let (time, time_flag) = match (s.acked_at(), s.last_quarantined_at()) {
            (None, None) if s.quarantine_entries == 0 => (0, 0),
            (Some(t), None) if s.quarantine_entries == 0 => (time(t)?, TIME_ACKED),
            (None, Some(t)) if s.quarantine_entries == 1 => (time(t)?, TIME_QUARANTINED),
            _ => return None,
        };
        if s.cycle != 1 || s.cycle_receives != s.total_receives || !s.has_own_key() {
            return None;
        }
        let dedup_hit = match s.dedup_hits {
            0 => 0,
            1 => DEDUP_HIT,
            _ => return None,
        };
        let permanent = s.last_class() == Class::Permanent;
        let reason = match s.last_reason() {
            // A class without a reason is never set; kept exact anyway.
            None if permanent => return None,
            None => 0,
            Some(r) => small(r.checked_add(1)?).filter(|&r| r <= REASON)?,
        };
        Some(Compact {
            time,
            receives: small(s.total_receives)?,
            effects: small(s.effects)?,
            reason: reason | dedup_hit,
            bits: s.state as u8 | if permanent { PERMANENT } else { 0 } | time_flag,
        })
    }
}

/// Every message's state: a compact record each, and the side table.
/// Two are equal when every message's state is.
#[derive(Debug, Clone, Default)]
pub struct Messages {
    hot: Vec<Compact>,
    /// The full state of each message whose state once did not fit its
    /// record, in the order they moved here (their `state` field is not
    /// used: the record's is).
    side: Vec<MessageState>,
}

impl PartialEq for Messages {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Messages {}

impl Messages {
    /// `count` messages that have not arrived yet.
    pub fn new(count: usize) -> Self {
        Messages {
            hot: super::pages::zeroed(count),
            side: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.hot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hot.is_empty()
    }

    /// Message `m`'s state.
    #[inline]
    pub fn get(&self, m: MessageIndex) -> MessageState {
        let hot = self.hot[m as usize];
        if hot.in_side_table() {
            let mut s = self.side[hot.time as usize];
            s.state = hot.state();
            s
        } else {
            hot.decode()
        }
    }

    /// Every message's state, in message order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            messages: self,
            next: 0..self.hot.len() as MessageIndex,
        }
    }

    /// How many messages' states are kept in the side table.
    pub fn in_side_table(&self) -> usize {
        self.side.len()
    }

    /// Whether message `m`'s state is in the side table: only such a
    /// message can have a key other than its own (a redrive gave it one).
    #[inline]
    pub fn has_side_state(&self, m: MessageIndex) -> bool {
        self.hot[m as usize].in_side_table()
    }

    /// Message `m`'s state in the side table (it must be there).
    fn side(&self, m: MessageIndex) -> &MessageState {
        &self.side[self.hot[m as usize].time as usize]
    }

    #[inline]
    pub fn state(&self, m: MessageIndex) -> State {
        self.hot[m as usize].state()
    }

    #[inline]
    pub(super) fn set_state(&mut self, m: MessageIndex, state: State) {
        self.hot[m as usize].set_state(state);
    }

    /// How many messages have arrived (what [`MessageState::has_arrived`]
    /// counts), without building each message's state.
    pub fn arrived(&self) -> u64 {
        (0..self.hot.len() as MessageIndex)
            .filter(|&m| self.has_arrived(m))
            .count() as u64
    }

    /// Whether message `m` has arrived ([`MessageState::has_arrived`]),
    /// without building its state.
    #[inline]
    pub fn has_arrived(&self, m: MessageIndex) -> bool {
        let hot = self.hot[m as usize];
        hot.state() != State::Waiting
            || if hot.in_side_table() {
                self.side[hot.time as usize].total_receives > 0
            } else {
                hot.receives > 0
            }
    }

    /// When `m` was acked, if it was.
    #[inline]
    pub fn acked_at(&self, m: MessageIndex) -> Option<Millis> {
        let hot = self.hot[m as usize];
        if hot.in_side_table() {
            self.side(m).acked_at()
        } else {
            (hot.bits & TIME == TIME_ACKED).then_some(hot.time as Millis)
        }
    }

    /// `m`'s current deduplication key, given its own intent.
    #[inline]
    pub fn key(&self, m: MessageIndex, own_intent: IntentIndex) -> KeyRef {
        if self.hot[m as usize].in_side_table() {
            self.side(m).key(own_intent)
        } else {
            KeyRef {
                intent: own_intent,
                generation: 0,
            }
        }
    }

    /// Receives in the message's current cycle.
    #[inline]
    pub fn cycle_receives(&self, m: MessageIndex) -> u32 {
        let hot = self.hot[m as usize];
        if hot.in_side_table() {
            self.side(m).cycle_receives
        } else {
            hot.receives as u32
        }
    }

    /// A delivery of `m` starts: both receive counts grow (saturating).
    /// Returns the cycle and the counts after it.
    #[inline]
    pub(super) fn receive(&mut self, m: MessageIndex) -> (u32, u32, u32) {
        let hot = &mut self.hot[m as usize];
        if !hot.in_side_table() && hot.receives < u8::MAX {
            hot.receives += 1;
            let n = hot.receives as u32;
            return (1, n, n);
        }
        self.receive_in_full(m)
    }

    /// [`Messages::receive`] of a message in the side table, or past 255
    /// receives: out of line, so that the common case stays small enough
    /// to inline into the delivery.
    #[cold]
    #[inline(never)]
    fn receive_in_full(&mut self, m: MessageIndex) -> (u32, u32, u32) {
        self.update(m, |s| {
            s.cycle_receives = s.cycle_receives.saturating_add(1);
            s.total_receives = s.total_receives.saturating_add(1);
            (s.cycle, s.cycle_receives, s.total_receives)
        })
    }

    /// The last failure's reason and class.
    #[inline]
    pub(super) fn set_failure(&mut self, m: MessageIndex, reason: ReasonIndex, class: Class) {
        let hot = &mut self.hot[m as usize];
        if !hot.in_side_table() && reason < REASON as ReasonIndex {
            hot.reason = (hot.reason & DEDUP_HIT) | (reason as u8 + 1);
            hot.bits = (hot.bits & !PERMANENT)
                | if class == Class::Permanent {
                    PERMANENT
                } else {
                    0
                };
            return;
        }
        self.set_failure_in_full(m, reason, class);
    }

    /// [`Messages::set_failure`] of a message in the side table, or with
    /// a reason past 126: out of line, as [`Messages::receive_in_full`].
    #[cold]
    #[inline(never)]
    fn set_failure_in_full(&mut self, m: MessageIndex, reason: ReasonIndex, class: Class) {
        self.update(m, |s| s.set_failure(reason, class));
    }

    /// `m` was acked at `t`.
    #[inline]
    pub(super) fn set_acked_at(&mut self, m: MessageIndex, t: Millis) {
        let hot = &mut self.hot[m as usize];
        let free = matches!(hot.bits & TIME, 0 | TIME_ACKED);
        if let (false, true, Ok(t)) = (hot.in_side_table(), free, u32::try_from(t)) {
            hot.time = t;
            hot.bits = (hot.bits & !TIME) | TIME_ACKED;
            return;
        }
        self.update(m, |s| s.set_acked_at(t));
    }

    /// An effect of `m` commits; returns its cycle.
    #[inline]
    pub(super) fn add_effect(&mut self, m: MessageIndex) -> u32 {
        let hot = &mut self.hot[m as usize];
        if !hot.in_side_table() && hot.effects < u8::MAX {
            hot.effects += 1;
            return 1;
        }
        self.update(m, |s| {
            s.effects = s.effects.saturating_add(1);
            s.cycle
        })
    }

    /// A delivery of `m` found its key's result (or DONE) in the store.
    pub(super) fn add_dedup_hit(&mut self, m: MessageIndex) {
        self.update(m, |s| s.dedup_hits = s.dedup_hits.saturating_add(1));
    }

    /// `m` arrives at `t` and its first delivery acks then with its
    /// effect: the record the states `Ready` and `Acked`,
    /// [`receive`](Self::receive), [`add_effect`](Self::add_effect) and
    /// [`set_acked_at`](Self::set_acked_at) would leave, written at once.
    /// Only when `m` has not arrived (its record all zeros: waiting,
    /// nothing counted) and `t` fits the record; otherwise nothing changes
    /// and the answer is false.
    #[inline]
    pub(super) fn ack_first_delivery(&mut self, m: MessageIndex, t: Millis) -> bool {
        let hot = &mut self.hot[m as usize];
        // One comparison of the 8 bytes, not one a field.
        let (0, Ok(time)) = (bytemuck::cast::<Compact, u64>(*hot), u32::try_from(t)) else {
            return false;
        };
        *hot = Compact {
            time,
            receives: 1,
            effects: 1,
            reason: 0,
            bits: State::Acked as u8 | TIME_ACKED,
        };
        true
    }

    /// `m` enters quarantine at `t`.
    pub(super) fn enter_quarantine(&mut self, m: MessageIndex, t: Millis) {
        let hot = &mut self.hot[m as usize];
        // The first entry of a message never acked: the record's time.
        if let (false, 0, Ok(t)) = (hot.in_side_table(), hot.bits & TIME, u32::try_from(t)) {
            hot.time = t;
            hot.bits |= TIME_QUARANTINED;
            return;
        }
        self.update(m, |s| {
            s.set_quarantined_at(t);
            s.quarantine_entries += 1;
        });
    }

    /// Changes `m`'s state through its full form: kept in the record
    /// while the result fits one, in the side table from the first time
    /// it does not.
    pub(super) fn update<R>(
        &mut self,
        m: MessageIndex,
        change: impl FnOnce(&mut MessageState) -> R,
    ) -> R {
        let mut s = self.get(m);
        let result = change(&mut s);
        let hot = &mut self.hot[m as usize];
        if hot.in_side_table() {
            self.side[hot.time as usize] = s;
            hot.set_state(s.state);
        } else if let Some(fits) = Compact::encode(&s) {
            *hot = fits;
        } else {
            // At most one place per message: fewer than 2^32.
            let place = self.side.len() as u32;
            self.side.push(s);
            *hot = Compact {
                time: place,
                bits: s.state as u8 | SIDE,
                ..Compact::default()
            };
        }
        result
    }
}

/// Every message's state, in message order.
pub struct Iter<'a> {
    messages: &'a Messages,
    next: std::ops::Range<MessageIndex>,
}

impl Iterator for Iter<'_> {
    type Item = MessageState;

    fn next(&mut self) -> Option<MessageState> {
        self.next.next().map(|m| self.messages.get(m))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.next.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Messages {
    type Item = MessageState;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests;
