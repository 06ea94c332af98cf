//! One side of a conformance run (what the model computed, or what the
//! broker did), and the comparison of the two with timing tolerances.
//!
//! Times on both sides are real milliseconds from the run's start: the
//! model's modeled times divided by the time scale ([`TimeScale`]), the
//! broker's as measured.

use serde::Serialize;

use super::plan::Action;
pub use super::plan::Rules;
use crate::model::Millis;

/// The smallest tolerance on a time, in real milliseconds.
pub const MIN_TOLERANCE_MS: f64 = 20.0;
/// The relative tolerance on a time: 5% of the time from the start.
pub const RELATIVE_TOLERANCE: f64 = 0.05;
/// Added to every tolerance: how late an observation can be read (a
/// consumer's wake-up, a poll of the dead-letter queue).
pub const POLL_MS: f64 = 10.0;
/// The least a broker round trip before a delivery (a requeue, a
/// redelivery, a nak, an ack) adds to its tolerance, in real ms: each
/// adds the larger of this and twice the latency measured at the start
/// of the run. RabbitMQ 3.10's requeue took 1.4 ms idle and 2.2 ms with
/// both cores busy.
pub const ROUND_TRIP_MS: f64 = 3.0;
/// The shortest nonzero duration of a file, in real milliseconds after
/// scaling, that a run can tell apart: twice the smallest tolerance plus
/// the poll, rounded up.
pub const MIN_REAL_DURATION_MS: u64 = 50;
/// The default time scale aims at a run this long (real milliseconds).
pub const TARGET_RUN_MS: u64 = 3_000;
/// The longest a file's run on a broker may take (real milliseconds): a
/// file whose scaled run would take longer is refused before it starts.
pub const MAX_RUN_MS: u64 = 60_000;

/// How modeled time maps to the wall clock: `N` modeled milliseconds take
/// one real millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimeScale(pub u64);

impl TimeScale {
    /// The default for a run whose model ends at `end` and whose shortest
    /// nonzero duration is `shortest`: as fast as keeps `shortest` at
    /// least [`MIN_REAL_DURATION_MS`], and no faster than brings the run
    /// under [`TARGET_RUN_MS`].
    pub fn default_for(end: Millis, shortest: Option<Millis>) -> TimeScale {
        let wanted = end.div_ceil(TARGET_RUN_MS).max(1);
        let allowed = shortest.map_or(u64::MAX, |d| (d / MIN_REAL_DURATION_MS).max(1));
        TimeScale(wanted.min(allowed))
    }

    /// Real milliseconds for a modeled duration.
    pub fn real(self, modeled: Millis) -> f64 {
        modeled as f64 / self.0 as f64
    }

    /// Why a run that ends at `end` (modeled) cannot take place at this
    /// scale: it would take more than [`MAX_RUN_MS`].
    pub fn check_length(self, end: Millis) -> Result<(), String> {
        let real = self.real(end);
        if real > MAX_RUN_MS as f64 {
            return Err(format!(
                "the run ends at {}, which takes {:.0} s at --time-scale {}: a conformance run \
                 may take at most {} s; shorten the file or use --time-scale {} or more",
                crate::duration::format(end),
                real / 1000.0,
                self.0,
                MAX_RUN_MS / 1000,
                end.div_ceil(MAX_RUN_MS),
            ));
        }
        Ok(())
    }

    /// Why this scale cannot honour `shortest` (named by `what`), if so.
    pub fn check(self, shortest: Millis, what: &str) -> Result<(), String> {
        let real = self.real(shortest);
        if shortest > 0 && real < MIN_REAL_DURATION_MS as f64 {
            let most = (shortest / MIN_REAL_DURATION_MS).max(1);
            return Err(format!(
                "--time-scale {} maps {what} ({}) to {real:.1} ms, below the {MIN_REAL_DURATION_MS} ms \
                 a broker run can time; use --time-scale {most} or less",
                self.0,
                crate::duration::format(shortest),
            ));
        }
        Ok(())
    }
}

