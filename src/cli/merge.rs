//! `scenario-run merge OUT_DIR SHARD_JSON...`: the shards of a batch
//! combined, printed and judged as the unsharded run would be.

use super::print;
use super::{EXIT_FAILED, EXIT_INVALID, EXIT_PASSED, Format};
use crate::app::entry::Record;
use crate::app::merge::MergeRequest;

/// `merge OUT_DIR SHARD_JSON...`: writes the merged index files and JUnit,
/// prints the batch as a run would, and exits as the unsharded run would.
pub(super) fn merge(request: &MergeRequest, format: Format, quiet: bool, color: bool) -> u8 {
    let merged = match crate::app::merge::merge(request) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {}", e.trim_end());
            return EXIT_INVALID;
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

/// The exit code of a batch: 2 when a file was invalid or stopped at a
/// limit or its golden file could not be used (read or written), 1 when
/// an expectation or golden comparison failed, else 0.
pub(super) fn record_code(record: &Record) -> u8 {
    let golden_error = record
        .scenarios
        .iter()
        .any(|e| e.golden.as_ref().is_some_and(|g| g.status == "error"));
    if record.errors > 0 || golden_error {
        EXIT_INVALID
    } else if record.passed < record.scenarios.len() {
        EXIT_FAILED
    } else {
        EXIT_PASSED
    }
}
