//! What happened, in words: the sentence of each transition, as the text
//! transcript, the reports and the JSON `text` field say it. One function
//! writes it to either end: a formatter (`Display`, so a transcript of a
//! million transitions builds no string per sentence) or the string a
//! JSON writer copies, piece by piece with numbers and durations by
//! `itoa` rather than through the format machinery.

use std::fmt::{self, Write};

use crate::duration::{Dur, format as dur};
use crate::engine::Detail;
use crate::model::Scenario;

/// `n` in decimal.
fn number<O: Write + ?Sized>(out: &mut O, n: impl itoa::Integer) -> fmt::Result {
    out.write_str(itoa::Buffer::new().format(n))
}

/// "partition P, offset O".
fn write_record<O: Write + ?Sized>(out: &mut O, r: crate::engine::Record) -> fmt::Result {
    out.write_str("partition ")?;
    number(out, r.partition)?;
    out.write_str(", offset ")?;
    number(out, r.offset)
}

/// What happened, in words, without time or message.
pub fn describe(scenario: &Scenario, d: &Detail) -> String {
    Sentence(scenario, d).to_string()
}

/// What happened, in words ([`describe`]), written without a string of
/// its own: as text, or as a JSON string.
pub struct Sentence<'a>(pub &'a Scenario, pub &'a Detail);

impl serde::Serialize for Sentence<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl fmt::Display for Sentence<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        say(f, self.0, self.1)
    }
}