/// How far an observed time may be from the modeled one (real ms):
/// max(20 ms, 5% of the modeled time) plus the poll interval.
pub fn tolerance(modeled_real: f64) -> f64 {
    (modeled_real * RELATIVE_TOLERANCE).max(MIN_TOLERANCE_MS) + POLL_MS
}

/// One delivery of a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delivery {
    /// Real milliseconds from the run's start.
    pub at: f64,
    /// Returns before this delivery: the model's receives so far, the
    /// broker's `x-delivery-count` header (absent counts as 0).
    pub delivery_count: u64,
    /// What the handler did.
    pub action: Action,
}

/// How a message ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum End {
    Acked,
    /// In the dead-letter queue, with the broker's reason
    /// (`delivery_limit`, `rejected`).
    DeadLettered {
        reason: String,
    },
    /// Dead-lettered, then gone from the dead-letter queue by the
    /// operator's inspection: its retention, counted from entering it,
    /// had elapsed.
    Expired {
        reason: String,
    },
    /// Dead-lettered, still kept at the operator's inspection, and
    /// purged by it.
    Purged {
        reason: String,
    },
    /// JetStream: left in the stream, the server's advisory
    /// (`max_deliveries`, `terminated`) its only signal.
    Advisory {
        advisory: String,
    },
    /// Gone from the queue, neither acknowledged nor dead-lettered.
    Dropped,
    /// Still in the queue when the run ended.
    Queued,
}

impl End {
    fn word(&self) -> String {
        match self {
            End::Acked => "acked".into(),
            End::DeadLettered { reason } => format!("dead-lettered ({reason})"),
            End::Expired { reason } => format!("dead-lettered ({reason}), expired"),
            End::Purged { reason } => format!("dead-lettered ({reason}), purged"),
            End::Advisory { advisory } => format!("left in the stream (advisory {advisory})"),
            End::Dropped => "dropped".into(),
            End::Queued => "still queued".into(),
        }
    }
}

/// One message on one side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    pub id: String,
    pub deliveries: Vec<Delivery>,
    pub end: End,
    /// When it ended (real ms), where a time is known: the ack, the
    /// dead-lettering; `None` for a drop or a message still queued.
    pub end_at: Option<f64>,
    /// The broker's side: how much later than its scheduled time the
    /// broker confirmed the message's publish (real ms). A broker that
    /// takes longer to store a message delivers it later too, so this
    /// widens the tolerance of the message's times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publish_lag: Option<f64>,
    /// RabbitMQ: the `count` of the dead letter's first `x-death` entry
    /// (the model's: 1, docs/model.md section 21, rabbitmq-quorum 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x_death_count: Option<u64>,
}

/// A difference between the model and the broker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub message: String,
    /// The message's delivery it is about (1-based), if one.
    pub delivery: Option<u32>,
    pub what: String,
    pub model: String,
    pub broker: String,
    /// The rule of docs/model.md the model follows here.
    pub rule: String,
}

const RULE_LIMIT: &str = "docs/model.md section 21, rabbitmq-quorum 1: a message is dead-lettered \
                          once its delivery count exceeds the limit L (L + 1 deliveries)";
const RULE_DROP: &str = "docs/model.md section 21: with `[quarantine] enabled = false` a message \
                         that exhausts its budget is dropped";
const RULE_REJECT: &str = "docs/model.md section 21, rabbitmq-quorum 1: a permanent failure routed \
                           to quarantine goes after one delivery";
const RULE_ACK: &str = "docs/model.md section 3.4: a delivery whose handler succeeds is \
                        acknowledged";
const RULE_COUNT: &str = "docs/model.md section 17: every receive counts toward the budget, \
                          crashes too";
const RULE_REQUEUE: &str = "docs/model.md section 21, rabbitmq-quorum 2 and 3: a failed delivery \
                            is requeued at once, behind what is due (ahead of it where \
                            broker_version says so)";
