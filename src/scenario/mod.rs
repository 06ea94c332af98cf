//! Reading a scenario file: TOML with spans, then validation into the
//! model. Every problem is located; nothing runs until the file is valid.

mod alarms;
mod collisions;
pub(crate) mod expect;
pub mod file;
mod file_expect;
mod file_guarantees;
mod file_shapes;
mod flow;
mod guarantees;
mod log;
mod messages;
pub(crate) mod points;
pub(crate) mod problems;
pub(crate) mod questions;
pub(crate) mod reading;
mod rows;
pub mod schema;
pub mod spanned;
pub(crate) mod sweep;
pub(crate) mod toml_errors;
pub(crate) mod validate;
mod write;

use crate::diagnostic::{Problem, Source};
use crate::model::Scenario;

pub use problems::{MAX_DESCRIPTION, MAX_ID, MAX_NAME, MAX_REASON, MAX_SUMMARY};

/// Files larger than this are refused before parsing.
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// A file shows at most this many problems (then one that says how many
/// more were found): each is located and rendered from the file's text,
/// so thousands would cost time and output without helping anyone.
pub const MAX_PROBLEMS: usize = 100;

/// A file that could not become a scenario, with every problem found (at
/// most [`MAX_PROBLEMS`] of them, then how many more).
#[derive(Debug)]
pub struct Invalid {
    pub source: Source,
    pub problems: Vec<Problem>,
}

/// Reads and validates a scenario from raw bytes.
pub fn load_bytes(
    name: &str,
    bytes: &[u8],
    sets: &[(String, String)],
) -> Result<(Loaded, Source), Box<Invalid>> {
    load(name, text_of(name, bytes)?, sets)
}

/// A file's bytes as text: at most [`MAX_FILE_BYTES`], UTF-8, or a
/// located problem.
pub fn text_of<'b>(name: &str, bytes: &'b [u8]) -> Result<&'b str, Box<Invalid>> {
    if bytes.len() > MAX_FILE_BYTES {
        let source = Source::new(name, "");
        let p = Problem::new(
            &source,
            None,
            format!("the file is larger than {MAX_FILE_BYTES} bytes, the limit for scenario files"),
            "",
        )
        .with_help(
            "describe large traffic with a [[traffic]] generator instead of listing messages",
        );
        return Err(Box::new(Invalid {
            source,
            problems: vec![p],
        }));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        let source = Source::new(name, String::from_utf8_lossy(bytes).into_owned());
        let at = e.valid_up_to();
        let p = Problem::new(
            &source,
            Some(at..at + 1),
            "the file is not valid UTF-8",
            "this byte is not UTF-8",
        )
        .with_help("save the scenario as UTF-8 text");
        Box::new(Invalid {
            source,
            problems: vec![p],
        })
    })
}

/// Whether a file is a dataflow scenario: it has `[[node]]` entries (a
/// file that does not parse is not; its problems are a queue file's).
pub fn is_dataflow(text: &str) -> bool {
    let (root, _) = toml::de::DeTable::parse_recoverable(text);
    root.get_ref()
        .iter()
        .any(|(k, _)| k.get_ref().as_ref() == "node")
}

/// Reads and validates a scenario from text. A sweep is refused: use
/// [`load`] for files that may sweep.
pub fn load_str(name: &str, text: &str) -> Result<(Scenario, Source), Box<Invalid>> {
    let (loaded, source) = load(name, text, &[])?;
    match loaded {
        Loaded::One(scenario) => Ok((*scenario, source)),
        Loaded::Sweep(sweep) => Err(sweeps(source, sweep.span, sweep.points.len())),
    }
}

/// The problem of a file read as one run that sweeps `points` points.
pub(crate) fn sweeps(source: Source, span: std::ops::Range<usize>, points: usize) -> Box<Invalid> {
    let p = Problem::new(
        &source,
        Some(span),
        format!("this file sweeps {points} points"),
        "a sweep",
    );
    Box::new(Invalid {
        source,
        problems: vec![p],
    })
}

/// Every queue scenario a file describes: itself, or each point of its
/// sweep; a dataflow file describes none.
pub fn scenarios(name: &str, text: &str) -> Result<Vec<Scenario>, Box<Invalid>> {
    if is_dataflow(text) {
        return Ok(Vec::new());
    }
    Ok(match load(name, text, &[])?.0 {
        Loaded::One(scenario) => vec![*scenario],
        Loaded::Sweep(sweep) => sweep.points.into_iter().map(|p| p.scenario).collect(),
    })
}

