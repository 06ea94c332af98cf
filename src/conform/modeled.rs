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
    /// handler's `takes`, the time between a dead letter's expiry and
    /// the operator's inspection), and what it is.
    pub shortest: Option<(Millis, String)>,
    /// When the operator's (only) step inspects the dead-letter queue.
    pub inspected_at: Option<Millis>,
    /// A dead letter whose retention ends at the very instant of the
    /// inspection: which one, since no broker run can tell the two
    /// orders apart.
    pub expires_at_inspection: Option<String>,
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
            x_death_count: None,
        })
        .collect();
    let mut end = 0;
    let mut inspected_at = None;
    // Per message, when it last entered the dead-letter queue.
    let mut dead_lettered: Vec<Option<Millis>> = vec![None; messages.len()];
    for t in &outcome.transitions {
        end = end.max(t.time);
        if let Detail::Inspected { step: 1, .. } = t.detail {
            inspected_at = Some(t.time);
        }
        let Some(m) = t.message else { continue };
        let Some(message) = messages.get_mut(m as usize) else {
            continue;
        };
        let planned = &plan.messages[m as usize];
        match t.detail {
            Detail::Delivered { total_receives, .. } => message.deliveries.push(Delivery {
                at: t.time as f64,
                // A classic queue only flags a redelivery.
                delivery_count: match plan.queue.classic {
                    true => u64::from(total_receives > 1),
                    false => u64::from(total_receives) - 1,
                },
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
                // One dead-lettering per cycle, and conform drives one
                // cycle: the entry's count is 1.
                message.x_death_count = Some(1);
                message.end = End::DeadLettered {
                    reason: if rejected {
                        "rejected"
                    } else {
                        "delivery_limit"
                    }
                    .into(),
                };
                dead_lettered[m as usize] = Some(t.time);
            }
            Detail::Expired { .. } => {
                if let End::DeadLettered { reason } = &message.end {
                    message.end = End::Expired {
                        reason: reason.clone(),
                    };
                }
            }
            Detail::Purged => {
                if let End::DeadLettered { reason } = &message.end {
                    message.end = End::Purged {
                        reason: reason.clone(),
                    };
                }
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
    // A dead letter's expiry and the inspection must lie far enough
    // apart for the broker's order of the two to be the model's.
    let mut expires_at_inspection = None;
    let retention = plan.inspection.as_ref().and_then(|i| i.retention);
    if let (Some(inspected), Some(retention)) = (inspected_at, retention) {
        for (p, entered) in plan.messages.iter().zip(&dead_lettered) {
            let Some(entered) = entered else { continue };
            let expiry = entered.saturating_add(retention);
            if expiry == inspected {
                expires_at_inspection.get_or_insert_with(|| p.id.clone());
            }
            consider(
                expiry.abs_diff(inspected),
                format!(
                    "the time between message {:?}'s dead-letter expiry ({}) and the \
                     operator's inspection ({})",
                    p.id,
                    crate::duration::format(expiry),
                    crate::duration::format(inspected),
                ),
            );
        }
    }
    Ok(Modeled {
        messages,
        end,
        shortest,
        inspected_at,
        expires_at_inspection,
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
                x_death_count: m.x_death_count,
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

    const RETAINED: &str = "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 2\n\
         [quarantine]\nretention = \"1s\"\n\
         [[message]]\nid = \"fast\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"slow\"\nfaults = [{ fail = { until = \"repair\" }, takes = \"500ms\" }]\n";

    #[test]
    fn the_inspection_expires_by_the_time_since_entering_the_dead_letter_queue() {
        let m = run(&format!(
            "{RETAINED}[[operator]]\nwait = \"600ms\"\naction = \"hold\"\n"
        ));
        assert_eq!(m.inspected_at, Some(2_100));
        let limit = || "delivery_limit".to_string();
        assert_eq!(m.messages[0].end, End::Expired { reason: limit() });
        assert_eq!(
            m.messages[0].end_at,
            Some(0.0),
            "the time it was dead-lettered"
        );
        assert_eq!(m.messages[1].end, End::DeadLettered { reason: limit() });
        assert_eq!(m.messages[1].end_at, Some(1_500.0));
        // `slow`'s expiry at 2.5 s is the nearest to the inspection.
        let (gap, what) = m.shortest.clone().unwrap();
        assert_eq!(gap, 400, "{what}");
        assert!(what.contains("\"slow\"'s dead-letter expiry"), "{what}");
        assert_eq!(m.expires_at_inspection, None);
        let purged = run(&format!(
            "{RETAINED}[[operator]]\nwait = \"600ms\"\naction = \"purge\"\n"
        ));
        assert_eq!(purged.messages[0].end, End::Expired { reason: limit() });
        assert_eq!(purged.messages[1].end, End::Purged { reason: limit() });
    }

    #[test]
    fn an_expiry_at_the_inspection_s_instant_is_named() {
        // `fast` is dead-lettered at 0, the queue drains at 1.5 s and the
        // operator looks at once: a retention of 1.5 s ends on that
        // instant.
        let text = RETAINED.replace("retention = \"1s\"", "retention = \"1500ms\"");
        let m = run(&format!(
            "{text}[[operator]]\nwait = \"0ms\"\naction = \"hold\"\n"
        ));
        assert_eq!(m.inspected_at, Some(1_500));
        assert_eq!(m.expires_at_inspection.as_deref(), Some("fast"));
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
