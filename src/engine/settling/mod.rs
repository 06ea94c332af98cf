//! Settling a delivery at its start: the one predicate that decides
//! whether the run may skip the steps of a delivery, by asking every part
//! of the queue world.
//!
//! A delivery is normally stepped through: it becomes ready, starts,
//! decides, and ends, each a change every part can see. Where nothing can
//! see the steps in between, the run may settle a delivery when it starts
//! and reach the same outcome with less work (docs/benchmarks.md gives the
//! figures each way buys):
//! - [`Settling::at_once`]: a first delivery without faults that acks at
//!   once is one write of its message's record (`ack_at_once` in
//!   `delivery.rs`; for a log's record, `settle_record_at_once` in
//!   `step.rs`; `settling/at_once.rs` holds their tests);
//! - [`Settling::writes`]: a write delivery that acks once its sinks reply
//!   is settled at its start, only its end kept (`settle_write` in
//!   `delivery.rs`; the ends ahead in `settling/writes.rs`);
//! - [`Settling::runs_of_arrivals`]: the arrivals before anything else
//!   scheduled are taken one after another without a step each
//!   (`take_run_of_arrivals` in `step.rs`).
//!
//! Every part answers for itself through [`Part::allows`], and the run
//! settles only what every part allows. A part that does not answer
//! allows nothing, so the stepped path is what a new part gets until it
//! says otherwise; and the list of parts is read off the engine's fields
//! (`Engine::parts`, beside the struct), so that a new field does not compile until it is
//! asked.

mod at_once;
mod writes;

pub(super) use at_once::Settled;
pub(super) use writes::EndsAhead;

use super::{Consumer, Downstream, Measures, Observers, Operator, Quarantine, Source};
use crate::model::{DedupMode, Guarantee, Profile, Scenario};

/// What the run may settle at a delivery's start instead of stepping
/// through it. Settling changes how much work a run does, never its
/// outcome: the property tests run each file both ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Settling {
    /// A first delivery without faults that acks at once, written in one
    /// go (and a log's record settled at its append); a delivery of one
    /// during an outage fails without the full path's tests.
    pub(super) at_once: bool,
    /// A write delivery (`[write]`) that acks when its sinks reply,
    /// settled at its start, its end kept for what still reads it.
    pub(super) writes: bool,
    /// The arrivals that come before anything else scheduled, taken one
    /// after another (each settled, or the first that is not ending the
    /// run of them).
    pub(super) runs_of_arrivals: bool,
}

impl Settling {
    /// Nothing settled: every delivery stepped through.
    pub(super) const NOTHING: Settling = Settling {
        at_once: false,
        writes: false,
        runs_of_arrivals: false,
    };

    /// Everything a part may allow.
    const EVERYTHING: Settling = Settling {
        at_once: true,
        writes: true,
        runs_of_arrivals: true,
    };

    fn and(self, other: Settling) -> Settling {
        Settling {
            at_once: self.at_once && other.at_once,
            writes: self.writes && other.writes,
            runs_of_arrivals: self.runs_of_arrivals && other.runs_of_arrivals,
        }
    }

    /// What every one of `parts` allows. Runs of arrivals are taken only
    /// where their deliveries may be settled.
    pub(super) fn agreed(scenario: &Scenario, parts: &[&dyn Part]) -> Settling {
        let all = parts
            .iter()
            .fold(Settling::EVERYTHING, |s, p| s.and(p.allows(scenario)));
        Settling {
            runs_of_arrivals: all.runs_of_arrivals && (all.at_once || all.writes),
            ..all
        }
    }
}

/// A part of the queue world, asked what the run may settle without
/// stepping through it.
pub(super) trait Part {
    /// What this part allows the run to settle at a delivery's start: by
    /// default nothing, so a part that has not said keeps every delivery
    /// stepped through.
    fn allows(&self, _scenario: &Scenario) -> Settling {
        Settling::NOTHING
    }
}

/// How far the run goes: asked as a part is.
pub(super) struct RunMode {
    /// To its end ([`super::run`]); otherwise it may stop at a time or be
    /// copied part-way (`run_until`, the stepper, a census).
    pub(super) to_end: bool,
}

impl Part for RunMode {
    /// A settled write's end lies ahead of the instant it settled at: a
    /// run that may stop before it settles no write.
    fn allows(&self, _scenario: &Scenario) -> Settling {
        Settling {
            writes: self.to_end,
            ..Settling::EVERYTHING
        }
    }
}

impl Part for Source {
    /// A queue allows everything. A log settles a record at its append
    /// unless a transaction holds its sink writes (exactly-once), a
    /// service time keeps its partition busy or a producer retries
    /// appends; a log's write deliveries are not settled.
    fn allows(&self, scenario: &Scenario) -> Settling {
        match &scenario.log {
            None => Settling::EVERYTHING,
            // A producer's retries are appends of their own, stepped.
            Some(log) => Settling {
                at_once: log.guarantee != Guarantee::ExactlyOnce
                    && log.service_time == 0
                    && !log.producer.retries,
                writes: false,
                runs_of_arrivals: true,
            },
        }
    }
}

impl Part for Consumer {
    /// Deliveries taken directly (no workers, no ordering, no
    /// MaxAckPending that can bind). At once: no delivery with a receipt of
    /// one (sections 17-22 and `[write]`). Writes: the model's own rules
    /// (no broker profile) and no visibility timeout.
    fn allows(&self, scenario: &Scenario) -> Settling {
        let direct = self.direct && self.ack_pending.is_none();
        let g = &scenario.guarantees;
        Settling {
            at_once: direct && !self.with_receipts,
            writes: direct && g.profile == Profile::Model && g.visibility_timeout.is_none(),
            runs_of_arrivals: true,
        }
    }
}

