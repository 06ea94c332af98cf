//! Live conformance against a real RabbitMQ, Redis and NATS on 127.0.0.1
//! (docs/conformance.md).
//!
//! Built only with `--features conform`. Each test needs the broker that
//! `scripts/brokers.sh start` runs (RabbitMQ on 127.0.0.1:5672, Redis on
//! 127.0.0.1:6379, NATS on 127.0.0.1:4222; `SCENARIO_RUN_AMQP_URL`,
//! `SCENARIO_RUN_REDIS_URL` and `SCENARIO_RUN_NATS_URL` name others);
//! without one it says so and skips, unless
//! `CONFORM_REQUIRED=1` (set by `.ci/run`, which starts the brokers),
//! where a missing broker fails the test.
#![cfg(feature = "conform")]

use scenario_run::conform::{self, LiveError, Target, compare::End, store::Answer};

/// One live run at a time: runs in parallel would share the brokers' disks
/// and CPU, and a busy broker's latency is not the one its probe measured.
static LIVE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the live-run lock for the rest of a test (a failed test's poison
/// is not this test's concern).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn url(target: Target) -> String {
    let (var, default) = match target {
        Target::Amqp => ("SCENARIO_RUN_AMQP_URL", "amqp://127.0.0.1:5672"),
        Target::Redis => ("SCENARIO_RUN_REDIS_URL", "redis://127.0.0.1:6379"),
        Target::Nats => ("SCENARIO_RUN_NATS_URL", "nats://127.0.0.1:4222"),
    };
    std::env::var(var).unwrap_or_else(|_| default.into())
}

/// The live-run lock when the broker answers; if not, a skip with its
/// reason (`None`), or a failure when the run requires brokers.
fn live(target: Target, test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    let guard = one_at_a_time();
    broker_up(target, test).then_some(guard)
}

/// Whether the broker answers; if not, a skip with its reason, or a
/// failure when the run requires brokers.
fn broker_up(target: Target, test: &str) -> bool {
    let url = url(target);
    let address = url.split("://").nth(1).unwrap_or("").trim_end_matches('/');
    if std::net::TcpStream::connect(address).is_ok() {
        return true;
    }
    assert!(
        std::env::var("CONFORM_REQUIRED").as_deref() != Ok("1"),
        "{test}: CONFORM_REQUIRED=1 and nothing answers at {url}"
    );
    eprintln!("skipped {test}: nothing answers at {url} (run scripts/brokers.sh start)");
    false
}

