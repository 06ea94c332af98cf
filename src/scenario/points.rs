//! From a parsed document to one scenario or a sweep's points: `--set`
//! values written in place, then, for each point of the `[sweep]`, its
//! values written in place and the `[[expect.point]]` entries that match
//! it added to `[expect]`. Every point is read and validated before any
//! runs; a problem that several points share is reported once.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use serde::Deserialize;
use toml::Spanned;
use toml::de::DeValue;

use super::file;
use super::problems::Problems;
use super::reading::Root;
use super::sweep::{self, PointExpect, SweepSpec};
use super::{Loaded, Point, Sweep, read_and_validate};
use crate::diagnostic::{Problem, Source};

type Value<'i> = Spanned<DeValue<'i>>;

/// What every file with a `[sweep]` shares before its points are read:
/// the document with `--set` values in place, the sweep, the
/// `[[expect.point]]` entries, and the problems found so far.
pub(crate) struct Prepared<'i> {
    pub root: Root<'i>,
    pub spec: Option<SweepSpec<'i>>,
    pub expect_points: Vec<PointExpect<'i>>,
    pub early: Vec<Problem>,
}

/// Takes `--set`, `[sweep]` and `[[expect.point]]` out of the document
/// and writes each `--set` value in place (one of a swept path fixes the
/// sweep to it). `example` is a path of the kind of file, for help texts.
pub(crate) fn prepare<'i>(source: &Source, mut root: Root<'i>, example: &str) -> Prepared<'i> {
    let mut problems = Problems {
        source,
        list: Vec::new(),
    };
    let sets = sweep::take_sets(root.get_mut());
    let mut spec = sweep::take_sweep(&mut problems, root.get_mut());
    let expect_points = sweep::take_points(&mut problems, root.get_mut());
    // Each `where` is checked against the sweep as written: a --set that
    // fixes a swept path makes the others not match, not wrong.
    if let Some(spec) = &spec {
        check_wheres(&mut problems, spec, &expect_points);
    }
    for (path, value) in sets {
        let swept = spec
            .as_ref()
            .is_some_and(|s| s.axes.iter().any(|a| a.path.get_ref() == path.get_ref()));
        if swept && sweep::is_unset(&value) {
            problems.error(
                path.span(),
                format!(
                    "--unset {}: the path is swept; fix it to one value with --set instead",
                    sweep::shown_path(path.get_ref())
                ),
                "swept",
            );
            continue;
        }
        // A --set of a swept path fixes it to that value.
        if let Some(axis) = spec.as_mut().and_then(|s| {
            s.axes
                .iter_mut()
                .find(|a| a.path.get_ref() == path.get_ref())
        }) {
            axis.values = vec![value];
            continue;
        }
        if sweep::is_unset(&value) {
            if let Err(why) = sweep::unset(root.get_mut(), path.get_ref()) {
                problems.error(
                    path.span(),
                    format!("--unset {}: {why}", sweep::shown_path(path.get_ref())),
                    "nothing to remove",
                );
            }
            continue;
        }
        if let Err(why) = sweep::set(root.get_mut(), path.get_ref(), path.span(), value) {
            problems.error_help(
                Some(path.span()),
                format!("--set {}: {why}", sweep::shown_path(path.get_ref())),
                "no such place",
                format!("a path names tables by key and entries of a list by position: {example}"),
            );
        }
    }
    if spec.is_none()
        && let Some(first) = expect_points.first()
    {
        problems.list.push(
            Problem::new(
                source,
                Some(first.fields.span()),
                "[[expect.point]] needs a [sweep]",
                "no sweep",
            )
            .with_help("move these values to [expect], or add a [sweep]"),
        );
    }
    Prepared {
        root,
        spec,
        expect_points,
        early: problems.list,
    }
}

