//! What running a file gives: its result (invalid, stopped, ran, swept,
//! left out), what the batch was asked to do, and the problem of a run
//! that stopped at a limit. Every output (terminal, JSON, JUnit, reports)
//! reads these.

use std::sync::Arc;

use crate::diagnostic::{Located, Problem, Source};
use crate::engine::{LimitReached, Outcome};
use crate::expect::Verdict;
use crate::model::Scenario;
use crate::scenario::Invalid;
use crate::words::plural;

/// What to run and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub seed: Option<u64>,
    pub filter: Option<String>,
    /// Run only scenarios carrying one of these tags (case-insensitive).
    pub tag: Vec<String>,
    pub fail_fast: bool,
    /// What runs of up to [`crate::engine::FULL_TRANSCRIPT_MESSAGES`] messages
    /// record of their transcript.
    pub transcript: Transcript,
    /// Take the census (the HTML report's aggregate view reads it).
    pub census: bool,
    /// `--set PATH=VALUE` overrides, written in place in every file.
    pub sets: Vec<(String, String)>,
    /// `--shard I/N`: run only shard I of N (1-based); see [`Share`].
    pub shard: Option<(usize, usize)>,
}

/// What a run of up to [`crate::engine::FULL_TRANSCRIPT_MESSAGES`] messages
/// records of its transcript (every transition and the effect ledger).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Transcript {
    /// Nothing: only totals, states and expectations are read.
    #[default]
    None,
    /// Kept in memory: goldens and reports read it more than once.
    Kept,
    /// The ledger kept, the transitions counted and played again as the
    /// JSON document writes them ([`crate::engine::Replay`]): written once, they
    /// cost no memory.
    Replayed,
}

pub enum FileResult {
    /// The file could not be read or is not a valid scenario.
    Invalid(Box<Invalid>),
    /// The run stopped at a limit.
    Stopped {
        source: Source,
        scenario: Box<Scenario>,
        limit: LimitReached,
    },
    Ran(Box<Ran>),
    /// A sweep: each point's result.
    Swept(Box<SweepRun>),
    /// A dataflow scenario (model section 25) that ran or stopped.
    Dataflow(Box<crate::dataflow::Ran>),
    /// Left out by --filter or --tag.
    Filtered,
    /// Not run because an earlier file failed under --fail-fast.
    Skipped,
    /// Run by another shard of the batch (`--shard`).
    Elsewhere,
}

pub struct Ran {
    pub source: Source,
    /// Shared with the report documents, which read the run's long lists
    /// item by item while they are written.
    pub scenario: Arc<Scenario>,
    pub outcome: Arc<Outcome>,
    pub verdicts: Vec<Verdict>,
    /// Diagnostics of the failed expectations, in file order.
    pub failures: Vec<Problem>,
}

impl Ran {
    /// The run, as report documents read it.
    pub fn run(&self) -> crate::report::document::Run {
        crate::report::document::Run {
            scenario: Arc::clone(&self.scenario),
            outcome: Arc::clone(&self.outcome),
        }
    }
}

impl FileResult {
    pub fn passed(&self) -> bool {
        match self {
            FileResult::Ran(r) => r.failures.is_empty(),
            FileResult::Swept(s) => s.passed(),
            FileResult::Dataflow(d) => d.passed(),
            _ => false,
        }
    }

    pub fn counts(&self) -> bool {
        !matches!(
            self,
            FileResult::Filtered | FileResult::Skipped | FileResult::Elsewhere
        )
    }