/// Writes the sentence of `d` to `out`: a formatter, or (for JSON) a
/// string, where each piece is a plain copy.
fn say<O: Write + ?Sized>(out: &mut O, scenario: &Scenario, d: &Detail) -> fmt::Result {
    match *d {
        // The most frequent sentences are written piece by piece,
        // numbers by `itoa`: a report writes one per transition.
        Detail::Delivered {
            cycle,
            cycle_receives,
            total_receives,
            record,
        } => {
            out.write_str("delivered (cycle ")?;
            number(out, cycle)?;
            out.write_str(", receive ")?;
            number(out, cycle_receives)?;
            out.write_str(" of the cycle, ")?;
            number(out, total_receives)?;
            out.write_str(" in all")?;
            if let Some(r) = record {
                out.write_str(", ")?;
                write_record(out, r)?;
            }
            out.write_str(")")
        }
        Detail::Restarted {
            restart,
            partition,
            checkpoint,
            position,
        } => {
            let Some(spec) = scenario.log.as_ref().map(|l| &l.restarts[restart as usize]) else {
                return out.write_str("restarted");
            };
            out.write_str("restarted: ")?;
            match partition {
                Some(p) => {
                    out.write_str("partition ")?;
                    number(out, p)?;
                    out.write_str(" resumes at offset ")?;
                    number(out, position)?;
                }
                None => out.write_str("every partition resumes at its position below")?,
            }
            match checkpoint {
                Some(t) => {
                    out.write_str(" (the checkpoint at ")?;
                    Dur(t).write_plain(out)?;
                    out.write_str(")")?;
                }
                None => out.write_str(" (no checkpoint)")?,
            }
            if spec.skip > 0 {
                out.write_str(", ")?;
                number(out, spec.skip)?;
                out.write_str(" more records skipped past it")?;
            }
            if spec.down_for > 0 {
                out.write_str(", down until ")?;
                Dur(spec.at.saturating_add(spec.down_for)).write_plain(out)?;
            }
            Ok(())
        }
        Detail::DeliveryAbandoned { record, aborted } => {
            out.write_str("delivery abandoned by the restart (")?;
            write_record(out, record)?;
            out.write_str(if aborted {
                "): its write aborted with the transaction"
            } else {
                "): its write stays"
            })
        }
        Detail::RetryCancelled { record, due } => {
            out.write_str("retry cancelled by the restart (")?;
            write_record(out, record)?;
            out.write_str(", was due at ")?;
            Dur(due).write_plain(out)?;
            out.write_str(")")
        }
        Detail::RecordSkipped { record } => {
            out.write_str("skipped: below the resume position, never done (")?;
            write_record(out, record)?;
            out.write_str(")")
        }
        Detail::CompensationSent {
            sink,
            reply,
            applied,
        } => {
            let name = &scenario.guarantees.sinks[sink as usize].name;
            write!(out, "compensation sent to sink \"{name}\": ")?;
            use crate::engine::Reply;
            match (reply, applied) {
                (Reply::Failed(reason), _) => {
                    write!(out, "failed: {}", scenario.reasons[reason as usize])
                }
                (Reply::Lost, true) => out.write_str("applied, its reply lost"),
                (Reply::Lost, false) => {
                    out.write_str("its reply lost, not applied (compensated already)")
                }
                (_, true) => out.write_str("applied"),
                (_, false) => out.write_str("heard, not applied (compensated already)"),
            }
        }
        Detail::StoreRestarted { live, lost: true } => write!(
            out,
            "deduplication store restarted without persistence: {live} live entries lost"
        ),
        Detail::StoreRestarted { live, lost: false } => write!(
            out,
            "deduplication store restarted: durable, its {live} live entries kept"
        ),
        Detail::CheckpointCompleted {
            number,
            partitions: 1,
            position,
        } => write!(
            out,
            "checkpoint {number} completed: position {position} committed"
        ),
        Detail::CheckpointCompleted {
            number,
            partitions,
            position,
        } => write!(
            out,
            "checkpoint {number} completed: the {partitions} partitions' positions committed (partition 0 at {position})"
        ),
        Detail::AppendRetried { record: Some(record) } => {
            out.write_str("append retried by the producer, its acknowledgement lost: a duplicate record (")?;
            write_record(out, record)?;
            out.write_str(")")
        }
        Detail::AppendRetried { record: None } => out.write_str(
            "append retried by the producer, its acknowledgement lost: deduplicated by the broker (idempotence), nothing appended",
        ),
        Detail::CheckpointFailed { number, status } => write!(
            out,
            "checkpoint {number} {}: nothing committed, the positions stay those of the last completed checkpoint",
            status.as_str()
        ),
        Detail::ReplayEnded {
            partition,
            from,
            to,
        } => write!(
            out,
            "replay ended: partition {partition} reached offset {from} and goes on from {to}, where it was before the restart"
        ),
        Detail::Archived { entered } => {
            out.write_str("archived: copied to the archive, in quarantine since ")?;
            Dur(entered).write_plain(out)?;
            out.write_str(" (it stays there, redrivable until it expires)")
        }
        Detail::WriteFailedLate { sink } => write!(
            out,
            "the outbox row was dead-lettered for sink \"{}\": the write failed (outbox_dead_letter = \"compensate\"), and the relay compensates its saga sinks",
            scenario.guarantees.sinks[sink as usize].name,
        ),
        Detail::StaleOverwrite {
            sink,
            message,
            key,
            written,
            held,
        } => write!(
            out,
            "sink \"{}\" wrote version {written} over version {held} of row \"{}\": a stale overwrite, the row now holds older data",
            scenario.guarantees.sinks[sink as usize].name,
            scenario.row_name(message, key),
        ),
        Detail::SinkChanged { sink, kind } => write!(
            out,
            "sink \"{}\" now applies writes as {} (becomes): {}",
            scenario.guarantees.sinks[sink as usize].name,
            match kind {
                crate::model::SinkKind::Increment => "an append",
                _ => "an upsert",
            },
            match kind {
                crate::model::SinkKind::Increment => "every write adds one, even to a key with a row",
                _ => "a write of a key already written changes nothing",
            }
        ),
        Detail::CoordinatorRecovered {
            prepared_at,
            committed,
        } => {
            out.write_str("coordinator recovered (crashed after the prepares at ")?;
            Dur(prepared_at).write_plain(out)?;
            out.write_str(if committed {
                "): its decision was logged; committed everywhere"
            } else {
                "): no decision in its log; aborted everywhere (presumed abort)"
            })
        }
        Detail::CompensationGivenUp { sink, calls } => write!(
            out,
            "compensation given up: its {calls} calls to sink \"{}\" all failed; the write stays visible there",
            scenario.guarantees.sinks[sink as usize].name
        ),
        Detail::OutboxDeadLettered { sink, calls } => write!(
            out,
            "outbox row dead-lettered for sink \"{}\" after {calls} calls; the other sinks unaffected",
            scenario.guarantees.sinks[sink as usize].name
        ),
        Detail::Resumed {
            partition,
            position,
        } => {
            out.write_str("resumed: partition ")?;
            number(out, partition)?;
            out.write_str(" processes from offset ")?;
            number(out, position)
        }
        Detail::Failed { reason, class } => {
            out.write_str("failed: ")?;
            out.write_str(&scenario.reasons[reason as usize])?;
            out.write_str(" (")?;
            out.write_str(class.as_str())?;
            out.write_str(")")
        }
        Detail::Committed { key, effect } => {
            out.write_str("committed effect #")?;
            number(out, effect)?;
            out.write_str(" (key ")?;
            scenario.name_of_key(key).write_plain(out)?;
            out.write_str(")")
        }
        Detail::DedupHit { key, expires_at } => write!(
            out,
            "dedup hit on key {}: stored result valid until {}, no effect",
            scenario.name_of_key(key),
            Dur(expires_at)
        ),
        Detail::AckLost => out.write_str("ack lost: the broker counts the delivery as failed"),
        Detail::Acked => out.write_str("acked"),
        // A return to the queue at once, where it goes: rabbitmq by
        // `broker_version`, or a classic queue.
        Detail::RetryScheduled { delay: 0, due }
            if scenario.requeue() != crate::model::Requeue::Back
                && scenario.delivery.retry == crate::model::Retry::Fixed(0)
                && scenario.flow.workers.is_some() =>
        {
            match scenario.requeue() {
                crate::model::Requeue::Original => write!(
                    out,
                    "requeued at {} to its original position (RabbitMQ classic queue)",
                    Dur(due)
                ),
                _ => write!(
                    out,
                    "requeued at {} to the front of the queue (RabbitMQ {})",
                    Dur(due),
                    scenario
                        .guarantees
                        .broker_version
                        .map_or(String::new(), |(a, b)| format!("{a}.{b}"))
                ),
            }
        }
        Detail::RetryScheduled { delay, due } => {
            out.write_str("retry scheduled after ")?;
            Dur(delay).write_plain(out)?;
            out.write_str(" (due ")?;
            Dur(due).write_plain(out)?;
            out.write_str(")")
        }
        Detail::Quarantined {
            reason,
            class,
            depth,
            elapsed: Some((due, began)),
        } => write!(
            out,
            "quarantined: {} ({}); DLQ depth {depth}; max_elapsed {}: next retry due at {} ({} after the cycle began)",
            scenario.reasons[reason as usize],
            class.as_str(),
            Dur(scenario.delivery.max_elapsed.unwrap_or(0)),
            Dur(due),
            Dur(due.saturating_sub(began)),
        ),
        Detail::Quarantined {
            reason,
            class,
            depth,
            elapsed: None,
        } => write!(
            out,
            "quarantined: {} ({}); DLQ depth {depth}{}",
            scenario.reasons[reason as usize],
            class.as_str(),
            delivery_limit(scenario, class)
        ),
        Detail::Inspected { step, depth } => {
            let op = &scenario.operators[step as usize - 1];
            write!(
                out,
                "operator step {step} inspects: DLQ depth {depth}, action {}{}",
                op.action.name(),
                if op.repair { ", repair" } else { "" }
            )
        }
        Detail::Expired { age } if scenario.guarantees.profile.retention_from_enqueue() => {
            write!(
                out,
                "expired: retention counted from its latest enqueue ({}), age {} at the inspection",
                scenario.guarantees.profile.as_str(),
                Dur(age)
            )
        }
        Detail::Expired { age } => write!(out, "expired in quarantine (age {})", Dur(age)),
        Detail::Repaired => out.write_str("repaired: until = \"repair\" faults stop"),
        Detail::Redriven { cycle, key, record } => {
            write!(
                out,
                "redriven: cycle {cycle}, key {}",
                scenario.name_of_key(key)
            )?;
            if let Some(r) = record {
                out.write_str(", appended at ")?;
                write_record(out, r)?;
            }
            Ok(())
        }
        Detail::RedriveSkipped { state } => {
            write!(
                out,
                "redrive skipped: the message is {}, not in quarantine",
                state.as_str()
            )
        }
        Detail::Purged => out.write_str("purged from quarantine"),
        Detail::AlarmFired { alarm, value } => {
            out.write_str(&alarm_sentence(scenario, alarm, Some(value)))
        }
        Detail::AlarmCleared { alarm } => out.write_str(&alarm_sentence(scenario, alarm, None)),
        Detail::Crashed { at, .. } => write!(
            out,
            "consumer crashed ({}): no ack reaches the broker",
            at.as_str()
        ),
        Detail::ReceiptExpired {
            started,
            latest,
            quarantined: false,
        } if started == latest && scenario.guarantees.jetstream.is_some() => write!(
            out,
            "receipt expired: the delivery started at {} ended after an earlier delivery's \
             answer had settled its message; its outcome changes nothing",
            Dur(started)
        ),
        Detail::ReceiptExpired {
            started,
            latest,
            quarantined,
        } => {
            let by = if quarantined {
                format!("the message was quarantined at {}", Dur(latest))
            } else {
                format!("its latest delivery started at {}", Dur(latest))
            };
            write!(
                out,
                "receipt expired: the delivery started at {} was superseded ({by}); its outcome is lost",
                Dur(started)
            )
        }
        Detail::VisibleAgain { started } if scenario.guarantees.jetstream.is_some() => write!(
            out,
            "ack wait ended: no ack for the delivery started at {}",
            Dur(started)
        ),
        Detail::VisibleAgain { started } => write!(
            out,
            "visible again: the delivery started at {} outlived the visibility timeout",
            Dur(started)
        ),
        Detail::Contention {
            key,
            lease_expires,
            holder,
            claimed_at,
        } => write!(
            out,
            "contention on key {}: INTENT claimed by {} at {} is live until {}, no effect",
            scenario.name_of_key(key),
            scenario.name_of_message(holder),
            Dur(claimed_at),
            Dur(lease_expires)
        ),
        Detail::Claimed {
            key,
            lease_expires,
            lapsed,
        } => {
            write!(
                out,
                "claimed key {}: INTENT until {}",
                scenario.name_of_key(key),
                Dur(lease_expires)
            )?;
            if let Some(l) = lapsed {
                write!(
                    out,
                    "; the claim {} made at {}{} expired at {} without DONE",
                    scenario.name_of_message(l.holder),
                    Dur(l.claimed_at),
                    if l.crashed {
                        " (its consumer crashed)"
                    } else {
                        ""
                    },
                    Dur(l.expired_at)
                )?;
            }
            Ok(())
        }
        Detail::DoneRecorded { key, expires_at } => write!(
            out,
            "DONE recorded for key {} (valid until {})",
            scenario.name_of_key(key),
            Dur(expires_at)
        ),
        Detail::Dropped { reason, class } => write!(
            out,
            "dropped (quarantine disabled): {} ({}){}",
            scenario.reasons[reason as usize],
            class.as_str(),
            delivery_limit(scenario, class)
        ),
        Detail::CanaryPassed { rest } => {
            write!(
                out,
                "canary passed: every canary was acked; {rest} more redriven now"
            )
        }
        Detail::CanaryFailed { acked, canaries } => {
            write!(
                out,
                "canary failed: {acked} of {canaries} acked; the rest stay in quarantine"
            )
        }
    }
}

