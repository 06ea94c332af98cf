//! What a RabbitMQ is before a run: its product and version, read from
//! its AMQP greeting, and its latency from a publish to a delivery.

use futures_lite::StreamExt;
use lapin::BasicProperties;
use lapin::options::{BasicPublishOptions, QueueDeleteOptions};
use lapin::types::FieldTable;
use tokio::time::{Duration, Instant};

use super::client::{declare_queue, elapsed, failed, open, queue_name, subscribe, text_of};
use crate::conform::{Broker, LiveError};

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

/// Probes the broker's latency from a publish to its delivery on a
/// quorum queue: the most of [`PROBES`] round trips, in real ms. A
/// quorum queue delivers a message once its Raft log has it on disk, so
/// this is mostly the disk's fsync; conformance adds twice it to every
/// timing tolerance.
pub async fn latency(url: &str) -> Result<f64, LiveError> {
    let (connection, channel) = open(url).await?;
    let queue = queue_name("probe");
    declare_queue(&channel, &queue, FieldTable::default(), false).await?;
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
