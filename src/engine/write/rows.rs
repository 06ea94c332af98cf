//! Versioned sinks (docs/model.md section 28.9): an upsert that holds, per
//! row, a value, a version and the intent that wrote it. A write older
//! than its row is stale: it overwrites the row (last writer wins,
//! counted) or is rejected (the row keeps its contents; the call still
//! succeeds). A run keeps one entry per row written, and the row names
//! once for every sink.

use rustc_hash::FxHashMap as HashMap;

use crate::model::{IntentIndex, StaleWrites};

/// A row's number among the rows the run has written (its name interned).
pub(in crate::engine) type RowId = u32;

/// What one write writes in every versioned sink: its row, version and
/// value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine) struct RowWrite {
    pub(in crate::engine) row: RowId,
    pub(in crate::engine) version: u64,
    pub(in crate::engine) value: i64,
}

/// The names of the rows written, each once.
#[derive(Clone, Default)]
pub(super) struct RowNames {
    ids: HashMap<Box<str>, RowId>,
    names: Vec<Box<str>>,
}

impl RowNames {
    /// `name`'s number, given on its first use.
    pub(super) fn id(&mut self, name: &str) -> RowId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as RowId;
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    pub(super) fn name(&self, id: RowId) -> &str {
        &self.names[id as usize]
    }
}

/// One row of a versioned sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub value: i64,
    pub version: u64,
    /// The intent whose write the row holds.
    pub intent: IntentIndex,
    /// Stale writes on this row: applied over a newer version, or
    /// rejected.
    pub stale: u32,
}

/// What a write did to a versioned row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Applied {
    /// No row, or a version at least the row's: the row takes it.
    Fresh,
    /// Older than the row (`held`) and written over it.
    StaleOverwrite { held: u64 },
    /// Older than the row and rejected: nothing changed.
    StaleRejected,
}

/// What a versioned sink holds at the end of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionedRowsAtEnd {
    pub stale_overwrites: u64,
    pub stale_rejections: u64,
    /// Rows the sink holds.
    pub rows_held: u64,
    /// By name: the first [`crate::model::ROWS_LISTED`] rows, and any other
    /// row an expectation names (the run keeps no more than that).
    pub rows: Vec<(String, Row)>,
}

impl VersionedRowsAtEnd {
    /// The row named `name`, if the sink has it.
    pub fn row(&self, name: &str) -> Option<&Row> {
        let i = (self.rows.binary_search_by(|(n, _)| n.as_str().cmp(name))).ok()?;
        Some(&self.rows[i].1)
    }
}

/// A versioned sink's rows and stale writes.
#[derive(Clone)]
pub(super) struct VersionedSink {
    stale_writes: StaleWrites,
    rows: HashMap<RowId, Row>,
    pub(super) stale_overwrites: u64,
    pub(super) stale_rejections: u64,
}

impl VersionedSink {
    pub(super) fn new(stale_writes: StaleWrites) -> Self {
        VersionedSink {
            stale_writes,
            rows: HashMap::default(),
            stale_overwrites: 0,
            stale_rejections: 0,
        }
    }

    /// `intent`'s write `w` is applied: the row takes it unless it is
    /// older than the row and stale writes are rejected.
    pub(super) fn apply(&mut self, w: RowWrite, intent: IntentIndex) -> Applied {
        let taken = Row {
            value: w.value,
            version: w.version,
            intent,
            stale: 0,
        };
        let Some(row) = self.rows.get_mut(&w.row) else {
            self.rows.insert(w.row, taken);
            return Applied::Fresh;
        };
        if w.version >= row.version {
            *row = Row {
                stale: row.stale,
                ..taken
            };
            return Applied::Fresh;
        }
        row.stale = row.stale.saturating_add(1);
        match self.stale_writes {
            StaleWrites::Overwrite => {
                let held = row.version;
                *row = Row {
                    stale: row.stale,
                    ..taken
                };
                self.stale_overwrites += 1;
                Applied::StaleOverwrite { held }
            }
            StaleWrites::Reject => {
                self.stale_rejections += 1;
                Applied::StaleRejected
            }
        }
    }

