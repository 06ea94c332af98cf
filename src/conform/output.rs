//! What a conformance run writes: the status lines, the JSON document,
//! the HTML page and the JUnit file.

use super::compare::Difference;
use super::{Broker, Checked};
use crate::diagnostic::Located;
use crate::report::junit_xml::{self, Case, Suite};

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
        let Some(why) = c.diagnosis(&broker.version) else {
            continue;
        };
        let _ = writeln!(
            out,
            "  first cause, {}: {}\n    rule: {}",
            why.cause.words(),
            why.what,
            why.rule
        );
        if let Some(key) = &why.key {
            let _ = writeln!(out, "    {key}");
        }
        if !why.following.is_empty() {
            let _ = writeln!(out, "  following from it:");
        }
        for &i in &why.following {
            let d = &c.differences[i];
            let _ = writeln!(
                out,
                "    message {:?}, {}: model {}, broker {}",
                d.message, d.what, d.model, d.broker
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
            "first_cause": c.diagnosis(&broker.version),
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
/// `MESSAGE delivery N`), each failed by its differences.
fn cases(c: &Checked) -> Vec<Case> {
    let case = |name: String, differences: Vec<&Difference>| Case {
        name,
        line: None,
        failure: failure(&c.file, &differences),
    };
    if c.store.is_empty() {
        c.model
            .iter()
            .map(|m| {
                let ds = c.differences.iter().filter(|d| d.message == m.id).collect();
                case(m.id.clone(), ds)
            })
            .collect()
    } else {
        c.store
            .iter()
            .map(|r| {
                let ds = c
                    .differences
                    .iter()
                    .filter(|d| d.message == r.message && d.delivery == Some(r.delivery))
                    .collect();
                case(format!("{} delivery {}", r.message, r.delivery), ds)
            })
            .collect()
    }
}

/// A testcase's failure: its first difference as the message, the rule as
/// the help, every difference in the text.
fn failure(file: &str, differences: &[&Difference]) -> Option<Located> {
    let first = differences.first()?;
    let line = |d: &Difference| format!("{}: model {}, broker {}", d.what, d.model, d.broker);
    let text: Vec<String> = differences
        .iter()
        .map(|d| format!("{}\n  rule: {}", line(d), d.rule))
        .collect();
    Some(Located {
        file: file.to_string(),
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        message: line(first),
        label: None,
        help: Some(first.rule.clone()),
        text: text.join("\n"),
    })
}

/// The JUnit XML of a conformance run (the batch's writer): a testsuite
/// per file, a testcase per message (or per store consultation), failed
/// by its differences.
pub fn junit(checked: &[Checked]) -> String {
    let cases: Vec<Vec<Case>> = checked.iter().map(cases).collect();
    let suites: Vec<Suite> = checked
        .iter()
        .zip(&cases)
        .map(|(c, cases)| Suite {
            name: &c.name,
            file: &c.file,
            cases: cases.iter().collect(),
        })
        .collect();
    junit_xml::document(&suites)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conform::compare::{self, Delivery, End, Message, TimeScale};
    use crate::conform::plan::Action;

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
            publish_lag: None,
            x_death_count: None,
        };
        let ok = Message {
            id: "ok".into(),
            deliveries: vec![delivery(0.0, 0, Action::Ack)],
            end: End::Acked,
            end_at: Some(0.0),
            publish_lag: None,
            x_death_count: None,
        };
        let check = |file: &str, model: usize, broker: usize| {
            let model = vec![poison(model), ok.clone()];
            let broker = vec![poison(broker), ok.clone()];
            Checked {
                file: file.into(),
                name: "n".into(),
                time_scale: TimeScale(1),
                elapsed_ms: 412.0,
                differences: compare::compare(&model, &broker, 0.0, compare::Rules::Quorum),
                model,
                broker,
                store: Vec::new(),
                settings: Default::default(),
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
        let (_, checked) = sample();
        let xml = junit(&checked);
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
    fn a_store_runs_junit_fails_the_consultation_its_difference_names() {
        use crate::conform::store::{self, Answer, Row};
        let row = |delivery, at, redis| Row {
            message: "pay".into(),
            delivery,
            key: "pay".into(),
            at,
            model: Answer::Contention,
            redis: Some(redis),
        };
        let rows = vec![row(1, 0, Answer::Contention), row(2, 100, Answer::Claimed)];
        let checked = Checked {
            file: "s.toml".into(),
            name: "n".into(),
            time_scale: TimeScale(1),
            elapsed_ms: 1.0,
            model: Vec::new(),
            broker: Vec::new(),
            differences: store::compare(&rows, TimeScale(1)),
            store: rows,
            settings: Default::default(),
        };
        let xml = junit(std::slice::from_ref(&checked));
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let failed: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("failure"))
            .map(|n| n.parent().unwrap().attribute("name").unwrap())
            .collect();
        assert_eq!(failed, ["pay delivery 2"], "{xml}");
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
}
