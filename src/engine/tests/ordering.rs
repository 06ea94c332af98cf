//! docs/model.md section 12, ordering: `fifo` and `per_key` groups,
//! head-of-line blocking, and decision 16.12.

use super::*;

const POISON_FIRST: &str = "[[message]]\nid = \"poison\"\nkey = \"k1\"\nfaults = [{ fail = { first = 2 } }]\n\
                            [[message]]\nid = \"a\"\nkey = \"k2\"\n[[message]]\nid = \"b\"\nkey = \"k1\"\nat = \"1s\"\n";

#[test]
fn s12_fifo_blocks_the_queue_behind_a_head_awaiting_its_retry() {
    let (scenario, outcome) = sim(&format!(
        "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\nordering = \"fifo\"\n{POISON_FIRST}"
    ));
    // poison fails at 0 and 10s, succeeds at 20s; a and b wait behind it.
    assert_eq!(
        order_of(&scenario, &outcome, EventKind::Acked),
        ["poison", "a", "b"]
    );
    let a = msg(&scenario, &outcome, "a");
    assert_eq!(
        (a.acked_at(), wait(&scenario, &outcome, "a")),
        (Some(20_000), 20_000)
    );
    let b = msg(&scenario, &outcome, "b");
    assert_eq!(
        (b.acked_at(), wait(&scenario, &outcome, "b")),
        (Some(20_000), 19_000)
    );
    // Ready but blocked messages count in the queue depth (16.6).
    assert_eq!(outcome.totals.max_queue_depth, 2);
    assert_eq!(outcome.totals.latency_max, 20_000);
}

#[test]
fn s12_per_key_confines_the_blocking_to_the_group() {
    let (scenario, outcome) = sim(&format!(
        "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\nordering = \"per_key\"\n{POISON_FIRST}"
    ));
    assert_eq!(
        order_of(&scenario, &outcome, EventKind::Acked),
        ["a", "poison", "b"]
    );
    assert_eq!(msg(&scenario, &outcome, "a").acked_at(), Some(0));
    // b shares poison's key k1, so its group.
    assert_eq!(msg(&scenario, &outcome, "b").acked_at(), Some(20_000));
}

#[test]
fn s12_a_quarantined_head_leaves_its_group() {
    let (scenario, outcome) = sim(&format!(
        "[delivery]\nmax_receives = 1\nretry_interval = \"10s\"\nordering = \"fifo\"\n{POISON_FIRST}"
    ));
    assert_eq!(msg(&scenario, &outcome, "poison").state, State::Quarantined);
    assert_eq!(msg(&scenario, &outcome, "a").acked_at(), Some(0));
    assert_eq!(msg(&scenario, &outcome, "b").acked_at(), Some(1_000));
}

#[test]
fn s12_explicit_groups_and_generated_groups() {
    let text = "[delivery]\nmax_receives = 2\nretry_interval = \"5s\"\nordering = \"per_key\"\n\
                [[message]]\nid = \"x\"\ngroup = \"o-g2\"\nfaults = [{ fail = { first = 1 } }]\n\
                [[traffic]]\ncount = 4\nover = \"4s\"\nid_prefix = \"o-\"\ngroups = 2\n";
    let (scenario, outcome) = sim(text);
    let group = |id| scenario.group_name(scenario.group(scenario.find_message(id).unwrap()));
    assert_eq!(group("o-1"), "o-g1");
    assert_eq!(group("o-2"), "o-g2");
    assert_eq!(group("o-3"), "o-g1");
    assert_eq!(group("x"), "o-g2");
    // x (group o-g2) fails at 0, retries at 5s: o-2 (1s) and o-4 (3s)
    // wait behind it; o-1 and o-3 do not.
    let acked = |id| msg(&scenario, &outcome, id).acked_at();
    assert_eq!(acked("o-1"), Some(0));
    assert_eq!(acked("o-3"), Some(2_000));
    assert_eq!(acked("x"), Some(5_000));
    assert_eq!(acked("o-2"), Some(5_000));
    assert_eq!(acked("o-4"), Some(5_000));
}

#[test]
fn s12_per_key_with_one_group_equals_fifo() {
    let body = "max_receives = 3\nretry_interval = \"7s\"\n[workers]\ncount = 2\nservice_time = \"2s\"\n\
                [[message]]\nid = \"p\"\nfaults = [{ fail = { first = 2 } }]\n\
                [[traffic]]\ncount = 9\nover = \"9s\"\nid_prefix = \"t\"\n";
    let (_, fifo) = sim(&format!("[delivery]\nordering = \"fifo\"\n{body}"));
    let (_, one) = sim(&format!(
        "[delivery]\nordering = \"per_key\"\n{}",
        body.replace("id = \"p\"\n", "id = \"p\"\ngroup = \"tg1\"\n")
            .replace("id_prefix = \"t\"\n", "id_prefix = \"t\"\ngroups = 1\n")
    ));
    assert_eq!(fifo.messages, one.messages);
    assert_eq!(fifo.totals.latency_p99, one.totals.latency_p99);
}