    /// The word reports and JSON use: passed, failed, invalid, stopped,
    /// filtered or skipped.
    pub fn status(&self) -> &'static str {
        match self {
            FileResult::Ran(r) if r.failures.is_empty() => "passed",
            FileResult::Ran(_) => "failed",
            FileResult::Swept(s) if s.stopped() => "stopped",
            FileResult::Swept(s) if s.passed() => "passed",
            FileResult::Swept(_) => "failed",
            FileResult::Dataflow(d) => d.status(),
            FileResult::Invalid(_) => "invalid",
            FileResult::Stopped { .. } => "stopped",
            FileResult::Filtered => "filtered",
            FileResult::Skipped => "skipped",
            FileResult::Elsewhere => "elsewhere",
        }
    }

    /// The name, summary, seed and tags of a valid file (a queue or a
    /// dataflow scenario).
    pub fn meta(&self) -> Option<Meta<'_>> {
        match self {
            FileResult::Dataflow(d) => Some(Meta {
                name: &d.flow.name,
                summary: d.flow.summary.as_deref(),
                description: d.flow.description.as_deref(),
                tags: &d.flow.tags,
                seed: d.flow.seed,
            }),
            FileResult::Swept(s) => s.points.first().and_then(|p| p.result.meta()),
            r => r.scenario().map(|s| Meta {
                name: &s.name,
                summary: s.summary.as_deref(),
                description: s.description.as_deref(),
                tags: &s.tags,
                seed: s.seed,
            }),
        }
    }

    /// The scenario, when the file was valid.
    pub fn scenario(&self) -> Option<&Scenario> {
        match self {
            FileResult::Ran(r) => Some(&r.scenario),
            FileResult::Stopped { scenario, .. } => Some(scenario),
            FileResult::Swept(s) => s.scenario(),
            _ => None,
        }
    }

    /// The problems as data, each with its colour-free diagnostic: of the
    /// failed expectations, of the invalid input, or of the limit that
    /// stopped the run.
    pub fn problems(&self) -> Vec<Located> {
        match self {
            FileResult::Ran(r) => r.failures.iter().map(Problem::located).collect(),
            FileResult::Invalid(inv) => inv.problems.iter().map(Problem::located).collect(),
            FileResult::Stopped {
                source,
                scenario,
                limit,
            } => vec![limit_problem(source, scenario, limit).located()],
            FileResult::Swept(s) => s.problems(),
            FileResult::Dataflow(d) => d.problems(),
            FileResult::Filtered | FileResult::Skipped | FileResult::Elsewhere => Vec::new(),
        }
    }
}

/// What every valid file has, queue or dataflow.
#[derive(Debug, Clone, Copy)]
pub struct Meta<'a> {
    pub name: &'a str,
    pub summary: Option<&'a str>,
    pub description: Option<&'a str>,
    pub tags: &'a [String],
    pub seed: u64,
}

/// A sweep that ran, of a queue or a dataflow scenario: its points in
/// order (the first key varies slowest).
pub struct SweepRun {
    pub source: Source,
    pub keys: Vec<String>,
    /// The names of the measures its table shows.
    pub columns: Vec<String>,
    /// The points this run ran: all of them, or a shard's share.
    pub points: Vec<PointRun>,
    /// How many points the sweep has.
    pub points_total: usize,
}

/// One point: its values (as TOML writes them), its result (`Ran` or
/// `Stopped`, or `Dataflow`) and its row's measures. A point keeps its
/// totals, verdicts and diagnostics, not its messages or recordings, so
/// that a sweep's memory is that of one run per job.
pub struct PointRun {
    /// The point's position among the sweep's points (0-based).
    pub index: usize,
    pub values: Vec<String>,
    pub result: FileResult,
    /// What the run shows in each column (none when it stopped).
    pub cells: Vec<String>,
    /// The number the chart draws: the first column's, when it is one.
    pub measure: Option<u64>,
}

impl SweepRun {
    /// The queue scenario of the first point (name, seed, tags are the
    /// file's); none for a dataflow's sweep.
    pub fn scenario(&self) -> Option<&Scenario> {
        self.points.first().and_then(|p| p.result.scenario())
    }

    /// The file's name, summary, seed and tags, from its first point.
    pub fn meta(&self) -> Option<Meta<'_>> {
        self.points.first().and_then(|p| p.result.meta())
    }

    /// "delivery.max_receives = 3, traffic.1.mix.1.share = 0.05".
    pub fn describe(&self, point: &PointRun) -> String {
        crate::scenario::describe_point(&self.keys, &point.values)
    }

    pub fn passed(&self) -> bool {
        self.points.iter().all(|p| p.result.passed())
    }

    /// Whether a point stopped at a limit.
    pub fn stopped(&self) -> bool {
        self.points.iter().any(|p| match &p.result {
            FileResult::Stopped { .. } => true,
            FileResult::Dataflow(d) => d.run.is_err(),
            _ => false,
        })
    }

    /// Every point's problems, each message naming the point.
    pub fn problems(&self) -> Vec<Located> {
        self.point_problems().into_iter().flatten().collect()
    }

    /// The problems of each point, each message naming the point.
    pub fn point_problems(&self) -> Vec<Vec<Located>> {
        self.points
            .iter()
            .map(|p| {
                let at = self.describe(p);
                p.result
                    .problems()
                    .into_iter()
                    .map(|mut l| {
                        if !l.message.starts_with("at ") {
                            l.message = format!("at {at}: {}", l.message);
                        }
                        l
                    })
                    .collect()
            })
            .collect()
    }
}

