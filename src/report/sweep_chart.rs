//! The HTML chart of a sweep: a chosen measure (the first column) against
//! the first swept key, one line per value of the second swept key (one
//! line when a single key is swept). Geometry in SVG units; the template
//! only draws it.

use serde::Serialize;

/// The chart: axes, ticks and one polyline per series.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SweepChart {
    pub width: u32,
    pub height: u32,
    pub left: u32,
    pub right: u32,
    pub top: u32,
    pub bottom: u32,
    /// The measure drawn, and the swept key along the x axis.
    pub measure: String,
    /// With three or more swept keys, the values the others are held at:
    /// "delivery.backoff.base = \"100ms\"".
    pub held: Option<String>,
    pub x_key: String,
    pub series_key: Option<String>,
    pub x_ticks: Vec<Tick>,
    pub y_ticks: Vec<Tick>,
    pub series: Vec<Series>,
    /// A heatmap instead of lines, when both swept keys are numbers and the
    /// grid is at least 4 by 4: one cell per point, the second key upwards.
    pub cells: Vec<Cell>,
    /// The heatmap's rows (values of the second key, bottom up).
    pub row_ticks: Vec<Tick>,
}

/// One cell of a heatmap: its rectangle, and its shade from 0 (the lowest
/// value drawn) to 1 (the highest).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cell {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub shade: f64,
    pub label: String,
    pub title: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Tick {
    pub at: f64,
    pub label: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Series {
    pub label: String,
    /// "x,y x,y ..." for a polyline.
    pub points: String,
    pub dots: Vec<Dot>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Dot {
    pub x: f64,
    pub y: f64,
    pub title: String,
}

/// One point of the sweep as the chart reads it: its values in key order,
/// and the measure (`None` when the point has none: stopped, or never).
pub struct ChartPoint<'a> {
    pub values: &'a [String],
    pub measure: Option<u64>,
    pub shown: String,
}

/// About how wide a label is drawn at 11 px in a sans-serif font (an
/// average letter is about 6.2 px; a little more, to be safe).
pub fn label_width(label: &str) -> f64 {
    label.chars().count() as f64 * 6.6
}

/// The chart of `points` (in sweep order, the first key slowest), or
/// `None` when there is nothing to draw. `time`: the measure is a duration
/// in milliseconds (the axis is labelled `1m30s`).
pub fn sweep_chart(
    keys: &[String],
    measure: &str,
    points: &[ChartPoint],
    time: bool,
) -> Option<SweepChart> {
    let x_key = keys.first()?.clone();
    let series_key = keys.get(1).cloned();
    // Keys beyond the second are held at their first value.
    let first = points.first()?;
    let held_values = first.values.get(2..).unwrap_or_default();
    let points: Vec<&ChartPoint> = points
        .iter()
        .filter(|p| p.values.get(2..).unwrap_or_default() == held_values)
        .collect();
    let held = (!held_values.is_empty()).then(|| {
        keys[2..]
            .iter()
            .zip(held_values)
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let mut xs: Vec<&String> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for p in &points {
        if !xs.contains(&&p.values[0]) {
            xs.push(&p.values[0]);
        }
        let label = p.values.get(1).cloned().unwrap_or_default();
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    let max = points.iter().filter_map(|p| p.measure).max()?;
    let (width, height, left, right, top, bottom) = (720u32, 320u32, 64u32, 700u32, 20u32, 280u32);
    let top_value = nice_ceiling(max);
    let span = f64::from(right - left);
    let x_at = |i: usize| {
        if xs.len() == 1 {
            f64::from(left) + span / 2.0
        } else {
            f64::from(left) + span * i as f64 / (xs.len() - 1) as f64
        }
    };
    let y_at = |v: u64| f64::from(bottom) - f64::from(bottom - top) * v as f64 / top_value as f64;
    let series = labels
        .iter()
        .map(|label| {
            let dots: Vec<Dot> = points
                .iter()
                .filter(|p| p.values.get(1).cloned().unwrap_or_default() == *label)
                .filter_map(|p| {
                    let i = xs.iter().position(|x| **x == p.values[0])?;
                    let v = p.measure?;
                    Some(Dot {
                        x: round(x_at(i)),
                        y: round(y_at(v)),
                        title: format!("{} = {}, {measure} {}", x_key, p.values[0], p.shown),
                    })
                })
                .collect();
            Series {
                label: match &series_key {
                    Some(k) => format!("{k} = {label}"),
                    None => measure.to_string(),
                },
                points: dots
                    .iter()
                    .map(|d| format!("{},{}", d.x, d.y))
                    .collect::<Vec<_>>()
                    .join(" "),
                dots,
            }
        })
        .collect();
    let y_ticks = (0..=4)
        .map(|k| {
            let v = top_value * k / 4;
            Tick {
                at: round(y_at(v)),
                label: if time {
                    crate::duration::format(v)
                } else {
                    v.to_string()
                },
            }
        })
        .collect();
    let x_ticks = xs
        .iter()
        .enumerate()
        .map(|(i, x)| Tick {
            at: round(x_at(i)),
            label: (*x).clone(),
        })
        .collect();
    let (cells, row_ticks) = heatmap(&xs, &labels, &points, (left, right, top, bottom), measure);
    // A heatmap's columns are labelled at their centres.
    let x_ticks: Vec<Tick> = if cells.is_empty() {
        x_ticks
    } else {
        let w = f64::from(right - left) / xs.len() as f64;
        xs.iter()
            .enumerate()
            .map(|(i, x)| Tick {
                at: round(f64::from(left) + w * (i as f64 + 0.5)),
                label: (*x).clone(),
            })
            .collect()
    };
    // A label centred on a tick near an edge would be cut off there: it
    // moves in just enough to be whole.
    let x_ticks = x_ticks
        .into_iter()
        .map(|t| {
            let half = label_width(&t.label) / 2.0;
            let at = t.at.clamp(half, (f64::from(width) - half).max(half));
            Tick { at: round(at), ..t }
        })
        .collect();
    Some(SweepChart {
        cells,
        row_ticks,
        width,
        height,
        left,
        right,
        top,
        bottom,
        measure: measure.to_string(),
        held,
        x_key,
        series_key,
        x_ticks,
        y_ticks,
        series,
    })
}

/// The heatmap's cells and row ticks, when `xs` and `ys` (the values of the
/// first and second keys) are all numbers and at least 4 each; else none.
fn heatmap(
    xs: &[&String],
    ys: &[String],
    points: &[&ChartPoint],
    (left, right, top, bottom): (u32, u32, u32, u32),
    measure: &str,
) -> (Vec<Cell>, Vec<Tick>) {
    let numeric = |v: &str| v.parse::<f64>().is_ok();
    if xs.len() < 4
        || ys.len() < 4
        || !xs.iter().all(|x| numeric(x))
        || !ys.iter().all(|y| numeric(y))
    {
        return (Vec::new(), Vec::new());
    }
    let (w, h) = (
        f64::from(right - left) / xs.len() as f64,
        f64::from(bottom - top) / ys.len() as f64,
    );
    let drawn: Vec<u64> = points.iter().filter_map(|p| p.measure).collect();
    let (low, high) = (
        drawn.iter().copied().min().unwrap_or(0),
        drawn.iter().copied().max().unwrap_or(0),
    );
    let cells = points
        .iter()
        .filter_map(|p| {
            let i = xs.iter().position(|x| **x == p.values[0])?;
            let j = ys.iter().position(|y| Some(y) == p.values.get(1))?;
            let shade = match p.measure {
                Some(v) if high > low => (v - low) as f64 / (high - low) as f64,
                Some(_) => 0.5,
                None => 0.0,
            };
            Some(Cell {
                x: round(f64::from(left) + w * i as f64),
                y: round(f64::from(bottom) - h * (j + 1) as f64),
                width: round(w),
                height: round(h),
                shade: round(shade * 100.0) / 100.0,
                label: p.shown.clone(),
                title: format!("{} {}: {measure} {}", p.values[0], ys[j], p.shown),
            })
        })
        .collect();
    let rows = ys
        .iter()
        .enumerate()
        .map(|(j, y)| Tick {
            at: round(f64::from(bottom) - h * (j as f64 + 0.5)),
            label: y.clone(),
        })
        .collect();
    (cells, rows)
}

/// The smallest of 1, 2, 5 times a power of ten that is at least `v` (at
/// least 4, so that four ticks are whole numbers).
fn nice_ceiling(v: u64) -> u64 {
    let mut unit = 1u64;
    while unit <= u64::MAX / 10 {
        for m in [1, 2, 5] {
            let c = (unit * m).max(4);
            if c >= v {
                return c.div_ceil(4) * 4;
            }
        }
        unit *= 10;
    }
    u64::MAX
}

fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_labels_stay_whole_inside_the_chart() {
        let values: Vec<[String; 1]> = ["\"none\"", "\"full\"", "\"equal\"", "\"decorrelated\""]
            .map(|v| [v.to_string()])
            .to_vec();
        let points: Vec<ChartPoint> = values
            .iter()
            .map(|v| ChartPoint {
                values: v,
                measure: Some(1),
                shown: "1".into(),
            })
            .collect();
        let keys = ["delivery.backoff.jitter".to_string()];
        let chart = sweep_chart(&keys, "acked", &points, false).unwrap();
        for t in &chart.x_ticks {
            let half = label_width(&t.label) / 2.0;
            assert!(t.at - half >= 0.0, "{t:?}");
            assert!(t.at + half <= f64::from(chart.width), "{t:?}");
        }
        // The last label moved in from its point at the right edge.
        assert!(chart.x_ticks[3].at < f64::from(chart.right));
        assert_eq!(chart.x_ticks[1].at, 276.0);
    }

    #[test]
    fn one_line_per_value_of_the_second_key_over_the_first() {
        let values: Vec<[String; 2]> = ["0.0", "0.05"]
            .iter()
            .flat_map(|a| ["3", "5"].map(|b| [a.to_string(), b.to_string()]))
            .collect();
        let points: Vec<ChartPoint> = values
            .iter()
            .zip([0, 0, 10, 4])
            .map(|(v, m)| ChartPoint {
                values: v,
                measure: Some(m),
                shown: m.to_string(),
            })
            .collect();
        let keys = ["share".to_string(), "max_receives".to_string()];
        let chart = sweep_chart(&keys, "quarantined", &points, false).unwrap();
        assert_eq!(chart.series.len(), 2);
        assert_eq!(chart.series[0].label, "max_receives = 3");
        // share 0.0 at the left edge, 0.05 at the right; the axis ends at
        // 12 (10 rounded up to four whole ticks).
        assert_eq!(chart.series[0].points, "64,280 700,63.3");
        assert_eq!(chart.series[1].points, "64,280 700,193.3");
        assert_eq!(chart.y_ticks.last().unwrap().label, "12");
        assert_eq!(
            chart
                .x_ticks
                .iter()
                .map(|t| t.label.as_str())
                .collect::<Vec<_>>(),
            ["0.0", "0.05"]
        );
    }

    #[test]
    fn keys_beyond_the_second_are_held_at_their_first_value() {
        let values: Vec<[String; 3]> = ["1", "2"]
            .iter()
            .flat_map(|a| ["x", "y"].map(|c| [a.to_string(), "b".to_string(), c.to_string()]))
            .collect();
        let points: Vec<ChartPoint> = values
            .iter()
            .zip([1, 100, 2, 100])
            .map(|(v, m)| ChartPoint {
                values: v,
                measure: Some(m),
                shown: m.to_string(),
            })
            .collect();
        let keys = ["a".to_string(), "b".to_string(), "c".to_string()];
        let chart = sweep_chart(&keys, "m", &points, true).unwrap();
        assert_eq!(chart.held.as_deref(), Some("c = x"));
        assert_eq!(chart.series.len(), 1);
        assert_eq!(chart.series[0].dots.len(), 2);
        // A duration axis: 4ms.
        assert_eq!(chart.y_ticks.last().unwrap().label, "4ms");
    }

    #[test]
    fn two_numeric_keys_of_four_values_or_more_make_a_heatmap() {
        let values: Vec<[String; 2]> = (1..=4)
            .flat_map(|a| (1..=5).map(move |b| [a.to_string(), (b * 10).to_string()]))
            .collect();
        let points: Vec<ChartPoint> = values
            .iter()
            .map(|v| {
                let m = v[0].parse::<u64>().unwrap() * v[1].parse::<u64>().unwrap();
                ChartPoint {
                    values: v,
                    measure: Some(m),
                    shown: m.to_string(),
                }
            })
            .collect();
        let keys = ["a".to_string(), "b".to_string()];
        let chart = sweep_chart(&keys, "m", &points, false).unwrap();
        assert_eq!(chart.cells.len(), 20);
        assert_eq!(chart.row_ticks.len(), 5);
        // The lowest value (1 x 10) is shade 0 at the bottom left, the
        // highest (4 x 50) shade 1 at the top right.
        let lowest = &chart.cells[0];
        assert_eq!(
            (lowest.shade, lowest.x, lowest.label.as_str()),
            (0.0, 64.0, "10")
        );
        let highest = chart.cells.last().unwrap();
        assert_eq!((highest.shade, highest.y), (1.0, 20.0));
        // Three values of a key: lines, no heatmap.
        let few: Vec<ChartPoint> = points.into_iter().filter(|p| p.values[0] != "4").collect();
        assert!(
            sweep_chart(&keys, "m", &few, false)
                .unwrap()
                .cells
                .is_empty()
        );
    }

    #[test]
    fn nice_ceilings() {
        assert_eq!(nice_ceiling(0), 4);
        assert_eq!(nice_ceiling(7), 12);
        assert_eq!(nice_ceiling(101), 200);
        assert_eq!(nice_ceiling(u64::MAX), u64::MAX);
    }
}
