//! The RabbitMQ side of a conformance run: a quorum queue declared as
//! the file describes it, the file's messages published at their scaled
//! arrival times, and one scripted consumer channel per message (prefetch
//! 1), which applies the file's faults: nack with requeue, reject, or a
//! closed channel for a crash or a lost acknowledgement.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_lite::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicGetOptions, BasicNackOptions, BasicPublishOptions,
    BasicQosOptions, BasicRejectOptions, ConfirmSelectOptions, QueueDeclareOptions,
    QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};
use tokio::time::{Duration, Instant};

use super::compare::{Delivery, End, Message, TimeScale};
use super::plan::{Action, Plan};
use super::{Broker, LiveError};

/// Deliveries one run records at most; past it a run stops (a broker
/// that redelivers without end under an unlimited delivery limit).
pub const MAX_DELIVERIES: usize = 10_000;

/// The broker's name and version, read from its `connection.start`.
pub async fn broker(url: &str) -> Result<Broker, LiveError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = address(url)?;
    let mut stream = tokio::net::TcpStream::connect(&address)
        .await
        .map_err(|e| LiveError::Absent(format!("no broker answers at {address}: {e}")))?;
    stream
        .write_all(b"AMQP\x00\x00\x09\x01")
        .await
        .map_err(|e| LiveError::Failed(e.to_string()))?;
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 4096];
    let deadline = Duration::from_secs(5);
    loop {
        let n = tokio::time::timeout(deadline, stream.read(&mut buffer))
            .await
            .map_err(|_| LiveError::Failed(format!("{address} sent no AMQP greeting")))?
            .map_err(|e| LiveError::Failed(e.to_string()))?;
        if n == 0 || bytes.len() > 65_536 {
            return Err(LiveError::Failed(format!(
                "{address} closed before its AMQP greeting"
            )));
        }
        bytes.extend_from_slice(&buffer[..n]);
        if let Ok((_, frame)) = amq_protocol::frame::parse_frame(bytes.as_slice()) {
            use amq_protocol::frame::AMQPFrame;
            use amq_protocol::protocol::{AMQPClass, connection};
            let AMQPFrame::Method(_, AMQPClass::Connection(connection::AMQPMethod::Start(start))) =
                frame
            else {
                return Err(LiveError::Failed(format!(
                    "{address} does not speak AMQP 0-9-1"
                )));
            };
            let text = |k: &str| start.server_properties.inner().get(k).and_then(text_of);
            return Ok(Broker {
                name: text("product").unwrap_or_else(|| "AMQP broker".into()),
                version: text("version").unwrap_or_else(|| "unknown".into()),
                latency_ms: 0.0,
                notes: Vec::new(),
            });
        }
    }
}

/// `host:port` of an `amqp://` URL (default port 5672).
fn address(url: &str) -> Result<String, LiveError> {
    let rest = url
        .strip_prefix("amqp://")
        .ok_or_else(|| LiveError::Failed(format!("{url} is not an amqp:// URL")))?;
    let authority = rest.split('/').next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    Ok(if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:5672")
    })
}

fn text_of(v: &AMQPValue) -> Option<String> {
    match v {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_string()),
        _ => None,
    }
}

fn int_of(v: &AMQPValue) -> Option<i64> {
    Some(match *v {
        AMQPValue::ShortShortInt(n) => n.into(),
        AMQPValue::ShortShortUInt(n) => n.into(),
        AMQPValue::ShortInt(n) => n.into(),
        AMQPValue::ShortUInt(n) => n.into(),
        AMQPValue::LongInt(n) => n.into(),
        AMQPValue::LongUInt(n) => n.into(),
        AMQPValue::LongLongInt(n) => n,
        _ => return None,
    })
}

/// A connection to the broker at `url` and a channel on it.
async fn open(url: &str) -> Result<(Connection, Channel), LiveError> {
    let connection = Connection::connect(url, ConnectionProperties::default())
        .await
        .map_err(|e| LiveError::Absent(format!("no broker answers at {url}: {e}")))?;
    let channel = connection
        .create_channel()
        .await
        .map_err(failed("a channel"))?;
    Ok((connection, channel))
}

