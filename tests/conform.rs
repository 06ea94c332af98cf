//! Live conformance against a real RabbitMQ on 127.0.0.1 (docs/conformance.md).
//!
//! Built only with `--features conform`. Each test needs the broker that
//! `scripts/brokers.sh start` runs; without one it says so and skips,
//! unless `CONFORM_REQUIRED=1` (set by `.ci/run`, which starts the
//! brokers), where a missing broker fails the test.
#![cfg(feature = "conform")]

use scenario_run::conform::{self, LiveError, compare::End};

const URL: &str = "amqp://127.0.0.1:5672";

/// Whether the broker answers; if not, a skip with its reason, or a
/// failure when the run requires brokers.
fn broker_up(test: &str) -> bool {
    if std::net::TcpStream::connect("127.0.0.1:5672").is_ok() {
        return true;
    }
    assert!(
        std::env::var("CONFORM_REQUIRED").as_deref() != Ok("1"),
        "{test}: CONFORM_REQUIRED=1 and no RabbitMQ answers on 127.0.0.1:5672"
    );
    eprintln!("skipped {test}: no RabbitMQ on 127.0.0.1:5672 (run scripts/brokers.sh start)");
    false
}

fn bundled() -> Vec<String> {
    let mut files: Vec<String> = glob::glob("scenarios/conformance/*.toml")
        .unwrap()
        .map(|p| p.unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

#[test]
fn every_bundled_conformance_scenario_conforms_to_the_real_broker() {
    if !broker_up("every_bundled_conformance_scenario_conforms_to_the_real_broker") {
        return;
    }
    let files = bundled();
    assert!(files.len() >= 6, "{files:?}");
    let prepared: Vec<_> = files
        .iter()
        .map(|f| conform::prepare(f, None).unwrap_or_else(|e| panic!("{f}: {e:?}")))
        .collect();
    let (broker, checked) = conform::live(URL, &prepared).expect("a live run");
    assert_eq!(broker.name, "RabbitMQ");
    for c in &checked {
        assert!(
            c.conforms(),
            "{}\n{}",
            c.file,
            conform::render(&broker, URL, std::slice::from_ref(c))
        );
    }
    // What the broker did, not only that it agreed: the poison message
    // of the limit scenario, delivered L + 1 = 6 times with its count.
    let limit = &checked[0];
    let poison = &limit.broker[0];
    assert_eq!(poison.id, "poison");
    let counts: Vec<u64> = poison.deliveries.iter().map(|d| d.delivery_count).collect();
    assert_eq!(counts, [0, 1, 2, 3, 4, 5]);
    assert_eq!(
        poison.end,
        End::DeadLettered {
            reason: "delivery_limit".into()
        }
    );
}

#[test]
fn a_model_with_the_limit_off_by_one_differs_from_the_broker() {
    if !broker_up("a_model_with_the_limit_off_by_one_differs_from_the_broker") {
        return;
    }
    let file = "scenarios/conformance/01-quorum-delivery-limit.toml";
    let mut prepared = conform::prepare(file, None).expect("prepared");
    // The wrong rule: a limit of L gives L deliveries (as `max_receives`
    // does under the plain model), while the queue keeps x-delivery-limit
    // = L.
    let text = std::fs::read_to_string(file)
        .unwrap()
        .replace("profile = \"rabbitmq-quorum\"", "retry_interval = \"0s\"");
    let wrong = scenario_run::scenario::load_str("wrong.toml", &text)
        .expect("valid")
        .0;
    prepared.modeled =
        conform::modeled::modeled(&wrong, &prepared.plan).expect("the wrong model runs");
    let (broker, checked) = conform::live(URL, &[prepared]).expect("a live run");
    let text = conform::render(&broker, URL, &checked);
    assert!(!checked[0].conforms(), "{text}");
    let d = &checked[0].differences;
    assert_eq!(d[0].message, "poison");
    assert_eq!(d[0].what, "deliveries");
    assert_eq!(
        (d[0].model.as_str(), d[0].broker.as_str()),
        ("5", "6"),
        "{text}"
    );
    assert!(text.contains("DIFFERS"), "{text}");
}

#[test]
fn a_broker_that_is_not_there_is_named_and_nothing_runs() {
    let file = "scenarios/conformance/01-quorum-delivery-limit.toml";
    let prepared = conform::prepare(file, None).expect("prepared");
    // A port nothing listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("amqp://127.0.0.1:{port}");
    let Err(LiveError::Absent(why)) = conform::live(&url, &[prepared]) else {
        panic!("no broker there");
    };
    assert!(why.contains(&format!("127.0.0.1:{port}")), "{why}");
}

#[test]
fn the_command_exits_0_when_every_file_conforms_and_prints_one_line_per_file() {
    if !broker_up("the_command_exits_0_when_every_file_conforms_and_prints_one_line_per_file") {
        return;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scenario-run"))
        .args([
            "conform",
            "--broker",
            URL,
            "scenarios/conformance/03-nack-versus-reject.toml",
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
