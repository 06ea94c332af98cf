//! Files a repository can plant where the tool reads and writes: golden
//! files and report folders. What is there is data: a link is never
//! followed, a FIFO never waited on, a device never read, a file larger
//! than its cap never read, and each is refused with a message that names
//! it and exit 2.

use crate::common;

use std::path::Path;

const SCENARIO: &str = "scenarios/01-dlq-is-not-proof-nothing-happened.toml";
const GOLDEN_NAME: &str = "01-dlq-is-not-proof-nothing-happened.txt";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs the scenario against the golden folder `dir` under `CI=true`.
fn golden_run(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut c = common::bin();
    c.env("CI", "true")
        .args(["--golden", s(dir)])
        .args(extra)
        .arg(SCENARIO);
    within_a_minute(c)
}

/// The command's output; a run that has not ended after a minute (it
/// waits on a FIFO) is killed and fails the test.
fn within_a_minute(mut c: std::process::Command) -> std::process::Output {
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(out) => out,
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .args(["-9", &id.to_string()])
                .status();
            panic!("the run did not end within a minute");
        }
    }
}

fn both(o: &std::process::Output) -> String {
    format!("{}{}", common::stdout(o), common::stderr(o))
}

#[cfg(unix)]
#[test]
fn a_golden_file_that_is_a_link_is_refused_not_followed() {
    let d = common::scratch("planted-golden-link");
    let golden = d.join("golden");
    std::fs::create_dir_all(&golden).unwrap();
    std::fs::write(d.join("credentials"), "token=hunter2\n").unwrap();
    std::os::unix::fs::symlink("../credentials", golden.join(GOLDEN_NAME)).unwrap();
    for extra in [&[][..], &["--format", "json"], &["--format", "github"]] {
        let o = golden_run(&golden, extra);
        let said = both(&o);
        assert_eq!(common::code(&o), 5, "{said}");
        assert!(
            !said.contains("hunter2"),
            "the link's target leaked: {said}"
        );
        assert!(said.contains("symbolic link"), "{said}");
    }
    // The JUnit file does not carry it either.
    let junit = d.join("junit.xml");
    let o = golden_run(&golden, &["--junit", s(&junit)]);
    assert_eq!(common::code(&o), 5);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(!xml.contains("hunter2"), "{xml}");
    assert!(xml.contains("symbolic link"), "{xml}");
    // Blessing does not write through it.
    let o = golden_run(&golden, &["--bless"]);
    assert_eq!(common::code(&o), 5, "{}", both(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("credentials")).unwrap(),
        "token=hunter2\n"
    );
    assert!(
        std::fs::symlink_metadata(golden.join(GOLDEN_NAME))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[cfg(unix)]
#[test]
fn a_golden_fifo_is_refused_without_waiting() {
    let d = common::scratch("planted-golden-fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(d.join(GOLDEN_NAME))
        .status()
        .unwrap();
    assert!(made.success());
    // Without the fix the run blocks forever on the FIFO: the test's
    // harness would time out rather than pass.
    let o = golden_run(&d, &[]);
    let said = both(&o);
    assert_eq!(common::code(&o), 5, "{said}");
    assert!(said.contains("it is a FIFO, not a regular file"), "{said}");
}

#[cfg(unix)]
#[test]
fn a_golden_link_to_a_device_is_refused_without_reading() {
    let d = common::scratch("planted-golden-device");
    std::os::unix::fs::symlink("/dev/zero", d.join(GOLDEN_NAME)).unwrap();
    let o = golden_run(&d, &[]);
    let said = both(&o);
    assert_eq!(common::code(&o), 5, "{said}");
    assert!(said.contains("symbolic link"), "{said}");
}

#[test]
fn an_oversized_golden_file_is_refused_not_read() {
    let d = common::scratch("planted-golden-large");
    // Sparse: larger than the cap on disk's say-so, nothing written.
    let f = std::fs::File::create(d.join(GOLDEN_NAME)).unwrap();
    f.set_len(scenario_run::app::golden::MAX_GOLDEN_BYTES + 1)
        .unwrap();
    drop(f);
    let o = golden_run(&d, &[]);
    let said = both(&o);
    assert_eq!(common::code(&o), 5, "{said}");
    assert!(
        said.contains("more than the 256 MiB a golden file may hold"),
        "{said}"
    );
}

#[cfg(unix)]
#[test]
fn a_golden_write_that_fails_exits_5() {
    let d = common::scratch("planted-golden-unwritable");
    // A folder where the golden file would go: it cannot be replaced.
    std::fs::create_dir_all(d.join(GOLDEN_NAME)).unwrap();
    let o = golden_run(&d, &["--bless"]);
    let said = both(&o);
    assert_eq!(common::code(&o), 5, "{said}");
    assert!(
        said.contains("it is a folder, not a regular file"),
        "{said}"
    );
}

#[cfg(unix)]
#[test]
fn a_link_planted_in_a_report_folder_is_never_written_through() {
    let d = common::scratch("planted-report-link");
    let reports = d.join("reports");
    let hooks = d.join("hooks");
    std::fs::create_dir_all(&reports).unwrap();
    std::fs::create_dir_all(&hooks).unwrap();
    for planted in [
        "01-dlq-is-not-proof-nothing-happened.html",
        "01-dlq-is-not-proof-nothing-happened.md",
        "index.html",
        "index.md",
        "index.json",
    ] {
        let link = reports.join(planted);
        std::os::unix::fs::symlink("../hooks/pre-commit", &link).unwrap();
        let o = common::report(&reports, "markdown,html,json", &[SCENARIO]);
        let said = both(&o);
        assert_eq!(common::code(&o), 5, "{planted}: {said}");
        assert!(
            said.contains("it is a symbolic link, not a regular file"),
            "{planted}: {said}"
        );
        assert_eq!(common::listing(&hooks), Vec::<String>::new(), "{planted}");
        // Nothing else was written either: the folder is as it was.
        assert_eq!(common::listing(&reports), [planted], "{planted}");
        std::fs::remove_file(&link).unwrap();
    }
    // A blessed golden folder alike.
    let golden = d.join("golden");
    std::fs::create_dir_all(&golden).unwrap();
    std::os::unix::fs::symlink("../hooks/pre-commit", golden.join(GOLDEN_NAME)).unwrap();
    let o = golden_run(&golden, &["--bless"]);
    assert_eq!(common::code(&o), 5, "{}", both(&o));
    assert_eq!(common::listing(&hooks), Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn a_report_folder_that_is_a_dangling_link_says_so() {
    let d = common::scratch("planted-dangling");
    let reports = d.join("reports");
    std::os::unix::fs::symlink("elsewhere/reports", &reports).unwrap();
    let o = common::report(&reports, "markdown", &[SCENARIO]);
    let said = both(&o);
    assert_eq!(common::code(&o), 5, "{said}");
    assert!(
        said.contains("is a symbolic link to elsewhere/reports, which does not exist"),
        "{said}"
    );
    assert!(!said.contains("File exists"), "{said}");
}

/// What a run prints and writes about a file whose problem is on one
/// line of 6 MB: a window of the line and its real column, never the
/// line (27 MB on the terminal and 81 MB of reports before).
#[test]
fn a_diagnostic_quotes_a_bounded_window_of_a_long_line() {
    let d = common::scratch("planted-long-line");
    let long = "x".repeat(6_000_000);
    let cases = [
        // A value too long, quoted from its start.
        (
            "name.toml",
            format!("[scenario]\nname = \"{long}\"\n"),
            ":2:8]",
        ),
        // An unknown key as long as the line, named in the message too.
        (
            "key.toml",
            format!("[scenario]\nname = \"n\"\n{long} = 1\n"),
            ":3:1]",
        ),
        // A problem at the end of the line: a column past 65,535 once
        // made the renderer panic (exit 101).
        (
            "end.toml",
            format!("a = [{}\n", vec!["1"; 3_000_000].join(",")),
            ":1:6000005]",
        ),
    ];
    for (name, text, at) in cases {
        let file = d.join(name);
        std::fs::write(&file, &text).unwrap();
        let o = common::run(&[s(&file)]);
        let said = both(&o);
        assert_eq!(
            common::code(&o),
            3,
            "{name}: {}",
            &said[..said.len().min(2000)]
        );
        assert!(said.len() < 8_000, "{name}: {} bytes printed", said.len());
        assert!(said.contains(at), "{name}: {said}");
        assert!(said.contains('…'), "{name}: {said}");
        let reports = d.join(format!("reports-{name}"));
        let o = common::report(&reports, "json,html,markdown", &[s(&file)]);
        assert_eq!(common::code(&o), 3, "{name}");
        for f in common::listing(&reports) {
            let size = std::fs::metadata(reports.join(&f)).unwrap().len();
            assert!(size < 100_000, "{name}: {f} is {size} bytes");
        }
    }
}
