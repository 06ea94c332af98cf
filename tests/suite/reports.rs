//! Reports: files written where they belong, from templates a user can
//! override, and their whole text snapshotted.

use crate::common;

use common::{code, listing, report, run, scratch, stderr, stdout};
use std::path::Path;

const THREE: [&str; 3] = [
    "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
    "scenarios/04-new-identity-duplicates.toml",
    "scenarios/16-two-operator-steps.toml",
];

fn stem(path: &str) -> &str {
    Path::new(path).file_stem().unwrap().to_str().unwrap()
}

#[test]
fn markdown_reports_are_one_file_per_scenario_and_an_index() {
    // Their text is checked against the committed reports/ once, in
    // the_bundled_markdown_reports_are_current (and the golden transcripts
    // in tests/cli.rs, the_committed_golden_transcripts_are_current).
    let d = scratch("md3");
    let dir = d.join("out");
    let o = report(&dir, "markdown", &THREE);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut expected: Vec<String> = THREE.iter().map(|p| format!("{}.md", stem(p))).collect();
    expected.push("index.md".into());
    expected.sort();
    assert_eq!(listing(&dir), expected);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn every_format_and_an_index_land_inside_the_folder_only() {
    let d = scratch("formats");
    // Two folders holding a file of the same name.
    for sub in ["east", "west"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
        std::fs::copy(THREE[0], d.join(sub).join("incident.toml")).unwrap();
    }
    std::fs::create_dir_all(d.join("ops")).unwrap();
    std::fs::copy(THREE[1], d.join("ops/index.toml")).unwrap();
    let dir = d.join("out");
    let east = d.join("east/incident.toml");
    let west = d.join("west/incident.toml");
    let index = d.join("ops/index.toml");
    let o = run(&[
        "--report",
        dir.to_str().unwrap(),
        east.to_str().unwrap(),
        west.to_str().unwrap(),
        index.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("reports: wrote 12 files to"));
    assert_eq!(listing(&d), ["east", "ops", "out", "west"]);
    let mut expected = Vec::new();
    for name in ["east__incident", "west__incident", "ops__index", "index"] {
        for ext in ["html", "json", "md"] {
            expected.push(format!("{name}.{ext}"));
        }
    }
    expected.sort();
    assert_eq!(listing(&dir), expected);

    // The JSON report is the whole run, versioned.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("west__incident.json")).unwrap())
            .unwrap();
    assert_eq!(doc["format_version"], 2);
    assert_eq!(doc["status"], "passed");
    assert_eq!(doc["totals"]["effects"], 2);
    assert_eq!(doc["messages"].as_array().unwrap().len(), 4);
    assert_eq!(doc["ledger"].as_array().unwrap().len(), 2);
    assert_eq!(
        doc["transitions"][0]["text"],
        "delivered (cycle 1, receive 1 of the cycle, 1 in all)"
    );
    assert_eq!(doc["flow"]["retries"], 3);
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["passed"], 3);
    assert_eq!(index["scenarios"][2]["report"], "ops__index");
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("href=\"east__incident.html\""));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_flow_counts_match_the_transitions() {
    // Retries and redrives come from totals alone; check them against the
    // recorded transitions of every small bundled scenario.
    let d = scratch("flow");
    let o = report(&d, "json", &["scenarios/*.toml"]);
    assert_eq!(code(&o), 0);
    let mut checked = 0;
    for name in listing(&d) {
        if name == "index.json" {
            continue;
        }
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join(&name)).unwrap()).unwrap();
        if doc["transitions_recorded"] != true {
            continue;
        }
        let count = |kind: &str| {
            doc["transitions"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["kind"] == kind)
                .count() as u64
        };
        assert_eq!(doc["flow"]["retries"], count("retry_scheduled"), "{name}");
        assert_eq!(doc["flow"]["redriven"], count("redriven"), "{name}");
        // A log record processed again after a restart acks again: the
        // message counts once, each of its acks is a transition.
        if doc["totals"]["reprocessed"].as_u64().unwrap_or(0) > 0 {
            assert!(
                doc["flow"]["acked"].as_u64().unwrap() <= count("acked"),
                "{name}"
            );
        } else {
            assert_eq!(doc["flow"]["acked"], count("acked"), "{name}");
        }
        checked += 1;
    }
    // The bundled scenarios of at most 10,000 messages.
    assert_eq!(checked, 49);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn templates_are_overridden_by_file_name() {
    let d = scratch("override");
    let t = d.join("templates");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        t.join("scenario.md.j2"),
        "{{ report.name }}: {{ report.totals.effects }} effects by {{ report.totals.end_time | duration }}\n",
    )
    .unwrap();
    let out = d.join("out");
    let o = run(&[
        "--quiet",
        "--report",
        out.to_str().unwrap(),
        "--report-format",
        "markdown",
        "--templates",
        t.to_str().unwrap(),
        THREE[1],
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(out.join("04-new-identity-duplicates.md")).unwrap(),
        "A redrive under a new key duplicates the effect: 5 effects by 40s\n"
    );
    // The index is still the built-in one.
    assert!(
        std::fs::read_to_string(out.join("index.md"))
            .unwrap()
            .starts_with("# Scenario reports")
    );
    let _ = std::fs::remove_dir_all(&d);
}

