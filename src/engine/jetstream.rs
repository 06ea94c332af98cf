//! Step 5 under the nats-jetstream profile (docs/model.md section 21): a
//! failed delivery is nakked (redelivered at its end plus the nak delay)
//! or left unacknowledged (redelivered when its ack wait ends, which the
//! delivery's timer (`delivery.rs`, `visible`) brings about); a permanent failure
//! routed to quarantine is a `term`; and a message that used its last
//! delivery (MaxDeliver) is given up only at the instant its next delivery
//! would have been due, where the server publishes its max-deliveries
//! advisory. There is no dead-letter queue: quarantine stands for "left in
//! the stream with an advisory".

use super::Core;
use super::backoff::retry_delay;
use super::consumer::Consumer;
use super::schedule::Finish;
use super::transition::Detail;
use crate::model::{
    Class, MessageIndex, Millis, OnFailure, Permanent, ReasonIndex, Scenario, State,
};

/// What follows a superseded delivery's ack, nak or term
/// ([`Consumer::superseded_jetstream`]).
pub(super) enum Superseded {
    /// An ack: the delivery ends as if it were current.
    Ends,
    /// A term, or a nak of a message that used its last delivery with no
    /// delay: it is given up (quarantine stands for that here).
    GivenUp(ReasonIndex, Class),
    /// Nothing more (a nak's redelivery is scheduled).
    Done,
}

impl Consumer {
    /// The delivery of `m` that started at `start` ended now with
    /// `finish` (a failure or a lost ack; its reason already set). Some
    /// reason and class: the message is given up now (quarantined).
    pub(super) fn after_jetstream_failure(
        &mut self,
        core: &mut Core,
        m: MessageIndex,
        finish: Finish,
        start: Millis,
    ) -> Option<(ReasonIndex, Class)> {
        let (reason, class) = match finish {
            Finish::Failed(reason, class) => (reason, class),
            Finish::AckLost => (crate::model::REASON_ACK_LOST, Class::Transient),
            Finish::Acked => return None,
        };
        if routed(core.scenario, class) {
            // `term`: the server stops delivering it at once.
            return Some((reason, class));
        }
        let now = core.clock.now;
        let exhausted = !core.retries(m, class);
        let nak = matches!(finish, Finish::Failed(..))
            && (core.scenario.guarantees.jetstream.as_ref()).map(|js| js.on_failure)
                == Some(OnFailure::Nak);
        if nak {
            let n = core.messages.cycle_receives(m);
            let previous = self.prev_delays.get_mut(m as usize);
            let delay = retry_delay(core.scenario.delivery.retry, n, previous, &mut core.rng);
            let due = now.saturating_add(delay);
            if exhausted && delay == 0 {
                return Some((reason, class));
            }
            if !exhausted {
                core.retry_scheduled(m, delay, due);
            }
            // A timer, not the queue: an ack of an earlier delivery may
            // still come first (`superseded_jetstream`).
            core.set_state(m, State::Waiting);
            self.receipts.nak_timer(core, m, start, due, finish);
            return None;
        }
        // Unacknowledged: the delivery's timer, due at start + its ack
        // wait, redelivers the message or gives it up (`visible`). A
        // delivery that outlived its wait left the message visible already.
        let n = core.messages.cycle_receives(m);
        let wait = core.scenario.ack_wait(n).unwrap_or(Millis::MAX);
        let due = start.saturating_add(wait);
        if due >= now {
            core.set_state(m, State::Waiting);
        }
        if !exhausted {
            core.retry_scheduled(m, due.max(now) - now, due.max(now));
        }
        None
    }

    /// A superseded delivery of `m` (started at `start`) ended now with an
    /// ack, a nak or a term, which the server applies to the message
    /// whatever delivery is current: an ack acks it, a term ends it, a nak
    /// redelivers it after the nak's delay (while the current delivery
    /// may still run) or gives it up.
    pub(super) fn superseded_jetstream(
        &mut self,
        core: &mut Core,
        m: MessageIndex,
        finish: Finish,
        start: Millis,
    ) -> Superseded {
        let state = core.messages.state(m);
        let leaves = match finish {
            Finish::Failed(_, class) if !routed(core.scenario, class) => !core.retries(m, class),
            _ => true,
        };
        if state == State::Ready && leaves {
            self.ready.withdraw(m);
        }
        let Finish::Failed(reason, class) = finish else {
            return Superseded::Ends;
        };
        core.clock.last_delivery = Some(core.clock.now);
        core.messages.set_failure(m, reason, class);
        core.record(Some(m), Detail::Failed { reason, class });
        if routed(core.scenario, class) {
            return Superseded::GivenUp(reason, class);
        }
        let now = core.clock.now;
        let n = core.messages.cycle_receives(m);
        let previous = self.prev_delays.get_mut(m as usize);
        let delay = retry_delay(core.scenario.delivery.retry, n, previous, &mut core.rng);
        let due = now.saturating_add(delay);
        if leaves && delay == 0 {
            return Superseded::GivenUp(reason, class);
        } else if state != State::Ready || leaves {
            if !leaves {
                core.retry_scheduled(m, delay, due);
            }
            self.receipts.nak_timer(core, m, start, due, finish);
        }
        core.state_changed(m);
        Superseded::Done
    }
}

/// Whether the end of a superseded delivery of `m` with `finish`
/// reaches a JetStream server: an ack, a nak or a term of a message
/// still pending there (not one left unacknowledged).
pub(super) fn reaches_server(core: &Core, m: MessageIndex, finish: Finish) -> bool {
    let Some(js) = &core.scenario.guarantees.jetstream else {
        return false;
    };
    let pending = matches!(
        core.messages.state(m),
        State::InFlight | State::Waiting | State::Ready
    );
    pending
        && match finish {
            Finish::Acked => true,
            Finish::AckLost => false,
            Finish::Failed(_, class) => {
                js.on_failure == OnFailure::Nak || routed(core.scenario, class)
            }
        }
}

/// A permanent failure routed to quarantine: a `term`.
fn routed(scenario: &Scenario, class: Class) -> bool {
    class == Class::Permanent && scenario.delivery.permanent == Permanent::Quarantine
}