pub(super) fn load_points(
    source: &Source,
    root: Root<'_>,
    stem: &str,
) -> Result<Loaded, Vec<Problem>> {
    let Prepared {
        root,
        spec,
        expect_points,
        mut early,
    } = prepare(source, root, "traffic.1.count");
    let Some(spec) = spec else {
        return with_early(
            early,
            read_and_validate(source, root, stem, Vec::new()).map(|s| Loaded::One(Box::new(s))),
        );
    };
    let mut found = Problems {
        source,
        list: Vec::new(),
    };
    let columns = sweep::total_columns(&mut found, &spec.columns);
    early.extend(found.list);
    let count = spec.axes.iter().map(|a| a.values.len()).product::<usize>();
    let points = expand(
        source,
        &root,
        &spec,
        &expect_points,
        "traffic.1.count",
        |n, point_root, extra, found| {
            let mut read = Vec::new();
            for fields in extra {
                match file::Expect::deserialize(toml::de::ValueDeserializer::from(fields.clone())) {
                    Ok(e) => read.push(file::S::new(fields.span(), e)),
                    Err(e) => found
                        .list
                        .push(super::toml_errors::toml_problem(found.source, &e)),
                }
            }
            match read_and_validate(source, point_root, stem, read) {
                Ok(scenario)
                    if n == 0 && count * scenario.messages.len() > sweep::MAX_SWEPT_MESSAGES =>
                {
                    found.error_help(
                    Some(spec.span.clone()),
                    format!(
                        "this sweep would hold {count} copies of {} listed messages; the limit is {} in all",
                        scenario.messages.len(),
                        sweep::MAX_SWEPT_MESSAGES
                    ),
                    "too large a sweep",
                    "sweep fewer values, or describe the messages with a [[traffic]] generator",
                );
                    ControlFlow::Break(())
                }
                Ok(mut scenario) => {
                    // Each point computes what the sweep's table shows.
                    scenario.flow.columns = columns.clone();
                    ControlFlow::Continue(Some(scenario))
                }
                Err(more) => {
                    found.list.extend(more);
                    ControlFlow::Continue(None)
                }
            }
        },
    );
    let read = points.map(|points| {
        Loaded::Sweep(Sweep {
            keys: spec.axes.iter().map(|a| a.path.get_ref().clone()).collect(),
            columns,
            points: points
                .into_iter()
                .map(|(values, scenario)| Point { values, scenario })
                .collect(),
            span: spec.span.clone(),
        })
    });
    with_early(early, read)
}

/// The problems found before reading (paths, `--set`, `where`) with those
/// of reading: all of them, in file order, or the result.
pub(crate) fn with_early<T>(
    mut early: Vec<Problem>,
    read: Result<T, Vec<Problem>>,
) -> Result<T, Vec<Problem>> {
    if early.is_empty() {
        return read;
    }
    if let Err(more) = read {
        early.extend(more);
    }
    early.sort_by_key(Problem::offset);
    Err(early)
}

/// Each `where` names swept paths, with values the sweep takes.
fn check_wheres(problems: &mut Problems, spec: &SweepSpec, points: &[PointExpect]) {
    for p in points {
        for (path, value) in &p.at {
            let Some(axis) = spec
                .axes
                .iter()
                .find(|a| a.path.get_ref() == path.get_ref())
            else {
                let swept: Vec<&str> = spec
                    .axes
                    .iter()
                    .map(|a| a.path.get_ref().as_str())
                    .collect();
                problems.error_help(
                    Some(path.span()),
                    format!("`{}` is not swept", path.get_ref()),
                    "not a swept path",
                    format!("`where` names swept paths: {}", swept.join(", ")),
                );
                continue;
            };
            if !axis.values.iter().any(|v| same(v, value)) {
                let taken: Vec<String> = axis.values.iter().map(shown).collect();
                problems.error_help(
                    Some(value.span()),
                    format!("no point has {} = {}", path.get_ref(), shown(value)),
                    "not a swept value",
                    format!("{} takes {}", path.get_ref(), taken.join(", ")),
                );
            }
        }
    }
}

/// A value as TOML writes it (`3`, `"1s"`, `0.05`).
fn shown(v: &Spanned<DeValue<'_>>) -> String {
    toml::Value::deserialize(toml::de::ValueDeserializer::from(v.clone()))
        .map_or_else(|_| "?".to_string(), |v| v.to_string())
}

/// Two values equal as TOML values (3 and 3.0 differ; "1s" and "1000ms"
/// differ: a where names a value as the sweep writes it).
fn same(a: &Spanned<DeValue<'_>>, b: &Spanned<DeValue<'_>>) -> bool {
    let value = |v: &Spanned<DeValue<'_>>| {
        toml::Value::deserialize(toml::de::ValueDeserializer::from(v.clone())).ok()
    };
    value(a).is_some_and(|a| Some(a) == value(b))
}