const RULE_GIVE_UP: &str = "docs/model.md section 21, nats-jetstream 6: a message that used \
                            MaxDeliver deliveries stays in the stream, its max-deliveries \
                            advisory at the instant its next delivery would have been due";
const RULE_TERM: &str = "docs/model.md section 21, nats-jetstream 5: a permanent failure routed \
                         to quarantine is a term, after one delivery";
const RULE_REDELIVER: &str = "docs/model.md section 21, nats-jetstream 3 and 4: redelivered at \
                              its start plus its ack wait when not acked, at its end plus the \
                              nak's delay when nakked";
const RULE_EXPIRY: &str = "docs/model.md section 5: quarantine retention counts from the moment \
                           the message entered quarantine; at the inspection a message at \
                           least that old has expired";
const RULE_PURGE: &str = "docs/model.md section 6: `purge` deletes the retained messages at the \
                          inspection";
const RULE_X_DEATH: &str = "docs/model.md section 21, rabbitmq-quorum 4: a dead letter carries one \
                            x-death entry for its cycle, count 1";
const RULE_REQUEUE_CLASSIC: &str = "docs/model.md section 21, rabbitmq-classic 2: a failed \
                                    delivery is requeued at once to its original position, ahead \
                                    of the messages ready after it";
const RULE_REDELIVERED: &str = "docs/model.md section 21, rabbitmq-classic 4: a classic queue \
                                marks a redelivery with the redelivered flag, and counts nothing";
const RULE_ARRIVAL: &str = "docs/model.md section 2: a message is delivered when it arrives";
const RULE_PENDING: &str = "docs/model.md section 21, nats-jetstream 9: a message is delivered \
                            when it is published, unless MaxAckPending messages are pending; \
                            then when one is acked or given up, in publish order";

/// The rule that decides how a message ends, `broker` its end on the
/// broker: where either side expired, the retention's rule.
fn rule_for_end(model: &End, broker: &End) -> &'static str {
    if matches!(broker, End::Expired { .. }) {
        return RULE_EXPIRY;
    }
    match model {
        End::Expired { .. } => RULE_EXPIRY,
        End::Purged { .. } => RULE_PURGE,
        End::Acked => RULE_ACK,
        End::DeadLettered { reason } if reason == "rejected" => RULE_REJECT,
        End::DeadLettered { .. } => RULE_LIMIT,
        End::Advisory { advisory } if advisory == "terminated" => RULE_TERM,
        End::Advisory { .. } => RULE_GIVE_UP,
        End::Dropped | End::Queued => RULE_DROP,
    }
}

const RULE_RETRY: &str = "docs/model.md section 3.5: a failed delivery is retried while the \
                          cycle's receives are below the budget";

/// The rule that decides how many deliveries a message gets.
fn rule_for_count(model: &End) -> &'static str {
    match model {
        End::Acked | End::Queued => RULE_RETRY,
        End::DeadLettered { reason } | End::Expired { reason } | End::Purged { reason }
            if reason == "rejected" =>
        {
            RULE_REJECT
        }
        End::DeadLettered { .. } | End::Expired { .. } | End::Purged { .. } | End::Dropped => {
            RULE_LIMIT
        }
        End::Advisory { advisory } if advisory == "terminated" => RULE_TERM,
        End::Advisory { .. } => RULE_GIVE_UP,
    }
}

fn ms(t: f64) -> String {
    format!("{t:.0} ms")
}

/// How much a delivery's tolerance grows with the broker round trips the
/// run made before it (real ms), `slack` being twice the latency measured
/// at the start: `trips` x max([`ROUND_TRIP_MS`], `slack`).
pub fn round_trips_allowance(trips: usize, slack: f64) -> f64 {
    trips as f64 * ROUND_TRIP_MS.max(slack)
}

