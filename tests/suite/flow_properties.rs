//! Property tests of workers, ordering and capacity (model sections 11-13)
//! over generated scenarios: the pool's size is never exceeded, a group
//! never has two messages going round at once and acks within a group keep
//! the enqueue order, equivalent files give equal results, and messages
//! are conserved when a run stops at a limit.

use std::collections::BTreeMap;

use crate::common;

use proptest::prelude::*;
use scenario_run::engine::{self, Detail, Outcome, Recorder};
use scenario_run::model::{EventKind, Scenario, State, StoppedBy};
use scenario_run::scenario::load_str;

use crate::reference;

/// One explicit message: arrival, key (k0..k2), faults that may hang.
fn message(i: usize) -> impl Strategy<Value = String> {
    (
        0u64..20,
        0usize..3,
        proptest::option::of((1u32..4, any::<bool>(), proptest::option::of(1u64..5))),
        any::<bool>(),
    )
        .prop_map(move |(at, key, fail, lose)| {
            let mut faults = Vec::new();
            if let Some((first, permanent, takes)) = fail {
                let class = if permanent { "permanent" } else { "transient" };
                let takes = takes.map_or(String::new(), |t| format!(", takes = \"{t}s\""));
                faults.push(format!(
                    "{{ fail = {{ first = {first} }}, class = \"{class}\"{takes} }}"
                ));
            }
            if lose {
                faults.push("{ lose_ack = { first = 1 } }".into());
            }
            format!(
                "[[message]]\nid = \"m{i}\"\nat = \"{at}s\"\nkey = \"k{key}\"\nfaults = [{}]\n",
                faults.join(", ")
            )
        })
}

/// The parts of a flow scenario, so that variants can be built from one.
#[derive(Debug, Clone)]
struct Parts {
    delivery: String,
    ordering: &'static str,
    workers: Option<(u64, u64)>,
    downstream: Option<(u64, u64)>,
    rest: String,
    messages: Vec<String>,
}

impl Parts {
    fn text(&self) -> String {
        let mut t = format!("{}ordering = \"{}\"\n", self.delivery, self.ordering);
        if let Some((count, service)) = self.workers {
            t.push_str(&format!(
                "[workers]\ncount = {count}\nservice_time = \"{service}s\"\n"
            ));
        }
        if let Some((limit, per)) = self.downstream {
            t.push_str(&format!(
                "[downstream]\nlimit = {limit}\nper = \"{per}s\"\n"
            ));
        }
        t.push_str(&self.rest);
        for m in &self.messages {
            t.push_str(m);
        }
        t
    }
}

prop_compose! {
    fn parts()(n in 1usize..8)(
        messages in (0..n).map(message).collect::<Vec<_>>(),
        seed in 0u64..100,
        receives in prop_oneof![(1u32..5).prop_map(|r| r.to_string()), Just("\"unlimited\"".to_string())],
        retry in 1u64..5,
        ordering in prop_oneof![Just("none"), Just("fifo"), Just("per_key")],
        workers in proptest::option::of((1u64..4, 0u64..3)),
        downstream in proptest::option::of((1u64..3, 1u64..4)),
        outage in proptest::option::of((0u64..20, 1u64..10)),
        operator in any::<bool>(),
        max_time in 30u64..300,
    ) -> Parts {
        let delivery = format!(
            "[scenario]\nseed = {seed}\n[delivery]\nmax_receives = {receives}\nretry_interval = \"{retry}s\"\n"
        );
        let mut rest = format!("[limits]\nmax_time = \"{max_time}s\"\non_limit = \"stop\"\n");
        if let Some((from, d)) = outage {
            rest.push_str(&format!("[[outage]]\nfrom = \"{from}s\"\nduration = \"{d}s\"\n"));
        }
        if operator {
            rest.push_str("[[operator]]\nwait = \"5s\"\nrepair = true\naction = \"redrive_all\"\n");
        }

        Parts { delivery, ordering, workers, downstream, rest, messages }
    }
}

fn run(text: &str) -> (Scenario, Outcome) {
    let (scenario, _) = load_str("p.toml", text).expect("generated scenarios are valid");
    let outcome = engine::run(&scenario, Recorder::All).expect("stop mode never fails");
    (scenario, outcome)
}

