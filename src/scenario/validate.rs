//! From the file as written to the model: defaults, ranges, references.
//! Collects every problem rather than stopping at the first.

use std::collections::BTreeSet;
use std::ops::Range;

use super::collisions::generated_id_collisions;
use super::file::{self, S};
use super::messages::{explicit_messages, generators, intents};
use super::problems::{MAX_DESCRIPTION, MAX_ID, MAX_NAME, MAX_SUMMARY, Problems, unknown_message};
use crate::diagnostic::{Problem, Source};
use crate::model::*;

/// `points`: the `[[expect.point]]` entries that apply (a sweep's point),
/// read like `[expect]`.
pub(super) fn validate(
    source: &Source,
    raw: file::File,
    stem: &str,
    points: Vec<S<file::Expect>>,
) -> Result<Scenario, Vec<Problem>> {
    let mut problems = Problems {
        source,
        list: Vec::new(),
    };

    let flow = flow_of(&mut problems, &raw);
    let guarantees = super::guarantees::guarantees(&mut problems, &raw);
    let log = super::log::log(&mut problems, &raw);
    let profile = guarantees.profile;
    let meta_span = raw.scenario.as_ref().map_or(0..0, |s| s.span());
    let meta = raw.scenario.map(|s| s.into_inner());
    if let Some(m) = &meta {
        printable_texts(&mut problems, m, meta_span);
    }
    let name = meta
        .as_ref()
        .and_then(|m| m.name.as_ref().map(|n| n.get_ref().clone()))
        .unwrap_or_else(|| stem.to_string());
    let seed = match meta.as_ref().and_then(|m| m.seed.as_ref()) {
        Some(s) => problems.count(s, "seed", 0, i64::MAX).unwrap_or(0),
        None => 0,
    };

    let delivery = delivery(&mut problems, raw.delivery, &guarantees);
    let quarantine_table = raw.quarantine.map(|q| q.into_inner());
    let quarantine_retention = quarantine_table
        .as_ref()
        .and_then(|q| q.retention.as_ref().map(|r| r.get_ref().0))
        .or((profile == Profile::SqsStandard).then_some(SQS_RETENTION));
    let (continuous_expiry, archive_after) = expiry_and_archive(
        &mut problems,
        quarantine_table.as_ref(),
        quarantine_retention,
    );
    let (store_restarts, store_loses_state) = store_restarts(&mut problems, raw.dedup.as_ref());
    let dedup_retention = dedup_retention(raw.dedup);

    let limits = limits(&mut problems, raw.limits);

    let mut reasons: Vec<String> = FIXED_REASONS.iter().map(|s| s.to_string()).collect();
    let outbox = outbox_sinks(raw.write.as_ref(), &raw.sink);
    let rows = super::rows::rows(&mut problems, &raw.message, &raw.traffic, &raw.sink);
    let (messages, ids) = explicit_messages(&mut problems, raw.message, &mut reasons);
    let mut kinds = Vec::new();
    let traffic = generators(
        &mut problems,
        &raw.traffic,
        &messages,
        &mut reasons,
        &limits,
        &mut kinds,
    );
    generated_id_collisions(&mut problems, &raw.traffic, &traffic, &ids);

    let outages = raw
        .outage
        .iter()
        .map(|outage| Outage {
            from: outage.get_ref().from.get_ref().0,
            duration: outage.get_ref().duration.get_ref().0,
        })
        .collect();

    let mut scenario = Scenario {
        name,
        summary: meta.as_ref().and_then(|m| m.summary.clone()),
        description: meta
            .as_ref()
            .and_then(|m| m.description.as_deref().map(super::problems::lines)),
        tags: meta.as_ref().map(|m| m.tags.clone()).unwrap_or_default(),
        seed,
        // A problem stops validation before a run could use the placeholder.
        delivery: delivery.unwrap_or(PLACEHOLDER_DELIVERY),
        quarantine_retention,
        continuous_expiry,
        archive_after,
        dedup_retention,
        store_restarts,
        store_loses_state,
        operators: Vec::new(),
        messages,
        traffic,
        outages,
        limits,
        flow,
        kinds,
        alarms: super::alarms::alarms(
            &mut problems,
            &raw.alarm,
            log_partitions(&raw.log),
            outbox
                .as_ref()
                .map(|names| names.iter().map(String::as_str).collect::<Vec<_>>())
                .as_deref(),
        ),
        guarantees,
        reasons,
        intents: Intents::default(),
        expectations: Vec::new(),
        questions: Vec::new(),
        log,
        write: None,
    };
    // The operator's steps and the expectations refer to messages, kinds
    // and alarms, which are all known even when something above is wrong:
    // their problems are reported in the same pass.
    let write = super::write::Raw {
        sink: &raw.sink,
        write: raw.write.as_ref(),
        coordinator: raw.coordinator.as_ref(),
    };
    scenario.write = super::write::write(&mut problems, write, &mut scenario);
    if let Some(w) = &mut scenario.write {
        w.rows = rows;
    }
    scenario.operators = operators(&mut problems, raw.operator, &scenario);
    if let Some(e) = raw.expect {
        scenario.expectations = super::expect::expectations(&mut problems, e, &scenario);
    }
    scenario.questions = super::questions::questions(&mut problems, &raw.question, &scenario);
    for e in points {
        let more = super::expect::expectations(&mut problems, e, &scenario);
        scenario.expectations.extend(more);
    }
    if !problems.list.is_empty() {
        return Err(in_file_order(problems.list));
    }
    scenario.intents = intents(&scenario);
    scenario.flow.groups = super::flow::groups(&scenario);
    Ok(scenario)
}

