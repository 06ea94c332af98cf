//! The reference for the second stage (sections 12 and 13): workers and
//! service time, ordering groups with head-of-line blocking, a downstream
//! with a limit per window, and a stop at `max_time`. An event is a
//! message becoming ready or a delivery ending; after each event (and
//! each inspection) free workers take the eligible ready message that
//! became ready first. Plain on purpose: the ready messages are a list
//! scanned for the earliest eligible one, a group is a queue of message
//! indices, the windows a map from window number to calls.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value as Json, json};

use super::{Ms, Ordering, Run, State, read, retry_delay};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Event {
    /// The message becomes ready (arrival, retry due, redrive).
    Ready(usize),
    /// The message's delivery ends.
    End(usize),
}

/// What a delivery's start decided, learned at its end: acked (`None`),
/// or the failure's reason, whether it is permanent and whether it is a
/// lost acknowledgement.
type Decided = Option<(String, bool, bool)>;

/// Runs the scenario file `text` by the rules of sections 1-13.
pub fn run(text: &str) -> Run {
    let mut model = read(text);
    let mut rng = ChaCha8Rng::seed_from_u64(model.seed);
    let ids: Vec<String> = model.messages.iter().map(|m| m.id.clone()).collect();
    let n = model.messages.len();
    let mut out: Vec<Json> = Vec::new();
    let mut pending: BinaryHeap<Reverse<(Ms, u64, Event)>> = BinaryHeap::new();
    let mut sequence = 0u64;
    let mut schedule = |pending: &mut BinaryHeap<_>, t: Ms, e: Event| {
        pending.push(Reverse((t, sequence, e)));
        sequence += 1;
        sequence - 1
    };
    for m in 0..n {
        schedule(&mut pending, model.messages[m].at, Event::Ready(m));
    }
    // Ready messages not taken: (ready at, sequence, message).
    let mut ready: Vec<(Ms, u64, usize)> = Vec::new();
    let mut groups: HashMap<String, VecDeque<usize>> = HashMap::new();
    let mut arrived = vec![false; n];
    let mut decided: HashMap<usize, Decided> = HashMap::new();
    let mut dlq: Vec<usize> = Vec::new();
    let mut store: HashMap<String, Ms> = HashMap::new();
    let mut effects_of: HashMap<String, u64> = HashMap::new();
    let mut accepted_in: BTreeMap<Ms, u64> = BTreeMap::new();
    let mut acked_at: Vec<Option<Ms>> = vec![None; n];
    let mut queue_wait = vec![0u64; n];
    let (mut busy, mut in_flight) = (0u64, 0u64);
    let mut t_now: Ms = 0;
    let mut repaired = false;
    let mut last_end: Option<Ms> = None;
    let mut last_inspection: Option<Ms> = None;
    let mut step = 0usize;
    let mut stopped = false;
    let mut c = Counts::default();
    let group_of = |model: &super::Model, m: usize| match model.ordering {
        Ordering::None => None,
        Ordering::Fifo => Some(String::new()),
        Ordering::PerKey => Some(model.messages[m].group.clone()),
    };
    loop {
        // The next event, or, when nothing is pending, the next inspection.
        let next = pending.peek().map(|Reverse((t, _, _))| *t);
        let inspection = if next.is_none() && step < model.steps.len() {
            let drained = last_end.max(last_inspection).unwrap_or(0);
            Some(drained + model.steps[step].wait)
        } else {
            None
        };
        let Some(t) = next.or(inspection) else { break };
        if t > t_now {
            c.max_queue_depth = c.max_queue_depth.max(ready.len() as u64);
            c.max_in_flight = c.max_in_flight.max(in_flight);
        }
        if model.stop_at.is_some_and(|max| t > max) {
            stopped = true;
            break;
        }
        t_now = t;
        let mut push = |m: Option<usize>, kind: &str, fields: Json| {
            let mut item = json!({ "time": t, "message": m.map(|m| ids[m].clone()), "kind": kind });
            if let (Json::Object(item), Json::Object(fields)) = (&mut item, fields) {
                item.extend(fields);
            }
            out.push(item);
        };
        let mut ends: Vec<usize> = Vec::new();
        if next.is_some() {
            let Reverse((_, seq, event)) = pending.pop().unwrap();
            match event {
                Event::Ready(m) => {
                    if !arrived[m] {
                        arrived[m] = true;
                        if let Some(g) = group_of(&model, m) {
                            groups.entry(g).or_default().push_back(m);
                        }
                    }
                    ready.push((t, seq, m));
                }
                Event::End(m) => {
                    if model.workers.is_some() {
                        busy -= 1;
                    }
                    in_flight -= 1;
                    ends.push(m);
                }
            }
        } else {
            // An inspection (section 6); the redriven are enqueued again at
            // its instant, behind the others.
            step += 1;
            last_inspection = Some(t);
            let did = super::inspect(&mut model, step, t, &mut dlq, &mut repaired, &mut push);
            for &m in &did.redriven {
                if let Some(g) = group_of(&model, m) {
                    groups.entry(g).or_default().push_back(m);
                }
                schedule(&mut pending, t, Event::Ready(m));
            }
        }
        // Ends, then taking; an atomic delivery ends as it starts.
        loop {
            for m in ends.drain(..) {
                last_end = Some(t);
                let failure = decided.remove(&m).expect("a delivery in flight");
                let msg = &mut model.messages[m];
                let Some((reason, permanent, ack_lost)) = failure else {
                    msg.state = State::Acked;
                    acked_at[m] = Some(t);
                    push(Some(m), "acked", json!({}));
                    if let Some(g) = group_of(&model, m) {
                        groups.get_mut(&g).unwrap().pop_front();
                    }
                    continue;
                };
                let class = if permanent { "permanent" } else { "transient" };
                if ack_lost {
                    push(Some(m), "ack_lost", json!({}));
                } else {
                    push(
                        Some(m),
                        "failed",
                        json!({ "reason": reason, "class": class }),
                    );
                }
                if !(permanent && model.permanent_to_quarantine)
                    && model.max_receives.is_none_or(|r| msg.cycle_receives < r)
                {
                    let delay = retry_delay(model.retry, msg, &mut rng);
                    c.retry_delay_paid += delay;
                    push(
                        Some(m),
                        "retry_scheduled",
                        json!({ "delay": delay, "due": t + delay }),
                    );
                    schedule(&mut pending, t + delay, Event::Ready(m));
                } else {
                    msg.state = State::Quarantined;
                    msg.quarantined_at = t;
                    dlq.push(m);
                    c.max_dlq_depth = c.max_dlq_depth.max(dlq.len() as u64);
                    push(
                        Some(m),
                        "quarantined",
                        json!({ "reason": reason, "class": class, "dlq_depth": dlq.len() }),
                    );
                    if let Some(g) = group_of(&model, m) {
                        groups.get_mut(&g).unwrap().retain(|&x| x != m);
                    }
                }
            }
            // Taking: the eligible ready message that became ready first.
            let free = model.workers.is_none_or(|(count, _)| busy < count);
            let eligible = |&&(_, _, m): &&(Ms, u64, usize)| match group_of(&model, m) {
                None => true,
                Some(g) => groups[&g].front() == Some(&m),
            };
            let Some(&(ready_at, seq, m)) = ready.iter().filter(eligible).min() else {
                break;
            };
            if !free {
                break;
            }
            ready.retain(|&r| r != (ready_at, seq, m));
            queue_wait[m] += t - ready_at;
            if model.workers.is_some() {
                busy += 1;
            }
            // The delivery starts: everything section 3 decides is decided now.
            c.deliveries += 1;
            let msg = &mut model.messages[m];
            msg.cycle_receives += 1;
            msg.total_receives += 1;
            push(
                Some(m),
                "delivered",
                json!({ "cycle": msg.cycle, "cycle_receives": msg.cycle_receives, "total_receives": msg.total_receives }),
            );
            let applies = |f: &super::Fault| match f.selector {
                super::Selector::First(k) => msg.total_receives <= k,
                super::Selector::UntilRepair => !repaired,
            };
            let service_time = model.workers.map_or(0, |(_, s)| s);
            let window = model.downstream.map_or(1000, |(_, per)| per);
            let fault = msg
                .faults
                .iter()
                .find(|f| !f.lose_ack && applies(f))
                .cloned();
            let lose_ack = msg.faults.iter().any(|f| f.lose_ack && applies(f));
            let (failure, service) = if let Some(f) = fault {
                (
                    Some((f.reason, f.permanent, false)),
                    f.takes.unwrap_or(service_time),
                )
            } else if model.outages.iter().any(|&(from, to)| from <= t && t < to) {
                c.calls_offered += 1;
                (
                    Some(("downstream unavailable".to_string(), false, false)),
                    service_time,
                )
            } else if let Some(expires_at) = model
                .dedup
                .and(store.get(&msg.key).copied())
                .filter(|&e| t < e)
            {
                c.dedup_hits += 1;
                push(
                    Some(m),
                    "dedup_hit",
                    json!({ "key": msg.key, "expires_at": expires_at }),
                );
                (
                    lose_ack.then(|| ("ack lost".to_string(), false, true)),
                    service_time,
                )
            } else if model.downstream.is_some_and(|(limit, _)| {
                accepted_in.get(&(t / window)).copied().unwrap_or(0) >= limit
            }) {
                c.calls_offered += 1;
                c.throttled += 1;
                (Some(("throttled".to_string(), false, false)), service_time)
            } else {
                c.calls_offered += 1;
                c.calls_accepted += 1;
                *accepted_in.entry(t / window).or_default() += 1;
                c.effects += 1;
                let k = effects_of.entry(msg.intent.clone()).or_default();
                *k += 1;
                if *k > 1 {
                    c.duplicated_effects += 1;
                }
                push(
                    Some(m),
                    "committed",
                    json!({ "key": msg.key, "effect": c.effects }),
                );
                if let Some(retention) = model.dedup {
                    store.insert(msg.key.clone(), t + retention);
                }
                (
                    lose_ack.then(|| ("ack lost".to_string(), false, true)),
                    service_time,
                )
            };
            c.worker_busy += service;
            decided.insert(m, failure);
            in_flight += 1;
            if model.workers.is_none() && service == 0 {
                // Atomic (decision 16.3).
                in_flight -= 1;
                ends.push(m);
            } else {
                schedule(&mut pending, t + service, Event::End(m));
            }
        }
    }
    if !stopped {
        c.max_queue_depth = c.max_queue_depth.max(ready.len() as u64);
        c.max_in_flight = c.max_in_flight.max(in_flight);
    }
    let end = match (stopped, model.stop_at) {
        (true, Some(max)) => max,
        _ => last_end.max(last_inspection).unwrap_or(0),
    };
    let latencies: Vec<Ms> = (0..n)
        .filter_map(|m| acked_at[m].map(|a| a - model.messages[m].at))
        .collect();
    let states = |s: State| model.messages.iter().filter(|m| m.state == s).count();
    let acked = states(State::Acked);
    let finals =
        acked + states(State::Quarantined) + states(State::Expired) + states(State::Purged);
    Run {
        transitions: out,
        totals: json!({
            "deliveries": c.deliveries,
            "acked": acked,
            "quarantined": dlq.len(),
            "effects": c.effects,
            "duplicated_effects": c.duplicated_effects,
            "dedup_hits": c.dedup_hits,
            "retry_delay_paid": c.retry_delay_paid,
            "max_dlq_depth": c.max_dlq_depth,
            "end_time": end,
            "calls_offered": c.calls_offered,
            "calls_accepted": c.calls_accepted,
            "throttled": c.throttled,
            "pending": n - finals,
            "worker_busy": c.worker_busy,
            "max_queue_wait": queue_wait.iter().max().copied().unwrap_or(0),
            "max_queue_depth": c.max_queue_depth,
            "max_in_flight": c.max_in_flight,
            "latency_max": latencies.iter().max(),
        }),
    }
}

#[derive(Default)]
struct Counts {
    deliveries: u64,
    effects: u64,
    duplicated_effects: u64,
    dedup_hits: u64,
    retry_delay_paid: Ms,
    max_dlq_depth: u64,
    calls_offered: u64,
    calls_accepted: u64,
    throttled: u64,
    worker_busy: Ms,
    max_queue_depth: u64,
    max_in_flight: u64,
}
