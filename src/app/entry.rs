//! A file of a batch as the index, the JUnit file, the step summary and
//! `merge` read it: an [`Entry`]. A run builds its entries from its
//! results; `merge` reads them back from each shard's JSON and combines
//! them, so that a merged batch is rendered by the very code that renders
//! an unsharded one.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::golden::{self, Verdict};
use super::result::{FileResult, Ran, SweepRun};
use crate::diagnostic::Located;
use crate::report::junit_xml::Case;

/// One file's line of the batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The file's position in the batch's expanded file list (0-based).
    pub position: usize,
    pub file: String,
    pub name: String,
    pub summary: Option<String>,
    pub seed: Option<u64>,
    /// passed, failed, invalid or stopped (a golden transcript that does
    /// not match makes a passed file failed).
    pub status: String,
    /// `{ file, status }` of the golden comparison.
    pub golden: Option<Golden>,
    /// The report's file name without extension, when reports were written.
    pub report: Option<String>,
    pub expectations_total: usize,
    pub expectations_passed: usize,
    /// The run's totals: a flat object of measures (at most
    /// [`MAX_TOTALS`], each a number, a string, a boolean or null); a
    /// shard's that is anything else is refused as it is read.
    #[serde(deserialize_with = "flat_totals")]
    pub totals: Option<Json>,
    pub points: Option<usize>,
    pub points_passed: Option<usize>,
    pub problems: Vec<Located>,
    /// The JUnit testcases: one per expectation, one per problem of an
    /// invalid file, one for the golden transcript (a sweep's points hold
    /// their own: see [`Entry::all_cases`]).
    pub cases: Vec<Case>,
    /// A sweep's points, each on its own (what `merge` recombines when a
    /// sweep's points ran on several shards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepPart>,
}

/// A golden comparison: the golden file and the verdict's word (same,
/// written, missing, differs, error; `merge` when the sweep's points ran
/// on several shards and `merge` compares the reassembled table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Golden {
    pub file: String,
    pub status: String,
}

/// A sweep's table header, its number of points, and the points this
/// batch ran (all of them, or a shard's share).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPart {
    pub header: Vec<String>,
    pub points_total: usize,
    pub points: Vec<PointPart>,
}

/// One point of a sweep: its position among the sweep's points (0-based),
/// its status, its row of the table, its testcases and problems.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointPart {
    pub index: usize,
    pub status: String,
    pub row: Vec<String>,
    pub cases: Vec<Case>,
    pub problems: Vec<Located>,
}

impl Entry {
    pub fn passed(&self) -> bool {
        self.status == "passed"
    }

    /// Every JUnit testcase: a sweep's points' (in point order), then the
    /// file's own.
    pub fn all_cases(&self) -> impl Iterator<Item = &Case> {
        let points = self.sweep.iter().flat_map(|s| &s.points);
        points.flat_map(|p| &p.cases).chain(&self.cases)
    }
}

/// An entry's totals hold at most this many measures (a run lists about
/// 40): `merge` reads a shard's totals no further.
pub const MAX_TOTALS: usize = 256;

/// Reads an entry's totals as a run writes them, a flat object of at
/// most [`MAX_TOTALS`] scalars, failing at the first thing that is not:
/// a shard cannot make `merge` build an array or an object of any size
/// there (a 100 MB array of zeros took 6 GB as JSON values).
fn flat_totals<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Json>, D::Error> {
    use serde::de::{Error, MapAccess, Visitor};
    struct Totals;
    impl<'de> Visitor<'de> for Totals {
        type Value = Option<Json>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "null or an object of at most {MAX_TOTALS} measures")
        }
        fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = serde_json::Map::new();
            while let Some(key) = map.next_key::<String>()? {
                if out.len() == MAX_TOTALS {
                    return Err(A::Error::custom(format!(
                        "totals hold more than {MAX_TOTALS} measures"
                    )));
                }
                let Scalar(value) = map.next_value()?;
                out.insert(key, value);
            }
            Ok(Some(Json::Object(out)))
        }
    }
    d.deserialize_option(Totals)
}

