//! Running scenario files: one at a time into a [`FileResult`], many in
//! parallel with results kept in input order.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

pub use super::result::{FileResult, Options, Ran, Share, Transcript, limit_problem};
use crate::diagnostic::{Problem, Source};
use crate::engine::{self, Recorder};
use crate::expect::{self, Verdict};
use crate::model::Scenario;
use crate::scenario::{self, Invalid};

/// A valid file: a queue scenario, a sweep of its points, a dataflow, or
/// a sweep of a dataflow's points.
pub enum Loaded {
    One(Box<Scenario>),
    Sweep(scenario::Sweep),
    Dataflow(Box<crate::dataflow::Dataflow>),
    DataflowSweep(crate::dataflow::sweep::Sweep),
}

/// Why a scenario file could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read.
    Unreadable(std::io::Error),
    /// The file is not a valid scenario.
    Invalid(Box<Invalid>),
}

impl LoadError {
    /// As located problems (an unreadable file is one problem).
    pub fn into_invalid(self, path: &str) -> Box<Invalid> {
        match self {
            LoadError::Invalid(invalid) => invalid,
            LoadError::Unreadable(e) => {
                let source = Source::new(path, "");
                let mut problem =
                    Problem::new(&source, None, format!("cannot read {path}: {e}"), "");
                if std::path::Path::new(path).is_dir() {
                    problem = problem.with_help(format!(
                        "{path} is a folder: to run its scenarios, give a quoted glob such as '{}/*.toml'",
                        path.trim_end_matches('/')
                    ));
                }
                Box::new(Invalid {
                    source,
                    problems: vec![problem],
                })
            }
        }
    }
}

