//! The comparison of two runs (`scenario-run compare`): their differences
//! are those of the two JSON reports: `totals` (by measure), `messages` (by
//! id, every field of a message's row but the envelope), `sinks` (by name)
//! and, for logs, `partitions` (by number) and `restarts` (by number), in
//! that order. Every message of both runs is compared, however many: a row
//! as the JSON report writes it is made for each message of each side, and
//! only the rows that differ are read field by field. Each side is run by
//! the application (`app::compare::side`); this reads the finished runs.
//!
//! Costs: one row of each message on each side (about a microsecond each,
//! one at a time), and at most [`DIFFERENCES_KEPT`] differences kept: the
//! counts go on.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value as Json, json};

use crate::engine::Outcome;
use crate::model::Scenario;

/// The most differences a comparison keeps; the count goes on.
pub const DIFFERENCES_KEPT: usize = 10_000;

/// One side of a comparison: a file, its `--set` values, its run, whether
/// its expectations held and the JSON report of the run (without the
/// transitions and the ledger).
pub struct Side {
    pub file: String,
    pub sets: Vec<(String, String)>,
    pub scenario: Arc<Scenario>,
    pub outcome: Arc<Outcome>,
    pub passed: bool,
    pub report: Json,
}

impl Side {
    /// The arguments that give this run, quoted for a shell: `FILE --set
    /// K=V ...`.
    pub fn label(&self) -> String {
        let mut label = crate::shell::word(&self.file);
        for (path, value) in &self.sets {
            label.push(' ');
            label.push_str(&crate::shell::set(path, value));
        }
        label
    }

    /// "passed" when every expectation of the file held, else "failed".
    pub fn status(&self) -> &'static str {
        if self.passed { "passed" } else { "failed" }
    }
}

/// The part of the reports a difference is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Totals,
    Messages,
    Sinks,
    Partitions,
    Restarts,
}

/// One value that differs: in `section`, of `item` (a measure, a message
/// id or a sink name), its `field` (none for a measure), on each side
/// (`null` where that side has no such item or field).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub section: Section,
    pub item: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub a: Json,
    pub b: Json,
}

/// What was compared: measures, messages and sinks on either side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Compared {
    pub totals: usize,
    pub messages: usize,
    /// Messages the two runs have (the compared ones are those listed).
    pub messages_a: usize,
    pub messages_b: usize,
    pub sinks: usize,
    /// Log partitions and restarts on either side.
    pub partitions: usize,
    pub restarts: usize,
    /// Messages and measures and sinks with at least one difference.
    pub totals_differing: usize,
    pub messages_differing: usize,
    pub sinks_differing: usize,
    pub partitions_differing: usize,
    pub restarts_differing: usize,
    /// Differences found (only the first [`DIFFERENCES_KEPT`] are kept).
    pub differences: usize,
}

pub struct Comparison {
    pub a: Side,
    pub b: Side,
    pub compared: Compared,
    pub differences: Vec<Difference>,
    /// The measures one side has and the other does not (a log's
    /// `max_lag` against a queue), with the side: not compared, and not
    /// counted as differences.
    pub one_sided: Vec<OneSided>,
}

/// A measure only one side of a comparison has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OneSided {
    pub measure: String,
    /// "A" or "B".
    pub side: &'static str,
}

/// Compares two runs.
pub fn compare(a: Side, b: Side) -> Comparison {
    let (compared, differences, one_sided) = differences(&a, &b);
    Comparison {
        a,
        b,
        compared,
        differences,
        one_sided,
    }
}

