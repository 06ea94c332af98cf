//! The HTML report in a real browser: headless Chromium renders a generated
//! report with a `#t=` fragment, and the rendered page must hold the
//! timeline, the tables, and the snapshot as of that modeled time, row for
//! row what the engine gives when stopped at that time.
//!
//! Needs Debian's `chromium` and Mermaid (`.ci/run` installs both), so
//! both tests are ignored by a plain `cargo test`, which lists them as
//! ignored with the reason. `cargo test --locked --test browser --
//! --ignored` runs them; a missing tool then fails under `CI=true` and is
//! skipped, with a message, elsewhere.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{available, chromium, code, page_cells, report, scratch, stderr};
use scenario_run::engine::{Recorder, run_until};
use scenario_run::words::line::row;

const SCENARIO: &str = "scenarios/16-two-operator-steps.toml";
const LARGE: &str = "scenarios/17-outage-100k-per-hour.toml";

/// The page as Chromium renders it, after its scripts ran.
fn dump_dom(browser: &Path, profile: &Path, url: &str) -> String {
    dump_dom_with(browser, profile, url, &[])
}

/// The same, letting asynchronous scripts finish (10 s of virtual time).
fn dump_dom_waiting(browser: &Path, profile: &Path, url: &str) -> String {
    dump_dom_with(browser, profile, url, &["--virtual-time-budget=10000"])
}

fn dump_dom_with(browser: &Path, profile: &Path, url: &str, extra: &[&str]) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .args(["--dump-dom", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut out = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).map(|_| s)
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().expect("reader").expect("UTF-8 DOM")
}

/// The text of each cell of each body row of the table with this id.
fn table_rows(dom: &str, id: &str) -> Vec<Vec<String>> {
    let start = dom
        .find(&format!("<table id=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id}"));
    let table = &dom[start..start + dom[start..].find("</table>").unwrap()];
    let body = &table[table.find("<tbody>").unwrap()..];
    body.split("<tr>")
        .skip(1)
        .map(|tr| {
            tr.split("<td")
                .skip(1)
                .map(|td| {
                    let inner = &td[td.find('>').unwrap() + 1..td.find("</td>").unwrap()];
                    strip_tags(inner)
                })
                .collect()
        })
        .collect()
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&").trim().to_string()
}

