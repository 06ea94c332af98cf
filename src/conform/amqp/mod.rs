//! The RabbitMQ side of a conformance run: a quorum queue declared as
//! the file describes it, the file's messages published at their scaled
//! arrival times, and one scripted consumer channel per message (prefetch
//! 1), which applies the file's faults: nack with requeue, reject, or a
//! closed channel for a crash or a lost acknowledgement.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_lite::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicGetOptions, BasicPublishOptions, BasicQosOptions, BasicRejectOptions,
    ConfirmSelectOptions, ExchangeDeleteOptions, QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Channel, Connection};
use tokio::time::{Duration, Instant};

use super::LiveError;
use super::compare::{Delivery, End, Message, TimeScale};
use super::plan::{Action, Plan};
use client::{
    declare_queue, elapsed, failed, header, id_of, int_of, open, queue_name, requeue, subscribe,
    text_of,
};

mod client;
mod inspection;
mod probe;

pub use probe::{PROBES, broker, latency};

/// Deliveries one run records at most; past it a run stops (a broker
/// that redelivers without end under an unlimited delivery limit).
pub const MAX_DELIVERIES: usize = 10_000;

/// What the consumers saw, shared between them.
#[derive(Default)]
struct Seen {
    deliveries: BTreeMap<String, Vec<Delivery>>,
    ends: BTreeMap<String, (End, Option<f64>)>,
    /// Per dead letter, the `count` of its first `x-death` entry.
    deaths: BTreeMap<String, u64>,
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
    if let Some(limit) = plan
        .queue
        .delivery_limit
        .filter(|_| plan.queue.declare_limit)
    {
        arguments.insert(
            "x-delivery-limit".into(),
            AMQPValue::LongLongInt(limit.into()),
        );
    }
    let names = Names {
        dlx: format!("{queue}.dlx"),
        kept: format!("{queue}.dlq-kept"),
        dlq,
        queue,
    };
    if plan.queue.dead_letter {
        let durable = QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        };
        admin
            .queue_declare(names.dlq.as_str().into(), durable, FieldTable::default())
            .await
            .map_err(failed("declaring the dead-letter queue"))?;
        match &plan.inspection {
            None => {
                arguments.insert(
                    "x-dead-letter-exchange".into(),
                    AMQPValue::LongString("".into()),
                );
                arguments.insert(
                    "x-dead-letter-routing-key".into(),
                    AMQPValue::LongString(names.dlq.as_str().into()),
                );
            }
            Some(inspection) => {
                inspection::declare_kept(
                    &admin,
                    &names.dlx,
                    [&names.dlq, &names.kept],
                    inspection.retention.map(|r| scale.real(r)),
                )
                .await?;
                arguments.insert(
                    "x-dead-letter-exchange".into(),
                    AMQPValue::LongString(names.dlx.as_str().into()),
                );
            }
        }
    }
    declare_queue(&admin, &names.queue, arguments, plan.queue.classic).await?;

    let result = drive(&connection, plan, scale, modeled_end, &names).await;

    let cleanup = async {
        let _ = admin
            .queue_delete(names.queue.as_str().into(), QueueDeleteOptions::default())
            .await;
        if plan.queue.dead_letter {
            let _ = admin
                .queue_delete(names.dlq.as_str().into(), QueueDeleteOptions::default())
                .await;
        }
        if plan.inspection.is_some() {
            let _ = admin
                .queue_delete(names.kept.as_str().into(), QueueDeleteOptions::default())
                .await;
            let _ = admin
                .exchange_delete(names.dlx.as_str().into(), ExchangeDeleteOptions::default())
                .await;
        }
        let _ = connection.close(200, "done".into()).await;
    };
    let _ = tokio::time::timeout(Duration::from_secs(5), cleanup).await;
    result
}

