//! A reference implementation of the delivery model's first stage
//! (messages, faults, outages, retries with backoff and jitter,
//! quarantine with retention, the operator, deduplication, even traffic),
//! written from the model's rules alone and kept deliberately plain: it
//! reads the scenario file itself (a TOML table, not the crate's model),
//! keeps every message in a struct of named fields and every pending
//! delivery in one binary heap ordered by (time, sequence), and does one
//! delivery at a time, step by step as the rules number them. It shares
//! nothing with the engine but the duration syntax and the random
//! generator (ChaCha8 seeded with the file's seed, drawn in event order,
//! which the model fixes).
//!
//! It produces the transitions as the JSON report writes them (time,
//! message id, kind and the kind's fields) and a few totals, so that a
//! property test can compare it with the engine transcript for transcript.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value as Json, json};

type Ms = u64;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Selector {
    First(u64),
    UntilRepair,
}

#[derive(Clone, Debug)]
struct Fault {
    lose_ack: bool,
    selector: Selector,
    reason: String,
    permanent: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
}

#[derive(Clone, Copy, Debug)]
enum Retry {
    Fixed(Ms),
    Backoff {
        base: Ms,
        cap: Option<Ms>,
        jitter: Jitter,
    },
}

#[derive(Clone, Debug)]
enum Action {
    Hold,
    RedriveAll,
    Redrive(Vec<String>),
    Purge,
}

#[derive(Clone, Debug)]
struct Step {
    wait: Ms,
    repair: bool,
    action: Action,
    new_identity: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Waiting,
    Acked,
    Quarantined,
    Expired,
    Purged,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Waiting => "waiting",
            State::Acked => "acked",
            State::Quarantined => "quarantined",
            State::Expired => "expired",
            State::Purged => "purged",
        }
    }
}

struct Message {
    id: String,
    intent: String,
    key: String,
    at: Ms,
    faults: Vec<Fault>,
    state: State,
    cycle: u64,
    cycle_receives: u64,
    total_receives: u64,
    quarantined_at: Ms,
    previous_delay: Ms,
}

/// What the reference run produced.
pub struct Run {
    pub transitions: Vec<Json>,
    pub totals: Json,
}

fn duration(v: &toml::Value) -> Ms {
    scenario_run::duration::parse(v.as_str().expect("a duration")).expect("a valid duration")
}

fn faults(list: Option<&toml::Value>) -> Vec<Fault> {
    let Some(list) = list.and_then(|l| l.as_array()) else {
        return Vec::new();
    };
    list.iter()
        .map(|f| {
            let (lose_ack, sel) = match (f.get("fail"), f.get("lose_ack")) {
                (Some(sel), _) => (false, sel),
                (None, Some(sel)) => (true, sel),
                _ => panic!("a fault fails or loses the ack: {f}"),
            };
            let selector = match (sel.get("first"), sel.get("until")) {
                (Some(n), _) => Selector::First(n.as_integer().unwrap() as u64),
                (None, Some(_)) => Selector::UntilRepair,
                _ => panic!("a selector: {sel}"),
            };
            let text = |k: &str| f.get(k).and_then(|v| v.as_str());
            Fault {
                lose_ack,
                selector,
                reason: text("reason").unwrap_or("handler error").to_string(),
                permanent: text("class") == Some("permanent"),
            }
        })
        .collect()
}

struct Model {
    seed: u64,
    max_receives: u64,
    retry: Retry,
    permanent_to_quarantine: bool,
    retention: Option<Ms>,
    dedup: Option<Ms>,
    outages: Vec<(Ms, Ms)>,
    steps: Vec<Step>,
    messages: Vec<Message>,
}

fn message(id: String, key: Option<&str>, at: Ms, faults: Vec<Fault>) -> Message {
    let intent = key.map_or(id.clone(), str::to_string);
    Message {
        key: intent.clone(),
        intent,
        id,
        at,
        faults,
        state: State::Waiting,
        cycle: 1,
        cycle_receives: 0,
        total_receives: 0,
        quarantined_at: 0,
        previous_delay: 0,
    }
}

