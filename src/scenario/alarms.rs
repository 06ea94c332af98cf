//! `[[alarm]]` as written, and its validation (docs/model.md section 15):
//! a unique name, a metric, a threshold of at least 1 (a duration of at
//! least 1ms for `oldest_age`), a `window` for `dlq_arrivals` only, and
//! the optional durations `for` and `clear_for`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::scenario::spanned::S;

use super::problems::{MAX_ID, Problems};
use crate::duration::Duration;
use crate::model::{Alarm, Metric};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlarmTable {
    /// Unique; `[expect.alarm."NAME"]` names it.
    pub name: S<String>,
    /// dlq_depth | dlq_arrivals (with window) | oldest_age | queue_depth
    /// (a queue) | consumer_lag (a log) | outbox_dead_letters |
    /// outbox_dead_letter_arrivals (with window; both need an outbox).
    pub metric: S<MetricName>,
    /// The threshold: a count, or a duration for oldest_age.
    #[schemars(with = "AtLeast")]
    pub at_least: S<toml::Value>,
    /// With dlq_arrivals and outbox_dead_letter_arrivals: entries counted
    /// over this long, e.g. "1m".
    pub window: Option<S<Duration>>,
    /// With consumer_lag: the one partition whose lag is read (0-based;
    /// default: the sum over the partitions).
    #[schemars(with = "Option<u32>")]
    pub partition: Option<S<i64>>,
    /// With outbox_dead_letters and outbox_dead_letter_arrivals: the one
    /// outbox sink whose dead letters are counted (default: every sink).
    pub sink: Option<S<String>>,
    /// Fire only once the metric has stayed at least the threshold this
    /// long, e.g. "30s" (default "0s": at once).
    #[serde(rename = "for")]
    pub fire_for: Option<S<Duration>>,
    /// Clear only once the metric has stayed below the threshold this long
    /// (default "0s": at once).
    pub clear_for: Option<S<Duration>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MetricName {
    DlqDepth,
    DlqArrivals,
    OldestAge,
    QueueDepth,
    ConsumerLag,
    OutboxDeadLetters,
    OutboxDeadLetterArrivals,
}

/// The JSON Schema of a threshold: a count of at least 1 or a duration.
pub struct AtLeast;

impl JsonSchema for AtLeast {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AtLeast".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                { "type": "integer", "minimum": 1 },
                { "$ref": "#/$defs/Duration" }
            ]
        })
    }
}

/// At most this many `[[alarm]]` entries: each is read at every instant
/// that has events, so a run's work grows with their number.
pub const MAX_ALARMS: usize = 100;