/// One measure of the totals: a number, a string, a boolean or null; an
/// array or an object is refused before anything of it is read.
struct Scalar(Json);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, Visitor};
        struct V;
        impl Visitor<'_> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a number, a string, a boolean or null")
            }
            fn visit_unit<E: Error>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E: Error>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Json, E> {
                Ok(v.into())
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<Json, E> {
                Ok(v.into())
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<Json, E> {
                Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Json, E> {
                Ok(Json::String(v.to_string()))
            }
        }
        d.deserialize_any(V).map(Scalar)
    }
}

/// The entries of the files that count (not filtered, skipped or left to
/// another shard), in input order. `names` are the report names.
pub fn entries(
    files: &[String],
    results: &[FileResult],
    goldens: &[Option<Verdict>],
    names: &[Option<String>],
) -> Vec<Entry> {
    files
        .iter()
        .zip(results)
        .zip(goldens)
        .zip(names)
        .enumerate()
        .filter(|(_, (((_, r), _), _))| r.counts())
        .map(|(position, (((file, r), golden), name))| {
            entry(position, file, r, golden.as_ref(), name.clone())
        })
        .collect()
}

/// One file's entry.
pub fn entry(
    position: usize,
    file: &str,
    r: &FileResult,
    verdict: Option<&Verdict>,
    report: Option<String>,
) -> Entry {
    let meta = r.meta();
    let (total, passed) = match r {
        FileResult::Ran(ran) => (
            ran.verdicts.len(),
            ran.verdicts.iter().filter(|v| v.passed).count(),
        ),
        FileResult::Dataflow(d) => (
            d.verdicts.len(),
            d.verdicts.iter().filter(|v| v.passed).count(),
        ),
        _ => (0, 0),
    };
    let sweep = match r {
        FileResult::Swept(s) => Some(sweep_part(file, s)),
        _ => None,
    };
    let golden = match (verdict, r) {
        (Some(v), _) => Some(Golden {
            file: v.path().display().to_string(),
            status: v.word().to_string(),
        }),
        _ => None,
    };
    let mut cases = match (r, &sweep) {
        (FileResult::Ran(ran), _) => expectation_cases(file, ran),
        (FileResult::Dataflow(d), _) if d.run.is_ok() => dataflow_cases(file, d),
        (_, Some(_)) => Vec::new(),
        _ => problem_cases(file, r),
    };
    // A golden table left to `merge` gets its testcase there.
    cases.extend(
        verdict
            .filter(|v| !matches!(v, Verdict::AtMerge(_)))
            .map(|v| golden_case(v.problem(file))),
    );
    Entry {
        position,
        file: file.to_string(),
        name: meta.map_or_else(|| file.to_string(), |m| m.name.to_string()),
        summary: meta.and_then(|m| m.summary.map(str::to_string)),
        seed: meta.map(|m| m.seed),
        status: golden::status(r, verdict).to_string(),
        golden,
        report,
        expectations_total: total,
        expectations_passed: passed,
        totals: match r {
            FileResult::Ran(ran) => Some(crate::report::json::totals(&ran.scenario, &ran.outcome)),
            _ => None,
        },
        points: sweep.as_ref().map(|s| s.points.len()),
        points_passed: sweep
            .as_ref()
            .map(|s| s.points.iter().filter(|p| p.status == "passed").count()),
        problems: golden::problems(file, r, verdict),
        cases,
        sweep,
    }
}

/// The testcase of a golden comparison, failed with its problem.
pub fn golden_case(failure: Option<Located>) -> Case {
    Case {
        name: "golden transcript matches".to_string(),
        line: None,
        failure,
    }
}

fn sweep_part(file: &str, sweep: &SweepRun) -> SweepPart {
    let rows = sweep.rows();
    let problems = sweep.point_problems();
    let points = sweep
        .points
        .iter()
        .zip(rows)
        .zip(problems)
        .map(|((point, row), problems)| {
            let at = sweep.describe(point);
            let cases = match &point.result {
                FileResult::Ran(ran) => expectation_cases(file, ran),
                FileResult::Dataflow(d) if d.run.is_ok() => dataflow_cases(file, d),
                other => problem_cases(file, other),
            };
            PointPart {
                index: point.index,
                status: point.result.status().to_string(),
                row,
                cases: cases
                    .into_iter()
                    .map(|c| Case {
                        name: format!("[{at}] {}", c.name),
                        ..c
                    })
                    .collect(),
                problems,
            }
        })
        .collect();
    SweepPart {
        header: sweep.header(),
        points_total: sweep.points_total,
        points,
    }
}

