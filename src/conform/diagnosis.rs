//! Why a conformance run differs: the first cause among its differences
//! (the order of deliveries, a count, an outcome, a reason, a delivery
//! count header, a time beyond the allowance), the rule of docs/model.md
//! that decides it, the profile key that would explain it where one
//! would, and the differences that follow from it.

use serde::Serialize;

use super::compare::{Difference, End, Message, Rules};

/// What a file's run was checked with, for the hints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Settings {
    /// The broker's rules (quorum, classic, JetStream).
    #[serde(skip)]
    pub rules: Option<Rules>,
    /// The file's `broker_version`.
    pub broker_version: Option<(u32, u32)>,
    /// Whether the file writes `max_receives` (else the profile's default).
    pub limit_written: bool,
}

/// The kind of a first cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The messages were delivered in another order.
    Order,
    /// A message got another number of deliveries.
    Count,
    /// A message ended otherwise (acked, dead-lettered, dropped...).
    Outcome,
    /// A message was dead-lettered for another reason.
    Reason,
    /// A delivery carried another delivery count.
    CountHeader,
    /// Only times differ, beyond the allowance.
    Time,
    /// A store answered a consultation otherwise (Redis).
    Answer,
}

impl Cause {
    pub fn words(self) -> &'static str {
        match self {
            Cause::Order => "the order of deliveries",
            Cause::Count => "the number of deliveries",
            Cause::Outcome => "how a message ended",
            Cause::Reason => "the reason a message was dead-lettered",
            Cause::CountHeader => "a delivery's count",
            Cause::Time => "a time beyond the allowance",
            Cause::Answer => "a store's answer",
        }
    }
}

/// The first cause of a run that differs, and what follows from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    pub cause: Cause,
    /// The cause in words, with what each side did.
    pub what: String,
    /// The rule of docs/model.md that decides it.
    pub rule: String,
    /// The profile key that would explain it, and its value, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Indexes into the run's differences: those of the cause's kind (the
    /// first is `what`), then every other one, grouped under it.
    pub causing: Vec<usize>,
    pub following: Vec<usize>,
}

/// The deliveries of `messages` in time order (ties in message order,
/// then delivery order): the message of each.
fn sequence(messages: &[Message]) -> Vec<&str> {
    let mut all: Vec<(f64, usize, usize, &str)> = (messages.iter().enumerate())
        .flat_map(|(i, m)| {
            (m.deliveries.iter().enumerate()).map(move |(k, d)| (d.at, i, k, m.id.as_str()))
        })
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    all.into_iter().map(|(_, _, _, id)| id).collect()
}

fn kind_of(end: &End) -> std::mem::Discriminant<End> {
    std::mem::discriminant(end)
}

