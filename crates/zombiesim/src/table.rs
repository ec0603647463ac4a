//! Large flat tables: the per-page arrays of the simulated device (the mapping
//! table, each physical page's owner) backed by huge pages where the OS offers them.
//!
//! A 16 GiB device has a 16 MiB mapping table and an 18 MiB owner array. Random
//! writes touch them at random, so with 4 KiB pages nearly every mapping lookup of a
//! GC copy misses the TLB as well as the cache. On Linux a table of at least
//! [`HUGE_MIN_BYTES`] asks for transparent huge pages (`madvise(MADV_HUGEPAGE)`)
//! before it is first written, which takes the page walk off most lookups. It is a
//! hint: where huge pages are off (or on another OS) the table is an ordinary
//! `Vec`, and no simulated figure depends on it.

/// Tables smaller than this stay on ordinary pages (a huge page is 2 MiB).
pub const HUGE_MIN_BYTES: usize = 4 << 20;

/// A `Vec` of `n` copies of `value`, on huge pages where the OS allows.
pub fn filled<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut table = Vec::with_capacity(n);
    advise_huge(&table);
    table.resize(n, value);
    table
}

/// Ask for transparent huge pages over `table`'s allocation (before it is touched).
fn advise_huge<T>(table: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let bytes = table.capacity() * std::mem::size_of::<T>();
        if bytes < HUGE_MIN_BYTES {
            return;
        }
        let start = table.as_ptr() as usize;
        let first = start.div_ceil(PAGE) * PAGE;
        let end = (start + bytes) / PAGE * PAGE;
        if end > first {
            // SAFETY: the range lies inside `table`'s own allocation, page-aligned;
            // MADV_HUGEPAGE changes how it is backed, never its contents. A failure
            // (huge pages off) leaves ordinary pages, so the result is not checked.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = table;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_holds_the_value_small_and_large() {
        let small = filled(10, 7u32);
        assert_eq!(small, vec![7u32; 10]);
        let n = HUGE_MIN_BYTES / 4 + 3;
        let large = filled(n, u32::MAX);
        assert_eq!(large.len(), n);
        assert!(large.iter().all(|&x| x == u32::MAX));
    }
}
