//! Resource budgets, asserted without a clock (docs/budgets.md): peak
//! memory through a counting allocator, and the cost of an event through
//! the search-work meter (`scenario_run::meter`, counted in debug builds).
//! Each test names the class of hostile input it stands for; each would
//! fail if that input made the tool record, scan or allocate without bound.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicIsize, Ordering};

use scenario_run::app::{self, FileResult, Options, Transcript};
use scenario_run::engine::{self, Effect, Recorder, StateChange, TRANSITIONS_KEPT, Transition};
use scenario_run::model::Scenario;
use scenario_run::scenario::{MAX_FILE_BYTES, load_str};

/// Counts the bytes the process holds and the most it held. The tests of
/// this file run one at a time, each holding [`ONE_AT_A_TIME`] from its
/// first line to its last (what a test does around its measured part
/// would otherwise count in another's), so a test's peak is its own,
/// whatever threads its work runs on.
struct Counting;

static HELD: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn count(delta: isize) {
    let now = HELD.fetch_add(delta, Ordering::Relaxed) + delta;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        count(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Taken by each test for all of its body: no other test of this file
/// allocates meanwhile.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` (the test holds [`one_at_a_time`]): what it returns, and the
/// most memory the process held at once beyond what it held before.
fn alone<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let start = HELD.load(Ordering::SeqCst);
    PEAK.store(start, Ordering::SeqCst);
    let r = f();
    let peak = PEAK.load(Ordering::SeqCst);
    (r, (peak - start).max(0) as usize)
}

const MB: usize = 1 << 20;

fn load(text: &str) -> Scenario {
    match load_str("r.toml", text) {
        Ok((s, _)) => s,
        Err(inv) => panic!("{:?}", inv.problems[0].message),
    }
}

// ---- 1. Memory is bounded, whatever the file asks for ----

#[test]
fn an_event_expectation_and_every_output_keep_no_transcript_at_scale() {
    let _one = one_at_a_time();
    // 200,000 messages of 4 deliveries each, about 2.4 M transitions: kept,
    // they would take over 70 MB (and the JSON of them gigabytes). With an
    // event expectation, the census, every report and the JSON output the
    // run holds its messages' state and the capped listings only.
    let text = "[delivery]\nmax_receives = 5\nretry_interval = \"1s\"\n\
                [[traffic]]\ncount = 200000\nover = \"1h\"\nid_prefix = \"m\"\n\
                faults = [{ fail = { first = 3 } }]\n\
                [[expect.event]]\nkind = \"retry_scheduled\"\nmessage = \"m7\"\nat = \"1s108ms\"\n\
                [expect]\nacked = 200000\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.toml");
    std::fs::write(&file, text).unwrap();
    let request = app::BatchRequest {
        files: vec![file.display().to_string()],
        options: Options {
            transcript: Transcript::Kept,
            census: true,
            ..Options::default()
        },
        jobs: Some(1),
        report: Some(app::ReportRequest {
            dir: dir.path().join("reports"),
            formats: vec![
                app::ReportFormat::Markdown,
                app::ReportFormat::Html,
                app::ReportFormat::Json,
            ],
        }),
        ..app::BatchRequest::default()
    };
    let (json, peak) = alone(|| {
        let batch = app::run_batch(&request, &|| {}).unwrap_or_else(|_| panic!("batch runs"));
        let FileResult::Ran(ran) = &batch.results[0] else {
            panic!("the file runs")
        };
        assert!(ran.verdicts.iter().all(|v| v.passed), "{:?}", ran.verdicts);
        scenario_run::cli::print::batch_json(
            &batch.files,
            &batch.results,
            &batch.goldens,
            &batch.record,
        )
    });
    // The JSON says what it left out.
    assert!(json.contains("\"messages_listed\": 1000"), "listing capped");
    assert!(
        json.contains("\"transitions_recorded\": false"),
        "no transcript"
    );
    eprintln!("peak {} MB", peak / MB);
    assert!(peak < 48 * MB, "peak {} MB", peak / MB);
}

