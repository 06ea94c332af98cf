//! The HTML timeline says what each operator inspection did, and its
//! legend lists only what the lanes show.

use crate::common;

use common::{code, legend, report, scratch};

#[test]
fn each_inspection_is_labelled_with_what_it_did_and_the_legend_with_what_occurs() {
    let d = scratch("timeline-labels");
    let o = report(
        &d,
        "html",
        &[
            "scenarios/16-two-operator-steps.toml",
            "scenarios/15-purge.toml",
        ],
    );
    assert_eq!(code(&o), 0);
    let read = |name: &str| std::fs::read_to_string(d.join(name)).unwrap();
    let two = read("16-two-operator-steps.html");
    // Step 1 redrives all three without repair; step 2 repairs and
    // redrives the two that came back.
    assert!(two.contains(">step 1: redrive 3</text>"));
    assert!(two.contains(">step 2: repair, redrive 2</text>"));
    // Nothing expired or was purged: neither is in the legend; redrives are.
    let shown = legend(&two);
    assert!(shown.contains("</svg>redriven</li>"));
    assert!(!shown.contains("</svg>expired</li>"));
    assert!(!shown.contains("</svg>purged</li>"));
    assert!(!shown.contains("</svg>ready</li>"));
    let purge = read("15-purge.html");
    assert!(purge.contains(">step 1: purge 3</text>"));
    assert!(legend(&purge).contains("</svg>purged</li>"));
}

#[test]
fn the_aggregate_legend_lists_only_the_states_the_areas_show() {
    let d = scratch("aggregate-legend");
    let o = report(&d, "html", &["scenarios/17-outage-100k-per-hour.toml"]);
    assert_eq!(code(&o), 0);
    let page = std::fs::read_to_string(d.join("17-outage-100k-per-hour.html")).unwrap();
    let listed: Vec<&str> = legend(&page)
        .split("</svg>")
        .skip(1)
        .map(|item| &item[..item.find("</li>").unwrap()])
        .collect();
    // Nothing expires, is purged or waits ready in this run: their areas
    // are flat, and the legend does not name them.
    assert_eq!(
        listed,
        [
            "acked",
            "quarantined",
            "waiting for retry",
            "not arrived",
            "outage"
        ]
    );
}
