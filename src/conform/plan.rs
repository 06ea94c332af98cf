//! What the scripted consumer of a conformance run does: the broker's
//! queue as the file describes it, and for each message the handler's
//! action at each of its deliveries, read from the file's faults the way
//! the model reads them (docs/model.md sections 3 and 18, decision 22.2).
//!
//! The handler's action depends only on the message and on how many times
//! it has been delivered; everything that follows from the action (is
//! there another delivery, when, is the message dead-lettered, with which
//! reason) is what the broker decides and conformance compares.

use crate::model::{
    Class, CrashAt, FaultKind, Millis, Permanent, Profile, Retry, Scenario, UNLIMITED_RECEIVES,
};

/// The most messages a conformance file may list: each gets its own
/// consumer channel, so that the real broker sees the model's unlimited
/// concurrency.
pub const MAX_MESSAGES: usize = 64;

/// What the handler does with one delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Succeeds and acknowledges.
    Ack,
    /// Fails transiently: `basic.nack` with requeue.
    Requeue,
    /// Fails permanently with `[delivery] permanent = "quarantine"`:
    /// `basic.reject` without requeue, so the broker dead-letters it.
    Reject,
    /// Succeeds, but the acknowledgement never reaches the broker: the
    /// consumer's channel closes with the delivery unacknowledged.
    LoseAck,
    /// The consumer dies during the delivery: its channel closes with the
    /// delivery unacknowledged.
    Crash,
}

impl Action {
    /// Whether the handler's effect commits.
    pub fn commits(self) -> bool {
        matches!(self, Action::Ack | Action::LoseAck)
    }
}

/// The queue a conformance run declares on the broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Queue {
    /// The model's delivery limit; `None`: no limit.
    pub delivery_limit: Option<u32>,
    /// Whether the queue is declared with `x-delivery-limit`: only when
    /// the file writes `max_receives`. A limit the file leaves to the
    /// profile's default is left to the broker's default too, so that
    /// the model's default is what the run checks.
    pub declare_limit: bool,
    /// Whether a dead-letter exchange routes to a dead-letter queue.
    pub dead_letter: bool,
    /// A classic queue (rabbitmq-classic) rather than a quorum queue.
    pub classic: bool,
}

/// The JetStream consumer a `nats://` run creates (modeled milliseconds;
/// the run scales them).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Consumer {
    /// MaxDeliver; `None`: no limit (-1).
    pub max_deliver: Option<u32>,
    /// AckWait.
    pub ack_wait: Millis,
    /// BackOff (empty: none).
    pub backoff: Vec<Millis>,
    /// Whether a failed delivery is nakked (else left unacknowledged).
    pub nak: bool,
    /// The nak's delay (0: a plain nak).
    pub nak_delay: Millis,
    /// MaxAckPending; `None`: no limit (-1).
    pub max_ack_pending: Option<u64>,
}

/// The file's one operator step, as conform drives it against RabbitMQ:
/// the dead-letter queue keeps its messages for the quarantine's
/// retention (a message TTL counted from entering it), and at the
/// model's inspection time conform reads what is left.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Inspection {
    /// `[quarantine] retention` (modeled ms); `None`: kept for ever.
    pub retention: Option<Millis>,
    /// `action = "purge"`: the messages read at the inspection are
    /// deleted (else `hold`: they stay).
    pub purge: bool,
    /// When the model's operator inspects (modeled ms); set from the
    /// model's run when the file is prepared ([`crate::conform::prepare`]).
    pub at: Millis,
}

/// One message of the file, as the publisher and the consumer see it.
#[derive(Debug, Clone)]
pub struct Planned {
    pub id: String,
    /// Modeled arrival time.
    pub at: Millis,
    faults: crate::model::Faults,
    permanent: Permanent,
}