/// The conformance scenarios for one broker: `scenarios/conformance/PREFIX-*.toml`.
fn bundled(prefix: &str) -> Vec<String> {
    let mut files: Vec<String> = glob::glob(&format!("scenarios/conformance/{prefix}-*.toml"))
        .unwrap()
        .map(|p| p.unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

fn prepared(files: &[String], target: Target) -> Vec<conform::Prepared> {
    files
        .iter()
        .map(|f| conform::prepare(f, target, None).unwrap_or_else(|e| panic!("{f}: {e:?}")))
        .collect()
}

/// Runs the `count` bundled files of `prefix` against `target` and
/// asserts that each conforms; what the broker did, for a closer look.
fn all_conform(target: Target, prefix: &str, count: usize) -> Vec<conform::Checked> {
    let files = bundled(prefix);
    assert_eq!(files.len(), count, "{files:?}");
    let url = url(target);
    let (broker, checked) = conform::live(&url, &prepared(&files, target)).expect("a live run");
    for c in &checked {
        assert!(
            c.conforms(),
            "{}",
            conform::output::render(&broker, &url, std::slice::from_ref(c))
        );
    }
    checked
}

/// Runs `file` on the broker of `target`, compared with the model of the
/// file with `from` replaced by `to` (a deliberately wrong rule): what
/// the comparison found, and its printed form.
fn against_another_model(
    file: &str,
    target: Target,
    from: &str,
    to: &str,
) -> (Vec<conform::Checked>, String) {
    let mut prepared = conform::prepare(file, target, None).expect("prepared");
    let text = std::fs::read_to_string(file).unwrap().replace(from, to);
    let other = scenario_run::scenario::load_str("other.toml", &text)
        .expect("valid")
        .0;
    let conform::Kind::Queue { plan, modeled } = &mut prepared.kind else {
        panic!("a queue file");
    };
    *modeled = conform::modeled::modeled(&other, plan).expect("the other model runs");
    let url = url(target);
    let (broker, checked) = conform::live(&url, &[prepared]).expect("a live run");
    let text = conform::output::render(&broker, &url, &checked);
    assert!(!checked[0].conforms(), "{text}");
    assert!(text.contains("DIFFERS"), "{text}");
    (checked, text)
}

#[test]
fn every_rabbitmq_conformance_scenario_conforms_to_the_real_broker() {
    let Some(_live) = live(Target::Amqp, "every_rabbitmq_conformance_scenario_conforms") else {
        return;
    };
    let checked = all_conform(Target::Amqp, "rabbitmq", 14);
    // What the broker did, not only that it agreed: the poison message
    // of the limit scenario, delivered L + 1 = 6 times with its count.
    let poison = &checked[0].broker[0];
    assert_eq!(poison.id, "poison");
    let counts: Vec<u64> = poison.deliveries.iter().map(|d| d.delivery_count).collect();
    assert_eq!(counts, [0, 1, 2, 3, 4, 5]);
    assert_eq!(
        poison.end,
        End::DeadLettered {
            reason: "delivery_limit".into()
        }
    );
    assert_eq!(poison.x_death_count, Some(1), "the dead letter's x-death");
    // The dead-letter queue's retention, counted from entering it: at the
    // inspection the letter dead since 0 is gone, the one dead since
    // 1.5 s (published at 0 too) is still there; a purge deletes what
    // is left.
    let ends = |c: &conform::Checked| -> Vec<(String, End)> {
        c.broker
            .iter()
            .map(|m| (m.id.clone(), m.end.clone()))
            .collect()
    };
    let limit = || "delivery_limit".to_string();
    assert_eq!(
        ends(&checked[9]),
        [
            ("fast".into(), End::Expired { reason: limit() }),
            ("slow".into(), End::DeadLettered { reason: limit() }),
        ]
    );
    let rejected = || "rejected".to_string();
    assert_eq!(
        ends(&checked[10]),
        [
            ("old".into(), End::Expired { reason: rejected() }),
            ("healthy".into(), End::Acked),
            ("recent".into(), End::Purged { reason: rejected() }),
        ]
    );
}

#[test]
fn a_model_whose_dead_letters_expire_sooner_differs_from_the_broker() {
    let Some(_live) = live(Target::Amqp, "a_model_whose_dead_letters_expire_sooner") else {
        return;
    };
    // The broker keeps dead letters for 1 s; the model for 500 ms, so
    // at the inspection (600 ms after `slow` was dead-lettered) the
    // model has it expired and the broker still holds it.
    let (checked, text) = against_another_model(
        "scenarios/conformance/rabbitmq-10-dead-letter-retention.toml",
        Target::Amqp,
        "retention = \"1s\"",
        "retention = \"500ms\"",
    );
    let d = &checked[0].differences;
    assert_eq!(d.len(), 1, "{text}");
    assert_eq!((d[0].message.as_str(), d[0].what.as_str()), ("slow", "end"));
    assert_eq!(
        (d[0].model.as_str(), d[0].broker.as_str()),
        (
            "dead-lettered (delivery_limit), expired",
            "dead-lettered (delivery_limit)"
        ),
        "{text}"
    );
    assert!(d[0].rule.contains("section 5"), "{text}");
}

/// A limit the file leaves to the profile's default is left to the
/// broker's default (no `x-delivery-limit`): a model whose 3.10 default
/// were 4.x's 20 would dead-letter rabbitmq-09's poison message at its
/// 21st delivery, where RabbitMQ 3.10.8 delivers it a 22nd time.
#[test]
fn a_default_left_to_the_broker_is_checked_not_imposed() {
    let Some(_live) = live(Target::Amqp, "a_default_left_to_the_broker_is_checked") else {
        return;
    };
    let (checked, text) = against_another_model(
        "scenarios/conformance/rabbitmq-09-requeue-to-the-back-without-a-limit.toml",
        Target::Amqp,
        "broker_version = \"3.10\"",
        "broker_version = \"4.0\"",
    );
    let d = &checked[0].differences;
    assert!(
        d.iter().any(|d| d.message == "poison" && d.what == "end"),
        "{text}"
    );
    assert_eq!(checked[0].broker[0].deliveries.len(), 22, "{text}");
}

#[test]
fn a_model_with_the_limit_off_by_one_differs_from_the_broker() {
    let Some(_live) = live(Target::Amqp, "a_model_with_the_limit_off_by_one_differs") else {
        return;
    };
    // The wrong rule: a limit of L gives L deliveries (as `max_receives`
    // does under the plain model), while the queue keeps x-delivery-limit
    // = L.
    let (checked, text) = against_another_model(
        "scenarios/conformance/rabbitmq-01-quorum-delivery-limit.toml",
        Target::Amqp,
        "profile = \"rabbitmq-quorum\"",
        "retry_interval = \"0s\"",
    );
    let d = &checked[0].differences;
    assert_eq!(d[0].message, "poison");
    assert_eq!(d[0].what, "deliveries");
    assert_eq!(
        (d[0].model.as_str(), d[0].broker.as_str()),
        ("5", "6"),
        "{text}"
    );
}

#[test]
fn every_jetstream_conformance_scenario_conforms_to_a_real_nats_server() {
    let Some(_live) = live(
        Target::Nats,
        "every_jetstream_conformance_scenario_conforms",
    ) else {
        return;
    };
    let checked = all_conform(Target::Nats, "nats", 5);
    // What the server did: the BackOff gaps of 100, 200, 400 and 400 ms
    // (within the tolerance), then the advisory.
    let poison = &checked[0].broker[0];
    assert_eq!(poison.id, "poison");
    let at: Vec<f64> = poison.deliveries.iter().map(|d| d.at).collect();
    let gaps: Vec<f64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    for (gap, want) in gaps.iter().zip([100.0, 200.0, 400.0, 400.0]) {
        assert!((gap - want).abs() < 40.0, "{gaps:?}");
    }
    assert_eq!(gaps.len(), 4, "{gaps:?}");
    let counts: Vec<u64> = poison.deliveries.iter().map(|d| d.delivery_count).collect();
    assert_eq!(counts, [0, 1, 2, 3, 4]);
    assert_eq!(
        poison.end,
        End::Advisory {
            advisory: "max_deliveries".into()
        }
    );
    let term = &checked[2].broker[1];
    assert_eq!(
        (term.deliveries.len(), &term.end),
        (
            1,
            &End::Advisory {
                advisory: "terminated".into()
            }
        )
    );
}

#[test]
fn a_model_that_ignores_the_backoff_list_differs_from_jetstream() {
    let Some(_live) = live(
        Target::Nats,
        "a_model_that_ignores_the_backoff_list_differs",
    ) else {
        return;
    };
    // The wrong rule: every delivery waits the first BackOff value, while
    // the consumer keeps the whole list.
    let (checked, text) = against_another_model(
        "scenarios/conformance/nats-01-max-deliver-with-backoff.toml",
        Target::Nats,
        "ack_backoff = [\"100ms\", \"200ms\", \"400ms\"]",
        "visibility_timeout = \"100ms\"",
    );
    // The run stops at the wrong model's end: the third delivery came
    // late, and the server had not given the message up by then.
    let d = &checked[0].differences;
    let third = d
        .iter()
        .find(|d| d.what == "delivery 3: time")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(third.message, "poison");
    assert_eq!(third.model, "200 ms", "{text}");
    assert!(third.rule.contains("nats-jetstream 3 and 4"), "{text}");
}

#[test]
fn a_model_without_max_ack_pending_differs_from_jetstream() {
    let Some(_live) = live(Target::Nats, "a_model_without_max_ack_pending_differs") else {
        return;
    };
    // The wrong rule: nothing is held, while the consumer keeps
    // MaxAckPending = 1, so the server hands `order-2` over only when the
    // poison is given up at 600 ms.
    let (checked, text) = against_another_model(
        "scenarios/conformance/nats-05-max-ack-pending-blocks-the-stream.toml",
        Target::Nats,
        "max_ack_pending = 1 ",
        "max_ack_pending = \"unlimited\" ",
    );
    let d = &checked[0].differences;
    let first = d
        .iter()
        .find(|d| d.message == "order-2" && d.what == "delivery 1: time")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(first.model, "0 ms", "{text}");
    assert!(first.broker.starts_with("6"), "{text}");
    assert!(first.rule.contains("nats-jetstream 9"), "{text}");
}

#[test]
fn a_model_of_a_quorum_queue_differs_from_a_classic_queue() {
    let Some(_live) = live(Target::Amqp, "a_model_of_a_quorum_queue_differs") else {
        return;
    };
    // The wrong rule: the quorum queue of 3.10 without a limit returns the
    // nacked message to the back, while the classic queue puts it back
    // at the head: the broker delivers `order-2` only at 600 ms.
    let (checked, text) = against_another_model(
        "scenarios/conformance/rabbitmq-12-classic-queue-without-a-limit.toml",
        Target::Amqp,
        "profile = \"rabbitmq-classic\"",
        "profile = \"rabbitmq-quorum\"\nbroker_version = \"3.10\"",
    );
    let d = &checked[0].differences;
    let first = d
        .iter()
        .find(|d| d.message == "order-2" && d.what == "delivery 1: time")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(first.model, "100 ms", "{text}");
    let broker_ms: f64 = first.broker.split(' ').next().unwrap().parse().unwrap();
    assert!((550.0..700.0).contains(&broker_ms), "{text}");
    let poison = checked[0].broker.iter().find(|m| m.id == "poison").unwrap();
    let flags: Vec<u64> = poison.deliveries.iter().map(|d| d.delivery_count).collect();
    assert_eq!(flags, [0, 1, 1, 1, 1, 1], "{text}");
}

#[test]
fn the_written_requeue_rule_differs_from_rabbitmq_3_10_where_broker_version_conforms() {
    let Some(_live) = live(Target::Amqp, "the_written_requeue_rule_differs") else {
        return;
    };
    // Section 21 as written: a requeue goes behind the two orders.
    let (checked, text) = against_another_model(
        "scenarios/conformance/rabbitmq-08-requeue-to-the-head.toml",
        Target::Amqp,
        "broker_version = \"3.10\"",
        "",
    );
    let d = &checked[0].differences[0];
    assert_eq!(
        (d.message.as_str(), d.what.as_str()),
        ("poison", "delivery 2: time"),
        "{text}"
    );
    assert_eq!(d.model, "300 ms", "{text}");
    assert!(d.rule.contains("rabbitmq-quorum 2 and 3"), "{text}");
}

#[test]
fn every_write_intent_conformance_scenario_conforms_to_a_real_redis() {
    let Some(_live) = live(
        Target::Redis,
        "every_write_intent_conformance_scenario_conforms",
    ) else {
        return;
    };
    let checked = all_conform(Target::Redis, "redis", 3);
    let answers: Vec<Option<Answer>> = checked[0].store.iter().map(|r| r.redis).collect();
    assert_eq!(
        answers,
        [
            Some(Answer::Claimed),
            Some(Answer::Contention),
            Some(Answer::Contention),
            Some(Answer::Claimed)
        ],
        "the dead claim blocks twice, then its lease has expired"
    );
}

#[test]
fn a_model_whose_lease_outlives_the_stores_differs_from_redis() {
    let Some(_live) = live(Target::Redis, "a_model_whose_lease_outlives_the_stores") else {
        return;
    };
    // The model's claims last 350 ms; the store is given the file's 250.
    let file = "scenarios/conformance/redis-01-write-intent-lease-expiry.toml";
    let text = std::fs::read_to_string(file)
        .unwrap()
        .replace("lease = \"250ms\"", "lease = \"350ms\"");
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("wrong.toml");
    std::fs::write(&wrong, text).unwrap();
    let mut prepared =
        conform::prepare(wrong.to_str().unwrap(), Target::Redis, None).expect("prepared");
    let conform::Kind::Store(plan) = &mut prepared.kind else {
        panic!("a store file");
    };
    plan.lease = 250;
    let url = url(Target::Redis);
    let (broker, checked) = conform::live(&url, &[prepared]).expect("a live run");
    let text = conform::output::render(&broker, &url, &checked);
    // The model waits until 400 ms to claim again; Redis frees the key at
    // 250 ms, so the delivery at 300 ms claims, and the one at 400 ms
    // meets that new claim.
    let d = &checked[0].differences;
    assert_eq!(d.len(), 2, "{text}");
    assert_eq!(
        d[0].what, "delivery 4 at 300 ms (key \"pay-7\"): store",
        "{text}"
    );
    assert_eq!(
        (d[0].model.as_str(), d[0].broker.as_str()),
        ("contention", "claimed")
    );
    assert_eq!(
        (d[1].model.as_str(), d[1].broker.as_str()),
        ("claimed", "contention")
    );
    assert!(d[0].rule.contains("section 18"), "{text}");
}

#[test]
fn redis_keeps_a_key_live_at_its_expiry_millisecond_and_the_run_says_so() {
    let Some(_live) = live(
        Target::Redis,
        "redis_keeps_a_key_live_at_its_expiry_millisecond",
    ) else {
        return;
    };
    let file = "scenarios/conformance/redis-03-write-intent-done-expires.toml";
    let url = url(Target::Redis);
    let (broker, _) =
        conform::live(&url, &prepared(&[file.into()], Target::Redis)).expect("a live run");
    // Redis 7.0: live through its expiry's millisecond (the model: live
    // strictly before it, section 18), found by a script whose clock
    // stands still, not by timing.
    assert!(
        broker
            .notes
            .iter()
            .any(|n| n.contains("live at its expiry")),
        "{:?}",
        broker.notes
    );
}

#[test]
fn a_broker_that_is_not_there_is_named_and_nothing_runs() {
    let _live = one_at_a_time();
    // Port 1: nothing listens there, and, below the ephemeral range, it
    // cannot be a connection's own source port. (A port bound and let go
    // is in that range: a connection to it can, rarely, connect to itself,
    // which CI once met: the broker "answered" with our own greeting.)
    let port = 1;
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "something listens on 127.0.0.1:{port}"
    );
    for (target, scheme, file) in [
        (
            Target::Amqp,
            "amqp",
            "rabbitmq-01-quorum-delivery-limit.toml",
        ),
        (
            Target::Redis,
            "redis",
            "redis-01-write-intent-lease-expiry.toml",
        ),
        (
            Target::Nats,
            "nats",
            "nats-01-max-deliver-with-backoff.toml",
        ),
    ] {
        let prepared = conform::prepare(&format!("scenarios/conformance/{file}"), target, None)
            .expect("prepared");
        let url = format!("{scheme}://127.0.0.1:{port}");
        let Err(LiveError::Absent(why)) = conform::live(&url, &[prepared]) else {
            panic!("no broker there");
        };
        assert!(why.contains(&format!("127.0.0.1:{port}")), "{why}");
    }
}

/// A URL at another kind of server than its scheme names is refused
/// within 2 s, naming what is there and the scheme to use.
#[test]
fn a_url_at_the_wrong_kind_of_server_is_named_as_such() {
    let Some(_live) = live(Target::Amqp, "a_url_at_the_wrong_kind_of_server") else {
        return;
    };
    let ports = |t: Target| url(t).rsplit(':').next().unwrap().to_string();
    for (target, scheme, file, at, there) in [
        (
            Target::Amqp,
            "amqp",
            "rabbitmq-01-quorum-delivery-limit.toml",
            Target::Redis,
            "a Redis server",
        ),
        (
            Target::Nats,
            "nats",
            "nats-01-max-deliver-with-backoff.toml",
            Target::Amqp,
            "an AMQP broker",
        ),
        (
            Target::Redis,
            "redis",
            "redis-01-write-intent-lease-expiry.toml",
            Target::Nats,
            "a NATS server",
        ),
    ] {
        if !broker_up(at, "a_url_at_the_wrong_kind_of_server") {
            continue;
        }
        let prepared = conform::prepare(&format!("scenarios/conformance/{file}"), target, None)
            .expect("prepared");
        let url = format!("{scheme}://127.0.0.1:{}", ports(at));
        let began = std::time::Instant::now();
        let Err(LiveError::Failed(why)) = conform::live(&url, &[prepared]) else {
            panic!("{url} is not the server its scheme names");
        };
        assert!(began.elapsed() < std::time::Duration::from_secs(2), "{url}");
        assert!(why.contains(there), "{why}");
    }
}

#[test]
fn the_command_exits_0_when_every_file_conforms_and_prints_one_line_per_file() {
    let Some(_live) = live(Target::Amqp, "the_command_exits_0_when_every_file_conforms") else {
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scenario-run"))
        .args([
            "conform",
            "--broker",
            &url(Target::Amqp),
            "scenarios/conformance/rabbitmq-03-nack-versus-reject.toml",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["files"][0]["status"], "conforms");
    let malformed = &doc["files"][0]["messages"][0]["broker"];
    assert_eq!(malformed["end"]["reason"], "rejected");
    assert_eq!(malformed["deliveries"].as_array().unwrap().len(), 1);
}

#[test]
fn the_command_writes_a_junit_file_and_an_html_page_of_the_run() {
    let Some(_live) = live(
        Target::Redis,
        "the_command_writes_a_junit_file_and_an_html_page",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("conformance.xml");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scenario-run"))
        .args(["conform", "--broker", &url(Target::Redis)])
        .arg("--junit")
        .arg(&junit)
        .arg("--report")
        .arg(dir.path().join("report"))
        .arg("scenarios/conformance/redis-01-write-intent-lease-expiry.toml")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(doc.root_element().attribute("tests"), Some("4"));
    assert_eq!(doc.root_element().attribute("failures"), Some("0"));
    let page = std::fs::read_to_string(dir.path().join("report/conformance.html")).unwrap();
    assert!(page.contains("<title>Conformance against Redis "), "{page}");
    assert!(
        page.contains("<td>contention</td><td>contention</td>"),
        "{page}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("report/conformance.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["files"][0]["store"].as_array().unwrap().len(), 4);
}

#[test]
fn a_file_for_the_other_broker_is_refused_before_anything_runs() {
    let _live = one_at_a_time();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scenario-run"))
        .args([
            "conform",
            "--broker",
            "redis://127.0.0.1:1",
            "scenarios/conformance/rabbitmq-01-quorum-delivery-limit.toml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("conform cannot check this file: [dedup] mode"),
        "{err}"
    );
}