/// The differences of two runs: their JSON reports' `totals`, every
/// message, their `sinks` and a log's partitions and restarts; and the
/// measures only one side has.
fn differences(sa: &Side, sb: &Side) -> (Compared, Vec<Difference>, Vec<OneSided>) {
    let (a, b) = (&sa.report, &sb.report);
    let mut found = Found::default();
    // Totals: every measure both sides list, in the first side's order; a
    // measure only one side has is named, not counted as a difference.
    let (ta, tb) = (object(&a["totals"]), object(&b["totals"]));
    let measures = keys_in_order(ta.keys().map(String::as_str), tb.keys().map(String::as_str));
    let mut one_sided = Vec::new();
    let mut both = 0;
    for m in &measures {
        let only = |side| OneSided {
            measure: m.to_string(),
            side,
        };
        let (va, vb) = match (ta.get(*m), tb.get(*m)) {
            (Some(va), Some(vb)) => (va.clone(), vb.clone()),
            (Some(_), None) => {
                one_sided.push(only("A"));
                continue;
            }
            (None, _) => {
                one_sided.push(only("B"));
                continue;
            }
        };
        both += 1;
        if va != vb {
            found.totals += 1;
            found.push(Section::Totals, m, None, va, vb);
        }
    }
    // Every message, matched by id.
    let (m_count, m_differ) = found.messages(sa, sb);
    // Sinks, a log's partitions and restarts: items matched by their name
    // or number.
    let listed = |list: &Json, name: &str| -> Vec<(String, Json)> {
        list.as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|item| {
                        let key = match &item[name] {
                            Json::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (key, item.clone())
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let sinks = (listed(&a["sinks"], "name"), listed(&b["sinks"], "name"));
    let (s_count, s_differ) = found.items(Section::Sinks, &sinks.0, &sinks.1, "name");
    let (mut p_count, mut p_differ, mut r_count, mut r_differ) = (0, 0, 0, 0);
    if a["log"].is_object() && b["log"].is_object() {
        let parts = |doc: &Json| listed(&doc["log"]["partitions"], "partition");
        (p_count, p_differ) = found.items(Section::Partitions, &parts(a), &parts(b), "partition");
        let restarts = |doc: &Json| listed(&doc["log"]["restarts"], "restart");
        (r_count, r_differ) = found.items(Section::Restarts, &restarts(a), &restarts(b), "restart");
    }
    let compared = Compared {
        totals: both,
        messages: m_count,
        messages_a: a["message_count"].as_u64().unwrap_or(0) as usize,
        messages_b: b["message_count"].as_u64().unwrap_or(0) as usize,
        sinks: s_count,
        partitions: p_count,
        restarts: r_count,
        totals_differing: found.totals,
        messages_differing: m_differ,
        sinks_differing: s_differ,
        partitions_differing: p_differ,
        restarts_differing: r_differ,
        differences: found.count,
    };
    (compared, found.kept, one_sided)
}

#[derive(Default)]
struct Found {
    kept: Vec<Difference>,
    count: usize,
    totals: usize,
}

impl Found {
    fn push(&mut self, section: Section, item: &str, field: Option<&str>, a: Json, b: Json) {
        self.count += 1;
        if self.kept.len() < DIFFERENCES_KEPT {
            self.kept.push(Difference {
                section,
                item: item.to_string(),
                field: field.map(str::to_string),
                a,
                b,
            });
        }
    }

    /// Every message of both runs, matched by id (the first side's order,
    /// then the second's messages it lacks), field by field as the JSON
    /// report's rows give them, the envelope aside: (messages compared,
    /// messages with a difference). A row is made for each message and
    /// read only when it differs from its match.
    fn messages(&mut self, sa: &Side, sb: &Side) -> (usize, usize) {
        let (a, b) = (sa, sb);
        let (na, nb) = (a.outcome.messages.len(), b.outcome.messages.len());
        let row = |ran: &Side, m: usize| {
            let row = super::super::rows::MessageRow::new(
                &ran.scenario,
                &ran.outcome,
                m as crate::model::MessageIndex,
            );
            serde_json::to_string(&row).unwrap_or_default()
        };
        let id = |ran: &Side, m: usize| {
            ran.scenario
                .name_of_message(m as crate::model::MessageIndex)
                .to_string()
        };
        // B's messages by id, made only when the ids do not line up.
        let mut by_id: Option<std::collections::HashMap<String, usize>> = None;
        let mut matched = vec![false; nb];
        let (mut compared, mut differing) = (0, 0);
        for m in 0..na {
            let name = id(a, m);
            let twin = if m < nb && id(b, m) == name {
                Some(m)
            } else {
                let map = by_id.get_or_insert_with(|| (0..nb).map(|k| (id(b, k), k)).collect());
                map.get(&name).copied()
            };
            compared += 1;
            let ra = row(a, m);
            let rb = twin.map(|k| {
                matched[k] = true;
                row(b, k)
            });
            if rb.as_deref() == Some(ra.as_str()) {
                continue;
            }
            let before = self.count;
            self.row_differences(&name, &ra, rb.as_deref());
            differing += usize::from(self.count > before);
        }
        for k in (0..nb).filter(|&k| !matched[k]) {
            compared += 1;
            let before = self.count;
            self.row_differences_b(&id(b, k), &row(b, k));
            differing += usize::from(self.count > before);
        }
        (compared, differing)
    }

    /// The differences of message `name`'s rows (`b`: none when B lacks
    /// it, when every field differs from nothing).
    fn row_differences(&mut self, name: &str, a: &str, b: Option<&str>) {
        let parse = |s: &str| serde_json::from_str::<Json>(s).unwrap_or(Json::Null);
        let (ja, jb) = (parse(a), b.map(parse));
        let items_a = [(name.to_string(), ja)];
        let items_b: Vec<(String, Json)> = jb.map(|j| (name.to_string(), j)).into_iter().collect();
        self.items(Section::Messages, &items_a, &items_b, "id");
    }

    /// A message only B has: every field differs from nothing.
    fn row_differences_b(&mut self, name: &str, b: &str) {
        let jb = serde_json::from_str::<Json>(b).unwrap_or(Json::Null);
        self.items(Section::Messages, &[], &[(name.to_string(), jb)], "id");
    }

    /// Compares lists of named items (the first side's order, then the
    /// second's items it lacks), field by field, the envelope and the
    /// naming field `key` aside: (items compared, items with a
    /// difference).
    fn items(
        &mut self,
        section: Section,
        a: &[(String, Json)],
        b: &[(String, Json)],
        key: &str,
    ) -> (usize, usize) {
        let by_name_b: BTreeMap<&str, &Json> = b.iter().map(|(n, v)| (n.as_str(), v)).collect();
        let by_name_a: BTreeMap<&str, &Json> = a.iter().map(|(n, v)| (n.as_str(), v)).collect();
        let names = keys_in_order(
            a.iter().map(|(n, _)| n.as_str()),
            b.iter().map(|(n, _)| n.as_str()),
        );
        let mut differing = 0;
        for name in &names {
            let (ia, ib) = (by_name_a.get(name), by_name_b.get(name));
            let (oa, ob) = (
                ia.map(|v| object(v)).unwrap_or_default(),
                ib.map(|v| object(v)).unwrap_or_default(),
            );
            let fields =
                keys_in_order(oa.keys().map(String::as_str), ob.keys().map(String::as_str));
            let before = self.count;
            // An item both sides list is compared on the fields both give
            // it (a message's `partition` is a log's alone); an item one
            // side lacks differs in every field.
            let listed_by_both = ia.is_some() && ib.is_some();
            for f in fields
                .iter()
                .filter(|f| **f != key && **f != "envelope")
                .filter(|f| !listed_by_both || (oa.contains_key(**f) && ob.contains_key(**f)))
            {
                let (va, vb) = (value(oa.get(*f)), value(ob.get(*f)));
                if va != vb {
                    self.push(section, name, Some(f), va, vb);
                }
            }
            differing += usize::from(self.count > before);
        }
        (names.len(), differing)
    }
}

fn object(v: &Json) -> serde_json::Map<String, Json> {
    v.as_object().cloned().unwrap_or_default()
}

fn value(v: Option<&Json>) -> Json {
    v.cloned().unwrap_or(Json::Null)
}

/// The names of `a` in order, then those of `b` that `a` lacks.
fn keys_in_order<'k>(
    a: impl Iterator<Item = &'k str>,
    b: impl Iterator<Item = &'k str>,
) -> Vec<&'k str> {
    let mut seen = std::collections::BTreeSet::new();
    a.chain(b).filter(|k| seen.insert(*k)).collect()
}

impl Comparison {
    /// The comparison as `--format json` writes it.
    pub fn json(&self) -> Json {
        let side = |s: &Side| {
            json!({
                "file": s.file,
                "sets": s.sets.iter().map(|(p, v)| format!("{p}={v}")).collect::<Vec<_>>(),
                "name": s.scenario.name,
                "seed": s.scenario.seed,
                "status": s.status(),
            })
        };
        json!({
            "format_version": super::super::json::REPORT_FORMAT_VERSION,
            "a": side(&self.a),
            "b": side(&self.b),
            "compared": self.compared,
            "differences": self.differences,
            "one_sided": self.one_sided,
        })
    }
}