/// A case per expectation, named by what it checks, on the line the
/// expectation is written.
fn expectation_cases(file: &str, ran: &Ran) -> Vec<Case> {
    cases_of(file, &ran.source.text, &ran.verdicts, &ran.failures, |i| {
        let e = &ran.scenario.expectations[i];
        (e.span.start, crate::expect::describe(&ran.scenario, e))
    })
}

/// The cases of a dataflow file's expectations.
fn dataflow_cases(file: &str, ran: &crate::dataflow::Ran) -> Vec<Case> {
    cases_of(file, &ran.source.text, &ran.verdicts, &ran.failures, |i| {
        let e = &ran.flow.expectations[i];
        (e.span.start, crate::dataflow::model::describe(&ran.flow, e))
    })
}

/// A case per verdict, named by what it checks, on the line its
/// expectation is written; `at` gives an expectation's offset and name.
fn cases_of(
    file: &str,
    text: &str,
    verdicts: &[crate::model::Verdict],
    failures: &[crate::diagnostic::Problem],
    at: impl Fn(usize) -> (usize, String),
) -> Vec<Case> {
    let mut failures = failures.iter();
    // Where each line ends, once: a file of thousands of expectations is
    // not counted through once per expectation.
    let newlines: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
    verdicts
        .iter()
        .map(|v| {
            let (start, name) = at(v.index);
            let line = text
                .get(..start)
                .map(|_| newlines.partition_point(|&i| i < start) + 1);
            let failure = if v.passed {
                None
            } else {
                failures.next().map(|p| Located {
                    file: file.to_string(),
                    ..p.located()
                })
            };
            Case {
                name,
                line,
                failure,
            }
        })
        .collect()
}

/// An invalid file: a failed case per problem, at its line; a run stopped
/// at a limit: one failed case.
fn problem_cases(file: &str, r: &FileResult) -> Vec<Case> {
    let what = if matches!(r, FileResult::Invalid(_)) {
        "valid scenario file"
    } else {
        "run finishes within its limits"
    };
    r.problems()
        .into_iter()
        .map(|p| Case {
            name: match p.line {
                Some(line) => format!("{what}: line {line}: {}", p.message),
                None => format!("{what}: {}", p.message),
            },
            line: p.line,
            failure: Some(Located {
                file: file.to_string(),
                ..p
            }),
        })
        .collect()
}

/// Which share of a batch a run was: shard `index` of `count` (1-based),
/// of a batch of `files` files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardOf {
    pub index: usize,
    pub count: usize,
    pub files: usize,
    /// The batch's identity: a digest of its files, in order, and of the
    /// options that change what runs or how it is judged (`--seed`,
    /// `--set`, `--filter`, `--tag`, `--fail-fast`, `--golden`). The
    /// shards of one batch have the same one; `merge` refuses others.
    #[serde(default)]
    pub batch: String,
}

/// The identity of a batch (see [`ShardOf::batch`]): FNV-1a over the
/// options and files, each length-prefixed, as 16 hex digits. The same on
/// every machine and build; not a defence against a forged shard, which
/// could copy it, but against a merge of shards of different commands.
pub fn batch_identity(files: &[String], options: &[String]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for part in options.iter().chain(files) {
        eat(part.as_bytes());
    }
    eat(&(files.len() as u64).to_le_bytes());
    format!("{hash:016x}")
}

/// A batch as the index and `merge` read it: the counts, the entries and,
/// for a shard, which one it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub format_version: u32,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardOf>,
    pub scenarios: Vec<Entry>,
}

impl Record {
    /// The record of `entries`, counted.
    pub fn new(entries: Vec<Entry>, shard: Option<ShardOf>) -> Record {
        let count = |status: &str| entries.iter().filter(|e| e.status == status).count();
        Record {
            format_version: crate::report::json::REPORT_FORMAT_VERSION,
            passed: count("passed"),
            failed: count("failed"),
            errors: count("invalid") + count("stopped"),
            shard,
            scenarios: entries,
        }
    }

    /// As JSON (what templates receive as `batch`, and `index.json`).
    pub fn json(&self) -> Json {
        serde_json::to_value(self).unwrap_or_default()
    }
}
