//! Large pages for the engine's big arrays, where the platform offers
//! them: first touching a 120 MB array of message records one 4 KB page at
//! a time costs about 30,000 page faults; in 2 MB pages, a few hundred.

/// Asks Linux to back a large array (the message records) with 2 MB
/// pages: fewer page faults on first touch and fewer TLB misses after.
/// Only the part aligned to 2 MB is asked for; a kernel that declines (or
/// another platform) changes nothing.
pub(super) fn large_pages<T>(array: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const LARGE: usize = 2 << 20;
        let start = array.as_ptr() as usize;
        let end = start + std::mem::size_of_val(array);
        let from = start.next_multiple_of(LARGE);
        let to = end / LARGE * LARGE;
        if to > from {
            // SAFETY: [from, to) lies inside the array's own allocation;
            // the advice changes how its pages are backed, not their
            // contents (still zero, untouched).
            unsafe {
                libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = array;
}

/// `n` zeroed values for a large per-message or per-intent array that the
/// run reads before it writes (a count incremented): asked for in large
/// pages ([`large_pages`]). In 4 KB pages each first read maps the shared
/// zero page and the write after it replaces that page, a flush of the
/// TLB that interrupts every other thread of the process (a sweep's
/// points run on several); a large page replaces 512 of them at once.
pub(super) fn zeroed<T: bytemuck::Zeroable + Clone>(n: usize) -> Vec<T> {
    let mut v = bytemuck::zeroed_vec(n);
    large_pages(&v);
    // Written once, so that no read finds the zero page.
    v.fill(T::zeroed());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kilobytes in large pages of the mapping that holds `address`.
    #[cfg(target_os = "linux")]
    fn in_large_pages(address: usize) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().and_then(|r| {
                let (from, to) = r.split_once('-')?;
                Some((
                    usize::from_str_radix(from, 16).ok()?,
                    usize::from_str_radix(to, 16).ok()?,
                ))
            });
            // A mapping's header line starts with its address range.
            if let Some((from, to)) = range {
                inside = (from..to).contains(&address);
            }
            if inside && let Some(kb) = line.strip_prefix("AnonHugePages:") {
                return kb.trim().trim_end_matches("kB").trim().parse().ok();
            }
        }
        None
    }

    #[test]
    fn zeroed_arrays_hold_zeros_of_their_length() {
        let counts: Vec<u32> = zeroed(3 << 20);
        assert_eq!(counts.len(), 3 << 20);
        assert!(counts.iter().all(|&c| c == 0));
        let flags: Vec<bool> = zeroed(5);
        assert_eq!(flags, [false; 5]);
        assert!(zeroed::<u64>(0).is_empty());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_large_record_array_is_backed_by_large_pages_where_linux_offers_them() {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if mode.is_err() || mode.as_deref().is_ok_and(|m| m.contains("[never]")) {
            eprintln!("transparent large pages are off here: nothing to check");
            return;
        }
        // 64 MB of records, one touched in every 4 KB page.
        let count = (64 << 20) / std::mem::size_of::<u32>();
        let mut records: Vec<u32> = bytemuck::zeroed_vec(count);
        large_pages(&records);
        for m in (0..count).step_by(4096 / std::mem::size_of::<u32>()) {
            records[m] = 1;
        }
        // The advised part is a mapping of its own: ask about the middle.
        let middle = records.as_ptr() as usize + (32 << 20);
        let large = in_large_pages(middle).unwrap_or(0);
        assert_eq!(records[count - 1], 0);
        // Most of it (the kernel may decline a few pages).
        assert!(
            large >= 32 << 10,
            "{large} KB in large pages after touching 64 MB of records"
        );
    }
}