/// The diagnostic for a run stopped at a limit.
pub fn limit_problem(source: &Source, scenario: &Scenario, limit: &LimitReached) -> Problem {
    let span = limits_span(&source.text);
    if let crate::engine::Limit::InFlight(_) = limit.limit {
        return Problem::new(source, span, limit.to_string(), "limit reached").with_help(format!(
            "by modeled time {} the run had made {}: each visibility timeout that passes while a \
             delivery runs starts another delivery of the same message, and this run kept starting \
             them. Make visibility_timeout longer than the service time (or a fault's takes), or \
             limit [workers] count.",
            crate::duration::format(limit.at),
            plural(limit.deliveries, "delivery", "deliveries"),
        ));
    }
    Problem::new(source, span, limit.to_string(), "limit reached").with_help(format!(
        "by modeled time {} the run had made {} and {} still pending, so it would not drain. \
         A permanent failure with a large max_receives, or a very large generator, does this. \
         Lower max_receives, route permanent failures to quarantine (permanent = \"quarantine\"), \
         or raise the limit in [limits] (max_events = {}, max_time = \"{}\").",
        crate::duration::format(limit.at),
        plural(limit.deliveries, "delivery", "deliveries"),
        match limit.pending {
            1 => "1 message was".to_string(),
            n => format!("{n} messages were"),
        },
        scenario.limits.max_events,
        crate::duration::format(scenario.limits.max_time),
    ))
}

fn limits_span(text: &str) -> Option<std::ops::Range<usize>> {
    text.find("[limits]").map(|i| i..i + "[limits]".len())
}

/// Which work of a batch falls to a shard. The batch's work is its files,
/// a sweep counting as its points: the file at position `k` of the
/// expanded list belongs to shard `k mod N + 1`, and point `j` of a sweep
/// at position `k` to shard `(k + j) mod N + 1`. So every shard gets every
/// N-th file and every N-th point of each sweep, whatever the machine, and
/// a shard decides from the file alone, without reading the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// 0-based shard.
    index: usize,
    count: usize,
}

impl Share {
    /// Shard `i` of `n` (1-based); `None`: the whole batch.
    pub fn of(shard: Option<(usize, usize)>) -> Share {
        match shard {
            Some((i, n)) if n > 0 && (1..=n).contains(&i) => Share {
                index: i - 1,
                count: n,
            },
            _ => Share { index: 0, count: 1 },
        }
    }

    /// Whether the file at `position` is this shard's (a file that is not
    /// a sweep).
    pub fn has_file(self, position: usize) -> bool {
        position % self.count == self.index
    }

    /// Whether point `point` of the sweep at `position` is this shard's.
    pub fn has_point(self, position: usize, point: usize) -> bool {
        (position % self.count + point % self.count) % self.count == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::Share;

    #[test]
    fn every_file_and_every_point_falls_to_exactly_one_shard() {
        for n in 1..=7 {
            let shares: Vec<Share> = (1..=n).map(|i| Share::of(Some((i, n)))).collect();
            for position in 0..20 {
                let owners = shares.iter().filter(|s| s.has_file(position)).count();
                assert_eq!(owners, 1, "file {position} of {n} shards");
                for point in 0..30 {
                    let owners = shares
                        .iter()
                        .filter(|s| s.has_point(position, point))
                        .count();
                    assert_eq!(owners, 1, "point {point} of file {position}, {n} shards");
                }
            }
        }
        // The whole batch has it all; shard 2 of 3 gets files 1, 4, 7...
        assert!(Share::of(None).has_point(5, 9));
        let second = Share::of(Some((2, 3)));
        let files: Vec<usize> = (0..9).filter(|&k| second.has_file(k)).collect();
        assert_eq!(files, [1, 4, 7]);
        // ...and points 0, 3, 6 of the sweep at position 1.
        let points: Vec<usize> = (0..9).filter(|&j| second.has_point(1, j)).collect();
        assert_eq!(points, [0, 3, 6]);
    }
}
