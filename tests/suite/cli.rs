//! Integration tests: the binary as users run it. Whole outputs are insta
//! snapshots (colour-free, fixed width), so a change in a diagnostic or a
//! transcript is seen in review.

use crate::common;

use common::{bin, bundled_files, code, listing, run, scratch, stderr, stdout};
use std::path::Path;

const BAD_INPUTS: [&str; 45] = [
    "alarm-mistakes",
    "bare-number-duration",
    "both-retry-kinds",
    "consumer-pattern-mistakes",
    "control-characters",
    "dataflow-mistakes",
    "dataflow-sweep-mistakes",
    "dataflow-wrong-types",
    "duplicate-id",
    "empty",
    "event-expectation-mistakes",
    "every-layer",
    "expect-unknown-message",
    "expect-wrong-values",
    "flow-cross-checks",
    "flow-zero-capacity",
    "guarantee-mistakes",
    "huge-generator",
    "lease-without-write-intent",
    "log-exactly-once-mistakes",
    "log-event-without-log",
    "log-mistakes",
    "lose-ack-class",
    "max-receives-zero",
    "message-field-in-expect",
    "missing-delivery",
    "negative-duration",
    "not-utf8",
    "only-missing-id",
    "only-not-a-list",
    "several-mistakes",
    "several-syntax-errors",
    "sweep-mistakes",
    "overflowing-duration",
    "question-mistakes",
    "syntax-error",
    "too-deep",
    "too-long",
    "unknown-action",
    "unreadable-entries",
    "unknown-generated-id",
    "unknown-key",
    "wrong-type",
    "write-mistakes",
    "write-direct-mistakes",
];

const THREE_FIRST: &str = "scenarios/01-dlq-is-not-proof-nothing-happened.toml";