/// Per message of `model`, per delivery: how many of the model's
/// deliveries (of any message) come before it, in time order (ties in
/// message order, then delivery order): the broker round trips whose
/// costs can have added up by then on one consumer.
fn trips_before(model: &[Message]) -> Vec<Vec<usize>> {
    let mut all: Vec<(f64, usize, usize)> = (model.iter().enumerate())
        .flat_map(|(i, m)| {
            m.deliveries
                .iter()
                .enumerate()
                .map(move |(k, d)| (d.at, i, k))
        })
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut out: Vec<Vec<usize>> = model.iter().map(|m| vec![0; m.deliveries.len()]).collect();
    for (rank, &(_, i, k)) in all.iter().enumerate() {
        out[i][k] = rank;
    }
    out
}

/// Every difference between the model's messages and the broker's, in
/// message order, then per message: its end, its number of deliveries,
/// each delivery's count and time, its end's time. `slack` (real ms) is
/// added to every time's [`tolerance`]: twice the broker's measured
/// latency; each broker round trip before a time adds
/// [`round_trips_allowance`]. `rules`: the broker's (its rules and its
/// delivery count's name).
pub fn compare(model: &[Message], broker: &[Message], slack: f64, rules: Rules) -> Vec<Difference> {
    let trips = trips_before(model);
    let (count_name, count_rule, retry_rule, first_rule) = match rules {
        Rules::JetStream => ("delivery count", RULE_COUNT, RULE_REDELIVER, RULE_PENDING),
        Rules::Quorum => ("x-delivery-count", RULE_COUNT, RULE_REQUEUE, RULE_ARRIVAL),
        Rules::Classic => (
            "redelivered",
            RULE_REDELIVERED,
            RULE_REQUEUE_CLASSIC,
            RULE_ARRIVAL,
        ),
    };
    let mut out = Vec::new();
    for (i, m) in model.iter().enumerate() {
        let Some(b) = broker.iter().find(|b| b.id == m.id) else {
            out.push(Difference {
                message: m.id.clone(),
                delivery: None,
                what: "seen".into(),
                model: format!("{} deliveries", m.deliveries.len()),
                broker: "never delivered".into(),
                rule: RULE_ARRIVAL.into(),
            });
            continue;
        };
        let lag = b.publish_lag.unwrap_or(0.0).max(0.0);
        let tolerance =
            |t: f64, trips: usize| tolerance(t) + slack + lag + round_trips_allowance(trips, slack);
        // The message's end follows its last delivery's round trip.
        let end_trips = trips[i].last().map_or(0, |&r| r + 1);
        let mut differ =
            |delivery: Option<u32>, what: String, model: String, broker: String, rule: &str| {
                out.push(Difference {
                    message: m.id.clone(),
                    delivery,
                    what,
                    model,
                    broker,
                    rule: rule.into(),
                })
            };
        if m.end != b.end {
            differ(
                None,
                "end".into(),
                m.end.word(),
                b.end.word(),
                rule_for_end(&m.end, &b.end),
            );
        }
        if m.end == b.end && m.x_death_count.is_some() && m.x_death_count != b.x_death_count {
            let count = |c: Option<u64>| c.map_or("none".to_string(), |c| c.to_string());
            differ(
                None,
                "x-death count".into(),
                count(m.x_death_count),
                count(b.x_death_count),
                RULE_X_DEATH,
            );
        }
        if m.deliveries.len() != b.deliveries.len() {
            differ(
                None,
                "deliveries".into(),
                m.deliveries.len().to_string(),
                b.deliveries.len().to_string(),
                rule_for_count(&m.end),
            );
        }
        for (k, (md, bd)) in m.deliveries.iter().zip(&b.deliveries).enumerate() {
            let n = k + 1;
            let delivery = u32::try_from(n).ok();
            if md.delivery_count != bd.delivery_count {
                differ(
                    delivery,
                    format!("delivery {n}: {count_name}"),
                    md.delivery_count.to_string(),
                    bd.delivery_count.to_string(),
                    count_rule,
                );
            }
            let allowed = tolerance(md.at, trips[i][k]);
            if (md.at - bd.at).abs() > allowed {
                differ(
                    delivery,
                    format!("delivery {n}: time"),
                    ms(md.at),
                    format!("{} (tolerance {})", ms(bd.at), ms(allowed)),
                    if n == 1 { first_rule } else { retry_rule },
                );
            }
        }
        if m.end == b.end
            && let (Some(mt), Some(bt)) = (m.end_at, b.end_at)
            && (mt - bt).abs() > tolerance(mt, end_trips)
        {
            differ(
                None,
                format!("{}: time", m.end.word()),
                ms(mt),
                format!("{} (tolerance {})", ms(bt), ms(tolerance(mt, end_trips))),
                rule_for_end(&m.end, &b.end),
            );
        }
    }
    out
}

