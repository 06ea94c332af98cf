//! The HTML timeline's flow charts, under the main view and on its time
//! scale: outage windows (shaded on every chart), calls offered and
//! accepted per window with the downstream's limit, and the queue and DLQ
//! depth over time from the census. Geometry only, in SVG user units;
//! the same series are tables in the Markdown and JSON reports.

use serde_json::{Value as Json, json};

use super::scale::{Scale, round};
use crate::duration::format as dur;
use crate::engine::{Census, Outcome};
use crate::model::{MessageIndex, Millis, Scenario, State};

/// Height of a flow chart's plot.
const HEIGHT: f64 = 120.0;
/// Space above a flow chart's plot (its title) and below (its axis).
const TITLE: f64 = 22.0;
const AXIS: f64 = 24.0;

/// The `[[outage]]` windows that start before the run's end, clipped to it.
pub fn outages(scenario: &Scenario, scale: Scale) -> Vec<Json> {
    scenario
        .outages
        .iter()
        .filter(|o| o.from < scale.end || (scale.end == 0 && o.from == 0))
        .map(|o| {
            let to = o.from.saturating_add(o.duration);
            json!({
                "x1": scale.x(o.from),
                "x2": scale.x(to),
                "title": format!(
                    "outage from {} to {}: deliveries fail (downstream unavailable)",
                    dur(o.from),
                    dur(to)
                ),
            })
        })
        .collect()
}

/// Y ticks of a plot from 0 to `max`: 0, half and the top.
fn y_ticks(max: u64, y: impl Fn(u64) -> f64) -> Vec<Json> {
    let mut values = vec![0, max / 2, max];
    values.dedup();
    values
        .into_iter()
        .map(|v| json!({ "y": y(v), "label": v }))
        .collect()
}

/// A step line through (from, to, value) runs, dropping to 0 between runs
/// that do not touch.
fn steps(runs: &[(f64, f64, f64)], zero: f64) -> String {
    let mut out = String::new();
    let mut last_x: Option<f64> = None;
    for &(x1, x2, y) in runs {
        match last_x {
            Some(lx) if (lx - x1).abs() < 0.05 => {}
            Some(lx) => out.push_str(&format!(" L{lx},{zero} L{x1},{zero}")),
            None => out.push_str(&format!("M{x1},{zero}")),
        }
        out.push_str(&format!(" L{x1},{y} L{x2},{y}"));
        last_x = Some(x2);
    }
    if let Some(lx) = last_x {
        out.push_str(&format!(" L{lx},{zero}"));
    }
    out
}

/// Calls offered and accepted per row of the calls series (a window, or
/// a span of windows when the series was merged), with the most a row can
/// accept under the downstream's limit. `None` without calls.
pub fn calls(scenario: &Scenario, outcome: &Outcome, scale: Scale) -> Option<Json> {
    let series = super::json::calls(scenario, outcome, crate::engine::CALL_SERIES_ROWS);
    let rows = series["rows"].as_array()?;
    if rows.is_empty() {
        return None;
    }
    let per = series["per"].as_u64().unwrap_or(1).max(1);
    let windows = series["windows_per_row"].as_u64().unwrap_or(1).max(1);
    let span = per.saturating_mul(windows);
    let limit = series["limit"].as_u64().map(|l| l.saturating_mul(windows));
    let field = |r: &Json, k: &str| r[k].as_u64().unwrap_or(0);
    let most = rows.iter().map(|r| field(r, "offered")).max().unwrap_or(0);
    let max = most.max(limit.unwrap_or(0)).max(1);
    // Each chart is its own SVG: its title on top, then the plot.
    let plot_top = TITLE;
    let bottom = plot_top + HEIGHT;
    let y = |v: u64| round(bottom - v as f64 / max as f64 * HEIGHT);
    let runs = |k: &str| -> Vec<(f64, f64, f64)> {
        rows.iter()
            .map(|r| {
                let start = field(r, "start");
                let end = start.saturating_add(span) as Millis;
                (scale.x(start), scale.x(end), y(field(r, k)))
            })
            .collect()
    };
    let what = if windows == 1 {
        format!("per {} window", dur(per))
    } else {
        format!("per {} ({windows} windows of {})", dur(span), dur(per))
    };
    Some(json!({
        "title": format!("Calls offered and accepted {what}"),
        "top": round(plot_top),
        "bottom": round(bottom),
        "height": round(bottom + AXIS),
        "offered": steps(&runs("offered"), round(bottom)),
        "accepted": steps(&runs("accepted"), round(bottom)),
        "limit_y": limit.map(y),
        "limit": limit,
        "peak": most,
        "y_ticks": y_ticks(max, y),
    }))
}