/// `log`: the file has `[log]`, whose backlog is `consumer_lag` (a log
/// has no ready set, so `queue_depth` would stay 0 whatever the lag).
/// `partitions`: the log's, with `[log]`.
/// `outbox_sinks`: the sinks' names when the write's strategy is outbox
/// (`None`: no outbox, whose dead letters the outbox metrics count).
pub(super) fn alarms(
    problems: &mut Problems,
    raw: &[S<AlarmTable>],
    partitions: Option<u32>,
    outbox_sinks: Option<&[&str]>,
) -> Vec<Alarm> {
    let log = partitions.is_some();
    if let Some(extra) = raw.get(MAX_ALARMS) {
        problems.error_help(
            Some(extra.span()),
            format!("a file has at most {MAX_ALARMS} alarms, this one has {}", raw.len()),
            "one too many",
            "each alarm is read at every instant of the run; watch fewer metrics, or split the file",
        );
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for a in raw.iter().take(MAX_ALARMS) {
        let a = a.get_ref();
        let name = a.name.get_ref();
        problems.plain_spanned(&a.name, "an alarm's name", MAX_ID);
        if seen.insert(name.clone(), out.len()).is_some() {
            problems.error(
                a.name.span(),
                format!("two alarms are named \"{name}\""),
                "name used again",
            );
        }
        let windowed = matches!(
            a.metric.get_ref(),
            MetricName::DlqArrivals | MetricName::OutboxDeadLetterArrivals
        );
        let metric_name = metric_name(*a.metric.get_ref());
        let metric = match (*a.metric.get_ref(), &a.window) {
            (_, Some(w)) if windowed && w.get_ref().0 == 0 => {
                problems.error_help(
                    Some(w.span()),
                    format!("a {metric_name} window cannot be 0s long"),
                    "empty window",
                    "entries are counted in (t - window, t]: e.g. window = \"1m\"",
                );
                None
            }
            (MetricName::DlqArrivals, Some(w)) => Some(Metric::DlqArrivals {
                window: w.get_ref().0,
            }),
            (MetricName::OutboxDeadLetterArrivals, Some(w)) => {
                Some(Metric::OutboxDeadLetterArrivals {
                    window: w.get_ref().0,
                    sink: None,
                })
            }
            (MetricName::DlqArrivals | MetricName::OutboxDeadLetterArrivals, None) => {
                problems.error_help(
                    Some(a.metric.span()),
                    format!("metric \"{metric_name}\" needs a `window`"),
                    "over how long?",
                    match *a.metric.get_ref() {
                        MetricName::DlqArrivals => "add e.g. window = \"1m\": the alarm counts quarantine entries in the last minute",
                        _ => "add e.g. window = \"1m\": the alarm counts outbox dead letters in the last minute",
                    },
                );
                None
            }
            (_, Some(w)) => {
                problems.error_help(
                    Some(w.span()),
                    "`window` goes with metric = \"dlq_arrivals\" or \"outbox_dead_letter_arrivals\"",
                    "not used by this metric",
                    "remove `window`, or use a metric that counts arrivals in a window",
                );
                None
            }
            (MetricName::OutboxDeadLetters, None) => Some(Metric::OutboxDeadLetters { sink: None }),
            (MetricName::DlqDepth, None) => Some(Metric::DlqDepth),
            (MetricName::OldestAge, None) => Some(Metric::OldestAge),
            (MetricName::QueueDepth, None) if log => {
                problems.error_help(
                    Some(a.metric.span()),
                    "metric \"queue_depth\" does not measure a log: it has no ready messages waiting for a worker",
                    "always 0 under [log]",
                    "use metric = \"consumer_lag\": the records appended and not yet done, summed over the partitions",
                );
                None
            }
            (MetricName::QueueDepth, None) => Some(Metric::QueueDepth),
            (MetricName::ConsumerLag, None) if !log => {
                problems.error_help(
                    Some(a.metric.span()),
                    "metric \"consumer_lag\" measures a log, and this file has no [log]",
                    "no log here",
                    "a queue's backlog is metric = \"queue_depth\" (ready messages not taken)",
                );
                None
            }
            (MetricName::ConsumerLag, None) => Some(Metric::ConsumerLag { partition: None }),
        };
        // `partition` reads one partition's consumer lag.
        let metric = match (metric, &a.partition) {
            (m, None) => m,
            (Some(Metric::ConsumerLag { .. }), Some(p)) => problems
                .count(p, "partition", 0, partitions.unwrap_or(1) as i64 - 1)
                .map(|p| Metric::ConsumerLag {
                    partition: Some(p as u32),
                }),
            (_, Some(p)) => {
                problems.error_help(
                    Some(p.span()),
                    "`partition` goes with metric = \"consumer_lag\"",
                    "not used by this metric",
                    "remove `partition`, or use metric = \"consumer_lag\" to read one partition's lag",
                );
                None
            }
        };
        let metric = outbox_metric(problems, a, metric, outbox_sinks);
        let at_least = threshold(problems, &a.at_least, *a.metric.get_ref());
        // An alarm with a problem is kept under its name (the run never
        // starts), so that an expectation naming it is checked in the same
        // pass rather than called unknown.
        out.push(Alarm {
            name: name.clone(),
            metric: metric.unwrap_or(Metric::DlqDepth),
            at_least: at_least.unwrap_or(0),
            fire_for: a.fire_for.as_ref().map_or(0, |d| d.get_ref().0),
            clear_for: a.clear_for.as_ref().map_or(0, |d| d.get_ref().0),
        });
    }
    out
}

/// The name a metric is written with.
fn metric_name(m: MetricName) -> &'static str {
    match m {
        MetricName::DlqDepth => "dlq_depth",
        MetricName::DlqArrivals => "dlq_arrivals",
        MetricName::OldestAge => "oldest_age",
        MetricName::QueueDepth => "queue_depth",
        MetricName::ConsumerLag => "consumer_lag",
        MetricName::OutboxDeadLetters => "outbox_dead_letters",
        MetricName::OutboxDeadLetterArrivals => "outbox_dead_letter_arrivals",
    }
}

