//! The HTML report's playback, baseline, notes and questions, driven in
//! headless Chromium through the DevTools protocol (the `headless_chrome`
//! crate) with real clicks, key presses and touch gestures, and checked
//! against the engine's own transcript and values.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it), so these tests are
//! ignored by a plain `cargo test`; `cargo test --locked --test playback --
//! --ignored` runs them. When a check fails, screenshots of a desktop and a
//! phone viewport are written to `target/browser-failures/` and named in
//! the output.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use headless_chrome::browser::tab::ModifierKey;
use headless_chrome::protocol::cdp::{Emulation, Input, Page};
use headless_chrome::types::Bounds;
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::{Value as Json, json};

use common::{Scratch, available, bin, chromium, code, page_cells, report, scratch, stderr};
use scenario_run::duration::format as dur;
use scenario_run::engine::{Recorder, run, run_until};
use scenario_run::report::history::{row_at_step, versions};
use scenario_run::words::sentence::describe;

const STEPS: &str = "scenarios/16-two-operator-steps.toml";
const QUESTIONS: &str = "scenarios/01-dlq-is-not-proof-nothing-happened.toml";
const LARGE: &str = "scenarios/17-outage-100k-per-hour.toml";
const DATAFLOW: &str = "scenarios/37-chandy-lamport-in-flight.toml";
/// An aggregate page (states over time) and a sweep, for the lab.
const AGGREGATE: &str = "scenarios/26-poisson-hour-poison-mix.toml";
const SWEEP: &str = "scenarios/28-poison-lab-sweep.toml";
/// A retry storm: 4,560 transitions, more than a page lists.
const STORM: &str = "scenarios/22-retry-storm-no-jitter.toml";

/// A browser of its own (its own profile, so local storage starts empty)
/// and the reports of the three scenarios above.
struct Session {
    browser: Browser,
    out: PathBuf,
    name: &'static str,
    /// Holds the reports and the profile until the session ends (the
    /// folder is removed when this drops).
    _scratch: Scratch,
}

