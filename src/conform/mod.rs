//! `scenario-run conform`: runs a scenario's messages through a real
//! broker with a scripted consumer that applies the file's faults, and
//! compares what the broker did with the model's run of the same file
//! (docs/conformance.md).
//!
//! The pure parts (the plan, the model's side, the time scale and the
//! comparison) are always built and tested; the broker clients are behind
//! the cargo feature `conform`, so that the default build stays free of
//! an async runtime.

pub mod compare;
pub mod diagnosis;
pub mod modeled;
pub mod output;
pub mod plan;
pub mod store;

#[cfg(feature = "conform")]
pub mod amqp;
#[cfg(feature = "conform")]
pub mod nats;
#[cfg(feature = "conform")]
pub mod redis;
#[cfg(feature = "conform")]
pub mod server;

use serde::Serialize;

use crate::app::batch::{Loaded, load_file};
use crate::scenario::Invalid;
use compare::{Difference, Message, TimeScale};
use modeled::Modeled;
use plan::Plan;

/// A broker as it names itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Broker {
    pub name: String,
    pub version: String,
    /// The most a probe message took from its publish to its delivery
    /// (real ms), measured before the files run.
    pub latency_ms: f64,
    /// What the server does that the model does not, found by a probe
    /// (printed under the header line).
    pub notes: Vec<String>,
}

/// Which broker a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `amqp://`: RabbitMQ, for files under `rabbitmq-quorum`.
    Amqp,
    /// `redis://`: the write-intent store of section 18.
    Redis,
    /// `nats://`: NATS JetStream, for files under `nats-jetstream`.
    Nats,
}

impl Target {
    /// The target of `url`, or why there is none.
    pub fn of(url: &str) -> Result<Target, LiveError> {
        if url.starts_with("amqp://") {
            Ok(Target::Amqp)
        } else if url.starts_with("redis://") {
            Ok(Target::Redis)
        } else if url.starts_with("nats://") {
            Ok(Target::Nats)
        } else {
            Err(LiveError::Scheme(url.to_string()))
        }
    }
}

/// Why a live run could not happen (exit code 5; 2 for a build without
/// the clients or a scheme conform does not drive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveError {
    /// No broker answers at the URL.
    Absent(String),
    /// The broker answered, and something went wrong.
    Failed(String),
    /// This build has no broker clients.
    NotBuilt,
    /// The URL's scheme names a broker conform does not drive.
    Scheme(String),
}

impl std::fmt::Display for LiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LiveError::Absent(why) => write!(
                f,
                "{why}\n  help: start the brokers on loopback with `scripts/brokers.sh start`"
            ),
            LiveError::Failed(why) => write!(f, "{why}"),
            LiveError::NotBuilt => write!(
                f,
                "this scenario-run was built without the broker clients\n  help: build it with \
                 `cargo build --release --locked --features conform`"
            ),
            LiveError::Scheme(url) => write!(
                f,
                "{}: conform drives RabbitMQ (amqp://), NATS JetStream (nats://) and a \
                 Redis write-intent store (redis://)",
                crate::diagnostic::one_line(url)
            ),
        }
    }
}

/// A file made ready for a live run: what it does on the broker, the
/// model's side, the scale.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub file: String,
    pub name: String,
    pub kind: Kind,
    pub scale: TimeScale,
}

/// What a file is checked for.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A queue's deliveries (RabbitMQ).
    Queue { plan: Plan, modeled: Modeled },
    /// A write-intent store's answers (Redis).
    Store(store::StorePlan),
}

/// A file's conformance, compared.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub file: String,
    pub name: String,
    pub time_scale: TimeScale,
    /// Wall-clock length of the broker run, in milliseconds.
    pub elapsed_ms: f64,
    /// Each message as the model has it (times scaled to real ms).
    pub model: Vec<Message>,
    /// Each message as the broker treated it.
    pub broker: Vec<Message>,
    /// Against a store: each consultation, the model's answer and the
    /// store's.
    pub store: Vec<store::Row>,
    pub differences: Vec<Difference>,
    /// What the file's run was checked with, for the diagnosis's hints.
    pub settings: diagnosis::Settings,
}

impl Checked {
    pub fn conforms(&self) -> bool {
        self.differences.is_empty()
    }

    /// Why it differs, on a broker of `version`, if it does.
    pub fn diagnosis(&self, version: &str) -> Option<diagnosis::Diagnosis> {
        diagnosis::diagnose(
            &self.model,
            &self.broker,
            &self.differences,
            self.settings,
            version,
        )
    }
}

/// What a file came to before any broker was asked.
#[derive(Debug)]
pub enum NotReady {
    /// The file is not a valid scenario.
    Invalid(Box<Invalid>),
    /// The file is valid, and cannot be checked: why.
    Unsupported(String),
}

