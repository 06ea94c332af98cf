//! The write-intent store's side of a conformance run (docs/model.md
//! section 18) against a real Redis: the model's run gives the schedule
//! (when each delivery consults the store, when a claim is renewed, when
//! DONE is written), Redis gives the answers, and the two are compared
//! delivery by delivery.
//!
//! A consultation is `SET key INTENT NX PX lease`: OK is a claim; else
//! `GET key` tells a live DONE (a hit) from a live INTENT (contention). A
//! renewal is `PEXPIRE key lease`; DONE is `SET key DONE PX retention`.

use serde::Serialize;

use super::compare::TimeScale;
use super::plan::{MAX_MESSAGES, Unsupported};
use crate::engine::{self, Detail, Recorder};
use crate::model::{DedupMode, Millis, Scenario};

/// Store operations one file may make at most.
pub const MAX_OPS: usize = 2_000;

/// What the store answered a delivery's consultation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The key was free: the delivery holds an INTENT claim.
    Claimed,
    /// A live INTENT: "in flight elsewhere".
    Contention,
    /// A live DONE: a deduplication hit.
    Hit,
}

impl Answer {
    pub fn word(self) -> &'static str {
        match self {
            Answer::Claimed => "claimed",
            Answer::Contention => "contention",
            Answer::Hit => "hit (DONE)",
        }
    }
}

/// One store operation, at a modeled time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// A delivery consults the store: index into [`StorePlan::rows`].
    Consult(usize),
    /// A running delivery renews its claim for `lease`.
    Renew,
    /// DONE replaces the key's INTENT for the result retention.
    Done,
}

/// A store operation on a key, at a modeled time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub at: Millis,
    pub key: String,
    pub op: Op,
}

/// One consultation, as the model answered it, and (after a live run)
/// as Redis did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub message: String,
    /// The message's delivery (1-based, over its life).
    pub delivery: u32,
    pub key: String,
    /// Modeled time.
    pub at: Millis,
    pub model: Answer,
    /// Redis's answer; `None` before a live run.
    pub redis: Option<Answer>,
}

/// A file's run against a write-intent store.
#[derive(Debug, Clone)]
pub struct StorePlan {
    pub lease: Millis,
    pub retention: Millis,
    pub steps: Vec<Step>,
    pub rows: Vec<Row>,
    /// The run's last event.
    pub end: Millis,
    /// The nearest an operation comes to an expiry of its key (modeled ms)
    /// and which: what the time scale must keep apart.
    pub nearest: Option<(Millis, String)>,
}

fn refuse(what: &str, why: &str) -> Unsupported {
    Unsupported {
        what: what.into(),
        why: why.into(),
    }
}