/// The names of a run's queues and exchange.
struct Names {
    /// The quorum queue.
    queue: String,
    /// The dead-letter queue a consumer reads as messages arrive.
    dlq: String,
    /// With an inspection: the fanout dead-letter exchange, routing to
    /// `dlq` and to `kept`.
    dlx: String,
    /// With an inspection: the dead-letter queue that keeps its messages
    /// for the quarantine's retention, read at the inspection.
    kept: String,
}

async fn drive(
    connection: &Arc<Connection>,
    plan: &Plan,
    scale: TimeScale,
    modeled_end: f64,
    names: &Names,
) -> Result<Vec<Message>, LiveError> {
    let (queue, dlq) = (names.queue.as_str(), names.dlq.as_str());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let plan = Arc::new(plan.clone());
    let start = Instant::now();
    let mut tasks = Vec::new();

    // A consumer per message (the model's unlimited workers), or the one
    // consumer of `[workers] count = 1`.
    let consumers = match plan.one_consumer {
        Some(_) => 1,
        None => plan.messages.len(),
    };
    for worker in 0..consumers {
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

    let inspection = plan.inspection.as_ref().map(|i| {
        let (connection, kept, purge) = (connection.clone(), names.kept.clone(), i.purge);
        let (at, most) = (start + real(scale.real(i.at)), plan.messages.len());
        tokio::spawn(async move { inspection::inspect(&connection, &kept, purge, at, most).await })
    });

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
    let mut lags = BTreeMap::new();
    for i in order {
        let m = &plan.messages[i];
        let due = scale.real(m.at);
        tokio::time::sleep_until(start + real(due)).await;
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
        lags.insert(m.id.clone(), elapsed(start) - due);
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
    let kept = match inspection {
        Some(task) => Some(
            task.await
                .map_err(|e| LiveError::Failed(format!("the inspection: {e}")))??,
        ),
        None => None,
    };
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
                Some((end, at)) => {
                    let purge = plan.inspection.as_ref().is_some_and(|i| i.purge);
                    (
                        inspection::inspected(end, kept.as_deref(), purge, &p.id),
                        *at,
                    )
                }
                None if queued.contains(&p.id) => (End::Queued, None),
                None => (End::Dropped, None),
            };
            Message {
                id: p.id.clone(),
                deliveries: seen.deliveries.get(&p.id).cloned().unwrap_or_default(),
                end,
                end_at,
                publish_lag: lags.get(&p.id).copied(),
                x_death_count: seen.deaths.get(&p.id).copied(),
            }
        })
        .collect())
}

fn real(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
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
            // A classic queue counts nothing: it flags a redelivery.
            let count = match plan.queue.classic {
                true => u64::from(delivery.redelivered),
                false => header(&delivery.properties, "x-delivery-count")
                    .and_then(int_of)
                    .unwrap_or(0)
                    .max(0) as u64,
            };
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
                    delivery_count: count,
                    action,
                });
                seen.recorded += 1;
                (action, receive)
            };
            // A failing fault's `takes`, else the worker's service time.
            let takes = match planned.takes(receive) {
                0 => plan.one_consumer.unwrap_or(0),
                takes => takes,
            };
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
                Action::Requeue => requeue(acker).await?,
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
        let first = header(&delivery.properties, "x-death").and_then(|v| match v {
            AMQPValue::FieldArray(deaths) => deaths.as_slice().first().and_then(|d| match d {
                AMQPValue::FieldTable(t) => Some(t.inner()),
                _ => None,
            }),
            _ => None,
        });
        let reason = first
            .and_then(|t| t.get("reason"))
            .and_then(text_of)
            .unwrap_or_else(|| "no x-death header".into());
        if let Some(count) = first.and_then(|t| t.get("count")).and_then(int_of) {
            seen.lock()
                .expect("not poisoned")
                .deaths
                .insert(id.clone(), count.max(0) as u64);
        }
        delivery
            .acker
            .ack(BasicAckOptions::default())
            .await
            .map_err(failed("basic.ack"))?;
        ended(seen, id, End::DeadLettered { reason }, at);
    }
    Ok(())
}