#[test]
fn d16_12_a_redriven_message_queues_behind_the_others() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\nordering = \"fifo\"\n\
         [workers]\ncount = 1\nservice_time = \"1s\"\n\
         [[operator]]\nwait = \"0s\"\nrepair = true\naction = \"redrive_all\"\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"a\"\n",
    );
    // p fails 0-1s and is quarantined; a runs 1s-2s; drained at 2s, p is
    // redriven at 2s: ready then, so no queue wait for it this time.
    let p = msg(&scenario, &outcome, "p");
    assert_eq!(
        (p.acked_at(), wait(&scenario, &outcome, "p")),
        (Some(3_000), 0)
    );
    assert_eq!(wait(&scenario, &outcome, "a"), 1_000);
}

/// The group of message `id`, by name.
fn group_of(scenario: &Scenario, id: &str) -> String {
    scenario
        .group_name(scenario.group(scenario.find_message(id).unwrap()))
        .into_owned()
}

#[test]
fn s12_a_group_named_like_a_message_id_is_not_that_message_s_group() {
    // m1 names the group "m1" (its own id); m7's group is its key k3, which
    // m1 shares as a key only. Two groups: both start at 0s on two workers.
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 1\nbackoff = { base = \"5s\", cap = \"10s1ms\" }\nordering = \"per_key\"\n\
         [workers]\ncount = 2\nservice_time = \"10000ms\"\n\
         [[message]]\nid = \"m1\"\nkey = \"k3\"\ngroup = \"m1\"\n\
         [[message]]\nid = \"m7\"\nkey = \"k3\"\n",
    );
    assert_eq!(group_of(&scenario, "m1"), "m1");
    assert_eq!(group_of(&scenario, "m7"), "k3");
    assert_eq!(msg(&scenario, &outcome, "m1").acked_at(), Some(10_000));
    assert_eq!(msg(&scenario, &outcome, "m7").acked_at(), Some(10_000));
    assert_eq!(wait(&scenario, &outcome, "m7"), 0);
}

#[test]
fn s12_naming_another_message_s_id_does_not_join_its_key_s_group() {
    // m4 names "m1", the id of m1, whose group is its key "k2~r1"; m1
    // fails forever and blocks its own group only.
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"3s\"\nordering = \"per_key\"\n\
         [limits]\nmax_events = 40\non_limit = \"stop\"\n\
         [[message]]\nid = \"m1\"\nkey = \"k2~r1\"\nfaults = [{ fail = { until = \"repair\" }, class = \"permanent\" }]\n\
         [[message]]\nid = \"m4\"\ngroup = \"m1\"\n",
    );
    assert_eq!(group_of(&scenario, "m1"), "k2~r1");
    assert_eq!(group_of(&scenario, "m4"), "m1");
    assert_eq!(msg(&scenario, &outcome, "m4").acked_at(), Some(0));
}

#[test]
fn s12_a_name_is_one_group_whichever_message_gives_it() {
    // Block t's group names tg1, tg2 are block tg's ids tg1, tg2 (their own
    // groups); x names "tg2" and y has the key "t3" (generated t3's id
    // and group name when block t had no groups; here only a name).
    let text = "[delivery]\nmax_receives = 2\nretry_interval = \"5s\"\nordering = \"per_key\"\n\
                [[message]]\nid = \"x\"\ngroup = \"tg2\"\n\
                [[message]]\nid = \"y\"\nkey = \"t3\"\n\
                [[traffic]]\ncount = 4\nover = \"4s\"\nid_prefix = \"t\"\ngroups = 2\n\
                [[traffic]]\ncount = 3\nover = \"3s\"\nid_prefix = \"tg\"\n";
    let (scenario, _) = sim(text);
    let number = |id| scenario.group(scenario.find_message(id).unwrap());
    for (a, b, same) in [
        ("t2", "tg2", true),
        ("t2", "x", true),
        ("t1", "tg1", true),
        ("t1", "tg2", false),
        ("tg3", "t1", false),
        ("y", "t3", false),
        ("y", "x", false),
    ] {
        assert_eq!(number(a) == number(b), same, "{a} and {b}");
    }
    assert_eq!(group_of(&scenario, "t4"), "tg2");
    assert_eq!(group_of(&scenario, "tg2"), "tg2");
    assert_eq!(group_of(&scenario, "x"), "tg2");
    assert_eq!(group_of(&scenario, "tg3"), "tg3");
    assert_eq!(group_of(&scenario, "t3"), "tg1");
    assert_eq!(group_of(&scenario, "y"), "t3");
}
