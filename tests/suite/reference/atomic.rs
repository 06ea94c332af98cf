//! The reference for the first stage (sections 1-10): every delivery is
//! atomic and workers are unlimited, so a delivery runs the steps of
//! section 3 one after the other at one instant.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value as Json, json};

use super::{Fault, Ms, Run, Selector, State, read, retry_delay};

#[derive(Default)]
struct Totals {
    deliveries: u64,
    acked: u64,
    effects: u64,
    duplicated_effects: u64,
    dedup_hits: u64,
    retry_delay_paid: Ms,
    max_dlq_depth: u64,
    quarantine_entries: u64,
    expired: u64,
    purged: u64,
}

/// Runs the scenario file `text` by the model's rules (sections 1-10:
/// deliveries are atomic, workers unlimited).
pub fn run(text: &str) -> Run {
    let mut model = read(text);
    let mut rng = ChaCha8Rng::seed_from_u64(model.seed);
    let mut out: Vec<Json> = Vec::new();
    let mut totals = Totals::default();
    // Pending deliveries: (time, sequence, message), earliest first.
    let mut pending: BinaryHeap<Reverse<(Ms, u64, usize)>> = BinaryHeap::new();
    let mut sequence = 0u64;
    for (m, msg) in model.messages.iter().enumerate() {
        pending.push(Reverse((msg.at, sequence, m)));
        sequence += 1;
    }
    // The quarantine in order of entry; the store: key -> expires_at;
    // effects per intent.
    let mut dlq: Vec<usize> = Vec::new();
    let mut store: HashMap<String, Ms> = HashMap::new();
    let mut effects_of: HashMap<String, u64> = HashMap::new();
    let ids: Vec<String> = model.messages.iter().map(|m| m.id.clone()).collect();
    let mut repaired = false;
    let mut last_delivery: Option<Ms> = None;
    let mut drained_at: Option<Ms> = None;
    let mut end = 0;
    let mut source_drain: Option<Ms> = None;
    let mut step = 0;
    loop {
        while let Some(Reverse((t, _, m))) = pending.pop() {
            end = end.max(t);
            last_delivery = Some(t);
            totals.deliveries += 1;
            let msg = &mut model.messages[m];
            let id = msg.id.clone();
            let mut push = |kind: &str, fields: Json| {
                let mut item = json!({ "time": t, "message": id, "kind": kind });
                if let (Json::Object(item), Json::Object(fields)) = (&mut item, fields) {
                    item.extend(fields);
                }
                out.push(item);
            };
            // 1. Receive counts.
            msg.cycle_receives += 1;
            msg.total_receives += 1;
            push(
                "delivered",
                json!({ "cycle": msg.cycle, "cycle_receives": msg.cycle_receives, "total_receives": msg.total_receives }),
            );
            let applies = |f: &Fault| match f.selector {
                Selector::First(n) => msg.total_receives <= n,
                Selector::UntilRepair => !repaired,
            };
            // 2. The handler: the message's own faults in file order, then
            // outage windows.
            let handler = msg
                .faults
                .iter()
                .find(|f| !f.lose_ack && applies(f))
                .map(|f| (f.reason.clone(), f.permanent))
                .or_else(|| {
                    model
                        .outages
                        .iter()
                        .any(|&(from, to)| from <= t && t < to)
                        .then(|| ("downstream unavailable".to_string(), false))
                });
            let failure = match handler {
                Some((reason, permanent)) => {
                    let class = if permanent { "permanent" } else { "transient" };
                    push("failed", json!({ "reason": reason, "class": class }));
                    Some((reason, permanent))
                }
                None => {
                    // 3. Commit, or a deduplication hit.
                    let live = model
                        .dedup
                        .and(store.get(&msg.key).copied())
                        .filter(|&e| t < e);
                    match live {
                        Some(expires_at) => {
                            totals.dedup_hits += 1;
                            push(
                                "dedup_hit",
                                json!({ "key": msg.key, "expires_at": expires_at }),
                            );
                        }
                        None => {
                            totals.effects += 1;
                            let n = effects_of.entry(msg.intent.clone()).or_default();
                            *n += 1;
                            if *n > 1 {
                                totals.duplicated_effects += 1;
                            }
                            push(
                                "committed",
                                json!({ "key": msg.key, "effect": totals.effects }),
                            );
                            if let Some(retention) = model.dedup {
                                store.insert(msg.key.clone(), t + retention);
                            }
                        }
                    }
                    // 4. The acknowledgement.
                    if msg.faults.iter().any(|f| f.lose_ack && applies(f)) {
                        push("ack_lost", json!({}));
                        Some(("ack lost".to_string(), false))
                    } else {
                        msg.state = State::Acked;
                        totals.acked += 1;
                        push("acked", json!({}));
                        None
                    }
                }
            };
            // 5. After a failure: quarantine, or the next delivery.
            let Some((reason, permanent)) = failure else {
                continue;
            };
            if !(permanent && model.permanent_to_quarantine)
                && model.max_receives.is_none_or(|n| msg.cycle_receives < n)
            {
                let delay = retry_delay(model.retry, msg, &mut rng);
                totals.retry_delay_paid += delay;
                push(
                    "retry_scheduled",
                    json!({ "delay": delay, "due": t + delay }),
                );
                pending.push(Reverse((t + delay, sequence, m)));
                sequence += 1;
            } else {
                msg.state = State::Quarantined;
                msg.quarantined_at = t;
                dlq.push(m);
                totals.quarantine_entries += 1;
                totals.max_dlq_depth = totals.max_dlq_depth.max(dlq.len() as u64);
                let class = if permanent { "permanent" } else { "transient" };
                push(
                    "quarantined",
                    json!({ "reason": reason, "class": class, "dlq_depth": dlq.len() }),
                );
            }
        }
        // Drained: the source cycle's drain time is the first.
        let drained = match (last_delivery, drained_at) {
            (Some(d), Some(i)) => d.max(i),
            (Some(d), None) => d,
            (None, i) => i.unwrap_or(0),
        };
        source_drain.get_or_insert(drained);
        if step == model.steps.len() {
            break;
        }
        let t = drained + model.steps[step].wait;
        step += 1;
        end = end.max(t);
        drained_at = Some(t);
        last_delivery = None;
        let mut push = |m: Option<usize>, kind: &str, fields: Json| {
            let id = m.map(|m| ids[m].clone());
            let mut item = json!({ "time": t, "message": id, "kind": kind });
            if let (Json::Object(item), Json::Object(fields)) = (&mut item, fields) {
                item.extend(fields);
            }
            out.push(item);
        };
        let did = super::inspect(&mut model, step, t, &mut dlq, &mut repaired, &mut push);
        totals.expired += did.expired;
        totals.purged += did.purged;
        for &m in &did.redriven {
            pending.push(Reverse((t, sequence, m)));
            sequence += 1;
        }
    }
    let quarantined = model
        .messages
        .iter()
        .filter(|m| m.state == State::Quarantined)
        .count();
    Run {
        transitions: out,
        totals: json!({
            "deliveries": totals.deliveries,
            "acked": totals.acked,
            "quarantined": quarantined,
            "expired": totals.expired,
            "purged": totals.purged,
            "effects": totals.effects,
            "duplicated_effects": totals.duplicated_effects,
            "dedup_hits": totals.dedup_hits,
            "retry_delay_paid": totals.retry_delay_paid,
            "max_dlq_depth": totals.max_dlq_depth,
            "quarantine_entries": totals.quarantine_entries,
            "drain_time": source_drain,
            "end_time": end,
        }),
    }
}