/// A queue name of this process's own: `scenario-run.conform.PID.WHAT N`.
fn queue_name(what: &str) -> String {
    format!(
        "scenario-run.conform.{}.{what}{}",
        std::process::id(),
        QUEUES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A message's header, if it has it.
fn header<'p>(properties: &'p BasicProperties, name: &str) -> Option<&'p AMQPValue> {
    properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(name))
}

/// Declares the durable quorum queue `name` with `arguments` besides its
/// type.
async fn declare_quorum(
    channel: &Channel,
    name: &str,
    mut arguments: FieldTable,
) -> Result<(), LiveError> {
    arguments.insert(
        "x-queue-type".into(),
        AMQPValue::LongString("quorum".into()),
    );
    let durable = QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    };
    channel
        .queue_declare(name.into(), durable, arguments)
        .await
        .map_err(failed("declaring a quorum queue"))?;
    Ok(())
}

/// A consumer of `queue` on `channel`, tagged `tag`.
async fn subscribe(
    channel: &Channel,
    queue: &str,
    tag: &str,
    no_ack: bool,
) -> Result<lapin::Consumer, LiveError> {
    channel
        .basic_consume(
            queue.into(),
            tag.into(),
            BasicConsumeOptions {
                no_ack,
                ..BasicConsumeOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .map_err(failed("basic.consume"))
}

fn failed(what: &str) -> impl Fn(lapin::Error) -> LiveError + '_ {
    move |e| LiveError::Failed(format!("{what}: {e}"))
}

/// What the consumers saw, shared between them.
#[derive(Default)]
struct Seen {
    deliveries: BTreeMap<String, Vec<Delivery>>,
    ends: BTreeMap<String, (End, Option<f64>)>,
    recorded: usize,
}

/// Records how message `id` ended, and when (real ms).
fn ended(seen: &Mutex<Seen>, id: String, end: End, at: f64) {
    seen.lock()
        .expect("not poisoned")
        .ends
        .insert(id, (end, Some(at)));
}

impl Seen {
    fn done(&self, messages: usize) -> bool {
        self.ends.len() >= messages || self.recorded >= MAX_DELIVERIES
    }
}

/// Runs `plan` on the broker at `url`, `modeled_end` (real ms) being when
/// the model's run ends: returns each message as the broker treated it,
/// in the plan's order.
pub async fn run(
    url: &str,
    plan: &Plan,
    scale: TimeScale,
    modeled_end: f64,
) -> Result<Vec<Message>, LiveError> {
    let (connection, admin) = open(url).await?;
    let connection = Arc::new(connection);
    let queue = queue_name("");
    let dlq = format!("{queue}.dlq");
    let mut arguments = FieldTable::default();
    if let Some(limit) = plan.queue.delivery_limit {
        arguments.insert(
            "x-delivery-limit".into(),
            AMQPValue::LongLongInt(limit.into()),
        );
    }
    if plan.queue.dead_letter {
        let durable = QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        };
        admin
            .queue_declare(dlq.as_str().into(), durable, FieldTable::default())
            .await
            .map_err(failed("declaring the dead-letter queue"))?;
        arguments.insert(
            "x-dead-letter-exchange".into(),
            AMQPValue::LongString("".into()),
        );
        arguments.insert(
            "x-dead-letter-routing-key".into(),
            AMQPValue::LongString(dlq.as_str().into()),
        );
    }
    declare_quorum(&admin, &queue, arguments).await?;

    let result = drive(&connection, plan, scale, modeled_end, &queue, &dlq).await;

    let cleanup = async {
        let _ = admin
            .queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
            .await;
        if plan.queue.dead_letter {
            let _ = admin
                .queue_delete(dlq.as_str().into(), QueueDeleteOptions::default())
                .await;
        }
        let _ = connection.close(200, "done".into()).await;
    };
    let _ = tokio::time::timeout(Duration::from_secs(5), cleanup).await;
    result
}