/// Counts what is written to it, and keeps nothing.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_full_transcript_is_written_as_it_goes() {
    let _one = one_at_a_time();
    // 10,000 messages through an 8-minute outage: every one of about 45,000
    // transitions is written, a JSON document of 17 MB. Built as a tree
    // before writing it took about 190 MB; written item by item from a run
    // played again it costs the run (with its ledger), one step's
    // transitions and a buffer.
    let text = "[delivery]\nmax_receives = 6\nbackoff = { base = \"1s\", jitter = \"none\" }\n\
                [[outage]]\nfrom = \"20m\"\nduration = \"8m\"\n\
                [[traffic]]\ncount = 10000\nover = \"1h\"\nid_prefix = \"order-\"\n\
                [expect]\nquarantined = 1247\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("outage.toml");
    std::fs::write(&file, text).unwrap();
    let request = |transcript, report: Option<app::ReportRequest>| app::BatchRequest {
        files: vec![file.display().to_string()],
        options: Options {
            transcript,
            ..Options::default()
        },
        jobs: Some(1),
        report,
        ..app::BatchRequest::default()
    };
    let run = |transcript| {
        alone(|| {
            app::run_batch(&request(transcript, None), &|| {})
                .unwrap_or_else(|_| panic!("batch runs"))
        })
    };
    // `--format json` alone: the transitions are counted, not kept.
    let (batch, run_peak) = run(Transcript::Replayed);
    let FileResult::Ran(ran) = &batch.results[0] else {
        panic!("the file runs")
    };
    assert!(ran.verdicts.iter().all(|v| v.passed), "{:?}", ran.verdicts);
    assert!(ran.outcome.transitions.is_empty());
    assert!(ran.outcome.ledger.len() > 8_000);
    let (written, write_peak) = alone(|| {
        let mut out = Counted(0);
        scenario_run::cli::print::write_batch_json(
            &mut out,
            &batch.files,
            &batch.results,
            &batch.goldens,
            &batch.record,
        )
        .unwrap();
        out.0
    });
    // Kept (as goldens and reports keep it), the same document.
    let (kept, kept_peak) = run(Transcript::Kept);
    let FileResult::Ran(kept_run) = &kept.results[0] else {
        panic!("the file runs")
    };
    assert!(kept_run.outcome.transitions.len() > 40_000);
    eprintln!(
        "run {} KB (kept: {} KB), JSON of {written} bytes written with {} KB",
        run_peak >> 10,
        kept_peak >> 10,
        write_peak >> 10
    );
    assert!(written > 15 * MB, "{written}");
    assert!(write_peak < MB, "{write_peak}");
    assert!(
        run_peak + 2 * MB < kept_peak,
        "{run_peak} against {kept_peak}"
    );
    let json = |b: &app::Batch| {
        scenario_run::cli::print::batch_json(&b.files, &b.results, &b.goldens, &b.record)
    };
    let replayed = json(&batch);
    assert_eq!(replayed.len(), written);
    assert!(
        replayed == json(&kept),
        "the replayed document is the kept one"
    );
    // The three reports, the JSON one as big as the output.
    let reports = app::ReportRequest {
        dir: dir.path().join("reports"),
        formats: vec![
            app::ReportFormat::Markdown,
            app::ReportFormat::Html,
            app::ReportFormat::Json,
        ],
    };
    let (_, report_peak) = alone(|| {
        app::run_batch(&request(Transcript::Kept, Some(reports)), &|| {})
            .unwrap_or_else(|_| panic!("batch runs"))
    });
    let json_report = std::fs::read_to_string(dir.path().join("reports/outage.json")).unwrap();
    eprintln!("with reports {} KB", report_peak >> 10);
    assert!(json_report.len() > 12 * MB, "{}", json_report.len());
    assert!(report_peak < kept_peak + 8 * MB, "{} KB", report_peak >> 10);
}

