//! The versions the GC oracle is still to mark, listed by when each comes due.

/// The versions the oracle is still to mark, listed by the count of host page writes
/// after which each comes due: a list per count (its latest entry first), in a pool of
/// entries whose freed ones are taken again first (while still in the cache), so it
/// holds at most one entry per logical page. A write costs a constant (its list's head,
/// prefetched a few writes ahead, and one entry), not a heap's logarithm of every
/// version in flight.
pub(super) struct DueLists {
    /// `first[t]`: the latest entry due at `t` ([`NIL`]: none).
    first: Vec<u32>,
    /// Entries: the LPN, and the next entry of the same list or of the free ones
    /// ([`NIL`]: the last).
    entries: Vec<(u32, u32)>,
    /// The first free entry.
    free: u32,
    /// The LPNs a write makes due (reused).
    batch: Vec<u32>,
}

/// No entry.
const NIL: u32 = u32::MAX;

impl DueLists {
    /// Lists for versions due after at most `writes` host page writes.
    pub(super) fn new(writes: u64) -> Self {
        DueLists {
            first: vec![NIL; writes as usize + 2],
            entries: Vec::new(),
            free: NIL,
            batch: Vec::new(),
        }
    }

    /// List `lpn` as due once `at` host page writes are applied.
    #[inline]
    pub(super) fn push(&mut self, at: u64, lpn: u32) {
        let t = at as usize;
        if t >= self.first.len() {
            self.first.resize(t + 1, NIL);
        }
        let entry = (lpn, self.first[t]);
        self.first[t] = if self.free == NIL {
            self.entries.push(entry);
            (self.entries.len() - 1) as u32
        } else {
            let e = self.free;
            self.free = self.entries[e as usize].1;
            self.entries[e as usize] = entry;
            e
        };
    }

    /// Ask the cache for the head of list `at` (a hint).
    #[inline]
    pub(super) fn prefetch(&self, at: u64) {
        crate::table::prefetch(&self.first, at as usize);
    }

    /// The LPNs due once `at` host page writes are applied, taken off their list, in
    /// the order of (due count, LPN): those listed under `at`, and `own` (a version
    /// listed nowhere, due at `at` or earlier) among them, or first when overdue.
    #[inline]
    pub(super) fn due_now(&mut self, at: u64, own: Option<(u64, u32)>) -> &[u32] {
        self.batch.clear();
        if let Some(head) = self.first.get_mut(at as usize) {
            let mut e = std::mem::replace(head, NIL);
            while e != NIL {
                let (lpn, next) = self.entries[e as usize];
                self.batch.push(lpn);
                self.entries[e as usize].1 = self.free;
                self.free = e;
                e = next;
            }
        }
        let overdue = match own {
            Some((t, lpn)) if t < at => Some(lpn),
            Some((_, lpn)) => {
                self.batch.push(lpn);
                None
            }
            None => None,
        };
        self.batch.sort_unstable();
        if let Some(lpn) = overdue {
            self.batch.insert(0, lpn);
        }
        &self.batch
    }

    pub(super) fn memory_bytes(&self) -> u64 {
        (self.first.capacity() * 4 + self.entries.capacity() * 8 + self.batch.capacity() * 4) as u64
    }
}
