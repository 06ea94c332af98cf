//! The application layer: what a command asks for, done without knowing
//! the command line. Loading scenario files, running and judging a batch,
//! golden comparison, JUnit and report files. `cli` turns arguments into a
//! [`BatchRequest`], and prints the [`Batch`] it gets back.

pub mod batch;
pub mod compare;
pub mod entry;
mod exit;
pub mod golden;
pub mod junit;
pub mod merge;
pub mod reports;
pub mod result;
mod shard_text;
pub mod shards;
pub mod sweep;

use std::path::PathBuf;

/// A set's value that removes its path (`--unset PATH`).
pub use crate::scenario::sweep::UNSET;
pub use batch::{
    FileResult, LoadError, Loaded, Options, Ran, expand, load_file, run_all, run_file,
};
pub use exit::Exit;
pub use reports::{ReportError, ReportFormat};
pub use result::Transcript;

use crate::report::templates::Templates;

/// The JSON Schema of every file the tool reads: a queue scenario or a
/// dataflow (`scenario-run schema`, and the lab's controls).
pub fn schema() -> String {
    crate::scenario::schema::combined(crate::scenario::schema::queue(), crate::dataflow::schema())
}

/// A batch run, as the command line asked for it.
#[derive(Debug, Clone, Default)]
pub struct BatchRequest {
    /// The scenario files, globs already expanded (all of them, also when
    /// this run is one shard of the batch).
    pub files: Vec<String>,
    pub options: Options,
    /// Scenarios run at once; `None`: the number of CPUs.
    pub jobs: Option<usize>,
    pub golden: Option<GoldenRequest>,
    /// Where to write JUnit XML.
    pub junit: Option<PathBuf>,
    pub report: Option<ReportRequest>,
    /// Where to append the batch's Markdown table.
    pub summary_markdown: Option<PathBuf>,
    /// Templates that override the built-in ones.
    pub templates: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct GoldenRequest {
    pub dir: PathBuf,
    /// Write the transcripts as the new golden files.
    pub bless: bool,
}

#[derive(Debug, Clone)]
pub struct ReportRequest {
    pub dir: PathBuf,
    pub formats: Vec<ReportFormat>,
}

/// A finished batch: each file's result in input order, and what the
/// golden comparison and the report writing did.
pub struct Batch {
    pub files: Vec<String>,
    pub results: Vec<FileResult>,
    /// Per file, the golden verdict (with `--golden`, for files that ran).
    pub goldens: Vec<Option<golden::Verdict>>,
    /// The batch as the index, JUnit and `merge` read it.
    pub record: entry::Record,
    /// Report files written.
    pub reports_written: Vec<PathBuf>,
}

/// Why a batch could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// A request that cannot be carried out.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// An output folder that cannot be used (a link to nothing).
    #[error(transparent)]
    Folder(std::io::Error),
    /// Templates that do not load or render, or a file that cannot be
    /// written.
    #[error(transparent)]
    Output(#[from] ReportError),
}

impl BatchError {
    /// How the command ends.
    pub fn exit(&self) -> Exit {
        match self {
            BatchError::Usage(_) => Exit::Usage,
            BatchError::Output(ReportError::Template(_)) => Exit::Invalid,
            BatchError::Folder(_) | BatchError::Output(_) => Exit::Io,
        }
    }

    /// The error as printed: located template problems, or one line.
    pub fn render(&self, color: bool) -> String {
        match self {
            BatchError::Output(e) => e.render(color),
            e => format!("error: {e}\n"),
        }
    }
}

/// A batch request that cannot be carried out as asked.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// A `--filter` or `--tag` that selects none of the valid files.
    #[error(
        "{what} selects none of the {filtered} scenarios; --filter matches names and paths, --tag the scenarios' tags (both ignore case)"
    )]
    NothingSelected { what: String, filtered: usize },
    /// `--report` names a file.
    #[error("--report {} is a file, not a folder", .0.display())]
    ReportIsAFile(PathBuf),
    /// Two files whose golden transcripts would have the same name.
    #[error("{0} and {1} would share one golden file; give them different file names")]
    SharedGolden(String, String),
}