/// The first cause of `differences` between `model` and `broker` (none
/// when they conform), on a broker of `version` ("3.10.8").
pub fn diagnose(
    model: &[Message],
    broker: &[Message],
    differences: &[Difference],
    settings: Settings,
    version: &str,
) -> Option<Diagnosis> {
    if differences.is_empty() {
        return None;
    }
    let is = |d: &Difference, what: &str| d.what == what;
    let count_differs = differences.iter().any(|d| is(d, "deliveries"));
    let (seq_model, seq_broker) = (sequence(model), sequence(broker));
    let first_apart = seq_model.iter().zip(&seq_broker).position(|(a, b)| a != b);
    let ends_apart = |kind: bool| {
        model.iter().any(|m| {
            broker
                .iter()
                .find(|b| b.id == m.id)
                .is_some_and(|b| m.end != b.end && (kind_of(&m.end) != kind_of(&b.end)) == kind)
        })
    };
    let answer = |d: &Difference| d.what.ends_with(": store");
    let (cause, causing): (Cause, Vec<usize>) = if differences.iter().any(answer) {
        (Cause::Answer, pick(differences, answer))
    } else if !count_differs && first_apart.is_some() {
        (Cause::Order, Vec::new())
    } else if count_differs {
        (Cause::Count, pick(differences, |d| is(d, "deliveries")))
    } else if ends_apart(true) {
        (Cause::Outcome, pick(differences, |d| is(d, "end")))
    } else if ends_apart(false) {
        (Cause::Reason, pick(differences, |d| is(d, "end")))
    } else if differences
        .iter()
        .any(|d| d.what.starts_with("delivery ") && !d.what.ends_with(": time"))
    {
        (
            Cause::CountHeader,
            pick(differences, |d| {
                d.what.starts_with("delivery ") && !d.what.ends_with(": time")
            }),
        )
    } else {
        let first = (0..differences.len()).next().into_iter().collect();
        (Cause::Time, first)
    };
    // Every other difference is grouped under the first cause.
    let following = (0..differences.len())
        .filter(|i| causing.first() != Some(i))
        .collect();
    let rule = match (cause, settings.rules) {
        (Cause::Order, Some(Rules::Quorum)) => RULE_REQUEUE.to_string(),
        (Cause::Order, Some(Rules::Classic)) => RULE_REQUEUE_CLASSIC.to_string(),
        (Cause::Order, _) => RULE_ORDER.to_string(),
        _ => causing
            .first()
            .map_or_else(String::new, |&i| differences[i].rule.clone()),
    };
    let what = match cause {
        Cause::Order => {
            let i = first_apart.unwrap_or(0);
            format!(
                "delivery {} of the run: the model delivers \"{}\", the broker \"{}\" \
                 (model: {}; broker: {})",
                i + 1,
                seq_model[i],
                seq_broker[i],
                runs(&seq_model),
                runs(&seq_broker)
            )
        }
        _ => causing
            .first()
            .map(|&i| {
                let d = &differences[i];
                format!(
                    "message \"{}\", {}: model {}, broker {}",
                    d.message, d.what, d.model, d.broker
                )
            })
            .unwrap_or_default(),
    };
    let minor = version
        .split('.')
        .take(2)
        .map(|p| p.parse::<u32>().ok())
        .collect::<Option<Vec<u32>>>()
        .filter(|v| v.len() == 2);
    let quorum = settings.rules == Some(Rules::Quorum);
    let key = match (cause, quorum, settings.broker_version, minor) {
        (Cause::Order, true, None, Some(v)) if (v[0], v[1]) < (4, 3) => Some(format!(
            "RabbitMQ {version} returns a nacked message to the head of a quorum queue that has \
             a delivery limit, and to the back of one without; the model follows its written \
             rule unless it knows the version: set broker_version = \"{}.{}\" in [delivery]",
            v[0], v[1]
        )),
        (Cause::Count | Cause::Outcome, true, None, Some(v))
            if !settings.limit_written && v[0] < 4 =>
        {
            Some(format!(
                "max_receives is left to the profile's default, RabbitMQ 4.x's 20; RabbitMQ \
                 {version} has no default delivery limit: set broker_version = \"{}.{}\" in \
                 [delivery], or write max_receives",
                v[0], v[1]
            ))
        }
        _ => None,
    };
    Some(Diagnosis {
        cause,
        what,
        rule,
        key,
        causing,
        following,
    })
}

fn pick(differences: &[Difference], keep: impl Fn(&Difference) -> bool) -> Vec<usize> {
    (0..differences.len())
        .filter(|&i| keep(&differences[i]))
        .collect()
}

/// A sequence of messages as runs: "poison x6, order-2, order-3".
fn runs(seq: &[&str]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seq.len() && out.len() < 12 {
        let n = seq[i..].iter().take_while(|&&s| s == seq[i]).count();
        out.push(match n {
            1 => seq[i].to_string(),
            n => format!("{} x{n}", seq[i]),
        });
        i += n;
    }
    if i < seq.len() {
        out.push("...".into());
    }
    out.join(", ")
}

const RULE_REQUEUE: &str = "docs/model.md section 21, rabbitmq-quorum 2 and 3: a failed delivery \
                            is requeued at once, behind what is due (ahead of it where \
                            broker_version says so)";
const RULE_REQUEUE_CLASSIC: &str = "docs/model.md section 21, rabbitmq-classic 2: a failed \
                                    delivery is requeued at once to its original position";