/// The sinks' names, when the write's strategy is outbox (the implicit
/// counter's when the file lists none).
fn outbox_sinks(
    write: Option<&file::S<file::WriteTable>>,
    sinks: &[file::S<file::SinkTable>],
) -> Option<Vec<String>> {
    let strategy = write?.get_ref().strategy.as_ref()?;
    if *strategy.get_ref() != file::StrategyName::Outbox {
        return None;
    }
    if sinks.is_empty() {
        return Some(vec!["counter".to_string()]);
    }
    Some(
        sinks
            .iter()
            .map(|s| s.get_ref().name.get_ref().clone())
            .collect(),
    )
}

/// Problems are listed in the order of the file (stable: problems at one
/// place keep the order they were found in).
fn in_file_order(mut list: Vec<Problem>) -> Vec<Problem> {
    list.sort_by_key(Problem::offset);
    list
}

/// Workers, ordering, the downstream and `on_limit` (sections 11-13).
fn flow_of(problems: &mut Problems, raw: &file::File) -> Flow {
    let delivery = raw.delivery.as_ref().map(|d| d.get_ref());
    let ordering = delivery.and_then(|d| d.ordering.as_ref());
    let unlimited = delivery.is_some_and(|d| {
        matches!(
            d.max_receives.as_ref().map(|m| m.get_ref()),
            Some(file::Receives::Text(_))
        )
    });
    super::flow::flow(
        problems,
        &super::flow::FlowTables {
            workers: raw.workers.as_ref(),
            downstream: raw.downstream.as_ref(),
            ordering,
            on_limit: raw
                .limits
                .as_ref()
                .and_then(|l| l.get_ref().on_limit.as_ref()),
            traffic: &raw.traffic,
            message: &raw.message,
            other_keys: unlimited || uses_flow_keys(&raw.traffic, &raw.message),
        },
    )
}

/// `[scenario]`'s texts are printable and of a readable length.
pub(crate) fn printable_texts(
    problems: &mut Problems,
    m: &file::ScenarioMeta,
    meta_span: Range<usize>,
) {
    if let Some(n) = &m.name {
        problems.plain_spanned(n, "the scenario's name", MAX_NAME);
    }
    let texts = [
        (&m.summary, "the summary", false, MAX_SUMMARY),
        (&m.description, "the description", true, MAX_DESCRIPTION),
    ];
    for (text, what, multi_line, max) in texts {
        if let Some(text) = text {
            problems.plain(text, meta_span.clone(), what, multi_line, max);
        }
    }
    for tag in &m.tags {
        problems.plain(tag, meta_span.clone(), "a tag", false, MAX_ID);
    }
}

