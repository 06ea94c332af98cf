//! How long a trainer waits in the lab: from changing a value on a
//! bundled scenario's page to the second frame of the page that shows the
//! rerun, measured in headless Chromium (Debian's `chromium`).
//!
//! `cargo bench --bench repaint` starts `scenario-run lab` on every bundled
//! scenario, opens each page, changes one of its values five times (each
//! time a value not run before, so the lab's cache never answers) and
//! prints, per page, the median of: the whole wait, the server's part
//! (the request until the first byte of the page) and the browser's part
//! (the first byte until the second frame). `REPAINT_ONLY=22,23` measures
//! only the pages whose names start with those; `REPAINT_TIMES=N` changes
//! each value N times (at least once); `REPAINT_DETAIL=1` prints each
//! change's milestones (response end, DOM interactive, DOMContentLoaded,
//! first and second frame, in ms from the navigation's start);
//! `REPAINT_TEMPLATES=DIR` serves the pages from the templates in DIR
//! (the lab's `--templates`), so a template change is measured without a
//! rebuild.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use headless_chrome::protocol::cdp::Page;
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::Value as Json;

/// Installed in every new document before its own scripts: when a change
/// left its time in the session's storage, the time to the second
/// animation frame after the document is parsed.
const PROBE: &str = r#"(function () {
  var t0 = sessionStorage.getItem("repaint-t0");
  if (!t0) { return; }
  sessionStorage.removeItem("repaint-t0");
  document.addEventListener("DOMContentLoaded", function () {
    var dcl = performance.now(), first = 0;
    requestAnimationFrame(function () { first = performance.now(); requestAnimationFrame(function () {
      var n = performance.getEntriesByType("navigation")[0] || { responseStart: -1, responseEnd: -1, domInteractive: -1 };
      window.__repaint = { total: Date.now() - Number(t0), first_byte: n.responseStart,
        detail: [n.responseEnd, n.domInteractive, dcl, first, performance.now()].map(Math.round).join(" ") };
    }); });
  });
})();"#;

/// Finds the first value of the page's panel that can change, and
/// changes it to its `k`th new value; returns the path and the value, or
/// null. Leaves the change's time in the session's storage.
const CHANGE: &str = r##"(function (k) {
  var fields = document.querySelectorAll("#lab-panel [data-file]");
  for (var i = 0; i < fields.length; i++) {
    var f = fields[i], v = f.getAttribute("data-file"), next = null, m;
    if (f.tagName === "INPUT" && f.type === "number" && v !== "" && !isNaN(Number(v))) {
      next = String(Number(v) + k);
    } else if (f.tagName === "INPUT" && (m = /^(\d+)(ms|s|m|h)$/.exec(v))) {
      next = (Number(m[1]) + k) + m[2];
    }
    if (next === null) { continue; }
    f.value = next;
    sessionStorage.setItem("repaint-t0", String(Date.now()));
    f.dispatchEvent(new Event("change", { bubbles: true }));
    return f.name + "=" + next;
  }
  return null;
})"##;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn js(tab: &Tab, expr: &str) -> Json {
    tab.evaluate(expr, false)
        .ok()
        .and_then(|r| r.value)
        .unwrap_or(Json::Null)
}

struct Lab(Child);

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is read.
    let Some(path) = common::chromium() else {
        eprintln!("repaint: no chromium (apt-get install chromium); nothing measured");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut lab = Command::new(env!("CARGO_BIN_EXE_scenario-run"));
    lab.current_dir(root).args(["lab", "scenarios/*.toml"]);
    if let Some(dir) = std::env::var_os("REPAINT_TEMPLATES") {
        lab.arg("--templates").arg(dir);
    }
    let mut child = lab
        .stdout(Stdio::piped())
        .spawn()
        .expect("scenario-run lab starts");
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let _lab = Lab(child);
    let url = common::lab_url(&mut out);
    let only: Vec<String> = std::env::var("REPAINT_ONLY")
        .map(|s| s.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let times: u32 = std::env::var("REPAINT_TIMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1);
    let options = LaunchOptions::default_builder()
        .path(Some(path))
        .sandbox(false)
        .window_size(Some((1280, 900)))
        .idle_browser_timeout(Duration::from_secs(300))
        .build()
        .unwrap();
    let browser = Browser::new(options).expect("chromium starts");
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(120));
    tab.call_method(Page::AddScriptToEvaluateOnNewDocument {
        source: PROBE.to_string(),
        world_name: None,
        include_command_line_api: None,
        run_immediately: None,
    })
    .unwrap();
    let mut names: Vec<String> = std::fs::read_dir(root.join("scenarios"))
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .filter(|n| only.is_empty() || only.iter().any(|o| n.starts_with(o.as_str())))
        .collect();
    names.sort();
    println!(
        "{:<52} {:>8} {:>8} {:>8}  change",
        "page", "wait", "server", "browser"
    );
    let mut medians = Vec::new();
    for name in &names {
        let page = format!("{url}{name}.html");
        let (mut total, mut server, mut browser_part) = (Vec::new(), Vec::new(), Vec::new());
        let mut changed = String::new();
        for k in 1..=times {
            tab.navigate_to(&page).unwrap();
            tab.wait_until_navigated().unwrap();
            let change = js(&tab, &format!("{CHANGE}({k})"));
            let Some(change) = change.as_str() else {
                break;
            };
            changed = change.to_string();
            let mut waited = 0;
            let measured = loop {
                std::thread::sleep(Duration::from_millis(10));
                waited += 10;
                let m = js(&tab, "JSON.stringify(window.__repaint || null)");
                let m: Json = serde_json::from_str(m.as_str().unwrap_or("null")).unwrap();
                if m.is_object() {
                    break Some(m);
                }
                if waited > 60_000 {
                    break None;
                }
            };
            let Some(m) = measured else {
                eprintln!("{name}: no second frame after {change}");
                break;
            };
            if js(&tab, "!!document.querySelector('.lab-refused')") == Json::Bool(true) {
                eprintln!("{name}: {change} was refused");
                break;
            }
            if std::env::var_os("REPAINT_DETAIL").is_some() {
                eprintln!(
                    "{name}: response end, dom interactive, DOMContentLoaded, frame 1, frame 2: {}",
                    m["detail"]
                );
            }
            let t = m["total"].as_f64().unwrap();
            let fb = m["first_byte"].as_f64().unwrap();
            total.push(t);
            server.push(fb);
            browser_part.push(t - fb);
        }
        if total.is_empty() {
            println!(
                "{name:<52} {:>8} {:>8} {:>8}  (no value to change)",
                "-", "-", "-"
            );
            continue;
        }
        let m = median(total.clone());
        medians.push((m, name.clone()));
        println!(
            "{name:<52} {:>6.0}ms {:>6.0}ms {:>6.0}ms  {changed}",
            m,
            median(server),
            median(browser_part)
        );
    }
    medians.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(slowest) = medians.last() {
        println!(
            "{} pages: median of the medians {:.0} ms, slowest {:.0} ms ({}), {} over 300 ms",
            medians.len(),
            medians[medians.len() / 2].0,
            slowest.0,
            slowest.1,
            medians.iter().filter(|m| m.0 >= 300.0).count()
        );
    }
}
