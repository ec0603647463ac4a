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
//!
//! [`prefetch`] asks the CPU to start loading an entry that a later step will
//! touch (the mapping entry of a request a few ahead, the validity word of the page
//! it overwrites): the other half of keeping these tables off the critical path.

/// Tables smaller than this stay on ordinary pages (a huge page is 2 MiB).
pub const HUGE_MIN_BYTES: usize = 4 << 20;

/// A flat table: a `Vec` (it derefs to one) whose copy keeps what the original had,
/// its capacity (the report's memory figures count capacity) and, for a large one,
/// its huge-page advice. A device copied from the cache of preconditioned devices
/// (`sim::warm`) then reports the same figures and keeps its tables off the TLB's
/// critical path.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Table<T>(Vec<T>);

impl<T: Clone> Clone for Table<T> {
    fn clone(&self) -> Self {
        let mut table = Vec::with_capacity(self.0.capacity());
        advise_huge(&table);
        table.extend_from_slice(&self.0);
        Table(table)
    }
}

impl<T> From<Vec<T>> for Table<T> {
    fn from(v: Vec<T>) -> Self {
        Table(v)
    }
}

impl<T> std::ops::Deref for Table<T> {
    type Target = Vec<T>;
    #[inline(always)]
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Table<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<'a, T> IntoIterator for &'a Table<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A table of `n` copies of `value`, on huge pages where the OS allows.
pub fn filled<T: Copy>(n: usize, value: T) -> Table<T> {
    let mut table = Vec::with_capacity(n);
    advise_huge(&table);
    table.resize(n, value);
    Table(table)
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

/// Ask the CPU to start loading `table[index]` into cache (a hint: no effect on
/// results, nothing when `index` is out of range).
#[inline(always)]
pub fn prefetch<T>(table: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(slot) = table.get(index) {
        // SAFETY: prefetching is a hint that never faults; `slot` is a valid reference.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (slot as *const T).cast::<i8>(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, index);
}

/// The last `N` indices handed to [`Lookbehind::push`], for a second prefetch stage:
/// an entry prefetched `N` steps ago has had time to arrive, so what it points to
/// can be prefetched in turn. Shared access (`Cell`s), as prefetching reads only.
#[derive(Clone, Debug)]
pub struct Lookbehind<const N: usize> {
    slots: [std::cell::Cell<u32>; N],
    next: std::cell::Cell<usize>,
}

impl<const N: usize> Default for Lookbehind<N> {
    fn default() -> Self {
        Lookbehind {
            slots: std::array::from_fn(|_| std::cell::Cell::new(u32::MAX)),
            next: std::cell::Cell::new(0),
        }
    }
}

impl<const N: usize> Lookbehind<N> {
    /// Keep `index`; returns the one kept `N` pushes ago (`u32::MAX` at first).
    #[inline(always)]
    pub fn push(&self, index: u32) -> u32 {
        let slot = self.next.get();
        self.next.set(if slot + 1 == N { 0 } else { slot + 1 });
        self.slots[slot].replace(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_holds_the_value_small_and_large() {
        let small = filled(10, 7u32);
        assert_eq!(*small, vec![7u32; 10]);
        let n = HUGE_MIN_BYTES / 4 + 3;
        let large = filled(n, u32::MAX);
        assert_eq!(large.len(), n);
        assert!(large.iter().all(|&x| x == u32::MAX));
    }

    #[test]
    fn a_copy_keeps_the_capacity_the_memory_figures_count() {
        let mut t: Table<u32> = Vec::with_capacity(100).into();
        t.extend([1, 2, 3]);
        let copy = t.clone();
        assert_eq!(copy, t);
        assert_eq!(copy.capacity(), t.capacity());
        let large = filled(HUGE_MIN_BYTES / 4 + 3, 5u32);
        let copy = large.clone();
        assert_eq!(
            (copy.len(), copy.capacity()),
            (large.len(), large.capacity())
        );
        assert!(copy.iter().all(|&x| x == 5));
    }

    #[test]
    fn lookbehind_returns_what_was_pushed_n_ago() {
        let ring = Lookbehind::<3>::default();
        let out: Vec<u32> = (10..16).map(|i| ring.push(i)).collect();
        assert_eq!(out, vec![u32::MAX, u32::MAX, u32::MAX, 10, 11, 12]);
    }

    #[test]
    fn prefetch_out_of_range_is_harmless() {
        let t = [1u64, 2, 3];
        prefetch(&t, 2);
        prefetch(&t, 99);
        prefetch::<u32>(&[], 0);
    }
}