/// `[quarantine] expiry` and `archive_after` (section 28.11): continuous
/// expiry needs a retention, and an archive comes before the expiry.
fn expiry_and_archive(
    problems: &mut Problems,
    table: Option<&file::Quarantine>,
    retention: Option<Millis>,
) -> (bool, Option<Millis>) {
    let Some(q) = table else {
        return (false, None);
    };
    let continuous = match &q.expiry {
        Some(e) if *e.get_ref() == file::ExpiryName::Continuous && retention.is_none() => {
            problems.error_help(
                Some(e.span()),
                "expiry = \"continuous\" needs a `retention`",
                "nothing to expire",
                "add e.g. retention = \"3d\": a message expires the instant its age reaches it",
            );
            false
        }
        Some(e) => *e.get_ref() == file::ExpiryName::Continuous,
        None => false,
    };
    let archive_after = match &q.archive_after {
        None => None,
        Some(a) if a.get_ref().0 == 0 => {
            problems.error(a.span(), "`archive_after` must be at least 1ms", "0s");
            None
        }
        Some(a) if retention.is_some_and(|r| a.get_ref().0 >= r) => {
            problems.error_help(
                Some(a.span()),
                "`archive_after` must be below the quarantine's `retention`",
                "archived no earlier than it expires",
                "an archive is the copy taken before the message expires: make it shorter than retention",
            );
            None
        }
        Some(a) => Some(a.get_ref().0),
    };
    (continuous, archive_after)
}

/// How many partitions `[log]` has (none without `[log]`; a bad count
/// reads as 1, its problem recorded where the log is checked).
fn log_partitions(log: &Option<S<file::LogTable>>) -> Option<u32> {
    let log = log.as_ref()?.get_ref();
    let n = log.partitions.as_ref().map_or(1, |p| *p.get_ref());
    Some(n.clamp(1, MAX_PARTITIONS as i64) as u32)
}

/// Stands in for a `[delivery]` with problems, so that the rest of the
/// file is still checked; such a scenario never runs.
const PLACEHOLDER_DELIVERY: Delivery = Delivery {
    queue: String::new(),
    max_receives: 1,
    max_receives_written: true,
    retry: Retry::Fixed(0),
    permanent: Permanent::Retry,
    max_elapsed: None,
};

/// `[dedup]`: absent or `enabled = false` is off (`None`); without
/// `result_retention`, stored results never expire.
/// `[dedup] restarts` and `persistence` (section 28.5): strictly
/// increasing instants, at most [`MAX_STORE_RESTARTS`], with the store on.
fn store_restarts(problems: &mut Problems, raw: Option<&S<file::Dedup>>) -> (Vec<Millis>, bool) {
    let Some(dedup) = raw.map(|d| d.get_ref()) else {
        return (Vec::new(), false);
    };
    let loses = dedup
        .persistence
        .as_ref()
        .is_some_and(|p| *p.get_ref() == file::PersistenceName::None);
    let Some(list) = &dedup.restarts else {
        return (Vec::new(), loses);
    };
    if dedup.enabled == Some(false) {
        problems.error_help(
            Some(list.span()),
            "`restarts` needs the deduplication store on",
            "[dedup] enabled = false",
            "remove restarts, or turn the store on",
        );
        return (Vec::new(), loses);
    }
    if list.get_ref().len() > MAX_STORE_RESTARTS {
        problems.error(
            list.get_ref()[MAX_STORE_RESTARTS].span(),
            format!("the store restarts at most {MAX_STORE_RESTARTS} times"),
            "one too many",
        );
        return (Vec::new(), loses);
    }
    let mut at = Vec::new();
    for s in list.get_ref() {
        let t = s.get_ref().0;
        if at.last().is_some_and(|&last| t <= last) {
            problems.error(
                s.span(),
                "store restarts are listed in time order, each after the one before",
                "not after the previous restart",
            );
            return (Vec::new(), loses);
        }
        at.push(t);
    }
    (at, loses)
}

fn dedup_retention(raw: Option<S<file::Dedup>>) -> Option<Millis> {
    let dedup = raw?.into_inner();
    if dedup.enabled == Some(false) {
        None
    } else {
        Some(
            dedup
                .result_retention
                .map_or(Millis::MAX, |r| r.into_inner().0),
        )
    }
}