/// A `--filter` or `--tag` that selects none of the valid files is a
/// mistake (a typo in CI would otherwise run nothing and pass).
fn nothing_selected(options: &Options, results: &[FileResult]) -> Result<(), BatchError> {
    let selecting = options.filter.is_some() || !options.tag.is_empty();
    let filtered = results
        .iter()
        .filter(|r| matches!(r, FileResult::Filtered))
        .count();
    let selected = results
        .iter()
        .filter(|r| {
            matches!(
                r,
                FileResult::Ran(_)
                    | FileResult::Swept(_)
                    | FileResult::Stopped { .. }
                    | FileResult::Elsewhere
            )
        })
        .count();
    if !selecting || selected > 0 || filtered == 0 {
        return Ok(());
    }
    let mut what = Vec::new();
    if let Some(f) = &options.filter {
        what.push(format!("--filter {f:?}"));
    }
    if !options.tag.is_empty() {
        what.push(format!("--tag {:?}", options.tag.join(",")));
    }
    Err(UsageError::NothingSelected {
        what: what.join(" with "),
        filtered,
    }
    .into())
}

/// Runs a batch: every file (in parallel, results in input order), then
/// the golden comparison, the JUnit file, the reports and the summary.
/// Templates are loaded before anything runs; reports are all rendered
/// before any is written. `done` is called as each file finishes.
pub fn run_batch(request: &BatchRequest, done: &(dyn Fn() + Sync)) -> Result<Batch, BatchError> {
    let templates = if request.report.is_some() || request.summary_markdown.is_some() {
        Some(
            Templates::load(request.templates.as_deref())
                .map_err(|problems| BatchError::Output(ReportError::Template(problems)))?,
        )
    } else {
        None
    };
    let files = &request.files;
    if let Some(report) = &request.report
        && report.dir.exists()
        && !report.dir.is_dir()
    {
        return Err(UsageError::ReportIsAFile(report.dir.clone()).into());
    }
    let folders = [
        request.report.as_ref().map(|r| &r.dir),
        request.golden.as_ref().map(|g| &g.dir),
    ];
    if let Some(e) = folders
        .into_iter()
        .flatten()
        .find_map(|d| crate::output::dangling(d))
    {
        return Err(BatchError::Folder(e));
    }
    if let Some(g) = &request.golden
        && let Some((a, b)) = golden::collision(&g.dir, files)
    {
        return Err(UsageError::SharedGolden(a, b).into());
    }
    // More threads than CPUs would only cost memory: the work is CPU-bound.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = request.jobs.unwrap_or(cpus).min(cpus);
    let results = run_all(files, &request.options, jobs, done);
    nothing_selected(&request.options, &results)?;
    let goldens = match &request.golden {
        Some(g) => golden::compare(&g.dir, g.bless, files, &results),
        None => results.iter().map(|_| None).collect(),
    };
    let names = match &request.report {
        Some(_) => reports::report_names_for(files, &results),
        None => results.iter().map(|_| None).collect(),
    };
    let shard = request.options.shard.map(|(index, count)| {
        let o = &request.options;
        let mut options = vec![
            format!("seed={:?}", o.seed),
            format!("filter={:?}", o.filter),
            format!("tag={:?}", o.tag),
            format!("fail_fast={}", o.fail_fast),
            format!("golden={}", request.golden.is_some()),
        ];
        options.extend(o.sets.iter().map(|(k, v)| format!("set {k}={v}")));
        entry::ShardOf {
            index,
            count,
            files: files.len(),
            batch: entry::batch_identity(files, &options),
        }
    });
    let record = entry::Record::new(entry::entries(files, &results, &goldens, &names), shard);
    if let Some(path) = &request.junit {
        let xml = junit::junit_xml(&record.scenarios);
        crate::output::write_atomic(path, &xml).map_err(|e| ReportError::write(path, e))?;
    }
    let mut reports_written = Vec::new();
    if let (Some(report), Some(t)) = (&request.report, &templates) {
        let mut formats = report.formats.clone();
        formats.sort();
        formats.dedup();
        reports_written = reports::write_reports(&report.dir, &formats, t, &results, &record)
            .map_err(BatchError::Output)?;
    }
    if let (Some(path), Some(t)) = (&request.summary_markdown, &templates) {
        reports::append_summary(path, t, &record).map_err(BatchError::Output)?;
    }
    Ok(Batch {
        files: files.clone(),
        results,
        goldens,
        record,
        reports_written,
    })
}
