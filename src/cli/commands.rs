//! The subcommands besides running: `check`, `show`, `new`, `schema`.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;

use super::Format;
use super::print::{annotation, emit, paint};
use crate::app::Exit;
use crate::app::Loaded;
use crate::app::result::{FileResult, Options};
use crate::app::{LoadError, batch, load_file, sweep};
use crate::diagnostic::Source;
use crate::diagnostic::{Problem, render};
use crate::report::text;

/// `check`: validates each file without running it; prints each file's
/// status and problems as `format` asks.
pub(super) fn check(
    patterns: &[String],
    sets: &[(String, String)],
    format: Format,
    color: bool,
) -> Exit {
    let files = match super::files(patterns) {
        Ok(f) => f,
        Err(code) => return code,
    };
    // Each file, its problems, and its points when it is a sweep.
    let checked: Vec<(&String, Vec<Problem>, Option<usize>)> = files
        .iter()
        .map(|path| match load_file(path, sets) {
            Ok((Loaded::Sweep(sweep), _)) => (path, Vec::new(), Some(sweep.points.len())),
            Ok((Loaded::DataflowSweep(sweep), _)) => (path, Vec::new(), Some(sweep.points.len())),
            Ok(_) => (path, Vec::new(), None),
            Err(e) => (path, e.into_invalid(path).problems, None),
        })
        .collect();
    let invalid = checked.iter().filter(|(_, p, _)| !p.is_empty()).count();
    let valid = checked.len() - invalid;
    let out = match format {
        Format::Json => {
            let files: Vec<_> = checked
                .iter()
                .map(|(file, problems, points)| {
                    json!({
                        "file": file,
                        "status": if problems.is_empty() { "valid" } else { "invalid" },
                        "points": points,
                        "problems": problems.iter().map(Problem::located).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let doc = json!({
                "format_version": crate::report::json::REPORT_FORMAT_VERSION,
                "files": files,
                "valid": valid,
                "invalid": invalid,
            });
            format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            )
        }
        Format::Human | Format::Github => {
            let mut out = String::new();
            for (path, problems, points) in &checked {
                if problems.is_empty() {
                    let sweep =
                        points.map_or(String::new(), |n| format!("  (a sweep of {n} points)"));
                    out += &format!("{}  {path}{sweep}\n", paint("OK", "32", color));
                    continue;
                }
                out += &format!("{}  {path}\n", paint("INVALID", "31", color));
                for p in problems {
                    out += &match format {
                        Format::Github => annotation(&p.located(), path),
                        _ => format!("{}\n", render(p, color)),
                    };
                }
            }
            out + &format!("{valid} valid, {invalid} invalid\n")
        }
    };
    emit(&out);
    if invalid > 0 {
        Exit::Invalid
    } else {
        Exit::Passed
    }
}

/// `show`: a scenario's transcript and snapshot. A sweep shows its table
/// of points; `--set` fixing each swept path shows one point.
pub(super) fn show(
    path: &str,
    sets: &[(String, String)],
    at: Option<u64>,
    seed: Option<u64>,
    color: bool,
) -> Exit {
    let (mut scenario, source) = match load_file(path, sets) {
        Ok((Loaded::One(scenario), source)) => (*scenario, source),
        Ok((Loaded::Dataflow(flow), source)) => return show_dataflow(&source, &flow, at, color),
        Ok((Loaded::DataflowSweep(mut sweep), source)) if sweep.points.len() == 1 => {
            let flow = sweep.points.remove(0).flow;
            return show_dataflow(&source, &flow, at, color);
        }
        Ok((Loaded::DataflowSweep(sweep), source)) => {
            let values: Vec<&[String]> = sweep.points.iter().map(|p| &p.values[..]).collect();
            let command = to_fix(path, &sweep.keys, &values, sets, at);
            return show_sweep(path, command, seed, |opts| {
                sweep::run_dataflow_sweep(source, sweep, &|_| true, opts)
            });
        }
        Ok((Loaded::Sweep(mut sweep), source)) if sweep.points.len() == 1 => {
            (sweep.points.remove(0).scenario, source)
        }
        Ok((Loaded::Sweep(sweep), source)) => {
            let values: Vec<&[String]> = sweep.points.iter().map(|p| &p.values[..]).collect();
            let command = to_fix(path, &sweep.keys, &values, sets, at);
            return show_sweep(path, command, seed, |opts| {
                sweep::run_sweep(source, sweep, &|_| true, opts, &batch::run_scenario)
            });
        }
        Err(LoadError::Unreadable(e)) => {
            eprintln!("error: cannot read {path}: {e}");
            return Exit::Invalid;
        }
        Err(LoadError::Invalid(inv)) => {
            for p in &inv.problems {
                eprintln!("{}", render(p, color));
            }
            return Exit::Invalid;
        }
    };
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    // The same text as the golden transcript, of the same run.
    let result = crate::app::golden::transcript_run(&scenario, at);
    match result {
        Ok(outcome) => {
            let mut out = super::print::Stdout::new();
            let _ = text::write_golden_transcript(&mut out, &scenario, &outcome);
            out.flush();
            Exit::Passed
        }
        Err(limit) => {
            eprintln!(
                "{}",
                render(&batch::limit_problem(&source, &scenario, &limit), color)
            );
            Exit::Stopped
        }
    }
}

/// `show` of a dataflow file: its transcript (up to `at`) and cuts.
fn show_dataflow(
    source: &Source,
    flow: &crate::dataflow::Dataflow,
    at: Option<u64>,
    color: bool,
) -> Exit {
    let run = match at {
        Some(t) => crate::dataflow::world::run_until(flow, t),
        None => crate::dataflow::run(flow),
    };
    match run {
        Ok(outcome) => {
            super::print::emit(&crate::dataflow::text::transcript(flow, &outcome, at));
            Exit::Passed
        }
        Err(stop) => {
            eprintln!(
                "{}",
                render(&crate::dataflow::stop_problem(source, &stop), color)
            );
            Exit::Stopped
        }
    }
}

/// The `--set` arguments that show one point of a sweep: those given,
/// then one per swept path that still varies (a `--set` may have fixed
/// some). `--at` shows one point only: an error that says which to fix.
fn to_fix(
    path: &str,
    keys: &[String],
    values: &[&[String]],
    sets: &[(String, String)],
    at: Option<u64>,
) -> Result<String, Exit> {
    let fix: Vec<String> = (keys.iter().enumerate())
        .filter(|&(i, _)| values.iter().any(|v| v[i] != values[0][i]))
        .map(|(_, k)| format!("--set {k}=VALUE"))
        .collect();
    if at.is_some() {
        eprintln!(
            "error: {path} sweeps {} points; --at shows one: fix each swept path with {}",
            values.len(),
            fix.join(" ")
        );
        return Err(Exit::Usage);
    }
    let given = sets.iter().map(|(k, v)| format!("--set {k}={v} "));
    Ok(format!("{}{}", given.collect::<String>(), fix.join(" ")))
}

/// `show` of a sweep: its table of points (the text of its golden file),
/// and how to show one point (`command`, or the exit code of its error).
/// Exits as the batch would for this file.
fn show_sweep(
    path: &str,
    command: Result<String, Exit>,
    seed: Option<u64>,
    run: impl FnOnce(&Options) -> FileResult,
) -> Exit {
    let sets = match command {
        Ok(command) => command,
        Err(code) => return code,
    };
    let opts = Options {
        seed,
        ..Options::default()
    };
    let result = run(&opts);
    let FileResult::Swept(run) = &result else {
        return Exit::Invalid;
    };
    use std::fmt::Write as _;
    let mut out = super::print::Stdout::new();
    let _ = write!(
        out,
        "{}\nshow one point: scenario-run show {path} {sets}\n",
        run.transcript(),
    );
    out.flush();
    if run.stopped() {
        Exit::Stopped
    } else if run.passed() {
        Exit::Passed
    } else {
        Exit::Failed
    }
}

/// The starter of each kind, with `{name}` and `{file}` to fill in.
fn starter(kind: super::Starter) -> &'static str {
    match kind {
        super::Starter::Queue => include_str!("starter.toml"),
        super::Starter::Log => include_str!("starter-log.toml"),
        super::Starter::Write => include_str!("starter-write.toml"),
        super::Starter::Dataflow => include_str!("starter-dataflow.toml"),
    }
}

/// `new NAME [--kind KIND]`: a commented starter scenario that passes as
/// written.
pub(super) fn new_scenario(name: &str, kind: super::Starter) -> Exit {
    let stem = std::path::Path::new(name).file_stem();
    if name.trim().is_empty() || name.chars().any(char::is_control) || stem.is_none() {
        eprintln!(
            "error: {name:?} is not a usable file name: give a name such as incident or scenarios/incident.toml, without control characters"
        );
        return Exit::Usage;
    }
    let path = if std::path::Path::new(name).extension().is_some() {
        PathBuf::from(name)
    } else {
        PathBuf::from(format!("{name}.toml"))
    };
    let title = path
        .file_stem()
        .map(|s| s.to_string_lossy().replace(['-', '_'], " "))
        .unwrap_or_else(|| "New scenario".into());
    let text = starter(kind)
        .replace("{name}", &toml::Value::String(title).to_string())
        .replace("{file}", &shell_quoted(&path.display().to_string()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    match file.and_then(|mut f| f.write_all(text.as_bytes())) {
        Ok(()) => {
            emit(&format!(
                "wrote {}; run it with: scenario-run {}\n",
                path.display(),
                shell_quoted(&path.display().to_string())
            ));
            Exit::Passed
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            eprintln!("error: {} already exists; not overwritten", path.display());
            Exit::Usage
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            if let Some(folder) = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty() && !p.exists())
            {
                eprintln!(
                    "help: the folder does not exist; create it first: mkdir -p {}",
                    shell_quoted(&folder.display().to_string())
                );
            }
            Exit::Io
        }
    }
}

/// A path as a shell reads it back: as is when it is plain, otherwise in
/// single quotes.
fn shell_quoted(path: &str) -> String {
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./+@%:,".contains(c));
    if plain && !path.is_empty() {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}