/// The snapshot rows the engine gives when stopped at `t`.
fn engine_rows(t: u64) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(SCENARIO).unwrap();
    let (s, _) = scenario_run::scenario::load_str(SCENARIO, &text).unwrap();
    let outcome = run_until(&s, Recorder::Off, t).unwrap();
    (0..outcome.messages.len())
        .map(|m| page_cells(row(&s, &outcome, m)))
        .collect()
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test browser -- --ignored"]
fn the_html_report_renders_and_scrubs_to_the_fragment_time() {
    let Some(browser) = available(chromium(), "chromium (apt-get install chromium)") else {
        return;
    };
    let d = scratch("browser");
    let out = d.join("out");
    let o = report(&out, "html", &[SCENARIO, LARGE]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let page = out.join("16-two-operator-steps.html");
    let url = |fragment: &str| format!("file://{}#{fragment}", page.display());

    // Mid-run, as milliseconds: step 1 has just redriven everything.
    let dom = dump_dom(&browser, &d.join("profile"), &url("t=40000"));
    assert!(dom.contains("<svg id=\"timeline-svg\""), "timeline missing");
    assert_eq!(dom.matches("<g class=\"lane\"").count(), 4);
    assert!(
        dom.contains("Snapshot as of 40s (40000 ms)"),
        "caption not scrubbed"
    );
    assert!(dom.contains("<output id=\"scrub-time\" for=\"scrub\">40s</output>"));
    let rows = table_rows(&dom, "snapshot");
    assert_eq!(rows, engine_rows(40_000));
    assert_eq!(rows[1][2], "acked", "transient recovered in cycle 2");
    // Redriven at 40s, its next delivery not yet made: waiting, and
    // the page says for what.
    assert_eq!(rows[2][2], "waiting for retry");
    // The other tables render too.
    assert!(dom.contains("<section id=\"expectations\">"));
    assert!(dom.contains("<section id=\"totals\">"));
    assert!(dom.contains("<section id=\"ledger\">"));

    // As a duration, in quarantine: the age is counted to that time.
    let dom = dump_dom(&browser, &d.join("profile"), &url("t=35s"));
    let rows = table_rows(&dom, "snapshot");
    assert_eq!(rows, engine_rows(35_000));
    assert_eq!(rows[2][2], "quarantined");
    assert_eq!(rows[2][10], "25s");

    // Without a fragment: the final snapshot, as rendered without script.
    let dom = dump_dom(
        &browser,
        &d.join("profile"),
        &format!("file://{}", page.display()),
    );
    assert!(dom.contains("Final snapshot, as of 1m."));
    let text = std::fs::read_to_string(SCENARIO).unwrap();
    let (s, _) = scenario_run::scenario::load_str(SCENARIO, &text).unwrap();
    let end = scenario_run::engine::run(&s, Recorder::Off)
        .unwrap()
        .totals
        .end_time;
    assert_eq!(table_rows(&dom, "snapshot"), engine_rows(end));

    // The aggregate view scrubs the census: a time between two samples
    // shows the earlier sample, at its own time, with exact counts.
    let large = out.join("17-outage-100k-per-hour.html");
    let dom = dump_dom(
        &browser,
        &d.join("profile"),
        &format!("file://{}#t=2700005", large.display()),
    );
    assert!(!dom.contains("<g class=\"lane\""));
    assert!(
        dom.contains("Messages per state as of 45m (2700000 ms)"),
        "caption not scrubbed to the sample"
    );
    let text = std::fs::read_to_string(LARGE).unwrap();
    let (s, _) = scenario_run::scenario::load_str(LARGE, &text).unwrap();
    let at = run_until(&s, Recorder::Off, 2_700_000).unwrap();
    // The waiting are told apart: a retry due later, or not arrived.
    let count = |state: &str| {
        at.messages
            .iter()
            .filter(|m| match state {
                "waiting" => m.state.as_str() == state && m.has_arrived(),
                "not_arrived" => !m.has_arrived(),
                _ => m.state.as_str() == state,
            })
            .count()
            .to_string()
    };
    let cells = &table_rows(&dom, "counts")[0];
    let order = [
        "acked",
        "expired",
        "purged",
        "quarantined",
        "in_flight",
        "ready",
        "waiting",
        "not_arrived",
    ];
    let expected: Vec<String> = order.iter().map(|s| count(s)).collect();
    assert_eq!(cells, &expected);
    assert_eq!(cells[3], "12472");
    let _ = std::fs::remove_dir_all(&d);
}

fn mermaid_js() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SCENARIO_RUN_MERMAID_JS") {
        return Some(PathBuf::from(p));
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/mermaid/node_modules/mermaid/dist/mermaid.min.js");
    p.is_file().then_some(p)
}

fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The Markdown reports' Mermaid diagrams parse and render with Mermaid
/// itself (what GitHub uses), in the browser.
#[test]
#[ignore = "needs chromium and Mermaid; .ci/run installs them and runs: cargo test --locked --test browser -- --ignored"]
fn every_mermaid_diagram_parses_and_renders() {
    let Some(browser) = available(chromium(), "chromium (apt-get install chromium)") else {
        return;
    };
    let mermaid = mermaid_js();
    let Some(mermaid) = available(
        mermaid,
        "target/mermaid (npm install --prefix target/mermaid mermaid@11.17.2)",
    ) else {
        return;
    };
    let d = scratch("mermaid");
    let out = d.join("out");
    let o = report(
        &out,
        "markdown",
        &["scenarios/*.toml", "tests/failing/wrong-totals.toml"],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let mut diagrams = Vec::new();
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // Every diagram of the file: the flow, then a fan-out's sequence
        // diagrams, named file#N from the second on.
        for (n, (start, _)) in text.match_indices("```mermaid\n").enumerate() {
            let body = &text[start + 11..];
            let body = &body[..body.find("```").unwrap()];
            let name = if n == 0 {
                name.clone()
            } else {
                format!("{name}#{n}")
            };
            diagrams.push((name, body.to_string()));
        }
    }
    diagrams.sort();
    // One per bundled scenario (a sweep's report is its table of points),
    // and the index's.
    let bundled = std::fs::read_dir("scenarios")
        .unwrap()
        .filter(|e| {
            let path = e.as_ref().unwrap().path();
            !path.is_dir()
                && !std::fs::read_to_string(path)
                    .unwrap()
                    .contains("\n[sweep]\n")
        })
        .count();
    let files = diagrams.iter().filter(|(n, _)| !n.contains('#')).count();
    assert_eq!(files, bundled + 1);
    // The fan-out files draw their traced writes: 3 in 49, 10 in 50, 5 in
    // each of 52 and 53 (the first write and the 4 declined cards), 1 in
    // 67 (the write left in doubt), 2 in each of 68 and 69 (the first
    // write and the one compensated), 1 in each of 70, 71 and 72 (their
    // first write).
    let sequences = diagrams
        .iter()
        .filter(|(_, b)| b.starts_with("sequenceDiagram"))
        .count();
    assert_eq!(sequences, 31);
    let mut page = String::from("<!doctype html><html><body>\n");
    for (name, body) in &diagrams {
        page.push_str(&format!(
            "<pre class=\"mermaid\" data-name=\"{name}\">{}</pre>\n",
            html_text(body)
        ));
    }
    page.push_str(&format!(
        "<script src=\"file://{}\"></script>\n<script>\n\
         mermaid.initialize({{ startOnLoad: false }});\n\
         (async function () {{\n\
           var lines = [];\n\
           for (const el of document.querySelectorAll('pre.mermaid')) {{\n\
             try {{ await mermaid.parse(el.textContent); lines.push(el.dataset.name + ' ok'); }}\n\
             catch (e) {{ lines.push(el.dataset.name + ' ERROR ' + e.message); }}\n\
           }}\n\
           try {{ await mermaid.run(); }} catch (e) {{ lines.push('run ERROR ' + e.message); }}\n\
           lines.push('svg ' + document.querySelectorAll('pre.mermaid svg').length);\n\
           var r = document.createElement('pre'); r.id = 'result'; r.textContent = lines.join('\\n');\n\
           document.body.appendChild(r);\n\
         }})();\n</script></body></html>\n",
        mermaid.display()
    ));
    let file = d.join("mermaid.html");
    std::fs::write(&file, page).unwrap();
    let dom = dump_dom_waiting(
        &browser,
        &d.join("profile"),
        &format!("file://{}", file.display()),
    );
    let start = dom.find("<pre id=\"result\">").expect("the check ran");
    let result = &dom[start + 17..];
    let result = &result[..result.find("</pre>").unwrap()];
    let lines: Vec<&str> = result.lines().collect();
    for (name, _) in &diagrams {
        assert!(
            lines.contains(&format!("{name} ok").as_str()),
            "{name}: {result}"
        );
    }
    assert_eq!(
        lines.last(),
        Some(&format!("svg {}", diagrams.len()).as_str())
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test browser -- --ignored"]
fn the_dataflow_report_draws_the_cut_and_scrubs_to_the_fragment_time() {
    let Some(browser) = available(chromium(), "chromium (apt-get install chromium)") else {
        return;
    };
    let d = scratch("dataflow-page");
    let out = d.join("out");
    let o = report(
        &out,
        "html",
        &["scenarios/37-chandy-lamport-in-flight.toml"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let page = out.join("37-chandy-lamport-in-flight.html");
    let dom = dump_dom(
        &browser,
        &d.join("profile"),
        &format!("file://{}#t=3", page.display()),
    );
    // One line per node, the 7 recorded in flight, A's marker lines, the cut
    // through the three recording instants.
    assert!(dom.contains("<svg id=\"dataflow-svg\""), "no diagram");
    assert_eq!(dom.matches("<g class=\"node-lane\">").count(), 3);
    assert_eq!(dom.matches("class=\"send recorded\"").count(), 1);
    assert_eq!(dom.matches("class=\"marker\"").count(), 3);
    assert_eq!(dom.matches("<polyline").count(), 1);
    assert_eq!(dom.matches("class=\"record\"").count(), 3);
    // Scrubbed to 3ms by the fragment: the happenings after it are greyed,
    // the rest not; the cursor sits at 3/4 of the axis.
    assert!(
        dom.contains("<output id=\"scrub-at\">3ms</output>"),
        "scrubber not at 3ms"
    );
    let future = dom.matches("class=\"future\"").count();
    // At 4ms: B's marker arrives, C completes, the snapshot completes.
    assert_eq!(future, 3, "rows after 3ms");
    let rows = dom.matches("<tr data-at=").count();
    assert_eq!(rows, 16);
    let cursor = &dom[dom.find("id=\"dataflow-cursor\"").unwrap()..];
    let x1: f64 = cursor
        .split("x1=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (x1 - (90.0 + 0.75 * (880.0 - 90.0))).abs() < 0.5,
        "cursor at {x1}"
    );
}

/// A log's offset lanes follow the playback: opened at a time, the
/// orange line stands at that time of the chart's axis.
#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test browser -- --ignored"]
fn the_log_lanes_show_the_playback_time() {
    let Some(browser) = available(chromium(), "chromium (apt-get install chromium)") else {
        return;
    };
    let d = scratch("browser-log");
    let out = d.join("out");
    let log = "scenarios/43-stale-checkpoint-duplicates-and-gaps.toml";
    let o = report(&out, "html", &[log]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let page = out.join("43-stale-checkpoint-duplicates-and-gaps.html");
    let dom = dump_dom_waiting(
        &browser,
        &d.join("profile"),
        &format!("file://{}#t=3h20m", page.display()),
    );
    let start = dom
        .find("<line id=\"log-cursor\"")
        .expect("the log's cursor");
    let line = &dom[start..start + dom[start..].find('>').unwrap()];
    let attr = |name: &str| -> f64 {
        let at = line.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        line[at..at + line[at..].find('"').unwrap()]
            .parse()
            .unwrap()
    };
    assert!(line.contains("visibility=\"visible\""), "{line}");
    let (left, right, end) = (attr("data-left"), attr("data-right"), attr("data-end"));
    let want = left + (right - left) * 12_000_000.0 / end;
    assert!((attr("x1") - want).abs() < 0.01, "{line}");
}

/// The text of the live counter `name` (`data-counter="name"`), or of
/// alarm `k` (`data-alarm="k"`), as the page shows it.
fn live_value(dom: &str, attr: &str) -> String {
    let start = dom
        .find(&format!("{attr}\""))
        .unwrap_or_else(|| panic!("no {attr}"));
    let after = &dom[start..];
    let open = after.find('>').unwrap() + 1;
    strip_tags(&after[open..after.find("</dd>").unwrap()])
}

/// How many messages the pane with this id says it holds.
fn pane_count(dom: &str, id: &str) -> u64 {
    let pane = &dom[dom.find(&format!("id=\"{id}\"")).unwrap()..];
    let count = &pane[pane.find("data-pane-count").unwrap()..];
    let text = &count[count.find('>').unwrap() + 1..count.find('<').unwrap()];
    text.parse().unwrap()
}

/// At several moments of five bundled runs (a small queue, the retry
/// storm past its first listed steps, a Poisson hour drawn as an
/// aggregate, a run with four alarms, a RabbitMQ reject with its
/// `x-death`), the page opened at that moment shows the counters and both
/// panes of the run stopped there, retries' due times included.
#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test browser -- --ignored"]
fn the_live_counters_and_panes_are_the_run_stopped_at_that_moment() {
    use scenario_run::duration::Dur;
    use scenario_run::report::live;
    let Some(browser) = available(chromium(), "chromium (apt-get install chromium)") else {
        return;
    };
    let d = scratch("browser-live");
    let out = d.join("out");
    let cases: [(&str, &[u64]); 5] = [
        (
            "01-dlq-is-not-proof-nothing-happened",
            &[0, 5_000, 10_000, 40_000],
        ),
        ("22-retry-storm-no-jitter", &[1_000, 3_000, 7_000]),
        ("26-poisson-hour-poison-mix", &[600_000, 1_800_000]),
        ("27-every-dlq-gets-an-alarm", &[10_000, 20_000, 45_000]),
        ("conformance/rabbitmq-03-nack-versus-reject", &[0]),
    ];
    let files: Vec<String> = cases
        .iter()
        .map(|(stem, _)| format!("scenarios/{stem}.toml"))
        .collect();
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    let o = report(&out, "html", &names);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for ((stem, times), file) in cases.iter().zip(&files) {
        let text = std::fs::read_to_string(file).unwrap();
        let (s, _) = scenario_run::scenario::load_str(file, &text).unwrap();
        let page = out.join(format!("{}.html", stem.rsplit('/').next().unwrap()));
        for &t in *times {
            let dom = dump_dom_waiting(
                &browser,
                &d.join("profile"),
                &format!("file://{}#t={t}", page.display()),
            );
            let at = run_until(&s, Recorder::All, t).unwrap();
            let c = live::counters(&s, &at);
            let shown = ["acked", "deliveries", "retry_delay_paid", "dlq_depth"]
                .map(|n| live_value(&dom, &format!("data-counter=\"{n}")));
            let want = [
                c.acked.to_string(),
                c.deliveries.to_string(),
                Dur(c.retry_delay_paid).to_string(),
                c.dlq_depth.to_string(),
            ];
            assert_eq!(shown, want, "{stem} at {t}");
            for (k, (name, firing)) in c.alarms.iter().enumerate() {
                let state = live_value(&dom, &format!("data-alarm=\"{k}"));
                let want = if *firing { "firing" } else { "quiet" };
                assert_eq!(state, want, "{stem} at {t}: alarm {name}");
            }
            // An aggregate page keeps a sample's first rows.
            let aggregate = !dom.contains("<g class=\"lane\"");
            let kept = if aggregate {
                scenario_run::engine::PANE_SAMPLE_ROWS
            } else {
                live::PANE_ROWS
            };
            let (waiting, count) = live::source_pane(&at);
            let rows = table_rows(&dom, "pane-source-table");
            let want: Vec<Vec<String>> = (waiting.iter().take(kept))
                .map(|w| {
                    vec![
                        s.message_id(w.m).into_owned(),
                        if w.ready {
                            "ready"
                        } else {
                            "waiting for retry"
                        }
                        .to_string(),
                        w.total_receives.to_string(),
                        w.due.map_or("-".into(), |d| Dur(d).to_string()),
                    ]
                })
                .collect();
            assert_eq!(rows, want, "{stem} at {t}: the source");
            assert_eq!(pane_count(&dom, "pane-source"), count, "{stem} at {t}");
            let (quarantined, count) = live::quarantine_pane(&s, &at);
            let rows = table_rows(&dom, "pane-quarantine-table");
            {
                let want: Vec<Vec<String>> = (quarantined.iter().take(kept))
                    .map(|q| {
                        vec![
                            s.message_id(q.m).into_owned(),
                            q.reason.clone().unwrap_or("-".into()),
                            q.total_receives.to_string(),
                            Dur(q.age).to_string(),
                            live::headers(&s, &at, q.m),
                        ]
                    })
                    .collect();
                assert_eq!(rows, want, "{stem} at {t}: the quarantine");
            }
            assert_eq!(pane_count(&dom, "pane-quarantine"), count, "{stem} at {t}");
            assert_eq!(
                c.dlq_depth, count,
                "{stem} at {t}: the DLQ's depth is the quarantine's count"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}
