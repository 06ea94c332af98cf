//! The scenario's settings as (name, value) rows, named as in the file:
//! what the reports' parameters table shows.

use serde_json::{Value as Json, json};

use crate::duration::format as dur;
use crate::model::{Action, Permanent, Profile, Retry, Scenario, Selector};

/// The settings, named as in the file: the policy, the messages and
/// traffic, the outages, the operator steps.
pub fn parameters(scenario: &Scenario) -> Json {
    let mut p = policy_parameters(scenario);
    p.extend(message_parameters(scenario));
    p.extend(operator_parameters(scenario));
    Json::Array(
        p.into_iter()
            .map(|(name, value)| json!({ "name": name, "value": value }))
            .collect(),
    )
}

fn policy_parameters(scenario: &Scenario) -> Vec<(String, String)> {
    let mut p: Vec<(String, String)> = vec![
        ("seed".into(), scenario.seed.to_string()),
        ("delivery.queue".into(), scenario.delivery.queue.clone()),
        (
            "delivery.max_receives".into(),
            scenario.delivery.max_receives.to_string(),
        ),
    ];
    let guarantees = &scenario.guarantees;
    if guarantees.profile != Profile::Model {
        p.push((
            "delivery.profile".into(),
            guarantees.profile.as_str().into(),
        ));
    }
    if let Some((major, minor)) = guarantees.broker_version {
        p.push(("delivery.broker_version".into(), format!("{major}.{minor}")));
    }
    // `ack_backoff` replaces the ack wait (JetStream's BackOff).
    let backoff = guarantees
        .jetstream
        .as_ref()
        .is_some_and(|js| !js.ack_backoff.is_empty());
    if let Some(vt) = guarantees.visibility_timeout.filter(|_| !backoff) {
        p.push(("delivery.visibility_timeout".into(), dur(vt)));
    }
    if let Some(js) = &guarantees.jetstream {
        if !js.ack_backoff.is_empty() {
            let values: Vec<String> = js.ack_backoff.iter().map(|&d| dur(d)).collect();
            p.push(("delivery.ack_backoff".into(), values.join(", ")));
        }
        p.push(("delivery.on_failure".into(), js.on_failure.as_str().into()));
        p.push((
            "delivery.max_ack_pending".into(),
            js.max_ack_pending
                .map_or("unlimited".to_string(), |n| n.to_string()),
        ));
    }
    if let Some(sqs) = guarantees.sqs {
        if let Some(h) = sqs.heartbeat {
            p.push(("delivery.visibility_heartbeat".into(), dur(h)));
        }
        if sqs.change_visibility {
            p.push(("delivery.on_failure".into(), "change_visibility".into()));
        }
    }
    // Under sqs-standard (unless the handler changes the visibility), and
    // for a JetStream consumer that does not nak, a failed delivery waits
    // for its timeout: no retry delay applies.
    let timed_retry =
        guarantees.sqs.is_some_and(|s| !s.change_visibility) || scenario.waits_for_ack_wait(false);
    match scenario.delivery.retry {
        _ if timed_retry => {}
        Retry::Fixed(d) => p.push(("delivery.retry_interval".into(), dur(d))),
        Retry::Backoff { base, cap, jitter } => p.push((
            "delivery.backoff".into(),
            format!(
                "base {}, cap {}, jitter {}",
                dur(base),
                cap.map_or("none".to_string(), dur),
                serde_json::to_value(jitter)
                    .ok()
                    .and_then(|j| j.as_str().map(str::to_string))
                    .unwrap_or_default()
            ),
        )),
    }
    p.push((
        "delivery.permanent".into(),
        match scenario.delivery.permanent {
            Permanent::Retry => "retry",
            Permanent::Quarantine => "quarantine",
        }
        .into(),
    ));
    p.push((
        "quarantine.retention".into(),
        scenario
            .quarantine_retention
            .map_or("never expires".to_string(), dur),
    ));
    p.push((
        "dedup.result_retention".into(),
        match scenario.dedup_retention {
            None => "off".to_string(),
            Some(u64::MAX) => "never expires".to_string(),
            Some(r) => dur(r),
        },
    ));
    p
}

fn message_parameters(scenario: &Scenario) -> Vec<(String, String)> {
    let mut p = Vec::new();
    p.push(("messages".into(), scenario.message_count().to_string()));
    for m in &scenario.messages {
        let faults: Vec<String> = m.faults.iter().map(|f| fault(scenario, f)).collect();
        let mut v = format!("at {}, key {}", dur(m.at), m.key);
        if !faults.is_empty() {
            v.push_str(&format!("; {}", faults.join("; ")));
        }
        p.push((format!("message {}", m.id), v));
    }
    for (i, t) in scenario.traffic.iter().enumerate() {
        let mut v = format!(
            "{} messages over {}, ids {}1..{}{}",
            t.count,
            dur(t.over),
            t.id_prefix,
            t.id_prefix,
            t.count
        );
        for f in t.faults.iter() {
            v.push_str(&format!("; {}", fault(scenario, f)));
        }
        p.push((format!("traffic {}", i + 1), v));
    }
    for (i, o) in scenario.outages.iter().enumerate() {
        p.push((
            format!("outage {}", i + 1),
            format!("from {} for {}", dur(o.from), dur(o.duration)),
        ));
    }
    p
}

fn operator_parameters(scenario: &Scenario) -> Vec<(String, String)> {
    let mut p = Vec::new();
    for (i, op) in scenario.operators.iter().enumerate() {
        let action = match &op.action {
            Action::Redrive(only) => format!(
                "redrive only {}",
                only.iter()
                    .map(|m| scenario.message_id(*m).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            a => a.name().to_string(),
        };
        let identity = match op.identity {
            crate::model::Identity::Stable => "stable",
            crate::model::Identity::New => "new",
        };
        p.push((
            format!("operator {}", i + 1),
            format!(
                "wait {}{}, {action}, identity {identity}",
                dur(op.wait),
                if op.repair { ", repair" } else { "" }
            ),
        ));
    }
    p
}

fn fault(scenario: &Scenario, f: &crate::model::Fault) -> String {
    let what = match f.kind {
        crate::model::FaultKind::Fail => "fail",
        crate::model::FaultKind::LoseAck => "lose_ack",
        crate::model::FaultKind::Crash(_) => "crash",
    };
    let when = match f.selector {
        Selector::First(n) => format!("first {n}"),
        Selector::UntilRepair => "until repair".to_string(),
    };
    match f.kind {
        crate::model::FaultKind::Fail => format!(
            "{what} {when}: {} ({})",
            scenario.reasons[f.reason as usize],
            f.class.as_str()
        ),
        crate::model::FaultKind::LoseAck => format!("{what} {when}"),
        crate::model::FaultKind::Crash(at) => format!("{what} {when} {}", at.as_str()),
    }
}