impl Planned {
    /// The handler's action at the message's `receive`-th delivery
    /// (1-based, over its whole life): the first applying `fail` or
    /// `crash` in file order decides, a crash listed after an applying
    /// `lose_ack` does not apply (decision 22.2); then `lose_ack`.
    pub fn action(&self, receive: u64) -> Action {
        let applying = |f: &&crate::model::Fault| f.applies(receive, false);
        let mut lose_ack = false;
        for f in self.faults.iter().filter(applying) {
            match f.kind {
                FaultKind::Fail => {
                    return if f.class == Class::Permanent && self.permanent == Permanent::Quarantine
                    {
                        Action::Reject
                    } else {
                        Action::Requeue
                    };
                }
                FaultKind::Crash(_) if !lose_ack => return Action::Crash,
                FaultKind::Crash(_) => {}
                FaultKind::LoseAck => lose_ack = true,
            }
        }
        if lose_ack {
            Action::LoseAck
        } else {
            Action::Ack
        }
    }

    /// How long the handler runs at that delivery: a failing fault's
    /// `takes`, else nothing (the file has no service time).
    pub fn takes(&self, receive: u64) -> Millis {
        self.faults
            .iter()
            .filter(|f| f.applies(receive, false))
            .find(|f| f.kind == FaultKind::Fail)
            .and_then(|f| f.takes)
            .unwrap_or(0)
    }
}

/// A file's conformance run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// amqp://: the quorum queue.
    pub queue: Queue,
    /// `[workers] count = 1`: one consumer (prefetch 1) whose handler runs
    /// `service_time` (modeled ms) on every delivery; `None`: a consumer
    /// per message and no service time (the model's unlimited workers).
    pub one_consumer: Option<Millis>,
    /// rabbitmq-quorum's `broker_version`, to compare with the broker's.
    pub broker_version: Option<(u32, u32)>,
    /// nats://: the JetStream consumer (`None` for RabbitMQ).
    pub consumer: Option<Consumer>,
    /// amqp://: the operator's inspection of the dead-letter queue.
    pub inspection: Option<Inspection>,
    pub messages: Vec<Planned>,
}

/// Whose rules a comparison cites, and what the consumer reads as a
/// delivery's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rules {
    /// A RabbitMQ quorum queue: `x-delivery-count`.
    Quorum,
    /// A RabbitMQ classic queue: the `redelivered` flag (0 or 1).
    Classic,
    /// A JetStream consumer: the delivery count of the message's metadata.
    JetStream,
}

impl Plan {
    /// Whose rules a comparison of this run cites.
    pub fn rules(&self) -> Rules {
        match (&self.consumer, self.queue.classic) {
            (Some(_), _) => Rules::JetStream,
            (None, true) => Rules::Classic,
            (None, false) => Rules::Quorum,
        }
    }

    /// The durations the broker itself times (ack waits, a nak's delay),
    /// with what each is, for the time scale's check.
    pub fn broker_durations(&self) -> Vec<(Millis, String)> {
        let service = self
            .one_consumer
            .map(|s| (s, "[workers] service_time".to_string()));
        let Some(c) = &self.consumer else {
            let retention = self.inspection.as_ref().and_then(|i| i.retention);
            let retention = retention.map(|r| (r, "[quarantine] retention".to_string()));
            return service.into_iter().chain(retention).collect();
        };
        let mut out: Vec<(Millis, String)> = match c.backoff.is_empty() {
            true => vec![(c.ack_wait, "the ack wait (visibility_timeout)".into())],
            false => c
                .backoff
                .iter()
                .map(|&d| (d, "an `ack_backoff` value".into()))
                .collect(),
        };
        if c.nak && c.nak_delay > 0 {
            out.push((c.nak_delay, "the nak's delay (retry_interval)".into()));
        }
        out.extend(service);
        out
    }
}

/// Why a file cannot be checked against a broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The table or key of the file.
    pub what: String,
    pub why: String,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.why)
    }
}

/// A profile no live check exists for (SQS: conform drives no SQS, and
/// a local stand-in would check the stand-in, not SQS).
fn no_live_check(scenario: &Scenario) -> Result<(), Unsupported> {
    if scenario.guarantees.profile == Profile::SqsStandard {
        return Err(Unsupported {
            what: "[delivery] profile".to_string(),
            why: "\"sqs-standard\" has no live check: conform drives RabbitMQ (rabbitmq-quorum, \
                  rabbitmq-classic), NATS JetStream (nats-jetstream) and a Redis write-intent \
                  store; an SQS file is checked by its model alone (`scenario-run FILE`)"
                .to_string(),
        });
    }
    Ok(())
}

