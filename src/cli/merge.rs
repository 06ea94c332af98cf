//! `scenario-run merge OUT_DIR SHARD_JSON...`: the shards of a batch
//! combined, printed and judged as the unsharded run would be.

use super::Format;
use super::print;
use crate::app::Exit;
use crate::app::entry::Record;
use crate::app::merge::{MergeError, MergeRequest};

/// `merge OUT_DIR SHARD_JSON...`: writes the merged index files and JUnit,
/// prints the batch as a run would, and exits as the unsharded run would.
pub(super) fn merge(request: &MergeRequest, format: Format, quiet: bool, color: bool) -> Exit {
    let merged = match crate::app::merge::merge(request) {
        Ok(m) => m,
        Err(e) => {
            match &e {
                // Located problems say "error" themselves.
                MergeError::Templates(problems) => eprintln!("{}", problems.trim_end()),
                e => eprintln!("error: {}", e.to_string().trim_end()),
            }
            return e.exit();
        }
    };
    let record = &merged.record;
    let text = match format {
        Format::Human => {
            if !quiet {
                eprintln!(
                    "merge: wrote {} files to {}",
                    merged.written.len(),
                    request.out_dir.display()
                );
            }
            print::record_human(record, quiet, color)
        }
        Format::Github => print::batch_github(record, quiet),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(record).unwrap_or_default()
        ),
    };
    print::emit(&text);
    record_code(record)
}

/// The exit code of a batch: the most serious of its files' endings (an
/// invalid file, a run stopped at a limit, a failed expectation or golden
/// comparison), or an I/O error when a golden file could not be used
/// (read or written).
pub(super) fn record_code(record: &Record) -> Exit {
    let golden_error = record
        .scenarios
        .iter()
        .any(|e| e.golden.as_ref().is_some_and(|g| g.status == "error"));
    let files = record.scenarios.iter().map(|e| match e.status.as_str() {
        "invalid" => Exit::Invalid,
        "stopped" => Exit::Stopped,
        "passed" => Exit::Passed,
        _ => Exit::Failed,
    });
    let worst = files.max().unwrap_or_default();
    if golden_error {
        worst.max(Exit::Io)
    } else {
        worst
    }
}
