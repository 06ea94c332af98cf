//! Writing output files never destroys what it should not: a file-size
//! limit is an error (exit 2, no temporary left, no index for reports not
//! written), a killed run's temporaries are cleaned, a link is written
//! through and a device is written to.

use crate::common;

use std::path::Path;
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_scenario-run")
}

/// An empty folder of this test's own, removed when the test ends.
fn temp(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("scenario-run-writes-{name}"))
}

fn listing(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .map(|r| {
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[cfg(unix)]
#[test]
fn a_file_size_limit_is_an_error_not_a_killed_process() {
    let d = temp("ulimit");
    let reports = d.join("reports");
    // 8 KiB: the Markdown report fits, the HTML report does not.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -f 8 && exec {} --report {} scenarios/01-dlq-is-not-proof-nothing-happened.toml",
            bin(),
            reports.display()
        ))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "killed by a signal? {err}");
    assert!(err.contains("File too large"), "{err}");
    let left = listing(&reports);
    assert!(
        left.iter().all(|f| !f.starts_with(".scenario-run-")),
        "a temporary was left: {left:?}"
    );
    assert!(
        left.iter().all(|f| !f.starts_with("index.")),
        "the index is written last, after every report: {left:?}"
    );
}

#[test]
fn a_killed_runs_temporaries_are_removed_by_the_next_run() {
    let d = temp("stale");
    std::fs::write(d.join(".scenario-run-Xy12ab.tmp"), "half a report").unwrap();
    let o = Command::new(bin())
        .args([
            "--quiet",
            "--report",
            d.to_str().unwrap(),
            "--report-format",
            "markdown",
        ])
        .arg("scenarios/01-dlq-is-not-proof-nothing-happened.toml")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        listing(&d),
        ["01-dlq-is-not-proof-nothing-happened.md", "index.md"]
    );
}

#[cfg(unix)]
#[test]
fn junit_through_a_link_or_to_a_device() {
    let d = temp("junit");
    std::fs::create_dir_all(d.join("ci")).unwrap();
    std::os::unix::fs::symlink("ci/junit.xml", d.join("junit.xml")).unwrap();
    let run = |junit: &Path| {
        Command::new(bin())
            .args(["--quiet", "--junit"])
            .arg(junit)
            .arg("scenarios/01-dlq-is-not-proof-nothing-happened.toml")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap()
    };
    assert_eq!(run(&d.join("junit.xml")).status.code(), Some(0));
    assert!(
        std::fs::symlink_metadata(d.join("junit.xml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(d.join("ci/junit.xml"))
            .unwrap()
            .contains("<testsuites")
    );
    assert_eq!(run(Path::new("/dev/null")).status.code(), Some(0));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    // A full device: a clear error, exit 2.
    if Path::new("/dev/full").exists() {
        let o = run(Path::new("/dev/full"));
        assert_eq!(o.status.code(), Some(5));
        assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write /dev/full"));
    }
}

/// Runs the binary with standard output sent to `/dev/full`.
#[cfg(target_os = "linux")]
fn to_full_disk(args: &[&str]) -> std::process::Output {
    Command::new(bin())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_failed_write_to_standard_output_is_an_error() {
    let fixture = "scenarios/01-dlq-is-not-proof-nothing-happened.toml";
    for args in [
        vec!["--format", "json", fixture],
        vec![fixture],
        vec!["schema"],
        vec!["show", fixture],
        vec!["show", "scenarios/28-poison-lab-sweep.toml"],
        vec!["check", "--format", "json", fixture],
        vec!["completions", "bash"],
    ] {
        let o = to_full_disk(&args);
        assert_eq!(o.status.code(), Some(5), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("error: cannot write to standard output: No space left on device"),
            "{args:?}: {err}"
        );
    }
}

#[cfg(unix)]
#[test]
fn output_cut_by_a_file_size_limit_is_an_error_and_a_closed_pipe_is_not() {
    // 1 KiB of the 17 MB document: exit 2, never a truncated document
    // passed off as whole.
    let d = temp("stdout-limit");
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -f 1 && exec {} --format json benches/full-transcript-10k.toml > {}",
            bin(),
            d.join("out.json").display()
        ))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&o.stderr).contains("File too large"));
    // A reader that stops early (`| head -1`) ends the output quietly.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; {} show benches/full-transcript-10k.toml | head -1",
            bin()
        ))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}