/// Runs the model on `scenario` and reads its store operations.
pub fn plan(scenario: &Scenario) -> Result<StorePlan, Unsupported> {
    let DedupMode::WriteIntent { lease, renew } = scenario.guarantees.dedup_mode else {
        return Err(refuse(
            "[dedup] mode",
            "a redis:// store checks write intents: set mode = \"write_intent\" with a lease",
        ));
    };
    let retention = scenario.dedup_retention.ok_or_else(|| {
        refuse(
            "[dedup] result_retention",
            "write intents need a result retention",
        )
    })?;
    if scenario.guarantees.visibility_timeout.is_some() {
        return Err(refuse(
            "[delivery] visibility_timeout",
            "overlapping deliveries of one message are not driven against Redis yet",
        ));
    }
    if scenario.log.is_some() || scenario.write.is_some() {
        return Err(refuse(
            "[log] / [write]",
            "conform checks the store of a queue's consumer",
        ));
    }
    if scenario.messages.len() > MAX_MESSAGES || !scenario.traffic.is_empty() {
        return Err(refuse(
            "[[message]] / [[traffic]]",
            "a conformance file lists at most 64 messages, without generated traffic",
        ));
    }
    let outcome =
        engine::run(scenario, Recorder::All).map_err(|e| refuse("[limits]", &e.to_string()))?;
    let mut steps = Vec::new();
    let mut rows = Vec::new();
    let mut receives: Vec<u32> = vec![0; scenario.messages.len()];
    let mut end = 0;
    for t in &outcome.transitions {
        end = end.max(t.time);
        let Some(m) = t.message else { continue };
        let m = m as usize;
        let mut consult = |key, model| {
            rows.push(Row {
                message: scenario.messages[m].id.clone(),
                delivery: receives[m],
                key: scenario.key_name(key),
                at: t.time,
                model,
                redis: None,
            });
            steps.push(Step {
                at: t.time,
                key: scenario.key_name(key),
                op: Op::Consult(rows.len() - 1),
            });
        };
        match t.detail {
            Detail::Delivered { total_receives, .. } => receives[m] = total_receives,
            Detail::Claimed {
                key, lease_expires, ..
            } => {
                consult(key, Answer::Claimed);
                if let Some(renew) = renew {
                    let renewals = (lease_expires - t.time - lease) / renew;
                    for k in 1..=renewals {
                        steps.push(Step {
                            at: t.time + k * renew,
                            key: scenario.key_name(key),
                            op: Op::Renew,
                        });
                    }
                }
            }
            Detail::Contention { key, .. } => consult(key, Answer::Contention),
            Detail::DedupHit { key, .. } => consult(key, Answer::Hit),
            Detail::DoneRecorded { key, .. } => steps.push(Step {
                at: t.time,
                key: scenario.key_name(key),
                op: Op::Done,
            }),
            _ => {}
        }
        if steps.len() > MAX_OPS {
            return Err(refuse(
                "[[message]]",
                &format!("the run makes more than {MAX_OPS} store operations"),
            ));
        }
    }
    if rows.is_empty() {
        return Err(refuse(
            "[[message]]",
            "no delivery consults the store: nothing to compare",
        ));
    }
    // Renewals were pushed at their claim: keep the run's order, by time.
    steps.sort_by_key(|s| s.at);
    let nearest = nearest(&steps, &rows, lease, retention);
    Ok(StorePlan {
        lease,
        retention,
        steps,
        rows,
        end,
        nearest,
    })
}

/// Walks the steps keeping each key's expiry, and finds the operation
/// nearest to the expiry its key had then: a run on a real store cannot
/// order the two when they are closer than its tolerance.
fn nearest(
    steps: &[Step],
    rows: &[Row],
    lease: Millis,
    retention: Millis,
) -> Option<(Millis, String)> {
    let mut expiry: std::collections::BTreeMap<&str, Millis> = Default::default();
    let mut near: Option<(Millis, String)> = None;
    for s in steps {
        if let Some(&x) = expiry.get(s.key.as_str()) {
            let gap = x.abs_diff(s.at);
            if near.as_ref().is_none_or(|(d, _)| gap < *d) {
                let what = match s.op {
                    Op::Consult(r) => format!(
                        "message {:?}'s delivery {} at {}",
                        rows[r].message,
                        rows[r].delivery,
                        crate::duration::format(s.at)
                    ),
                    Op::Renew => format!("a renewal at {}", crate::duration::format(s.at)),
                    Op::Done => format!("DONE at {}", crate::duration::format(s.at)),
                };
                near = Some((
                    gap,
                    format!(
                        "{what} and key {:?} expiring at {}",
                        s.key,
                        crate::duration::format(x)
                    ),
                ));
            }
        }
        let set = match s.op {
            Op::Consult(r) if rows[r].model == Answer::Claimed => Some(s.at + lease),
            Op::Consult(_) => None,
            Op::Renew => Some(s.at + lease),
            Op::Done => Some(s.at + retention),
        };
        if let Some(x) = set {
            expiry.insert(&s.key, x);
        }
    }
    near
}

impl StorePlan {
    /// The default time scale: about 3 s for the run, never putting an
    /// operation and an expiry of its key (or any other duration) closer
    /// than [`super::compare::MIN_REAL_DURATION_MS`].
    pub fn scale(&self) -> TimeScale {
        let shortest = [self.nearest.as_ref().map(|n| n.0), Some(self.lease)]
            .into_iter()
            .flatten()
            .filter(|&d| d > 0)
            .min();
        TimeScale::default_for(self.end, shortest)
    }

    /// Why `scale` cannot run this plan, if so.
    pub fn check(&self, scale: TimeScale) -> Result<(), String> {
        if let Some((d, what)) = &self.nearest {
            if *d == 0 {
                return Err(format!(
                    "{what}: at the same instant; a live store cannot order them (docs/conformance.md)"
                ));
            }
            scale.check(*d, &format!("the gap between {what}"))?;
        }
        scale.check(self.lease, "the lease")
    }
}

