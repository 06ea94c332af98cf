//! The Redis side of a write-intent conformance run: the model's store
//! operations replayed at their scaled times against a real Redis, one
//! after another in the model's order, under keys of this run's own
//! prefix (deleted afterwards).

use redis::aio::MultiplexedConnection;
use tokio::time::{Duration, Instant};

use super::compare::TimeScale;
use super::store::{Answer, Op, StorePlan};
use super::{Broker, LiveError};

fn failed(what: &str) -> impl Fn(redis::RedisError) -> LiveError + '_ {
    move |e| LiveError::Failed(format!("{what}: {e}"))
}

/// A connection to the Redis at `url`.
pub async fn connect(url: &str) -> Result<MultiplexedConnection, LiveError> {
    let client = redis::Client::open(url).map_err(failed("a Redis URL"))?;
    tokio::time::timeout(
        Duration::from_secs(5),
        client.get_multiplexed_async_connection(),
    )
    .await
    .map_err(|_| LiveError::Absent(format!("no Redis answers at {url} within 5 s")))?
    .map_err(|e| LiveError::Absent(format!("no Redis answers at {url}: {e}")))
}

/// The server's name and version (`INFO server`), its latency (the most
/// of 5 `PING`s, real ms), and whether a key is live at its expiry's
/// exact millisecond.
pub async fn broker(url: &str) -> Result<(Broker, bool), LiveError> {
    let mut c = connect(url).await?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut c)
        .await
        .map_err(failed("INFO"))?;
    let version = info
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .unwrap_or("unknown")
        .trim()
        .to_string();
    let mut latency: f64 = 0.0;
    for _ in 0..5 {
        let sent = Instant::now();
        let _: String = redis::cmd("PING")
            .query_async(&mut c)
            .await
            .map_err(failed("PING"))?;
        latency = latency.max(sent.elapsed().as_secs_f64() * 1000.0);
    }
    let live = live_at_expiry(&mut c).await?;
    Ok((
        Broker {
            name: "Redis".into(),
            version,
            latency_ms: latency,
            notes: Vec::new(),
        },
        live,
    ))
}

/// Whether the server keeps a key live at the millisecond its expiry
/// falls on, asked inside one script (a script's clock stands still):
/// the key is set to expire at the script's own time, then claimed with
/// `SET NX`. The model's lease is live strictly before its expiry
/// (section 18); Redis 7.0 refuses the claim.
pub async fn live_at_expiry(c: &mut MultiplexedConnection) -> Result<bool, LiveError> {
    const SCRIPT: &str = "local t = redis.call('TIME') \
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) \
        redis.call('SET', KEYS[1], 'INTENT', 'PXAT', now) \
        local claimed = redis.call('SET', KEYS[1], 'CLAIM', 'NX') \
        redis.call('DEL', KEYS[1]) \
        if claimed then return 0 else return 1 end";
    let key = format!("scenario-run:conform:{}:boundary", std::process::id());
    let live: i64 = redis::cmd("EVAL")
        .arg(SCRIPT)
        .arg(1)
        .arg(&key)
        .query_async(c)
        .await
        .map_err(failed("the boundary script"))?;
    Ok(live == 1)
}

/// Replays `plan` against the Redis at `url`: fills in each row's answer.
pub async fn run(url: &str, plan: &mut StorePlan, scale: TimeScale) -> Result<(), LiveError> {
    let mut c = connect(url).await?;
    let prefix = format!(
        "scenario-run:conform:{}:{}:",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let px = |d| (scale.real(d).round() as u64).max(1);
    let (lease, retention) = (px(plan.lease), px(plan.retention));
    let start = Instant::now();
    let steps = plan.steps.clone();
    let result = async {
        for s in &steps {
            let due = start + Duration::from_secs_f64(scale.real(s.at) / 1000.0);
            tokio::time::sleep_until(due).await;
            let key = format!("{prefix}{}", s.key);
            match s.op {
                Op::Consult(row) => {
                    plan.rows[row].redis = Some(consult(&mut c, &key, lease).await?);
                }
                Op::Renew => {
                    let _: i64 = redis::cmd("PEXPIRE")
                        .arg(&key)
                        .arg(lease)
                        .query_async(&mut c)
                        .await
                        .map_err(failed("PEXPIRE"))?;
                }
                Op::Done => {
                    let _: () = redis::cmd("SET")
                        .arg(&key)
                        .arg("DONE")
                        .arg("PX")
                        .arg(retention)
                        .query_async(&mut c)
                        .await
                        .map_err(failed("SET DONE"))?;
                }
            }
        }
        Ok(())
    }
    .await;
    let mut keys: Vec<String> = steps.iter().map(|s| format!("{prefix}{}", s.key)).collect();
    keys.sort();
    keys.dedup();
    if !keys.is_empty() {
        let _: Result<i64, _> = redis::cmd("DEL").arg(&keys).query_async(&mut c).await;
    }
    result
}

static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A consultation: claim with `SET NX PX`, else read what holds the key.
async fn consult(
    c: &mut MultiplexedConnection,
    key: &str,
    lease: u64,
) -> Result<Answer, LiveError> {
    // Twice at most: a key that expires between the refused claim and
    // the read is free, and the second claim takes it.
    for _ in 0..2 {
        let claimed: Option<String> = redis::cmd("SET")
            .arg(key)
            .arg("INTENT")
            .arg("NX")
            .arg("PX")
            .arg(lease)
            .query_async(c)
            .await
            .map_err(failed("SET NX"))?;
        if claimed.is_some() {
            return Ok(Answer::Claimed);
        }
        let held: Option<String> = redis::cmd("GET")
            .arg(key)
            .query_async(c)
            .await
            .map_err(failed("GET"))?;
        match held.as_deref() {
            Some("DONE") => return Ok(Answer::Hit),
            Some(_) => return Ok(Answer::Contention),
            None => continue,
        }
    }
    Err(LiveError::Failed(format!(
        "{key} kept expiring between a claim and a read"
    )))
}
