//! The JSON form of a run. Times are integer milliseconds; field order is
//! fixed, so the same run always gives the same bytes.

use serde_json::{Map, Value as Json, json};

use crate::engine::{Detail, Outcome};
use crate::expect::{Verdict, describe};
use crate::model::{Check, MessageIndex, Scenario, State, Target, Value};
use crate::report::text;

fn value(v: &Value) -> Json {
    match v {
        Value::Count(n) => json!(n),
        Value::Time(ms) => json!(ms),
        Value::Text(s) => json!(s),
        Value::Never => Json::Null,
    }
}

fn check(c: &Check) -> Json {
    match c {
        Check::Equals(v) => json!({ "equals": value(v) }),
        Check::AtLeast(v) => json!({ "at_least": value(v) }),
        Check::AtMost(v) => json!({ "at_most": value(v) }),
        Check::Between(a, b) => json!({ "between": [value(a), value(b)] }),
        Check::Occurs => json!({ "occurs": true }),
    }
}

pub fn expectations(s: &Scenario, verdicts: &[Verdict]) -> Json {
    Json::Array(
        verdicts
            .iter()
            .map(|v| {
                let e = &s.expectations[v.index];
                let expected = match &e.target {
                    Target::Event { never, .. } => json!({ "occurs": !never }),
                    _ => check(&e.check),
                };
                json!({
                    "expectation": describe(s, e),
                    "expected": expected,
                    "actual": value(&v.actual),
                    "passed": v.passed,
                })
            })
            .collect(),
    )
}

pub fn snapshot(s: &Scenario, o: &Outcome) -> Json {
    Json::Array(
        (0..o.messages.len())
            .map(|m| {
                let r = text::row(s, o, m);
                let envelope = envelope(s, o, m);
                json!({
                    "id": r.id,
                    "key": r.key,
                    "state": r.state.as_str(),
                    "last_reason": r.last_reason,
                    "cycle": r.cycle,
                    "cycle_receives": r.cycle_receives,
                    "total_receives": r.total_receives,
                    "effects": r.effects,
                    "dedup_hits": r.dedup_hits,
                    "quarantined_at": r.quarantined_at,
                    "quarantine_age": r.age,
                    "envelope": envelope,
                })
            })
            .collect(),
    )
}

/// The diagnostic record a message carries while in quarantine (and after
/// it expires or is purged): nothing changes it between entry and exit.
fn envelope(s: &Scenario, o: &Outcome, m: usize) -> Json {
    let st = &o.messages[m];
    if !matches!(
        st.state,
        State::Quarantined | State::Expired | State::Purged
    ) {
        return Json::Null;
    }
    let m32 = m as MessageIndex;
    json!({
        "queue": s.delivery.queue,
        "quarantined_at": st.quarantined_at,
        "reason": st.last_reason().map(|r| s.reasons[r as usize].clone()),
        "class": st.last_class.as_str(),
        "cycle": st.cycle,
        "cycle_receives": st.cycle_receives,
        "total_receives": st.total_receives,
        "key": s.key_name(o.key(s, m32)),
        "first_delivery": s.arrival(m32),
        "payload": s.payload(m32).map_or(Json::Null, |p| serde_json::to_value(p).unwrap_or(Json::Null)),
    })
}

pub fn transitions(s: &Scenario, o: &Outcome) -> Json {
    Json::Array(
        o.transitions
            .iter()
            .map(|t| {
                let mut obj = Map::new();
                obj.insert("time".into(), json!(t.time));
                obj.insert(
                    "message".into(),
                    t.message.map_or(Json::Null, |m| json!(s.message_id(m))),
                );
                obj.insert("kind".into(), json!(t.detail.kind().as_str()));
                let extra = match t.detail {
                    Detail::Delivered {
                        cycle,
                        cycle_receives,
                        total_receives,
                    } => json!({ "cycle": cycle, "cycle_receives": cycle_receives, "total_receives": total_receives }),
                    Detail::Failed { reason, class } | Detail::Quarantined { reason, class, .. } => {
                        let mut v = json!({ "reason": s.reasons[reason as usize], "class": class.as_str() });
                        if let Detail::Quarantined { depth, .. } = t.detail {
                            v["dlq_depth"] = json!(depth);
                        }
                        v
                    }
                    Detail::Committed { key, effect } => json!({ "key": s.key_name(key), "effect": effect }),
                    Detail::DedupHit { key, expires_at } => {
                        json!({ "key": s.key_name(key), "expires_at": expires_at })
                    }
                    Detail::RetryScheduled { delay, due } => json!({ "delay": delay, "due": due }),
                    Detail::Inspected { step, depth } => json!({ "step": step, "dlq_depth": depth }),
                    Detail::Expired { age } => json!({ "age": age }),
                    Detail::Redriven { cycle, key } => json!({ "cycle": cycle, "key": s.key_name(key) }),
                    Detail::RedriveSkipped { state } => json!({ "state": state.as_str() }),
                    Detail::AckLost | Detail::Acked | Detail::Repaired | Detail::Purged => json!({}),
                };
                if let Json::Object(extra) = extra {
                    obj.extend(extra);
                }
                Json::Object(obj)
            })
            .collect(),
    )
}

pub fn ledger(s: &Scenario, o: &Outcome) -> Json {
    Json::Array(
        o.ledger
            .iter()
            .map(|e| {
                json!({
                    "time": e.time,
                    "message": s.message_id(e.message),
                    "key": s.key_name(e.key),
                    "intent": s.intent_name(e.intent),
                    "cycle": e.cycle,
                })
            })
            .collect(),
    )
}

pub fn totals(o: &Outcome) -> Json {
    serde_json::to_value(o.totals).unwrap_or(Json::Null)
}
