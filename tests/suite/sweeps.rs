//! Sweeps and `--set`: a point is the file with its values written in
//! place; one status line per sweep; every output names a point by its
//! values.

use crate::common;

use common::{code, run, scratch, stderr, stdout};
use scenario_run::engine::{Recorder, run as run_engine};
use scenario_run::scenario::{Loaded, load, load_str};
use serde_json::Value;

const LAB: &str = "scenarios/28-poison-lab-sweep.toml";

/// A small file whose `max_receives`, `share` and `seed` a test writes.
fn base(max_receives: &str, share: &str, seed: &str) -> String {
    format!(
        "[scenario]\nname = \"small\"\nseed = {seed}\n\
         [delivery]\nmax_receives = {max_receives}\nbackoff = {{ base = \"100ms\", cap = \"5s\", jitter = \"full\" }}\n\
         [workers]\ncount = 2\nservice_time = \"20ms\"\n\
         [[traffic]]\ncount = 300\nover = \"30s\"\narrival = \"poisson\"\n\
         [[traffic.mix]]\nname = \"poison\"\nshare = {share}\n\
         faults = [{{ fail = {{ until = \"repair\" }}, reason = \"bad\" }}]\n\
         [[alarm]]\nname = \"dlq\"\nmetric = \"dlq_depth\"\nat_least = 3\n\
         [expect]\nquarantined = {{ at_least = 0 }}\n"
    )
}

#[test]
fn each_point_is_the_file_with_its_values_written_in_place() {
    let sweep_text = format!(
        "{}[sweep]\n\"delivery.max_receives\" = [1, 4]\n\"traffic.1.mix.1.share\" = [0.0, 0.1, 0.25]\n\"scenario.seed\" = [3, 11]\n",
        base("2", "0.5", "0")
    );
    let (loaded, _) = load("sweep.toml", &sweep_text, &[]).unwrap();
    let Loaded::Sweep(sweep) = loaded else {
        panic!("a sweep")
    };
    assert_eq!(
        sweep.keys,
        [
            "delivery.max_receives",
            "traffic.1.mix.1.share",
            "scenario.seed"
        ]
    );
    assert_eq!(sweep.points.len(), 12);
    let mut compared = 0;
    for (i, point) in sweep.points.iter().enumerate() {
        // The first key varies slowest.
        let (r, s, seed) = (i / 6, (i / 2) % 3, i % 2);
        let expected_values = [["1", "4"][r], ["0.0", "0.1", "0.25"][s], ["3", "11"][seed]];
        assert_eq!(point.values, expected_values, "point {i}");
        let written = base(expected_values[0], expected_values[1], expected_values[2]);
        let (plain, _) = load_str("plain.toml", &written).unwrap();
        let a = run_engine(&point.scenario, Recorder::All).unwrap();
        let b = run_engine(&plain, Recorder::All).unwrap();
        assert_eq!(a.totals, b.totals, "point {i}");
        assert_eq!(a.messages, b.messages, "point {i}");
        assert_eq!(a.transitions, b.transitions, "point {i}");
        assert_eq!(a.alarms, b.alarms, "point {i}");
        compared += 1;
    }
    assert_eq!(compared, 12);
}

