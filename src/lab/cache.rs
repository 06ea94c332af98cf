//! The pages the lab keeps, and those it is making: a page is made once
//! for its request and the file's text, on a thread of its own, at most
//! [`MAX_RERUNS`] at once, and kept (at most [`CACHED_PAGES`] pages and
//! [`CACHED_BYTES`] bytes) for the next request.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// At most this many rendered pages are kept for a repeated request.
pub const CACHED_PAGES: usize = 32;
/// ...and at most this many bytes of them in all.
pub const CACHED_BYTES: usize = 256 << 20;
/// Pages made at once (each its own run, on a thread of its own): one
/// more is answered 503. A run past its budget goes on after its request
/// is answered, so without a bound a client asking for ever new values
/// would start ever more runs.
pub const MAX_RERUNS: usize = 4;
/// How long a request waits for its rerun: past it, the client is told
/// the run is still going (503, `Retry-After`), and the page is kept when
/// it is done, for the next request.
pub const RERUN_BUDGET: Duration = Duration::from_secs(20);

/// The pages kept and being made, and how long a request waits for one.
pub(super) struct Pages {
    kept: Mutex<VecDeque<(String, Arc<Vec<u8>>)>>,
    /// The keys of the pages being made.
    making: Mutex<BTreeSet<String>>,
    /// How long a request waits for its page ([`RERUN_BUDGET`]).
    pub(super) budget: Duration,
}

/// Whether a page may be made now.
pub(super) enum Start {
    Started,
    /// It is being made already, for another request.
    Making,
    /// [`MAX_RERUNS`] pages are being made.
    Full,
}

impl Pages {
    pub(super) fn new() -> Pages {
        Pages {
            kept: Mutex::new(VecDeque::new()),
            making: Mutex::new(BTreeSet::new()),
            budget: RERUN_BUDGET,
        }
    }

    /// The page kept for `key`.
    pub(super) fn kept(&self, key: &str) -> Option<Arc<Vec<u8>>> {
        let kept = self.kept.lock().ok()?;
        kept.iter().find(|(k, _)| k == key).map(|(_, b)| b.clone())
    }

    /// Keeps a page, the oldest going past [`CACHED_PAGES`] or
    /// [`CACHED_BYTES`].
    pub(super) fn keep(&self, key: String, body: Arc<Vec<u8>>) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.retain(|(k, _)| *k != key);
            kept.push_back((key, body));
            while kept.len() > CACHED_PAGES
                || kept.iter().map(|(_, b)| b.len()).sum::<usize>() > CACHED_BYTES
            {
                kept.pop_front();
            }
        }
    }

    /// Starts making the page of `key`, if it may be.
    pub(super) fn start(&self, key: &str) -> Start {
        match self.making.lock() {
            Ok(m) if m.contains(key) => Start::Making,
            Ok(mut m) if m.len() < MAX_RERUNS => {
                m.insert(key.to_string());
                Start::Started
            }
            Ok(_) => Start::Full,
            Err(_) => Start::Making,
        }
    }

    /// The page of `key` is no longer being made.
    pub(super) fn done(&self, key: &str) {
        if let Ok(mut m) = self.making.lock() {
            m.remove(key);
        }
    }
}

/// Gives back to the system what a finished rerun freed: glibc keeps
/// freed memory in the thread's arena otherwise, so a lab that ran a few
/// large runs on a few threads would hold their peak long after (the
/// lab's lasting memory is its page cache, [`CACHED_BYTES`]).
pub(super) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's
    // arenas to the system; it touches no live allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}
