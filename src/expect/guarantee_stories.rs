//! Explanations of the measures of sections 17-22: sinks, crashes,
//! overlapping deliveries, expired receipts and contention.

use std::fmt::Write as _;

use crate::engine::{Detail, Outcome};
use crate::model::*;

use crate::words::plural;

/// A sink's value and how many of it are duplicates, from the ledger;
/// for `missing`, `visible_duplicates` and `max_per_intent`, the intents
/// behind the figure (the first few, in message order) and, in a log run,
/// the restart that reprocessed or skipped them.
pub(super) fn sink_story(
    scenario: &Scenario,
    outcome: &Outcome,
    k: u32,
    field: SinkField,
) -> String {
    if scenario.write.is_some() {
        return super::write_stories::sink_story(scenario, outcome, k, field);
    }
    let sink = &scenario.guarantees.sinks[k as usize];
    let value = outcome.sink_value(k, SinkField::Value);
    let duplicates = outcome.sink_value(k, SinkField::VisibleDuplicates);
    let what = match sink.kind {
        SinkKind::Increment => "one per committed effect",
        SinkKind::Upsert => "one row per distinct key written (a fresh key is a new row)",
        SinkKind::Irreversible => "one send per committed effect",
    };
    let mut out = format!(
        "sink \"{}\" ({}): value {value}, {what}; {} of them {} no new intent \
         ({} effects over {} intents in the ledger); {} missing, at most {} of one intent.\n",
        sink.name,
        sink.kind.as_str(),
        duplicates,
        if duplicates == 1 { "adds" } else { "add" },
        outcome.totals.effects,
        outcome.totals.effects - outcome.totals.duplicated_effects,
        plural(
            outcome.sink_value(k, SinkField::Missing).max(0) as u64,
            "intent",
            "intents"
        ),
        plural(
            outcome.sink_value(k, SinkField::MaxPerIntent).max(0) as u64,
            "write",
            "writes"
        ),
    );
    let exactly_once = scenario
        .log
        .as_ref()
        .is_some_and(|l| l.guarantee == Guarantee::ExactlyOnce);
    if exactly_once {
        out.push_str(&format!(
            "under exactly_once only committed transactions' writes are visible: {} of aborted \
             transactions never were\n",
            plural(outcome.totals.aborted_effects, "effect", "effects"),
        ));
        return out;
    }
    let Some(Listed {
        missing,
        count,
        examples,
    }) = listed_intents(scenario, outcome, k, field)
    else {
        return out;
    };
    if count == 0 {
        return out;
    }
    out.push_str(&format!(
        "{} {}:\n",
        plural(count, "intent", "intents"),
        if missing {
            "of arrived messages with no write"
        } else {
            "written more than once"
        },
    ));
    // A reason shared with the line before is not repeated.
    let mut previous = String::new();
    for (m, writes) in &examples {
        let reason = why(scenario, outcome, *m, missing);
        let mut name = scenario.intent_name(scenario.intent(*m)).into_owned();
        if let Some(at) = outcome.arrived_at(scenario, *m) {
            let _ = write!(name, " (arrived {}", crate::duration::format(at));
            // A record written twice: when it was first processed.
            if let Some(first) = first_delivery(outcome, *m).filter(|_| !missing) {
                let _ = write!(name, ", first delivered {}", crate::duration::format(first));
            }
            name.push(')');
        }
        let writes = if missing {
            String::new()
        } else {
            format!(": {}", plural(*writes, "write", "writes"))
        };
        let shown = if reason == previous {
            ""
        } else {
            reason.as_str()
        };
        out.push_str(&format!("  {name}{writes}{shown}\n"));
        previous = reason;
    }
    if count > examples.len() as u64 {
        out.push_str(&format!(
            "  ... and {} more\n",
            count - examples.len() as u64
        ));
    }
    out
}

/// The messages a sink story names for a failed `field` of sink `k` (a
/// rerun records them): its example intents' first messages.
pub(super) fn sink_examples(
    scenario: &Scenario,
    outcome: &Outcome,
    k: u32,
    field: SinkField,
) -> Vec<MessageIndex> {
    listed_intents(scenario, outcome, k, field)
        .map(|l| l.examples.into_iter().map(|(m, _)| m).collect())
        .unwrap_or_default()
}

/// The intents a sink story lists.
struct Listed {
    /// Missing intents, else intents written more than once.
    missing: bool,
    count: u64,
    /// The first few: each intent's first message and its writes.
    examples: Vec<(MessageIndex, u64)>,
}

