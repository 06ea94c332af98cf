//! What the HTML report keeps for the reader's browser: a hash of the
//! scenario file (baselines are stored per file version, so an edited file
//! never compares with a stale one) and the JSON report itself, compressed,
//! for "Export run".

use std::io::Write;

use base64::Engine as _;
use serde_json::{Value as Json, json};

use crate::report::document::Document;

/// FNV-1a, 64 bits: stable across platforms and releases, which is all a
/// storage key needs (no security rests on it).
pub fn file_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// What `write` writes, as gzip in base64: the retry storm's 1,134 KB
/// JSON report (scenario 22) becomes 72 KB of page; the browser unpacks
/// it with `DecompressionStream`.
/// The text goes straight into the compressor, never whole in memory.
/// The fastest level: the lab makes a page at every rerun, and the
/// default level took 15% of the retry storm's page (scenario 22) to
/// make its packed run 20% smaller (1,134 KB of JSON: 54 KB gzipped at
/// level 1, 43 KB at level 6).
pub fn packed(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> String {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = write(&mut gz);
    let bytes = gz.finish().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The `page` the HTML template receives.
pub fn page(file_text: &str, report: &Document) -> Json {
    json!({ "hash": file_hash(file_text), "run_gz": packed(|w| report.write_json(w)) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_hash_is_fnv1a_and_tells_files_apart() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(file_hash(""), "cbf29ce484222325");
        assert_eq!(file_hash("a"), "af63dc4c8601ec8c");
        assert_ne!(file_hash("seed = 1\n"), file_hash("seed = 2\n"));
    }

    #[test]
    fn the_packed_report_unpacks_to_the_same_bytes() {
        let text = "{\n  \"name\": \"x\"\n}\n".repeat(50);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(packed(|w| w.write_all(text.as_bytes())))
            .unwrap();
        let mut out = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, text);
        assert!(bytes.len() < text.len() / 10);
    }
}