fn read(text: &str) -> Model {
    let file: toml::Table = text.parse().expect("a TOML file");
    let table = |k: &str| file.get(k).and_then(|v| v.as_table());
    let array = |k: &str| {
        file.get(k)
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let delivery = table("delivery").expect("[delivery]");
    let retry = match (delivery.get("retry_interval"), delivery.get("backoff")) {
        (Some(d), _) => Retry::Fixed(duration(d)),
        (None, Some(b)) => Retry::Backoff {
            base: duration(&b["base"]),
            cap: b.get("cap").map(duration),
            jitter: match b.get("jitter").and_then(|j| j.as_str()).unwrap_or("none") {
                "none" => Jitter::None,
                "full" => Jitter::Full,
                "equal" => Jitter::Equal,
                "decorrelated" => Jitter::Decorrelated,
                other => panic!("jitter {other}"),
            },
        },
        _ => panic!("a retry policy"),
    };
    let mut messages: Vec<Message> = array("message")
        .iter()
        .map(|m| {
            message(
                m["id"].as_str().unwrap().to_string(),
                m.get("key").and_then(|k| k.as_str()),
                m.get("at").map_or(0, duration),
                faults(m.get("faults")),
            )
        })
        .collect();
    // Generated messages come after the explicit ones; message j of N
    // arrives at floor((j - 1) * over / N).
    for t in array("traffic") {
        let count = t["count"].as_integer().unwrap() as u64;
        let over = duration(&t["over"]);
        let prefix = t.get("id_prefix").and_then(|p| p.as_str()).unwrap_or("m");
        for j in 1..=count {
            let id = format!("{prefix}{j}");
            messages.push(message(
                id,
                None,
                (j - 1) * over / count,
                faults(t.get("faults")),
            ));
        }
    }
    Model {
        seed: table("scenario")
            .and_then(|s| s.get("seed"))
            .map_or(0, |s| s.as_integer().unwrap() as u64),
        max_receives: delivery["max_receives"].as_integer().unwrap() as u64,
        retry,
        permanent_to_quarantine: delivery.get("permanent").and_then(|p| p.as_str())
            == Some("quarantine"),
        retention: table("quarantine")
            .and_then(|q| q.get("retention"))
            .map(duration),
        dedup: table("dedup")
            .and_then(|d| d.get("result_retention"))
            .map(duration),
        outages: array("outage")
            .iter()
            .map(|o| {
                let from = duration(&o["from"]);
                (from, from + duration(&o["duration"]))
            })
            .collect(),
        steps: array("operator")
            .iter()
            .map(|o| Step {
                wait: o.get("wait").map_or(0, duration),
                repair: o.get("repair").and_then(|r| r.as_bool()).unwrap_or(false),
                new_identity: o.get("identity").and_then(|i| i.as_str()) == Some("new"),
                action: match o["action"].as_str().unwrap() {
                    "hold" => Action::Hold,
                    "redrive_all" => Action::RedriveAll,
                    "purge" => Action::Purge,
                    "redrive" => Action::Redrive(
                        o["only"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|i| i.as_str().unwrap().to_string())
                            .collect(),
                    ),
                    other => panic!("action {other}"),
                },
            })
            .collect(),
        messages,
    }
}

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

/// Runs the scenario file `text` by the model's rules.
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
                && msg.cycle_receives < model.max_receives
            {
                let delay = match model.retry {
                    Retry::Fixed(d) => d,
                    Retry::Backoff { base, cap, jitter } => {
                        let cap = cap.unwrap_or(Ms::MAX);
                        let d = base
                            .saturating_mul(
                                1u64.checked_shl(msg.cycle_receives as u32 - 1)
                                    .unwrap_or(Ms::MAX),
                            )
                            .min(cap);
                        match jitter {
                            Jitter::None => d,
                            Jitter::Full => rng.random_range(0..=d),
                            Jitter::Equal => d / 2 + rng.random_range(0..=d / 2),
                            Jitter::Decorrelated => {
                                let previous = if msg.cycle_receives == 1 {
                                    base
                                } else {
                                    msg.previous_delay
                                };
                                let delay = rng
                                    .random_range(base..=previous.saturating_mul(3).max(base))
                                    .min(cap);
                                msg.previous_delay = delay;
                                delay
                            }
                        }
                    }
                };
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
        let s = model.steps[step].clone();
        step += 1;
        let t = drained + s.wait;
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
        push(
            None,
            "inspected",
            json!({ "step": step, "dlq_depth": dlq.len() }),
        );
        // 1. Expiry, from the time of entering quarantine.
        if let Some(retention) = model.retention {
            let mut kept = Vec::new();
            for &m in &dlq {
                let age = t - model.messages[m].quarantined_at;
                if age >= retention {
                    model.messages[m].state = State::Expired;
                    totals.expired += 1;
                    push(Some(m), "expired", json!({ "age": age }));
                } else {
                    kept.push(m);
                }
            }
            dlq = kept;
        }
        // 2. Repair.
        if s.repair {
            repaired = true;
            push(None, "repaired", json!({}));
        }
        // 3. The action.
        let targets: Vec<usize> = match &s.action {
            Action::Hold => Vec::new(),
            Action::Purge => {
                for m in std::mem::take(&mut dlq) {
                    model.messages[m].state = State::Purged;
                    totals.purged += 1;
                    push(Some(m), "purged", json!({}));
                }
                Vec::new()
            }
            Action::RedriveAll => std::mem::take(&mut dlq),
            Action::Redrive(only) => {
                let named = |m: &usize| only.contains(&model.messages[*m].id);
                let targets: Vec<usize> = dlq.iter().copied().filter(named).collect();
                dlq.retain(|m| !named(m));
                targets
            }
        };
        for &m in &targets {
            let msg = &mut model.messages[m];
            msg.cycle += 1;
            msg.cycle_receives = 0;
            msg.state = State::Waiting;
            if s.new_identity {
                msg.key = format!("{}~r{}", msg.intent, msg.cycle - 1);
            }
            let (cycle, key) = (msg.cycle, msg.key.clone());
            push(Some(m), "redriven", json!({ "cycle": cycle, "key": key }));
        }
        for &m in &targets {
            pending.push(Reverse((t, sequence, m)));
            sequence += 1;
        }
        if let Action::Redrive(only) = &s.action {
            for id in only {
                let m = model.messages.iter().position(|x| &x.id == id).unwrap();
                if !targets.contains(&m) {
                    let state = model.messages[m].state.name();
                    push(Some(m), "redrive_skipped", json!({ "state": state }));
                }
            }
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
