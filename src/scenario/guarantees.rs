//! The keys of sections 17-22 as written, and their validation: the
//! visibility timeout, the broker profile (its defaults set before the
//! other keys are read, decision 22.5), the store's mode, quarantine on or
//! off, `[[sink]]`, a crash's `at`, and an operator step's `canary` and
//! `redrive_rate`.

use std::collections::BTreeSet;
use std::ops::Range;

use super::file::{self, CrashAtName, DedupModeName, ProfileName, S, SinkKindName, SinkTable};
use super::problems::{MAX_ID, Problems};
use crate::model::*;

/// The profile the file names (default: model).
pub(super) fn profile(raw: &file::File) -> Profile {
    let named = raw
        .delivery
        .as_ref()
        .and_then(|d| d.get_ref().profile.as_ref());
    match named.map(|p| *p.get_ref()) {
        Some(ProfileName::SqsStandard) => Profile::SqsStandard,
        Some(ProfileName::RabbitmqQuorum) => Profile::RabbitmqQuorum,
        Some(ProfileName::RabbitmqClassic) => Profile::RabbitmqClassic,
        Some(ProfileName::NatsJetstream) => Profile::NatsJetstream,
        _ => Profile::Model,
    }
}

/// A crash fault's `at` (required).
pub(super) fn crash_at(
    problems: &mut Problems,
    span: Range<usize>,
    fault: &file::Fault,
) -> Option<CrashAt> {
    match fault.at.as_ref().map(|a| *a.get_ref()) {
        Some(CrashAtName::BeforeEffect) => Some(CrashAt::BeforeEffect),
        Some(CrashAtName::AfterEffect) => Some(CrashAt::AfterEffect),
        Some(CrashAtName::AfterDone) => Some(CrashAt::AfterDone),
        None => {
            problems.error_help(
                Some(span),
                "a `crash` fault needs `at`",
                "where does the consumer die?",
                "add at = \"before_effect\", \"after_effect\" or \"after_done\"",
            );
            None
        }
    }
}

/// Sections 17-22's settings, with the profile's defaults.
pub(super) fn guarantees(problems: &mut Problems, raw: &file::File) -> Guarantees {
    let profile = profile(raw);
    let delivery = raw.delivery.as_ref().map(|d| d.get_ref());
    let timeout = delivery.and_then(|d| d.visibility_timeout.as_ref());
    if let Some(t) = timeout.filter(|t| t.get_ref().0 == 0) {
        problems.error_help(
            Some(t.span()),
            "`visibility_timeout` must be at least 1ms",
            "0s",
            "a delivery longer than the timeout lets the message be delivered again; e.g. visibility_timeout = \"30s\"",
        );
    }
    let visibility_timeout = match (timeout, profile) {
        (Some(t), _) => Some(t.get_ref().0),
        (None, Profile::SqsStandard) => Some(SQS_VISIBILITY_TIMEOUT),
        (None, Profile::NatsJetstream) => Some(JETSTREAM_ACK_WAIT),
        (None, _) => None,
    };
    let jetstream = jetstream(problems, delivery, profile);
    let sqs = sqs(problems, delivery, profile, visibility_timeout);
    let broker_version = broker_version(problems, delivery, profile);
    let quarantine = raw.quarantine.as_ref().map(|q| q.get_ref());
    let quarantine_enabled = quarantine.and_then(|q| q.enabled) != Some(false);
    let crashes = fault_lists(raw).any(|f| f.get_ref().crash.is_some());
    let canary = raw.operator.iter().any(|o| o.get_ref().canary.is_some());
    let dedup_mode = dedup_mode(problems, raw.dedup.as_ref());
    Guarantees {
        profile,
        visibility_timeout,
        jetstream,
        sqs,
        broker_version,
        dedup_mode,
        quarantine_enabled,
        sinks: sinks(problems, &raw.sink),
        sinks_written: !raw.sink.is_empty(),
        extended: delivery.is_some_and(|d| d.profile.is_some())
            || visibility_timeout.is_some()
            || dedup_mode != DedupMode::Result
            || !quarantine_enabled
            || !raw.sink.is_empty()
            || crashes
            || canary,
    }
}