/// A scenario file's bytes: at most one byte more than
/// [`scenario::MAX_FILE_BYTES`] (so that a device, a pipe or a FIFO that
/// never ends cannot fill memory; [`scenario::text_of`] refuses the
/// extra byte), or why it cannot be read.
pub fn read_file(path: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(scenario::MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads and validates one scenario file, with `sets` (`--set
/// PATH=VALUE`) written in place (read by [`read_file`]).
pub fn load_file(path: &str, sets: &[(String, String)]) -> Result<(Loaded, Source), LoadError> {
    let bytes = read_file(path).map_err(LoadError::Unreadable)?;
    let text = scenario::text_of(path, &bytes).map_err(LoadError::Invalid)?;
    if scenario::is_dataflow(text) {
        let (loaded, source) =
            crate::dataflow::load(path, text, sets).map_err(LoadError::Invalid)?;
        let loaded = match loaded {
            crate::dataflow::Loaded::One(flow) => Loaded::Dataflow(flow),
            crate::dataflow::Loaded::Sweep(sweep) => Loaded::DataflowSweep(sweep),
        };
        return Ok((loaded, source));
    }
    let (loaded, source) = scenario::load(path, text, sets).map_err(LoadError::Invalid)?;
    let loaded = match loaded {
        scenario::Loaded::One(s) => Loaded::One(s),
        scenario::Loaded::Sweep(s) => Loaded::Sweep(s),
    };
    Ok((loaded, source))
}

/// Reads, validates, runs and judges one file (every point of a sweep),
/// at `position` of the batch: under `--shard`, only what is this shard's
/// (see [`Share`]).
pub fn run_file(path: &str, position: usize, opts: &Options) -> FileResult {
    let share = Share::of(opts.shard);
    let (loaded, source) = match load_file(path, &opts.sets) {
        Ok(ok) => ok,
        Err(_) if !share.has_file(position) => return FileResult::Elsewhere,
        Err(e) => return FileResult::Invalid(e.into_invalid(path)),
    };
    match loaded {
        Loaded::One(mut scenario) => {
            if let Some(seed) = opts.seed {
                scenario.seed = seed;
            }
            if !selected(&scenario, path, opts) {
                return FileResult::Filtered;
            }
            if !share.has_file(position) {
                return FileResult::Elsewhere;
            }
            run_scenario(source, *scenario, opts)
        }
        Loaded::Dataflow(mut flow) => {
            if let Some(seed) = opts.seed {
                flow.seed = seed;
            }
            if !matches(&flow.name, &flow.tags, path, opts) {
                return FileResult::Filtered;
            }
            if !share.has_file(position) {
                return FileResult::Elsewhere;
            }
            FileResult::Dataflow(Box::new(crate::dataflow::run_and_judge(source, *flow)))
        }
        Loaded::Sweep(sweep) => {
            let first = &sweep.points[0].scenario;
            if !selected(first, path, opts) {
                return FileResult::Filtered;
            }
            let mine = |point: usize| share.has_point(position, point);
            if !(0..sweep.points.len()).any(mine) {
                return FileResult::Elsewhere;
            }
            super::sweep::run_sweep(source, sweep, &mine, opts, &run_scenario)
        }
        Loaded::DataflowSweep(sweep) => {
            let first = &sweep.points[0].flow;
            if !matches(&first.name, &first.tags, path, opts) {
                return FileResult::Filtered;
            }
            let mine = |point: usize| share.has_point(position, point);
            if !(0..sweep.points.len()).any(mine) {
                return FileResult::Elsewhere;
            }
            super::sweep::run_dataflow_sweep(source, sweep, &mine, opts)
        }
    }
}

/// One file run as one run where it can be: as [`run_file`], but a sweep
/// whose `--set` values fix every swept path to one point runs as that
/// point's scenario (or dataflow), as `show` shows it, so its page is a
/// run's whole page rather than a table of one point.
pub fn run_one(path: &str, opts: &Options) -> FileResult {
    match load_file(path, &opts.sets) {
        Ok((Loaded::Sweep(mut sweep), source)) if sweep.points.len() == 1 => {
            let mut scenario = sweep.points.remove(0).scenario;
            if let Some(seed) = opts.seed {
                scenario.seed = seed;
            }
            run_scenario(source, scenario, opts)
        }
        Ok((Loaded::DataflowSweep(mut sweep), source)) if sweep.points.len() == 1 => {
            let mut flow = sweep.points.remove(0).flow;
            if let Some(seed) = opts.seed {
                flow.seed = seed;
            }
            FileResult::Dataflow(Box::new(crate::dataflow::run_and_judge(source, flow)))
        }
        _ => run_file(path, 0, opts),
    }
}

fn selected(scenario: &Scenario, path: &str, opts: &Options) -> bool {
    matches(&scenario.name, &scenario.tags, path, opts)
}

/// Whether `--filter` and `--tag` keep a file of this name and tags.
fn matches(name: &str, tags: &[String], path: &str, opts: &Options) -> bool {
    let by_text = opts.filter.as_ref().is_none_or(|f| {
        let f = f.to_lowercase();
        name.to_lowercase().contains(&f) || path.to_lowercase().contains(&f)
    });
    let by_tag = opts.tag.is_empty()
        || opts.tag.iter().any(|wanted| {
            let wanted = wanted.to_lowercase();
            tags.iter().any(|t| t.to_lowercase() == wanted)
        });
    by_text && by_tag
}

/// Runs a validated scenario and judges it; failures are explained from a
/// rerun that keeps the transitions the explanations need.
pub fn run_scenario(source: Source, scenario: Scenario, opts: &Options) -> FileResult {
    let full = scenario.message_count() <= engine::FULL_TRANSCRIPT_MESSAGES;
    let recorder = match opts.transcript {
        Transcript::Kept if full => Recorder::All,
        Transcript::Replayed if full => Recorder::Replayed,
        // Event expectations are judged while the run goes.
        _ => Recorder::Off,
    };
    let run = if opts.census {
        engine::run_with_census(&scenario, recorder)
    } else {
        engine::run(&scenario, recorder)
    };
    let outcome = match run {
        Ok(o) => o,
        Err(limit) => {
            return FileResult::Stopped {
                source,
                scenario: Box::new(scenario),
                limit,
            };
        }
    };
    let verdicts = expect::judge(&scenario, &outcome);
    let failed: Vec<&Verdict> = verdicts.iter().filter(|v| !v.passed).collect();
    let mut failures = Vec::new();
    if !failed.is_empty() {
        let wanted = expect::recorder_for_failures(&scenario, &outcome, &failed);
        let rerun;
        let explained = if outcome.recorder == Recorder::All || outcome.recorder == wanted {
            &outcome
        } else {
            // Same file, same seed: the rerun is the same run, now recorded.
            rerun = engine::run(&scenario, wanted).unwrap_or_else(|_| outcome.clone());
            &rerun
        };
        failures = expect::failures(&source, &scenario, explained, &failed);
    }
    FileResult::Ran(Box::new(Ran {
        source,
        scenario: std::sync::Arc::new(scenario),
        outcome: std::sync::Arc::new(outcome),
        verdicts,
        failures,
    }))
}

/// Runs files on `jobs` threads; results come back in input order. Under
/// fail-fast, files after the first failure (in input order) are skipped.
/// `done` is called as each file finishes (for a progress bar).
pub fn run_all(
    paths: &[String],
    opts: &Options,
    jobs: usize,
    done: &(dyn Fn() + Sync),
) -> Vec<FileResult> {
    let first_failure = AtomicUsize::new(usize::MAX);
    let work = |(i, path): (usize, &String)| {
        if opts.fail_fast && i > first_failure.load(Ordering::SeqCst) {
            done();
            return FileResult::Skipped;
        }
        let r = run_file(path, i, opts);
        if opts.fail_fast && r.counts() && !r.passed() {
            first_failure.fetch_min(i, Ordering::SeqCst);
        }
        done();
        r
    };
    let mut results: Vec<FileResult> = match rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
    {
        Ok(pool) => pool.install(|| paths.par_iter().enumerate().map(work).collect()),
        Err(_) => paths.iter().enumerate().map(work).collect(),
    };
    if opts.fail_fast {
        let cut = first_failure.load(Ordering::SeqCst);
        for r in results.iter_mut().skip(cut.saturating_add(1)) {
            *r = FileResult::Skipped;
        }
    }
    results
}

/// Expands quoted globs; literal paths are kept as given (a missing one is
/// reported when it is read). A file that exists under a name with glob
/// characters (`incident[1].toml`) is that file, not a pattern.
pub fn expand(patterns: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for p in patterns {
        if p.contains(['*', '?', '[']) && !std::path::Path::new(p).is_file() {
            let paths = glob::glob(p).map_err(|e| format!("invalid glob pattern {p:?}: {e}"))?;
            let mut matched: Vec<String> = paths
                .filter_map(Result::ok)
                .map(|path| path.to_string_lossy().into_owned())
                .collect();
            if matched.is_empty() {
                return Err(format!("no file matches {p:?}"));
            }
            matched.sort();
            out.extend(matched);
        } else {
            out.push(p.clone());
        }
    }
    // A file's name reaches terminals, CI annotations and reports: one
    // that could drive a terminal or break a line is refused, not echoed.
    if let Some(bad) = out.iter().find(|f| f.chars().any(char::is_control)) {
        return Err(format!(
            "{bad:?} holds a control character; rename the file (its name is shown in terminals, annotations and reports)"
        ));
    }
    Ok(out)
}
