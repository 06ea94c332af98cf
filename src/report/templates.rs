//! The report templates: built into the binary from templates/, any of them
//! overridable by a file of the same name in `--templates DIR`. Strict: an
//! undefined variable is an error, and an error is a located [`Problem`] in
//! the template's own text. Files ending in `.html.j2` are HTML-escaped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior, Value};

use crate::diagnostic::{Problem, Source};

/// The built-in templates, by file name.
pub const BUILT_IN: [(&str, &str); 17] = [
    (
        SCENARIO_MARKDOWN,
        include_str!("../../templates/scenario.md.j2"),
    ),
    (INDEX_MARKDOWN, include_str!("../../templates/index.md.j2")),
    (
        SCENARIO_HTML,
        include_str!("../../templates/scenario.html.j2"),
    ),
    (INDEX_HTML, include_str!("../../templates/index.html.j2")),
    (
        SCENARIO_SCRIPT,
        include_str!("../../templates/scenario.js.j2"),
    ),
    (TOOLS_SCRIPT, include_str!("../../templates/tools.js.j2")),
    (SWEEP_MARKDOWN, include_str!("../../templates/sweep.md.j2")),
    (SWEEP_HTML, include_str!("../../templates/sweep.html.j2")),
    (
        DATAFLOW_MARKDOWN,
        include_str!("../../templates/dataflow.md.j2"),
    ),
    (
        DATAFLOW_HTML,
        include_str!("../../templates/dataflow.html.j2"),
    ),
    (
        SUMMARY_MARKDOWN,
        include_str!("../../templates/summary.md.j2"),
    ),
    (
        CONFORMANCE_HTML,
        include_str!("../../templates/conformance.html.j2"),
    ),
    (
        TIMELINE_HTML,
        include_str!("../../templates/timeline.html.j2"),
    ),
    (PROSE, include_str!("../../templates/prose.j2")),
    (PAGE_HTML, include_str!("../../templates/page.html.j2")),
    (
        COMPARE_HTML,
        include_str!("../../templates/compare.html.j2"),
    ),
    (
        COMPARE_MARKDOWN,
        include_str!("../../templates/compare.md.j2"),
    ),
];

pub const SCENARIO_MARKDOWN: &str = "scenario.md.j2";
pub const INDEX_MARKDOWN: &str = "index.md.j2";
pub const SCENARIO_HTML: &str = "scenario.html.j2";
pub const INDEX_HTML: &str = "index.html.j2";
/// The scenario page's script, included into its one file.
pub const SCENARIO_SCRIPT: &str = "scenario.js.j2";
/// What the pages that play a run share (storage, notes, exports, full
/// screen), included into the scenario and dataflow pages.
pub const TOOLS_SCRIPT: &str = "tools.js.j2";
pub const SUMMARY_MARKDOWN: &str = "summary.md.j2";
pub const SWEEP_MARKDOWN: &str = "sweep.md.j2";
pub const SWEEP_HTML: &str = "sweep.html.j2";
pub const DATAFLOW_MARKDOWN: &str = "dataflow.md.j2";
pub const DATAFLOW_HTML: &str = "dataflow.html.j2";
pub const CONFORMANCE_HTML: &str = "conformance.html.j2";
/// The timeline's macros, imported by the scenario and comparison pages.
pub const TIMELINE_HTML: &str = "timeline.html.j2";
/// The prose the Markdown and HTML reports share: macros, one a paragraph.
pub const PROSE: &str = "prose.j2";
/// What every HTML page shares (macros): its tables that scroll sideways
/// take focus; the notes section and the presenter's bar.
pub const PAGE_HTML: &str = "page.html.j2";
pub const COMPARE_HTML: &str = "compare.html.j2";
pub const COMPARE_MARKDOWN: &str = "compare.md.j2";

/// A rendered file may be at most this large: a template that builds more
/// (a loop that repeats a large value) stops with an error.
pub const MAX_OUTPUT_BYTES: usize = 256 << 20;

/// A writer that takes at most `room` more bytes, then fails.
struct Capped<'w> {
    out: &'w mut dyn std::io::Write,
    room: usize,
    /// A failure of `out` itself (a full disk), told apart from the cap.
    failed: Option<std::io::Error>,
}