/// Under rabbitmq-quorum, why a message left after the limit plus one
/// deliveries (not for permanent failures routed straight there); under
/// nats-jetstream, what the server did instead of dead-lettering.
fn delivery_limit(scenario: &Scenario, class: crate::model::Class) -> String {
    let routed = class == crate::model::Class::Permanent
        && scenario.delivery.permanent == crate::model::Permanent::Quarantine;
    let limit = scenario.delivery.max_receives;
    if scenario.guarantees.profile == crate::model::Profile::NatsJetstream {
        return match routed {
            true => " (nats-jetstream: terminated with term; it stays in the stream)".to_string(),
            false => format!(
                " (nats-jetstream: max deliveries of {limit} reached; it stays in the stream with a max-deliveries advisory)"
            ),
        };
    }
    if scenario.guarantees.profile != crate::model::Profile::RabbitmqQuorum
        || routed
        || limit == crate::model::UNLIMITED_RECEIVES
    {
        return String::new();
    }
    format!(
        " (rabbitmq-quorum: the delivery count exceeded the limit of {limit}, after {} deliveries)",
        limit as u64 + 1
    )
}

/// " for 30s" after an alarm's threshold when it waits; nothing when not.
pub(crate) fn held(wait: crate::model::Millis) -> String {
    if wait == 0 {
        String::new()
    } else {
        format!(" for {}", dur(wait))
    }
}

/// An alarm fired (with its metric's value) or cleared.
fn alarm_sentence(scenario: &Scenario, alarm: u32, fired: Option<u64>) -> String {
    let a = &scenario.alarms[alarm as usize];
    let show = |n: u64| {
        if a.metric.is_time() {
            dur(n)
        } else {
            n.to_string()
        }
    };
    match fired {
        Some(value) => format!(
            "alarm \"{}\" fired: {} {} (at least {}{})",
            a.name,
            a.metric.name(),
            show(value),
            show(a.at_least),
            held(a.fire_for)
        ),
        None => format!(
            "alarm \"{}\" cleared: {} below {}{}",
            a.name,
            a.metric.name(),
            show(a.at_least),
            held(a.clear_for)
        ),
    }
}