/// Reads `path`, plans its run on `target` and runs the model: everything
/// a live run needs, or why there is none. `time_scale`: `--time-scale`,
/// else the default for the file ([`TimeScale::default_for`]).
pub fn prepare(path: &str, target: Target, time_scale: Option<u64>) -> Result<Prepared, NotReady> {
    let (loaded, _source) =
        load_file(path, &[]).map_err(|e| NotReady::Invalid(e.into_invalid(path)))?;
    let scenario = match loaded {
        Loaded::One(s) => *s,
        Loaded::Sweep(_) | Loaded::DataflowSweep(_) => {
            return Err(NotReady::Unsupported(
                "[sweep]: give one point with a file of its own".into(),
            ));
        }
        Loaded::Dataflow(_) => {
            return Err(NotReady::Unsupported(
                "a dataflow has no broker to conform to".into(),
            ));
        }
    };
    if time_scale == Some(0) {
        return Err(NotReady::Unsupported(
            "--time-scale must be at least 1".into(),
        ));
    }
    let unsupported = |u: plan::Unsupported| NotReady::Unsupported(u.to_string());
    let (kind, scale) = match target {
        Target::Amqp | Target::Nats => {
            let mut plan = match target {
                Target::Nats => plan::jetstream(&scenario),
                _ => plan::amqp(&scenario),
            }
            .map_err(unsupported)?;
            let modeled = modeled::modeled(&scenario, &plan).map_err(NotReady::Unsupported)?;
            if let Some(id) = &modeled.expires_at_inspection {
                return Err(NotReady::Unsupported(format!(
                    "[[operator]] wait: message {id:?}'s dead-letter retention ends at the very \
                     instant of the inspection, an order no broker run can time; move the wait"
                )));
            }
            if let Some(inspection) = &mut plan.inspection {
                inspection.at = modeled.inspected_at.unwrap_or(modeled.end);
            }
            let shortest = modeled.shortest.as_ref().map(|(d, _)| *d);
            let scale = time_scale
                .map(TimeScale)
                .unwrap_or_else(|| TimeScale::default_for(modeled.end, shortest));
            if let Some((d, what)) = &modeled.shortest {
                scale.check(*d, what).map_err(NotReady::Unsupported)?;
            }
            scale
                .check_length(modeled.end)
                .map_err(NotReady::Unsupported)?;
            (Kind::Queue { plan, modeled }, scale)
        }
        Target::Redis => {
            let plan = store::plan(&scenario).map_err(unsupported)?;
            let scale = time_scale.map(TimeScale).unwrap_or_else(|| plan.scale());
            plan.check(scale).map_err(NotReady::Unsupported)?;
            scale
                .check_length(plan.end)
                .map_err(NotReady::Unsupported)?;
            (Kind::Store(plan), scale)
        }
    };
    Ok(Prepared {
        file: path.to_string(),
        name: scenario.name.clone(),
        kind,
        scale,
    })
}

/// Runs of one queue file at most: a second when the first differs only
/// in times.
pub const TIMING_ATTEMPTS: u32 = 2;

/// Whether a file differs, and only in the times of its deliveries and
/// ends (never in counts, ends, reasons or the order of deliveries).
pub fn only_times_differ(c: &Checked) -> bool {
    // Times that differ because the deliveries came in another order are
    // the order's, not the timing's: such a run is not run again.
    !c.differences.is_empty()
        && c.differences.iter().all(|d| d.what.ends_with(": time"))
        && c.diagnosis("")
            .is_some_and(|d| d.cause == diagnosis::Cause::Time)
}

/// Compares a live run's messages with the model's, the broker's
/// measured `latency` (real ms) widening every timing tolerance by twice
/// itself.
pub fn checked(
    prepared: &Prepared,
    broker: Vec<Message>,
    elapsed_ms: f64,
    latency: f64,
) -> Checked {
    let (model, rules) = match &prepared.kind {
        Kind::Queue { modeled, plan } => (modeled.scaled(prepared.scale), plan.rules()),
        Kind::Store(_) => (Vec::new(), compare::Rules::Quorum),
    };
    let differences = compare::compare(&model, &broker, 2.0 * latency, rules);
    let settings = match &prepared.kind {
        Kind::Queue { plan, .. } => diagnosis::Settings {
            rules: Some(rules),
            broker_version: plan.broker_version,
            limit_written: plan.queue.declare_limit,
        },
        Kind::Store(_) => diagnosis::Settings::default(),
    };
    Checked {
        file: prepared.file.clone(),
        name: prepared.name.clone(),
        time_scale: prepared.scale,
        elapsed_ms,
        model,
        broker,
        store: Vec::new(),
        differences,
        settings,
    }
}