/// The outbox metrics (section 28.16): they need an outbox, and `sink`
/// (which goes with them only) names one of its sinks.
fn outbox_metric(
    problems: &mut Problems,
    a: &AlarmTable,
    metric: Option<Metric>,
    outbox_sinks: Option<&[&str]>,
) -> Option<Metric> {
    let outbox = matches!(
        metric,
        Some(Metric::OutboxDeadLetters { .. } | Metric::OutboxDeadLetterArrivals { .. })
    );
    if outbox && outbox_sinks.is_none() {
        problems.error_help(
            Some(a.metric.span()),
            format!(
                "metric \"{}\" needs an outbox",
                metric_name(*a.metric.get_ref())
            ),
            "no outbox sink here",
            "it counts outbox rows dead-lettered for a sink: set [write] strategy = \"outbox\"",
        );
        return None;
    }
    let Some(sink) = &a.sink else {
        return metric;
    };
    if !outbox {
        problems.error_help(
            Some(sink.span()),
            "`sink` goes with metric = \"outbox_dead_letters\" or \"outbox_dead_letter_arrivals\"",
            "not used by this metric",
            "remove `sink`, or count one sink's outbox dead letters",
        );
        return None;
    }
    let names = outbox_sinks.unwrap_or_default();
    let Some(k) = names.iter().position(|n| n == sink.get_ref()) else {
        problems.error_help(
            Some(sink.span()),
            format!("no outbox sink is named \"{}\"", sink.get_ref()),
            "unknown sink",
            format!("the outbox sinks are {}", names.join(", ")),
        );
        return None;
    };
    let sink = Some(k as u32);
    match metric {
        Some(Metric::OutboxDeadLetters { .. }) => Some(Metric::OutboxDeadLetters { sink }),
        Some(Metric::OutboxDeadLetterArrivals { window, .. }) => {
            Some(Metric::OutboxDeadLetterArrivals { window, sink })
        }
        m => m,
    }
}

/// `at_least`: a count of at least 1, or for `oldest_age` a duration of at
/// least 1ms (decision 16.14).
fn threshold(problems: &mut Problems, v: &S<toml::Value>, metric: MetricName) -> Option<u64> {
    let span = v.span();
    match (metric, v.get_ref()) {
        (MetricName::OldestAge, toml::Value::String(s)) => match crate::duration::parse(s) {
            Ok(0) => {
                problems.error(
                    span,
                    "an oldest_age threshold must be at least 1ms",
                    "0s would always fire",
                );
                None
            }
            Ok(ms) => Some(ms),
            Err(e) => {
                problems.error(span, e.to_string(), "not a duration");
                None
            }
        },
        (MetricName::OldestAge, _) => {
            problems.error_help(
                Some(span),
                "an oldest_age threshold is a duration",
                "needs a unit",
                "write e.g. at_least = \"5m\"",
            );
            None
        }
        (_, toml::Value::Integer(n)) if *n >= 1 => Some(*n as u64),
        (_, toml::Value::Integer(_)) => {
            problems.error_help(
                Some(span),
                "an alarm's threshold must be at least 1",
                "0 or less would always fire",
                "\"zero tolerance\" is metric = \"dlq_depth\", at_least = 1",
            );
            None
        }
        _ => {
            problems.error_help(
                Some(span),
                "this alarm's threshold is a count",
                "not a whole number",
                "write e.g. at_least = 1",
            );
            None
        }
    }
}