fn refuse(what: &str, why: &str) -> Result<Plan, Unsupported> {
    Err(Unsupported {
        what: what.to_string(),
        why: why.to_string(),
    })
}

/// The conformance run of `scenario` against RabbitMQ, or what keeps
/// the file from having one. The model's rules for `rabbitmq-quorum` are
/// those of a quorum queue: a file under another profile has no
/// RabbitMQ to compare with.
pub fn amqp(scenario: &Scenario) -> Result<Plan, Unsupported> {
    no_live_check(scenario)?;
    if !scenario.guarantees.profile.is_rabbitmq() {
        return refuse(
            "[delivery] profile",
            "an amqp:// broker checks the \"rabbitmq-quorum\" or \"rabbitmq-classic\" profile; \
             set one in the file",
        );
    }
    common(scenario)?;
    if scenario.flow.workers.is_some_and(|w| w.count != 1)
        || scenario.flow.ordering != crate::model::Ordering::None
    {
        return refuse(
            "[workers] / ordering",
            "conform runs one consumer channel per message, or one consumer for \
             `[workers] count = 1`; other pools and ordering are not driven",
        );
    }
    if scenario.guarantees.visibility_timeout.is_some() {
        return refuse(
            "[delivery] visibility_timeout",
            "RabbitMQ has no visibility timeout",
        );
    }
    if scenario.delivery.retry != Retry::Fixed(0) {
        return refuse(
            "[delivery] retry_interval / backoff",
            "a quorum queue requeues a failed delivery at once; a delayed retry needs a \
             topology (a delay queue) that conform does not build",
        );
    }
    let max = scenario.delivery.max_receives;
    Ok(Plan {
        queue: Queue {
            delivery_limit: (max != UNLIMITED_RECEIVES).then_some(max),
            declare_limit: scenario.delivery.max_receives_written,
            dead_letter: scenario.guarantees.quarantine_enabled,
            classic: scenario.guarantees.profile == Profile::RabbitmqClassic,
        },
        one_consumer: scenario.flow.workers.map(|w| w.service_time),
        broker_version: scenario.guarantees.broker_version,
        consumer: None,
        inspection: inspection(scenario)?,
        messages: planned(scenario),
    })
}

/// The inspection of a file with one `[[operator]]` step that holds or
/// purges, or why its steps cannot be driven: a redrive republishes
/// messages, which the application does, not the broker.
fn inspection(scenario: &Scenario) -> Result<Option<Inspection>, Unsupported> {
    let step = match scenario.operators.as_slice() {
        [] => return Ok(None),
        [step] => step,
        _ => {
            return Err(Unsupported {
                what: "[[operator]]".into(),
                why: format!(
                    "{} steps; conform drives one inspection of the dead-letter queue",
                    scenario.operators.len()
                ),
            });
        }
    };
    let purge = match step.action {
        crate::model::Action::Hold => false,
        crate::model::Action::Purge => true,
        _ => {
            return Err(Unsupported {
                what: "[[operator]] action".into(),
                why: format!(
                    "{:?}: a redrive republishes dead letters, which the application does; \
                     conform checks `hold` and `purge` (what the dead-letter queue kept)",
                    step.action.name()
                ),
            });
        }
    };
    if !scenario.guarantees.quarantine_enabled {
        return Err(Unsupported {
            what: "[[operator]]".into(),
            why: "with `[quarantine] enabled = false` there is no dead-letter queue to inspect"
                .into(),
        });
    }
    Ok(Some(Inspection {
        retention: scenario.quarantine_retention,
        purge,
        at: 0,
    }))
}