const RULE_ORDER: &str = "docs/model.md section 21, nats-jetstream 3, 4 and 9: redeliveries by \
                          ack wait and nak delay, deliveries held by MaxAckPending";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conform::compare::compare;
    use crate::conform::compare::fixtures::{limit, message};

    /// rabbitmq-08 without broker_version against 3.10.8: the model puts
    /// order-2 behind the first nack, the broker returns poison to the
    /// head. The cause is the order, with the key to set; the time lines
    /// follow from it.
    #[test]
    fn a_requeue_to_the_head_is_named_as_the_order_with_broker_version_to_set() {
        let t = |k: usize| k as f64 * 100.0;
        let model = vec![
            message("poison", &[0.0, 300.0, 400.0, 500.0, 600.0, 700.0], limit()),
            message("order-2", &[100.0], End::Acked),
            message("order-3", &[200.0], End::Acked),
        ];
        let broker = vec![
            message("poison", &(0..6).map(t).collect::<Vec<_>>(), limit()),
            message("order-2", &[600.0], End::Acked),
            message("order-3", &[700.0], End::Acked),
        ];
        let differences = compare(&model, &broker, 0.0, Rules::Quorum);
        assert!(differences.len() > 3);
        let settings = Settings {
            rules: Some(Rules::Quorum),
            broker_version: None,
            limit_written: true,
        };
        let d = diagnose(&model, &broker, &differences, settings, "3.10.8").unwrap();
        assert_eq!(d.cause, Cause::Order);
        assert!(
            d.what
                .contains("the model delivers \"order-2\", the broker \"poison\""),
            "{}",
            d.what
        );
        assert!(
            d.what.contains("broker: poison x6, order-2, order-3"),
            "{}",
            d.what
        );
        assert!(d.rule.contains("rabbitmq-quorum 2 and 3"));
        assert!(
            d.key
                .as_deref()
                .unwrap()
                .contains("broker_version = \"3.10\"")
        );
        assert_eq!(d.following.len(), differences.len());
        let with_version = Settings {
            broker_version: Some((4, 2)),
            ..settings
        };
        let d = diagnose(&model, &broker, &differences, with_version, "3.10.8").unwrap();
        assert_eq!(d.key, None, "the file says its version: no key to suggest");
    }

    /// A default limit imposed on a broker without one: the count first,
    /// the end following, and the key.
    #[test]
    fn a_count_from_a_default_limit_names_the_default_and_the_key() {
        let times: Vec<f64> = (0..22).map(|k| k as f64).collect();
        let model = vec![message("poison", &times[..21], limit())];
        let broker = vec![message("poison", &times, End::Acked)];
        let differences = compare(&model, &broker, 0.0, Rules::Quorum);
        let settings = Settings {
            rules: Some(Rules::Quorum),
            broker_version: None,
            limit_written: false,
        };
        let d = diagnose(&model, &broker, &differences, settings, "3.10.8").unwrap();
        assert_eq!(d.cause, Cause::Count);
        assert_eq!(
            d.what,
            "message \"poison\", deliveries: model 21, broker 22"
        );
        assert!(d.rule.contains("rabbitmq-quorum 1"), "{}", d.rule);
        assert!(d.key.as_deref().unwrap().contains("RabbitMQ 4.x's 20"));
        assert!(
            differences[d.following[0]].what == "end",
            "{:?}",
            d.following
        );
        // Written: no key.
        let written = Settings {
            limit_written: true,
            ..settings
        };
        assert_eq!(
            diagnose(&model, &broker, &differences, written, "3.10.8")
                .unwrap()
                .key,
            None
        );
    }

    #[test]
    fn times_alone_are_a_time_beyond_the_allowance() {
        let model = vec![message("m", &[0.0, 10.0], End::Acked)];
        let broker = vec![message("m", &[0.0, 500.0], End::Acked)];
        let differences = compare(&model, &broker, 0.0, Rules::Quorum);
        let d = diagnose(&model, &broker, &differences, Settings::default(), "3.10.8").unwrap();
        assert_eq!(d.cause, Cause::Time);
        assert!(
            d.what.starts_with("message \"m\", delivery 2: time"),
            "{}",
            d.what
        );
        assert_eq!(
            diagnose(&model, &model, &[], Settings::default(), "3.10.8"),
            None
        );
    }
}
