//! A meter of search work, so that tests can bound what an event costs
//! without a clock: each search of the scenario's description (fault
//! lists, outage windows, traffic blocks, event expectations, the
//! quarantine's order) adds the entries it looked at. Debug builds count,
//! per thread; release builds compile the meter away.

#[cfg(debug_assertions)]
thread_local! {
    static UNITS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Adds `n` units of work.
#[inline(always)]
pub fn add(n: usize) {
    #[cfg(debug_assertions)]
    UNITS.with(|u| u.set(u.get().saturating_add(n as u64)));
    #[cfg(not(debug_assertions))]
    let _ = n;
}

/// The units of a binary search over `len` entries.
#[inline(always)]
pub fn search(len: usize) {
    add((usize::BITS - len.leading_zeros()) as usize + 1);
}

/// Work counted on this thread so far; `None` in a release build.
pub fn read() -> Option<u64> {
    #[cfg(debug_assertions)]
    return Some(UNITS.with(|u| u.get()));
    #[cfg(not(debug_assertions))]
    None
}