impl Session {
    fn start(name: &'static str) -> Option<Session> {
        let path = available(chromium(), "chromium (apt-get install chromium)")?;
        let d = scratch(&format!("playback-{name}"));
        let out = d.join("out");
        let o = report(
            &out,
            "html,json",
            &[STEPS, QUESTIONS, LARGE, DATAFLOW, STORM],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let profile = d.join("profile");
        let options = LaunchOptions::default_builder()
            .path(Some(path))
            .sandbox(false)
            .window_size(Some((1280, 900)))
            .user_data_dir(Some(profile))
            .idle_browser_timeout(Duration::from_secs(120))
            .build()
            .expect("launch options");
        let browser = Browser::new(options).expect("chromium starts");
        Some(Session {
            browser,
            out,
            name,
            _scratch: d,
        })
    }

    fn page(&self, scenario: &str) -> PathBuf {
        let stem = Path::new(scenario).file_stem().unwrap().to_str().unwrap();
        self.out.join(format!("{stem}.html"))
    }

    fn open(&self, scenario: &str, fragment: &str) -> Arc<Tab> {
        self.open_until(scenario, fragment, "#p-next")
    }

    /// A new tab on a scenario's page at `fragment`, once `ready` (a
    /// selector) is there: `#p-next` for a queue page, `#df-next` for a
    /// dataflow's.
    fn open_until(&self, scenario: &str, fragment: &str, ready: &str) -> Arc<Tab> {
        let tab = self.browser.new_tab().expect("tab");
        tab.set_default_timeout(Duration::from_secs(30));
        let url = format!("file://{}{fragment}", self.page(scenario).display());
        tab.navigate_to(&url)
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        tab.wait_for_element(ready).unwrap();
        tab
    }

    /// Runs the checks; when one fails, screenshots the page at desktop
    /// and phone size before failing.
    fn check(&self, tab: &Arc<Tab>, checks: impl FnOnce()) {
        if let Err(e) = catch_unwind(AssertUnwindSafe(checks)) {
            let dir = Path::new("target/browser-failures");
            let _ = std::fs::create_dir_all(dir);
            for (size, phone) in [("desktop", false), ("phone", true)] {
                if phone {
                    let _ = phone_viewport(tab);
                }
                let shot = tab.capture_screenshot(
                    Page::CaptureScreenshotFormatOption::Png,
                    None,
                    None,
                    true,
                );
                if let Ok(png) = shot {
                    let file = dir.join(format!("{}-{size}.png", self.name));
                    if std::fs::write(&file, png).is_ok() {
                        eprintln!("screenshot: {}", file.display());
                    }
                }
            }
            resume_unwind(e);
        }
    }
}

/// The value of a JavaScript expression, through JSON.
fn js(tab: &Tab, expr: &str) -> Json {
    let wrapped = format!("JSON.stringify((function () {{ return {expr}; }})())");
    let v = tab.evaluate(&wrapped, false).expect("evaluates");
    let text = v.value.and_then(|v| v.as_str().map(str::to_string));
    serde_json::from_str(&text.unwrap_or_else(|| "null".into())).expect("JSON")
}

fn text(tab: &Tab, selector: &str) -> String {
    js(
        tab,
        &format!("document.querySelector({selector:?}).textContent"),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

fn click(tab: &Tab, selector: &str) {
    tab.find_element(selector).unwrap().click().unwrap();
}

fn caption(tab: &Tab) -> String {
    text(tab, "#snapshot-caption")
}

/// Waits (at most 10 s) until `f` holds.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The cells of the snapshot table as the page shows them.
fn snapshot_rows(tab: &Tab) -> Vec<Vec<String>> {
    serde_json::from_value(js(
        tab,
        "Array.from(document.querySelectorAll('#snapshot tbody tr')).map(tr => Array.from(tr.children).map(td => td.textContent))",
    ))
    .unwrap()
}

/// A 390 x 844 phone with touch input.
fn phone_viewport(tab: &Tab) -> Result<(), String> {
    let metrics: Emulation::SetDeviceMetricsOverride = serde_json::from_value(json!({
        "width": 390, "height": 844, "deviceScaleFactor": 3.0, "mobile": true
    }))
    .map_err(|e| e.to_string())?;
    tab.call_method(metrics).map_err(|e| e.to_string())?;
    let touch: Emulation::SetTouchEmulationEnabled =
        serde_json::from_value(json!({ "enabled": true, "maxTouchPoints": 5 }))
            .map_err(|e| e.to_string())?;
    tab.call_method(touch).map_err(|e| e.to_string())?;
    Ok(())
}

/// Whether the Play button is pressed.
fn playing(tab: &Tab) -> Json {
    js(
        tab,
        "document.getElementById('p-play').getAttribute('aria-pressed')",
    )
}

/// The engine's transitions of a scenario, its rows at a playback step,
/// and its transcript as `show` prints it.
struct Engine {
    scenario: scenario_run::model::Scenario,
    outcome: scenario_run::engine::Outcome,
}

impl Engine {
    fn of(path: &str) -> Engine {
        let text = std::fs::read_to_string(path).unwrap();
        let (scenario, _) = scenario_run::scenario::load_str(path, &text).unwrap();
        let outcome = run(&scenario, Recorder::All).unwrap();
        Engine { scenario, outcome }
    }

    fn id(&self, m: u32) -> String {
        scenario_run::words::line::row(&self.scenario, &self.outcome, m as usize).id
    }

    fn rows_at_step(&self, step: usize) -> Vec<Vec<String>> {
        let t = self.outcome.transitions[step - 1].time;
        versions(&self.scenario, &self.outcome)
            .unwrap()
            .iter()
            .map(|vs| page_cells(row_at_step(vs, step as u32, t).unwrap()))
            .collect()
    }
}

/// The transition lines of `scenario-run show`.
fn transcript(path: &str) -> Vec<String> {
    let o = bin().args(["show", path]).output().unwrap();
    assert_eq!(code(&o), 0);
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .skip_while(|l| *l != "transitions:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn next_five_times_shows_the_engines_fifth_transition() {
    let Some(s) = Session::start("next") else {
        return;
    };
    let tab = s.open(STEPS, "");
    s.check(&tab, || {
        let engine = Engine::of(STEPS);
        let lines = transcript(STEPS);
        let total = engine.outcome.transitions.len();
        assert!(caption(&tab).starts_with("Final snapshot"));
        for _ in 0..5 {
            click(&tab, "#p-next");
        }
        let fifth = engine.outcome.transitions[4];
        let id = engine.id(fifth.message.unwrap());
        let said = describe(&engine.scenario, &fifth.detail);
        assert_eq!(
            caption(&tab),
            format!("At {}, step 5 of {total}: {id} {said}.", dur(fifth.time))
        );
        // The same words as the transcript's fifth line.
        assert_eq!(
            lines[4],
            format!("{} {id} {said}", dur(fifth.time))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );
        assert_eq!(snapshot_rows(&tab), engine.rows_at_step(5));
        assert_eq!(
            text(&tab, "#recent li.current"),
            format!("{} \u{b7} {id} {said}", dur(fifth.time))
        );
        assert_eq!(
            js(
                &tab,
                "document.querySelector('#recent li.current').getAttribute('aria-current')"
            ),
            json!("step")
        );
        assert_eq!(
            js(
                &tab,
                "document.querySelector('.lane.current').getAttribute('data-message')"
            ),
            json!(id)
        );
        assert_eq!(js(&tab, "location.hash"), json!("#step=5"));

        // The keyboard: arrows step, Home restarts, End ends.
        tab.press_key("ArrowLeft").unwrap();
        assert!(caption(&tab).contains("step 4 of"), "{}", caption(&tab));
        assert_eq!(snapshot_rows(&tab), engine.rows_at_step(4));
        tab.press_key("ArrowRight").unwrap();
        tab.press_key("ArrowRight").unwrap();
        assert_eq!(snapshot_rows(&tab), engine.rows_at_step(6));
        tab.press_key("Home").unwrap();
        assert!(caption(&tab).starts_with("Before the first transition"));
        tab.press_key("End").unwrap();
        assert!(caption(&tab).starts_with("Final snapshot"));

        // A reload keeps the position the fragment names.
        // A fragment typed into the address bar: the page follows it.
        js(&tab, "(location.hash = '#step=12', 0)");
        eventually("step 12 from the fragment", || {
            caption(&tab).contains("step 12 of")
        });
        tab.reload(true, None)
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        eventually("step 12 after reload", || {
            caption(&tab).contains("step 12 of")
        });
        assert_eq!(snapshot_rows(&tab), engine.rows_at_step(12));
    });
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn playback_stops_when_the_page_is_hidden_and_restart_keeps_the_speed() {
    let Some(s) = Session::start("hidden") else {
        return;
    };
    let tab = s.open(STEPS, "#step=0");
    s.check(&tab, || {
        let step = || -> u64 {
            let h = js(&tab, "location.hash");
            h.as_str()
                .and_then(|h| h.strip_prefix("#step="))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        // Nothing plays by itself.
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(step(), 0);
        // Speed 10x: a step every 100 ms.
        let speed = tab.find_element("#p-speed").unwrap();
        speed.focus().unwrap();
        for _ in 0..3 {
            tab.press_key("ArrowDown").unwrap();
        }
        assert_eq!(
            js(&tab, "document.getElementById('p-speed').value"),
            json!("100")
        );
        click(&tab, "#p-play");
        assert_eq!(playing(&tab), json!("true"));
        eventually("playback advances", || step() >= 3);
        tab.set_bounds(Bounds::Minimized).unwrap();
        eventually("the page is hidden", || {
            js(&tab, "document.visibilityState") == json!("hidden")
        });
        let stopped_at = step();
        std::thread::sleep(Duration::from_millis(800));
        assert_eq!(step(), stopped_at, "playback went on while hidden");
        assert_eq!(playing(&tab), json!("false"));
        tab.set_bounds(Bounds::normal()).unwrap();
        click(&tab, "#p-restart");
        assert_eq!(step(), 0);
        assert_eq!(
            js(&tab, "document.getElementById('p-speed').value"),
            json!("100")
        );
        // Space plays and pauses.
        tab.find_element("#snapshot-caption")
            .unwrap()
            .click()
            .unwrap();
        tab.press_key(" ").unwrap();
        eventually("space plays", || step() >= 2);
        tab.press_key(" ").unwrap();
        let paused = step();
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(step(), paused);
    });
}

/// A rerun in the lab opens at its start (`#step=0`), whatever the page:
/// an aggregate page at its first census sample, a dataflow at 0s. In
/// presenter mode nothing of the outcome shows before playback reaches
/// it: the messages worth a look are veiled, and so is the calls chart
/// past the playback's time.
#[test]
#[ignore = "needs Chromium; run with --ignored"]
fn a_rerun_opens_at_its_start_and_presenter_mode_veils_the_outcome_of_every_chart() {
    let Some(s) = Session::start("rewind") else {
        return;
    };
    let rerun = s.open(LARGE, "#step=0");
    s.check(&rerun, || {
        assert_eq!(
            js(&rerun, "document.getElementById('scrub').value"),
            json!("0"),
            "an aggregate page at its first sample"
        );
        assert_eq!(playing(&rerun), json!("false"));
    });
    let storm = s.open(STORM, "#step=0&present");
    s.check(&storm, || {
        assert_eq!(
            js(&storm, "document.getElementById('interesting-section').hidden"),
            json!(true)
        );
        let veiled = js(
            &storm,
            "Array.from(document.querySelectorAll('svg.flow-chart .future-veil')).map(v => v.getAttribute('visibility'))",
        );
        assert!(
            veiled.as_array().is_some_and(|v| !v.is_empty() && v.iter().all(|x| x == "visible")),
            "{veiled}"
        );
        // At the end, everything shows.
        click(&storm, "#p-end");
        assert_eq!(
            js(&storm, "document.getElementById('interesting-section').hidden"),
            json!(false)
        );
    });
    let flow = s.open_until(DATAFLOW, "#step=0", "#df-next");
    s.check(&flow, || {
        assert_eq!(
            js(&flow, "document.getElementById('scrub').value"),
            json!("0")
        );
    });
}

/// Space after a button was clicked with the mouse plays or pauses; it
/// never clicks that button again. Play goes as slow as a transition
/// every 3 s. The sticky player covers nothing scrolled into view.
#[test]
#[ignore = "needs Chromium; run with --ignored"]
fn space_after_a_click_plays_and_play_goes_as_slow_as_three_seconds_a_step() {
    let Some(s) = Session::start("space") else {
        return;
    };
    let tab = s.open(STEPS, "#step=0");
    s.check(&tab, || {
        let step = || js(&tab, "location.hash");
        click(&tab, "#p-next");
        assert_eq!(step(), json!("#step=1"));
        tab.press_key(" ").unwrap();
        assert_eq!(playing(&tab), json!("true"), "Space clicked Next again");
        tab.press_key(" ").unwrap();
        assert_eq!(playing(&tab), json!("false"));
        let slowest = js(
            &tab,
            "Array.from(document.querySelectorAll('#p-speed option')).map(o => +o.value).reduce((a, b) => Math.max(a, b))",
        );
        assert_eq!(slowest, json!(3000));
    });
    // Scrolled into view (as Tab or a link does), a row of the snapshot
    // stops below the sticky player, not under it.
    let large = s.open(LARGE, "");
    s.check(&large, || {
        let clear = js(
            &large,
            "(() => { const r = document.querySelector('#snapshot tbody tr'); r.scrollIntoView(); return r.getBoundingClientRect().top - document.getElementById('player').getBoundingClientRect().bottom; })()",
        );
        assert!(clear.as_f64().unwrap_or(-1.0) >= 0.0, "under the player by {clear}");
    });
}
#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn a_baseline_survives_a_reload_and_shows_what_differs() {
    let Some(s) = Session::start("baseline") else {
        return;
    };
    let tab = s.open(STEPS, "#step=5");
    s.check(&tab, || {
        assert!(text(&tab, "#b-status").starts_with("No baseline"));
        click(&tab, "#b-capture");
        assert!(text(&tab, "#b-status").starts_with("No difference from the baseline"));
        tab.reload(true, None)
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        eventually("the page after reload", || {
            caption(&tab).contains("step 5 of")
        });
        let status = text(&tab, "#b-status");
        assert!(
            status.starts_with("No difference from the baseline"),
            "{status}"
        );
        assert!(status.contains("step 5 of"), "{status}");
        // Step 6 delivers `poison` (its first receive): its row differs.
        click(&tab, "#p-next");
        let status = text(&tab, "#b-status");
        assert!(status.contains("from the baseline"), "{status}");
        assert!(!status.starts_with("No difference"), "{status}");
        let diff = text(&tab, "#b-diff");
        assert!(
            diff.contains("state") || diff.contains("receives"),
            "{diff}"
        );
        assert!(
            js(
                &tab,
                "document.querySelectorAll('#snapshot td.changed').length"
            )
            .as_u64()
            .unwrap()
                > 0
        );
        // Replace takes the current snapshot; Clear forgets it.
        click(&tab, "#b-replace");
        assert!(text(&tab, "#b-status").starts_with("No difference"));
        click(&tab, "#b-clear");
        assert!(text(&tab, "#b-status").starts_with("No baseline"));
        tab.reload(true, None)
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        eventually("reloaded", || !text(&tab, "#b-status").is_empty());
        assert!(text(&tab, "#b-status").starts_with("No baseline"));
    });
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn a_revealed_answer_is_the_engines_value_and_waits_for_its_time() {
    let Some(s) = Session::start("questions") else {
        return;
    };
    let tab = s.open(QUESTIONS, "#step=0");
    s.check(&tab, || {
        let text_of = std::fs::read_to_string(QUESTIONS).unwrap();
        let (scenario, _) = scenario_run::scenario::load_str(QUESTIONS, &text_of).unwrap();
        let q = &scenario.questions[0];
        let at = run_until(&scenario, Recorder::Off, q.at.unwrap()).unwrap();
        let value = scenario_run::report::text::shown(at.value(&scenario, &q.answer));
        // Before its time the question waits.
        assert_eq!(
            js(&tab, "document.getElementById('question-1').hidden"),
            json!(true)
        );
        assert_eq!(
            js(&tab, "document.getElementById('question-1-waits').hidden"),
            json!(false)
        );
        // Step until the run reaches it.
        let mut clicks = 0;
        while js(&tab, "document.getElementById('question-1').hidden") == json!(true) {
            click(&tab, "#p-next");
            clicks += 1;
            assert!(clicks < 100, "the question never appeared");
        }
        assert!(caption(&tab).starts_with(&format!("At {}", dur(q.at.unwrap()))));
        // It appears after the last transition of its instant, not the
        // first: "three messages sit in quarantine" is true by then.
        let all = run(&scenario, Recorder::All).unwrap();
        let done = (all.transitions.iter())
            .filter(|t| t.time <= q.at.unwrap())
            .count();
        assert_eq!(clicks, done, "steps until the question appears");
        let quarantined = snapshot_rows(&tab)
            .iter()
            .filter(|r| r.iter().any(|c| c == "quarantined"))
            .count();
        assert_eq!(quarantined, 3);
        assert_eq!(
            js(&tab, "document.querySelector('#question-1 details').open"),
            json!(false)
        );
        click(&tab, "#question-1 summary");
        assert_eq!(
            js(&tab, "document.querySelector('#question-1 details').open"),
            json!(true)
        );
        assert_eq!(text(&tab, "#question-1 .answer"), value);
        assert_eq!(value, "2");
    });
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn the_timeline_scrolls_under_a_finger_on_a_phone() {
    let Some(s) = Session::start("touch") else {
        return;
    };
    let tab = s.browser.new_tab().unwrap();
    phone_viewport(&tab).expect("phone viewport");
    let url = format!("file://{}", s.page(STEPS).display());
    tab.navigate_to(&url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    tab.wait_for_element("#timeline-scroll").unwrap();
    s.check(&tab, || {
        assert_eq!(js(&tab, "window.innerWidth"), json!(390));
        let wide = js(&tab, "(() => { const e = document.getElementById('timeline-scroll'); e.scrollIntoView(); return e.scrollWidth > e.clientWidth; })()");
        assert_eq!(wide, json!(true), "the timeline fits a phone: nothing to scroll");
        let rect = js(&tab, "(() => { const r = document.getElementById('timeline-scroll').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()");
        let (x, y) = (rect[0].as_f64().unwrap(), rect[1].as_f64().unwrap());
        // A finger down on the timeline, moved 250 px to the left in
        // steps, and lifted.
        let touch = |kind: &str, points: Json| {
            let e: Input::DispatchTouchEvent =
                serde_json::from_value(json!({ "type": kind, "touchPoints": points })).unwrap();
            tab.call_method(e).unwrap();
        };
        touch("touchStart", json!([{ "x": x, "y": y }]));
        for k in 1..=10 {
            touch("touchMove", json!([{ "x": x - 25.0 * k as f64, "y": y }]));
            std::thread::sleep(Duration::from_millis(16));
        }
        touch("touchEnd", json!([]));
        eventually("the timeline scrolled", || {
            js(&tab, "document.getElementById('timeline-scroll').scrollLeft").as_f64().unwrap_or(0.0) > 50.0
        });
        // The page itself did not scroll sideways: only the timeline did.
        assert_eq!(js(&tab, "window.scrollX"), json!(0));
    });
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn playback_reaches_the_last_transition_of_a_retry_storm() {
    let Some(s) = Session::start("storm") else {
        return;
    };
    let engine = Engine::of(STORM);
    let total = engine.outcome.transitions.len();
    assert!(
        total > 2_000,
        "{total}: the storm lists more than a page does"
    );
    let tab = s.open(STORM, "");
    s.check(&tab, || {
        // Once the packed run is unpacked, every transition is a step.
        eventually("every transition is a step", || {
            text(&tab, "#p-position") == format!("step {total} of {total}")
        });
        click(&tab, "#p-prev");
        let last = engine.outcome.transitions[total - 1];
        let id = engine.id(last.message.unwrap());
        let said = describe(&engine.scenario, &last.detail);
        assert_eq!(
            caption(&tab),
            format!(
                "At {}, step {total} of {total}: {id} {said}.",
                dur(last.time)
            )
        );
        assert_eq!(snapshot_rows(&tab), engine.rows_at_step(total));
        // A step past the first 2,000, from the fragment.
        tab.evaluate("location.hash = '#step=3000'", false).unwrap();
        let third = engine.outcome.transitions[2_999];
        eventually("step 3000 shown", || caption(&tab).contains("step 3000 of"));
        assert_eq!(
            caption(&tab),
            format!(
                "At {}, step 3000 of {total}: {} {}.",
                dur(third.time),
                engine.id(third.message.unwrap()),
                describe(&engine.scenario, &third.detail)
            )
        );
        assert_eq!(snapshot_rows(&tab), engine.rows_at_step(3_000));
    });
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn stepping_by_instant_applies_every_transition_of_one_time() {
    let Some(s) = Session::start("instants") else {
        return;
    };
    let engine = Engine::of(STORM);
    let ts = &engine.outcome.transitions;
    let total = ts.len();
    // The step that ends each instant, in order.
    let ends: Vec<usize> = (1..=total)
        .filter(|&k| k == total || ts[k].time != ts[k - 1].time)
        .collect();
    assert!(ends.len() > 3 && ends[0] > 1, "{:?}", &ends[..4]);
    let tab = s.open(STORM, "");
    s.check(&tab, || {
        eventually("every transition is a step", || {
            text(&tab, "#p-position") == format!("step {total} of {total}")
        });
        let at = |k: usize| text(&tab, "#p-position") == format!("step {k} of {total}");
        click(&tab, "#p-restart");
        assert!(at(0));
        click(&tab, "#p-next-instant");
        assert!(at(ends[0]), "{}", text(&tab, "#p-position"));
        assert!(caption(&tab).starts_with(&format!("At {}, step {}", dur(ts[0].time), ends[0])));
        assert_eq!(snapshot_rows(&tab), engine.rows_at_step(ends[0]));
        click(&tab, "#p-next-instant");
        assert!(at(ends[1]));
        tab.press_key_with_modifiers("ArrowRight", Some(&[ModifierKey::Shift]))
            .unwrap();
        assert!(at(ends[2]));
        assert_eq!(snapshot_rows(&tab), engine.rows_at_step(ends[2]));
        // Back: the end of the instant before.
        click(&tab, "#p-prev-instant");
        assert!(at(ends[1]));
        // From the middle of an instant, forward completes it and back
        // goes to the end of the one before.
        click(&tab, "#p-next");
        assert!(at(ends[1] + 1) && ends[1] + 1 < ends[2]);
        click(&tab, "#p-next-instant");
        assert!(at(ends[2]));
        click(&tab, "#p-next");
        tab.press_key_with_modifiers("ArrowLeft", Some(&[ModifierKey::Shift]))
            .unwrap();
        assert!(at(ends[2]));
        // From the end of the run, back goes to its last step first.
        click(&tab, "#p-end");
        click(&tab, "#p-prev-instant");
        assert!(at(total));
        click(&tab, "#p-prev-instant");
        assert!(at(ends[ends.len() - 2]));
    });
}

/// axe-core: `SCENARIO_RUN_AXE_JS`, or where `.ci/run` installs it.
fn axe_js() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SCENARIO_RUN_AXE_JS") {
        return Some(PathBuf::from(p));
    }
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/axe/node_modules/axe-core/axe.min.js");
    p.is_file().then_some(p)
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn axe_finds_no_serious_violation_on_the_pages() {
    let Some(s) = Session::start("axe") else {
        return;
    };
    let Some(axe) = available(axe_js(), "axe-core (npm install axe-core)") else {
        return;
    };
    let source = std::fs::read_to_string(axe).unwrap();
    // Every bundled scenario's page, and their index.
    let all = s.out.join("all");
    let o = report(&all, "html", &["scenarios/*.toml"]);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&all)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    pages.sort();
    assert!(pages.len() >= 76, "{} pages", pages.len());
    // To look at some pages only: SCENARIO_RUN_AXE_ONLY=TEXT (in the path).
    if let Ok(only) = std::env::var("SCENARIO_RUN_AXE_ONLY") {
        pages.retain(|p| p.to_string_lossy().contains(&only));
    }
    // A sweep's page too.
    let sweeps = s.out.join("sweep");
    let sweep = "scenarios/29-retry-storm-jitter-sweep.toml";
    let o = report(&sweeps, "html", &[sweep]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    pages.push(sweeps.join("29-retry-storm-jitter-sweep.html"));
    // Two comparison pages: lanes (the identity lesson) and states over
    // time (the retry storm with and without jitter).
    for (name, args) in [
        (
            "compare-lanes",
            vec![
                "scenarios/02-repair-and-redrive.toml",
                "scenarios/04-new-identity-duplicates.toml",
            ],
        ),
        (
            "compare-states",
            vec![STORM, "--set-b", "delivery.backoff.jitter=\"full\""],
        ),
    ] {
        let dir = s.out.join(name);
        let mut all = vec!["compare"];
        all.extend(args);
        all.extend(["--report", dir.to_str().unwrap()]);
        let o = common::run(&all);
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        pages.push(dir.join("compare.html"));
    }
    let checked = pages.len();
    // Each page on a desktop window (1280 px) and on a phone (390 px), in
    // two tabs at once (the pages take 2 to 10 s each).
    let runs: Vec<(&PathBuf, bool)> = pages.iter().flat_map(|p| [(p, false), (p, true)]).collect();
    let check = |(page, phone): (&PathBuf, bool)| -> Option<String> {
        assert!(page.is_file(), "{}", page.display());
        let started = std::time::Instant::now();
        let tab = s.browser.new_tab().unwrap();
        tab.set_default_timeout(Duration::from_secs(60));
        if phone {
            phone_viewport(&tab).unwrap();
        }
        tab.navigate_to(&format!("file://{}", page.display()))
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        // Once the page has looked at every table (when the browser is
        // idle after loading: `templates/page.html.j2`).
        let marked = Instant::now();
        while js(
            &tab,
            "document.documentElement.hasAttribute('data-scrollers')",
        ) != json!(true)
            && marked.elapsed() < Duration::from_secs(20)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        tab.evaluate(&source, false).unwrap();
        let result = tab
            .evaluate(
                "axe.run(document, { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } }).then(function (r) { return JSON.stringify(r.violations.filter(function (v) { return v.impact === 'serious' || v.impact === 'critical'; }).map(function (v) { return [v.id, v.impact, v.nodes.length, v.nodes.slice(0, 3).map(function (n) { return n.target.join(' ') + ': ' + n.failureSummary; })]; })); })",
                true,
            )
            .unwrap();
        let text = result
            .value
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let _ = tab.close(true);
        if std::env::var_os("SCENARIO_RUN_AXE_TIMES").is_some() {
            eprintln!(
                "{:>6} ms  {}",
                started.elapsed().as_millis(),
                page.display()
            );
        }
        let violations: Json = serde_json::from_str(&text).unwrap_or(Json::Null);
        let width = if phone { 390 } else { 1280 };
        (violations.as_array().is_none_or(|v| !v.is_empty()))
            .then(|| format!("{} at {width} px: {violations:#}", page.display()))
    };
    let (first, second) = runs.split_at(runs.len() / 2);
    let found: Vec<String> = std::thread::scope(|scope| {
        let other = scope.spawn(|| second.iter().filter_map(|&r| check(r)).collect::<Vec<_>>());
        let mut found: Vec<String> = first.iter().filter_map(|&r| check(r)).collect();
        found.extend(other.join().unwrap());
        found
    });
    // The extra pages above are checked whatever the filter.
    assert!(found.is_empty(), "{}", found.join("\n"));
    eprintln!("axe-core: no serious or critical violation on {checked} pages, at 1280 and 390 px");
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn the_flow_charts_keep_a_readable_size_on_a_phone() {
    let Some(s) = Session::start("phone-charts") else {
        return;
    };
    let tab = s.browser.new_tab().unwrap();
    phone_viewport(&tab).expect("phone viewport");
    let url = format!("file://{}", s.page(LARGE).display());
    tab.navigate_to(&url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    tab.wait_for_element("svg.flow-chart").unwrap();
    s.check(&tab, || {
        assert_eq!(js(&tab, "window.innerWidth"), json!(390));
        // Each flow chart: drawn at least 760 px wide (its 11 px labels
        // at 9 px or more), inside a frame no wider than the phone that
        // scrolls sideways.
        let charts = js(
            &tab,
            "Array.from(document.querySelectorAll('svg.flow-chart')).map(function (svg) { var frame = svg.parentElement; var tick = svg.querySelector('text.tick'); return [svg.getBoundingClientRect().width, frame.clientWidth, frame.scrollWidth > frame.clientWidth, tick ? tick.getBoundingClientRect().height : 0]; })",
        );
        let charts = charts.as_array().unwrap();
        assert!(!charts.is_empty(), "no flow chart on the page");
        for c in charts {
            let width = c[0].as_f64().unwrap();
            assert!(width >= 760.0, "a flow chart {width} px wide: {c}");
            assert!(c[1].as_f64().unwrap() <= 390.0, "its frame: {c}");
            assert_eq!(c[2], json!(true), "the frame does not scroll: {c}");
            assert!(c[3].as_f64().unwrap() >= 9.0, "a tick label: {c}");
        }
        // The page itself does not scroll sideways.
        assert_eq!(
            js(
                &tab,
                "document.documentElement.scrollWidth <= window.innerWidth"
            ),
            json!(true)
        );
    });
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn notes_persist_and_the_exported_run_is_the_json_report() {
    let Some(s) = Session::start("notes") else {
        return;
    };
    let tab = s.open(LARGE, "");
    s.check(&tab, || {
        // The 100,000-message page: its size, and how soon it is interactive.
        let size = std::fs::metadata(s.page(LARGE)).unwrap().len();
        assert!(size < 400_000, "{size} bytes");
        let ms = js(&tab, "(() => { const n = performance.getEntriesByType('navigation')[0]; return n.domInteractive; })()");
        eprintln!("100,000-message page: {size} bytes, interactive after {ms} ms");

        tab.find_element("#notes").unwrap().click().unwrap();
        tab.type_str("The DLQ peaks at 12472.").unwrap();
        tab.reload(true, None).unwrap().wait_until_navigated().unwrap();
        tab.wait_for_element("#notes").unwrap();
        assert_eq!(js(&tab, "document.getElementById('notes').value"), json!("The DLQ peaks at 12472."));

        let exported = tab
            .evaluate("window.scenarioRun.unpackRun()", true)
            .unwrap()
            .value
            .unwrap();
        let file = s.out.join("17-outage-100k-per-hour.json");
        assert_eq!(exported.as_str().unwrap(), std::fs::read_to_string(file).unwrap());
    });
}

/// The dataflow page has the queue pages' tools: presenter mode (nothing
/// of the outcome before the time reaches the end, or `r`), notes kept
/// and exported with the file's version, the run's export, and a baseline
/// that a run with another value is compared with.
#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn the_dataflow_page_has_presenter_mode_notes_a_baseline_and_export() {
    let Some(s) = Session::start("dataflow-tools") else {
        return;
    };
    // The same scenario with a slower channel A->B, in a folder of its
    // own (file pages share their storage).
    let slower = s.out.join("slower");
    let o = common::run(&[
        "--quiet",
        "--set",
        "channel.1.latency=\"3ms\"",
        "--report",
        slower.to_str().unwrap(),
        "--report-format",
        "html",
        DATAFLOW,
    ]);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    let tab = s.open_until(DATAFLOW, "", "#df-next");
    s.check(&tab, || {
        let shown = |id: &str| js(&tab, &format!("!document.getElementById('{id}').hidden"));
        // Presenter mode: back to 0 ms, the outcome veiled.
        click(&tab, "#present");
        assert_eq!(text(&tab, "#scrub-at"), "0ms");
        for id in ["snapshots", "expectations"] {
            assert_eq!(shown(id), json!(false), "{id}");
        }
        assert_eq!(
            js(&tab, "document.querySelector('.status').hidden"),
            json!(true)
        );
        assert_eq!(
            js(
                &tab,
                "document.querySelectorAll('#log tr[data-at]:not([hidden])').length"
            ),
            js(
                &tab,
                "document.querySelectorAll('#log tr[data-at=\"0\"]').length"
            )
        );
        assert_eq!(
            js(
                &tab,
                "document.querySelector('.future-veil').getAttribute('visibility')"
            ),
            json!("visible")
        );
        // One section shown on request; the rest when the time reaches
        // the end (4 ms).
        let veiled = || {
            js(
                &tab,
                "document.querySelectorAll('.veiled:not([hidden])').length",
            )
            .as_u64()
            .unwrap()
        };
        let before = veiled();
        assert!(before >= 3, "{before} veiled");
        js(
            &tab,
            "document.querySelector('.veiled:not([hidden]) button').click()",
        );
        assert_eq!(veiled(), before - 1);
        for _ in 0..4 {
            click(&tab, "#df-next");
        }
        assert_eq!(text(&tab, "#scrub-at"), "4ms");
        for id in ["snapshots", "expectations"] {
            assert_eq!(shown(id), json!(true), "{id}");
        }
        // `p` starts over, `r` reveals before the end.
        tab.press_key("p").unwrap();
        tab.press_key("p").unwrap();
        assert_eq!(shown("snapshots"), json!(false));
        tab.press_key("r").unwrap();
        assert_eq!(shown("snapshots"), json!(true));
        assert_eq!(text(&tab, "#scrub-at"), "0ms");

        // Notes survive a reload and are exported with the file's version;
        // the exported run is the JSON report.
        tab.find_element("#notes").unwrap().click().unwrap();
        tab.type_str("B records 7 in flight.").unwrap();
        tab.reload(true, None)
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        tab.wait_for_element("#df-next").unwrap();
        assert_eq!(
            js(&tab, "document.getElementById('notes').value"),
            json!("B records 7 in flight.")
        );
        let notes = js(&tab, "window.scenarioRunNotes()");
        let hash = js(
            &tab,
            "JSON.parse(document.getElementById('page-data').textContent).hash",
        );
        assert!(
            notes
                .as_str()
                .unwrap()
                .contains(&format!("(file version {})", hash.as_str().unwrap())),
            "{notes}"
        );
        let exported = tab
            .evaluate("window.scenarioRun.unpackRun()", true)
            .unwrap()
            .value
            .unwrap();
        let file = s.out.join("37-chandy-lamport-in-flight.json");
        assert_eq!(
            exported.as_str().unwrap(),
            std::fs::read_to_string(file).unwrap()
        );

        // The baseline: none, captured (no difference), then the slower
        // run's page compares with it.
        assert!(text(&tab, "#b-status").starts_with("No baseline"));
        click(&tab, "#b-capture");
        assert!(text(&tab, "#b-status").starts_with("No difference from the baseline"));
        tab.navigate_to(&format!(
            "file://{}",
            slower.join("37-chandy-lamport-in-flight.html").display()
        ))
        .unwrap()
        .wait_until_navigated()
        .unwrap();
        tab.wait_for_element("#df-next").unwrap();
        let status = text(&tab, "#b-status");
        assert!(status.contains("from the baseline"), "{status}");
        assert!(!status.starts_with("No difference"), "{status}");
        let diff = text(&tab, "#b-diff");
        assert!(diff.contains("Snapshot 1"), "{diff}");
        // The same file's hash: the slower run was made with --set.
        assert_eq!(
            js(
                &tab,
                "JSON.parse(document.getElementById('page-data').textContent).hash"
            ),
            hash
        );
    });
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn the_dataflow_page_steps_through_the_instants_and_plays_only_when_asked() {
    let Some(s) = Session::start("dataflow") else {
        return;
    };
    let tab = s.open_until(DATAFLOW, "#t=0", "#df-next");
    s.check(&tab, || {
        // Opened at 0s, it stays there: nothing plays by itself.
        std::thread::sleep(Duration::from_millis(800));
        assert_eq!(text(&tab, "#scrub-at"), "0ms");
        // The instants where something happens in scenario 37: 0s, 1ms
        // (the markers reach B and C), 3ms (the 7 reaches C), 4ms (B's
        // marker: complete).
        for want in ["1ms", "3ms", "4ms", "4ms"] {
            click(&tab, "#df-next");
            assert_eq!(text(&tab, "#scrub-at"), want);
        }
        click(&tab, "#df-back");
        assert_eq!(text(&tab, "#scrub-at"), "3ms");
        // At 3ms only the happenings of 4ms are still to come.
        assert_eq!(
            js(&tab, "document.querySelectorAll('#log tr.future').length"),
            json!(3)
        );
        assert!(js(&tab, "location.hash").as_str().unwrap().ends_with("t=3"));
        // Play from the end starts again at 0s and reaches the end.
        click(&tab, "#df-next");
        click(&tab, "#df-play");
        assert_eq!(text(&tab, "#df-play"), "pause");
        eventually("playback reached the end", || {
            text(&tab, "#scrub-at") == "4ms" && text(&tab, "#df-play") == "play"
        });
    });
}

/// The lab (`scenario-run lab`) in the browser: a control changed by
/// typing reruns the file, and the page's totals are `--set`'s; a bad
/// value shows `--set`'s message by its control; the page opens paused at
/// its first step.
#[test]
#[ignore = "needs chromium; .ci/run runs it"]
fn the_lab_reruns_a_changed_value_and_shows_a_bad_one_by_its_control() {
    let Some(s) = Session::start("lab") else {
        return;
    };
    let mut child = bin()
        .args(["lab", QUESTIONS, DATAFLOW, AGGREGATE, SWEEP])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Kept open until the lab stops.
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let url = common::lab_url(&mut out);
    let tab = s.browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));
    tab.navigate_to(&format!("{url}01-dlq-is-not-proof-nothing-happened.html"))
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    tab.wait_for_element("#lab-panel").unwrap();
    let totals = |tab: &Tab| -> Json {
        js(
            tab,
            "Object.fromEntries(Array.from(document.querySelectorAll('#totals tr')).map(tr => [tr.children[0].textContent, tr.children[1].textContent]))",
        )
    };
    let result = catch_unwind(AssertUnwindSafe(|| {
        assert_eq!(js(&tab, "location.hash"), json!("#step=0"));
        // Type a new receive budget and leave the field: the page reloads
        // with the rerun.
        let input = tab
            .find_element("input[name='delivery.max_receives']")
            .unwrap();
        input.click().unwrap();
        js(
            &tab,
            "document.querySelector(\"input[name='delivery.max_receives']\").select()",
        );
        tab.type_str("5").unwrap();
        tab.press_key("Tab").unwrap();
        eventually("the rerun's page", || {
            js(&tab, "location.search").as_str() == Some("?delivery.max_receives=5")
                && js(&tab, "!!document.querySelector('#totals')") == json!(true)
        });
        let o = common::run(&[
            "--format",
            "json",
            "--set",
            "delivery.max_receives=5",
            QUESTIONS,
        ]);
        let cli: Json = serde_json::from_str(&common::stdout(&o)).unwrap();
        let page = totals(&tab);
        for name in ["acked", "quarantined", "effects", "deliveries"] {
            assert_eq!(
                page[name].as_str().unwrap(),
                cli["scenarios"][0]["totals"][name].to_string(),
                "{name}"
            );
        }
        assert_eq!(js(&tab, "location.hash"), json!("#step=0"));
        // The exported notes say which values this run had, and the
        // file's own version (that of the page without them).
        let notes = js(&tab, "window.scenarioRunNotes()");
        let notes = notes.as_str().unwrap_or_default();
        assert!(
            notes.contains("Run with: `--set delivery.max_receives=5`"),
            "{notes}"
        );
        let version = js(
            &tab,
            "JSON.parse(document.getElementById('page-data').textContent).hash",
        );
        assert!(
            notes.contains(&format!("(file version {})", version.as_str().unwrap())),
            "{notes}"
        );
        // Back: the file's run, and the panel shows the file's value again.
        js(&tab, "history.back()");
        eventually("back to the file's run", || {
            js(&tab, "location.search") == json!("")
                && js(
                    &tab,
                    "!!document.querySelector(\"input[name='delivery.max_receives']\")",
                ) == json!(true)
        });
        let shown = js(
            &tab,
            "document.querySelector(\"input[name='delivery.max_receives']\").value",
        );
        let file_value = js(
            &tab,
            "document.querySelector(\"input[name='delivery.max_receives']\").dataset.file",
        );
        assert_eq!(shown, file_value, "the panel went back with the run");
        // A budget of 0: --set's message, next to its control.
        tab.navigate_to(&format!(
            "{url}01-dlq-is-not-proof-nothing-happened.html?delivery.max_receives=0"
        ))
        .unwrap()
        .wait_until_navigated()
        .unwrap();
        let message = text(&tab, "input[name='delivery.max_receives'] ~ pre.lab-error");
        assert!(
            message.contains("`max_receives` must be at least 1"),
            "{message}"
        );
        // On a phone the panel starts folded: it takes a line, and the
        // page goes on with the run; a refused value keeps it open.
        let phone = s.browser.new_tab().unwrap();
        phone.set_default_timeout(Duration::from_secs(30));
        phone_viewport(&phone).unwrap();
        for (query, open) in [("", false), ("?delivery.max_receives=0", true)] {
            phone
                .navigate_to(&format!(
                    "{url}01-dlq-is-not-proof-nothing-happened.html{query}"
                ))
                .unwrap()
                .wait_until_navigated()
                .unwrap();
            phone.wait_for_element("#lab-panel").unwrap();
            assert_eq!(js(&phone, "window.innerWidth"), json!(390));
            assert_eq!(
                js(&phone, "document.querySelector('.lab-fold').open"),
                json!(open),
                "{query}"
            );
        }
        // Every kind of page: a lane page, a dataflow page, an aggregate
        // page and a sweep's; the player (a sweep has none: its chart)
        // starts within the first two screens (after the lesson, which
        // every page puts first).
        for (page, player) in [
            ("01-dlq-is-not-proof-nothing-happened", "#player"),
            ("37-chandy-lamport-in-flight", "#df-player"),
            ("26-poisson-hour-poison-mix", "#player"),
            ("28-poison-lab-sweep", "h2"),
        ] {
            phone
                .navigate_to(&format!("{url}{page}.html"))
                .unwrap()
                .wait_until_navigated()
                .unwrap();
            phone.wait_for_element("#lab-panel").unwrap();
            let panel = js(
                &phone,
                "document.getElementById('lab-panel').getBoundingClientRect().height / window.innerHeight",
            );
            assert!(
                panel.as_f64().unwrap() < 0.2,
                "{page}: the folded panel takes {panel} of the screen"
            );
            let top = js(
                &phone,
                &format!(
                    "document.querySelector('{player}').getBoundingClientRect().top / window.innerHeight"
                ),
            );
            assert!(
                top.as_f64().unwrap() < 2.0,
                "{page}: {player} starts at {top} screens"
            );
        }
    }));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
    drop(out);
    if let Err(e) = result {
        resume_unwind(e);
    }
}

/// Every state badge's text stands out from its background by at least
/// 4.5:1 (WCAG's contrast for normal text), as Chromium computes the
/// colours.
#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn every_state_badge_is_readable() {
    let Some(s) = Session::start("contrast") else {
        return;
    };
    let tab = s.open(STEPS, "#step=0");
    let colours = js(
        &tab,
        "['not_arrived', 'waiting', 'ready', 'in_flight', 'acked', 'quarantined', 'expired', 'purged'].map(function (st) { var b = document.createElement('span'); b.className = 'state state-' + st; document.body.appendChild(b); var c = getComputedStyle(b); return [st, c.color, c.backgroundColor]; })",
    );
    let rgb = |s: &str| -> [f64; 3] {
        let inner = s
            .trim_start_matches("rgba(")
            .trim_start_matches("rgb(")
            .trim_end_matches(')');
        let v: Vec<f64> = inner
            .split(',')
            .map(|x| x.trim().parse().unwrap())
            .collect();
        [v[0], v[1], v[2]]
    };
    let luminance = |c: [f64; 3]| {
        let f = |x: f64| {
            let x = x / 255.0;
            if x <= 0.03928 {
                x / 12.92
            } else {
                ((x + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2])
    };
    for entry in colours.as_array().unwrap() {
        let (state, fg, bg) = (
            entry[0].as_str().unwrap(),
            entry[1].as_str().unwrap(),
            entry[2].as_str().unwrap(),
        );
        let (a, b) = (luminance(rgb(fg)), luminance(rgb(bg)));
        let ratio = (a.max(b) + 0.05) / (a.min(b) + 0.05);
        assert!(ratio >= 4.5, "{state}: {fg} on {bg} is {ratio:.2}:1");
    }
}

/// With JavaScript off, a page shows no control that would do nothing:
/// the scenario, dataflow and sweep pages and the index.
#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn without_javascript_no_dead_controls_are_shown() {
    let Some(s) = Session::start("no-script") else {
        return;
    };
    for page in [
        s.page(STEPS),
        s.page(QUESTIONS),
        s.page(DATAFLOW),
        s.out.join("index.html"),
    ] {
        let tab = s.browser.new_tab().unwrap();
        tab.call_method(Emulation::SetScriptExecutionDisabled { value: true })
            .unwrap();
        tab.navigate_to(&format!("file://{}", page.display()))
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        // DevTools still evaluates with the page's scripts off.
        let shown = js(
            &tab,
            "Array.from(document.querySelectorAll('button, input, select, textarea')).filter(function (e) { return e.getClientRects().length > 0; }).map(function (e) { return e.id || e.tagName; })",
        );
        assert_eq!(shown, json!([]), "{}", page.display());
    }
}

/// The index fits a phone: at 390 px nothing is wider than the screen.
#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn the_index_fits_a_phone() {
    let Some(s) = Session::start("phone-index") else {
        return;
    };
    let tab = s.browser.new_tab().unwrap();
    phone_viewport(&tab).expect("phone viewport");
    tab.navigate_to(&format!("file://{}", s.out.join("index.html").display()))
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    let widths = js(
        &tab,
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]",
    );
    assert!(
        widths[0].as_u64() <= widths[1].as_u64(),
        "the index is {} px wide on a {} px screen",
        widths[0],
        widths[1]
    );
    // Each figure keeps its name.
    let label = js(
        &tab,
        "getComputedStyle(document.querySelector('#scenarios td[data-label]'), '::before').content",
    );
    assert_eq!(label, json!("\"expectations: \""));
}

/// With the timeline focused, the arrow keys scroll it and leave the
/// playback where it is.
#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn arrow_keys_scroll_a_focused_timeline() {
    let Some(s) = Session::start("timeline-keys") else {
        return;
    };
    let tab = s.browser.new_tab().unwrap();
    phone_viewport(&tab).expect("phone viewport");
    tab.navigate_to(&format!("file://{}#step=3", s.page(STEPS).display()))
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    tab.wait_for_element("#p-next").unwrap();
    // Wider than the phone: there is something to scroll.
    let widths = js(
        &tab,
        "[document.getElementById('timeline-scroll').scrollWidth, document.getElementById('timeline-scroll').clientWidth]",
    );
    assert!(widths[0].as_u64() > widths[1].as_u64(), "{widths}");
    js(&tab, "document.getElementById('timeline-scroll').focus()");
    let before = caption(&tab);
    for _ in 0..5 {
        tab.press_key("ArrowRight").unwrap();
    }
    eventually("the timeline scrolled", || {
        js(
            &tab,
            "document.getElementById('timeline-scroll').scrollLeft",
        )
        .as_f64()
        .unwrap_or(0.0)
            > 0.0
    });
    assert_eq!(caption(&tab), before, "the playback did not move");
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn presenter_mode_hides_the_outcome_until_the_end_or_a_reveal() {
    let Some(s) = Session::start("presenter") else {
        return;
    };
    let tab = s.open(QUESTIONS, "");
    s.check(&tab, || {
        let hidden = |selector: &str| {
            js(
                &tab,
                &format!("document.querySelector({selector:?}).hidden"),
            ) == Json::Bool(true)
        };
        let veil = || {
            js(
                &tab,
                "document.getElementById('future-veil').getAttribute('visibility')",
            )
        };
        // What the operator will do, written over its future inspection.
        let inspection = || {
            js(
                &tab,
                "document.querySelector('#timeline-svg .inspection-mark').getAttribute('visibility')",
            )
        };
        let spoilers = ["header .summary", "#description", "#expectations", "#totals"];
        // Without presenter mode everything shows, and the controls exist
        // only with JavaScript (the bar is hidden in the page's HTML).
        assert!(spoilers.iter().all(|s| !hidden(s)));
        assert!(!hidden("#presenter-bar") && !hidden("#shortcuts"));
        tab.press_key("p").unwrap();
        assert!(spoilers.iter().all(|s| hidden(s)), "{}", text(&tab, "#presenter-state"));
        assert!(hidden("header .status"));
        assert!(text(&tab, "#p-position").starts_with("step 0 of"));
        assert_eq!(veil(), "visible");
        assert_eq!(inspection(), "hidden");
        // One section on request.
        js(
            &tab,
            "Array.from(document.querySelectorAll('.veiled button')).find(b => b.textContent === 'Show totals').click()",
        );
        assert!(!hidden("#totals") && hidden("#description"));
        // The end of the run shows the outcome; an answer still waits for
        // a guess.
        click(&tab, "#p-end");
        assert!(spoilers.iter().all(|s| !hidden(s)));
        assert_eq!(veil(), "hidden");
        assert_eq!(inspection(), "visible");
        assert!(hidden("#question-1 details.reveal"));
        js(
            &tab,
            "(function (g) { g.value = '1'; return g.dispatchEvent(new Event('input')); })(document.getElementById('question-1-guess'))",
        );
        assert!(!hidden("#question-1 details.reveal"));
        assert!(hidden("#question-2 details.reveal"));
        assert!(text(&tab, "#question-1 details.reveal").contains("Your guess: 1"));
        // Back to the start hides it again; r reveals everything.
        click(&tab, "#p-restart");
        assert!(hidden("#description") && hidden("#expectations"));
        js(&tab, "document.activeElement.blur()");
        tab.press_key("r").unwrap();
        assert!(spoilers.iter().all(|s| !hidden(s)));
        assert!(!hidden("#question-2 details.reveal"));
        tab.press_key("p").unwrap();
        assert_eq!(text(&tab, "#presenter-state"), "");
        assert!(spoilers.iter().all(|s| !hidden(s)));
    });
}

#[test]
#[ignore = "needs chromium; .ci/run installs it and runs: cargo test --locked --test playback -- --ignored"]
fn stepping_by_wave_and_a_tall_timeline_keep_the_current_lane_in_view() {
    let Some(s) = Session::start("waves") else {
        return;
    };
    let engine = Engine::of(STORM);
    let ts = &engine.outcome.transitions;
    let total = ts.len();
    // A wave ends where the next transition comes more than a hundredth
    // of the run later.
    let gap = (engine.outcome.totals.end_time / 100).max(1);
    let ends: Vec<usize> = (1..=total)
        .filter(|&k| k == total || ts[k].time - ts[k - 1].time > gap)
        .collect();
    assert!(ends.len() >= 4, "{ends:?}");
    let tab = s.open(STORM, "");
    s.check(&tab, || {
        eventually("every transition is a step", || {
            text(&tab, "#p-position") == format!("step {total} of {total}")
        });
        let at = |k: usize| text(&tab, "#p-position") == format!("step {k} of {total}");
        click(&tab, "#p-restart");
        click(&tab, "#p-next-wave");
        assert!(at(ends[0]), "{} against {ends:?}", text(&tab, "#p-position"));
        js(&tab, "document.activeElement.blur()");
        tab.press_key("]").unwrap();
        assert!(at(ends[1]), "{}", text(&tab, "#p-position"));
        assert_eq!(snapshot_rows(&tab), engine.rows_at_step(ends[1]));
        tab.press_key("]").unwrap();
        tab.press_key("[").unwrap();
        assert!(at(ends[1]), "{}", text(&tab, "#p-position"));
        click(&tab, "#p-prev-wave");
        assert!(at(ends[0]));
        // 200 lanes scroll in their frame; stepping keeps the current lane
        // inside it, clear of the axis kept at its bottom.
        let inside = || {
            js(
                &tab,
                "(function () { var box = document.getElementById('timeline-scroll').getBoundingClientRect(); \
                 var lane = document.querySelector('.lane.current'); if (!lane) { return 'none'; } \
                 var r = lane.getBoundingClientRect(); \
                 var axis = document.querySelector('#timeline-scroll .sticky-axis').getBoundingClientRect(); \
                 return [box.height < lane.ownerSVGElement.getBoundingClientRect().height, \
                   r.top >= box.top && r.bottom <= axis.top, Math.abs(axis.bottom - box.bottom) < 2]; })()",
            )
        };
        for step in [ends[ends.len() - 2], total - 1, 150, 3] {
            js(&tab, &format!("location.hash = '#step={step}'"));
            eventually("the hash is read", || at(step));
            assert_eq!(inside(), json!([true, true, true]), "step {step}");
        }
    });
}
