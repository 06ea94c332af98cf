//! The subcommands besides running: `check`, `show`, `new`, `schema`.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;

use super::print::{emit, paint};
use super::{EXIT_INVALID, EXIT_PASSED};
use crate::app::{LoadError, batch, expand, load_file};
use crate::diagnostic::render;
use crate::engine::{self, Recorder};
use crate::report::text;

pub(super) fn check(patterns: &[String], color: bool) -> u8 {
    let files = match expand(patterns) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INVALID;
        }
    };
    let (mut valid, mut invalid) = (0, 0);
    let mut out = String::new();
    for path in &files {
        match load_file(path) {
            Ok(_) => {
                valid += 1;
                out += &format!("{}  {path}\n", paint("OK", "32", color));
            }
            Err(LoadError::Invalid(inv)) => {
                invalid += 1;
                out += &format!("{}  {path}\n", paint("INVALID", "31", color));
                for p in &inv.problems {
                    out += &format!("{}\n", render(p, color));
                }
            }
            Err(LoadError::Unreadable(e)) => {
                invalid += 1;
                out += &format!(
                    "{}  {path}: cannot read: {e}\n",
                    paint("INVALID", "31", color)
                );
            }
        }
    }
    out += &format!("{valid} valid, {invalid} invalid\n");
    emit(&out);
    if invalid > 0 {
        EXIT_INVALID
    } else {
        EXIT_PASSED
    }
}

pub(super) fn show(path: &str, at: Option<u64>, seed: Option<u64>, color: bool) -> u8 {
    let (mut scenario, source) = match load_file(path) {
        Ok(ok) => ok,
        Err(LoadError::Unreadable(e)) => {
            eprintln!("error: cannot read {path}: {e}");
            return EXIT_INVALID;
        }
        Err(LoadError::Invalid(inv)) => {
            for p in &inv.problems {
                eprintln!("{}", render(p, color));
            }
            return EXIT_INVALID;
        }
    };
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    let result = match at {
        Some(t) => engine::run_until(&scenario, Recorder::All, t),
        None => engine::run(&scenario, Recorder::All),
    };
    match result {
        Ok(outcome) => {
            emit(&text::transcript(&scenario, &outcome));
            EXIT_PASSED
        }
        Err(limit) => {
            eprintln!(
                "{}",
                render(&batch::limit_problem(&source, &scenario, &limit), color)
            );
            EXIT_INVALID
        }
    }
}

/// The JSON Schema of the scenario format.
pub fn schema() -> String {
    let schema = schemars::schema_for!(crate::scenario::file::File);
    let mut schema = serde_json::to_value(&schema).unwrap_or_default();
    drop_null(&mut schema);
    schema["title"] = json!("scenario-run scenario file");
    schema["description"] = json!(
        "A scenario for scenario-run (TOML): messages, faults, retries, quarantine, \
         operator steps, deduplication and expected outcomes."
    );
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

/// TOML has no null (an absent key is the only "none"): removes the null
/// alternative schemars gives every `Option`.
fn drop_null(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Array(any)) = map.get_mut("anyOf") {
                any.retain(|s| s.get("type") != Some(&json!("null")));
                if any.len() == 1 {
                    let only = any.remove(0);
                    map.remove("anyOf");
                    if let serde_json::Value::Object(only) = only {
                        for (k, val) in only {
                            map.entry(k).or_insert(val);
                        }
                    }
                }
            }
            if let Some(serde_json::Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let t = types.remove(0);
                    map.insert("type".into(), t);
                }
            }
            map.values_mut().for_each(drop_null);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_null),
        _ => {}
    }
}

const STARTER: &str = include_str!("starter.toml");

/// `new NAME`: a commented starter scenario that passes as written.
pub(super) fn new_scenario(name: &str) -> u8 {
    let stem = std::path::Path::new(name).file_stem();
    if name.trim().is_empty() || name.chars().any(char::is_control) || stem.is_none() {
        eprintln!(
            "error: {name:?} is not a usable file name: give a name such as incident or scenarios/incident.toml, without control characters"
        );
        return EXIT_INVALID;
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
    let text = STARTER
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
            EXIT_PASSED
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            eprintln!("error: {} already exists; not overwritten", path.display());
            EXIT_INVALID
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
            EXIT_INVALID
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
