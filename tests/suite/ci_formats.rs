//! What CI reads: one status per scenario in every output (terminal, JSON,
//! JUnit, index, step summary), problems as data, GitHub annotations, and
//! `check --format`.

use crate::common;

use common::{bin, code, run, scratch, stdout};
use serde_json::{Value, json};

const PURGE: &str = "scenarios/15-purge.toml";
const WRONG_FLOW: &str = "tests/failing/wrong-flow.toml";
const UNKNOWN_KEY: &str = "tests/bad/unknown-key.toml";

fn testcases(xml: &str) -> Vec<(String, Option<String>, bool)> {
    let x = roxmltree::Document::parse(xml).unwrap();
    x.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| {
            (
                n.attribute("name").unwrap().to_string(),
                n.attribute("line").map(str::to_string),
                n.children().any(|c| c.has_tag_name("failure")),
            )
        })
        .collect()
}

#[test]
fn a_golden_transcript_that_differs_fails_the_scenario_in_every_output() {
    let d = scratch("golden-everywhere");
    let golden = d.join("golden");
    std::fs::create_dir_all(&golden).unwrap();
    std::fs::write(golden.join("15-purge.txt"), "an old transcript\n").unwrap();
    let (junit, reports, summary) = (d.join("junit.xml"), d.join("reports"), d.join("summary.md"));
    let o = bin()
        .env("CI", "true")
        .args(["--format", "json", "--golden"])
        .arg(&golden)
        .arg("--junit")
        .arg(&junit)
        .arg("--report")
        .arg(&reports)
        .args(["--report-format", "json,markdown", "--summary-markdown"])
        .arg(&summary)
        .arg(PURGE)
        .output()
        .unwrap();
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));

    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((&doc["passed"], &doc["failed"]), (&json!(0), &json!(1)));
    let scenario = &doc["scenarios"][0];
    assert_eq!(scenario["status"], "failed");
    assert_eq!(scenario["expectations_failed"], 0);
    let golden_file = golden.join("15-purge.txt").display().to_string();
    assert_eq!(
        scenario["golden"],
        json!({ "file": golden_file, "status": "differs" })
    );
    let problem = &scenario["problems"][0];
    assert_eq!(
        problem["message"],
        format!("the transcript differs from {golden_file}")
    );
    assert_eq!(problem["file"], PURGE);
    assert_eq!(problem["line"], Value::Null);
    assert!(
        problem["text"]
            .as_str()
            .unwrap()
            .contains("-an old transcript")
    );

    let cases = testcases(&std::fs::read_to_string(&junit).unwrap());
    assert_eq!(cases.len(), 11, "{cases:?}");
    assert!(
        cases[..10].iter().all(|c| !c.2 && c.1.is_some()),
        "{cases:?}"
    );
    assert_eq!(
        cases[10],
        ("golden transcript matches".to_string(), None, true)
    );

    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("index.json")).unwrap())
            .unwrap();
    assert_eq!((&index["passed"], &index["failed"]), (&json!(0), &json!(1)));
    assert_eq!(index["scenarios"][0]["status"], "failed");
    assert_eq!(index["scenarios"][0]["golden"]["status"], "differs");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("15-purge.json")).unwrap())
            .unwrap();
    assert_eq!(report["status"], "failed");
    let markdown = std::fs::read_to_string(reports.join("index.md")).unwrap();
    assert!(markdown.contains("| failed |"), "{markdown}");
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.contains("| **FAIL** |"), "{summary}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_matching_golden_transcript_is_a_passing_testcase() {
    let d = scratch("golden-same");
    let junit = d.join("junit.xml");
    let o = bin()
        .env("CI", "true")
        .args(["--format", "json", "--golden", "reports/golden", "--junit"])
        .arg(&junit)
        .arg(PURGE)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["scenarios"][0]["status"], "passed");
    assert_eq!(
        doc["scenarios"][0]["golden"],
        json!({ "file": "reports/golden/15-purge.txt", "status": "same" })
    );
    let cases = testcases(&std::fs::read_to_string(&junit).unwrap());
    assert_eq!(
        cases.last().unwrap(),
        &("golden transcript matches".to_string(), None, false)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn failed_expectations_are_junit_testcases_on_their_lines() {
    let d = scratch("junit-lines");
    let junit = d.join("junit.xml");
    let o = run(&["--quiet", "--junit", junit.to_str().unwrap(), WRONG_FLOW]);
    assert_eq!(code(&o), 1);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let cases = testcases(&xml);
    let p99 = cases
        .iter()
        .find(|c| c.0 == "latency_p99 is at most 1s")
        .unwrap();
    assert_eq!(
        p99,
        &(
            "latency_p99 is at most 1s".to_string(),
            Some("52".into()),
            true
        )
    );
    // The failure's message says what differs and, as help, why.
    assert!(
        xml.contains(
            "<failure message=\"expected latency_p99 is at most 1s, got 3s450ms; help: In this run: rank 4 of 4 acked messages"
        ),
        "{xml}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn github_annotations_put_each_problem_on_its_line() {
    let o = run(&["--format", "github", WRONG_FLOW, UNKNOWN_KEY, PURGE]);
    assert_eq!(code(&o), 3);
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn check_prints_problems_as_json_or_as_annotations() {
    let o = run(&["check", "--format", "json", UNKNOWN_KEY, PURGE]);
    assert_eq!(code(&o), 3);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((&doc["valid"], &doc["invalid"]), (&json!(1), &json!(1)));
    assert_eq!(doc["files"][0]["status"], "invalid");
    assert_eq!(doc["files"][0]["problems"][0]["line"], 7);
    assert_eq!(
        doc["files"][0]["problems"][0]["help"],
        "did you mean `payload`?"
    );
    assert_eq!(
        doc["files"][1],
        json!({ "file": PURGE, "status": "valid", "points": null, "problems": [] })
    );
    // A sweep is valid when every point is, and says how many there are.
    let o = run(&["check", "scenarios/28-poison-lab-sweep.toml"]);
    assert_eq!(
        stdout(&o),
        "OK  scenarios/28-poison-lab-sweep.toml  (a sweep of 18 points)\n1 valid, 0 invalid\n"
    );

    let o = run(&["check", "--format", "github", UNKNOWN_KEY, "missing.toml"]);
    assert_eq!(code(&o), 3);
    insta::assert_snapshot!(stdout(&o));
}
