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
pub mod modeled;
pub mod plan;
pub mod store;

#[cfg(feature = "conform")]
pub mod amqp;
#[cfg(feature = "conform")]
pub mod redis;

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
}

impl Target {
    /// The target of `url`, or why there is none.
    pub fn of(url: &str) -> Result<Target, LiveError> {
        if url.starts_with("amqp://") {
            Ok(Target::Amqp)
        } else if url.starts_with("redis://") {
            Ok(Target::Redis)
        } else {
            Err(LiveError::Scheme(url.to_string()))
        }
    }
}

/// Why a live run could not happen (exit code 2).
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
                "{url}: conform drives RabbitMQ (amqp://) and a Redis write-intent store \
                 (redis://); nats:// is not built yet"
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
}

impl Checked {
    pub fn conforms(&self) -> bool {
        self.differences.is_empty()
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
        Target::Amqp => {
            let plan = plan::amqp(&scenario).map_err(unsupported)?;
            let modeled = modeled::modeled(&scenario, &plan).map_err(NotReady::Unsupported)?;
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

/// Compares a live run's messages with the model's, the broker's
/// measured `latency` (real ms) widening every timing tolerance by twice
/// itself.
pub fn checked(
    prepared: &Prepared,
    broker: Vec<Message>,
    elapsed_ms: f64,
    latency: f64,
) -> Checked {
    let model = match &prepared.kind {
        Kind::Queue { modeled, .. } => modeled.scaled(prepared.scale),
        Kind::Store(_) => Vec::new(),
    };
    let differences = compare::compare(&model, &broker, 2.0 * latency);
    Checked {
        file: prepared.file.clone(),
        name: prepared.name.clone(),
        time_scale: prepared.scale,
        elapsed_ms,
        model,
        broker,
        store: Vec::new(),
        differences,
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
        let mut broker = match target {
            Target::Amqp => {
                let mut broker = amqp::broker(url).await?;
                broker.latency_ms = amqp::latency(url).await?;
                broker.notes.push(format!(
                    "times are compared within max(20 ms, 5% of the time) + 10 ms + twice the \
                     latency ({:.0} ms)",
                    2.0 * broker.latency_ms
                ));
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
            let began = std::time::Instant::now();
            let elapsed = |began: std::time::Instant| began.elapsed().as_secs_f64() * 1000.0;
            match &p.kind {
                Kind::Queue { plan, modeled } => {
                    let end = p.scale.real(modeled.end);
                    let messages = amqp::run(url, plan, p.scale, end).await?;
                    out.push(checked(p, messages, elapsed(began), broker.latency_ms));
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

/// The status lines of a conformance run, and each difference under its
/// file: plain text, fixed width, no colour.
pub fn render(broker: &Broker, url: &str, checked: &[Checked]) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "conform: {} {} at {url} (latency {:.0} ms)\n",
        broker.name, broker.version, broker.latency_ms,
    );
    for note in &broker.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    for c in checked {
        let deliveries: usize = c.broker.iter().map(|m| m.deliveries.len()).sum();
        let counted = if c.store.is_empty() {
            format!("{deliveries} deliveries")
        } else {
            format!("{} store consultations", c.store.len())
        };
        let _ = writeln!(
            out,
            "{:<9} {}  ({counted}, time scale 1:{}, {:.2} s)",
            if c.conforms() { "CONFORMS" } else { "DIFFERS" },
            c.file,
            c.time_scale.0,
            c.elapsed_ms / 1000.0,
        );
        for d in &c.differences {
            let _ = writeln!(
                out,
                "  message {:?}, {}: model {}, broker {}\n    rule: {}",
                d.message, d.what, d.model, d.broker, d.rule
            );
        }
    }
    let differ = checked.iter().filter(|c| !c.conforms()).count();
    let _ = writeln!(out, "{} conform, {} differ", checked.len() - differ, differ);
    out
}

/// The JSON document of a conformance run.
pub fn json(broker: &Broker, url: &str, checked: &[Checked]) -> String {
    let mut text =
        serde_json::to_string_pretty(&document(broker, url, checked)).unwrap_or_default();
    text.push('\n');
    text
}

/// What `--format json` writes and the HTML page reads.
pub fn document(broker: &Broker, url: &str, checked: &[Checked]) -> serde_json::Value {
    serde_json::json!({
        "broker": {
            "url": url,
            "name": broker.name,
            "version": broker.version,
            "latency_ms": (broker.latency_ms * 1000.0).round() / 1000.0,
            "notes": broker.notes,
        },
        "files": checked.iter().map(|c| serde_json::json!({
            "file": c.file,
            "name": c.name,
            "status": if c.conforms() { "conforms" } else { "differs" },
            "time_scale": c.time_scale.0,
            "elapsed_ms": (c.elapsed_ms * 1000.0).round() / 1000.0,
            "messages": c.model.iter().map(|m| serde_json::json!({
                "id": m.id,
                "model": m,
                "broker": c.broker.iter().find(|b| b.id == m.id),
            })).collect::<Vec<_>>(),
            "store": c.store.iter().map(|r| serde_json::json!({
                "message": r.message,
                "delivery": r.delivery,
                "key": r.key,
                "at_ms": c.time_scale.real(r.at),
                "model": r.model,
                "redis": r.redis,
            })).collect::<Vec<_>>(),
            "differences": c.differences,
        })).collect::<Vec<_>>(),
    })
}

/// The HTML page of a conformance run (`templates/conformance.html.j2`).
pub fn html(
    templates: &crate::report::templates::Templates,
    document: &serde_json::Value,
) -> Result<String, Box<crate::diagnostic::Problem>> {
    templates.render(
        crate::report::templates::CONFORMANCE_HTML,
        minijinja::context! { conformance => minijinja::Value::from(minijinja::value::Serde(document)) },
    )
}

/// A file's testcases: one per message (a store run: per consultation,
/// `MESSAGE delivery N`), each with its differences.
fn cases(c: &Checked) -> Vec<(String, Vec<&Difference>)> {
    let mut cases: Vec<(String, Vec<&Difference>)> = Vec::new();
    if c.store.is_empty() {
        for m in &c.model {
            let ds = c.differences.iter().filter(|d| d.message == m.id).collect();
            cases.push((m.id.clone(), ds));
        }
    } else {
        for r in &c.store {
            let prefix = format!("delivery {} at ", r.delivery);
            let ds = c
                .differences
                .iter()
                .filter(|d| d.message == r.message && d.what.starts_with(&prefix))
                .collect();
            cases.push((format!("{} delivery {}", r.message, r.delivery), ds));
        }
    }
    cases
}

/// The JUnit XML of a conformance run: a testsuite per file, a testcase
/// per message (or per store consultation), failed by its differences.
pub fn junit(broker: &Broker, checked: &[Checked]) -> String {
    use crate::report::junit_xml::escape;
    use std::fmt::Write;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let all: Vec<_> = checked.iter().map(|c| (c, cases(c))).collect();
    let tests: usize = all.iter().map(|(_, c)| c.len()).sum();
    let failures: usize = all
        .iter()
        .map(|(_, c)| c.iter().filter(|(_, d)| !d.is_empty()).count())
        .sum();
    let _ = writeln!(
        out,
        "<testsuites name=\"conformance against {} {}\" tests=\"{tests}\" failures=\"{failures}\">",
        escape(&broker.name),
        escape(&broker.version)
    );
    for (c, cases) in &all {
        let failed = cases.iter().filter(|(_, d)| !d.is_empty()).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" file=\"{}\" tests=\"{}\" failures=\"{failed}\">",
            escape(&c.name),
            escape(&c.file),
            cases.len()
        );
        for (name, differences) in cases {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\"",
                escape(name),
                escape(&c.file)
            );
            if differences.is_empty() {
                out.push_str("/>\n");
                continue;
            }
            let text: Vec<String> = differences
                .iter()
                .map(|d| {
                    format!(
                        "{}: model {}, broker {}\n  rule: {}",
                        d.what, d.model, d.broker, d.rule
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                escape(text[0].lines().next().unwrap_or_default()),
                escape(&text.join("\n"))
            );
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use compare::{Delivery, End};
    use plan::Action;

    fn sample() -> (Broker, Vec<Checked>) {
        let delivery = |at, delivery_count, action| Delivery {
            at,
            delivery_count,
            action,
        };
        let poison = |n: usize| Message {
            id: "poison".into(),
            deliveries: (0..n)
                .map(|k| delivery(k as f64, k as u64, Action::Requeue))
                .collect(),
            end: End::Dropped,
            end_at: None,
        };
        let ok = Message {
            id: "ok".into(),
            deliveries: vec![delivery(0.0, 0, Action::Ack)],
            end: End::Acked,
            end_at: Some(0.0),
        };
        let check = |file: &str, model: usize, broker: usize| {
            let model = vec![poison(model), ok.clone()];
            let broker = vec![poison(broker), ok.clone()];
            Checked {
                file: file.into(),
                name: "n".into(),
                time_scale: TimeScale(1),
                elapsed_ms: 412.0,
                differences: compare::compare(&model, &broker, 0.0),
                model,
                broker,
                store: Vec::new(),
            }
        };
        (
            Broker {
                name: "RabbitMQ".into(),
                version: "3.10.8".into(),
                latency_ms: 4.0,
                notes: vec!["a note the probe found".into()],
            },
            vec![check("a.toml", 6, 6), check("b.toml", 5, 6)],
        )
    }

    #[test]
    fn the_status_lines_name_each_file_and_each_difference_its_rule() {
        let (broker, checked) = sample();
        insta::assert_snapshot!(render(&broker, "amqp://127.0.0.1:5672", &checked));
    }

    #[test]
    fn the_json_document_puts_the_model_next_to_the_broker_per_message() {
        let (broker, checked) = sample();
        let doc: serde_json::Value =
            serde_json::from_str(&json(&broker, "amqp://127.0.0.1:5672", &checked)).unwrap();
        assert_eq!(doc["broker"]["version"], "3.10.8");
        assert_eq!(doc["files"][1]["status"], "differs");
        let poison = &doc["files"][1]["messages"][0];
        assert_eq!(poison["model"]["deliveries"].as_array().unwrap().len(), 5);
        assert_eq!(poison["broker"]["deliveries"].as_array().unwrap().len(), 6);
        assert_eq!(poison["broker"]["end"]["state"], "dropped");
        assert_eq!(doc["files"][1]["differences"][0]["what"], "deliveries");
    }

    #[test]
    fn the_junit_file_has_a_case_per_message_failed_by_its_differences() {
        let (broker, checked) = sample();
        let xml = junit(&broker, &checked);
        let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(root.attribute("tests"), Some("4"));
        assert_eq!(root.attribute("failures"), Some("1"));
        let failure = doc
            .descendants()
            .find(|n| n.has_tag_name("failure"))
            .expect("a failure");
        let case = failure.parent().unwrap();
        assert_eq!(case.attribute("name"), Some("poison"));
        assert_eq!(case.attribute("classname"), Some("b.toml"));
        assert!(
            failure
                .text()
                .unwrap()
                .contains("deliveries: model 5, broker 6")
        );
    }

    #[test]
    fn the_html_page_marks_the_message_that_differs_and_shows_both_sides() {
        let (broker, checked) = sample();
        let templates = crate::report::templates::Templates::load(None).unwrap();
        let page = html(
            &templates,
            &document(&broker, "amqp://127.0.0.1:5672", &checked),
        )
        .unwrap();
        assert!(
            page.contains("<title>Conformance against RabbitMQ 3.10.8"),
            "{page}"
        );
        assert!(page.contains("1 of 2 files conform."), "{page}");
        assert!(
            page.contains("<span class=\"differs\">DIFFERS</span>"),
            "{page}"
        );
        assert_eq!(page.matches("<tr class=\"differs\">").count(), 1, "{page}");
        assert!(page.contains("<td class=\"num\">5 / 6</td>"), "{page}");
        assert!(page.contains("Note: a note the probe found"), "{page}");
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
