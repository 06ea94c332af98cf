//! `--shard I/N` and `merge`: a batch split across machines and merged
//! back gives what the unsharded run gives (index, JUnit, step summary,
//! sweep reports, exit code), and `merge` refuses what is not one whole
//! batch.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scenario-run"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CI", "true")
        .env_remove("SCENARIO_RUN_BLESS")
        .env("NO_COLOR", "1");
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

/// An empty folder of this test's own, removed when the test ends.
fn temp(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("scenario-run-shards-{name}"))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `files` whole and in `n` shards merged; asserts that the exit
/// code, index files, JUnit, step summary, the reports of split sweeps and
/// the status lines are the same. Returns the exit code.
fn assert_merge_equals_whole(dir: &Path, n: usize, files: &[&str], golden: &str) -> i32 {
    let whole = dir.join(format!("whole-{n}"));
    let merged = dir.join(format!("merged-{n}"));
    let whole_sum = dir.join(format!("whole-{n}.md"));
    let merged_sum = dir.join(format!("merged-{n}.md"));
    let mut args = vec![
        "--quiet",
        "--golden",
        golden,
        "--report",
        s(&whole),
        "--junit",
    ];
    let junit = whole.join("junit.xml");
    args.push(s(&junit));
    args.extend(["--summary-markdown", s(&whole_sum)]);
    args.extend(files);
    let unsharded = run(&args);
    let mut shard_files = Vec::new();
    for i in 1..=n {
        let out = dir.join(format!("shard-{i}-of-{n}.json"));
        let reports = dir.join(format!("reports-{i}-of-{n}"));
        let shard = format!("{i}/{n}");
        let mut args = vec![
            "--shard",
            &shard,
            "--golden",
            golden,
            "--report",
            s(&reports),
            "--format",
            "json",
        ];
        args.extend(files);
        let o = run(&args);
        assert!(code(&o) <= 4, "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::write(&out, &o.stdout).unwrap();
        shard_files.push(out);
    }
    let mut args = vec![
        "merge",
        "--quiet",
        "--golden",
        golden,
        s(&merged),
        "--summary-markdown",
        s(&merged_sum),
    ];
    args.extend(shard_files.iter().map(|p| s(p)));
    let m = run(&args);
    assert_eq!(
        code(&m),
        code(&unsharded),
        "exit code; merge said: {}",
        String::from_utf8_lossy(&m.stderr)
    );
    for f in ["index.json", "index.md", "index.html", "junit.xml"] {
        assert_eq!(
            read(&merged.join(f)),
            read(&whole.join(f)),
            "{f} differs ({n} shards)"
        );
    }
    assert_eq!(read(&merged_sum), read(&whole_sum), "step summary");
    // The reports of sweeps that ran on several shards are written whole.
    for e in std::fs::read_dir(&merged).unwrap() {
        let name = e.unwrap().file_name();
        assert_eq!(
            read(&merged.join(&name)),
            read(&whole.join(&name)),
            "{name:?} ({n} shards)"
        );
    }
    // Merged from the shards' report folders (their index.json), the
    // folder is the unsharded run's, file for file: every report is copied.
    let from_reports = dir.join(format!("merged-from-reports-{n}"));
    let mut args = vec!["merge", "--quiet", "--golden", golden, s(&from_reports)];
    let indexes: Vec<PathBuf> = (1..=n)
        .map(|i| dir.join(format!("reports-{i}-of-{n}/index.json")))
        .collect();
    args.extend(indexes.iter().map(|p| s(p)));
    let m2 = run(&args);
    assert_eq!(code(&m2), code(&unsharded));
    let listing = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    assert_eq!(listing(&from_reports), listing(&whole));
    for name in listing(&whole) {
        assert_eq!(
            read(&from_reports.join(&name)),
            read(&whole.join(&name)),
            "{name:?} merged from reports ({n} shards)"
        );
    }
    // The closing line counts alike.
    let last = |o: &Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .last()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(last(&m), last(&unsharded));
    code(&m)
}

#[test]
fn the_bundled_batch_sharded_then_merged_equals_the_unsharded_run() {
    let dir = temp("bundled");
    for n in [2, 3] {
        let code = assert_merge_equals_whole(&dir, n, &["scenarios/*.toml"], "reports/golden");
        assert_eq!(code, 0);
    }
    // Both sweeps ran on several shards and were written whole.
    assert!(dir.join("merged-3/28-poison-lab-sweep.html").exists());
}

const SWEEP: &str = r#"
[scenario]
name = "A receive budget swept"
seed = 3

[delivery]
max_receives = 3
retry_interval = "10s"

[sweep]
"delivery.max_receives" = [1, 2, 3, 4, 5]

[[message]]
id = "transient"
faults = [{ fail = { first = 2 }, reason = "timeout", class = "transient" }]

[expect]
acked = 1
"#;

#[test]
fn a_failing_batch_merges_to_the_same_failures() {
    let dir = temp("failing");
    let golden = dir.join("golden");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    let nine = read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/09-three-receives.toml")
            .as_path(),
    );
    std::fs::write(scenarios.join("a-pass.toml"), &nine).unwrap();
    std::fs::write(
        scenarios.join("b-fail.toml"),
        nine.replace("effects = 4", "effects = 5"),
    )
    .unwrap();
    std::fs::write(scenarios.join("c-sweep.toml"), SWEEP).unwrap();
    std::fs::write(
        scenarios.join("d-sweep-golden-differs.toml"),
        SWEEP.replace("A receive", "Another receive"),
    )
    .unwrap();
    let pattern = format!("{}/*.toml", scenarios.display());
    // Goldens as they are, then one row of a sweep's table changed.
    let blessed = bin()
        .env_remove("CI")
        .args(["--quiet", "--golden", s(&golden), "--bless", &pattern])
        .output()
        .unwrap();
    assert_eq!(
        code(&blessed),
        1,
        "{}",
        String::from_utf8_lossy(&blessed.stdout)
    );
    let table = golden.join("d-sweep-golden-differs.txt");
    let changed = read(&table).replacen("passed", "failed", 1);
    std::fs::write(&table, changed).unwrap();
    for n in [2, 3, 4] {
        let code = assert_merge_equals_whole(&dir, n, &[&pattern], s(&golden));
        assert_eq!(code, 1, "{n} shards");
    }
    let junit = read(&dir.join("merged-3/junit.xml"));
    assert!(
        junit.contains("[delivery.max_receives = 1] acked = 1"),
        "{junit}"
    );
    assert!(
        junit.contains("the transcript differs from"),
        "the sweep's golden table is compared at merge: {junit}"
    );
    // An invalid file makes it exit 2, merged or not.
    std::fs::write(
        scenarios.join("e-invalid.toml"),
        "[delivery]\nmax_receives = \"x\"\n",
    )
    .unwrap();
    let code = assert_merge_equals_whole(&dir, 3, &[&pattern], s(&golden));
    assert_eq!(code, 3);
}

