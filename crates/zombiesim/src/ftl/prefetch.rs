//! Cache prefetch of a mapping-table entry.

/// Ask the CPU to start loading `table[index]` into cache (a hint; no effect on
/// results): what [`Ftl::prefetch`] does with an FTL's mapping table.
#[inline(always)]
pub(crate) fn prefetch_entry(table: &[u32], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(slot) = table.get(index) {
        // SAFETY: prefetching is a hint that never faults; `slot` is a valid reference.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (slot as *const u32).cast::<i8>(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, index);
}