/// Compares a store run's answers with the model's.
pub fn checked_store(prepared: &Prepared, rows: Vec<store::Row>, elapsed_ms: f64) -> Checked {
    Checked {
        file: prepared.file.clone(),
        name: prepared.name.clone(),
        time_scale: prepared.scale,
        elapsed_ms,
        model: Vec::new(),
        broker: Vec::new(),
        differences: store::compare(&rows, prepared.scale),
        store: rows,
        settings: diagnosis::Settings::default(),
    }
}

/// Runs each prepared file against the broker at `url`, one after the
/// other, and compares.
#[cfg(feature = "conform")]
pub fn live(url: &str, files: &[Prepared]) -> Result<(Broker, Vec<Checked>), LiveError> {
    let target = Target::of(url)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| LiveError::Failed(format!("an async runtime: {e}")))?;
    runtime.block_on(async {
        // The kind of server at the URL first: a wrong one is named at once.
        server::check(url, target).await?;
        let tolerance = |broker: &mut Broker| {
            broker.notes.push(format!(
                "times are compared within max(20 ms, 5% of the time) + 10 ms + twice the \
                 latency ({:.0} ms) + the message's publish lag + max(3 ms, twice the latency) \
                 per round trip before the time",
                2.0 * broker.latency_ms
            ))
        };
        let mut broker = match target {
            Target::Amqp => {
                let mut broker = amqp::broker(url).await?;
                broker.latency_ms = amqp::latency(url).await?;
                tolerance(&mut broker);
                broker
            }
            Target::Nats => {
                let mut broker = nats::broker(url).await?;
                broker.latency_ms = nats::latency(url).await?;
                tolerance(&mut broker);
                broker
            }
            Target::Redis => {
                let (mut broker, live) = redis::broker(url).await?;
                if live {
                    broker.notes.push(
                        "a key is live at its expiry's exact millisecond here (SET NX refused at \
                         PTTL 0); the model's lease ends strictly before it (docs/model.md \
                         section 18): operations are kept away from expiries"
                            .into(),
                    );
                }
                broker
            }
        };
        let mut out = Vec::new();
        for p in files {
            if let Kind::Queue { plan, .. } = &p.kind
                && let Some((major, minor)) = plan.broker_version
                && !broker.version.starts_with(&format!("{major}.{minor}."))
                && broker.version != format!("{major}.{minor}")
            {
                broker.notes.push(format!(
                    "{} follows RabbitMQ {major}.{minor}'s rules (broker_version); the broker is {}",
                    p.file, broker.version
                ));
            }
            let began = std::time::Instant::now();
            let elapsed = |began: std::time::Instant| began.elapsed().as_secs_f64() * 1000.0;
            match &p.kind {
                Kind::Queue { plan, modeled } => {
                    let end = p.scale.real(modeled.end);
                    let mut result = None;
                    // A run whose only differences are times is run once
                    // more, and the second run counts: counts, ends and
                    // reasons are exact, while a time can meet a stall of
                    // the broker's disk (docs/conformance.md, "Time").
                    for attempt in 1..=TIMING_ATTEMPTS {
                        let began = std::time::Instant::now();
                        let messages = match target {
                            Target::Nats => nats::run(url, plan, p.scale, end).await?,
                            _ => amqp::run(url, plan, p.scale, end).await?,
                        };
                        let c = checked(p, messages, elapsed(began), broker.latency_ms);
                        let again = attempt < TIMING_ATTEMPTS && only_times_differ(&c);
                        if again {
                            broker.notes.push(format!(
                                "{}: only times differed on run {attempt} ({} of them, the first: \
                                 message {:?}, {}: model {}, broker {}); run again",
                                p.file,
                                c.differences.len(),
                                c.differences[0].message,
                                c.differences[0].what,
                                c.differences[0].model,
                                c.differences[0].broker,
                            ));
                        }
                        result = Some(c);
                        if !again {
                            break;
                        }
                    }
                    out.extend(result);
                }
                Kind::Store(plan) => {
                    let mut plan = plan.clone();
                    redis::run(url, &mut plan, p.scale).await?;
                    out.push(checked_store(p, plan.rows, elapsed(began)));
                }
            }
        }
        broker.notes.sort();
        Ok((broker, out))
    })
}