/// Probes the broker's latency from a publish to its delivery on a
/// quorum queue: the most of [`PROBES`] round trips, in real ms. A
/// quorum queue delivers a message once its Raft log has it on disk, so
/// this is mostly the disk's fsync; conformance adds twice it to every
/// timing tolerance.
pub async fn latency(url: &str) -> Result<f64, LiveError> {
    let (connection, channel) = open(url).await?;
    let queue = queue_name("probe");
    declare_quorum(&channel, &queue, FieldTable::default()).await?;
    let mut consumer = subscribe(&channel, &queue, "probe", true).await?;
    let mut most: f64 = 0.0;
    for _ in 0..PROBES {
        let sent = Instant::now();
        channel
            .basic_publish(
                "".into(),
                queue.as_str().into(),
                BasicPublishOptions::default(),
                b"probe",
                BasicProperties::default(),
            )
            .await
            .map_err(failed("publishing a probe"))?;
        tokio::time::timeout(Duration::from_secs(5), consumer.next())
            .await
            .map_err(|_| LiveError::Failed("a probe took more than 5 s".into()))?;
        most = most.max(elapsed(sent));
    }
    let _ = channel
        .queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await;
    let _ = connection.close(200, "done".into()).await;
    Ok(most)
}

/// Round trips [`latency`] measures.
pub const PROBES: usize = 5;

static QUEUES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

