//! DFTL's cached mapping table (CMT) and translation-page bookkeeping: what the
//! mapping costs in flash traffic when only part of it fits in SRAM.
//!
//! ```text
//!   SRAM                                           flash
//!   ┌─ CMT (LRU, ftl.cmt_entries) ────────┐
//!   │ MRU ⇄ lpn 17 ⇄ lpn 3 ⇄ … ⇄ lpn 902  LRU   host pages     0 .. H
//!   │     dirtied_at per entry            │      (data pages, as page mapping)
//!   │ map: lpn → slot (FxHashMap)         │
//!   └─────────────────────────────────────┘      translation pages H .. H + T
//!   ┌─ GTD: l2p[H + t] ─────────────────────┐     page t holds the mappings of
//!   │ where translation page t lives       ├──►  lpns t·E .. (t+1)·E,
//!   └───────────────────────────────────────┘     E = page size / 4 B
//!   flushed_at[t]: when page t was last written; pending: pages GC changed
//!
//!   host op on L ─► CMT hit? ── yes ─────────────────────────► use the entry
//!                      │ no: read translation page t = L / E (none if never written)
//!                      ▼
//!                   CMT full? evict LRU; dirty? ─► read-modify-write its translation
//!                                                  page (Cause::Translation)
//!   GC moves data page L ─► cached: dirty the entry; else page t joins the pending
//!                           batch, written once at the end of the host operation
//!   GC moves translation page t ─► only the GTD changes
//! ```
//!
//! Translation pages are internal logical pages `H + t` of the page-mapped FTL
//! beyond the host's `H`: the page-mapped machinery stores, relocates and collects
//! them, in translation blocks of their own (the layout's translation stream), and the
//! global translation directory (GTD) is their mapping-table entries.
//! The simulator keeps the whole mapping in `l2p` (the content of the translation
//! pages); the CMT decides what the mapping costs in flash traffic.
//!
//! Dirty tracking is O(1) with batching: an operation counter `tick` stamps each
//! entry when its mapping changes (`dirtied_at`) and each translation page when it is
//! written (`flushed_at`); an entry is dirty iff `dirtied_at > flushed_at[t]`, so
//! writing page `t` cleans all of its cached entries at once.
//!
//! With the integrity oracle on, every mapping change of a host page is stamped too
//! (`changed_at`), and the check is that none is lost: each host page's newest
//! mapping is in a translation page written after it, or in a dirty cached entry.

use crate::error::{Error, Result};
use crate::flash::NONE;
use rustc_hash::FxHashMap;

/// The CMT, the translation-page bookkeeping and the pending batch.
#[derive(Clone)]
pub(crate) struct Translation {
    /// Host logical pages: translation page `t` is internal page `host + t`.
    pub host: u64,
    /// Mapping entries per translation page (4-byte physical page numbers).
    pub per_page: u64,
    /// Translation pages.
    pub pages: u32,
    /// CMT capacity (entries).
    capacity: u32,
    /// Cached logical page → its slot.
    map: FxHashMap<u32, u32>,
    /// Per slot: the logical page, its LRU neighbours (towards MRU / towards LRU), the
    /// tick of its last mapping change (0: clean since loaded).
    lpn: crate::table::Table<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    dirtied_at: Vec<u64>,
    /// Most and least recently used slots (`NONE` when empty).
    head: u32,
    tail: u32,
    /// Slots evicted and not yet reused.
    free: crate::table::Table<u32>,
    /// Per translation page: the tick of its last write (0: never).
    flushed_at: Vec<u64>,
    /// Translation pages GC changed uncached mappings of, to write once each.
    pending: crate::table::Table<u32>,
    is_pending: Vec<bool>,
    /// The operation counter.
    tick: u64,
    /// The translation page the controller holds from the current operation (read
    /// or just written): a read-modify-write of it needs no flash read.
    pub held: u32,
    /// Per host page, the tick of its last mapping change (integrity check only).
    changed_at: Option<Vec<u64>>,
}

/// Bytes of one CMT slot: logical page, two list links (4 B each), dirty stamp (8 B).
const SLOT_BYTES: usize = 4 + 4 + 4 + 8;
/// Bytes of one hash-map bucket: key and slot (4 B each) and a control byte.
const BUCKET_BYTES: usize = 4 + 4 + 1;

