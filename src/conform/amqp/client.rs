//! The lapin calls a run and the probes share: a connection and its
//! channel, queue names, a quorum queue's declaration, a consumer, and
//! reading header values.

use lapin::options::{BasicConsumeOptions, BasicNackOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};
use tokio::time::Instant;

use crate::conform::LiveError;

pub(super) fn text_of(v: &AMQPValue) -> Option<String> {
    match v {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_string()),
        _ => None,
    }
}

pub(super) fn int_of(v: &AMQPValue) -> Option<i64> {
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
pub(super) async fn open(url: &str) -> Result<(Connection, Channel), LiveError> {
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
pub(super) fn queue_name(what: &str) -> String {
    format!(
        "scenario-run.conform.{}.{what}{}",
        std::process::id(),
        QUEUES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A message's header, if it has it.
pub(super) fn header<'p>(properties: &'p BasicProperties, name: &str) -> Option<&'p AMQPValue> {
    properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(name))
}

/// Declares the durable queue `name`, quorum or `classic`, with
/// `arguments` besides its type.
pub(super) async fn declare_queue(
    channel: &Channel,
    name: &str,
    mut arguments: FieldTable,
    classic: bool,
) -> Result<(), LiveError> {
    let kind = if classic { "classic" } else { "quorum" };
    arguments.insert("x-queue-type".into(), AMQPValue::LongString(kind.into()));
    let durable = QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    };
    channel
        .queue_declare(name.into(), durable, arguments)
        .await
        .map_err(failed("declaring the queue"))?;
    Ok(())
}

/// A consumer of `queue` on `channel`, tagged `tag`.
pub(super) async fn subscribe(
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

/// A message's id: its `message-id`, else its body.
pub(super) fn id_of(properties: &BasicProperties, data: &[u8]) -> String {
    properties
        .message_id()
        .as_ref()
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|| String::from_utf8_lossy(data).into_owned())
}

/// Returns a delivery to its queue: `basic.nack` with requeue.
pub(super) async fn requeue(acker: &lapin::Acker) -> Result<(), LiveError> {
    acker
        .nack(BasicNackOptions {
            requeue: true,
            multiple: false,
        })
        .await
        .map(|_| ())
        .map_err(failed("basic.nack"))
}

pub(super) fn failed(what: &str) -> impl Fn(lapin::Error) -> LiveError + '_ {
    move |e| LiveError::Failed(format!("{what}: {e}"))
}

static QUEUES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub(super) fn elapsed(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}