#[test]
fn every_kind_of_bad_input_is_a_located_diagnostic_and_exit_3() {
    let listed: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad"))
            .unwrap()
            .map(|e| {
                e.unwrap()
                    .path()
                    .file_stem()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
    assert_eq!(
        listed.len(),
        BAD_INPUTS.len(),
        "every file in tests/bad has a snapshot"
    );
    for name in BAD_INPUTS {
        let path = format!("tests/bad/{name}.toml");
        let o = run(&["--color", "never", &path]);
        assert_eq!(code(&o), 3, "{name}");
        let out = stdout(&o);
        assert!(out.ends_with("0 passed, 1 failed\n"), "{name}: {out}");
        insta::assert_snapshot!(format!("bad_{name}"), out);
    }
}

#[test]
fn failed_expectations_explain_themselves() {
    for name in [
        "wrong-totals",
        "wrong-message",
        "wrong-flow",
        "wrong-guarantees",
        "wrong-canary",
        "wrong-dataflow",
        "wrong-log",
    ] {
        let o = run(&["--color", "never", &format!("tests/failing/{name}.toml")]);
        assert_eq!(code(&o), 1, "{name}");
        insta::assert_snapshot!(format!("failing_{name}"), stdout(&o));
    }
}

#[test]
fn the_bundled_scenarios_pass() {
    let o = run(&["--color", "never", "scenarios/*.toml"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    let count = bundled_files();
    assert!(
        out.ends_with(&format!("{count} passed, 0 failed\n")),
        "{out}"
    );
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("PASS  scenarios/"))
            .count(),
        count
    );
}

#[test]
fn an_invalid_file_counts_as_failed_and_wins_the_exit_code() {
    let o = run(&[
        "--color",
        "never",
        "scenarios/02-repair-and-redrive.toml",
        "tests/failing/wrong-totals.toml",
        "tests/bad/empty.toml",
    ]);
    assert_eq!(code(&o), 3);
    let out = stdout(&o);
    assert!(out.ends_with("1 passed, 2 failed\n"), "{out}");
    // Output follows input order.
    let order: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("PASS") || l.starts_with("FAIL"))
        .collect();
    assert!(order[0].contains("02-repair"));
    assert!(order[1].contains("wrong-totals"));
    assert!(order[2].contains("empty.toml"));
}

#[test]
fn each_kind_of_ending_has_its_own_exit_code() {
    // 2: the command line.
    assert_eq!(code(&run(&[])), 2);
    assert_eq!(code(&run(&["--jobs", "x", "a.toml"])), 2);
    assert_eq!(code(&run(&["nothing/*.toml"])), 2);
    assert_eq!(code(&run(&["--filter", "no-such-name", THREE_FIRST])), 2);
    // 3: an input that cannot be read or is invalid.
    assert_eq!(code(&run(&["no-such-file.toml"])), 3);
    assert_eq!(code(&run(&["tests/bad/unknown-key.toml"])), 3);
    // 4: a run stopped at a limit; with a failed file, the stop wins.
    let stopped = ["--set", "limits.max_events=3", THREE_FIRST];
    assert_eq!(code(&run(&stopped)), 4);
    let failed = "tests/failing/wrong-message.toml";
    let both = ["--set", "limits.max_events=3", THREE_FIRST, failed];
    assert_eq!(code(&run(&both)), 4);
    // 1: an expectation failed.
    assert_eq!(code(&run(&[failed])), 1);
    // 3 over 4 and 1: an invalid file with the others.
    let all = [THREE_FIRST, failed, "tests/bad/unknown-key.toml"];
    assert_eq!(code(&run(&all)), 3);
    // 5: an output that cannot be written.
    let o = run(&["--junit", "Cargo.toml/junit.xml", THREE_FIRST]);
    assert_eq!(code(&o), 5, "{}", stderr(&o));
    assert_eq!(code(&run(&["--help"])), 0);
}

#[test]
fn a_folder_argument_suggests_a_glob_and_no_argument_shows_the_usage() {
    let o = run(&["--color", "never", "scenarios"]);
    assert_eq!(code(&o), 3);
    assert!(
        stdout(&o).contains("scenarios is a folder: to run its scenarios, give a quoted glob such as 'scenarios/*.toml'"),
        "{}",
        stdout(&o)
    );
    let o = run(&[]);
    assert_eq!(code(&o), 2);
    let usage = stderr(&o);
    for word in ["Usage:", "Commands:", "check", "show", "new", "schema"] {
        assert!(usage.contains(word), "{word}: {usage}");
    }
}

#[test]
fn colour_goes_before_or_after_a_subcommand_and_run_options_do_not() {
    for args in [
        &["--color", "never", "check", THREE_FIRST][..],
        &["check", "--color", "never", THREE_FIRST][..],
    ] {
        let o = run(args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).ends_with("1 valid, 0 invalid\n"));
    }
    let o = run(&["--jobs", "2", "check", THREE_FIRST]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("--jobs applies to running scenarios, not to `check`"),
        "{}",
        stderr(&o)
    );
    let o = run(&["--seed", "3", "show", THREE_FIRST]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--seed applies to running scenarios, not to `show`"));
    let o = run(&["show", "--seed", "3", THREE_FIRST]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).starts_with("scenario: "));
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::Read;
    for args in [
        &["show", "scenarios/22-retry-storm-no-jitter.toml"][..],
        &["schema"][..],
        &["completions", "bash"][..],
        &["check", "scenarios/*.toml"][..],
    ] {
        let mut child = bin()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Read one byte, then hang up, as `| head -c 1` does.
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 1];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
    }
}

#[test]
fn a_selection_that_selects_nothing_is_a_usage_error() {
    for args in [
        &["--tag", "jiter", "scenarios/*.toml"][..],
        &["--filter", "no such scenario", "scenarios/*.toml"][..],
    ] {
        let o = run(args);
        assert_eq!(code(&o), 2, "{args:?}");
        let bundled = bundled_files();
        assert!(
            stderr(&o).contains(&format!("selects none of the {bundled} scenarios")),
            "{}",
            stderr(&o)
        );
        assert_eq!(stdout(&o), "");
    }
}

