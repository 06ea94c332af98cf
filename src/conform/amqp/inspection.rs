//! The operator's inspection of a RabbitMQ run's dead letters: a fanout
//! dead-letter exchange feeding a second dead-letter queue that keeps its
//! messages for the quarantine's retention (`x-message-ttl`, counted from
//! entering it), read at the model's inspection time; and how each
//! message's end reads after it (docs/conformance.md).

use lapin::options::{
    BasicGetOptions, ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{Channel, Connection, ExchangeKind};
use tokio::time::Instant;

use super::client::{failed, id_of, requeue};
use crate::conform::LiveError;
use crate::conform::compare::End;

/// Declares the fanout dead-letter exchange and the queue that keeps the
/// dead letters for `retention` (real ms; a message TTL, which RabbitMQ
/// counts from the message's entry into that queue), both bound.
pub(super) async fn declare_kept(
    admin: &Channel,
    dlx: &str,
    [dlq, kept]: [&str; 2],
    retention: Option<f64>,
) -> Result<(), LiveError> {
    admin
        .exchange_declare(
            dlx.into(),
            ExchangeKind::Fanout,
            ExchangeDeclareOptions::default(),
            FieldTable::default(),
        )
        .await
        .map_err(failed("declaring the dead-letter exchange"))?;
    let mut arguments = FieldTable::default();
    if let Some(ttl) = retention {
        arguments.insert(
            "x-message-ttl".into(),
            AMQPValue::LongLongInt(ttl.round() as i64),
        );
    }
    let durable = QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    };
    admin
        .queue_declare(kept.into(), durable, arguments)
        .await
        .map_err(failed("declaring the kept dead-letter queue"))?;
    for queue in [dlq, kept] {
        admin
            .queue_bind(
                queue.into(),
                dlx.into(),
                "".into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(failed("binding a dead-letter queue"))?;
    }
    Ok(())
}

/// The operator's inspection at `at` (real ms from `start`): reads every
/// message the kept dead-letter queue still holds (RabbitMQ drops one
/// whose TTL elapsed before handing it out), removing them, which is the
/// purge; for a hold they are put back. Returns the ids read.
pub(super) async fn inspect(
    connection: &Connection,
    kept: &str,
    purge: bool,
    at: Instant,
    most: usize,
) -> Result<Vec<String>, LiveError> {
    tokio::time::sleep_until(at).await;
    let channel = connection
        .create_channel()
        .await
        .map_err(failed("a channel"))?;
    let mut ids = Vec::new();
    let mut held = Vec::new();
    while ids.len() <= most {
        let got = channel
            .basic_get(kept.into(), BasicGetOptions { no_ack: purge })
            .await
            .map_err(failed("reading the kept dead-letter queue"))?;
        let Some(got) = got else { break };
        ids.push(id_of(&got.delivery.properties, &got.delivery.data));
        held.push(got.delivery.acker);
    }
    if !purge {
        // A hold leaves them where they are.
        for acker in &held {
            requeue(acker).await?;
        }
    }
    let _ = channel.close(200, "inspected".into()).await;
    Ok(ids)
}

/// How a message that ended as `end` stands after the inspection, which
/// read `kept` from the kept dead-letter queue (`None`: no inspection)
/// and purged them if `purge`.
pub(super) fn inspected(end: &End, kept: Option<&[String]>, purge: bool, id: &str) -> End {
    let (End::DeadLettered { reason }, Some(kept)) = (end, kept) else {
        return end.clone();
    };
    let reason = reason.clone();
    match (kept.iter().any(|k| k == id), purge) {
        (false, _) => End::Expired { reason },
        (true, true) => End::Purged { reason },
        (true, false) => End::DeadLettered { reason },
    }
}