/// Every point of the sweep, in order (the first axis slowest): its
/// values as TOML writes them and what `read` makes of the document with
/// them in place, given the `[[expect.point]]` tables that match it.
/// `read` reports a point's problems in the `Problems` it is given
/// (a problem several points share is reported once), and stops the
/// expansion with `Break`. Every point is read before any runs.
pub(crate) fn expand<'i, T>(
    source: &Source,
    root: &Root<'i>,
    spec: &SweepSpec<'i>,
    expect_points: &[PointExpect<'i>],
    example: &str,
    mut read: impl FnMut(usize, Root<'i>, Vec<Value<'i>>, &mut Problems) -> ControlFlow<(), Option<T>>,
) -> Result<Vec<(Vec<String>, T)>, Vec<Problem>> {
    let mut problems = Problems {
        source,
        list: Vec::new(),
    };
    let mut seen = BTreeSet::new();
    let mut points = Vec::new();
    let sizes: Vec<usize> = spec.axes.iter().map(|a| a.values.len()).collect();
    let count: usize = sizes.iter().product();
    // Every point holds its own copy of what the file says (payloads,
    // names) until it runs: the copies are bounded by bytes too, not only
    // by messages.
    let copies = count.saturating_mul(source.text.len());
    if copies > sweep::MAX_SWEPT_BYTES {
        problems.error_help(
            Some(spec.span.clone()),
            format!(
                "this sweep would hold {count} copies of a file of {} bytes, {} MiB in all; the limit is {} MiB",
                source.text.len(),
                copies >> 20,
                sweep::MAX_SWEPT_BYTES >> 20
            ),
            "too large a sweep",
            "sweep fewer values, or move large payloads out of the swept file",
        );
        return Err(problems.list);
    }
    for n in 0..count {
        // Mixed radix, the first axis slowest.
        let mut rest = n;
        let mut picks = vec![0; sizes.len()];
        for (k, size) in sizes.iter().enumerate().rev() {
            picks[k] = rest % size;
            rest /= size;
        }
        let mut point_root = root.clone();
        let mut found = Problems {
            source,
            list: Vec::new(),
        };
        for (axis, &pick) in spec.axes.iter().zip(&picks) {
            let value = axis.values[pick].clone();
            if let Err(why) = sweep::set(
                point_root.get_mut(),
                axis.path.get_ref(),
                axis.path.span(),
                value,
            ) {
                found.error_help(
                    Some(axis.path.span()),
                    format!(
                        "cannot sweep `{}`: {why}",
                        sweep::shown_path(axis.path.get_ref())
                    ),
                    "no such place",
                    format!(
                        "a path names tables by key and entries of a list by position: {example}"
                    ),
                );
            }
        }
        let values: Vec<String> = spec
            .axes
            .iter()
            .zip(&picks)
            .map(|(a, &p)| shown(&a.values[p]))
            .collect();
        let extra = matching(spec, &picks, expect_points);
        let flow = read(n, point_root, extra, &mut found);
        let stop = flow.is_break();
        if let ControlFlow::Continue(Some(point)) = flow
            && found.list.is_empty()
        {
            points.push((values, point));
        }
        // A problem every point shares is reported once.
        for p in found.list {
            if seen.insert((p.offset(), p.message.clone())) {
                problems.list.push(p);
            }
        }
        if stop {
            break;
        }
    }
    if !problems.list.is_empty() {
        problems.list.sort_by_key(Problem::offset);
        return Err(problems.list);
    }
    Ok(points)
}

/// The `[[expect.point]]` tables whose `where` matches these picks, each
/// without its `where`.
fn matching<'i>(
    spec: &SweepSpec<'i>,
    picks: &[usize],
    expect_points: &[PointExpect<'i>],
) -> Vec<Value<'i>> {
    expect_points
        .iter()
        .filter(|p| {
            p.at.iter().all(|(path, value)| {
                spec.axes.iter().zip(picks).any(|(a, &pick)| {
                    a.path.get_ref() == path.get_ref() && same(&a.values[pick], value)
                })
            })
        })
        .map(|p| p.fields.clone())
        .collect()
}