/// nats-jetstream's `ack_backoff` and `on_failure` (refused under other
/// profiles). `max_receives` against the list's length is checked with
/// `[delivery]`.
fn jetstream(
    problems: &mut Problems,
    delivery: Option<&file::Delivery>,
    profile: Profile,
) -> Option<JetStream> {
    let backoff = delivery.and_then(|d| d.ack_backoff.as_ref());
    let on_failure = delivery.and_then(|d| d.on_failure.as_ref());
    let pending = delivery.and_then(|d| d.max_ack_pending.as_ref());
    if profile != Profile::NatsJetstream {
        // sqs-standard reads its own `on_failure` values (`sqs`).
        let on_failure = on_failure.filter(|_| profile != Profile::SqsStandard);
        let keys = [
            ("ack_backoff", backoff.map(|b| b.span())),
            ("on_failure", on_failure.map(|o| o.span())),
            ("max_ack_pending", pending.map(|p| p.span())),
        ];
        for (key, span) in keys {
            if let Some(span) = span {
                problems.error_help(
                    Some(span),
                    format!("`{key}` goes with profile = \"nats-jetstream\""),
                    "a JetStream consumer setting",
                    "set profile = \"nats-jetstream\" in [delivery], or remove it",
                );
            }
        }
        return None;
    }
    let mut ack_backoff = Vec::new();
    if let Some(b) = backoff {
        let values = b.get_ref();
        if values.is_empty() || values.len() > MAX_ACK_BACKOFF {
            problems.error_help(
                Some(b.span()),
                format!("`ack_backoff` lists 1 to {MAX_ACK_BACKOFF} durations"),
                format!("{} values", values.len()),
                "e.g. ack_backoff = [\"1s\", \"5s\", \"30s\"], or remove it to wait visibility_timeout every time",
            );
        } else if values.iter().any(|v| v.0 == 0) {
            problems.error_help(
                Some(b.span()),
                "every `ack_backoff` value must be at least 1ms",
                "0s",
                "JetStream waits each value for an ack before it redelivers",
            );
        } else {
            ack_backoff = values.iter().map(|v| v.0).collect();
        }
    }
    let on_failure = match on_failure.map(|o| (*o.get_ref(), o.span())) {
        Some((file::OnFailureName::NoAck, _)) => OnFailure::NoAck,
        Some((file::OnFailureName::ChangeVisibility, span)) => {
            problems.error_help(
                Some(span),
                "`on_failure = \"change_visibility\"` goes with profile = \"sqs-standard\"",
                "JetStream has no visibility to change",
                "use on_failure = \"nak\" (with retry_interval as the nak's delay) or \"no_ack\"",
            );
            OnFailure::Nak
        }
        _ => OnFailure::Nak,
    };
    Some(JetStream {
        ack_backoff,
        on_failure,
        max_ack_pending: match pending {
            None => Some(JETSTREAM_MAX_ACK_PENDING),
            Some(p) => max_ack_pending(problems, p),
        },
    })
}

/// `max_ack_pending`: at least 1 (JetStream reads 0 as "the default"), at
/// most the messages a file may hold, or "unlimited" (`None`). A value
/// that is not valid is reported and read as unlimited.
fn max_ack_pending(problems: &mut Problems, p: &S<file::Receives>) -> Option<u64> {
    match p.get_ref() {
        file::Receives::Text(t) if t == "unlimited" => None,
        file::Receives::Count(n) => problems.count(
            &S::new(p.span(), *n),
            "max_ack_pending",
            1,
            MAX_MESSAGES_CEILING as i64,
        ),
        file::Receives::Text(t) => {
            problems.error_help(
                Some(p.span()),
                format!("`max_ack_pending` is a number or \"unlimited\", got \"{t}\""),
                "not a count of pending messages",
                "write max_ack_pending = 1 (one message at a time), or leave it out for JetStream's 1000",
            );
            None
        }
    }
}