fn delivery(
    problems: &mut Problems,
    raw: Option<S<file::Delivery>>,
    guarantees: &Guarantees,
) -> Option<Delivery> {
    let profile = guarantees.profile;
    let Some(raw) = raw else {
        problems.error_help(
            None,
            "missing [delivery] table",
            "",
            "add a [delivery] table naming max_receives and retry_interval (or backoff), e.g.\n\
             [delivery]\nmax_receives = 2\nretry_interval = \"10s\"",
        );
        return None;
    };
    let span = raw.span();
    let d = raw.into_inner();
    if let Some(queue) = &d.queue {
        problems.plain(queue, span.clone(), "the queue name", false, MAX_ID);
    }
    let max_receives = match &d.max_receives {
        // Before RabbitMQ 4.0 a quorum queue had no default limit.
        None if profile == Profile::RabbitmqQuorum
            && guarantees.broker_version.is_some_and(|v| v < (4, 0)) =>
        {
            Some(UNLIMITED_RECEIVES)
        }
        None if profile == Profile::RabbitmqQuorum => Some(RABBITMQ_DELIVERY_LIMIT),
        // JetStream's MaxDeliver defaults to -1: no limit; a classic
        // queue has none.
        None if matches!(profile, Profile::NatsJetstream | Profile::RabbitmqClassic) => {
            Some(UNLIMITED_RECEIVES)
        }
        Some(m)
            if profile == Profile::RabbitmqClassic
                && !matches!(m.get_ref(), file::Receives::Text(t) if t == "unlimited") =>
        {
            problems.error_help(
                Some(m.span()),
                "a classic queue has no delivery limit: `max_receives` is \"unlimited\"",
                "not a limit RabbitMQ keeps",
                "a classic queue ignores x-delivery-limit; use profile = \"rabbitmq-quorum\" for a limit, or remove max_receives",
            );
            None
        }
        None => {
            problems.error_help(
                Some(span.clone()),
                "[delivery] needs `max_receives`",
                "max_receives missing",
                "max_receives counts deliveries per cycle, the first included: add e.g. max_receives = 2",
            );
            None
        }
        Some(m) => receives(problems, m, profile),
    };
    if profile == Profile::NatsJetstream {
        jetstream_delivery(problems, &d, max_receives);
    }
    let change_visibility = guarantees.sqs.is_some_and(|s| s.change_visibility);
    let retry = match (&d.retry_interval, &d.backoff) {
        (None, None) if change_visibility => {
            problems.error_help(
                Some(span.clone()),
                "on_failure = \"change_visibility\" needs `retry_interval` or `backoff`",
                "no visibility to set",
                "the handler sets the failed message's visibility to the retry delay: add e.g. retry_interval = \"10s\"",
            );
            None
        }
        (None, None) if profile != Profile::Model => Some(Retry::Fixed(0)),
        (retry_interval, backoff) if profile == Profile::SqsStandard && !change_visibility => {
            let span = retry_interval.as_ref().map(|i| i.span());
            let span = span.or(backoff.as_ref().map(|b| b.span()));
            problems.error_help(
                span,
                "with profile = \"sqs-standard\" a failed delivery is retried when its visibility timeout ends",
                "not used by this profile",
                "remove retry_interval and backoff; set visibility_timeout (default 30s) instead",
            );
            None
        }
        (Some(i), None) => Some(Retry::Fixed(i.get_ref().0)),
        (None, Some(b)) => Some(backoff(problems, b.get_ref())),
        (Some(i), Some(_)) => {
            problems.error_help(
                Some(i.span()),
                "[delivery] names both `retry_interval` and `backoff`",
                "choose one",
                "keep either a fixed retry_interval or an exponential backoff",
            );
            None
        }
        (None, None) => {
            problems.error_help(
                Some(span),
                "[delivery] needs `retry_interval` or `backoff`",
                "no retry delay",
                "add retry_interval = \"10s\", or backoff = { base = \"1s\", cap = \"30s\", jitter = \"full\" }",
            );
            None
        }
    };
    let permanent = match d.permanent.as_ref().map(|p| *p.get_ref()) {
        Some(file::Permanent::Quarantine) => Permanent::Quarantine,
        _ => Permanent::Retry,
    };
    let max_elapsed = match &d.max_elapsed {
        Some(e) if e.get_ref().0 == 0 => {
            problems.error_help(
                Some(e.span()),
                "`max_elapsed` must be at least 1ms",
                "0s",
                "a retry budget by elapsed time since the cycle's first delivery: e.g. max_elapsed = \"20s\"",
            );
            None
        }
        e => e.as_ref().map(|e| e.get_ref().0),
    };
    Some(Delivery {
        queue: d.queue.unwrap_or_else(|| "source".to_string()),
        max_receives: max_receives?,
        max_receives_written: d.max_receives.is_some(),
        retry: retry?,
        permanent,
        max_elapsed,
    })
}