impl Translation {
    /// For `host` logical pages of `page_size` bytes with a CMT of `entries`; `verify`
    /// keeps the lost-update check.
    pub fn new(host: u64, page_size: u64, entries: u64, verify: bool) -> Self {
        let per_page = (page_size / 4).max(1);
        let pages = host.div_ceil(per_page) as u32;
        // More entries than host pages can never be used.
        let capacity = entries.min(host).max(1) as u32;
        let n = capacity as usize;
        let mut map = FxHashMap::default();
        map.reserve(n);
        Translation {
            host,
            per_page,
            pages,
            capacity,
            map,
            lpn: Vec::with_capacity(n).into(),
            prev: Vec::with_capacity(n),
            next: Vec::with_capacity(n),
            dirtied_at: Vec::with_capacity(n),
            head: NONE,
            tail: NONE,
            free: Default::default(),
            flushed_at: vec![0; pages as usize],
            pending: Default::default(),
            is_pending: vec![false; pages as usize],
            tick: 0,
            held: NONE,
            changed_at: verify.then(|| vec![0; host as usize]),
        }
    }

    /// Translation pages needed for `host` logical pages of `page_size` bytes.
    pub fn pages_for(host: u64, page_size: u64) -> u64 {
        host.div_ceil((page_size / 4).max(1))
    }

    /// The translation page holding the mapping of host page `l`.
    #[inline]
    pub fn page_of(&self, l: usize) -> u32 {
        (l as u64 / self.per_page) as u32
    }

    /// Cached entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Look `l` up; a hit becomes the most recently used entry.
    #[inline]
    pub fn touch(&mut self, l: usize) -> bool {
        let Some(&s) = self.map.get(&(l as u32)) else {
            return false;
        };
        if self.head != s {
            self.unlink(s);
            self.push_front(s);
        }
        true
    }

    /// Whether the CMT is full (an insertion must evict first).
    #[inline]
    pub fn full(&self) -> bool {
        self.map.len() >= self.capacity as usize
    }

    /// Evict the least recently used entry: its logical page and whether it was dirty.
    pub fn evict(&mut self) -> Option<(usize, bool)> {
        let s = self.tail;
        if s == NONE {
            return None;
        }
        self.unlink(s);
        let l = self.lpn[s as usize];
        self.map.remove(&l);
        self.free.push(s);
        let dirty =
            self.dirtied_at[s as usize] > self.flushed_at[self.page_of(l as usize) as usize];
        Some((l as usize, dirty))
    }

    /// Cache `l` (not cached; the CMT not full), clean, as the most recently used.
    pub fn insert(&mut self, l: usize) {
        debug_assert!(!self.full() && !self.map.contains_key(&(l as u32)));
        let s = match self.free.pop() {
            Some(s) => {
                self.lpn[s as usize] = l as u32;
                self.dirtied_at[s as usize] = 0;
                s
            }
            None => {
                self.lpn.push(l as u32);
                self.prev.push(NONE);
                self.next.push(NONE);
                self.dirtied_at.push(0);
                (self.lpn.len() - 1) as u32
            }
        };
        self.map.insert(l as u32, s);
        self.push_front(s);
    }

    /// The mapping of cached host page `l` changed (a write, a trim).
    #[inline]
    pub fn dirty(&mut self, l: usize) {
        self.tick += 1;
        let s = self.map[&(l as u32)];
        self.dirtied_at[s as usize] = self.tick;
        if let Some(c) = self.changed_at.as_mut() {
            c[l] = self.tick;
        }
    }

    /// GC or refresh moved (or dropped) host page `l`: a cached entry becomes dirty,
    /// else its translation page joins the pending batch.
    #[inline]
    pub fn relocated(&mut self, l: usize) {
        if self.map.contains_key(&(l as u32)) {
            self.dirty(l);
            return;
        }
        self.tick += 1;
        if let Some(c) = self.changed_at.as_mut() {
            c[l] = self.tick;
        }
        let t = self.page_of(l);
        if !self.is_pending[t as usize] {
            self.is_pending[t as usize] = true;
            self.pending.push(t);
        }
    }