/// sqs-standard's `visibility_heartbeat` and `on_failure` (the heartbeat
/// refused under the other profiles; `on_failure` under them is
/// [`jetstream`]'s).
fn sqs(
    problems: &mut Problems,
    delivery: Option<&file::Delivery>,
    profile: Profile,
    timeout: Option<Millis>,
) -> Option<Sqs> {
    let heartbeat = delivery.and_then(|d| d.visibility_heartbeat.as_ref());
    if profile != Profile::SqsStandard {
        if let Some(h) = heartbeat {
            problems.error_help(
                Some(h.span()),
                "`visibility_heartbeat` goes with profile = \"sqs-standard\"",
                "an SQS consumer setting",
                "set profile = \"sqs-standard\" in [delivery], or remove it",
            );
        }
        return None;
    }
    let heartbeat = heartbeat.and_then(|h| {
        let (ms, vt) = (h.get_ref().0, timeout.unwrap_or(SQS_VISIBILITY_TIMEOUT));
        if ms == 0 || ms >= vt {
            problems.error_help(
                Some(h.span()),
                "`visibility_heartbeat` must be at least 1ms and below `visibility_timeout`",
                format!(
                    "{} against a timeout of {}",
                    crate::duration::format(ms),
                    crate::duration::format(vt)
                ),
                "the handler extends the timeout before it runs out: e.g. a third of it",
            );
            return None;
        }
        Some(ms)
    });
    let on_failure = delivery.and_then(|d| d.on_failure.as_ref());
    if let Some(o) = on_failure.filter(|o| *o.get_ref() == file::OnFailureName::Nak) {
        problems.error_help(
            Some(o.span()),
            "`on_failure = \"nak\"` goes with profile = \"nats-jetstream\"",
            "SQS has no nak",
            "use on_failure = \"change_visibility\" with retry_interval or backoff, or \"no_ack\"",
        );
    }
    Some(Sqs {
        heartbeat,
        change_visibility: on_failure.map(|o| *o.get_ref())
            == Some(file::OnFailureName::ChangeVisibility),
    })
}

/// rabbitmq-quorum's `broker_version`: "MAJOR.MINOR" (a patch number may
/// follow and changes nothing), 3.8 or later
/// (refused under the other profiles).
fn broker_version(
    problems: &mut Problems,
    delivery: Option<&file::Delivery>,
    profile: Profile,
) -> Option<(u32, u32)> {
    let raw = delivery.and_then(|d| d.broker_version.as_ref())?;
    if profile != Profile::RabbitmqQuorum {
        problems.error_help(
            Some(raw.span()),
            "`broker_version` goes with profile = \"rabbitmq-quorum\"",
            "a RabbitMQ version",
            "set profile = \"rabbitmq-quorum\" in [delivery], or remove it",
        );
        return None;
    }
    let text = raw.get_ref();
    let mut parts = text.split('.');
    let number = |p: Option<&str>| {
        p.filter(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<u32>().ok())
    };
    let (major, minor) = (number(parts.next()), number(parts.next()));
    let patch = parts.next();
    let version = match (major, minor) {
        (Some(major), Some(minor))
            if parts.next().is_none() && patch.is_none_or(|p| number(Some(p)).is_some()) =>
        {
            Some((major, minor))
        }
        _ => None,
    };
    match version {
        Some(v) if v >= RABBITMQ_OLDEST => Some(v),
        Some(_) => {
            problems.error_help(
                Some(raw.span()),
                "`broker_version` must be 3.8 or later",
                "quorum queues got a delivery limit in RabbitMQ 3.8",
                "e.g. broker_version = \"3.10\"",
            );
            None
        }
        None => {
            problems.error_help(
                Some(raw.span()),
                "`broker_version` is MAJOR.MINOR or MAJOR.MINOR.PATCH",
                "not a version",
                "e.g. broker_version = \"3.10\" or \"4.1\"",
            );
            None
        }
    }
}

/// Every fault list of the file.
fn fault_lists(raw: &file::File) -> impl Iterator<Item = &S<file::Fault>> {
    let messages = raw.message.iter().flat_map(|m| &m.get_ref().faults);
    let traffic = raw.traffic.iter().flat_map(|t| {
        let t = t.get_ref();
        t.faults
            .iter()
            .chain(t.mix.iter().flat_map(|k| &k.get_ref().faults))
    });
    messages.chain(traffic)
}