impl std::io::Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() > self.room {
            self.room = 0;
            return Err(std::io::Error::other("output limit"));
        }
        self.room -= buf.len();
        if let Err(e) = self.out.write_all(buf) {
            let kind = e.kind();
            self.failed = Some(e);
            return Err(std::io::Error::from(kind));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Why a template's output is not there.
pub enum RenderFailure {
    /// The template failed (or wrote more than its cap): a located problem.
    Template(Box<Problem>),
    /// Writing the output failed.
    Io(std::io::Error),
}

/// What `render` writes, as text: only a template problem can stop it
/// (writing to memory cannot fail).
pub fn in_memory(
    render: impl FnOnce(&mut dyn std::io::Write) -> Result<(), RenderFailure>,
) -> Result<String, Box<Problem>> {
    let mut text = Vec::new();
    match render(&mut text) {
        Err(RenderFailure::Template(p)) => Err(p),
        Ok(()) | Err(RenderFailure::Io(_)) => Ok(String::from_utf8_lossy(&text).into_owned()),
    }
}

/// Rendering stops after this much work (minijinja's fuel: one unit per
/// instruction, and one per 64 bytes of every string, list or output it
/// makes), so that a template with a runaway loop fails instead of hanging
/// and one that doubles a string fails before it holds a GiB: at most
/// 16,000,000 instructions, or 1 GiB of data made in all. The built-in
/// templates take under 1,000,000 for the largest bundled and bench
/// reports (the 10,000-message transcript, `ten-million.toml`).
const FUEL: u64 = 16_000_000;

/// Largest template file read from `--templates DIR`.
const MAX_TEMPLATE_BYTES: u64 = 4 << 20;

/// The templates of one batch.
pub struct Templates {
    env: Environment<'static>,
    /// Where each template came from, for diagnostics.
    origins: BTreeMap<String, String>,
}

impl Templates {
    /// The built-in templates, overridden by the `*.j2` files of `dir`.
    pub fn load(dir: Option<&Path>) -> Result<Templates, Vec<Problem>> {
        let mut sources: BTreeMap<String, (String, String)> = BUILT_IN
            .iter()
            .map(|(name, text)| {
                (
                    name.to_string(),
                    (format!("templates/{name} (built in)"), text.to_string()),
                )
            })
            .collect();
        if let Some(dir) = dir {
            for (name, path, text) in read_dir(dir)? {
                sources.insert(name, (path.display().to_string(), text));
            }
            unused_files(&sources)?;
        }
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_debug(true);
        env.set_fuel(Some(FUEL));
        if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
        {
            env.set_syntax(syntax);
        }
        env.add_filter("duration", duration);
        env.add_filter("cell", cell);
        env.add_filter("text", text);
        env.add_filter("code", code);
        env.add_filter("markdown", markdown);
        env.add_filter("inline_markdown", inline_markdown);
        env.add_filter("mermaid", mermaid);
        // The totals that are durations (milliseconds in JSON), from the
        // measures' own units: a template writes `name in time_totals`.
        env.add_global("time_totals", Value::from(time_totals()));
        // Who each transition without a message is about, by kind: the
        // transcript's word (`text::actor_of`).
        env.add_global("actors", Value::from(actors()));
        let mut origins = BTreeMap::new();
        let mut problems = Vec::new();
        for (name, (origin, text)) in sources {
            origins.insert(name.clone(), origin.clone());
            if let Err(e) = env.add_template_owned(name, text.clone()) {
                problems.push(problem(&origin, &text, &e));
            }
        }
        if problems.is_empty() {
            Ok(Templates { env, origins })
        } else {
            Err(problems)
        }
    }

    /// Renders template `name` with `ctx`.
    pub fn render(&self, name: &str, ctx: Value) -> Result<String, Box<Problem>> {
        in_memory(|out| self.render_to(name, ctx, out))
    }

    /// Renders template `name` with `ctx` into `out` as it goes, at most
    /// [`MAX_OUTPUT_BYTES`] of it.
    pub fn render_to(
        &self,
        name: &str,
        ctx: Value,
        out: &mut dyn std::io::Write,
    ) -> Result<(), RenderFailure> {
        let mut out = Capped {
            out,
            room: MAX_OUTPUT_BYTES,
            failed: None,
        };
        let result = self
            .env
            .get_template(name)
            .and_then(|t| t.render_captured_to(ctx.clone(), &mut out).map(|_| ()));
        if let Some(e) = out.failed {
            return Err(RenderFailure::Io(e));
        }
        if out.room == 0 && result.is_err() {
            return Err(RenderFailure::Template(Box::new(
                Problem::new(
                    &crate::diagnostic::Source::new(name, ""),
                    None,
                    format!(
                        "the template {name} wrote more than {} MiB; rendering stopped",
                        MAX_OUTPUT_BYTES >> 20
                    ),
                    "",
                )
                .with_help("a report of this size is a template that loops more than it should"),
            )));
        }
        result.map_err(|e| {
            let failing = e.name().unwrap_or(name).to_string();
            let origin = self
                .origins
                .get(&failing)
                .cloned()
                .unwrap_or_else(|| failing.clone());
            let text = e.template_source().unwrap_or_default().to_string();
            let mut p = problem(&origin, &text, &e);
            if e.kind() == ErrorKind::UndefinedError
                && let Some(help) = e
                    .range()
                    .and_then(|r| text.get(r))
                    .and_then(|expr| suggest(&ctx, expr))
            {
                p = p.with_help(help);
            }
            RenderFailure::Template(Box::new(p))
        })
    }
}

/// A file of `--templates DIR` that overrides no built-in template and that
/// no template includes, imports or extends would be silently ignored: most
/// often a misspelt name. It is refused.
fn unused_files(sources: &BTreeMap<String, (String, String)>) -> Result<(), Vec<Problem>> {
    let built_in: Vec<&str> = BUILT_IN.iter().map(|(name, _)| *name).collect();
    let referenced = |name: &str| {
        sources.values().any(|(_, text)| {
            text.contains(&format!("\"{name}\"")) || text.contains(&format!("'{name}'"))
        })
    };
    let problems: Vec<Problem> = sources
        .iter()
        .filter(|(name, _)| !built_in.contains(&name.as_str()) && !referenced(name))
        .map(|(name, (origin, _))| {
            let help = match crate::diagnostic::did_you_mean(name, built_in.iter().copied()) {
                Some(close) => format!("did you mean {close}?"),
                None => format!(
                    "templates are {}; a partial must be included by one of them",
                    built_in.join(", ")
                ),
            };
            Problem::new(
                &Source::new(origin, ""),
                None,
                format!("{origin} overrides no template and no template uses it"),
                "",
            )
            .with_help(help)
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn read_dir(dir: &Path) -> Result<Vec<(String, PathBuf, String)>, Vec<Problem>> {
    let fail = |msg: String| {
        vec![Problem::new(
            &Source::new(dir.display().to_string(), ""),
            None,
            msg,
            "",
        )]
    };
    let entries = std::fs::read_dir(dir).map_err(|e| {
        fail(format!(
            "cannot read the templates folder {}: {e}",
            dir.display()
        ))
    })?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| fail(format!("cannot read {}: {e}", dir.display())))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".j2") || !path.is_file() {
            continue;
        }
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        if size > MAX_TEMPLATE_BYTES {
            return Err(fail(format!(
                "{} is {size} bytes; templates are limited to {MAX_TEMPLATE_BYTES}",
                path.display()
            )));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?;
        out.push((name, path, text));
    }
    out.sort();
    Ok(out)
}

/// A template error as a located problem in the template's text.
fn problem(origin: &str, text: &str, e: &Error) -> Problem {
    let source = Source::new(origin, text);
    let span = e.range().or_else(|| {
        // Without a span, point at the line.
        let line = e.line()?;
        let start: usize = text
            .split_inclusive('\n')
            .take(line - 1)
            .map(str::len)
            .sum();
        let len = text[start.min(text.len())..].find('\n').unwrap_or(0);
        Some(start..start + len)
    });
    let what = match e.kind() {
        ErrorKind::UndefinedError => "undefined value",
        ErrorKind::SyntaxError => "syntax error",
        ErrorKind::TemplateNotFound => "template not found",
        ErrorKind::OutOfFuel => {
            "the template did too much work (a runaway loop, or a string that keeps growing?)"
        }
        _ => "template error",
    };
    let detail = e.detail().unwrap_or("");
    let message = if detail.is_empty() {
        format!("{what} in {origin}")
    } else {
        format!("{what} in {origin}: {detail}")
    };
    Problem::new(&source, span, message, what)
        .with_help("docs/reports.md (Templates) lists the data each template receives")
}

/// For an undefined `a.b.c` whose `a.b` exists: the closest key and the
/// keys there are.
fn suggest(ctx: &Value, expr: &str) -> Option<String> {
    let parts: Vec<&str> = expr.trim().split('.').map(str::trim).collect();
    let is_name = |p: &&str| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_');
    if parts.len() < 2 || !parts.iter().all(is_name) {
        return None;
    }
    let (last, path) = parts.split_last()?;
    let mut parent = ctx.clone();
    for part in path {
        parent = parent.get_attr(part).ok().filter(|v| !v.is_undefined())?;
    }
    let keys: Vec<String> = parent
        .try_iter()
        .ok()?
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect();
    if keys.is_empty() {
        return None;
    }
    let there = path.join(".");
    let mut help = match crate::diagnostic::did_you_mean(last, keys.iter().map(String::as_str)) {
        Some(k) => format!("did you mean `{there}.{k}`? "),
        None => String::new(),
    };
    help.push_str(&format!("`{there}` has: {}", keys.join(", ")));
    Some(help)
}

mod filters;
use filters::{cell, code, duration, inline_markdown, markdown, mermaid, text};

#[cfg(test)]
mod tests;

/// The names of the totals measured in time (`Unit::Time` or
/// `Unit::MaybeTime`), which reports write as durations.
fn actors() -> BTreeMap<&'static str, &'static str> {
    (crate::model::EventKind::ALL.iter())
        .filter(|k| !k.has_message())
        .map(|&k| (k.as_str(), crate::words::line::actor_of(k)))
        .collect()
}

fn time_totals() -> Vec<&'static str> {
    use crate::model::{Total, Unit};
    Total::ALL
        .iter()
        .filter(|t| matches!(t.unit(), Unit::Time | Unit::MaybeTime))
        .map(|t| t.name())
        .collect()
}