/// Whether a transition ends a delivery.
fn ends(detail: &Detail) -> bool {
    matches!(
        detail.kind(),
        EventKind::Acked | EventKind::Failed | EventKind::AckLost
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// Workers, ordering, the downstream and a stop, done by the plain
    /// reference of `tests/reference/flow.rs`: the same transcript and
    /// totals.
    #[test]
    fn the_engine_follows_the_reference_implementation(
        p in parts(),
        dedup in proptest::option::of(0u64..30),
        traffic in proptest::option::of((
            1u64..40,
            1u64..60,
            any::<bool>(),
            proptest::option::of(1u64..4),
            proptest::option::of(0u32..60),
            0u64..10,
        )),
    ) {
        let mut text = p.text();
        if let Some(d) = dedup {
            text.push_str(&format!("[dedup]\nresult_retention = \"{d}s\"\n"));
        }
        // Generated messages (section 11): even or Poisson, from a start,
        // a poison kind in the mix, groups under per_key.
        if let Some((count, over, poisson, groups, share, start)) = traffic {
            let arrival = if poisson { "poisson" } else { "even" };
            text.push_str(&format!(
                "[[traffic]]\ncount = {count}\nover = \"{over}s\"\nstart = \"{start}s\"\nid_prefix = \"g\"\narrival = \"{arrival}\"\n"
            ));
            if let (Some(g), "per_key") = (groups, p.ordering) {
                text.push_str(&format!("groups = {g}\n"));
            }
            if let Some(share) = share {
                text.push_str(&format!(
                    "[[traffic.mix]]\nname = \"poison\"\nshare = 0.{share:02}\nfaults = [{{ fail = {{ until = \"repair\" }}, class = \"permanent\" }}]\n"
                ));
            }
        }
        if let Err(difference) = reference::compare(&text, reference::flow::run(&text)) {
            prop_assert!(false, "{}", difference);
        }
        // Unrecorded, a run without workers or ordering takes the one-write
        // path for its first deliveries: the same totals and states.
        let (scenario, all) = run(&text);
        let off = engine::run(&scenario, Recorder::Off).expect("stop mode never fails");
        common::replays_alike(&scenario, &all)?;
        prop_assert_eq!(all.totals, off.totals);
        prop_assert_eq!(all.messages, off.messages);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn never_more_deliveries_in_flight_than_workers(p in parts()) {
        let (_, outcome) = run(&p.text());
        let Some((count, _)) = p.workers else { return Ok(()) };
        let mut active = 0u64;
        for t in &outcome.transitions {
            if t.detail.kind() == EventKind::Delivered {
                active += 1;
                prop_assert!(active <= count, "{} deliveries at {}", active, t.time);
            } else if ends(&t.detail) {
                active -= 1;
            }
        }
        prop_assert!(outcome.totals.max_in_flight <= count);
    }

    #[test]
    fn a_group_has_one_message_going_round_and_acks_keep_enqueue_order(
        // Filtered where it is generated (a local reject), so that a long
        // run (`PROPTEST_CASES=5000`) does not reach the global limit of
        // 1,024 rejects.
        p in parts().prop_filter("ordered", |p| p.ordering != "none")
    ) {
        let (scenario, outcome) = run(&p.text());
        let group = |m: u32| if p.ordering == "fifo" { 0 } else { scenario.group(m) };
        // The message each group is delivering or retrying.
        let mut head: BTreeMap<u64, u32> = BTreeMap::new();
        let mut acked: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        for t in &outcome.transitions {
            let Some(m) = t.message else { continue };
            match t.detail.kind() {
                EventKind::Delivered => {
                    let h = *head.entry(group(m)).or_insert(m);
                    prop_assert_eq!(h, m, "two messages of one group going round at {}", t.time);
                }
                EventKind::Acked | EventKind::Quarantined => {
                    head.remove(&group(m));
                    if t.detail.kind() == EventKind::Acked {
                        acked.entry(group(m)).or_default().push(m);
                    }
                }
                _ => {}
            }
        }
        // Without quarantine (which re-enqueues on redrive), acks in a
        // group follow arrival order, file order on ties.
        if outcome.totals.quarantine_entries == 0 {
            for order in acked.values() {
                let mut by_arrival = order.clone();
                by_arrival.sort_by_key(|&m| (scenario.messages[m as usize].at, m));
                prop_assert_eq!(order, &by_arrival);
            }
        }
    }

    #[test]
    fn zero_service_with_enough_workers_equals_no_workers(p in parts()) {
        // Without `takes` nothing holds a message in flight, so the only
        // difference is that with workers each delivery's end is a later
        // event of the same instant. (Under ordering that difference
        // matters: a head's end then comes after arrivals at its instant,
        // which queue behind it, so the property is for unordered queues.)
        let mut without = p.clone();
        without.ordering = "none";
        without.messages = without.messages.iter().map(|m| {
            let mut out = m.clone();
            for t in 1..5 {
                out = out.replace(&format!(", takes = \"{t}s\""), "");
            }
            out
        }).collect();
        without.workers = None;
        let mut with = without.clone();
        with.workers = Some((1000, 0));
        let (_, a) = run(&without.text());
        let (_, b) = run(&with.text());
        // Events are counted differently (a delivery with workers is two),
        // so compare runs that drained.
        prop_assume!(a.totals.pending == 0 && b.totals.pending == 0);
        prop_assert_eq!(a.messages, b.messages);
        prop_assert_eq!(a.ledger, b.ledger);
        prop_assert_eq!(a.totals.deliveries, b.totals.deliveries);
        prop_assert_eq!(a.totals.latency_max, b.totals.latency_max);
    }

    #[test]
    fn per_key_with_one_group_equals_fifo(p in parts()) {
        let mut fifo = p.clone();
        fifo.ordering = "fifo";
        let mut one = p;
        one.ordering = "per_key";
        one.messages = one.messages.iter().map(|m| m.replace("\nat = ", "\ngroup = \"g\"\nat = ")).collect();
        let (_, a) = run(&fifo.text());
        let (_, b) = run(&one.text());
        prop_assert_eq!(a.messages, b.messages);
        prop_assert_eq!(a.totals, b.totals);
    }

    #[test]
    fn messages_are_conserved_when_a_run_stops(p in parts()) {
        let (scenario, outcome) = run(&p.text());
        let t = &outcome.totals;
        let count = |s: State| outcome.messages.iter().filter(|m| m.state == s).count() as u64;
        prop_assert_eq!(t.acked, count(State::Acked));
        prop_assert_eq!(
            t.acked + t.quarantined + t.expired + t.purged + t.pending,
            scenario.message_count()
        );
        prop_assert_eq!(t.pending, count(State::Waiting) + count(State::Ready) + count(State::InFlight));
        prop_assert!(t.calls_accepted + t.throttled <= t.calls_offered);
        prop_assert!(t.calls_accepted <= t.deliveries);
        let receives: u64 = outcome.messages.iter().map(|m| m.total_receives as u64).sum();
        prop_assert_eq!(t.deliveries, receives);
        prop_assert_eq!(t.effects, outcome.ledger.len() as u64);
        if let Some((limit, per)) = p.downstream {
            // No window accepted more than the limit.
            let mut per_window: BTreeMap<u64, u64> = BTreeMap::new();
            for e in &outcome.ledger {
                *per_window.entry(e.time / (per * 1000)).or_default() += 1;
            }
            prop_assert!(per_window.values().all(|&n| n <= limit));
        }
    }
}

/// The parts with a crash fault added to some messages.
fn with_crashes(p: &Parts, at: &str, every: usize) -> Parts {
    let mut out = p.clone();
    for (i, m) in out.messages.iter_mut().enumerate() {
        if i % every == 0 {
            *m = m.replace(
                "faults = [",
                &format!("faults = [{{ crash = {{ first = 1 }}, at = \"{at}\" }}, "),
            );
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    // Sections 17-22: a file that names them takes the tracked delivery
    // path; where their rules do not apply it must agree with the compact
    // path byte for byte.
    #[test]
    fn a_default_sink_and_a_long_timeout_change_nothing(p in parts()) {
        let (_, plain) = run(&p.text());
        let mut sink = p.clone();
        sink.rest.push_str("[[sink]]\nname = \"counter\"\nkind = \"increment\"\n");
        let (_, tracked) = run(&sink.text());
        prop_assert_eq!(&plain.transitions, &tracked.transitions);
        prop_assert_eq!(&plain.messages, &tracked.messages);
        prop_assert_eq!(plain.totals, tracked.totals);
        // No delivery is longer than 3s + 4s: a 7s timeout never overtakes
        // one (decision 22.7: only strictly longer).
        let mut timed = p.clone();
        timed.delivery.push_str("visibility_timeout = \"7s\"\n");
        let (_, timed) = run(&timed.text());
        prop_assert_eq!(&plain.transitions, &timed.transitions);
        prop_assert_eq!(plain.totals, timed.totals);
    }

    #[test]
    fn rabbitmq_with_a_retry_delay_is_the_model_with_one_more_receive(p in parts()) {
        let Some(receives) = p.delivery.split("max_receives = ").nth(1)
            .and_then(|r| r.split('\n').next()).and_then(|r| r.parse::<u32>().ok())
        else { return Ok(()) };
        let mut model = p.clone();
        model.delivery = p.delivery.replace(
            &format!("max_receives = {receives}\n"),
            &format!("max_receives = {}\n", receives + 1),
        );
        let mut rabbit = p.clone();
        rabbit.delivery.push_str("profile = \"rabbitmq-quorum\"\n");
        let (_, a) = run(&model.text());
        let (_, b) = run(&rabbit.text());
        prop_assert_eq!(&a.transitions, &b.transitions);
        prop_assert_eq!(a.totals.deliveries, b.totals.deliveries);
        prop_assert_eq!(a.totals.quarantined, b.totals.quarantined);
    }

    #[test]
    fn without_quarantine_what_would_be_quarantined_is_dropped(p in parts()) {
        let mut p = p;
        p.rest = p.rest.replace("[[operator]]\nwait = \"5s\"\nrepair = true\naction = \"redrive_all\"\n", "");
        let (_, kept) = run(&p.text());
        let mut off = p.clone();
        off.rest.push_str("[quarantine]\nenabled = false\n");
        let (_, dropped) = run(&off.text());
        prop_assert_eq!(dropped.totals.dropped, kept.totals.quarantined);
        prop_assert_eq!(dropped.totals.quarantined, 0);
        prop_assert_eq!(dropped.totals.max_dlq_depth, 0);
        for (a, b) in kept.messages.iter().zip(&dropped.messages) {
            let want = if a.state == State::Quarantined { State::Dropped } else { a.state };
            prop_assert_eq!(want, b.state);
            prop_assert_eq!(a.total_receives, b.total_receives);
        }
    }

    #[test]
    fn overlapping_deliveries_and_crashes_keep_messages_conserved(
        p in parts(),
        timeout in 1u64..4,
        at in prop_oneof![Just("before_effect"), Just("after_effect"), Just("after_done")],
        every in 1usize..3,
        write_intent in any::<bool>(),
    ) {
        let mut p = with_crashes(&p, at, every);
        p.delivery.push_str(&format!("visibility_timeout = \"{timeout}s\"\n"));
        if write_intent {
            p.rest.push_str("[dedup]\nmode = \"write_intent\"\nlease = \"2s\"\nrenew = \"1s\"\nresult_retention = \"1m\"\n");
        }
        let (scenario, outcome) = run(&p.text());
        common::replays_alike(&scenario, &outcome)?;
        let t = &outcome.totals;
        let count = |s: State| outcome.messages.iter().filter(|m| m.state == s).count() as u64;
        prop_assert_eq!(
            t.acked + t.quarantined + t.expired + t.purged + t.dropped + t.pending,
            scenario.message_count()
        );
        prop_assert_eq!(t.pending, count(State::Waiting) + count(State::Ready) + count(State::InFlight));
        let receives: u64 = outcome.messages.iter().map(|m| m.total_receives as u64).sum();
        prop_assert_eq!(t.deliveries, receives);
        prop_assert_eq!(t.effects, outcome.ledger.len() as u64);
        prop_assert!(t.expired_receipts + t.crashes <= t.deliveries);
        prop_assert!(t.deliveries == 0 || t.concurrent_deliveries >= 1);
        if let Some((count, _)) = p.workers {
            prop_assert!(t.max_in_flight <= count);
        }
        // Every delivery started ends (crashed, superseded or decided) by
        // the end of a run that drained; a run stopped at a limit may leave
        // a superseded delivery running after every message settled.
        let ended = outcome.transitions.iter().filter(|x| {
            matches!(x.detail.kind(), EventKind::Acked | EventKind::Failed | EventKind::AckLost
                | EventKind::Crashed | EventKind::ReceiptExpired)
        }).count() as u64;
        prop_assert!(ended <= t.deliveries);
        if t.pending == 0 && t.stopped_by == StoppedBy::Drained as u64 {
            prop_assert_eq!(ended, t.deliveries);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    // The nats-jetstream profile (docs/model.md section 21): nak timers,
    // ack waits per delivery, give-ups at a due time and the answers of
    // superseded deliveries keep every message and delivery accounted for.
    #[test]
    fn jetstream_runs_keep_messages_and_deliveries_conserved(
        p in parts(),
        timeout in 1u64..4,
        backoff in proptest::collection::vec(1u64..4, 0..3),
        no_ack in any::<bool>(),
        every in 1usize..4,
        max_ack_pending in 0u64..4,
    ) {
        let mut p = with_crashes(&p, "before_effect", every);
        let receives = p.delivery.split("max_receives = ").nth(1)
            .and_then(|r| r.split('\n').next()).and_then(|r| r.parse::<usize>().ok());
        let mut delivery = p.delivery.clone();
        if no_ack {
            let retry = delivery.split("retry_interval = ").nth(1)
                .and_then(|r| r.split('\n').next()).unwrap_or("").to_string();
            delivery = delivery.replace(&format!("retry_interval = {retry}\n"), "on_failure = \"no_ack\"\n");
        }
        delivery.push_str(&format!("profile = \"nats-jetstream\"\nvisibility_timeout = \"{timeout}s\"\n"));
        if !backoff.is_empty() && receives.is_none_or(|r| backoff.len() < r) {
            let list: Vec<String> = backoff.iter().map(|b| format!("\"{b}s\"")).collect();
            delivery.push_str(&format!("ack_backoff = [{}]\n", list.join(", ")));
        }
        if max_ack_pending > 0 {
            delivery.push_str(&format!("max_ack_pending = {max_ack_pending}\n"));
        }
        p.delivery = delivery;
        let (scenario, outcome) = run(&p.text());
        prop_assert!(scenario.guarantees.jetstream.is_some());
        common::replays_alike(&scenario, &outcome)?;
        let t = &outcome.totals;
        let count = |s: State| outcome.messages.iter().filter(|m| m.state == s).count() as u64;
        prop_assert_eq!(
            t.acked + t.quarantined + t.expired + t.purged + t.dropped + t.pending,
            scenario.message_count()
        );
        prop_assert_eq!(t.acked, count(State::Acked));
        prop_assert_eq!(t.pending, count(State::Waiting) + count(State::Ready) + count(State::InFlight));
        let receives: u64 = outcome.messages.iter().map(|m| m.total_receives as u64).sum();
        prop_assert_eq!(t.deliveries, receives);
        prop_assert_eq!(t.effects, outcome.ledger.len() as u64);
        if let Some((count, _)) = p.workers {
            prop_assert!(t.max_in_flight <= count);
        }
        // A message is acked at most once.
        let mut acked = BTreeMap::new();
        for x in &outcome.transitions {
            if x.detail.kind() == EventKind::Acked {
                *acked.entry(x.message).or_insert(0) += 1;
            }
        }
        prop_assert!(acked.values().all(|&n| n == 1), "{:?}", acked);
        let ended = outcome.transitions.iter().filter(|x| {
            matches!(x.detail.kind(), EventKind::Acked | EventKind::Failed | EventKind::AckLost
                | EventKind::Crashed | EventKind::ReceiptExpired)
        }).count() as u64;
        prop_assert!(ended <= t.deliveries);
        if t.pending == 0 && t.stopped_by == StoppedBy::Drained as u64 {
            prop_assert_eq!(ended, t.deliveries);
        }
        // MaxAckPending: never more messages delivered in their cycle and
        // not yet acked or given up than it allows.
        if max_ack_pending > 0 {
            let mut pending = std::collections::BTreeSet::new();
            for x in &outcome.transitions {
                match x.detail.kind() {
                    EventKind::Delivered => { pending.insert(x.message); }
                    EventKind::Acked | EventKind::Quarantined | EventKind::Dropped => {
                        pending.remove(&x.message);
                    }
                    _ => {}
                }
                prop_assert!(pending.len() as u64 <= max_ack_pending, "{} pending at {}", pending.len(), x.time);
            }
        }
    }
}

/// Names that explicit ids, keys, groups, generated ids and block group
/// names share on purpose: m0..m3 are explicit ids, t1..t3 the ids of
/// block `t` (whose groups are tg1..tg3), tg1..tg3 the ids of block `tg`.
const NAMES: [&str; 11] = [
    "m0", "m1", "m2", "k1", "k2", "t1", "t2", "t3", "tg1", "tg2", "tg3",
];

prop_compose! {
    /// A per_key file whose names collide: explicit messages m0.. with a
    /// key and a group drawn from [`NAMES`], block `t` with or without
    /// `groups`, and maybe block `tg`.
    fn colliding()(n in 1usize..5)(
        messages in proptest::collection::vec(
            (
                proptest::option::of(0..NAMES.len()),
                proptest::option::of(0..NAMES.len()),
                0u64..6,
                proptest::option::of(1u32..3),
            ),
            n,
        ),
        t_groups in proptest::option::of(1u64..4),
        tg_block in any::<bool>(),
        workers in proptest::option::of(1u64..3),
    ) -> (String, Vec<(String, String)>) {
        let mut text = String::from(
            "[delivery]\nmax_receives = 3\nretry_interval = \"2s\"\nordering = \"per_key\"\n",
        );
        if let Some(w) = workers {
            text.push_str(&format!("[workers]\ncount = {w}\nservice_time = \"1s\"\n"));
        }
        // (id, the name of its group by the rule)
        let mut expected = Vec::new();
        for (i, (key, group, at, fail)) in messages.iter().enumerate() {
            let id = format!("m{i}");
            text.push_str(&format!("[[message]]\nid = \"{id}\"\nat = \"{at}s\"\n"));
            let key = key.map_or(id.clone(), |k| NAMES[k].to_string());
            text.push_str(&format!("key = \"{key}\"\n"));
            if let Some(g) = group {
                text.push_str(&format!("group = \"{}\"\n", NAMES[*g]));
            }
            if let Some(first) = fail {
                text.push_str(&format!("faults = [{{ fail = {{ first = {first} }} }}]\n"));
            }
            expected.push((id, group.map_or(key, |g| NAMES[g].to_string())));
        }
        text.push_str("[[traffic]]\ncount = 3\nover = \"3s\"\nid_prefix = \"t\"\nfaults = [{ fail = { first = 1 } }]\n");
        for j in 1..=3u64 {
            let name = match t_groups {
                Some(g) => format!("tg{}", (j - 1) % g + 1),
                None => format!("t{j}"),
            };
            expected.push((format!("t{j}"), name));
        }
        if let Some(g) = t_groups {
            text.push_str(&format!("groups = {g}\n"));
        }
        if tg_block {
            text.push_str("[[traffic]]\ncount = 3\nover = \"3s\"\nid_prefix = \"tg\"\n");
            for j in 1..=3 {
                expected.push((format!("tg{j}"), format!("tg{j}")));
            }
        }
        (text, expected)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// docs/model.md section 12: a message's group is its `group` when it
    /// names one, else its key (a generated message's: its block group, else
    /// its id); equal names are one group and different names are not,
    /// whatever ids, keys and names coincide. The run is the name-keyed
    /// reference's.
    #[test]
    fn a_message_s_group_is_its_group_else_its_key((text, expected) in colliding()) {
        let (scenario, _) = load_str("p.toml", &text).expect("generated scenarios are valid");
        let group = |id: &str| scenario.group(scenario.find_message(id).expect("an id"));
        for (id, name) in &expected {
            prop_assert_eq!(&scenario.group_name(group(id)), name, "group of {}\n{}", id, text);
        }
        for (a, name_a) in &expected {
            for (b, name_b) in &expected {
                prop_assert_eq!(group(a) == group(b), name_a == name_b, "{} and {}\n{}", a, b, text);
            }
        }
        if let Err(difference) = reference::compare(&text, reference::flow::run(&text)) {
            prop_assert!(false, "{}", difference);
        }
    }
}
