//! The NATS JetStream side of a conformance run: a stream (in memory) and
//! a durable pull consumer with the file's MaxDeliver, AckWait, BackOff
//! and MaxAckPending, the file's messages published at their scaled arrival times,
//! and a scripted handler per delivery that acks, naks (with the file's
//! delay), terms, or leaves the delivery unacknowledged (a `no_ack`
//! failure, a lost ack, a crash). A message's end is its ack or the
//! server's advisory: max deliveries, or terminated.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_nats::jetstream::{self, AckKind, consumer, stream};
use futures_lite::StreamExt;
use tokio::time::{Duration, Instant};

use super::compare::{Delivery, End, Message, TimeScale};
use super::plan::{Action, Consumer, Plan};
use super::{Broker, LiveError};

/// Deliveries one run records at most; past it a run stops (a consumer
/// without MaxDeliver redelivering without end).
pub const MAX_DELIVERIES: usize = 10_000;
/// Round trips [`latency`] measures.
pub const PROBES: usize = 5;
/// The durable consumer's name.
const DURABLE: &str = "conform";

fn failed<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> LiveError + '_ {
    move |e| LiveError::Failed(format!("{what}: {e}"))
}

fn elapsed(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn real(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
}

static STREAMS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A stream name and its subject, unique to this process and call.
fn names(what: &str) -> (String, String) {
    let n = STREAMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let pid = std::process::id();
    (
        format!("SCENARIO_RUN_CONFORM_{what}{pid}_{n}"),
        format!("scenario-run.conform.{what}{pid}.{n}"),
    )
}

/// `host:port` of a `nats://` URL, for messages.
fn address(url: &str) -> &str {
    let rest = url.strip_prefix("nats://").unwrap_or(url);
    let authority = rest.split('/').next().unwrap_or("");
    authority.rsplit('@').next().unwrap_or("")
}

async fn connect(url: &str) -> Result<async_nats::Client, LiveError> {
    let options = async_nats::ConnectOptions::new().connection_timeout(Duration::from_secs(5));
    async_nats::connect_with_options(url, options)
        .await
        .map_err(|e| LiveError::Absent(format!("no broker answers at {}: {e}", address(url))))
}

/// The server's name and version, from its INFO; refused when it runs
/// without JetStream.
pub async fn broker(url: &str) -> Result<Broker, LiveError> {
    let client = connect(url).await?;
    let info = client.server_info();
    if !info.jetstream {
        return Err(LiveError::Failed(format!(
            "the NATS server at {} runs without JetStream (start it with -js)",
            address(url)
        )));
    }
    Ok(Broker {
        name: "NATS".into(),
        version: info.version,
        latency_ms: 0.0,
        notes: Vec::new(),
    })
}

/// A stream `name` kept in memory, on `subject` alone.
async fn memory_stream(
    js: &jetstream::Context,
    name: &str,
    subject: &str,
) -> Result<stream::Stream, LiveError> {
    js.create_stream(stream::Config {
        name: name.to_string(),
        subjects: vec![subject.to_string()],
        storage: stream::StorageType::Memory,
        ..Default::default()
    })
    .await
    .map_err(failed("creating a stream"))
}

/// The most of [`PROBES`] round trips from a publish to its delivery
/// through a memory stream and a pull consumer, in real ms.
pub async fn latency(url: &str) -> Result<f64, LiveError> {
    let client = connect(url).await?;
    let js = jetstream::new(client);
    let (name, subject) = names("PROBE_");
    let stream = memory_stream(&js, &name, &subject).await?;
    let probe = async {
        let consumer = stream
            .create_consumer(consumer::pull::Config {
                durable_name: Some(DURABLE.into()),
                ..Default::default()
            })
            .await
            .map_err(failed("creating a probe consumer"))?;
        let mut messages = consumer
            .messages()
            .await
            .map_err(failed("pulling probes"))?;
        let mut most: f64 = 0.0;
        for _ in 0..PROBES {
            let sent = Instant::now();
            js.publish(subject.clone(), "probe".into())
                .await
                .map_err(failed("publishing a probe"))?
                .await
                .map_err(failed("a probe's publish ack"))?;
            let got = tokio::time::timeout(Duration::from_secs(5), messages.next())
                .await
                .map_err(|_| LiveError::Failed("a probe took more than 5 s".into()))?;
            if let Some(Ok(m)) = got {
                most = most.max(elapsed(sent));
                let _ = m.ack().await;
            }
        }
        Ok(most)
    };
    let most = probe.await;
    let _ = js.delete_stream(&name).await;
    most
}

/// The longest a run reads back the messages given up after MaxDeliver.
const READ_BACK: Duration = Duration::from_secs(2);

/// What the handlers and the advisory listeners saw.
#[derive(Default)]
struct Seen {
    deliveries: BTreeMap<String, Vec<Delivery>>,
    ends: BTreeMap<String, (End, f64)>,
    /// Stream sequence -> message id, from the publish acks.
    ids: BTreeMap<u64, String>,
    recorded: usize,
}

impl Seen {
    fn done(&self, messages: usize) -> bool {
        self.ends.len() >= messages || self.recorded >= MAX_DELIVERIES
    }

    /// The first end of `id` counts (an advisory cannot follow an ack).
    fn ended(&mut self, id: String, end: End, at: f64) {
        self.ends.entry(id).or_insert((end, at));
    }
}

/// Runs `plan` on the server at `url`, `modeled_end` (real ms) being
/// when the model's run ends: each message as JetStream treated it, in
/// the plan's order.
pub async fn run(
    url: &str,
    plan: &Plan,
    scale: TimeScale,
    modeled_end: f64,
) -> Result<Vec<Message>, LiveError> {
    let Some(settings) = plan.consumer.clone() else {
        return Err(LiveError::Failed("not a JetStream plan".into()));
    };
    let client = connect(url).await?;
    let js = jetstream::new(client.clone());
    let (name, subject) = names("");
    let stream = memory_stream(&js, &name, &subject).await?;
    let result = drive(
        &client,
        &js,
        &stream,
        &name,
        &subject,
        plan,
        &settings,
        scale,
        modeled_end,
    )
    .await;
    let _ = tokio::time::timeout(Duration::from_secs(5), js.delete_stream(&name)).await;
    result
}

#[allow(clippy::too_many_arguments)]
async fn drive(
    client: &async_nats::Client,
    js: &jetstream::Context,
    stream: &stream::Stream,
    name: &str,
    subject: &str,
    plan: &Plan,
    settings: &Consumer,
    scale: TimeScale,
    modeled_end: f64,
) -> Result<Vec<Message>, LiveError> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let plan = Arc::new(plan.clone());
    let mut tasks = Vec::new();

    // The advisories, subscribed before anything can produce one.
    let advisories = [
        ("MAX_DELIVERIES", "max_deliveries"),
        ("MSG_TERMINATED", "terminated"),
    ];
    let mut subscribers = Vec::new();
    for (event, advisory) in advisories {
        let topic = format!("$JS.EVENT.ADVISORY.CONSUMER.{event}.{name}.{DURABLE}");
        let subscriber = client
            .subscribe(topic)
            .await
            .map_err(failed("subscribing to advisories"))?;
        subscribers.push((subscriber, advisory));
    }
    client
        .flush()
        .await
        .map_err(failed("subscribing to advisories"))?;

    let wait = move |ms| real(scale.real(ms));
    let consumer = stream
        .create_consumer(consumer::pull::Config {
            durable_name: Some(DURABLE.into()),
            ack_policy: consumer::AckPolicy::Explicit,
            ack_wait: wait(settings.ack_wait),
            max_deliver: settings.max_deliver.map_or(-1, i64::from),
            backoff: settings.backoff.iter().map(|&d| wait(d)).collect(),
            max_ack_pending: settings
                .max_ack_pending
                .map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX)),
            ..Default::default()
        })
        .await
        .map_err(failed("creating the consumer"))?;
    let start = Instant::now();

    for (mut subscriber, advisory) in subscribers {
        let seen = seen.clone();
        tasks.push(tokio::spawn(async move {
            while let Some(event) = subscriber.next().await {
                let at = elapsed(start);
                let sequence = serde_json::from_slice::<serde_json::Value>(&event.payload)
                    .ok()
                    .and_then(|v| v["stream_seq"].as_u64());
                let mut seen = seen.lock().expect("not poisoned");
                if let Some(id) = sequence.and_then(|s| seen.ids.get(&s).cloned()) {
                    let end = End::Advisory {
                        advisory: advisory.into(),
                    };
                    seen.ended(id, end, at);
                }
            }
            Ok(())
        }));
    }

    let mut messages = consumer
        .messages()
        .await
        .map_err(failed("pulling messages"))?;
    {
        let (seen, plan, settings) = (seen.clone(), plan.clone(), settings.clone());
        tasks.push(tokio::spawn(async move {
            while let Some(message) = messages.next().await {
                let message = message.map_err(failed("a delivery"))?;
                let at = elapsed(start);
                let delivered = message.info().map_or(1, |i| i.delivered.max(1)) as u64;
                let id = String::from_utf8_lossy(&message.payload).into_owned();
                let Some(planned) = plan.messages.iter().find(|p| p.id == id) else {
                    continue;
                };
                let (action, receive) = {
                    let mut seen = seen.lock().expect("not poisoned");
                    if seen.recorded >= MAX_DELIVERIES {
                        // The run stops here: record nothing more.
                        return Ok(());
                    }
                    let list = seen.deliveries.entry(id.clone()).or_default();
                    let receive = list.len() as u64 + 1;
                    let action = planned.action(receive);
                    list.push(Delivery {
                        at,
                        delivery_count: delivered - 1,
                        action,
                    });
                    seen.recorded += 1;
                    (action, receive)
                };
                let takes = wait(planned.takes(receive));
                let (seen, settings) = (seen.clone(), settings.clone());
                // Each delivery's handler runs on its own: the model's
                // unlimited workers.
                tokio::spawn(async move {
                    if !takes.is_zero() {
                        tokio::time::sleep(takes).await;
                    }
                    let done = match action {
                        Action::Ack => message.ack().await.is_ok(),
                        Action::Requeue if settings.nak => {
                            let delay = (settings.nak_delay > 0).then(|| wait(settings.nak_delay));
                            let _ = message.ack_with(AckKind::Nak(delay)).await;
                            false
                        }
                        Action::Reject => {
                            let _ = message.ack_with(AckKind::Term).await;
                            false
                        }
                        // Unacknowledged: the ack wait decides.
                        Action::Requeue | Action::LoseAck | Action::Crash => false,
                    };
                    if done {
                        let mut seen = seen.lock().expect("not poisoned");
                        seen.ended(id, End::Acked, elapsed(start));
                    }
                });
            }
            Ok(())
        }));
    }

    // The publisher: each message at its scaled arrival, its publish
    // acknowledged with its stream sequence.
    let mut order: Vec<usize> = (0..plan.messages.len()).collect();
    order.sort_by_key(|&i| plan.messages[i].at);
    let mut lags = BTreeMap::new();
    for i in order {
        let m = &plan.messages[i];
        tokio::time::sleep_until(start + wait(m.at)).await;
        let ack = js
            .publish(subject.to_string(), m.id.clone().into())
            .await
            .map_err(failed("publishing"))?
            .await
            .map_err(failed("a publish ack"))?;
        seen.lock()
            .expect("not poisoned")
            .ids
            .insert(ack.sequence, m.id.clone());
        lags.insert(m.id.clone(), elapsed(start) - scale.real(m.at));
    }

    // Until every message has ended, or the model's end plus a settling
    // time (a message still pending is seen only as the lack of an end).
    let settle = 300.0 + super::compare::tolerance(modeled_end);
    let deadline = start + real(modeled_end + settle);
    loop {
        let now = Instant::now();
        let done = seen.lock().expect("not poisoned").done(plan.messages.len());
        if (done && now >= start + real(modeled_end)) || now >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for t in &tasks {
        t.abort();
    }
    for t in tasks {
        if let Ok(Err(e)) = t.await {
            return Err(e);
        }
    }
    // A message given up after MaxDeliver stays in the stream (docs/model.md
    // section 21, nats-jetstream 6): read it back by its sequence, and one
    // the stream no longer has is gone (dropped), which differs.
    let given_up: Vec<(String, u64)> = {
        let seen = seen.lock().expect("not poisoned");
        (seen.ids.iter())
            .filter(|(_, id)| {
                matches!(seen.ends.get(*id), Some((End::Advisory { advisory }, _)) if advisory == "max_deliveries")
            })
            .map(|(&sequence, id)| (id.clone(), sequence))
            .collect()
    };
    // At most READ_BACK for them all: a message not read back by then is
    // left as its advisory said (never reported dropped for want of time).
    let mut gone = std::collections::BTreeSet::new();
    let read_until = Instant::now() + READ_BACK;
    for (id, sequence) in given_up {
        let left = read_until.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.get_raw_message(sequence)).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) => {
                gone.insert(id);
            }
            Err(_) => break,
        }
    }
    let seen = seen.lock().expect("not poisoned");
    Ok(plan
        .messages
        .iter()
        .map(|p| {
            let (end, end_at) = match seen.ends.get(&p.id) {
                Some(_) if gone.contains(&p.id) => (End::Dropped, None),
                Some((end, at)) => (end.clone(), Some(*at)),
                None => (End::Queued, None),
            };
            Message {
                id: p.id.clone(),
                deliveries: seen.deliveries.get(&p.id).cloned().unwrap_or_default(),
                end,
                end_at,
                publish_lag: lags.get(&p.id).copied(),
                x_death_count: None,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nats_url_names_its_address_and_each_run_its_own_stream() {
        assert_eq!(address("nats://127.0.0.1:4222"), "127.0.0.1:4222");
        assert_eq!(address("nats://user:pw@127.0.0.1:4222/"), "127.0.0.1:4222");
        let (a, subject) = names("");
        let (b, _) = names("");
        assert_ne!(a, b);
        assert!(!a.contains('.') && !a.contains(' '), "{a}");
        assert!(subject.starts_with("scenario-run.conform."));
    }
}