/// What the server itself refuses in a JetStream consumer: a BackOff list
/// at least as long as MaxDeliver; and a nak delay with a consumer that
/// does not nak.
fn jetstream_delivery(problems: &mut Problems, d: &file::Delivery, max_receives: Option<u32>) {
    if let (Some(b), Some(max)) = (&d.ack_backoff, max_receives)
        && max != UNLIMITED_RECEIVES
        && b.get_ref().len() as u64 >= max as u64
    {
        problems.error_help(
            Some(b.span()),
            "`ack_backoff` must list fewer values than `max_receives`",
            format!("{} values for max_receives = {max}", b.get_ref().len()),
            "JetStream refuses a BackOff list that is not shorter than MaxDeliver: shorten it, or raise max_receives",
        );
    }
    let no_ack = d.on_failure.as_ref().map(|o| *o.get_ref()) == Some(file::OnFailureName::NoAck);
    let delay = d.retry_interval.as_ref().map(|i| i.span());
    if let Some(span) = delay
        .or(d.backoff.as_ref().map(|b| b.span()))
        .filter(|_| no_ack)
    {
        problems.error_help(
            Some(span),
            "with on_failure = \"no_ack\" a failed delivery is redelivered when its ack wait ends",
            "a nak delay, but the consumer does not nak",
            "remove retry_interval and backoff (set visibility_timeout or ack_backoff), or use on_failure = \"nak\"",
        );
    }
}

/// `max_receives`: at least 1, or "unlimited"; under rabbitmq-quorum, where
/// it is the delivery limit L, also 0 (one delivery, dead-lettered at its
/// first return; section 21).
fn receives(problems: &mut Problems, m: &S<file::Receives>, profile: Profile) -> Option<u32> {
    match m.get_ref() {
        file::Receives::Count(0) if profile == Profile::RabbitmqQuorum => Some(0),
        file::Receives::Count(0) => {
            problems.error_help(
                Some(m.span()),
                "`max_receives` must be at least 1",
                "0 would never deliver",
                "max_receives counts deliveries per cycle, the first included",
            );
            None
        }
        file::Receives::Count(n) => problems
            .count(
                &S::new(m.span(), *n),
                "max_receives",
                1,
                UNLIMITED_RECEIVES as i64 - 1,
            )
            .map(|n| n as u32),
        file::Receives::Text(t) if t == "unlimited" => Some(UNLIMITED_RECEIVES),
        file::Receives::Text(t) => {
            problems.error_help(
                Some(m.span()),
                format!("`max_receives` is a number or \"unlimited\", got \"{t}\""),
                "not a receive budget",
                "write max_receives = 5, or max_receives = \"unlimited\" (never quarantined by budget)",
            );
            None
        }
    }
}

/// Whether the messages use a key of sections 11-13 (`takes`, a traffic
/// block's `start`, Poisson arrivals or a mix).
fn uses_flow_keys(traffic: &[S<file::Traffic>], messages: &[S<file::Message>]) -> bool {
    let takes = |faults: &[S<file::Fault>]| faults.iter().any(|f| f.get_ref().takes.is_some());
    traffic.iter().any(|t| {
        let t = t.get_ref();
        t.start.is_some()
            || t.arrival.as_ref().map(|a| *a.get_ref()) == Some(file::Arrival::Poisson)
            || !t.mix.is_empty()
            || takes(&t.faults)
            || t.mix.iter().any(|k| takes(&k.get_ref().faults))
    }) || messages.iter().any(|m| takes(&m.get_ref().faults))
}

