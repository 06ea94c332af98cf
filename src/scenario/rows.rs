//! `row`, `version` and `value` of the messages and traffic blocks, read
//! for versioned sinks (docs/model.md section 28.9), and refused in a file
//! without one.

use super::file::{self, S};
use super::problems::{MAX_ID, Problems};
use crate::model::{RowWrite, VersionedRows};

/// The rows, versions and values the file gives, when some sink is
/// `versioned`; each of them refused otherwise.
pub(super) fn rows(
    problems: &mut Problems,
    messages: &[S<file::Message>],
    traffic: &[S<file::Traffic>],
    sinks: &[S<file::SinkTable>],
) -> Option<VersionedRows> {
    let versioned =
        (sinks.iter()).any(|s| (s.get_ref().versioned.as_ref()).is_some_and(|v| *v.get_ref()));
    if !versioned {
        let written = messages.iter().flat_map(|m| {
            let m = m.get_ref();
            [
                m.row.as_ref().map(|r| ("row", r.span())),
                m.version.as_ref().map(|v| ("version", v.span())),
                m.value.as_ref().map(|v| ("value", v.span())),
            ]
        });
        let blocks = (traffic.iter()).map(|t| t.get_ref().row.as_ref().map(|r| ("row", r.span())));
        for (key, span) in written.chain(blocks).flatten() {
            problems.error_help(
                Some(span),
                format!("`{key}` goes with a versioned sink"),
                "no sink is versioned",
                "only a versioned upsert holds a row's value and version: add versioned = true to an upsert [[sink]], or remove it",
            );
        }
        return None;
    }
    let messages = (messages.iter())
        .map(|m| {
            let m = m.get_ref();
            RowWrite {
                row: m.row.as_ref().and_then(|r| row(problems, r)),
                version: (m.version.as_ref())
                    .and_then(|v| problems.count(v, "version", 0, i64::MAX)),
                value: m.value.as_ref().map(|v| *v.get_ref()),
            }
        })
        .collect();
    let blocks = (traffic.iter())
        .map(|t| t.get_ref().row.as_ref().and_then(|r| row(problems, r)))
        .collect();
    Some(VersionedRows { messages, blocks })
}

/// A row's name: plain text, not empty.
fn row(problems: &mut Problems, raw: &S<String>) -> Option<String> {
    if raw.get_ref().is_empty() {
        problems.error(raw.span(), "a row cannot be empty", "empty row");
        return None;
    }
    let before = problems.list.len();
    problems.plain_spanned(raw, "a row", MAX_ID);
    (problems.list.len() == before).then(|| raw.get_ref().clone())
}