/// Messages ready (the queue depth) and in quarantine (the DLQ depth)
/// over time, from the census samples.
pub fn depth(census: &Census, scale: Scale) -> Json {
    let points = census.points();
    let ready = |c: &[u64; crate::engine::STATE_COUNT]| c[State::Ready as usize];
    let dlq = |c: &[u64; crate::engine::STATE_COUNT]| c[State::Quarantined as usize];
    let most_ready = points.iter().map(|(_, c)| ready(c)).max().unwrap_or(0);
    let most_dlq = points.iter().map(|(_, c)| dlq(c)).max().unwrap_or(0);
    let max = most_ready.max(most_dlq).max(1);
    // Each chart is its own SVG: its title on top, then the plot.
    let plot_top = TITLE;
    let bottom = plot_top + HEIGHT;
    let y = |v: u64| round(bottom - v as f64 / max as f64 * HEIGHT);
    let line = |f: &dyn Fn(&[u64; crate::engine::STATE_COUNT]) -> u64| -> String {
        points
            .iter()
            .map(|(t, c)| format!("{},{}", scale.x(*t), y(f(c))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    json!({
        "title": format!("Queue depth (ready) and DLQ depth, sampled every {}", dur(census.step)),
        "top": round(plot_top),
        "bottom": round(bottom),
        "height": round(bottom + AXIS),
        "ready": line(&ready),
        "quarantined": line(&dlq),
        "peak_ready": most_ready,
        "peak_quarantined": most_dlq,
        "y_ticks": y_ticks(max, y),
    })
}

/// Under `fifo` or `per_key` ordering, the head that blocked each group
/// longest, for the lane view: of the messages of a group that held others
/// back (delivered after they arrived and before their first delivery),
/// the one that held the group's head longest, from its first delivery to
/// its ack, quarantine or drop (or the end). A title for that message's
/// lane; `None` for every other message, and for all without ordering.
pub fn heads(scenario: &Scenario, outcome: &Outcome, messages: usize) -> Vec<Option<String>> {
    use crate::model::{EventKind, Ordering};
    use std::collections::BTreeMap;
    let mut out = vec![None; messages];
    let ordering = scenario.flow.ordering;
    if ordering == Ordering::None {
        return out;
    }
    let group = |x: MessageIndex| match ordering {
        Ordering::Fifo => 0,
        _ => scenario.group(x),
    };
    let end = outcome.totals.end_time;
    // Per group, each message that delivered and its latest delivery.
    let mut latest: BTreeMap<u64, BTreeMap<MessageIndex, Millis>> = BTreeMap::new();
    // Per message: messages it held back, its first delivery, when it left.
    let mut held = vec![0u64; messages];
    let mut first: Vec<Option<Millis>> = vec![None; messages];
    let mut left: Vec<Option<Millis>> = vec![None; messages];
    let judge = |m: MessageIndex,
                 latest: &BTreeMap<u64, BTreeMap<MessageIndex, Millis>>,
                 held: &mut Vec<u64>| {
        let Some(arrived) = outcome
            .arrived_at(scenario, m)
            .filter(|_| outcome.queue_wait(m) > 0)
        else {
            return;
        };
        for (&x, &t) in latest.get(&group(m)).into_iter().flatten() {
            if x != m && t >= arrived && (x as usize) < messages {
                held[x as usize] += 1;
            }
        }
    };
    for t in &outcome.transitions {
        let Some(m) = t.message.filter(|&m| (m as usize) < messages) else {
            continue;
        };
        match t.detail.kind() {
            EventKind::Delivered => {
                if first[m as usize].is_none() {
                    first[m as usize] = Some(t.time);
                    judge(m, &latest, &mut held);
                }
                latest.entry(group(m)).or_default().insert(m, t.time);
            }
            EventKind::Acked | EventKind::Quarantined | EventKind::Dropped => {
                left[m as usize] = Some(t.time);
            }
            _ => {}
        }
    }
    // Messages never delivered waited until the end.
    let never: Vec<usize> = (0..messages).filter(|&m| first[m].is_none()).collect();
    for m in never {
        judge(m as MessageIndex, &latest, &mut held);
    }
    // Per group: the head held longest (ties: the first message).
    let mut longest: BTreeMap<u64, (Millis, usize)> = BTreeMap::new();
    for x in (0..messages).filter(|&x| held[x] > 0) {
        let from = first[x].unwrap_or(end);
        let span = left[x].unwrap_or(end).saturating_sub(from);
        let best = longest.entry(group(x as MessageIndex)).or_insert((span, x));
        if span > best.0 {
            *best = (span, x);
        }
    }
    for (span, x) in longest.into_values() {
        let from = first[x].unwrap_or(end);
        out[x] = Some(format!(
            "{} held its group's head for {span_text}, from {} to {}, while {} {} of its group waited behind it",
            scenario.message_id(x as MessageIndex),
            dur(from),
            dur(from + span),
            held[x],
            if held[x] == 1 { "message" } else { "messages" },
            span_text = dur(span),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_line_drops_to_zero_between_runs_that_do_not_touch() {
        let path = steps(
            &[(0.0, 10.0, 5.0), (10.0, 20.0, 7.0), (30.0, 40.0, 2.0)],
            9.0,
        );
        assert_eq!(
            path,
            "M0,9 L0,5 L10,5 L10,7 L20,7 L20,9 L30,9 L30,2 L40,2 L40,9"
        );
        assert_eq!(steps(&[], 9.0), "");
    }

    #[test]
    fn outages_are_clipped_to_the_run() {
        let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                    [[message]]\nid = \"m\"\nat = \"10s\"\n\
                    [[outage]]\nfrom = \"5s\"\nduration = \"20s\"\n\
                    [[outage]]\nfrom = \"1m\"\nduration = \"1s\"\n";
        let (s, _) = crate::scenario::load_str("t.toml", text).unwrap();
        let shaded = outages(&s, Scale::linear(10_000));
        assert_eq!(shaded.len(), 1);
        assert_eq!(shaded[0]["x1"], Scale::linear(10_000).x(5_000));
        assert_eq!(shaded[0]["x2"], Scale::linear(10_000).x(10_000));
        assert_eq!(
            shaded[0]["title"],
            "outage from 5s to 25s: deliveries fail (downstream unavailable)"
        );
    }

    #[test]
    fn calls_are_drawn_on_a_scale_that_holds_the_busiest_row_and_the_limit() {
        // Five messages at 0 into a downstream of 2 calls a second: 5
        // offered and 2 accepted at 0, then the retries.
        let text = "[delivery]\nmax_receives = 5\nretry_interval = \"1s\"\n\
                    [downstream]\nlimit = 2\nper = \"1s\"\n\
                    [[traffic]]\ncount = 5\nover = \"0s\"\n";
        let (s, _) = crate::scenario::load_str("t.toml", text).unwrap();
        let o = crate::engine::run(&s, crate::engine::Recorder::Off).unwrap();
        let scale = Scale::linear(o.totals.end_time);
        let c = calls(&s, &o, scale).unwrap();
        let bottom = TITLE + HEIGHT;
        assert_eq!(c["peak"], 5);
        assert_eq!(c["limit"], 2);
        assert_eq!(c["limit_y"], round(bottom - 2.0 / 5.0 * HEIGHT));
        let x0 = scale.x(0);
        assert!(
            c["offered"]
                .as_str()
                .unwrap()
                .starts_with(&format!("M{x0},{bottom} L{x0},{TITLE}")),
            "{}",
            c["offered"]
        );
    }
}