/// Every scenario of the bundled files (`scenarios/*.toml` and
/// `scenarios/conformance/*.toml`, each sweep's points), with its file:
/// for tests that check a rule over all of them.
#[cfg(test)]
pub fn bundled() -> Vec<(std::path::PathBuf, Scenario)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .chain(std::fs::read_dir(format!("{dir}/conformance")).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let all = scenarios("s.toml", &text).unwrap();
            all.into_iter().map(move |s| (path.clone(), s))
        })
        .collect()
}

/// A valid file: one scenario, or a sweep of points.
pub enum Loaded {
    One(Box<Scenario>),
    Sweep(Sweep),
}

/// A scenario run over the cartesian product of `[sweep]` values.
pub struct Sweep {
    /// The swept paths, in file order.
    pub keys: Vec<String>,
    /// The measures `[sweep] columns` lists.
    pub columns: Vec<crate::model::Total>,
    /// Each point's values (as TOML writes them, in the order of `keys`)
    /// and its scenario; the first key varies slowest.
    pub points: Vec<Point>,
    /// The `[sweep]` table.
    pub span: std::ops::Range<usize>,
}

pub struct Point {
    pub values: Vec<String>,
    pub scenario: Scenario,
}

/// A point by its values: "delivery.max_receives = 3,
/// traffic.1.mix.1.share = 0.05" (`values` as TOML writes them, in the
/// order of `keys`).
pub fn describe_point(keys: &[String], values: &[String]) -> String {
    keys.iter()
        .zip(values)
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads and validates a file, with `sets` (`--set PATH=VALUE`) written in
/// place first; a `[sweep]` gives one scenario per point, every point
/// valid before any runs.
pub fn load(
    name: &str,
    text: &str,
    sets: &[(String, String)],
) -> Result<(Loaded, Source), Box<Invalid>> {
    let (full, source) = prepared(name, text, sets);
    let invalid = |mut problems: Vec<Problem>| {
        if problems.len() > MAX_PROBLEMS {
            let more = problems.len() - MAX_PROBLEMS;
            problems.truncate(MAX_PROBLEMS);
            problems.push(
                Problem::new(
                    &source,
                    None,
                    format!("{more} more problems were found and are not shown"),
                    "",
                )
                .with_help(format!(
                    "a file shows its first {MAX_PROBLEMS} problems; fix these and check again"
                )),
            );
        }
        Box::new(Invalid {
            source: source.clone(),
            problems,
        })
    };
    if text.trim().is_empty() {
        let p = Problem::new(&source, None, "the file is empty", "").with_help(
            "a scenario needs at least a [delivery] table and one [[message]] or [[traffic]]; \
             scenarios/ holds commented examples",
        );
        return Err(invalid(vec![p]));
    }
    let stem = std::path::Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    let root = reading::syntax(&source, &full).map_err(|u| invalid(u.problems(|_| Vec::new())))?;
    let loaded = points::load_points(&source, root, &stem).map_err(invalid)?;
    Ok((loaded, source))
}

/// A file's text with `sets` (`--set PATH=VALUE`) appended as the table
/// the readers take them from, and its source for diagnostics.
pub(crate) fn prepared(name: &str, text: &str, sets: &[(String, String)]) -> (String, Source) {
    if sets.is_empty() {
        (text.to_string(), Source::new(name, text))
    } else {
        let full = format!("{text}{}", sweep::set_table(sets));
        let from = text.len() + sweep::set_header().len();
        let source = Source::with_sets(name, full.as_str(), from);
        (full, source)
    }
}

/// Reads a document into a scenario: types, then meaning, every problem
/// in one pass.
fn read_and_validate(
    source: &Source,
    root: reading::Root<'_>,
    stem: &str,
    points: Vec<file::S<file::Expect>>,
) -> Result<Scenario, Vec<Problem>> {
    match reading::read(source, root) {
        Ok(raw) => validate::validate(source, raw, stem, points),
        Err(unreadable) => Err(unreadable.problems(|raw| {
            validate::validate(source, raw, stem, points)
                .err()
                .unwrap_or_default()
        })),
    }
}