/// The conformance run of `scenario` against NATS JetStream: a stream and
/// a durable pull consumer with the file's MaxDeliver, AckWait and BackOff.
pub fn jetstream(scenario: &Scenario) -> Result<Plan, Unsupported> {
    no_live_check(scenario)?;
    let Some(js) = &scenario.guarantees.jetstream else {
        return refuse(
            "[delivery] profile",
            "a nats:// broker checks the \"nats-jetstream\" profile; set it in the file",
        );
    };
    common(scenario)?;
    if !scenario.operators.is_empty() {
        return refuse(
            "[[operator]]",
            "JetStream has no dead-letter queue to inspect: remove the operator's steps",
        );
    }
    if scenario.flow.workers.is_some() || scenario.flow.ordering != crate::model::Ordering::None {
        return refuse(
            "[workers] / ordering",
            "a JetStream run gives every delivery a handler of its own, the model's \
             unlimited workers",
        );
    }
    if !scenario.guarantees.quarantine_enabled {
        return refuse(
            "[quarantine] enabled",
            "JetStream always keeps the message and publishes its advisory; `enabled = false` \
             only says that nobody listens, which a broker cannot show",
        );
    }
    let nak = js.on_failure == crate::model::OnFailure::Nak;
    let nak_delay = match scenario.delivery.retry {
        Retry::Fixed(d) => d,
        _ => {
            return refuse(
                "[delivery] backoff",
                "a nak's delay is checked as a fixed retry_interval; the consumer would \
                 compute a backoff itself",
            );
        }
    };
    let max = scenario.delivery.max_receives;
    Ok(Plan {
        queue: Queue {
            delivery_limit: None,
            declare_limit: false,
            dead_letter: false,
            classic: false,
        },
        one_consumer: None,
        broker_version: None,
        inspection: None,
        consumer: Some(Consumer {
            max_deliver: (max != UNLIMITED_RECEIVES).then_some(max),
            ack_wait: scenario
                .guarantees
                .visibility_timeout
                .unwrap_or(crate::model::JETSTREAM_ACK_WAIT),
            backoff: js.ack_backoff.clone(),
            nak,
            nak_delay,
            max_ack_pending: js.max_ack_pending,
        }),
        messages: planned(scenario),
    })
}

/// What no conformance run can drive: time windows, generated traffic
/// and the engine's own flow machinery.
fn common(scenario: &Scenario) -> Result<(), Unsupported> {
    let checks: [(bool, &str, &str); 6] = [
        (
            !scenario.outages.is_empty(),
            "[[outage]]",
            "an outage is a window of modeled time; write its failures as `fail` faults",
        ),
        (
            !scenario.traffic.is_empty(),
            "[[traffic]]",
            "list each message with [[message]] (at most 64)",
        ),
        (
            scenario.flow.downstream.is_some(),
            "[downstream]",
            "a downstream's limit is the application's, not the broker's",
        ),
        (
            scenario.log.is_some(),
            "[log]",
            "a partitioned log has no broker here to conform to",
        ),
        (
            scenario.write.is_some(),
            "[write]",
            "writes to several sinks are the application's, not the broker's",
        ),
        (
            scenario.guarantees.dedup_mode != crate::model::DedupMode::Result,
            "[dedup] mode",
            "write intents are checked against a redis:// store",
        ),
    ];
    if let Some((_, what, why)) = checks.iter().find(|c| c.0) {
        return Err(Unsupported {
            what: what.to_string(),
            why: why.to_string(),
        });
    }
    if scenario.messages.len() > MAX_MESSAGES {
        return Err(Unsupported {
            what: "[[message]]".into(),
            why: format!(
                "{} messages; a conformance file lists at most {MAX_MESSAGES}",
                scenario.messages.len()
            ),
        });
    }
    if scenario.messages.is_empty() {
        return Err(Unsupported {
            what: "[[message]]".into(),
            why: "the file lists no message to publish".into(),
        });
    }
    if scenario
        .messages
        .iter()
        .flat_map(|m| m.faults.iter())
        .any(|f| matches!(f.kind, FaultKind::Crash(at) if at != CrashAt::BeforeEffect))
    {
        return Err(Unsupported {
            what: "crash at".into(),
            why: "only `before_effect` is checked: where the effect lands is the \
                  application's, and the broker sees the same closed channel"
                .into(),
        });
    }
    Ok(())
}