/// Without the feature `conform` there is no broker client.
#[cfg(not(feature = "conform"))]
pub fn live(_url: &str, _files: &[Prepared]) -> Result<(Broker, Vec<Checked>), LiveError> {
    Err(LiveError::NotBuilt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_run_that_differs_in_times_alone_is_run_again() {
        let difference = |what: &str| Difference {
            message: "m".into(),
            delivery: Some(2),
            what: what.into(),
            model: "100 ms".into(),
            broker: "163 ms".into(),
            rule: String::new(),
        };
        let with = |differences: Vec<Difference>| Checked {
            file: "f.toml".into(),
            name: "f".into(),
            time_scale: TimeScale(1),
            elapsed_ms: 0.0,
            model: Vec::new(),
            broker: Vec::new(),
            store: Vec::new(),
            differences,
            settings: diagnosis::Settings::default(),
        };
        assert!(only_times_differ(&with(vec![
            difference("delivery 2: time"),
            difference("acked: time"),
        ])));
        assert!(!only_times_differ(&with(vec![
            difference("delivery 2: time"),
            difference("deliveries"),
        ])));
        assert!(!only_times_differ(&with(vec![difference("end")])));
        assert!(!only_times_differ(&with(Vec::new())));
    }

    #[test]
    fn a_url_names_its_broker_and_an_unknown_scheme_is_refused() {
        assert_eq!(Target::of("amqp://127.0.0.1:5672"), Ok(Target::Amqp));
        assert_eq!(Target::of("redis://127.0.0.1:6379"), Ok(Target::Redis));
        assert_eq!(Target::of("nats://127.0.0.1:4222"), Ok(Target::Nats));
        for url in ["http://localhost:4566", "127.0.0.1:5672"] {
            let Err(e) = Target::of(url) else {
                panic!("{url} refused");
            };
            assert!(
                e.to_string().starts_with(&format!("{url}: conform drives")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_file_conform_cannot_drive_says_why_before_any_broker_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.toml");
        std::fs::write(
            &path,
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n[[message]]\nid = \"m\"\n",
        )
        .unwrap();
        let Err(NotReady::Unsupported(why)) = prepare(path.to_str().unwrap(), Target::Amqp, None)
        else {
            panic!("refused");
        };
        assert!(why.starts_with("[delivery] profile:"), "{why}");
        std::fs::write(&path, "[[message]]\nid = 3\n").unwrap();
        assert!(matches!(
            prepare(path.to_str().unwrap(), Target::Amqp, None),
            Err(NotReady::Invalid(_))
        ));
    }

    #[test]
    fn an_inspection_gets_the_model_s_time_and_a_tie_with_an_expiry_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("retention.toml");
        let file = |retention: &str| {
            format!(
                "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 1\n\
                 [quarantine]\nretention = \"{retention}\"\n\
                 [[message]]\nid = \"p\"\nfaults = [{{ fail = {{ first = 9 }} }}]\n\
                 [[message]]\nid = \"q\"\nat = \"1s\"\n\
                 [[operator]]\nwait = \"500ms\"\naction = \"hold\"\n"
            )
        };
        std::fs::write(&path, file("1s")).unwrap();
        let prepared = prepare(path.to_str().unwrap(), Target::Amqp, None).expect("prepared");
        let Kind::Queue { plan, .. } = &prepared.kind else {
            panic!("a queue");
        };
        assert_eq!(plan.inspection.as_ref().map(|i| i.at), Some(1_500));
        // `p` is dead-lettered at 0 and the operator looks at 1.5 s.
        std::fs::write(&path, file("1500ms")).unwrap();
        let Err(NotReady::Unsupported(why)) = prepare(path.to_str().unwrap(), Target::Amqp, None)
        else {
            panic!("refused");
        };
        assert!(
            why.starts_with(
                "[[operator]] wait: message \"p\"'s dead-letter retention ends at the very instant"
            ),
            "{why}"
        );
    }

    #[test]
    fn a_file_whose_run_would_take_hours_is_refused_before_any_broker_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("long.toml");
        // A 1 s gap keeps the scale at 20 at most, so 30 days would take
        // 36 hours.
        std::fs::write(
            &path,
            "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 2\n\
             [[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\nat = \"1s\"\n\
             [[message]]\nid = \"c\"\nat = \"30d\"\n",
        )
        .unwrap();
        let Err(NotReady::Unsupported(why)) = prepare(path.to_str().unwrap(), Target::Amqp, None)
        else {
            panic!("refused");
        };
        assert!(
            why.contains("a conformance run may take at most 60 s"),
            "{why}"
        );
    }

    #[test]
    fn a_file_is_prepared_with_its_default_scale_or_refused_at_one_too_fast() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.toml");
        std::fs::write(
            &path,
            "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 2\n\
             [[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\nat = \"6s\"\n",
        )
        .unwrap();
        let path = path.to_str().unwrap();
        let p = prepare(path, Target::Amqp, None).unwrap();
        assert_eq!(p.scale, TimeScale(2), "6s in 3 s");
        let Kind::Queue { modeled, .. } = &p.kind else {
            panic!("a queue");
        };
        assert_eq!(modeled.end, 6_000);
        let Err(NotReady::Unsupported(why)) = prepare(path, Target::Amqp, Some(200)) else {
            panic!("too fast");
        };
        assert!(why.contains("use --time-scale 120 or less"), "{why}");
    }
}