#[test]
fn a_sweep_is_one_status_line_and_its_points_in_every_output() {
    let d = scratch("sweep-outputs");
    let junit = d.join("junit.xml");
    let o = run(&["--junit", junit.to_str().unwrap(), LAB]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(
        stdout(&o),
        format!(
            "PASS  {LAB}  Poison lab sweep: poison share by receive budget by base backoff (18 points)\n1 passed, 0 failed\n"
        )
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    // 18 points x 2 of [expect], and the [[expect.point]] values where they
    // apply: 6 x 3 (no poison) + 6 x 3 + 4 (1%) + 6 x 2 (5%).
    assert!(xml.contains("tests=\"88\" failures=\"0\""), "{xml}");
    assert!(xml.contains(
        "name=\"[traffic.1.mix.1.share = 0.01, delivery.max_receives = 10, delivery.backoff.base = &quot;1s&quot;] deliveries = 2216\""
    ));

    let o = run(&["--format", "json", LAB]);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let sweep = &doc["scenarios"][0];
    assert_eq!(sweep["status"], "passed");
    assert_eq!(sweep["points"].as_array().unwrap().len(), 18);
    let last = &sweep["points"][17];
    assert_eq!(
        last["values"],
        serde_json::json!({
            "traffic.1.mix.1.share": 0.05,
            "delivery.max_receives": 10,
            "delivery.backoff.base": "1s"
        })
    );
    assert_eq!(last["totals"]["quarantined"], 102);
    assert_eq!(last["alarms"][1]["fired"], true);
    assert_eq!(sweep["sweep"]["rows"].as_array().unwrap().len(), 18);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_failed_point_names_its_values() {
    let o = run(&["--color", "never", "--set", "traffic.1.count=1000", LAB]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(out.contains("points failed)"), "{out}");
    assert!(
        out.contains("× at traffic.1.mix.1.share = 0.01, delivery.max_receives = 3, delivery.backoff.base = \"100ms\":"),
        "{out}"
    );
}

#[test]
fn set_writes_a_value_in_place_and_fixes_a_swept_path() {
    // Fixing two of the three swept paths leaves a sweep of 2 points.
    let o = run(&[
        "--set",
        "traffic.1.mix.1.share=0.05",
        "--set",
        "delivery.max_receives=10",
        LAB,
    ]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(stdout(&o).contains("(2 points)"), "{}", stdout(&o));
    // show prints the table of the points left, and how to show one.
    let o = run(&["show", LAB, "--set", "delivery.max_receives=10"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    insta::assert_snapshot!("show_of_a_sweep", stdout(&o));
    // --at needs one point.
    let o = run(&[
        "show",
        "--at",
        "5s",
        LAB,
        "--set",
        "delivery.max_receives=10",
    ]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("sweeps 6 points; --at shows one: fix each swept path with --set traffic.1.mix.1.share=VALUE --set delivery.backoff.base=VALUE"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "show",
        LAB,
        "--set",
        "delivery.max_receives=10",
        "--set",
        "traffic.1.mix.1.share=0.05",
        "--set",
        "delivery.backoff.base=1s",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let shown = stdout(&o);
    assert!(shown.contains("\nquarantined         102\n"), "{shown}");
    assert!(
        shown.contains("\ndrain_time          6m27s316ms\n"),
        "{shown}"
    );
    // On a plain file, --set changes the run: budget 3 instead of 2.
    let o = run(&[
        "--set",
        "delivery.max_receives=3",
        "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
    ]);
    assert_eq!(code(&o), 1);
}

#[test]
fn a_wrong_set_is_located_on_the_set_line() {
    let o = run(&[
        "--color",
        "never",
        "--set",
        "delivery.max_receives=0",
        "--set",
        "traffic.2.count=5",
        "--set",
        "delivery.retry_interval=10",
        "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
    ]);
    assert_eq!(code(&o), 3);
    insta::assert_snapshot!(stdout(&o));
    // In a pull request, the annotation is on the file, not on a line past
    // its end, and says which argument.
    let o = run(&[
        "--format",
        "github",
        "--set",
        "workers.count=2",
        "--set",
        "delivery.max_receives=0",
        "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
    ]);
    assert_eq!(code(&o), 3);
    let annotations = stdout(&o);
    let error = annotations
        .lines()
        .find(|l| l.starts_with("::error "))
        .expect("an annotation");
    assert!(
        error
            .starts_with("::error file=scenarios/01-dlq-is-not-proof-nothing-happened.toml,title="),
        "{error}"
    );
    assert!(!error.contains("line="), "{error}");
    assert!(
        error.contains("`max_receives` must be at least 1 (--set argument 2)"),
        "{error}"
    );
}

#[test]
fn a_sweep_that_would_copy_too_many_listed_messages_is_refused_before_running() {
    // 2,000 listed messages in each of 1,000 points: 2,000,000 in all.
    let mut text = String::from(
        "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n[sweep]\n\"scenario.seed\" = [",
    );
    text.push_str(
        &(0..1000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    );
    text.push_str("]\n");
    for i in 0..2000 {
        text.push_str(&format!("[[message]]\nid = \"m{i}\"\n"));
    }
    let Err(invalid) = load("big.toml", &text, &[]) else {
        panic!("refused")
    };
    let problem = &invalid.problems[0];
    assert_eq!(
        problem.message,
        "this sweep would hold 1000 copies of 2000 listed messages; the limit is 1000000 in all"
    );
    // Located on the [sweep] table.
    assert_eq!(problem.line_column(&text), Some((4, 2)));
}

/// A sweep of a file without the flow keys (sections 1-10) shows the
/// latency and calls columns it asks for, computed for each point: 50
/// messages over 10s, an outage from 1s to 4s, retries after 1s.
#[test]
fn a_sweep_computes_the_flow_columns_it_shows() {
    let d = scratch("sweep-flow-columns");
    let file = d.join("plain.toml");
    std::fs::write(
        &file,
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [[outage]]\nfrom = \"1s\"\nduration = \"3s\"\n\
         [[traffic]]\ncount = 50\nover = \"10s\"\n\
         [sweep]\n\"delivery.max_receives\" = [2, 4]\n\
         columns = [\"quarantined\", \"latency_p99\", \"peak_offered\"]\n",
    )
    .unwrap();
    let o = run(&["--format", "json", file.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = &doc["scenarios"][0]["sweep"]["rows"];
    // Budget 2: the 10 arrivals in [1s, 3s) fail twice inside the outage;
    // those in [3s, 4s) are acked 1s late; [4s, 5s) offers its 5 arrivals
    // and those 5 retries. Budget 4: the arrival at 1s is acked at 4s,
    // after three retries; [4s, 5s) offers 5 arrivals and 15 retries.
    assert_eq!(
        rows,
        &serde_json::json!([
            ["2", "passed", "0 of 0", "10", "1s", "10"],
            ["4", "passed", "0 of 0", "0", "3s", "20"]
        ])
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_path_of_thousands_of_keys_is_refused_not_a_stack_overflow() {
    let deep = vec!["a"; 10_000].join(".");
    let fixture = "scenarios/01-dlq-is-not-proof-nothing-happened.toml";
    for args in [
        vec!["--color", "never", "--set", &format!("{deep}=1"), fixture],
        vec![
            "--color",
            "never",
            "check",
            "--set",
            &format!("{deep}=1"),
            fixture,
        ],
        vec![
            "--color",
            "never",
            "show",
            fixture,
            "--set",
            &format!("{deep}=1"),
        ],
    ] {
        let o = run(&args);
        assert_eq!(code(&o), 3, "{}", stderr(&o));
        let all = stdout(&o) + &stderr(&o);
        assert!(
            all.contains("has at most 32"),
            "{}",
            &all[..all.len().min(400)]
        );
    }
    let d = scratch("deep-sweep");
    let file = d.join("deep.toml");
    std::fs::write(
        &file,
        format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[[message]]\nid = \"a\"\n\
             [sweep]\n\"delivery.{}\" = [1, 2]\n",
            vec!["max_receives"; 10_000].join(".")
        ),
    )
    .unwrap();
    let o = run(&["check", "--format", "json", file.to_str().unwrap()]);
    assert_eq!(code(&o), 3);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let message = doc["files"][0]["problems"][0]["message"].as_str().unwrap();
    assert!(message.contains("a path has at most 32 keys"), "{message}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_sweep_is_bounded_by_the_bytes_its_points_copy_and_alarms_by_number() {
    let d = scratch("sweep-bytes");
    let file = d.join("big.toml");
    let seeds: Vec<String> = (0..1000).map(|s| s.to_string()).collect();
    std::fs::write(
        &file,
        format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[[message]]\nid = \"a\"\n\
             payload = \"{}\"\n[sweep]\n\"scenario.seed\" = [{}]\n",
            "x".repeat(1 << 20),
            seeds.join(", ")
        ),
    )
    .unwrap();
    let o = run(&["check", "--format", "json", file.to_str().unwrap()]);
    assert_eq!(code(&o), 3);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let message = doc["files"][0]["problems"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("this sweep would hold 1000 copies of a file of"),
        "{message}"
    );
    assert!(message.ends_with("the limit is 256 MiB"), "{message}");
    // 101 alarms.
    let alarms: String = (0..101)
        .map(|i| format!("[[alarm]]\nname = \"a{i}\"\nmetric = \"dlq_depth\"\nat_least = 1\n"))
        .collect();
    std::fs::write(
        &file,
        format!("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[[message]]\nid = \"a\"\n{alarms}"),
    )
    .unwrap();
    let o = run(&["check", "--format", "json", file.to_str().unwrap()]);
    assert_eq!(code(&o), 3);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        doc["files"][0]["problems"][0]["message"],
        "a file has at most 100 alarms, this one has 101"
    );
    let _ = std::fs::remove_dir_all(&d);
}