/// Messages as a side of a comparison shows them, for the tests of the
/// comparison and of its diagnosis.
#[cfg(test)]
pub(super) mod fixtures {
    use super::*;

    pub fn delivery(at: f64, delivery_count: u64, action: Action) -> Delivery {
        Delivery {
            at,
            delivery_count,
            action,
        }
    }

    /// Message `id` delivered at `times` (each delivery requeued),
    /// ending as `end` 100 ms after its last delivery.
    pub fn message(id: &str, times: &[f64], end: End) -> Message {
        Message {
            id: id.into(),
            deliveries: (times.iter().enumerate())
                .map(|(k, &at)| delivery(at, k as u64, Action::Requeue))
                .collect(),
            end_at: times.last().map(|t| t + 100.0),
            end,
            publish_lag: None,
            x_death_count: None,
        }
    }

    /// Dead-lettered at its delivery limit.
    pub fn limit() -> End {
        End::DeadLettered {
            reason: "delivery_limit".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{delivery, limit};
    use super::*;

    fn poison(deliveries: usize, end: End) -> Message {
        Message {
            id: "poison".into(),
            deliveries: (0..deliveries)
                .map(|k| delivery(k as f64 * 2.0, k as u64, Action::Requeue))
                .collect(),
            end,
            end_at: Some(deliveries as f64 * 2.0),
            publish_lag: None,
            x_death_count: None,
        }
    }

    #[test]
    fn a_dead_letter_s_x_death_count_is_compared_with_the_model_s() {
        let mut model = poison(3, limit());
        model.x_death_count = Some(1);
        let mut broker = model.clone();
        assert!(compare(&[model.clone()], &[broker.clone()], 0.0, Rules::Quorum).is_empty());
        broker.x_death_count = Some(2);
        let d = compare(&[model.clone()], &[broker.clone()], 0.0, Rules::Quorum);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (
                d[0].what.as_str(),
                d[0].model.as_str(),
                d[0].broker.as_str()
            ),
            ("x-death count", "1", "2")
        );
        assert!(d[0].rule.contains("rabbitmq-quorum 4"));
        broker.x_death_count = None;
        assert_eq!(
            compare(&[model], &[broker], 0.0, Rules::Quorum)[0].broker,
            "none"
        );
    }

    #[test]
    fn the_tolerance_is_20_ms_or_5_percent_plus_the_poll() {
        assert_eq!(tolerance(0.0), 30.0);
        assert_eq!(tolerance(400.0), 30.0);
        assert_eq!(tolerance(1000.0), 60.0);
    }

    #[test]
    fn the_default_scale_aims_at_three_seconds_without_squeezing_the_shortest_duration() {
        assert_eq!(TimeScale::default_for(0, None), TimeScale(1));
        assert_eq!(TimeScale::default_for(2_000, Some(100)), TimeScale(1));
        assert_eq!(TimeScale::default_for(60_000, None), TimeScale(20));
        assert_eq!(TimeScale::default_for(60_000, Some(5_000)), TimeScale(20));
        assert_eq!(TimeScale::default_for(60_000, Some(500)), TimeScale(10));
        assert_eq!(TimeScale::default_for(60_000, Some(10)), TimeScale(1));
        assert_eq!(TimeScale(10).real(1_000), 100.0);
    }

    #[test]
    fn a_scale_that_squeezes_a_duration_below_what_can_be_timed_is_refused() {
        assert!(TimeScale(10).check(500, "x").is_ok());
        let err = TimeScale(20).check(500, "message b's `at`").unwrap_err();
        assert_eq!(
            err,
            "--time-scale 20 maps message b's `at` (500ms) to 25.0 ms, below the 50 ms a broker \
             run can time; use --time-scale 10 or less"
        );
        assert!(TimeScale(1000).check(0, "x").is_ok());
    }

    #[test]
    fn a_run_longer_than_a_minute_at_its_scale_is_refused() {
        assert!(TimeScale(1).check_length(60_000).is_ok());
        let err = TimeScale(1).check_length(60_001).unwrap_err();
        assert!(err.contains("takes 60 s at --time-scale 1"), "{err}");
        assert!(err.contains("use --time-scale 2 or more"), "{err}");
        assert!(TimeScale(1_000).check_length(86_400_000).is_err());
        assert!(TimeScale(2_000).check_length(86_400_000).is_ok());
    }

    #[test]
    fn the_same_run_on_both_sides_conforms() {
        let m = poison(6, limit());
        assert_eq!(
            compare(
                std::slice::from_ref(&m),
                std::slice::from_ref(&m),
                0.0,
                Rules::Quorum
            ),
            vec![]
        );
    }

    #[test]
    fn a_limit_off_by_one_differs_in_deliveries_and_names_the_rule() {
        let d = compare(
            &[poison(5, limit())],
            &[poison(6, limit())],
            0.0,
            Rules::Quorum,
        );
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].what, "deliveries");
        assert_eq!((d[0].model.as_str(), d[0].broker.as_str()), ("5", "6"));
        assert!(d[0].rule.contains("section 21"));
    }

    #[test]
    fn an_end_a_reason_a_count_and_a_late_delivery_each_differ() {
        let model = poison(2, limit());
        let mut broker = poison(2, End::Dropped);
        broker.deliveries[1].delivery_count = 0;
        broker.deliveries[1].at = 2.0 + 34.0;
        let d = compare(std::slice::from_ref(&model), &[broker], 0.0, Rules::Quorum);
        let what: Vec<&str> = d.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(
            what,
            ["end", "delivery 2: x-delivery-count", "delivery 2: time"]
        );
        assert_eq!(d[0].broker, "dropped");
        let mut rejected = model.clone();
        rejected.end = End::DeadLettered {
            reason: "rejected".into(),
        };
        let d = compare(&[model], &[rejected], 0.0, Rules::Quorum);
        assert_eq!(d[0].model, "dead-lettered (delivery_limit)");
        assert_eq!(d[0].broker, "dead-lettered (rejected)");
    }

    #[test]
    fn a_delivery_within_tolerance_conforms_and_one_just_past_it_differs() {
        let model = poison(2, limit());
        let mut near = model.clone();
        // 30 ms, and 3 ms for the round trip of the delivery before it.
        near.deliveries[1].at += 33.0;
        assert_eq!(
            compare(
                std::slice::from_ref(&model),
                std::slice::from_ref(&near),
                0.0,
                Rules::Quorum
            ),
            vec![]
        );
        near.deliveries[1].at += 0.5;
        assert_eq!(
            compare(
                std::slice::from_ref(&model),
                std::slice::from_ref(&near),
                0.0,
                Rules::Quorum
            )
            .len(),
            1
        );
        assert_eq!(
            compare(&[model], &[near], 1.0, Rules::Quorum),
            vec![],
            "the slack widens it"
        );
    }

    /// 41 immediate redeliveries: each requeue's round trip (1.4 ms idle,
    /// 2.2 ms loaded on RabbitMQ 3.10) adds up, and so does the allowance,
    /// 3 ms a round trip (or twice the latency, if more); a delivery one
    /// round trip beyond it still differs.
    #[test]
    fn the_allowance_grows_with_the_round_trips_before_a_delivery() {
        let model = poison(41, limit());
        let mut loaded = model.clone();
        for (k, d) in loaded.deliveries.iter_mut().enumerate() {
            d.at += 2.2 * k as f64;
        }
        loaded.end_at = loaded.end_at.map(|t| t + 2.2 * 41.0);
        let same = |m: &Message, b: &Message, slack: f64| {
            compare(
                std::slice::from_ref(m),
                std::slice::from_ref(b),
                slack,
                Rules::Quorum,
            )
        };
        assert_eq!(same(&model, &loaded, 0.0), vec![]);
        assert_eq!(round_trips_allowance(40, 0.0), 120.0);
        assert_eq!(
            round_trips_allowance(40, 4.0),
            160.0,
            "twice a 2 ms latency"
        );
        // Delivery 41: 30 ms + 40 round trips of 3 ms = 150 ms allowed.
        let mut late = model.clone();
        late.deliveries[40].at += 150.0;
        assert_eq!(same(&model, &late, 0.0), vec![]);
        late.deliveries[40].at += 3.0;
        let d = same(&model, &late, 0.0);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].what, "delivery 41: time");
        assert!(d[0].broker.contains("tolerance 150 ms"), "{}", d[0].broker);
        // Round trips of any message count: a second message's first
        // delivery after the first message's 41.
        let mut second = poison(1, End::Acked);
        second.id = "second".into();
        second.deliveries[0].at = model.deliveries[40].at;
        let mut second_late = second.clone();
        second_late.deliveries[0].at += 150.0;
        let d = compare(
            &[model.clone(), second],
            &[model, second_late],
            0.0,
            Rules::Quorum,
        );
        assert_eq!(d, vec![], "41 round trips before it: 153 ms allowed");
    }

    #[test]
    fn against_jetstream_an_advisory_and_a_redelivery_name_its_rules() {
        let advisory = |a: &str| End::Advisory { advisory: a.into() };
        let model = poison(3, advisory("max_deliveries"));
        let mut broker = poison(3, advisory("terminated"));
        broker.deliveries[1].delivery_count = 0;
        broker.deliveries[2].at += 100.0;
        let d = compare(&[model], &[broker], 0.0, Rules::JetStream);
        let what: Vec<&str> = d.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(
            what,
            ["end", "delivery 2: delivery count", "delivery 3: time"]
        );
        assert_eq!(d[0].model, "left in the stream (advisory max_deliveries)");
        assert!(d[0].rule.contains("nats-jetstream 6"), "{}", d[0].rule);
        assert!(
            d[2].rule.contains("nats-jetstream 3 and 4"),
            "{}",
            d[2].rule
        );
    }

    #[test]
    fn a_publish_the_broker_confirmed_late_widens_that_messages_tolerance() {
        let model = poison(2, limit());
        let mut late = model.clone();
        for d in &mut late.deliveries {
            d.at += 120.0;
        }
        late.end_at = late.end_at.map(|t| t + 120.0);
        assert_eq!(
            compare(
                std::slice::from_ref(&model),
                std::slice::from_ref(&late),
                0.0,
                Rules::Quorum
            )
            .len(),
            3
        );
        late.publish_lag = Some(118.0);
        assert_eq!(compare(&[model], &[late], 0.0, Rules::Quorum), vec![]);
    }

    #[test]
    fn a_message_the_broker_never_delivered_differs() {
        let d = compare(&[poison(1, End::Acked)], &[], 0.0, Rules::Quorum);
        assert_eq!(d[0].broker, "never delivered");
    }
}