impl Part for Quarantine {
    /// Entered only by a failure, which the settled paths step through
    /// from there; but a continuous expiry or an archive is due at an
    /// instant of its own, which a run of arrivals could pass.
    fn allows(&self, scenario: &Scenario) -> Settling {
        match scenario.continuous_expiry || scenario.archive_after.is_some() {
            true => Settling::NOTHING,
            false => Settling::EVERYTHING,
        }
    }
}

impl Part for super::DedupStore {
    /// Results only: write-intent claims are read by other deliveries
    /// while one runs; and no restarts, which a run of arrivals could
    /// pass.
    fn allows(&self, scenario: &Scenario) -> Settling {
        match scenario.guarantees.dedup_mode {
            _ if !scenario.store_restarts.is_empty() => Settling::NOTHING,
            DedupMode::Result => Settling::EVERYTHING,
            DedupMode::WriteIntent { .. } => Settling::NOTHING,
        }
    }
}

impl Part for Downstream {
    /// No call limit (a refused call is a failure). At once: no sink keeps
    /// rows per intent, and no `[write]`. Writes: only with `[write]`.
    /// Outages: a delivery during one fails, stepped from there.
    fn allows(&self, _scenario: &Scenario) -> Settling {
        let Downstream {
            calls,
            outages: _,
            sinks,
            writes,
        } = self;
        let unlimited = !calls.limited();
        Settling {
            at_once: unlimited && !sinks.keeps_rows() && writes.is_none(),
            writes: unlimited && writes.is_some(),
            runs_of_arrivals: true,
        }
    }
}

impl Part for Operator {
    /// Inspections come after the run drains, so after every settled
    /// end; a canary redrive, which waits for each ack, is checked per
    /// delivery.
    fn allows(&self, _scenario: &Scenario) -> Settling {
        Settling::EVERYTHING
    }
}

impl Part for super::alarms::Alarms {
    /// Alarms read every instant: no run of arrivals, and no settled end
    /// between two readings.
    fn allows(&self, scenario: &Scenario) -> Settling {
        let none = scenario.alarms.is_empty();
        Settling {
            at_once: true,
            writes: none,
            runs_of_arrivals: none,
        }
    }
}

impl Part for Measures {
    /// The census reads every change of state.
    fn allows(&self, _scenario: &Scenario) -> Settling {
        match self.census {
            None => Settling::EVERYTHING,
            Some(_) => Settling::NOTHING,
        }
    }
}

impl Part for Observers {
    /// A transcript, ledger or watch reads every step. A question asked
    /// of a time reads a copy of the run there: no settled end may lie
    /// past it.
    fn allows(&self, _scenario: &Scenario) -> Settling {
        if !self.recording.quiet() {
            return Settling::NOTHING;
        }
        Settling {
            at_once: true,
            writes: self.question_times.is_empty(),
            runs_of_arrivals: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Engine, Recorder, Stepper, run};
    use crate::scenario::load_str;

    /// A part that has not said what it allows.
    struct Silent;
    impl Part for Silent {}

    fn file(rest: &str) -> Scenario {
        let text = format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
             [[traffic]]\ncount = 2000\nover = \"2s\"\n{rest}"
        );
        load_str("s.toml", &text).expect("valid").0
    }

    #[test]
    fn a_part_that_says_nothing_keeps_every_delivery_stepped() {
        let s = file("");
        let engine = Engine::new(&s, Recorder::Off);
        let parts = engine.parts();
        let every = Settling::agreed(&s, &parts);
        assert!(every.at_once && every.runs_of_arrivals, "{every:?}");
        let mut with_silent: Vec<&dyn Part> = parts.to_vec();
        with_silent.push(&Silent);
        assert_eq!(Settling::agreed(&s, &with_silent), Settling::NOTHING);
    }

    #[test]
    fn a_run_that_settles_nothing_steps_through_every_delivery_to_the_same_outcome() {
        let s = file("[[outage]]\nfrom = \"500ms\"\nduration = \"1s\"\n");
        let mut settling = Engine::new(&s, Recorder::Off);
        settling.settle_from_now(true);
        settling.run_to_end().unwrap();
        // The 1,000 arrivals outside the outage settle in one write; those
        // in it fail, and their retries (not first deliveries) step.
        assert_eq!(settling.consumer.settled, 1000);
        let mut stepped = Engine::new(&s, Recorder::Off);
        let mut parts: Vec<&dyn Part> = stepped.parts().to_vec();
        parts.push(&Silent);
        stepped.consumer.settling = Settling::agreed(&s, &parts);
        stepped.run_to_end().unwrap();
        assert_eq!(stepped.consumer.settled, 0);
        let (settled, stepped) = (settling.finish(None), stepped.finish(None));
        assert_eq!(stepped.totals, settled.totals);
        assert_eq!(stepped.messages, settled.messages);
        assert_eq!(stepped.totals, run(&s, Recorder::All).unwrap().totals);
    }

    #[test]
    fn a_run_that_may_stop_part_way_never_settles_a_write() {
        let w = file(
            "[write]\nstrategy = \"direct\"\n[[sink]]\nname = \"a\"\nkind = \"upsert\"\nlatency = \"5ms\"\n",
        );
        let stepper = Stepper::new(&w, Recorder::Off);
        assert!(!stepper.engine.consumer.settling.writes);
        let mut to_end = Engine::new(&w, Recorder::Off);
        to_end.settle_from_now(true);
        assert!(to_end.consumer.settling.writes);
    }
}
