//! The model's side of a conformance run: the file's run, read per
//! message as a broker would show it.

use super::compare::{Delivery, End, Message, TimeScale};
use super::plan::{Action, Plan};
use crate::engine::Detail;
use crate::engine::{self, Recorder};
use crate::model::{Millis, Scenario};

/// The model's run of a file for conformance.
#[derive(Debug, Clone)]
pub struct Modeled {
    /// Per message, with times in modeled milliseconds (scale with
    /// [`Modeled::scaled`]).
    pub messages: Vec<Message>,
    /// The run's last event.
    pub end: Millis,
    /// The shortest nonzero duration the file gives (an arrival time, a
    /// handler's `takes`), and what it is.
    pub shortest: Option<(Millis, String)>,
}

/// Runs the model on `scenario` and reads each message of `plan`.
pub fn modeled(scenario: &Scenario, plan: &Plan) -> Result<Modeled, String> {
    let outcome = engine::run(scenario, Recorder::All).map_err(|e| e.to_string())?;
    let mut messages: Vec<Message> = plan
        .messages
        .iter()
        .map(|p| Message {
            id: p.id.clone(),
            deliveries: Vec::new(),
            end: End::Queued,
            end_at: None,
            publish_lag: None,
        })
        .collect();
    let mut end = 0;
    for t in &outcome.transitions {
        end = end.max(t.time);
        let Some(m) = t.message else { continue };
        let Some(message) = messages.get_mut(m as usize) else {
            continue;
        };
        let planned = &plan.messages[m as usize];
        match t.detail {
            Detail::Delivered { total_receives, .. } => message.deliveries.push(Delivery {
                at: t.time as f64,
                delivery_count: u64::from(total_receives) - 1,
                action: planned.action(u64::from(total_receives)),
            }),
            Detail::Acked => {
                message.end = End::Acked;
                message.end_at = Some(t.time as f64);
            }
            Detail::Quarantined { .. } => {
                let rejected = message
                    .deliveries
                    .last()
                    .is_some_and(|d| d.action == Action::Reject);
                message.end_at = Some(t.time as f64);
                if plan.consumer.is_some() {
                    // JetStream keeps it in the stream with an advisory.
                    let advisory = if rejected {
                        "terminated"
                    } else {
                        "max_deliveries"
                    };
                    message.end = End::Advisory {
                        advisory: advisory.into(),
                    };
                    continue;
                }
                message.end = End::DeadLettered {
                    reason: if rejected {
                        "rejected"
                    } else {
                        "delivery_limit"
                    }
                    .into(),
                };
                message.end_at = Some(t.time as f64);
            }
            Detail::Dropped { .. } => {
                message.end = End::Dropped;
                message.end_at = None;
            }
            _ => {}
        }
    }
    let mut shortest: Option<(Millis, String)> = None;
    let mut consider = |d: Millis, what: String| {
        if d > 0 && shortest.as_ref().is_none_or(|(s, _)| d < *s) {
            shortest = Some((d, what));
        }
    };
    let mut arrivals: Vec<(Millis, &str)> = plan
        .messages
        .iter()
        .map(|p| (p.at, p.id.as_str()))
        .collect();
    arrivals.sort();
    for pair in arrivals.windows(2) {
        consider(
            pair[1].0 - pair[0].0,
            format!("the gap before message {:?} arrives", pair[1].1),
        );
    }
    if let Some(&(first, id)) = arrivals.first() {
        consider(first, format!("message {id:?}'s `at`"));
    }
    for (d, what) in plan.broker_durations() {
        consider(d, what);
    }
    for (p, m) in plan.messages.iter().zip(&messages) {
        for d in &m.deliveries {
            let takes = p.takes(d.delivery_count + 1);
            consider(takes, format!("message {:?}'s `takes`", p.id));
        }
    }
    Ok(Modeled {
        messages,
        end,
        shortest,
    })
}

impl Modeled {
    /// The messages with their times in real milliseconds.
    pub fn scaled(&self, scale: TimeScale) -> Vec<Message> {
        self.messages
            .iter()
            .map(|m| Message {
                id: m.id.clone(),
                deliveries: m
                    .deliveries
                    .iter()
                    .map(|d| Delivery {
                        at: d.at / scale.0 as f64,
                        ..d.clone()
                    })
                    .collect(),
                end: m.end.clone(),
                end_at: m.end_at.map(|t| t / scale.0 as f64),
                publish_lag: None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conform::plan;

    fn run(text: &str) -> Modeled {
        let s = crate::scenario::load_str("t.toml", text).expect("valid").0;
        let plan = plan::amqp(&s).expect("supported");
        modeled(&s, &plan).expect("runs")
    }

    #[test]
    fn a_limit_of_five_gives_six_deliveries_each_counting_the_returns_before_it() {
        let m = run(
            "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 5\n\
             [[message]]\nid = \"poison\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
             [[message]]\nid = \"ok\"\nat = \"200ms\"\n",
        );
        let poison = &m.messages[0];
        let counts: Vec<u64> = poison.deliveries.iter().map(|d| d.delivery_count).collect();
        assert_eq!(counts, [0, 1, 2, 3, 4, 5]);
        assert!(poison.deliveries.iter().all(|d| d.at == 0.0));
        assert_eq!(
            poison.end,
            End::DeadLettered {
                reason: "delivery_limit".into()
            }
        );
        assert_eq!(m.messages[1].end, End::Acked);
        assert_eq!(m.messages[1].end_at, Some(200.0));
        assert_eq!(m.end, 200);
        assert_eq!(
            m.shortest,
            Some((200, "the gap before message \"ok\" arrives".into()))
        );
        let scaled = m.scaled(TimeScale(4));
        assert_eq!(scaled[1].deliveries[0].at, 50.0);
    }

    #[test]
    fn a_rejected_permanent_failure_and_a_drop_read_as_the_broker_shows_them() {
        let m = run(
            "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 5\n\
             permanent = \"quarantine\"\n\
             [[message]]\nid = \"bad\"\nfaults = [{ fail = { first = 1 }, class = \"permanent\" }]\n",
        );
        assert_eq!(m.messages[0].deliveries.len(), 1);
        assert_eq!(
            m.messages[0].end,
            End::DeadLettered {
                reason: "rejected".into()
            }
        );
        let m = run(
            "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 1\n\
             [quarantine]\nenabled = false\n\
             [[message]]\nid = \"p\"\nfaults = [{ crash = { first = 9 }, at = \"before_effect\" }]\n",
        );
        assert_eq!(
            m.messages[0].deliveries.len(),
            2,
            "a limit of 1: two deliveries"
        );
        assert_eq!(m.messages[0].deliveries[1].action, Action::Crash);
        assert_eq!(m.messages[0].end, End::Dropped);
    }
}
