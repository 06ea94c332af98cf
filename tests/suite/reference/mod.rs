//! A reference implementation of the delivery model, written from its
//! rules alone and kept deliberately plain, for property tests that
//! compare the engine with it transcript for transcript (`compare`).
//!
//! `atomic::run` does the first stage (sections 1-10: messages, faults,
//! outages, retries with backoff and jitter, quarantine with retention,
//! the operator, deduplication, even traffic) with atomic deliveries;
//! `flow::run` adds workers and service time, ordering groups, the
//! downstream's windows and a stop at `max_time` (sections 12-13). Both
//! read the scenario file themselves (a TOML table, not the crate's
//! model), keep every message in a struct of named fields and pending
//! events in one binary heap ordered by (time, sequence), and do the steps
//! in the order the rules number them. They share nothing with the engine
//! but the duration syntax and the random generator (ChaCha8 seeded with
//! the file's seed, drawn in event order, which the model fixes). They
//! write transitions as the JSON report does (time, message id, kind and
//! the kind's fields), with a few totals.

#![allow(dead_code)]

mod atomic;
pub mod flow;

#[allow(unused_imports)]
pub use atomic::run;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value as Json;

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
    /// How long a failing handler hangs (section 12).
    takes: Option<Ms>,
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
    /// The ordering group under `per_key` (default: the intent).
    group: String,
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
                takes: f.get("takes").map(duration),
            }
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ordering {
    None,
    Fifo,
    PerKey,
}

struct Model {
    seed: u64,
    /// `None`: "unlimited".
    max_receives: Option<u64>,
    /// `[workers]`: count and service time.
    workers: Option<(u64, Ms)>,
    ordering: Ordering,
    /// `[downstream]`: limit and window.
    downstream: Option<(u64, Ms)>,
    /// `[limits] max_time` under `on_limit = "stop"`.
    stop_at: Option<Ms>,
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
        group: intent.clone(),
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

/// The messages of traffic block `stream` (section 11): ids
/// `<prefix>1..N` in arrival order, even or Poisson arrivals from `start`,
/// each block drawing from its own ChaCha8 stream of the seed (the Poisson
/// offsets first, then one mix draw per message), the block's faults then
/// its mix kind's, groups `<prefix>g<((j-1) mod groups) + 1>`.
fn generated(t: &toml::Value, stream: u64, seed: u64) -> Vec<Message> {
    let count = t["count"].as_integer().unwrap() as u64;
    let over = duration(&t["over"]);
    let start = t.get("start").map_or(0, duration);
    let prefix = t.get("id_prefix").and_then(|p| p.as_str()).unwrap_or("m");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    let poisson = t.get("arrival").and_then(|a| a.as_str()) == Some("poisson");
    let mut offsets: Vec<Ms> = Vec::new();
    if poisson {
        offsets = (0..count).map(|_| rng.random_range(0..over)).collect();
        offsets.sort();
    }
    // Each kind owns round(share * 1e6) consecutive draw values.
    let mix: Vec<(u64, Vec<Fault>)> = t
        .get("mix")
        .and_then(|m| m.as_array())
        .map(|kinds| {
            kinds
                .iter()
                .map(|kind| {
                    let share = kind["share"]
                        .as_float()
                        .unwrap_or_else(|| kind["share"].as_integer().unwrap() as f64);
                    ((share * 1e6).round() as u64, faults(kind.get("faults")))
                })
                .collect()
        })
        .unwrap_or_default();
    let groups = t
        .get("groups")
        .and_then(|g| g.as_integer())
        .map(|g| g as u64);
    (1..=count)
        .map(|j| {
            let at = start
                + if poisson {
                    offsets[j as usize - 1]
                } else {
                    (j - 1) * over / count
                };
            let mut own = faults(t.get("faults"));
            if !mix.is_empty() {
                let u = rng.random_range(0..1_000_000u64);
                let mut low = 0;
                for (width, kind_faults) in &mix {
                    if u < low + width {
                        own.extend(kind_faults.iter().cloned());
                        break;
                    }
                    low += width;
                }
            }
            let mut msg = message(format!("{prefix}{j}"), None, at, own);
            if let Some(groups) = groups {
                msg.group = format!("{prefix}g{}", (j - 1) % groups + 1);
            }
            msg
        })
        .collect()
}

fn read(text: &str) -> Model {
    let file: toml::Table = text.parse().expect("a TOML file");
    let seed = file
        .get("scenario")
        .and_then(|s| s.get("seed"))
        .map_or(0, |s| s.as_integer().unwrap() as u64);
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
            let mut msg = message(
                m["id"].as_str().unwrap().to_string(),
                m.get("key").and_then(|k| k.as_str()),
                m.get("at").map_or(0, duration),
                faults(m.get("faults")),
            );
            if let Some(group) = m.get("group").and_then(|g| g.as_str()) {
                msg.group = group.to_string();
            }
            msg
        })
        .collect();
    // Generated messages come after the explicit ones; message j of N
    // arrives at floor((j - 1) * over / N).
    for (k, t) in array("traffic").iter().enumerate() {
        messages.extend(generated(t, k as u64 + 1, seed));
    }
    Model {
        seed,
        max_receives: delivery["max_receives"].as_integer().map(|n| n as u64),
        workers: table("workers").map(|w| {
            (
                w["count"].as_integer().unwrap() as u64,
                w.get("service_time").map_or(0, duration),
            )
        }),
        ordering: match delivery.get("ordering").and_then(|o| o.as_str()) {
            Some("fifo") => Ordering::Fifo,
            Some("per_key") => Ordering::PerKey,
            _ => Ordering::None,
        },
        downstream: table("downstream").map(|d| {
            (
                d["limit"].as_integer().unwrap() as u64,
                d.get("per").map_or(1000, duration),
            )
        }),
        stop_at: table("limits")
            .filter(|l| l.get("on_limit").and_then(|o| o.as_str()) == Some("stop"))
            .and_then(|l| l.get("max_time"))
            .map(duration),
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

/// What an inspection did to the quarantine's messages.
#[derive(Default)]
struct Inspected {
    /// Redriven, in the order they entered quarantine: their deliveries
    /// are due at the inspection instant.
    redriven: Vec<usize>,
    expired: u64,
    purged: u64,
}

/// An operator step's inspection at `t` (section 6, decisions 10.9-10.11):
/// expiry, repair, then the action; `push` records a transition.
fn inspect(
    model: &mut Model,
    step: usize,
    t: Ms,
    dlq: &mut Vec<usize>,
    repaired: &mut bool,
    push: &mut dyn FnMut(Option<usize>, &str, Json),
) -> Inspected {
    let s = model.steps[step - 1].clone();
    let mut did = Inspected::default();
    push(
        None,
        "inspected",
        serde_json::json!({ "step": step, "dlq_depth": dlq.len() }),
    );
    // 1. Expiry, from the time of entering quarantine.
    if let Some(retention) = model.retention {
        let mut kept = Vec::new();
        for &m in dlq.iter() {
            let age = t - model.messages[m].quarantined_at;
            if age >= retention {
                model.messages[m].state = State::Expired;
                did.expired += 1;
                push(Some(m), "expired", serde_json::json!({ "age": age }));
            } else {
                kept.push(m);
            }
        }
        *dlq = kept;
    }
    // 2. Repair.
    if s.repair {
        *repaired = true;
        push(None, "repaired", serde_json::json!({}));
    }
    // 3. The action.
    did.redriven = match &s.action {
        Action::Hold => Vec::new(),
        Action::Purge => {
            for m in std::mem::take(dlq) {
                model.messages[m].state = State::Purged;
                did.purged += 1;
                push(Some(m), "purged", serde_json::json!({}));
            }
            Vec::new()
        }
        Action::RedriveAll => std::mem::take(dlq),
        Action::Redrive(only) => {
            let named = |m: &usize| only.contains(&model.messages[*m].id);
            let targets: Vec<usize> = dlq.iter().copied().filter(named).collect();
            dlq.retain(|m| !named(m));
            targets
        }
    };
    for &m in &did.redriven {
        let msg = &mut model.messages[m];
        msg.cycle += 1;
        msg.cycle_receives = 0;
        msg.state = State::Waiting;
        if s.new_identity {
            msg.key = format!("{}~r{}", msg.intent, msg.cycle - 1);
        }
        let fields = serde_json::json!({ "cycle": msg.cycle, "key": msg.key });
        push(Some(m), "redriven", fields);
    }
    // Named ids not redriven, after the redrives, in the order of `only`.
    if let Action::Redrive(only) = &s.action {
        for id in only {
            let m = model.messages.iter().position(|x| &x.id == id).unwrap();
            if !did.redriven.contains(&m) {
                let state = model.messages[m].state.name();
                push(
                    Some(m),
                    "redrive_skipped",
                    serde_json::json!({ "state": state }),
                );
            }
        }
    }
    did
}

/// The wait after the message's `cycle_receives`-th failed delivery of
/// its cycle (section 4, decision 10.8).
fn retry_delay(retry: Retry, msg: &mut Message, rng: &mut ChaCha8Rng) -> Ms {
    match retry {
        Retry::Fixed(d) => d,
        Retry::Backoff { base, cap, jitter } => {
            let cap = cap.unwrap_or(Ms::MAX);
            let doubling = 1u64
                .checked_shl(msg.cycle_receives as u32 - 1)
                .unwrap_or(Ms::MAX);
            let d = base.saturating_mul(doubling).min(cap);
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
                    let high = previous.saturating_mul(3).max(base);
                    let delay = rng.random_range(base..=high).min(cap);
                    msg.previous_delay = delay;
                    delay
                }
            }
        }
    }
}