/// The intents a sink story lists for a failed `field` of sink `k`. None
/// where it lists none: a fan-out (its story tells the
/// calls), exactly_once (only committed writes are visible), a value or a
/// lag, and an upsert's repeats (only an identity change repeats one).
fn listed_intents(
    scenario: &Scenario,
    outcome: &Outcome,
    k: u32,
    field: SinkField,
) -> Option<Listed> {
    let exactly_once =
        (scenario.log.as_ref()).is_some_and(|l| l.guarantee == Guarantee::ExactlyOnce);
    if scenario.write.is_some() || exactly_once {
        return None;
    }
    let missing = match field {
        SinkField::Missing => true,
        SinkField::VisibleDuplicates | SinkField::MaxPerIntent => {
            if scenario.guarantees.sinks[k as usize].kind == SinkKind::Upsert {
                return None;
            }
            false
        }
        SinkField::Value
        | SinkField::MaxLag
        | SinkField::CompensationsGivenUp
        | SinkField::WritesAfterChange
        | SinkField::KindAtEnd
        | SinkField::StaleOverwrites
        | SinkField::StaleRejections
        | SinkField::Compensations => return None,
    };
    let (count, examples) = intent_examples(scenario, outcome, |writes, arrived| {
        if missing {
            arrived && writes == 0
        } else {
            writes > 1
        }
    });
    Some(Listed {
        missing,
        count,
        examples,
    })
}

/// When message `m` was first delivered, if the run recorded it.
fn first_delivery(outcome: &Outcome, m: MessageIndex) -> Option<Millis> {
    (outcome.transitions.iter())
        .find(|t| t.message == Some(m) && matches!(t.detail, Detail::Delivered { .. }))
        .map(|t| t.time)
}

/// How many examples of intents a sink story names.
const EXAMPLES: usize = 5;

/// The intents whose ledger writes and arrival pass `wanted`: how many,
/// and the first [`EXAMPLES`] in message order (the first message of each,
/// its writes). A generated message with its own key is its intent's only
/// message; the explicit intents (a few, from the file) are summed over
/// their messages first.
fn intent_examples(
    scenario: &Scenario,
    outcome: &Outcome,
    wanted: impl Fn(u64, bool) -> bool,
) -> (u64, Vec<(MessageIndex, u64)>) {
    let arrived = |state: &crate::engine::MessageState| {
        state.state != State::Waiting || state.total_receives > 0
    };
    let explicit = scenario.intents.explicit.len();
    let mut shared = vec![(0u64, false, false); explicit];
    for (m, state) in outcome.messages.iter().enumerate() {
        if let Some((writes, seen, _)) = shared.get_mut(scenario.intent(m as MessageIndex) as usize)
        {
            *writes += state.effects as u64;
            *seen |= arrived(&state);
        }
    }
    let mut count = 0;
    let mut examples = Vec::new();
    for (m, state) in outcome.messages.iter().enumerate() {
        let m = m as MessageIndex;
        let (writes, seen) = match shared.get_mut(scenario.intent(m) as usize) {
            // Counted at the intent's first message only.
            Some((_, _, true)) => continue,
            Some((writes, seen, met)) => {
                *met = true;
                (*writes, *seen)
            }
            None => (state.effects as u64, arrived(&state)),
        };
        if wanted(writes, seen) {
            count += 1;
            if examples.len() < EXAMPLES {
                examples.push((m, writes));
            }
        }
    }
    (count, examples)
}

/// Why message `m`'s intent is missing or written again: in a log run, the
/// restart of its partition that skipped or reprocessed records; else its
/// final state.
fn why(scenario: &Scenario, outcome: &Outcome, m: MessageIndex, missing: bool) -> String {
    let state = outcome.messages.state(m);
    let Some(log) = &outcome.log else {
        return format!(" ({})", state.as_str());
    };
    let p = u32::from(log.partition_of[m as usize]);
    // A skipped record's message keeps a state that is not final.
    let passed_over = matches!(state, State::Waiting | State::Ready | State::InFlight);
    if missing && !passed_over {
        return format!(" (partition {p}, {})", state.as_str());
    }
    let restart = log.restarts.iter().enumerate().find_map(|(r, record)| {
        let k = record.partitions.iter().position(|&q| q == p)?;
        let (before, resume) = (record.positions_before[k], record.resume_positions[k]);
        let hit = if missing {
            resume > before
        } else {
            resume < before
        };
        hit.then(|| (r, record, before.min(resume), before.max(resume)))
    });
    let at_most_once = scenario
        .log
        .as_ref()
        .is_some_and(|l| l.guarantee == Guarantee::AtMostOnce);
    match restart {
        Some((r, record, from, to)) if missing => format!(
            " (partition {p}: restart {} at {} passed over offsets {from}..{}{})",
            r + 1,
            crate::duration::format(record.at),
            to - 1,
            if at_most_once {
                ", at_most_once had committed past the record in flight"
            } else {
                ""
            }
        ),
        Some((r, record, from, to)) => {
            // The checkpoint's own position: the resume position less the
            // records `skip` passed over.
            let skip = (scenario.log.as_ref())
                .and_then(|l| l.restarts.get(r))
                .map_or(0, |spec| spec.skip);
            format!(
                " (partition {p}: restart {} at {} processed offsets {from}..{} again{})",
                r + 1,
                crate::duration::format(record.at),
                to - 1,
                record
                    .checkpoint_time
                    .map(|c| format!(
                        ", from the checkpoint of {} at position {}",
                        crate::duration::format(c),
                        from.saturating_sub(skip)
                    ))
                    .unwrap_or_default()
            )
        }
        None => format!(" (partition {p}, {})", state.as_str()),
    }
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
                crate::words::sentence::describe(scenario, &tr.detail)
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