/// `[dedup] mode`, `lease` and `renew` (decisions 22.3, 22.11).
fn dedup_mode(problems: &mut Problems, raw: Option<&S<file::Dedup>>) -> DedupMode {
    let Some(raw) = raw else {
        return DedupMode::Result;
    };
    let d = raw.get_ref();
    let write_intent = d.mode.as_ref().map(|m| *m.get_ref()) == Some(DedupModeName::WriteIntent);
    if !write_intent {
        for (key, value) in [("lease", &d.lease), ("renew", &d.renew)] {
            if let Some(v) = value {
                problems.error_help(
                    Some(v.span()),
                    format!("`{key}` goes with mode = \"write_intent\""),
                    "not used in result mode",
                    "set mode = \"write_intent\" in [dedup], or remove it",
                );
            }
        }
        return DedupMode::Result;
    }
    if let (Some(false), Some(mode)) = (d.enabled, &d.mode) {
        problems.error_help(
            Some(mode.span()),
            "a write-intent store cannot be disabled",
            "enabled = false",
            "remove `enabled = false`, or the mode",
        );
    }
    let Some(lease) = &d.lease else {
        problems.error_help(
            Some(raw.span()),
            "mode = \"write_intent\" needs `lease`",
            "lease missing",
            "an INTENT claim lives this long unless renewed: add e.g. lease = \"1h\"",
        );
        return DedupMode::Result;
    };
    let lease_ms = lease.get_ref().0;
    if lease_ms == 0 {
        problems.error(lease.span(), "`lease` must be at least 1ms", "0s");
    }
    let renew = d.renew.as_ref().map(|r| r.get_ref().0);
    if let (Some(r), Some(span)) = (renew, d.renew.as_ref().map(|r| r.span())) {
        if r == 0 {
            problems.error(span, "`renew` must be at least 1ms", "0s");
        } else if r >= lease_ms {
            problems.error_help(
                Some(span),
                "`renew` must be shorter than `lease`",
                "the claim would lapse before its renewal",
                format!("renew below {}", crate::duration::format(lease_ms)),
            );
        }
    }
    DedupMode::WriteIntent {
        lease: lease_ms,
        renew,
    }
}

/// `[[sink]]`: unique names; none means the one "counter".
fn sinks(problems: &mut Problems, raw: &[S<SinkTable>]) -> Vec<Sink> {
    if raw.is_empty() {
        return default_sinks();
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for s in raw {
        let s = s.get_ref();
        problems.plain_spanned(&s.name, "a sink's name", MAX_ID);
        if !seen.insert(s.name.get_ref().clone()) {
            let message = format!("two sinks are named \"{}\"", s.name.get_ref());
            problems.error(s.name.span(), message, "name used again");
        }
        out.push(Sink {
            name: s.name.get_ref().clone(),
            kind: match *s.kind.get_ref() {
                SinkKindName::Increment => SinkKind::Increment,
                SinkKindName::Upsert => SinkKind::Upsert,
                SinkKindName::Irreversible => SinkKind::Irreversible,
            },
        });
    }
    out
}

/// An operator step's `canary` and `redrive_rate` (sections 20, 21).
pub(super) fn step_keys(
    problems: &mut Problems,
    op: &file::Operator,
    profile: Profile,
) -> (Option<u32>, Option<u64>) {
    let redrives = matches!(
        op.action.as_ref().map(|a| *a.get_ref()),
        Some(file::Action::Redrive | file::Action::RedriveAll)
    );
    let not_redrive = |problems: &mut Problems, span: Range<usize>, key: &str| {
        problems.error_help(
            Some(span),
            format!("`{key}` goes with a redrive"),
            "this step redrives nothing",
            "use it with action = \"redrive_all\" or \"redrive\"",
        );
    };
    let canary = op.canary.as_ref().and_then(|c| {
        if !redrives {
            not_redrive(problems, c.span(), "canary");
        }
        problems
            .count(c, "canary", 1, u32::MAX as i64)
            .map(|n| n as u32)
    });
    let rate = op.redrive_rate.as_ref().and_then(|r| {
        if !redrives {
            not_redrive(problems, r.span(), "redrive_rate");
        }
        if profile != Profile::SqsStandard {
            problems.error_help(
                Some(r.span()),
                "`redrive_rate` belongs to profile = \"sqs-standard\"",
                "not used by this profile",
                "set [delivery] profile = \"sqs-standard\", or remove it",
            );
        }
        problems.count(r, "redrive_rate", 1, 1_000_000_000)
    });
    (canary, rate)
}