async fn drive(
    connection: &Arc<Connection>,
    plan: &Plan,
    scale: TimeScale,
    modeled_end: f64,
    queue: &str,
    dlq: &str,
) -> Result<Vec<Message>, LiveError> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let plan = Arc::new(plan.clone());
    let start = Instant::now();
    let mut tasks = Vec::new();

    for worker in 0..plan.messages.len() {
        let (connection, plan, seen, queue) = (
            connection.clone(),
            plan.clone(),
            seen.clone(),
            queue.to_string(),
        );
        tasks.push(tokio::spawn(async move {
            consume(&connection, &plan, &seen, &queue, worker, start, scale).await
        }));
    }
    if plan.queue.dead_letter {
        let channel = connection
            .create_channel()
            .await
            .map_err(failed("a channel"))?;
        let (seen, dlq) = (seen.clone(), dlq.to_string());
        tasks.push(tokio::spawn(async move {
            dead_letters(channel, &seen, &dlq, start).await
        }));
    }

    // The publisher: each message at its scaled arrival, confirmed.
    let publisher = connection
        .create_channel()
        .await
        .map_err(failed("a channel"))?;
    publisher
        .confirm_select(ConfirmSelectOptions::default())
        .await
        .map_err(failed("publisher confirms"))?;
    let mut order: Vec<usize> = (0..plan.messages.len()).collect();
    order.sort_by_key(|&i| plan.messages[i].at);
    for i in order {
        let m = &plan.messages[i];
        tokio::time::sleep_until(start + real(scale.real(m.at))).await;
        publisher
            .basic_publish(
                "".into(),
                queue.into(),
                BasicPublishOptions::default(),
                m.id.as_bytes(),
                BasicProperties::default()
                    .with_message_id(m.id.as_str().into())
                    .with_delivery_mode(2),
            )
            .await
            .map_err(failed("publishing"))?
            .await
            .map_err(failed("a publisher confirm"))?;
    }

    // Wait until every message has ended, or until the model's end plus
    // a settling time (a drop is seen only as an absence).
    let settle = 300.0 + super::compare::tolerance(modeled_end);
    let deadline = start + real(modeled_end + settle);
    let hard = start + real(modeled_end + settle) + Duration::from_secs(10);
    loop {
        let now = Instant::now();
        let done = seen.lock().expect("not poisoned").done(plan.messages.len());
        if (done && now >= start + real(modeled_end)) || now >= deadline || now >= hard {
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

    // What is still in the queue is queued; the rest without an end was
    // dropped by the broker.
    let getter = connection
        .create_channel()
        .await
        .map_err(failed("a channel"))?;
    let mut queued = Vec::new();
    while queued.len() <= plan.messages.len() {
        let got = getter
            .basic_get(queue.into(), BasicGetOptions { no_ack: true })
            .await
            .map_err(failed("reading the queue"))?;
        let Some(got) = got else { break };
        queued.push(id_of(&got.delivery.properties, &got.delivery.data));
    }
    let seen = seen.lock().expect("not poisoned");
    Ok(plan
        .messages
        .iter()
        .map(|p| {
            let (end, end_at) = match seen.ends.get(&p.id) {
                Some((end, at)) => (end.clone(), *at),
                None if queued.contains(&p.id) => (End::Queued, None),
                None => (End::Dropped, None),
            };
            Message {
                id: p.id.clone(),
                deliveries: seen.deliveries.get(&p.id).cloned().unwrap_or_default(),
                end,
                end_at,
            }
        })
        .collect())
}

fn real(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
}

fn elapsed(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn id_of(properties: &BasicProperties, data: &[u8]) -> String {
    properties
        .message_id()
        .as_ref()
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|| String::from_utf8_lossy(data).into_owned())
}

/// One worker: a channel with prefetch 1 whose handler follows the plan;
/// a crash or a lost acknowledgement closes the channel and the worker
/// starts again on a new one.
async fn consume(
    connection: &Connection,
    plan: &Plan,
    seen: &Mutex<Seen>,
    queue: &str,
    worker: usize,
    start: Instant,
    scale: TimeScale,
) -> Result<(), LiveError> {
    let mut generation = 0u64;
    loop {
        generation += 1;
        let channel = connection
            .create_channel()
            .await
            .map_err(failed("a consumer channel"))?;
        channel
            .basic_qos(1, BasicQosOptions::default())
            .await
            .map_err(failed("basic.qos"))?;
        let tag = format!("worker-{worker}-{generation}");
        let mut consumer = subscribe(&channel, queue, &tag, false).await?;
        while let Some(delivery) = consumer.next().await {
            let delivery = delivery.map_err(failed("a delivery"))?;
            let at = elapsed(start);
            let id = id_of(&delivery.properties, &delivery.data);
            let count = header(&delivery.properties, "x-delivery-count")
                .and_then(int_of)
                .unwrap_or(0)
                .max(0) as u64;
            let Some(planned) = plan.messages.iter().find(|p| p.id == id) else {
                continue;
            };
            let (action, receive) = {
                let mut seen = seen.lock().expect("not poisoned");
                let list = seen.deliveries.entry(id.clone()).or_default();
                let receive = list.len() as u64 + 1;
                let action = planned.action(receive);
                list.push(Delivery {
                    at,
                    delivery_count: count,
                    action,
                });
                seen.recorded += 1;
                (action, receive)
            };
            let takes = planned.takes(receive);
            if takes > 0 {
                tokio::time::sleep(real(scale.real(takes))).await;
            }
            let acker = &delivery.acker;
            match action {
                Action::Ack => {
                    acker
                        .ack(BasicAckOptions::default())
                        .await
                        .map_err(failed("basic.ack"))?;
                    ended(seen, id, End::Acked, elapsed(start));
                }
                Action::Requeue => {
                    acker
                        .nack(BasicNackOptions {
                            requeue: true,
                            multiple: false,
                        })
                        .await
                        .map_err(failed("basic.nack"))?;
                }
                Action::Reject => {
                    acker
                        .reject(BasicRejectOptions { requeue: false })
                        .await
                        .map_err(failed("basic.reject"))?;
                }
                Action::LoseAck | Action::Crash => {
                    close(&channel).await;
                    break;
                }
            }
        }
    }
}

async fn close(channel: &Channel) {
    let _ = channel.close(200, "consumer gone".into()).await;
}

/// Reads the dead-letter queue: each message's `x-death` reason.
async fn dead_letters(
    channel: Channel,
    seen: &Mutex<Seen>,
    dlq: &str,
    start: Instant,
) -> Result<(), LiveError> {
    let mut consumer = subscribe(&channel, dlq, "dead-letters", false).await?;
    while let Some(delivery) = consumer.next().await {
        let delivery = delivery.map_err(failed("a dead letter"))?;
        let at = elapsed(start);
        let id = id_of(&delivery.properties, &delivery.data);
        let reason = header(&delivery.properties, "x-death")
            .and_then(|v| match v {
                AMQPValue::FieldArray(deaths) => deaths.as_slice().first().and_then(|d| match d {
                    AMQPValue::FieldTable(t) => t.inner().get("reason").and_then(text_of),
                    _ => None,
                }),
                _ => None,
            })
            .unwrap_or_else(|| "no x-death header".into());
        delivery
            .acker
            .ack(BasicAckOptions::default())
            .await
            .map_err(failed("basic.ack"))?;
        ended(seen, id, End::DeadLettered { reason }, at);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_amqp_url_names_its_host_and_port() {
        let a = |u: &str| address(u).unwrap();
        assert_eq!(a("amqp://127.0.0.1:5672/%2f"), "127.0.0.1:5672");
        assert_eq!(a("amqp://guest:guest@127.0.0.1"), "127.0.0.1:5672");
        assert!(address("nats://x").is_err());
    }
}
