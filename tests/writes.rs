//! Writing output files never destroys what it should not: a file-size
//! limit is an error (exit 2, no temporary left, no index for reports not
//! written), a killed run's temporaries are cleaned, a link is written
//! through and a device is written to.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_scenario-run")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("scenario-run-writes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
    assert_eq!(o.status.code(), Some(2), "killed by a signal? {err}");
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
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write /dev/full"));
    }
}