fn broken_template(name: &str, file: &str, text: &str) -> (i32, String, Vec<String>) {
    let d = scratch(name);
    let t = d.join("templates");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join(file), text).unwrap();
    let out = d.join("out");
    let o = run(&[
        "--report",
        out.to_str().unwrap(),
        "--templates",
        t.to_str().unwrap(),
        THREE[0],
    ]);
    let err = stderr(&o).replace(t.to_str().unwrap(), "TEMPLATES");
    let left = listing(&out);
    // Not even the folder: it did not exist before.
    assert!(!out.exists(), "{} was made", out.display());
    let _ = std::fs::remove_dir_all(&d);
    (code(&o), err, left)
}

#[test]
fn an_undefined_variable_is_a_located_error_and_nothing_is_written() {
    let (code, err, left) = broken_template(
        "undefined",
        "scenario.md.j2",
        "# {{ report.name }}\n\nEffects: {{ report.totals.efects }}\n",
    );
    assert_eq!(code, 3);
    assert!(left.is_empty(), "wrote {left:?}");
    insta::assert_snapshot!("template_undefined", err);
}

#[test]
fn a_template_that_builds_gigabytes_stops_at_the_size_limit_and_nothing_is_written() {
    // Few steps, gigabytes of text: stopped by the size limit (256 MiB).
    let (code, err, left) = broken_template(
        "size",
        "scenario.md.j2",
        "{% set big = \"x\" * 1000000 %}{% for i in range(100000) %}{{ big }}{% endfor %}\n",
    );
    assert_eq!(code, 3);
    assert!(left.is_empty(), "wrote {left:?}");
    assert!(
        err.contains("the template scenario.md.j2 wrote more than 256 MiB; rendering stopped"),
        "{err}"
    );
}

#[test]
fn a_template_syntax_error_is_located_before_anything_runs() {
    let (code, err, left) = broken_template(
        "syntax",
        "index.html.j2",
        "<ul>\n{% for s in batch.scenarios %}\n<li>{{ s.name }</li>\n{% endfor %}\n</ul>\n",
    );
    assert_eq!(code, 3);
    assert!(left.is_empty());
    insta::assert_snapshot!("template_syntax", err);
}

