//! Explanations of the measures of sections 17-22: sinks, crashes,
//! overlapping deliveries, expired receipts and contention.

use crate::engine::{Detail, Outcome};
use crate::model::*;

use super::words::plural;

/// A sink's value and how many of it are duplicates, from the ledger.
pub(super) fn sink_story(scenario: &Scenario, outcome: &Outcome, k: u32) -> String {
    let sink = &scenario.guarantees.sinks[k as usize];
    let value = outcome.sink_value(k, SinkField::Value);
    let duplicates = outcome.sink_value(k, SinkField::VisibleDuplicates);
    let what = match sink.kind {
        SinkKind::Increment => "one per committed effect",
        SinkKind::Upsert => "one row per distinct key written (a fresh key is a new row)",
        SinkKind::Irreversible => "one send per committed effect",
    };
    format!(
        "sink \"{}\" ({}): value {value}, {what}; {} of them {} no new intent \
         ({} effects over {} intents in the ledger).\n",
        sink.name,
        sink.kind.as_str(),
        duplicates,
        if duplicates == 1 { "adds" } else { "add" },
        outcome.totals.effects,
        outcome.totals.effects - outcome.totals.duplicated_effects,
    )
}

/// Crashes, overlapping deliveries, expired receipts and contention, with
/// the transitions that show them when the run kept them.
pub(super) fn overlaps_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let t = &outcome.totals;
    let title = format!(
        "{}, {}, {}; at most {} of one message in flight at once",
        plural(t.crashes, "crash", "crashes"),
        plural(t.expired_receipts, "expired receipt", "expired receipts"),
        plural(t.contentions, "contention", "contentions"),
        plural(t.concurrent_deliveries, "delivery", "deliveries"),
    );
    let lines = outcome
        .transitions
        .iter()
        .filter(|tr| {
            matches!(
                tr.detail,
                Detail::Crashed { .. }
                    | Detail::ReceiptExpired { .. }
                    | Detail::VisibleAgain { .. }
                    | Detail::Contention { .. }
            )
        })
        .map(|tr| {
            let who = tr
                .message
                .map_or(String::new(), |m| format!("{}: ", scenario.message_id(m)));
            format!(
                "{} {who}{}",
                crate::duration::format(tr.time),
                crate::report::sentence::describe(scenario, &tr.detail)
            )
        })
        .collect();
    (title, lines)
}

/// Write-intent: every claim made over one that expired without DONE
/// (where a second effect comes from), with who made the lapsed claim,
/// whether its consumer crashed and when its lease expired.
pub(super) fn lapsed_claims(scenario: &Scenario, outcome: &Outcome) -> Vec<String> {
    outcome
        .transitions
        .iter()
        .filter_map(|t| match t.detail {
            Detail::Claimed {
                key,
                lapsed: Some(l),
                ..
            } => Some(format!(
                "{} {} claimed key {} again: the claim {} made at {}{} expired at {} without DONE",
                crate::duration::format(t.time),
                t.message
                    .map_or(String::new(), |m| scenario.message_id(m).into_owned()),
                scenario.key_name(key),
                scenario.message_id(l.holder),
                crate::duration::format(l.claimed_at),
                if l.crashed {
                    " (its consumer crashed)"
                } else {
                    ""
                },
                crate::duration::format(l.expired_at)
            )),
            _ => None,
        })
        .collect()
}

/// Each canary redrive: its canaries and their fates, and what became of
/// the rest.
pub(super) fn canary_story(scenario: &Scenario, outcome: &Outcome) -> Vec<String> {
    outcome
        .canaries
        .iter()
        .map(|c| {
            let fates: Vec<String> = c
                .listed
                .iter()
                .map(|&(m, state)| format!("{} {}", scenario.message_id(m), state.as_str()))
                .collect();
            let more = match c.canaries - c.listed.len() as u64 {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            format!(
                "the canary redrive inspected at {}: {} ({}{more}) decided at {}: {}",
                crate::duration::format(c.inspected_at),
                plural(c.canaries, "canary", "canaries"),
                fates.join(", "),
                crate::duration::format(c.decided_at),
                if c.passed {
                    format!(
                        "passed, {} redriven then",
                        plural(c.rest, "other", "others")
                    )
                } else {
                    format!(
                        "failed, {} left in quarantine",
                        plural(c.rest, "other", "others")
                    )
                }
            )
        })
        .collect()
}