/// The engine's transitions and totals next to a reference run of the
/// same file: equal, or the first difference with the transcripts around
/// it. Totals the engine does not list for the file are not compared.
pub fn compare(text: &str, reference: Run) -> Result<(), String> {
    use scenario_run::engine::{self, Recorder};
    use scenario_run::report::json;
    let (scenario, _) =
        scenario_run::scenario::load_str("p.toml", text).expect("generated scenarios are valid");
    let outcome = engine::run(&scenario, Recorder::All).expect("generated scenarios finish");
    let engine = json::transitions(&scenario, &outcome);
    let engine = engine.as_array().expect("a list");
    let shown = |items: &[Json], at: usize| {
        items[at.saturating_sub(3).min(items.len())..(at + 3).min(items.len())]
            .iter()
            .map(|t| format!("  {t}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if let Some(at) = (0..engine.len().max(reference.transitions.len()))
        .find(|&i| engine.get(i) != reference.transitions.get(i))
    {
        return Err(format!(
            "transition {at} differs\nengine:\n{}\nreference:\n{}\n{text}",
            shown(engine, at),
            shown(&reference.transitions, at)
        ));
    }
    let totals = json::totals(&scenario, &outcome);
    for (name, value) in reference.totals.as_object().expect("a map") {
        if let Some(actual) = totals.get(name)
            && actual != value
        {
            return Err(format!(
                "{name}: engine {actual}, reference {value}\n{text}"
            ));
        }
    }
    Ok(())
}
