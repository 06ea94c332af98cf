//! Tests of the chart module.

use super::*;

fn version(time: Option<Millis>, state: State) -> Version {
    let row = crate::words::line::Row {
        id: "m".into(),
        key: "m".into(),
        state,
        last_reason: None,
        cycle: 1,
        cycle_receives: 0,
        // Delivered once by its first version with a time.
        total_receives: time.is_some() as u32,
        effects: 0,
        dedup_hits: 0,
        last_quarantined_at: None,
        age: None,
    };
    Version {
        time,
        step: 0,
        row,
        x_death: None,
    }
}

#[test]
fn segments_join_one_state_and_skip_waiting() {
    let vs = [
        version(None, State::Waiting),
        version(Some(0), State::Waiting),
        version(Some(10), State::Waiting),
        version(Some(20), State::Quarantined),
        version(Some(40), State::Waiting),
        version(Some(40), State::Acked),
    ];
    assert_eq!(
        segments(&vs, 60),
        [
            (State::Waiting, 0, 20),
            (State::Quarantined, 20, 40),
            // Only an instant's last state is drawn.
            (State::Acked, 40, 60),
        ]
    );
    // A message that has not arrived by the end draws nothing.
    assert_eq!(segments(&vs[..1], 60), []);
}

#[test]
fn marks_of_one_instant_on_one_line_are_spread_apart() {
    // The third delivery fails and quarantines at 20s: three marks on
    // the line at one instant, drawn 7 apart.
    let text = "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n\
                [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n";
    let (s, _) = crate::scenario::load_str("t.toml", text).unwrap();
    let o = crate::engine::run(&s, crate::engine::Recorder::All).unwrap();
    let versions = crate::report::history::versions(&s, &o).unwrap();
    let c = chart(&s, &o, Some(&versions));
    let at_20s: Vec<(String, f64)> = c["lanes"][0]["marks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["time"] == 20_000)
        .map(|m| {
            (
                m["kind"].as_str().unwrap().to_string(),
                m["x"].as_f64().unwrap(),
            )
        })
        .collect();
    let x = Scale::linear(20_000).x(20_000);
    assert_eq!(
        at_20s,
        [
            ("delivered".to_string(), x),
            ("failed".to_string(), x + SPREAD),
            ("quarantined".to_string(), x + 2.0 * SPREAD),
        ]
    );
}

/// Over linear and compressed axes, the labels drawn never overlap, never
/// leave the chart, and the end of the run is always labelled.
#[test]
fn axis_labels_never_overlap_or_leave_the_chart() {
    use crate::report::sweep_chart::label_width;
    let mut scales: Vec<Scale> = [0, 7, 61_000, 123_160, 3_600_001, 86_400_000]
        .into_iter()
        .map(Scale::linear)
        .collect();
    // Scenario 22's shape: a minute of activity, an idle minute, the end.
    scales.push(Scale::compressing(
        123_160,
        (0..64_000).step_by(500).chain([123_160]),
    ));
    scales.push(Scale::compressing(
        600_000,
        [0, 10, 20, 300_000, 300_010, 600_000],
    ));
    for scale in scales {
        let placed = placed(&scale);
        let shown: Vec<(f64, f64)> = placed
            .iter()
            .filter(|p| !p.label.is_empty())
            .map(|p| {
                let w = label_width(&p.label);
                match p.anchor {
                    "start" => (p.x, p.x + w),
                    "end" => (p.x - w, p.x),
                    _ => (p.x - w / 2.0, p.x + w / 2.0),
                }
            })
            .collect();
        for (i, &(a, b)) in shown.iter().enumerate() {
            assert!(a >= 0.0 && b <= WIDTH, "{placed:?}");
            for &(c, d) in &shown[i + 1..] {
                assert!(b <= c || d <= a, "{placed:?}");
            }
        }
        assert!(!placed.last().unwrap().label.is_empty(), "{placed:?}");
    }
}