/// `backoff = { base, cap, jitter }`: exponential delays; a cap below the
/// base is refused.
fn backoff(problems: &mut Problems, backoff: &file::Backoff) -> Retry {
    let base = backoff.base.get_ref().0;
    let cap = backoff.cap.as_ref().map(|c| c.get_ref().0);
    if let (Some(c), Some(cs)) = (cap, &backoff.cap)
        && c < base
    {
        problems.error(
            cs.span(),
            format!(
                "backoff cap ({}) is smaller than its base ({})",
                crate::duration::format(c),
                crate::duration::format(base)
            ),
            "cap below base",
        );
    }
    let jitter = match backoff.jitter.as_ref().map(|j| *j.get_ref()) {
        None | Some(file::Jitter::None) => Jitter::None,
        Some(file::Jitter::Full) => Jitter::Full,
        Some(file::Jitter::Equal) => Jitter::Equal,
        Some(file::Jitter::Decorrelated) => Jitter::Decorrelated,
    };
    Retry::Backoff { base, cap, jitter }
}

fn limits(problems: &mut Problems, raw: Option<S<file::Limits>>) -> Limits {
    let mut limits = Limits::default();
    if let Some(l) = raw {
        let l = l.into_inner();
        if let Some(e) = &l.max_events {
            limits.max_events = problems
                .count(e, "max_events", 1, i64::MAX)
                .unwrap_or(limits.max_events);
        }
        if let Some(t) = l.max_time {
            limits.max_time = t.into_inner().0;
        }
        if let Some(m) = &l.max_messages {
            limits.max_messages = problems
                .count(m, "max_messages", 0, MAX_MESSAGES_CEILING as i64)
                .unwrap_or(limits.max_messages);
        }
    }
    limits
}

fn operators(
    problems: &mut Problems,
    raw: Vec<S<file::Operator>>,
    scenario: &Scenario,
) -> Vec<OperatorStep> {
    let mut steps = Vec::new();
    for op in raw {
        let span = op.span();
        let op = op.into_inner();
        let Some(action) = &op.action else {
            problems.error_help(
                Some(span),
                "an [[operator]] step needs an `action`",
                "action missing",
                "action = \"hold\" | \"redrive_all\" | \"redrive\" (with only = [...]) | \"purge\"",
            );
            continue;
        };
        let action = match (*action.get_ref(), &op.only) {
            (file::Action::Redrive, Some(only)) => {
                let mut seen = BTreeSet::new();
                let mut ids = Vec::new();
                for id in only.get_ref() {
                    match scenario.find_message(id.get_ref()) {
                        Some(m) => {
                            if !seen.insert(m) {
                                problems.error(
                                    id.span(),
                                    format!("\"{}\" is named twice in `only`", id.get_ref()),
                                    "named again here",
                                );
                            }
                            ids.push(m);
                        }
                        None => unknown_message(problems, scenario, id),
                    }
                }
                Action::Redrive(ids)
            }
            (file::Action::Redrive, None) => {
                problems.error_help(
                    Some(action.span()),
                    "action \"redrive\" needs `only = [ids]`",
                    "redrive which messages?",
                    "name the messages, e.g. only = [\"poison\"], or use action = \"redrive_all\"",
                );
                continue;
            }
            (other, Some(only)) => {
                problems.error_help(
                    Some(only.span()),
                    "`only` goes with action = \"redrive\"",
                    "not used by this action",
                    format!(
                        "remove `only`, or change the action from \"{}\" to \"redrive\"",
                        other.word()
                    ),
                );
                continue;
            }
            (file::Action::Hold, None) => Action::Hold,
            (file::Action::RedriveAll, None) => Action::RedriveAll,
            (file::Action::Purge, None) => Action::Purge,
        };
        let (canary, redrive_rate) =
            super::guarantees::step_keys(problems, &op, scenario.guarantees.profile);
        steps.push(OperatorStep {
            canary,
            redrive_rate,
            wait: op.wait.map_or(0, |w| w.into_inner().0),
            repair: op.repair.unwrap_or(false),
            action,
            identity: match op.identity.map(|i| i.into_inner()) {
                Some(file::Identity::New) => Identity::New,
                _ => Identity::Stable,
            },
        });
    }
    steps
}
