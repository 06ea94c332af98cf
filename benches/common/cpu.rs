//! The CPU time the bare loops print (shared by `benches/bound.rs`,
//! `benches/ten_million_bound.rs` and `benches/lab_bound.rs`).

/// User and system CPU time of this process so far, in seconds.
#[cfg(unix)]
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

#[cfg(not(unix))]
pub fn cpu_seconds() -> f64 {
    f64::NAN
}