#[test]
fn options_without_their_partner_are_usage_errors() {
    let o = run(&["--report-format", "html", THREE_FIRST]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--report <DIR>"), "{}", stderr(&o));
    let o = run(&["--templates", "templates", THREE_FIRST]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("--templates does nothing"),
        "{}",
        stderr(&o)
    );
    let o = run(&["-j", "0", THREE_FIRST]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("0 is not in 1.."), "{}", stderr(&o));
    // A template file that overrides nothing and is used by nothing.
    let d = scratch("templates-typo");
    std::fs::write(d.join("scenaro.md.j2"), "x").unwrap();
    let o = run(&[
        "--report",
        d.join("out").to_str().unwrap(),
        "--templates",
        d.to_str().unwrap(),
        THREE_FIRST,
    ]);
    assert_eq!(code(&o), 3);
    let err = stderr(&o);
    assert!(
        err.contains("overrides no template and no template"),
        "{err}"
    );
    assert!(err.contains("did you mean scenario.md.j2?"), "{err}");
    // Included by an override, the same file is a partial.
    std::fs::write(d.join("index.md.j2"), "{% include \"scenaro.md.j2\" %}\n").unwrap();
    let o = run(&[
        "--report",
        d.join("out").to_str().unwrap(),
        "--report-format",
        "markdown",
        "--templates",
        d.to_str().unwrap(),
        THREE_FIRST,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("out/index.md")).unwrap(),
        "x"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn small_faults_of_the_command_line_are_clear_errors() {
    // --seed takes any u64 (model decision 16.13), a negative or larger
    // one is refused.
    for bad in ["-1", "18446744073709551616", "x"] {
        let o = run(&["--seed", bad, THREE_FIRST]);
        assert_eq!(code(&o), 2, "{bad}");
        assert!(stderr(&o).contains(bad), "{}", stderr(&o));
    }
    assert_eq!(
        code(&run(&["--seed", "18446744073709551615", THREE_FIRST])),
        0
    );
    // (--report naming a file: tests/reports.rs, unusable folders.)
    let d = scratch("literal-names");
    // A file whose name holds glob characters is run as itself.
    let literal = d.join("incident[1].toml");
    std::fs::copy(THREE_FIRST, &literal).unwrap();
    let o = run(&[literal.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(stdout(&o).contains("1 passed, 0 failed"));
    // An input that never ends is read only up to the file size limit.
    if std::path::Path::new("/dev/zero").exists() {
        let o = run(&["/dev/zero"]);
        assert_eq!(code(&o), 3);
        assert!(
            stdout(&o).contains("larger than 16777216 bytes"),
            "{}",
            stdout(&o)
        );
    }
    // `new` refuses names that cannot make a starter.
    for name in ["", "a\nb", "x\u{1b}y"] {
        let o = bin().current_dir(&d).args(["new", name]).output().unwrap();
        assert_eq!(code(&o), 2, "{name:?}");
        assert!(
            stderr(&o).contains("not a usable file name"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(listing(&d), ["incident[1].toml"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn json_is_byte_identical_across_runs_and_job_counts() {
    // Every bundled scenario but the 100,000-message ones, whose full
    // transcripts are large in a debug build: workers, ordering, Poisson
    // draws and mixes included.
    let files = [
        "--format",
        "json",
        "scenarios/0*.toml",
        "scenarios/1[0-689]*.toml",
        "scenarios/2[0-57]*.toml",
    ];
    let a = run(&[&files[..], &["--jobs", "1"]].concat());
    let b = run(&[&files[..], &["--jobs", "2"]].concat());
    let c = run(&[&files[..], &["--jobs", "2"]].concat());
    assert_eq!(code(&a), 0);
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(b.stdout, c.stdout);
}

#[test]
fn json_holds_the_whole_run() {
    let o = run(&["--format", "json", "scenarios/02-repair-and-redrive.toml"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(doc["format_version"], 2);
    assert_eq!(doc["passed"], 1);
    let s = &doc["scenarios"][0];
    assert_eq!(s["file"], "scenarios/02-repair-and-redrive.toml");
    assert_eq!(s["seed"], 0);
    assert_eq!(s["status"], "passed");
    assert_eq!(s["totals"]["effects"], 4);
    assert_eq!(s["totals"]["end_time"], 40_000);
    assert_eq!(s["messages"].as_array().unwrap().len(), 4);
    assert_eq!(s["ledger"].as_array().unwrap().len(), 4);
    let first = &s["transitions"][0];
    assert_eq!(first["time"], 0);
    assert_eq!(first["message"], "healthy");
    assert_eq!(first["kind"], "delivered");
    let expectation = &s["expectations"][0];
    assert_eq!(expectation["expected"]["equals"], 4);
    assert_eq!(expectation["actual"], 4);
    assert_eq!(expectation["passed"], true);
}

#[test]
fn json_keeps_the_quarantine_envelope() {
    let o = run(&[
        "--format",
        "json",
        "scenarios/14-permanent-to-quarantine.toml",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let malformed = &doc["scenarios"][0]["messages"][0];
    assert_eq!(malformed["id"], "malformed");
    let env = &malformed["envelope"];
    assert_eq!(env["queue"], "payments");
    assert_eq!(env["reason"], "schema: unsupported currency");
    assert_eq!(env["class"], "permanent");
    assert_eq!(env["total_receives"], 1);
    assert_eq!(env["first_delivery"], 0);
    assert_eq!(env["payload"]["currency"], "XXX");
    assert!(doc["scenarios"][0]["messages"][1]["envelope"].is_null());
}

#[test]
fn show_prints_the_transcript_and_a_snapshot_at_a_time() {
    let o = run(&["show", "scenarios/02-repair-and-redrive.toml"]);
    assert_eq!(code(&o), 0);
    insta::assert_snapshot!("show_repair_and_redrive", stdout(&o));
    let o = run(&[
        "show",
        "scenarios/02-repair-and-redrive.toml",
        "--at",
        "10s",
    ]);
    assert_eq!(code(&o), 0);
    insta::assert_snapshot!("show_repair_and_redrive_at_10s", stdout(&o));
    assert_eq!(
        code(&run(&[
            "show",
            "scenarios/02-repair-and-redrive.toml",
            "--at",
            "10"
        ])),
        2
    );
}

#[test]
fn show_of_a_large_run_is_its_golden_transcript_not_every_transition() {
    // 100,000 messages: every transition would be tens of megabytes.
    let file = "scenarios/17-outage-100k-per-hour.toml";
    let o = run(&["show", file]);
    assert_eq!(code(&o), 0);
    let shown = stdout(&o);
    assert!(
        shown.contains("transitions: omitted (100000 messages, more than 10000)"),
        "{shown}"
    );
    assert!(shown.len() < 20_000, "{} bytes", shown.len());
    let golden = std::fs::read_to_string("reports/golden/17-outage-100k-per-hour.txt").unwrap();
    assert_eq!(shown, golden);
    // As of a time too.
    let o = run(&["show", file, "--at", "30m"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).len() < 20_000);
}

#[test]
fn check_validates_without_running() {
    let o = run(&[
        "check",
        "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
        "tests/bad/unknown-key.toml",
    ]);
    assert_eq!(code(&o), 3);
    let out = stdout(&o);
    assert!(out.contains("OK  scenarios/01"));
    assert!(out.contains("did you mean `payload`?"));
    assert!(out.ends_with("1 valid, 1 invalid\n"));
    assert_eq!(code(&run(&["check", "scenarios/*.toml"])), 0);
}

#[test]
fn filter_tag_and_fail_fast_select_scenarios() {
    let o = run(&["--filter", "PURGE", "scenarios/*.toml"]);
    assert!(stdout(&o).ends_with("1 passed, 0 failed\n"));
    let o = run(&["--tag", "latency", "scenarios/*.toml"]);
    assert!(stdout(&o).ends_with("1 passed, 0 failed\n"));
    // Tags ignore case, repeat, and split on commas: one of them suffices.
    let o = run(&["--tag", "LATENCY", "scenarios/*.toml"]);
    assert!(
        stdout(&o).ends_with("1 passed, 0 failed\n"),
        "{}",
        stdout(&o)
    );
    let o = run(&["--tag", "latency,purge", "scenarios/*.toml"]);
    assert!(
        stdout(&o).ends_with("2 passed, 0 failed\n"),
        "{}",
        stdout(&o)
    );
    let o = run(&["--tag", "latency", "--tag", "purge", "scenarios/*.toml"]);
    assert!(
        stdout(&o).ends_with("2 passed, 0 failed\n"),
        "{}",
        stdout(&o)
    );
    let o = run(&[
        "--fail-fast",
        "--color",
        "never",
        "tests/failing/wrong-message.toml",
        "scenarios/02-repair-and-redrive.toml",
        "scenarios/05-dedup-off.toml",
    ]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(out.contains("2 skipped after the first failure"), "{out}");
    assert!(out.ends_with("0 passed, 1 failed\n"));
}

#[test]
fn quiet_prints_only_failures() {
    let o = run(&[
        "--quiet",
        "--color",
        "never",
        "scenarios/0*.toml",
        "tests/failing/wrong-message.toml",
    ]);
    let out = stdout(&o);
    assert!(!out.contains("PASS"));
    assert!(out.contains("FAIL  tests/failing/wrong-message.toml"));
}

#[test]
fn colour_follows_the_option_and_no_color() {
    let always = run(&["--color", "always", "scenarios/02-repair-and-redrive.toml"]);
    assert!(stdout(&always).contains("\x1b[32mPASS"));
    let no_color = bin()
        .args(["scenarios/02-repair-and-redrive.toml"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!stdout(&no_color).contains('\x1b'));
}

#[test]
fn the_seed_option_overrides_the_file() {
    let a = run(&[
        "--format",
        "json",
        "--seed",
        "1",
        "scenarios/12-full-jitter-backoff.toml",
    ]);
    let b = run(&[
        "--format",
        "json",
        "--seed",
        "2",
        "scenarios/12-full-jitter-backoff.toml",
    ]);
    let a: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(a["scenarios"][0]["seed"], 1);
    assert_ne!(
        a["scenarios"][0]["totals"]["retry_delay_paid"],
        b["scenarios"][0]["totals"]["retry_delay_paid"]
    );
}

#[test]
fn a_scenario_that_cannot_drain_stops_at_its_limit() {
    let dir = scratch("limit");
    let path = dir.join("forever.toml");
    std::fs::write(
        &path,
        "[delivery]\nmax_receives = 4000000000\nretry_interval = \"1s\"\n[limits]\nmax_events = 5000\n\
         [[message]]\nid = \"poison\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    )
    .unwrap();
    let o = run(&["--color", "never", path.to_str().unwrap()]);
    assert_eq!(code(&o), 4);
    let out = stdout(&o);
    assert!(
        out.contains("the run stopped at the event limit ([limits] max_events = 5000)"),
        "{out}"
    );
    assert!(out.ends_with("0 passed, 1 failed\n"));
}

#[test]
fn deliveries_piling_up_in_flight_stop_with_what_to_change() {
    let dir = common::scratch("in-flight-limit");
    let path = dir.join("overtaken.toml");
    std::fs::write(
        &path,
        "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"1s\"\n\
         visibility_timeout = \"1ms\"\n[workers]\ncount = 4000000000\nservice_time = \"1d\"\n\
         [[message]]\nid = \"a\"\n",
    )
    .unwrap();
    let o = run(&["--color", "never", path.to_str().unwrap()]);
    assert_eq!(code(&o), 4);
    let out = stdout(&o);
    assert!(
        out.contains("the run stopped with more than 1000001 deliveries in flight at once"),
        "{out}"
    );
    assert!(
        out.contains("Make visibility_timeout longer than the service time"),
        "{out}"
    );
}

#[test]
fn golden_transcripts_are_written_compared_and_blessed() {
    let dir = scratch("golden-cli");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let scenario = "scenarios/15-purge.toml";
    let golden_run = |ci: bool, extra: &[&str]| {
        let mut c = bin();
        c.args(["--color", "never", "--golden", d, scenario])
            .args(extra);
        if ci {
            c.env("CI", "true");
        } else {
            c.env_remove("CI");
        }
        c.env_remove("SCENARIO_RUN_BLESS");
        c.output().unwrap()
    };
    // Missing under CI fails and writes nothing.
    let o = golden_run(true, &[]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("missing"));
    assert!(!dir.join("15-purge.txt").exists());
    // ... on its own status line, not a PASS with a failed count.
    assert!(
        stdout(&o).starts_with(&format!(
            "FAIL  {scenario}  Purge deletes the messages, not the effects (10 expectations passed; its golden transcript is missing)\n"
        )),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("PASS"));
    // Missing outside CI is written; then it matches.
    assert_eq!(code(&golden_run(false, &[])), 0);
    let written = std::fs::read_to_string(dir.join("15-purge.txt")).unwrap();
    assert!(written.contains("purged from quarantine"));
    assert_eq!(code(&golden_run(true, &[])), 0);
    // A change is a unified diff and the command that accepts it.
    std::fs::write(
        dir.join("15-purge.txt"),
        written.replace("effects             2", "effects             3"),
    )
    .unwrap();
    let o = golden_run(true, &[]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(
        out.contains("-effects             3\n+effects             2\n"),
        "{out}"
    );
    assert!(out.contains(&format!(
        "to accept the new transcripts: scenario-run --golden {d} --bless {scenario}"
    )));
    assert!(out.ends_with("0 passed, 1 failed\n"));
    // The command repeats the seed that shaped the run.
    let o = golden_run(true, &["--seed", "3"]);
    assert!(
        stdout(&o).contains(&format!(
            "to accept the new transcripts: scenario-run --seed 3 --golden {d} --bless {scenario}"
        )),
        "{}",
        stdout(&o)
    );
    // ... and every --set, quoted for the shell where it must be.
    let o = golden_run(
        true,
        &[
            "--seed",
            "3",
            "--set",
            "delivery.queue=my queue",
            "--set",
            "delivery.retry_interval=10s",
        ],
    );
    assert!(
        stdout(&o).contains(&format!(
            "to accept the new transcripts: scenario-run --seed 3 --set 'delivery.queue=my queue' --set delivery.retry_interval=10s --golden {d} --bless {scenario}"
        )),
        "{}",
        stdout(&o)
    );
    // Bless accepts it.
    assert_eq!(code(&golden_run(true, &["--bless"])), 0);
    assert_eq!(
        std::fs::read_to_string(dir.join("15-purge.txt")).unwrap(),
        written
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no temporary files left"
    );
}

#[test]
fn the_committed_golden_transcripts_are_current() {
    let o = bin()
        .args([
            "--color",
            "never",
            "--golden",
            "reports/golden",
            "scenarios/*.toml",
        ])
        .env("CI", "true")
        .env_remove("SCENARIO_RUN_BLESS")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stdout(&o));
}

#[test]
fn junit_has_a_suite_per_file_and_a_case_per_expectation() {
    let dir = scratch("junit");
    let path = dir.join("junit.xml");
    let o = run(&[
        "--junit",
        path.to_str().unwrap(),
        "scenarios/05-dedup-off.toml",
        "tests/failing/wrong-message.toml",
        "tests/bad/unknown-key.toml",
    ]);
    assert_eq!(code(&o), 3);
    let xml = std::fs::read_to_string(&path).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("well-formed JUnit XML");
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 3);
    assert_eq!(
        suites[0].attribute("file"),
        Some("scenarios/05-dedup-off.toml")
    );
    assert_eq!(suites[0].attribute("tests"), Some("6"));
    assert_eq!(suites[0].attribute("failures"), Some("0"));
    assert_eq!(suites[1].attribute("tests"), Some("3"));
    assert_eq!(suites[1].attribute("failures"), Some("3"));
    let failure = suites[1]
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    let text = failure.text().unwrap();
    assert!(
        text.contains("expected \"acked\", got \"quarantined\""),
        "{text}"
    );
    assert!(!text.contains('\x1b'));
    assert!(suites[2].descendants().any(|n| n.has_tag_name("failure")));
}

#[test]
fn the_progress_bar_shows_on_a_terminal_only() {
    let piped = run(&["-j1", "scenarios/0*.toml"]);
    assert_eq!(code(&piped), 0);
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("scenarios"));
    // On a terminal (a pseudo-terminal from util-linux `script`).
    let cmd = format!(
        "{} -j1 'scenarios/0*.toml' >/dev/null",
        env!("CARGO_BIN_EXE_scenario-run")
    );
    let Ok(tty) = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
    else {
        eprintln!("SKIPPED: util-linux `script` is not installed");
        return;
    };
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert!(shown.contains("9/9 scenarios"), "{shown}");
}

#[test]
fn shards_split_a_batch_without_overlap() {
    // Files are dealt out by position; a sweep's points are dealt out too,
    // so every shard runs part of each sweep.
    let mut seen = Vec::new();
    let mut points: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for i in 1..=3 {
        let o = run(&["--shard", &format!("{i}/3"), "scenarios/*.toml"]);
        assert_eq!(code(&o), 0);
        for line in stdout(&o).lines().filter(|l| l.starts_with("PASS")) {
            let file = line.split_whitespace().nth(1).unwrap().to_string();
            if let Some((_, share)) = line.rsplit_once(" (")
                && let Some((ran, total)) = share.trim_end_matches(" points)").split_once(" of ")
            {
                let slot = points.entry(file.clone()).or_default();
                slot.0 += ran.parse::<usize>().unwrap();
                slot.1 = total.parse().unwrap();
            } else {
                seen.push(file);
            }
        }
    }
    // Every bundled file but the 14 sweeps runs whole on one shard.
    let bundled = bundled_files();
    assert_eq!(seen.len(), bundled - 14, "{seen:?}");
    assert_eq!(points.len(), 14, "{points:?}");
    for (file, (ran, total)) in &points {
        assert_eq!(ran, total, "{file}: every point runs on exactly one shard");
        seen.push(file.clone());
    }
    seen.sort();
    let all: Vec<String> = std::fs::read_dir("scenarios")
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !e.path().is_dir())
        .map(|e| format!("scenarios/{}", e.file_name().to_string_lossy()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(seen, all);
    for bad in ["0/3", "4/3", "1/0", "x", "1/y"] {
        assert_eq!(
            code(&run(&["--shard", bad, "scenarios/*.toml"])),
            2,
            "{bad}"
        );
    }
}

#[test]
fn invalid_and_stopped_files_read_alike_in_json_junit_and_the_index() {
    let d = common::scratch("not-run");
    let forever = d.join("forever.toml");
    std::fs::write(
        &forever,
        "[delivery]\nmax_receives = 4000000000\nretry_interval = \"1s\"\n[limits]\nmax_events = 5000\n\
         [[message]]\nid = \"poison\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    )
    .unwrap();
    let junit = d.join("junit.xml");
    let reports = d.join("reports");
    let o = run(&[
        "--format",
        "json",
        "--junit",
        junit.to_str().unwrap(),
        "--report",
        reports.to_str().unwrap(),
        "--report-format",
        "json",
        "tests/bad/unknown-key.toml",
        forever.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 3);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let (invalid, stopped) = (&doc["scenarios"][0], &doc["scenarios"][1]);
    assert_eq!(invalid["status"], "invalid");
    assert_eq!(invalid["name"], serde_json::Value::Null);
    // A problem is data as well as text: where it is and what to do.
    let problem = &invalid["problems"][0];
    assert_eq!(problem["file"], "tests/bad/unknown-key.toml");
    assert_eq!(
        (&problem["line"], &problem["column"]),
        (&serde_json::json!(7), &serde_json::json!(1))
    );
    assert_eq!(
        (&problem["end_line"], &problem["end_column"]),
        (&serde_json::json!(7), &serde_json::json!(6))
    );
    assert_eq!(problem["message"], "unknown key `paylod`");
    assert_eq!(problem["label"], "unknown key");
    assert_eq!(problem["help"], "did you mean `payload`?");
    assert!(
        problem["text"]
            .as_str()
            .unwrap()
            .contains("7 │ paylod = { x = 1 }")
    );
    assert_eq!(stopped["status"], "stopped");
    assert_eq!(stopped["name"], "forever");
    assert_eq!(stopped["seed"], 0);
    assert!(
        stopped["problems"][0]["text"]
            .as_str()
            .unwrap()
            .contains("max_events = 5000")
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    let x = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<(Option<&str>, Option<&str>, bool)> = x
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| {
            (
                n.attribute("name"),
                n.attribute("line"),
                n.children().any(|c| c.has_tag_name("failure")),
            )
        })
        .collect();
    assert_eq!(
        cases,
        [
            (
                Some("valid scenario file: line 7: unknown key `paylod`"),
                Some("7"),
                true
            ),
            (
                Some(
                    "run finishes within its limits: line 4: the run stopped at the event limit ([limits] max_events = 5000)"
                ),
                Some("4"),
                true
            )
        ]
    );

    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("index.json")).unwrap())
            .unwrap();
    assert_eq!(index["errors"], 2);
    assert_eq!(index["passed"], 0);
    assert_eq!(index["scenarios"][0]["name"], "tests/bad/unknown-key.toml");
    assert_eq!(index["scenarios"][1]["status"], "stopped");
    assert_eq!(index["scenarios"][1]["report"], serde_json::Value::Null);
    assert_eq!(index["scenarios"][1]["totals"], serde_json::Value::Null);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_file_with_thousands_of_problems_shows_the_first_hundred_and_counts_the_rest() {
    let dir = scratch("many");
    let mut text = String::from(
        "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n[[traffic]]\ncount = 10\nover = \"1m\"\n",
    );
    for i in 0..5000 {
        text.push_str(&format!(
            "[[expect.event]]\nkind = \"acked\"\nmessage = \"m{i}\"\n"
        ));
    }
    let file = dir.join("many.toml");
    std::fs::write(&file, text).unwrap();
    let o = run(&["check", "--format", "json", file.to_str().unwrap()]);
    assert_eq!(code(&o), 3);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let problems = doc["files"][0]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 101);
    assert_eq!(problems[0]["line"], 9);
    assert_eq!(
        problems[100]["message"],
        "4900 more problems were found and are not shown"
    );
    // Each shown problem quotes the file: the output stays small.
    assert!(o.stdout.len() < 200_000, "{} bytes", o.stdout.len());
}

#[cfg(unix)]
#[test]
fn a_file_name_with_a_control_character_is_refused_not_echoed() {
    let d = scratch("control-name");
    let name = d.join("a\u{1b}[31mred.toml");
    std::fs::copy(THREE_FIRST, &name).unwrap();
    let pattern = format!("{}/*.toml", d.display());
    for args in [
        vec![pattern.as_str()],
        vec![name.to_str().unwrap()],
        vec!["check", pattern.as_str()],
    ] {
        let o = run(&args);
        assert_eq!(code(&o), 2);
        let err = stderr(&o);
        assert!(err.contains("holds a control character"), "{err}");
        assert!(!err.contains('\u{1b}') && o.stdout.is_empty(), "{err}");
    }
    // A golden file's control bytes are shown escaped in the diff.
    let golden = d.join("golden");
    std::fs::create_dir_all(&golden).unwrap();
    std::fs::write(
        golden.join("01-dlq-is-not-proof-nothing-happened.txt"),
        "scenario: \u{1b}[2J\n",
    )
    .unwrap();
    let o = run(&[
        "--color",
        "never",
        "--golden",
        golden.to_str().unwrap(),
        THREE_FIRST,
    ]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(
        out.contains("\\u{1b}[2J") && !out.contains('\u{1b}'),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `--unset PATH` removes a key the file writes, as if not written: with
/// `--set` it turns the redrive of one message into a redrive of all
/// (the run `redrive_all` gives). A key the file does not write, or a
/// swept path, is an invalid scenario located on the argument (exit 3).
#[test]
fn unset_removes_a_key_and_refuses_one_that_is_not_there_or_swept() {
    let only = "scenarios/10-redrive-only-poison.toml";
    let json = |args: &[&str]| -> serde_json::Value {
        let o = run(args);
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let unset = json(&[
        "--format",
        "json",
        "--set",
        "operator.1.action=redrive_all",
        "--unset",
        "operator.1.only",
        only,
    ]);
    assert_eq!(
        unset["scenarios"][0]["status"], "failed",
        "its expectations no longer hold"
    );
    assert_eq!(unset["scenarios"][0]["totals"]["acked"], 4);
    // Without the --unset, `only` is refused with the new action.
    let o = run(&["--set", "operator.1.action=redrive_all", only]);
    assert_eq!(code(&o), 3);
    for (args, said) in [
        (
            vec!["--unset", "operator.1.nope", only],
            "--unset operator.1.nope: the file has no `operator.1.nope`",
        ),
        (
            vec![
                "--unset",
                "delivery.max_receives",
                "scenarios/28-poison-lab-sweep.toml",
            ],
            "--unset delivery.max_receives: the path is swept",
        ),
    ] {
        let o = run(&args);
        assert_eq!(code(&o), 3, "{args:?}");
        let err = stdout(&o) + &stderr(&o);
        assert!(err.contains(said), "{err}");
        assert!(err.contains("--set:1:1"), "located on the argument: {err}");
    }
}