#[test]
fn merge_refuses_what_is_not_one_whole_batch() {
    let dir = temp("refuse");
    let shard = |i: usize, n: usize| {
        let o = run(&[
            "--shard",
            &format!("{i}/{n}"),
            "--format",
            "json",
            "scenarios/0*.toml",
        ]);
        let p = dir.join(format!("s{i}of{n}.json"));
        std::fs::write(&p, &o.stdout).unwrap();
        p
    };
    let (a, b, c) = (shard(1, 3), shard(2, 3), shard(3, 3));
    let other = shard(1, 2);
    let out = dir.join("out");
    let refused = |inputs: &[&Path], says: &str| {
        let mut args = vec!["merge", s(&out)];
        args.extend(inputs.iter().map(|p| s(p)));
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(code(&o), 3, "{err}");
        assert!(err.contains(says), "{err}");
        assert!(!out.exists(), "nothing is written");
    };
    refused(&[&a, &b], "the results of shard 3/3 are missing");
    refused(&[&a, &b, &b, &c], "shard 2/3 is given twice");
    refused(
        &[&a, &b, &c, &other],
        "every shard must run the same files with the same N",
    );
    let whole = dir.join("whole.json");
    std::fs::write(
        &whole,
        run(&["--format", "json", "scenarios/0*.toml"]).stdout,
    )
    .unwrap();
    refused(&[&whole, &a], "not of a shard");
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"x\": 1").unwrap();
    refused(&[&junk], "is not JSON");
    std::fs::write(&junk, "{\"format_version\": 1, \"scenarios\": []}").unwrap();
    refused(&[&junk], "format_version 1, expected 2");
    // A whole batch's result merges to itself.
    let o = run(&["merge", s(&out), s(&whole)]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // A shard's report folder always has the index.json that merge reads.
    let folder = dir.join("markdown-only");
    let o = run(&[
        "--shard",
        "1/2",
        "--report",
        s(&folder),
        "--report-format",
        "markdown",
        "scenarios/01*.toml",
    ]);
    assert_eq!(code(&o), 0);
    assert!(folder.join("index.json").is_file());
    assert!(folder.join("index.md").is_file());
    assert!(
        !folder
            .join("01-dlq-is-not-proof-nothing-happened.json")
            .exists()
    );
    // Blessing is a whole run's job.
    let o = run(&[
        "--shard",
        "1/2",
        "--golden",
        s(&dir),
        "--bless",
        "scenarios/01*.toml",
    ]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--bless"));
}

#[test]
fn a_filter_selects_for_the_whole_batch_not_for_one_shard() {
    // Only the first file matches: it is shard 1's, and shard 2 runs
    // nothing without calling the filter a typo.
    let o = run(&[
        "--shard",
        "2/3",
        "--filter",
        "dlq-is-not-proof",
        "scenarios/*.toml",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("0 passed, 0 failed\n"));
    let o = run(&[
        "--shard",
        "1/3",
        "--filter",
        "dlq-is-not-proof",
        "scenarios/*.toml",
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("1 passed, 0 failed\n"));
    // A filter that selects only a sweep selects something.
    let o = run(&[
        "--filter",
        "poison-lab-sweep",
        "--quiet",
        "scenarios/*.toml",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("1 passed, 0 failed\n"));
    // A typo is still one, sharded or not.
    let o = run(&[
        "--shard",
        "2/3",
        "--filter",
        "no-such-scenario",
        "scenarios/*.toml",
    ]);
    assert_eq!(code(&o), 2);
}

/// Two shards of the sweeps 28 and 29 (split: each sweep's points are on
/// both), as `--report` folders with JSON reports, run with `--golden`.
fn split_sweeps(dir: &Path) -> (PathBuf, PathBuf) {
    let folder = |i: usize| {
        let reports = dir.join(format!("s{i}"));
        let o = run(&[
            "--quiet",
            "--shard",
            &format!("{i}/2"),
            "--golden",
            "reports/golden",
            "--report",
            s(&reports),
            "--report-format",
            "json",
            "scenarios/2[89]*.toml",
        ]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        reports
    };
    (folder(1), folder(2))
}

/// A copy of shard folder `from` as `name`, its index.json changed by
/// `forge`.
fn forged(dir: &Path, from: &Path, name: &str, forge: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let to = dir.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    let mut index: serde_json::Value = serde_json::from_str(&read(&to.join("index.json"))).unwrap();
    forge(&mut index);
    std::fs::write(to.join("index.json"), index.to_string()).unwrap();
    to
}

/// Runs `merge` of `inputs` into a fresh folder with `extra` options.
fn merge_of(dir: &Path, extra: &[&str], inputs: &[&Path]) -> (i32, String, PathBuf) {
    let out = dir.join(format!(
        "out-{}",
        std::time::SystemTime::UNIX_EPOCH
            .elapsed()
            .unwrap()
            .as_nanos()
    ));
    let mut args = vec!["merge", "--quiet"];
    args.extend(extra);
    args.push(s(&out));
    let indexes: Vec<PathBuf> = inputs.iter().map(|d| d.join("index.json")).collect();
    args.extend(indexes.iter().map(|p| s(p)));
    let o = run(&args);
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    (code(&o), said, out)
}

#[test]
fn merge_reads_no_path_that_a_shard_names() {
    let dir = temp("forged-paths");
    let (a, b) = split_sweeps(&dir);
    let golden = ["--golden", "reports/golden"];
    assert_eq!(merge_of(&dir, &golden, &[&a, &b]).0, 0);
    // A golden path in the shard's data is never read (nor written): the
    // table is compared with --golden DIR's file, by the scenario's name.
    let elsewhere = dir.join("elsewhere/deep/28.txt");
    let at = elsewhere.display().to_string();
    let f = forged(&dir, &a, "golden-path", |i| {
        for e in i["scenarios"].as_array_mut().unwrap() {
            e["golden"]["file"] = serde_json::json!(at);
        }
    });
    let (c, said, _) = merge_of(&dir, &golden, &[&f, &b]);
    assert_eq!(c, 0, "{said}");
    assert!(!elsewhere.exists() && !dir.join("elsewhere").exists());
    // Without --golden the split tables cannot be compared: a golden file
    // that cannot be used (exit 5) that says so, not a read of the
    // shard's path.
    let (c, said, _) = merge_of(&dir, &[], &[&f, &b]);
    assert_eq!(c, 5, "{said}");
    assert!(said.contains("golden transcript cannot be used"), "{said}");
    // A missing golden file is missing, never written by merge.
    let empty = dir.join("empty-golden");
    std::fs::create_dir_all(&empty).unwrap();
    let (c, _, _) = merge_of(&dir, &["--golden", s(&empty)], &[&a, &b]);
    assert_eq!(c, 1);
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    // A report name that climbs out of the shard's folder is refused.
    let f = forged(&dir, &a, "report-name", |i| {
        for e in i["scenarios"].as_array_mut().unwrap() {
            e["report"] = serde_json::json!("../../../../etc/hostname");
        }
    });
    let (c, said, out) = merge_of(&dir, &golden, &[&f, &b]);
    assert_eq!(c, 3, "{said}");
    assert!(said.contains("is not a plain file name"), "{said}");
    assert!(!out.exists(), "nothing written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn merge_reads_no_link_fifo_or_broken_part() {
    let dir = temp("forged-files");
    let (a, b) = split_sweeps(&dir);
    let golden = ["--golden", "reports/golden"];
    let part = "28-poison-lab-sweep.json";
    // A FIFO where a sweep's points should be: an error, not a hang.
    let fifo = forged(&dir, &a, "fifo", |_| {});
    std::fs::remove_file(fifo.join(part)).unwrap();
    let made = Command::new("mkfifo")
        .arg(fifo.join(part))
        .status()
        .unwrap();
    assert!(made.success());
    let (c, said, out) = merge_of(&dir, &golden, &[&fifo, &b]);
    assert_eq!(c, 3, "{said}");
    assert!(said.contains("not a regular file"), "{said}");
    assert!(!out.exists());
    // A truncated part: refused, never dropped while the status line
    // claims every point.
    let cut = forged(&dir, &a, "truncated", |_| {});
    let text = read(&cut.join(part));
    std::fs::write(cut.join(part), &text[..text.len() / 2]).unwrap();
    let (c, said, _) = merge_of(&dir, &golden, &[&cut, &b]);
    assert_eq!(c, 3, "{said}");
    assert!(said.contains("is not a sweep's JSON report"), "{said}");
    // A part shaped wrongly (`"sweep": 5`): refused, not a panic.
    let odd = forged(&dir, &a, "odd", |_| {});
    let mut doc: serde_json::Value = serde_json::from_str(&read(&odd.join(part))).unwrap();
    doc["sweep"] = serde_json::json!(5);
    std::fs::write(odd.join(part), doc.to_string()).unwrap();
    let (c, said, _) = merge_of(&dir, &golden, &[&odd, &b]);
    assert_eq!(c, 3, "{said}");
    assert!(said.contains("is not a sweep's"), "{said}");
    // A report that is a link (to /etc/passwd) is not copied.
    let whole = dir.join("whole");
    let o = run(&[
        "--quiet",
        "--shard",
        "1/1",
        "--report",
        s(&whole),
        "--report-format",
        "json",
        "scenarios/01*.toml",
    ]);
    assert_eq!(code(&o), 0);
    let report = whole.join("01-dlq-is-not-proof-nothing-happened.json");
    std::fs::remove_file(&report).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &report).unwrap();
    let (c, said, out) = merge_of(&dir, &[], &[&whole]);
    assert_eq!(c, 3, "{said}");
    assert!(said.contains("is not a regular file"), "{said}");
    assert!(
        !out.join("01-dlq-is-not-proof-nothing-happened.json")
            .exists()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_checks_every_shard_is_of_one_batch() {
    let dir = temp("forged-batch");
    let (a, b) = split_sweeps(&dir);
    let golden = ["--golden", "reports/golden"];
    for (name, index, count, says) in [
        ("huge", 1u64, 1_000_000_000_000_000u64, "N at most 10000"),
        ("past", 3, 2, "says it is shard 3/2"),
    ] {
        let f = forged(&dir, &a, name, |i| {
            i["shard"]["index"] = serde_json::json!(index);
            i["shard"]["count"] = serde_json::json!(count);
        });
        let (c, said, _) = merge_of(&dir, &golden, &[&f, &b]);
        assert_eq!(c, 3, "{said}");
        assert!(said.contains(says), "{said}");
    }
    // Another --seed, or other files in the same number: another batch.
    for (name, args) in [
        ("seed", vec!["--seed", "5", "scenarios/2[89]*.toml"]),
        ("files", vec!["scenarios/2[78]*.toml"]),
    ] {
        let other = dir.join(name);
        // The same options as `split_sweeps`, but for the one changed.
        let mut all = vec![
            "--quiet",
            "--shard",
            "2/2",
            "--golden",
            "reports/golden",
            "--report",
            s(&other),
            "--report-format",
            "json",
        ];
        all.extend(args);
        assert!(code(&run(&all)) <= 1);
        let (c, said, _) = merge_of(&dir, &golden, &[&a, &other]);
        assert_eq!(c, 3, "{name}: {said}");
        assert!(
            said.contains("are shards of different batches"),
            "{name}: {said}"
        );
    }
    // A count past the limit is refused on the command line too, and a
    // forged count is never listed shard by shard.
    let o = run(&["--shard", "1/1000000000", "scenarios/01*.toml"]);
    assert_eq!(code(&o), 2);
    let f = forged(&dir, &a, "many", |i| {
        i["shard"]["count"] = serde_json::json!(10_000);
        i["shard"]["index"] = serde_json::json!(1);
    });
    let g = forged(&dir, &b, "many-b", |i| {
        i["shard"]["count"] = serde_json::json!(10_000);
    });
    let (c, said, _) = merge_of(&dir, &golden, &[&f, &g]);
    assert_eq!(c, 3, "{said}");
    assert!(
        said.contains("and 9978 more (9998 in all) are missing"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_refuses_control_characters_in_a_shards_data() {
    let dir = temp("forged-controls");
    let (a, b) = split_sweeps(&dir);
    let golden = ["--golden", "reports/golden"];
    let f = forged(&dir, &a, "escape", |i| {
        i["scenarios"][0]["name"] = serde_json::json!("\u{1b}[2J\u{1b}[31mPASS");
    });
    let (c, said, out) = merge_of(&dir, &golden, &[&f, &b]);
    assert_eq!(c, 3, "{said}");
    assert!(
        said.contains("holds a control character in a string"),
        "{said}"
    );
    assert!(!said.contains('\u{1b}'));
    assert!(!out.exists());
    // In a sweep's part, a NUL that would reach the HTML report.
    let f = forged(&dir, &a, "nul", |_| {});
    let part = f.join("28-poison-lab-sweep.json");
    let mut doc: serde_json::Value = serde_json::from_str(&read(&part)).unwrap();
    doc["name"] = serde_json::json!("a\u{0}b");
    std::fs::write(&part, doc.to_string()).unwrap();
    let (c, said, _) = merge_of(&dir, &golden, &[&f, &b]);
    assert_eq!(c, 3, "{said}");
    assert!(said.contains("holds a control character"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A change made to a shard's `index.json`.
type Forge = dyn Fn(&mut serde_json::Value);

#[test]
fn merge_prints_no_line_a_shard_did_not_earn() {
    let dir = temp("forged-lines");
    let (a, b) = split_sweeps(&dir);
    let golden = ["--golden", "reports/golden"];
    let forgeries: [(&str, &Forge, &str); 6] = [
        (
            "name-lf",
            &|i| i["scenarios"][0]["name"] = serde_json::json!("x\nPASS  fake.toml  all good"),
            "holds a line break in a `name`",
        ),
        (
            "file-ls",
            &|i| i["scenarios"][0]["file"] = serde_json::json!("x\u{2028}2 passed, 0 failed"),
            "holds a line break in a `file`",
        ),
        (
            "row-nel",
            &|i| {
                i["scenarios"][0]["sweep"]["points"][0]["row"][0] =
                    serde_json::json!("1\u{2029}PASS")
            },
            "holds a line break in a `row`",
        ),
        (
            "status-cr",
            &|i| i["scenarios"][0]["summary"] = serde_json::json!("ok\rPASS"),
            "holds a carriage return in a `summary`",
        ),
        (
            "text-margin",
            &|i| {
                i["scenarios"][0]["status"] = serde_json::json!("failed");
                i["scenarios"][0]["problems"] = serde_json::json!([{
                    "file": "x.toml", "line": null, "column": null, "end_line": null,
                    "end_column": null, "message": "m", "label": null, "help": null,
                    "text": "  × m\nPASS  scenarios/x.toml  fine\n2 passed, 0 failed\n"
                }]);
            },
            "holds a diagnostic line that starts at the margin (\"PASS  scenarios/x.toml  fine\")",
        ),
        (
            "text-first-line",
            &|i| {
                i["scenarios"][0]["problems"] = serde_json::json!([{
                    "file": "x.toml", "line": null, "column": null, "end_line": null,
                    "end_column": null, "message": "m", "label": null, "help": null,
                    "text": "3 passed, 0 failed"
                }]);
            },
            "starts at the margin",
        ),
    ];
    for (name, forge, says) in forgeries {
        let f = forged(&dir, &a, name, forge);
        let (c, said, out) = merge_of(&dir, &golden, &[&f, &b]);
        assert_eq!(c, 3, "{name}: {said}");
        assert!(said.contains(says), "{name}: {said}");
        assert!(said.contains("not the result of a run"), "{name}: {said}");
        assert!(
            !said
                .lines()
                .any(|l| l.starts_with("PASS") || l.starts_with("2 passed")),
            "{name}: {said}"
        );
        assert!(!out.exists(), "{name}: nothing written");
    }
    // A run's own multi-line diagnostics (a failing batch, a golden diff)
    // merge as they are: see a_failing_batch_merges_to_the_same_failures.
    let (c, said, _) = merge_of(&dir, &golden, &[&a, &b]);
    assert_eq!(c, 0, "{said}");
}

/// An index template that fails leaves nothing of the merge: the index is
/// staged before any file is written, and the folder made for it goes.
#[test]
fn a_broken_index_template_leaves_no_merged_folder() {
    let dir = temp("broken-index");
    let (a, b) = split_sweeps(&dir);
    let templates = dir.join("templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(templates.join("index.md.j2"), "{{ batch.nothing.here }}\n").unwrap();
    let (c, said, out) = merge_of(
        &dir,
        &["--golden", "reports/golden", "--templates", s(&templates)],
        &[&a, &b],
    );
    assert_eq!(c, 3, "{said}");
    assert!(said.contains("index.md.j2"), "{said}");
    assert!(!out.exists(), "{} was made", out.display());
    let _ = std::fs::remove_dir_all(&dir);
}
