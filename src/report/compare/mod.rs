//! Reading a comparison of two runs (`scenario-run compare`): the text
//! printed for people, and what the Markdown and HTML templates receive:
//! each difference with its values written as the transcript writes them,
//! and the two timelines drawn on one time axis.

use std::fmt::Write;

use serde_json::{Value as Json, json};

pub mod differences;

use crate::model::{Total, Unit};
use differences::{Comparison, DIFFERENCES_KEPT, Difference, Section, Side};

/// A value of a difference as the transcript writes it: a measure by its
/// unit, a time field (`..._at`, `quarantine_age`, `max_lag`) as a
/// duration, a text without quotes, nothing as `-`.
pub fn shown(d: &Difference, v: &Json) -> String {
    let time = match d.section {
        Section::Totals => Total::ALL
            .iter()
            .find(|t| t.name() == d.item)
            .is_some_and(|t| matches!(t.unit(), Unit::Time | Unit::MaybeTime)),
        _ => d.field.as_deref().is_some_and(|f| {
            f.ends_with("_at")
                || matches!(
                    f,
                    "quarantine_age"
                        | "max_lag"
                        | "latency"
                        | "queue_wait"
                        | "at"
                        | "checkpoint_time"
                        | "down_for"
                )
        }),
    };
    match v {
        Json::Null => "-".to_string(),
        Json::Number(n) if time => n
            .as_u64()
            .map_or_else(|| n.to_string(), crate::duration::format),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn section_name(s: Section) -> &'static str {
    match s {
        Section::Totals => "totals",
        Section::Messages => "messages",
        Section::Sinks => "sinks",
        Section::Partitions => "partitions",
        Section::Restarts => "restarts",
    }
}

/// Rows of a table, each column padded to its widest cell, two spaces
/// apart, without trailing blanks.
fn table(out: &mut String, rows: &[Vec<String>]) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::from("  ");
        for (c, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < row.len() {
                let pad = widths[c] - cell.chars().count() + 2;
                line.push_str(&" ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// Messages whose differences the text lists; the JSON and the reports
/// list them all.
pub const TEXT_MESSAGES: usize = 20;

/// The comparison as `compare` prints it: both command lines, then per
/// section how many items differ and a table of the differences (of the
/// first [`TEXT_MESSAGES`] messages that differ).
pub fn text(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A  {}", c.a.label());
    let _ = writeln!(out, "   {}", c.a.scenario.name);
    let _ = writeln!(out, "B  {}", c.b.label());
    let _ = writeln!(out, "   {}", c.b.scenario.name);
    let n = &c.compared;
    let sections = [
        (Section::Totals, n.totals_differing, n.totals, "measures"),
        (
            Section::Messages,
            n.messages_differing,
            n.messages,
            "messages",
        ),
        (Section::Sinks, n.sinks_differing, n.sinks, "sinks"),
        (
            Section::Partitions,
            n.partitions_differing,
            n.partitions,
            "partitions",
        ),
        (
            Section::Restarts,
            n.restarts_differing,
            n.restarts,
            "restarts",
        ),
    ];
    for (section, differing, compared, what) in sections {
        if compared == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{}: {differing} of {compared} {what} differ",
            section_name(section)
        );
        if section == Section::Totals {
            for side in ["A", "B"] {
                let only: Vec<&str> = c
                    .one_sided
                    .iter()
                    .filter(|o| o.side == side)
                    .map(|o| o.measure.as_str())
                    .collect();
                if !only.is_empty() {
                    let _ = writeln!(
                        out,
                        "  measured by {side} only, not compared: {}",
                        only.join(", ")
                    );
                }
            }
        }
        let mut items = std::collections::BTreeSet::new();
        let rows: Vec<&Difference> = c
            .differences
            .iter()
            .filter(|d| d.section == section)
            .filter(|d| {
                section != Section::Messages
                    || items.contains(&d.item)
                    || (items.len() < TEXT_MESSAGES && items.insert(d.item.clone()))
            })
            .collect();
        let unlisted = differing.saturating_sub(TEXT_MESSAGES);
        if rows.is_empty() {
            continue;
        }
        let mut cells = vec![match section {
            Section::Totals => vec!["measure".to_string(), "A".into(), "B".into()],
            _ => vec![
                match section {
                    Section::Sinks => "sink",
                    Section::Partitions => "partition",
                    Section::Restarts => "restart",
                    _ => "id",
                }
                .to_string(),
                "field".into(),
                "A".into(),
                "B".into(),
            ],
        }];
        for d in rows {
            let (a, b) = (shown(d, &d.a), shown(d, &d.b));
            cells.push(match &d.field {
                None => vec![d.item.clone(), a, b],
                Some(f) => vec![d.item.clone(), f.clone(), a, b],
            });
        }
        table(&mut out, &cells);
        if section == Section::Messages && unlisted > 0 {
            let _ = writeln!(
                out,
                "  ... and {unlisted} more messages differ (--format json and --report list every difference)"
            );
        }
    }
    if n.differences > c.differences.len() {
        let _ = writeln!(
            out,
            "\n... and {} more differences, not kept (a comparison keeps at most {})",
            n.differences - c.differences.len(),
            DIFFERENCES_KEPT
        );
    }
    let _ = writeln!(
        out,
        "\n{}",
        match n.differences {
            0 => "no difference".to_string(),
            1 => "1 difference".to_string(),
            k => format!("{k} differences"),
        }
    );
    out
}

/// What the comparison templates receive: both sides, the counts, each
/// difference with its values as written, and the two timelines on one
/// time axis (`null` where a run has no timeline).
pub fn context(c: &Comparison) -> Json {
    let side = |s: &Side| {
        json!({
            "label": s.label(),
            "file": s.file,
            "name": s.scenario.name,
            "summary": s.scenario.summary,
            "status": s.status(),
            "end_time": s.outcome.totals.end_time,
        })
    };
    let differences: Vec<Json> = c
        .differences
        .iter()
        .map(|d| {
            json!({
                "section": section_name(d.section),
                "item": d.item,
                "field": d.field,
                "a": shown(d, &d.a),
                "b": shown(d, &d.b),
            })
        })
        .collect();
    let (chart_a, chart_b) =
        super::chart::shared((&c.a.scenario, &c.a.outcome), (&c.b.scenario, &c.b.outcome));
    json!({
        "a": side(&c.a),
        "b": side(&c.b),
        "compared": c.compared,
        "one_sided": c.one_sided,
        "differences": differences,
        "kept": DIFFERENCES_KEPT,
        "charts": [chart_a, chart_b],
    })
}