fn planned(scenario: &Scenario) -> Vec<Planned> {
    scenario
        .messages
        .iter()
        .map(|m| Planned {
            id: m.id.clone(),
            at: m.at,
            faults: m.faults.clone(),
            permanent: scenario.delivery.permanent,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Scenario {
        crate::scenario::load_str("t.toml", text).expect("valid").0
    }

    const QUORUM: &str = "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 3\n";

    #[test]
    fn the_first_applying_fail_or_crash_decides_and_a_crash_after_a_lost_ack_does_not() {
        let s = load(&format!(
            "{QUORUM}[[message]]\nid = \"a\"\nfaults = [{{ lose_ack = {{ first = 3 }} }}, \
             {{ crash = {{ first = 4 }}, at = \"before_effect\" }}, {{ fail = {{ first = 1 }} }}]\n\
             [[message]]\nid = \"b\"\nfaults = [{{ crash = {{ first = 1 }}, at = \"before_effect\" }}, \
             {{ fail = {{ first = 2 }} }}]\n"
        ));
        let plan = amqp(&s).unwrap();
        let a = &plan.messages[0];
        assert_eq!(
            a.action(1),
            Action::Requeue,
            "the fail listed last still decides"
        );
        assert_eq!(a.action(2), Action::LoseAck);
        assert_eq!(a.action(3), Action::LoseAck);
        assert_eq!(a.action(4), Action::Crash, "the lost ack no longer applies");
        assert_eq!(a.action(5), Action::Ack);
        let b = &plan.messages[1];
        assert_eq!(b.action(1), Action::Crash, "listed before the fail");
        assert_eq!(b.action(2), Action::Requeue);
        assert_eq!(b.action(3), Action::Ack);
    }

    #[test]
    fn a_permanent_failure_is_rejected_only_when_routed_to_quarantine() {
        let fault = "[[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" }, class = \"permanent\" }]\n";
        let retried = amqp(&load(&format!("{QUORUM}{fault}"))).unwrap();
        assert_eq!(retried.messages[0].action(9), Action::Requeue);
        let routed = amqp(&load(&format!(
            "{QUORUM}permanent = \"quarantine\"\n{fault}"
        )))
        .unwrap();
        assert_eq!(routed.messages[0].action(1), Action::Reject);
    }

    #[test]
    fn an_sqs_file_is_told_it_has_no_live_check() {
        let sqs = load(
            "[delivery]\nprofile = \"sqs-standard\"\nmax_receives = 2\n[[message]]\nid = \"m\"\n",
        );
        for refused in [amqp(&sqs).unwrap_err(), jetstream(&sqs).unwrap_err()] {
            assert!(
                refused
                    .to_string()
                    .contains("\"sqs-standard\" has no live check"),
                "{refused}"
            );
        }
    }

    #[test]
    fn the_queue_takes_the_limit_and_the_dead_letter_exchange_from_the_file() {
        let one = "[[message]]\nid = \"m\"\n";
        let plan = amqp(&load(&format!("{QUORUM}{one}"))).unwrap();
        assert_eq!(
            plan.queue,
            Queue {
                delivery_limit: Some(3),
                declare_limit: true,
                dead_letter: true,
                classic: false,
            }
        );
        let plan = amqp(&load(&format!(
            "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = \"unlimited\"\n\
             [quarantine]\nenabled = false\n{one}"
        )))
        .unwrap();
        assert_eq!(
            plan.queue,
            Queue {
                delivery_limit: None,
                declare_limit: true,
                dead_letter: false,
                classic: false,
            }
        );
        // A classic queue: no limit, and its type.
        let plan = amqp(&load(&format!(
            "[delivery]\nprofile = \"rabbitmq-classic\"\n{one}"
        )))
        .unwrap();
        assert_eq!(
            plan.queue,
            Queue {
                delivery_limit: None,
                declare_limit: false,
                dead_letter: true,
                classic: true,
            }
        );
        assert_eq!(plan.rules(), Rules::Classic);
        // A limit left to the profile's default is left to the broker's:
        // the model's 20 is checked, not declared.
        let plan = amqp(&load(&format!(
            "[delivery]\nprofile = \"rabbitmq-quorum\"\n{one}"
        )))
        .unwrap();
        assert_eq!(
            (plan.queue.delivery_limit, plan.queue.declare_limit),
            (Some(20), false)
        );
    }

    #[test]
    fn one_worker_is_one_consumer_with_its_service_time_and_the_version_is_kept() {
        let plan = amqp(&load(&format!(
            "{QUORUM}broker_version = \"3.10\"\n[workers]\ncount = 1\nservice_time = \"100ms\"\n\
             [[message]]\nid = \"m\"\n"
        )))
        .unwrap();
        assert_eq!(plan.one_consumer, Some(100));
        assert_eq!(plan.broker_version, Some((3, 10)));
        assert_eq!(
            plan.broker_durations(),
            [(100, "[workers] service_time".to_string())]
        );
        let plan = amqp(&load(&format!("{QUORUM}[[message]]\nid = \"m\"\n"))).unwrap();
        assert_eq!((plan.one_consumer, plan.broker_version), (None, None));
    }

    #[test]
    fn one_operator_step_that_holds_or_purges_is_an_inspection_and_the_rest_is_refused() {
        let file = |steps: &str| {
            load(&format!(
                "{QUORUM}[quarantine]\nretention = \"1s\"\n[[message]]\nid = \"m\"\n{steps}"
            ))
        };
        let hold = amqp(&file("[[operator]]\nwait = \"1s\"\naction = \"hold\"\n")).unwrap();
        assert_eq!(
            hold.inspection,
            Some(Inspection {
                retention: Some(1_000),
                purge: false,
                at: 0
            })
        );
        assert_eq!(
            hold.broker_durations(),
            [(1_000, "[quarantine] retention".to_string())],
            "the broker times the retention"
        );
        let purge = amqp(&file("[[operator]]\nwait = \"1s\"\naction = \"purge\"\n")).unwrap();
        assert!(purge.inspection.unwrap().purge);
        let refused = |steps: &str| amqp(&file(steps)).unwrap_err().what;
        assert_eq!(
            refused("[[operator]]\nwait = \"1s\"\naction = \"redrive_all\"\n"),
            "[[operator]] action"
        );
        assert_eq!(
            refused(
                "[[operator]]\nwait = \"1s\"\naction = \"hold\"\n\
                 [[operator]]\nwait = \"1s\"\naction = \"purge\"\n"
            ),
            "[[operator]]"
        );
        let without_queue = load(&format!(
            "{QUORUM}[quarantine]\nenabled = false\n[[message]]\nid = \"m\"\n\
             [[operator]]\nwait = \"1s\"\naction = \"hold\"\n"
        ));
        assert_eq!(amqp(&without_queue).unwrap_err().what, "[[operator]]");
        let no_step = amqp(&load(&format!("{QUORUM}[[message]]\nid = \"m\"\n"))).unwrap();
        assert_eq!(no_step.inspection, None);
        let js = load(
            "[delivery]\nprofile = \"nats-jetstream\"\nmax_receives = 3\n\
             [[message]]\nid = \"m\"\n[[operator]]\nwait = \"1s\"\naction = \"hold\"\n",
        );
        assert_eq!(jetstream(&js).unwrap_err().what, "[[operator]]");
    }

    #[test]
    fn what_no_broker_can_drive_is_refused_with_its_table() {
        let one = "[[message]]\nid = \"m\"\n";
        let refused = |text: String| amqp(&load(&text)).unwrap_err().what;
        assert_eq!(
            refused(format!(
                "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n{one}"
            )),
            "[delivery] profile"
        );
        assert_eq!(
            refused(format!("{QUORUM}retry_interval = \"1s\"\n{one}")),
            "[delivery] retry_interval / backoff"
        );
        assert_eq!(
            refused(format!(
                "{QUORUM}[[outage]]\nfrom = \"0s\"\nduration = \"1s\"\n{one}"
            )),
            "[[outage]]"
        );
        assert_eq!(
            refused(format!("{QUORUM}[workers]\ncount = 2\n{one}")),
            "[workers] / ordering"
        );
        assert_eq!(refused(QUORUM.to_string()), "[[message]]");
    }
}