/// Each consultation where Redis answered otherwise than the model, as
/// differences citing section 18.
pub fn compare(rows: &[Row], scale: TimeScale) -> Vec<super::compare::Difference> {
    rows.iter()
        .filter(|r| r.redis != Some(r.model))
        .map(|r| super::compare::Difference {
            message: r.message.clone(),
            delivery: Some(r.delivery),
            what: format!(
                "delivery {} at {:.0} ms (key {:?}): store",
                r.delivery,
                scale.real(r.at),
                r.key
            ),
            model: r.model.word().into(),
            broker: r.redis.map_or("no answer", Answer::word).into(),
            rule: RULE.into(),
        })
        .collect()
}

const RULE: &str = "docs/model.md section 18: DONE still valid is a hit, an INTENT live strictly \
                    before its lease expires is contention, otherwise the delivery claims";

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Scenario {
        crate::scenario::load_str("t.toml", text).expect("valid").0
    }

    const STORE: &str = "[delivery]\nmax_receives = 5\nretry_interval = \"100ms\"\n\
        [dedup]\nmode = \"write_intent\"\nlease = \"250ms\"\nresult_retention = \"1s\"\n";

    #[test]
    fn a_crash_after_the_write_meets_contention_then_claims_again_after_the_lease() {
        let s = load(&format!(
            "{STORE}[[message]]\nid = \"pay\"\n\
             faults = [{{ crash = {{ first = 1 }}, at = \"after_effect\" }}]\n"
        ));
        let p = plan(&s).unwrap();
        let answers: Vec<(Millis, Answer)> = p.rows.iter().map(|r| (r.at, r.model)).collect();
        assert_eq!(
            answers,
            [
                (0, Answer::Claimed),
                (100, Answer::Contention),
                (200, Answer::Contention),
                (300, Answer::Claimed),
            ]
        );
        // The claim at 0 expires at 250: the nearest consultation is 50 ms away.
        assert_eq!(p.nearest.as_ref().unwrap().0, 50);
        assert_eq!(p.scale(), TimeScale(1));
        assert!(p.check(TimeScale(1)).is_ok());
        assert!(p.check(TimeScale(2)).is_err());
        let last = p.steps.last().unwrap();
        assert_eq!((last.at, &last.op), (300, &Op::Done));
    }

    #[test]
    fn a_renewed_claim_is_renewed_every_renew_while_its_delivery_runs() {
        let s = load(
            "[delivery]\nmax_receives = 2\nretry_interval = \"100ms\"\n\
             [workers]\ncount = 2\nservice_time = \"450ms\"\n\
             [dedup]\nmode = \"write_intent\"\nlease = \"200ms\"\nrenew = \"100ms\"\n\
             result_retention = \"1s\"\n\
             [[message]]\nid = \"slow\"\nkey = \"k\"\n\
             [[message]]\nid = \"second\"\nkey = \"k\"\nat = \"300ms\"\n",
        );
        let p = plan(&s).unwrap();
        let renewals: Vec<Millis> = p
            .steps
            .iter()
            .filter(|s| s.op == Op::Renew)
            .map(|s| s.at)
            .collect();
        assert_eq!(renewals, [100, 200, 300, 400]);
        assert_eq!(
            p.rows[1].model,
            Answer::Contention,
            "the renewed claim is live at 300ms"
        );
    }

    #[test]
    fn a_file_without_write_intents_is_refused() {
        let s = load(
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n[[message]]\nid = \"m\"\n",
        );
        assert_eq!(plan(&s).unwrap_err().what, "[dedup] mode");
    }

    #[test]
    fn a_difference_names_the_delivery_and_both_answers() {
        let row = Row {
            message: "pay".into(),
            delivery: 4,
            key: "pay".into(),
            at: 300,
            model: Answer::Claimed,
            redis: Some(Answer::Contention),
        };
        let d = compare(std::slice::from_ref(&row), TimeScale(1));
        assert_eq!(d[0].what, "delivery 4 at 300 ms (key \"pay\"): store");
        assert_eq!(
            (d[0].model.as_str(), d[0].broker.as_str()),
            ("claimed", "contention")
        );
        let same = Row {
            redis: Some(Answer::Claimed),
            ..row
        };
        assert!(compare(&[same], TimeScale(1)).is_empty());
    }
}