#[test]
fn html_is_escaped_and_the_embedded_data_cannot_close_its_script() {
    let d = scratch("escape");
    let text = std::fs::read_to_string(THREE[0])
        .unwrap()
        .replacen(
            "name = \"A dead-letter entry is not proof that nothing happened\"",
            "name = \"<script>alert('name')</script> & co\"",
            1,
        )
        .replacen("id = \"poison\"", "id = \"</script><b>poison\"", 1)
        .replacen(
            "description = \"\"\"\n",
            "description = \"\"\"\n<script>alert('description')</script> <img src=x onerror=alert(1)>\n\n",
            1,
        )
        .replace(
            "[expect.message.poison]",
            "[expect.message.\"</script><b>poison\"]",
        );
    let file = d.join("hostile.toml");
    std::fs::write(&file, text).unwrap();
    let out = d.join("out");
    let o = run(&["--report", out.to_str().unwrap(), file.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let html = std::fs::read_to_string(out.join("hostile.html")).unwrap();
    assert!(html.contains("&lt;script&gt;alert(&#x27;name&#x27;)&lt;&#x2f;script&gt; &amp; co"));
    // The data, the page's script, the packed run, the trainer's tools
    // (notes, exports: shared with the dataflow page) and the script every
    // page shares (tables that scroll take focus).
    assert_eq!(
        html.matches("<script").count(),
        5,
        "only the report's own scripts"
    );
    assert_eq!(html.matches("</script>").count(), 5);
    assert!(!html.contains("<b>poison"));
    assert!(
        !html.contains("<img"),
        "raw HTML in the description is text"
    );
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn html_is_self_contained_and_large_runs_get_the_aggregate_view() {
    let d = scratch("aggregate");
    let o = report(
        &d,
        "html",
        &[THREE[2], "scenarios/17-outage-100k-per-hour.toml"],
    );
    assert_eq!(code(&o), 0);
    let small = std::fs::read_to_string(d.join("16-two-operator-steps.html")).unwrap();
    let large = std::fs::read_to_string(d.join("17-outage-100k-per-hour.html")).unwrap();
    for html in [&small, &large] {
        assert!(!html.contains("src=\"http"), "nothing fetched");
        assert!(!html.contains("href=\"http"));
        assert!(html.contains("<svg id=\"timeline-svg\""));
        assert!(html.contains("<script type=\"application/json\" id=\"run-data\">"));
        // Painted once, when the whole page is read: the element the head
        // waits for is the body's last, after every script.
        let head = &html[..html.find("</head>").unwrap()];
        assert!(head.contains("<link rel=\"expect\" href=\"#page-end\" blocking=\"render\">"));
        let end = html
            .find("<div id=\"page-end\" hidden></div>")
            .expect("#page-end");
        assert!(html.rfind("</script>").unwrap() < end);
        assert_eq!(
            html[end..].trim(),
            "<div id=\"page-end\" hidden></div>\n</body>\n</html>"
        );
    }
    assert_eq!(small.matches("<g class=\"lane\"").count(), 4);
    for kind in [
        "delivered",
        "failed",
        "committed",
        "dedup_hit",
        "ack_lost",
        "quarantined",
        "redriven",
    ] {
        assert!(small.contains(&format!("class=\"m m-{kind}\"")), "{kind}");
    }
    assert_eq!(
        small.matches("class=\"inspection\"").count(),
        3,
        "two steps and the legend"
    );
    assert!(!large.contains("<g class=\"lane\""));
    assert!(large.contains("class=\"area area-quarantined\""));
    assert!(large.len() < 300_000, "{} bytes", large.len());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_step_summary_is_appended() {
    let d = scratch("summary");
    let f = d.join("summary.md");
    std::fs::write(&f, "before\n").unwrap();
    for _ in 0..2 {
        let o = run(&[
            "--quiet",
            "--summary-markdown",
            f.to_str().unwrap(),
            THREE[0],
            "tests/failing/wrong-totals.toml",
        ]);
        assert_eq!(code(&o), 1);
    }
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(text.starts_with("before\n"));
    assert_eq!(
        text.matches("### scenario-run: 1 passed, 1 failed").count(),
        2
    );
    insta::assert_snapshot!("step_summary", text.trim_start_matches("before\n"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_bundled_markdown_reports_are_current() {
    let d = scratch("bundled");
    let o = report(&d, "markdown", &["scenarios/*.toml"]);
    assert_eq!(code(&o), 0);
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports");
    for name in listing(&d) {
        let fresh = std::fs::read_to_string(d.join(&name)).unwrap();
        let old = std::fs::read_to_string(committed.join(&name)).unwrap_or_else(|_| {
            panic!("reports/{name} is missing: run the command in docs/contributing.md")
        });
        assert!(
            fresh == old,
            "reports/{name} is out of date: run the command in docs/contributing.md"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_index_lists_invalid_files_and_the_rest_still_get_reports() {
    let d = scratch("invalid");
    let o = report(
        &d,
        "json,markdown",
        &[THREE[0], "tests/bad/unknown-key.toml"],
    );
    assert_eq!(code(&o), 3);
    assert_eq!(
        listing(&d),
        [
            "01-dlq-is-not-proof-nothing-happened.json",
            "01-dlq-is-not-proof-nothing-happened.md",
            "index.json",
            "index.md"
        ]
    );
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["errors"], 1);
    assert_eq!(index["scenarios"][1]["status"], "invalid");
    assert!(
        index["scenarios"][1]["problems"][0]["text"]
            .as_str()
            .unwrap()
            .contains("unknown key `paylod`")
    );
    let md = std::fs::read_to_string(d.join("index.md")).unwrap();
    assert!(md.contains("| `tests/bad/unknown-key.toml` | invalid |"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_failed_scenario_report_explains_each_failure() {
    let d = scratch("failed-report");
    let o = report(&d, "markdown,html", &["tests/failing/wrong-message.toml"]);
    assert_eq!(code(&o), 1);
    let md = std::fs::read_to_string(d.join("wrong-message.md")).unwrap();
    assert!(md.starts_with("[All scenario reports](index.md)\n\n# "));
    assert!(md.contains("**FAILED**"));
    insta::assert_snapshot!("markdown_failed", md);
    let html = std::fs::read_to_string(d.join("wrong-message.html")).unwrap();
    assert!(html.contains("<span class=\"status failed\">FAILED</span>"));
    assert!(html.contains("<pre class=\"problem\">"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn unusable_report_and_template_folders_are_clear_errors() {
    let d = scratch("unusable");
    let file = d.join("not-a-folder");
    std::fs::write(&file, "x").unwrap();
    let o = run(&["--quiet", "--report", file.to_str().unwrap(), THREE[0]]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("is a file, not a folder"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");

    let missing = d.join("no-templates-here");
    let o = run(&[
        "--quiet",
        "--report",
        d.join("out").to_str().unwrap(),
        "--templates",
        missing.to_str().unwrap(),
        THREE[0],
    ]);
    assert_eq!(code(&o), 3);
    assert!(
        stderr(&o).contains("cannot read the templates folder"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("out").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn expiry_and_purge_have_their_marks() {
    let d = scratch("marks");
    let o = report(
        &d,
        "html",
        &[
            "scenarios/07-quarantine-expiry.toml",
            "scenarios/15-purge.toml",
        ],
    );
    assert_eq!(code(&o), 0);
    let expiry = std::fs::read_to_string(d.join("07-quarantine-expiry.html")).unwrap();
    let purge = std::fs::read_to_string(d.join("15-purge.html")).unwrap();
    // One mark per event plus the legend's.
    assert!(expiry.matches("class=\"m m-expired\"").count() >= 2);
    assert!(purge.matches("class=\"m m-purged\"").count() >= 2);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn overlapping_deliveries_claims_and_canaries_are_drawn() {
    let d = scratch("guarantees");
    let o = report(
        &d,
        "html",
        &[
            "scenarios/31-crash-after-the-write.toml",
            "scenarios/32-handler-slower-than-the-visibility-timeout.toml",
            "scenarios/33-canary-redrive.toml",
            "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
        ],
    );
    assert_eq!(code(&o), 0);
    let read = |name: &str| std::fs::read_to_string(d.join(name)).unwrap();
    let slow = read("32-handler-slower-than-the-visibility-timeout.html");
    // Three deliveries, each overlapping the next: two tracks.
    assert_eq!(
        slow.matches("<title>invoice-42: a delivery in flight")
            .count(),
        3
    );
    assert!(slow.contains("a delivery in flight from 0s to 45s"));
    assert!(slow.contains("a delivery in flight from 30s to 1m15s"));
    let crash = read("31-crash-after-the-write.html");
    // The crashed claim, five contentions' nothing, the second claim, DONE.
    assert_eq!(crash.matches("  payment-7: claimed key").count(), 2);
    assert_eq!(
        crash
            .matches("<title>1h7s  payment-7: DONE recorded")
            .count(),
        1
    );
    let canary = read("33-canary-redrive.html");
    assert_eq!(
        canary
            .matches("<rect class=\"canary canary-failed\" x=")
            .count(),
        1
    );
    assert_eq!(
        canary
            .matches("<rect class=\"canary canary-passed\" x=")
            .count(),
        1
    );
    // A file without sections 17-22 draws none of it.
    let plain = read("01-dlq-is-not-proof-nothing-happened.html");
    assert!(!plain.contains("span-delivery") && !plain.contains("canary"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn reports_are_byte_identical_across_runs_and_job_counts() {
    let d = scratch("identical");
    for (jobs, dir) in [("1", "a"), ("2", "b")] {
        let out = d.join(dir);
        let o = run(&[
            "--quiet",
            "-j",
            jobs,
            "--report",
            out.to_str().unwrap(),
            "scenarios/1*.toml",
        ]);
        assert_eq!(code(&o), 0);
    }
    let names = listing(&d.join("a"));
    // Scenarios 10 to 19 in three formats, and the indexes.
    assert_eq!(names.len(), 3 * 11);
    assert_eq!(names, listing(&d.join("b")));
    for n in names {
        let a = std::fs::read(d.join("a").join(&n)).unwrap();
        let b = std::fs::read(d.join("b").join(&n)).unwrap();
        assert!(a == b, "{n} differs between runs");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_report_options_are_clear_errors() {
    let d = scratch("bad-options");
    let o = run(&[
        "--report",
        d.to_str().unwrap(),
        "--report-format",
        "markdown,pdf",
        THREE[0],
    ]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(err.contains("invalid value 'pdf'"), "{err}");
    assert!(err.contains("markdown, html, json"), "{err}");
    assert!(listing(&d).is_empty());

    let o = run(&[
        "--quiet",
        "--summary-markdown",
        "/nonexistent-folder/summary.md",
        THREE[0],
    ]);
    assert_eq!(code(&o), 5);
    assert!(
        stderr(&o).contains("cannot open /nonexistent-folder/summary.md"),
        "{}",
        stderr(&o)
    );

    let t = d.join("templates");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("scenario.md.j2"), b"caf\xe9 {{ report.name }}").unwrap();
    let o = run(&[
        "--report",
        d.join("out").to_str().unwrap(),
        "--templates",
        t.to_str().unwrap(),
        THREE[0],
    ]);
    assert_eq!(code(&o), 3);
    assert!(stderr(&o).contains("scenario.md.j2"), "{}", stderr(&o));
    assert!(!d.join("out").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn ids_with_pipes_and_backticks_keep_the_markdown_tables_whole() {
    let d = scratch("md-cells");
    let file = d.join("cells.toml");
    std::fs::write(
        &file,
        "[scenario]\nname = \"A | B\"\n[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[message]]\nid = \"a|b\"\nkey = \"k`1\"\n",
    )
    .unwrap();
    let out = d.join("out");
    let o = report(&out, "markdown", &[file.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("cells.md")).unwrap();
    assert!(md.contains("\n# A \\| B\n"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| `a\\|b` |"))
        .unwrap_or_else(|| panic!("no snapshot row: {md}"));
    assert!(row.contains("| ``k`1`` |"), "{row}");
    // Unescaped pipes: one per column boundary of the snapshot table.
    let header = md.lines().find(|l| l.starts_with("| id |")).unwrap();
    let bars = |l: &str| l.replace("\\|", "").matches('|').count();
    assert_eq!(bars(row), bars(header), "{row}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_json_report_alone_is_the_one_written_beside_the_others() {
    // Alone, the JSON report plays the run again for its transitions
    // instead of keeping them (a template reads them more than once, so
    // the three formats together keep them): the same file.
    let d = scratch("json-alone");
    let (alone, all) = (d.join("alone"), d.join("all"));
    let files = [
        THREE[0],
        THREE[1],
        "scenarios/27-every-dlq-gets-an-alarm.toml",
    ];
    for (dir, formats) in [(&alone, "json"), (&all, "markdown,html,json")] {
        let o = report(dir, formats, &files);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let mut compared = 0;
    for file in listing(&alone) {
        let text = |dir: &Path| std::fs::read_to_string(dir.join(&file)).unwrap();
        assert_eq!(text(&alone), text(&all), "{file}");
        compared += 1;
    }
    assert_eq!(compared, 4, "three reports and the index");
    let doc = std::fs::read_to_string(alone.join(format!("{}.json", stem(THREE[0])))).unwrap();
    assert!(doc.contains("\"transitions_recorded\": true"));
    assert!(doc.contains("\"kind\": \"delivered\""));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn markdown_reports_show_raw_html_from_the_file_as_text() {
    // A name and a summary carrying HTML: the Markdown index and report
    // show them as text (entities), as the HTML report does.
    let d = scratch("md-html");
    let file = d.join("hostile.toml");
    let text = std::fs::read_to_string(THREE[0]).unwrap();
    let text = text.replacen(
        "[scenario]\n",
        "[scenario]\nname = \"<script>alert(1)</script> a|b & c\"\nsummary = \"<img src=x onerror=alert(2)> *kept*\"\n",
        1,
    );
    let text = text
        .lines()
        .filter(|l| !(l.starts_with("name =") || l.starts_with("summary =")) || l.contains('<'))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&file, text).unwrap();
    let dir = d.join("out");
    let o = report(&dir, "markdown", &[file.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for page in ["index.md", "hostile.md"] {
        let md = std::fs::read_to_string(dir.join(page)).unwrap();
        assert!(!md.contains("<script>"), "{page}:\n{md}");
        assert!(!md.contains("<img"), "{page}:\n{md}");
        assert!(
            md.contains("&lt;script&gt;alert(1)&lt;/script&gt; a\\|b &amp; c"),
            "{page}:\n{md}"
        );
    }
    let report = std::fs::read_to_string(dir.join("hostile.md")).unwrap();
    // A summary stays Markdown: every `<` outside code is written `&lt;`.
    assert!(
        report.contains("*&lt;img src=x onerror=alert(2)> *kept**"),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_template_that_doubles_a_string_stops_at_its_work_budget() {
    // 40 doublings would make a 16 TiB string: the work budget counts the
    // bytes a template makes, so it stops within a GiB, located, exit 2.
    let d = scratch("doubling");
    let templates = d.join("templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(
        templates.join("scenario.md.j2"),
        "{% set ns = namespace(s=\"xxxxxxxxxxxxxxxx\") %}{% for i in range(40) %}\
         {% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}\n",
    )
    .unwrap();
    let out = d.join("out");
    let o = run(&[
        "--quiet",
        "--color",
        "never",
        "--report",
        out.to_str().unwrap(),
        "--report-format",
        "markdown",
        "--templates",
        templates.to_str().unwrap(),
        THREE[0],
    ]);
    assert_eq!(code(&o), 3);
    assert!(
        stderr(&o).contains("the template did too much work"),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("index.md").exists(), "nothing written");
}

#[test]
fn the_html_report_shows_a_log_s_restart_and_each_sink_s_missing_writes() {
    let d = scratch("log-html");
    let file = "scenarios/43-stale-checkpoint-duplicates-and-gaps.toml";
    let o = report(&d, "html", &[file]);
    assert_eq!(code(&o), 0);
    let html = std::fs::read_to_string(d.join(format!("{}.html", stem(file)))).unwrap();
    assert!(html.contains("<section id=\"log\">"));
    // The stale resume goes back 1,200 records on partition 0 and the
    // offset bug 340 past the position on partition 1.
    assert!(html.contains("0: 20021 &rarr; 18821 (processed again)"));
    assert!(html.contains("1: 3400 &rarr; 3740 (passed over)"));
    // append_table: value, 1,200 visible duplicates, 340 missing, 2 at most.
    assert!(html.contains(
        "<td class=\"num\">45021</td><td class=\"num\">1200</td><td class=\"num\">340</td><td class=\"num\">2</td>"
    ));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn every_time_total_is_a_duration_in_both_reports() {
    // Scenario 49's two-phase locks: 4m300ms held in all, 2m the longest.
    let d = scratch("time-totals");
    let file = "scenarios/49-two-phase-coordinator-crash-holds-locks.toml";
    for format in ["markdown", "html"] {
        let o = report(&d, format, &[file]);
        assert_eq!(code(&o), 0);
    }
    let md = std::fs::read_to_string(d.join(format!("{}.md", stem(file)))).unwrap();
    assert!(md.contains("| `lock_held` | 4m300ms |"), "{md}");
    assert!(md.contains("| `max_lock` | 2m |"), "{md}");
    assert!(md.contains("| `partial_visible` | 0s |"), "{md}");
    let html = std::fs::read_to_string(d.join(format!("{}.html", stem(file)))).unwrap();
    assert!(html.contains("<code>lock_held</code></th><td class=\"num\">4m300ms</td>"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_sweep_over_the_write_strategy_compares_what_each_sink_holds() {
    let d = scratch("strategies");
    let file = "scenarios/51-one-fan-out-four-strategies.toml";
    for format in ["markdown", "html", "json"] {
        let o = report(&d, format, &[file]);
        assert_eq!(code(&o), 0);
    }
    let md = std::fs::read_to_string(d.join(format!("{}.md", stem(file)))).unwrap();
    assert!(md.contains("## Sinks at each point"), "{md}");
    // direct leaves the counter ahead of the stores; the saga takes it back.
    assert!(
        md.contains("| \"direct\" | metrics | increment | 8 | 0 | 0 | 1 | - |"),
        "{md}"
    );
    assert!(
        md.contains("| \"outbox\" | lake | upsert | 8 | 0 | 0 | 1 | 0s |"),
        "{md}"
    );
    assert!(
        md.contains("| \"saga\" | metrics | increment | 6 | 0 | 0 | 1 | - |"),
        "{md}"
    );
    let html = std::fs::read_to_string(d.join(format!("{}.html", stem(file)))).unwrap();
    assert!(html.contains(
        "<td>&quot;two_phase&quot;</td><td>olap</td><td>upsert</td><td>6</td><td>0</td><td>2</td>"
    ));
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(format!("{}.json", stem(file)))).unwrap(),
    )
    .unwrap();
    assert_eq!(json["points"][3]["sinks"][0]["value"], 6);
    assert_eq!(json["points"][1]["sinks"][1]["missing"], 2);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_fan_out_report_draws_its_traced_writes_and_lock_lanes() {
    let d = scratch("fan-out-writes");
    let file = "scenarios/49-two-phase-coordinator-crash-holds-locks.toml";
    for format in ["markdown", "html"] {
        assert_eq!(code(&report(&d, format, &[file])), 0);
    }
    let md = std::fs::read_to_string(d.join(format!("{}.md", stem(file)))).unwrap();
    // pay-1 crashed after its prepares; pay-2 and pay-3 waited behind it.
    assert_eq!(md.matches("sequenceDiagram").count(), 3);
    assert!(
        md.contains("    Note over W: crashes after every prepare, recovers and decides at 2m\n")
    );
    assert!(md.contains("    Note over W: waits for the lock on its key until 2m50ms\n"));
    assert!(md.contains("| ledger | pay-1 | 0s | 2m | 2m (the coordinator crashed) |"));
    assert!(md.contains("| search | pay-4 | 30s | 30s50ms | 50ms |"));
    let html = std::fs::read_to_string(d.join(format!("{}.html", stem(file)))).unwrap();
    assert!(html.contains("<section id=\"writes\">"));
    assert_eq!(html.matches("<svg class=\"sequence\"").count(), 3);
    // 8 locks, the 2 of the crash in red, over 0s to 2m100ms.
    assert_eq!(html.matches("<rect class=\"lock").count(), 8);
    assert_eq!(html.matches("<rect class=\"lock lock-crashed\"").count(), 2);
    assert!(html.contains(">2m100ms</text>"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_log_report_draws_offset_lanes_restarts_and_lag() {
    let d = scratch("log-lanes");
    let file = "scenarios/43-stale-checkpoint-duplicates-and-gaps.toml";
    for format in ["html", "json"] {
        assert_eq!(code(&report(&d, format, &[file])), 0);
    }
    let html = std::fs::read_to_string(d.join(format!("{}.html", stem(file)))).unwrap();
    assert!(html.contains("<svg class=\"log-lanes\""));
    // Two partitions: a position and a log-end line each, and the lag.
    assert_eq!(html.matches("<polyline class=\"log-position\"").count(), 2);
    assert_eq!(html.matches("<polyline class=\"log-end\"").count(), 2);
    assert_eq!(html.matches("<polyline class=\"log-lag\"").count(), 1);
    // The stale resume goes back on partition 0 (processed again) and the
    // offset bug passes over records on partition 1.
    assert!(html.contains("restart 1 at 3h15m: position 20021 -&gt; 18821, 1200 processed again"));
    assert!(html.contains("restart 1 at 3h15m: position 3400 -&gt; 3740, 340 passed over"));
    assert_eq!(html.matches("class=\"band band-reprocessed\"").count(), 1);
    assert_eq!(html.matches("class=\"band band-skipped\"").count(), 1);
    assert!(html.contains("<code>max_lag</code> is 1606"));
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(format!("{}.json", stem(file)))).unwrap(),
    )
    .unwrap();
    let samples = json["log"]["samples"].as_array().unwrap();
    assert!((256..512).contains(&samples.len()), "{}", samples.len());
    assert_eq!(samples[0]["positions"].as_array().unwrap().len(), 2);
    // The last sample is the run's end, every record done or skipped.
    let last = samples.last().unwrap();
    assert_eq!(last["at"], json["totals"]["end_time"]);
    assert_eq!(last["ends"], serde_json::json!([36960, 7201]));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_html_index_shows_each_kind_of_file_with_its_own_figures() {
    let d = scratch("html-index");
    let dir = d.join("out");
    let o = report(
        &dir,
        "html",
        &[
            THREE[0],
            "scenarios/37-chandy-lamport-in-flight.toml",
            "scenarios/54-how-long-a-snapshot-waits.toml",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let row = |report: &str| -> String {
        let at = index.find(&format!("href=\"{report}.html\"")).unwrap();
        index[at..at + index[at..].find("</tr>").unwrap()].to_string()
    };
    // A queue scenario: its totals (4 messages, 2 effects at the end).
    let queue = row("01-dlq-is-not-proof-nothing-happened");
    assert!(
        queue.contains("<td data-label=\"messages\" class=\"num\">4</td>"),
        "{queue}"
    );
    assert!(queue.contains("18 of 18"), "{queue}");
    // A dataflow: its expectations, no queue figures.
    let flow = row("37-chandy-lamport-in-flight");
    assert!(!flow.contains("points"), "{flow}");
    assert!(flow.contains("class=\"num\">-</td>"), "{flow}");
    // A sweep: its points.
    let sweep = row("54-how-long-a-snapshot-waits");
    assert!(sweep.contains("9 of 9 points"), "{sweep}");
}

#[test]
fn the_timeline_legend_lists_operator_inspections_only_where_there_are_some() {
    let d = scratch("legend");
    let dir = d.join("out");
    let without = "scenarios/22-retry-storm-no-jitter.toml";
    let o = report(&dir, "html", &[THREE[0], without]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let legend = |page: &str| -> String {
        let html = std::fs::read_to_string(dir.join(format!("{}.html", stem(page)))).unwrap();
        common::legend(&html).to_string()
    };
    assert!(legend(THREE[0]).contains("operator inspection"));
    assert!(!legend(without).contains("operator inspection"));
}