    /// Translation page `t` is written now (with every mapping as it stands): its
    /// cached entries are clean, and it leaves the pending batch.
    pub fn flushed(&mut self, t: u32) {
        self.tick += 1;
        self.flushed_at[t as usize] = self.tick;
        self.is_pending[t as usize] = false;
        self.held = t;
    }

    /// Take the next pending translation page, if any (the caller writes it).
    pub fn next_pending(&mut self) -> Option<u32> {
        while let Some(t) = self.pending.pop() {
            if std::mem::take(&mut self.is_pending[t as usize]) {
                return Some(t);
            }
        }
        None
    }

    /// Bytes of the CMT alone (slots and hash map).
    pub fn cmt_bytes(&self) -> usize {
        self.lpn.capacity() * SLOT_BYTES + self.map.capacity() * BUCKET_BYTES
    }

    /// Bytes of the whole state: the CMT, the per-translation-page stamps and flags,
    /// the pending batch (the GTD is part of the page-mapped table).
    pub fn memory_bytes(&self) -> usize {
        self.cmt_bytes()
            + self.flushed_at.len() * 8
            + self.is_pending.len()
            + self.pending.capacity() * 4
            + self.free.capacity() * 4
    }

    #[inline]
    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    #[inline]
    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NONE;
        self.next[s as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }

    /// Check the CMT (size within capacity, list and map agree) and that no mapping
    /// change is lost (`l2p` of the host pages: the newest mappings); the pending
    /// batch is empty between operations.
    pub fn check(&self) -> Result<()> {
        let fail = |m: String| Err(Error::integrity(format!("DFTL: {m}")));
        if self.map.len() > self.capacity as usize {
            return fail(format!(
                "{} cached entries exceed the capacity {}",
                self.map.len(),
                self.capacity
            ));
        }
        let mut seen = 0usize;
        let (mut s, mut before) = (self.head, NONE);
        while s != NONE {
            seen += 1;
            if seen > self.map.len() {
                return fail("the LRU list is longer than the map (a cycle?)".into());
            }
            if self.prev[s as usize] != before {
                return fail(format!("slot {s}: its back link is wrong"));
            }
            let l = self.lpn[s as usize];
            if self.map.get(&l) != Some(&s) {
                return fail(format!(
                    "slot {s} holds page {l}, which the map does not send to it"
                ));
            }
            before = s;
            s = self.next[s as usize];
        }
        if seen != self.map.len() || before != self.tail {
            return fail(format!(
                "the LRU list holds {seen} entries, the map {}",
                self.map.len()
            ));
        }
        if let Some(t) = self.is_pending.iter().position(|&p| p) {
            return fail(format!(
                "translation page {t} is still pending between operations"
            ));
        }
        if let Some(changed) = &self.changed_at {
            for (l, &at) in changed.iter().enumerate() {
                let t = self.page_of(l) as usize;
                if at <= self.flushed_at[t] {
                    continue;
                }
                let dirty_cached = self
                    .map
                    .get(&(l as u32))
                    .is_some_and(|&s| self.dirtied_at[s as usize] >= at);
                if !dirty_cached {
                    return fail(format!(
                        "the mapping of logical page {l} changed at {at}, after its translation \
                         page {t} was written ({}), and no dirty cached entry holds it: the \
                         update is lost",
                        self.flushed_at[t]
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cmt_stays_within_capacity_and_in_lru_order() {
        let mut t = Translation::new(1000, 512, 3, true);
        for l in [1, 2, 3] {
            assert!(!t.touch(l));
            t.insert(l);
        }
        assert!(t.full());
        assert!(t.touch(1)); // order now 1, 3, 2 (MRU first)
        assert_eq!(t.evict(), Some((2, false)));
        t.insert(4);
        t.dirty(3);
        assert_eq!(t.evict(), Some((3, true)));
        t.insert(5);
        t.check().unwrap_err(); // 3's change is lost: nothing wrote its page
        t.flushed(0);
        t.check().unwrap();
        assert_eq!(t.len(), 3);
    }
}
