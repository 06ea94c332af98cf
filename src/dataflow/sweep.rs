//! A dataflow file's `[sweep]`: its points (each a dataflow with the
//! point's values written in place and the `[[expect.point]]` entries that
//! match it), the columns of its table of points, and what a cell shows.
//!
//! A column names a value of the run in the form of a question's answer
//! (`snapshot.1.outcome`, `snapshot.2.node.C.recorded_state`,
//! `node.A.state`), resolved at every point.

use std::ops::{ControlFlow, Range};

use crate::scenario::spanned::S;

use super::model::{Dataflow, Target};
use super::outcome::Outcome;
use super::{expect, judge, validate};
use crate::diagnostic::{Problem, Source};
use crate::model::Value;
use crate::scenario::points::expand;
use crate::scenario::problems::Problems;
use crate::scenario::reading::Root;
use crate::scenario::sweep::{PointExpect, SweepSpec};

/// At most this many attempts give the default columns.
const DEFAULT_ATTEMPTS: usize = 3;
/// Without attempts, the first this many nodes' final states are the
/// default columns.
const DEFAULT_NODES: usize = 4;
/// A recorded list in a cell shows at most this many values.
const CELL_VALUES: usize = 8;
/// At most this many columns: each point keeps a cell per column, so the
/// table stays within points x columns cells of a bounded size.
pub const MAX_COLUMNS: usize = 64;

/// A dataflow run over the cartesian product of `[sweep]` values.
pub struct Sweep {
    /// The swept paths, in file order.
    pub keys: Vec<String>,
    /// The columns of the table of points, by name.
    pub columns: Vec<String>,
    /// The first key varies slowest.
    pub points: Vec<Point>,
    /// The `[sweep]` table.
    pub span: Range<usize>,
}

pub struct Point {
    /// The point's values as TOML writes them, in the order of `keys`.
    pub values: Vec<String>,
    pub flow: Dataflow,
    /// What each column names in this point's dataflow.
    pub columns: Vec<Target>,
}

/// Every point of the sweep, read and validated, each column resolved at
/// each point; or every problem, located.
pub(super) fn points(
    source: &Source,
    root: &Root<'_>,
    stem: &str,
    spec: &SweepSpec<'_>,
    expect_points: &[PointExpect<'_>],
) -> Result<Sweep, Vec<Problem>> {
    // Unlisted, the columns come from the first point's dataflow; every
    // point then reads the same names.
    if let Some(extra) = spec.columns.get(MAX_COLUMNS) {
        let mut problems = Problems {
            source,
            list: Vec::new(),
        };
        problems.error_help(
            Some(extra.span()),
            format!(
                "a sweep lists {} columns; the limit is {MAX_COLUMNS}",
                spec.columns.len()
            ),
            "too many columns",
            "show fewer values in the table; every value stays in each point's JSON",
        );
        return Err(problems.list);
    }
    let mut names: Vec<S<String>> = spec.columns.iter().cloned().map(S).collect();
    let read = |n: usize, point_root, extra, found: &mut Problems| {
        let flow = match validate::read(source, point_root, stem, extra) {
            Ok(flow) => flow,
            Err(more) => {
                found.list.extend(more);
                return ControlFlow::Continue(None);
            }
        };
        if n == 0 && names.is_empty() {
            names = default_columns(&flow)
                .into_iter()
                .map(|c| S::new(spec.span.clone(), c))
                .collect();
        }
        let columns: Vec<Target> = names
            .iter()
            .filter_map(|name| expect::column(found, &flow, name))
            .collect();
        ControlFlow::Continue(Some(Point {
            values: Vec::new(),
            flow,
            columns,
        }))
    };
    let points = expand(source, root, spec, expect_points, "node.1.state", read)?;
    Ok(Sweep {
        keys: spec.axes.iter().map(|a| a.path.get_ref().clone()).collect(),
        columns: names.into_iter().map(S::into_inner).collect(),
        points: points
            .into_iter()
            .map(|(values, point)| Point { values, ..point })
            .collect(),
        span: spec.span.clone(),
    })
}

/// The columns when `[sweep] columns` lists none: for each of the first
/// three attempts its outcome, whether its cut is consistent (a file of
/// transfers only) and the most values one node held recorded; a file
/// without attempts shows its first four nodes' final states.
pub fn default_columns(flow: &Dataflow) -> Vec<String> {
    if flow.snapshots.is_empty() {
        return (flow.nodes.iter().take(DEFAULT_NODES))
            .map(|n| format!("node.{}.state", n.name))
            .collect();
    }
    let mut out = Vec::new();
    for k in 1..=flow.snapshots.len().min(DEFAULT_ATTEMPTS) {
        out.push(format!("snapshot.{k}.outcome"));
        if flow.transfers_only() {
            out.push(format!("snapshot.{k}.consistent"));
        }
        out.push(format!("snapshot.{k}.max_recorded"));
    }
    out
}

/// What a cell of the table shows: a word without quotes, a time, a
/// number, `-` for no value, a recorded list cut after a few values.
pub fn cell(flow: &Dataflow, outcome: &Outcome, target: Target) -> String {
    match judge::actual(flow, outcome, target) {
        Value::Text(s) => s,
        Value::Never => "-".to_string(),
        Value::Ints(v) if v.len() > CELL_VALUES => {
            let shown: Vec<String> = v[..CELL_VALUES].iter().map(i64::to_string).collect();
            format!("[{}, ... {} values]", shown.join(", "), v.len())
        }
        other => other.to_string(),
    }
}

/// The number a sweep's chart draws for a point: a count, a time or a
/// node's state that is not negative (`None` for the rest).
pub fn measure(flow: &Dataflow, outcome: &Outcome, target: Target) -> Option<u64> {
    match judge::actual(flow, outcome, target) {
        Value::Count(n) | Value::Time(n) => Some(n),
        Value::Int(n) => u64::try_from(n).ok(),
        _ => None,
    }
}

/// Whether a column of a dataflow sweep holds times.
pub fn is_time(column: &str) -> bool {
    column.ends_with(".completed_at")
}