#[test]
fn a_crash_loop_that_never_ends_stops_at_its_event_limit_with_the_transitions_kept() {
    let _one = one_at_a_time();
    // Six lines: a fault that never clears, a receive budget that never
    // runs out. Recorded in full (one message), the run keeps at most
    // TRANSITIONS_KEPT transitions, then stops at `max_events`.
    let s = load(
        "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"1s\"\n\
         [limits]\nmax_events = 1200000\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    );
    let (run, peak) = alone(|| engine::run(&s, Recorder::All));
    assert!(run.is_err(), "the run stops at its limit");
    // Transitions, state changes and effects, each at most
    // TRANSITIONS_KEPT (in vectors that grow by doubling).
    let each = size_of::<Transition>() + size_of::<StateChange>() + size_of::<Effect>();
    let kept = TRANSITIONS_KEPT.next_power_of_two() * each;
    eprintln!("peak {} MB, bound {} MB", peak / MB, (kept + 8 * MB) / MB);
    assert!(peak < kept + 8 * MB, "peak {} MB", peak / MB);
}

#[test]
fn a_generator_that_cannot_fit_is_refused_before_anything_is_allocated() {
    let _one = one_at_a_time();
    let text = "[delivery]\nmax_receives = 1\n[limits]\nmax_messages = 4000000000\n\
                [[traffic]]\ncount = 4000000000\nover = \"1h\"\n";
    let (loaded, peak) = alone(|| load_str("huge.toml", text).map(|_| ()));
    let problems = loaded.expect_err("refused").problems;
    assert!(
        problems.iter().any(|p| p.message.contains("max_messages")),
        "{:?}",
        problems.iter().map(|p| &p.message).collect::<Vec<_>>()
    );
    assert!(peak < MB, "peak {} KB", peak >> 10);
}

#[test]
fn the_outage_example_keeps_each_message_in_at_most_12_bytes() {
    let _one = one_at_a_time();
    // The outage example (docs/benchmarks.md) at 500,000 messages: 12.5%
    // of them end in quarantine, the rest are acked after up to 5 failed
    // deliveries. Each message's state is an 8-byte record; the
    // quarantine's order and lookup add about 3 bytes a message here.
    let messages = 500_000;
    let s = load(&format!(
        "[delivery]\nmax_receives = 6\nbackoff = {{ base = \"1s\", jitter = \"none\" }}\n\
         [[outage]]\nfrom = \"20m\"\nduration = \"8m\"\n\
         [[traffic]]\ncount = {messages}\nover = \"1h\"\n"
    ));
    let (outcome, peak) = alone(|| engine::run(&s, Recorder::Off).expect("the run finishes"));
    assert_eq!(outcome.totals.quarantined, 62_361);
    assert_eq!(outcome.messages.in_side_table(), 0);
    let per_message = peak as f64 / messages as f64;
    eprintln!("{per_message:.1} bytes a message");
    assert!(per_message <= 12.0, "{per_message:.1} bytes a message");
}

#[test]
fn deduplication_and_a_redrive_keep_each_message_in_at_most_19_bytes() {
    let _one = one_at_a_time();
    // benches/ten-million.toml at 500,000 messages: the 8-byte records,
    // the store's commit time at 4 bytes an intent, a bit an intent for
    // duplicated effects, and the side table of the 4% redriven (56
    // bytes each, in a map that grows by doubling): 18.1 counted. With
    // the store's expiries at 8 bytes an intent it took 22.1.
    let messages = 500_000;
    let s = load(&format!(
        "[delivery]\nmax_receives = 4\nbackoff = {{ base = \"1s\", cap = \"1m\", jitter = \"full\" }}\n\
         [dedup]\nresult_retention = \"10m\"\n[quarantine]\nretention = \"7d\"\n\
         [[outage]]\nfrom = \"6h\"\nduration = \"1h\"\n\
         [[operator]]\nwait = \"10m\"\nrepair = true\naction = \"redrive_all\"\n\
         [[traffic]]\ncount = {}\nover = \"1d\"\nid_prefix = \"m\"\n\
         [[traffic]]\ncount = {}\nover = \"1d\"\nid_prefix = \"lost-\"\n\
         faults = [{{ lose_ack = {{ first = 1 }} }}]\n",
        messages / 10 * 9,
        messages / 10
    ));
    let (outcome, peak) = alone(|| engine::run(&s, Recorder::Off).expect("the run finishes"));
    assert_eq!(outcome.totals.acked, messages as u64);
    assert!(outcome.totals.dedup_hits > 0);
    assert!(outcome.messages.in_side_table() > messages / 50);
    let per_message = peak as f64 / messages as f64;
    eprintln!("{per_message:.1} bytes a message");
    assert!(per_message <= 19.0, "{per_message:.1} bytes a message");
}

#[test]
fn billions_of_ordering_groups_cost_no_more_than_their_messages() {
    let _one = one_at_a_time();
    // Message j is in group (j - 1) % groups + 1: ten messages use ten
    // groups, whatever `groups` says (it once allocated 16 GB).
    let s = load(
        "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\nordering = \"per_key\"\n\
         [[traffic]]\ncount = 10\nover = \"1s\"\ngroups = 4000000000\n",
    );
    let (outcome, peak) = alone(|| engine::run(&s, Recorder::All).expect("the run finishes"));
    assert_eq!(outcome.totals.acked, 10);
    assert!(peak < MB, "peak {} KB", peak >> 10);
}

#[test]
fn deliveries_overtaking_each_other_stop_at_the_in_flight_limit() {
    let _one = one_at_a_time();
    // A 1ms visibility timeout on a day-long delivery starts another
    // delivery of the message every millisecond, all in flight at once:
    // before the limit, gigabytes of records before max_events stopped it.
    let s = load(
        "[delivery]\nmax_receives = \"unlimited\"\nretry_interval = \"1s\"\n\
         visibility_timeout = \"1ms\"\n\
         [workers]\ncount = 4000000000\nservice_time = \"1d\"\n\
         [[message]]\nid = \"a\"\n",
    );
    let (run, peak) = alone(|| engine::run(&s, Recorder::Off));
    let limit = run.expect_err("stopped");
    let cap = 1 + engine::EXTRA_DELIVERIES_IN_FLIGHT;
    assert_eq!(limit.limit, engine::Limit::InFlight(cap));
    assert!(limit.to_string().contains("deliveries in flight at once"));
    assert!(peak < 128 * MB, "peak {} MB", peak / MB);
}

#[cfg(unix)]
#[test]
fn an_endless_input_is_read_only_up_to_the_file_size_limit() {
    let _one = one_at_a_time();
    let (loaded, peak) = alone(|| app::load_file("/dev/zero", &[]).map(|_| ()));
    assert!(loaded.is_err(), "an endless device is refused");
    // The buffer grows by doubling up to the limit and one byte past it
    // (without the limit, it would grow until the allocator aborts).
    assert!(peak <= 3 * MAX_FILE_BYTES, "peak {} MB", peak / MB);
}

/// A shard's `index.json` for `merge`, forged from that of scenarios 01
/// and 28 (a sweep) by `forge`, written to `dir`; returns its path and
/// size.
fn forged_shard(
    dir: &std::path::Path,
    name: &str,
    forge: impl Fn(&str) -> String,
) -> (std::path::PathBuf, usize) {
    let base = dir.join("base");
    if !base.join("index.json").exists() {
        let made = std::process::Command::new(env!("CARGO_BIN_EXE_scenario-run"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["--quiet", "--report"])
            .arg(&base)
            .args(["--report-format", "json"])
            .args([
                "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
                "scenarios/28-poison-lab-sweep.toml",
            ])
            .status()
            .unwrap();
        assert!(made.success());
    }
    let index = std::fs::read_to_string(base.join("index.json")).unwrap();
    let forged = forge(&index);
    let shard = dir.join(name);
    std::fs::create_dir_all(&shard).unwrap();
    std::fs::write(shard.join("index.json"), &forged).unwrap();
    (shard.join("index.json"), forged.len())
}

/// `n` copies of `item`, separated by commas.
fn copies(item: &str, n: usize) -> String {
    let mut out = String::with_capacity((item.len() + 1) * n);
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
    out
}

/// `index` with `items` inserted first in the list or object that the
/// first `opening` (`"cases": [`) opens.
fn inserted(index: &str, opening: &str, items: &str) -> String {
    let at = index.find(opening).expect(opening) + opening.len();
    let empty = index[at..].trim_start().starts_with([']', '}']);
    let comma = if empty { "" } else { "," };
    format!("{}{items}{comma}{}", &index[..at], &index[at..])
}

#[test]
fn merge_holds_a_bounded_multiple_of_a_forged_shard() {
    let _one = one_at_a_time();
    let dir = std::env::temp_dir().join(format!(
        "scenario-run-resources-merge-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    const SIZE: usize = 16 * MB;
    let shapes: [(&str, String, &str); 4] = [
        // A sweep's row of 5 million one-character cells: the shape that
        // costs the most memory per byte of all those measured.
        ("cells", copies("\"\"", SIZE / 3), "\"row\": ["),
        // An entry's testcases, each as small as one can be.
        (
            "cases",
            copies(r#"{"name":"","line":null,"failure":null}"#, SIZE / 39),
            "\"cases\": [",
        ),
        // Problems, each as small as one can be.
        (
            "problems",
            copies(
                r#"{"file":"","line":null,"column":null,"end_line":null,"end_column":null,"message":"","label":null,"help":null,"text":""}"#,
                SIZE / 117,
            ),
            "\"problems\": [",
        ),
        // A total that is an array of zeros: once 58 bytes per byte as
        // JSON values, now refused as it is read.
        (
            "totals",
            format!("\"x\": [{}]", copies("0", SIZE / 2)),
            "\"totals\": {",
        ),
    ];
    for (name, items, after) in &shapes {
        let (path, size) = forged_shard(&dir, name, |index| inserted(index, after, items));
        let request = app::merge::MergeRequest {
            out_dir: dir.join(format!("out-{name}")),
            inputs: vec![path],
            formats: vec![
                app::reports::ReportFormat::Markdown,
                app::reports::ReportFormat::Html,
                app::reports::ReportFormat::Json,
            ],
            templates: None,
            summary_markdown: None,
            golden: None,
        };
        let (merged, peak) = alone(|| app::merge::merge(&request).map(|m| m.written.len()));
        eprintln!(
            "{name}: {} MB read, peak {} MB ({} bytes per byte), {merged:?}",
            size / MB,
            peak / MB,
            peak / size
        );
        assert!(
            peak <= app::merge::MEMORY_PER_INPUT_BYTE * size,
            "{name}: peak {} MB for {} MB",
            peak / MB,
            size / MB
        );
        if *name == "totals" {
            let e = merged.expect_err("refused");
            assert!(
                e.to_string()
                    .contains("expected a number, a string, a boolean or null"),
                "{e}"
            );
            // The bytes read, in a buffer grown by doubling: nothing built.
            assert!(
                peak <= 3 * size,
                "{name}: refused, yet {} MB held",
                peak / MB
            );
        } else {
            assert_eq!(
                merged.ok(),
                Some(4),
                "{name}: the index files and junit.xml"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- 2. The cost of an event does not grow with the description ----

/// Search work per delivery of a run of `text`, or `None` in a release
/// build (the meter counts only in debug builds).
fn work_per_delivery(text: &str) -> Option<f64> {
    let s = load(text);
    let (work, _) = alone(|| {
        let before = scenario_run::meter::read()?;
        let outcome = engine::run(&s, Recorder::Off).expect("the run finishes");
        let work = scenario_run::meter::read()? - before;
        Some(work as f64 / outcome.totals.deliveries.max(1) as f64)
    });
    work
}

/// The same run with its description made `times` times longer costs at
/// most a few more units of search per delivery (a scan would cost
/// `times` times more).
fn grows_at_most_logarithmically(file: impl Fn(usize) -> String, times: usize) {
    // A release build lists these tests as ignored, saying why.
    let (Some(small), Some(large)) = (work_per_delivery(&file(1)), work_per_delivery(&file(times)))
    else {
        unreachable!("the work meter counts in debug builds only");
    };
    let allowed = small + 4.0 * (times as f64).log2() + 4.0;
    assert!(
        large <= allowed,
        "work per delivery {small:.1} -> {large:.1} with a description {times} times longer"
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the work meter counts in debug builds only"
)]
fn a_long_fault_list_costs_a_search_per_delivery_not_a_scan() {
    let _one = one_at_a_time();
    // The applying fault is the last of the list: `first = n` from 1 up.
    grows_at_most_logarithmically(
        |n| {
            let faults: Vec<String> = (1..=n * 16)
                .map(|k| format!("{{ fail = {{ first = {k} }} }}"))
                .collect();
            format!(
                "[delivery]\nmax_receives = {}\nretry_interval = \"1s\"\n\
                 [[message]]\nid = \"m\"\nfaults = [{}]\n",
                n * 16 + 1,
                faults.join(", ")
            )
        },
        256,
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the work meter counts in debug builds only"
)]
fn many_outage_windows_cost_a_search_per_delivery() {
    let _one = one_at_a_time();
    grows_at_most_logarithmically(
        |n| {
            let mut t = "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
                         [[traffic]]\ncount = 4000\nover = \"1h\"\n"
                .to_string();
            for i in 0..n * 4 {
                t.push_str(&format!(
                    "[[outage]]\nfrom = \"{}s\"\nduration = \"1s\"\n",
                    i * 3_600 / (n * 4)
                ));
            }
            t
        },
        256,
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the work meter counts in debug builds only"
)]
fn many_traffic_blocks_cost_a_search_per_delivery() {
    let _one = one_at_a_time();
    grows_at_most_logarithmically(
        |n| {
            let mut t = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n".to_string();
            for i in 0..n * 4 {
                t.push_str(&format!(
                    "[[traffic]]\ncount = {}\nover = \"1m\"\nid_prefix = \"b{i}-\"\n\
                     faults = [{{ fail = {{ first = 1 }} }}]\n",
                    4_000 / (n * 4)
                ));
            }
            t
        },
        256,
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the work meter counts in debug builds only"
)]
fn many_event_expectations_cost_a_lookup_per_transition() {
    let _one = one_at_a_time();
    // Expectations of one message each: a transition looks up its kind and
    // message, not every expectation.
    grows_at_most_logarithmically(
        |n| {
            let mut t = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
                         [[traffic]]\ncount = 4000\nover = \"1h\"\nid_prefix = \"m\"\n\
                         faults = [{ fail = { first = 1 } }]\n"
                .to_string();
            for i in 1..=n * 8 {
                t.push_str(&format!(
                    "[[expect.event]]\nkind = \"retry_scheduled\"\nmessage = \"m{i}\"\n"
                ));
            }
            t
        },
        128,
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the work meter counts in debug builds only"
)]
fn operator_steps_over_a_deep_quarantine_touch_only_what_they_change() {
    let _one = one_at_a_time();
    // 2,000 messages quarantined, then steps that each redrive one by name
    // (entry-order retention, and sqs-standard's retention by enqueue):
    // the work per step does not grow with the number of steps or the
    // depth.
    for profile in ["retry_interval = \"1s\"\n", "profile = \"sqs-standard\"\n"] {
        grows_at_most_logarithmically(
            |n| {
                let mut t = format!(
                    "[delivery]\nmax_receives = 1\n{profile}\
                     [quarantine]\nretention = \"4d\"\n\
                     [[traffic]]\ncount = {}\nover = \"1m\"\nid_prefix = \"m\"\n\
                     faults = [{{ fail = {{ until = \"repair\" }} }}]\n",
                    n * 100
                );
                for i in 1..=n * 10 {
                    t.push_str(&format!(
                        "[[operator]]\nwait = \"1s\"\naction = \"redrive\"\nonly = [\"m{i}\"]\n"
                    ));
                }
                t
            },
            32,
        );
    }
}