    /// A compensation of `intent`'s write of `row`: the row is deleted if
    /// it holds that intent's write.
    pub(super) fn delete(&mut self, row: RowId, intent: IntentIndex) {
        if self.rows.get(&row).is_some_and(|r| r.intent == intent) {
            self.rows.remove(&row);
        }
    }

    /// `[rows, rows less their distinct owners, the most rows of one
    /// intent]`.
    pub(super) fn counts(&self) -> [i64; 3] {
        let mut owned: HashMap<IntentIndex, i64> = HashMap::default();
        for row in self.rows.values() {
            *owned.entry(row.intent).or_insert(0) += 1;
        }
        let rows = self.rows.len() as i64;
        let most = owned.values().copied().max().unwrap_or(0);
        [rows, rows - owned.len() as i64, most]
    }

    /// What it holds at the end: its first `listed` rows by name, and
    /// those of `wanted` it holds.
    pub(super) fn at_end(
        &self,
        names: &RowNames,
        listed: usize,
        wanted: &[&str],
    ) -> VersionedRowsAtEnd {
        let mut all: Vec<(&str, Row)> = (self.rows.iter())
            .map(|(&id, &row)| (names.name(id), row))
            .collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let rows = (all.iter().enumerate())
            .filter(|(i, (name, _))| *i < listed || wanted.contains(name))
            .map(|(_, &(name, row))| (name.to_string(), row))
            .collect();
        VersionedRowsAtEnd {
            stale_overwrites: self.stale_overwrites,
            stale_rejections: self.stale_rejections,
            rows_held: all.len() as u64,
            rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(row: RowId, version: u64, value: i64) -> RowWrite {
        RowWrite {
            row,
            version,
            value,
        }
    }

    #[test]
    fn an_older_version_overwrites_or_is_rejected_and_an_equal_one_is_not_stale() {
        for stale_writes in [StaleWrites::Overwrite, StaleWrites::Reject] {
            let mut sink = VersionedSink::new(stale_writes);
            assert_eq!(sink.apply(w(0, 5, 150), 1), Applied::Fresh);
            assert_eq!(
                sink.apply(w(0, 5, 151), 2),
                Applied::Fresh,
                "equal: not stale"
            );
            let held = sink.rows[&0];
            assert_eq!((held.value, held.intent), (151, 2));
            let applied = sink.apply(w(0, 2, 120), 3);
            let row = sink.rows[&0];
            match stale_writes {
                StaleWrites::Overwrite => {
                    assert_eq!(applied, Applied::StaleOverwrite { held: 5 });
                    assert_eq!((row.value, row.version, row.intent), (120, 2, 3));
                    assert_eq!((sink.stale_overwrites, sink.stale_rejections), (1, 0));
                }
                StaleWrites::Reject => {
                    assert_eq!(applied, Applied::StaleRejected);
                    assert_eq!((row.value, row.version, row.intent), (151, 5, 2));
                    assert_eq!((sink.stale_overwrites, sink.stale_rejections), (0, 1));
                }
            }
            assert_eq!(row.stale, 1);
        }
    }

    #[test]
    fn the_end_keeps_the_first_rows_by_name_and_those_asked_for() {
        let mut names = RowNames::default();
        let mut sink = VersionedSink::new(StaleWrites::Overwrite);
        for name in ["d", "b", "a", "c"] {
            let row = names.id(name);
            sink.apply(w(row, 1, 1), 0);
        }
        let end = sink.at_end(&names, 2, &["d"]);
        let kept: Vec<&str> = end.rows.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(kept, ["a", "b", "d"]);
        assert_eq!(end.rows_held, 4);
        assert!(end.row("d").is_some() && end.row("c").is_none());
    }

    #[test]
    fn a_compensation_deletes_only_the_row_its_write_holds() {
        let mut sink = VersionedSink::new(StaleWrites::Overwrite);
        sink.apply(w(0, 1, 10), 1);
        sink.apply(w(0, 2, 20), 2);
        sink.apply(w(1, 1, 10), 2);
        sink.delete(0, 1);
        assert_eq!(sink.counts(), [2, 1, 2], "intent 2 holds both rows");
        sink.delete(0, 2);
        assert_eq!(sink.counts(), [1, 0, 1]);
    }
}
