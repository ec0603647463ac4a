//! Block-granularity replacement policies of the device write buffer: FAB, BPLRU and
//! the 3-region LRU of BA-GC. Each keeps the buffered pages grouped by logical block
//! (`lpn / pages_per_block`) and evicts a whole block at a time.
//!
//! ```text
//!   slots ──► BlockTable: logical block ─► entry { slots of its buffered pages }
//!   entries in intrusive lists (Lists), one list per:
//!     fab       page count 1..=ppb     victim: LRU block of the fullest count
//!     bplru     one LRU list            victim: LRU block; padded when written;
//!                                       a block written whole and in order goes
//!                                       to the LRU end at once (LRU compensation)
//!     3-region  initial │ TBU │ TBE     victim: LRU block of TBE (then initial,
//!               P(U) 0.3 │ 1.0 │ 0.0    then TBU)
//! ```
//!
//! Recency here is recency of *writes*: a read hit does not move a block (these are
//! write-buffer policies, as in the papers).
//!
//! The 3-region LRU (004 §5) files a block in the *initial* region when its first
//! page arrives; an update of the buffered block — a rewrite of one of its buffered
//! pages, or a write of another of its pages out of order (the next page of a block
//! being written in order is still its first writing) — promotes it to the
//! *to-be-updated* (TBU) region; blocks leave the initial region in arrival order
//! into the *to-be-evicted* (TBE) region when the region is over its size, and TBU
//! blocks that age past its size are demoted to TBE too. 004 leaves the region sizes'
//! adaptation out; the rule here: the initial region holds `w0` = 1/16 of the
//! capacity (in pages: enough to tell a block written once from one written again);
//! the TBU region starts at `w1` = 3/4 and adapts — a write hit on a TBE block (a block
//! about to be evicted turned out hot) grows `w1` by one block of pages, an eviction
//! of a block that was demoted from TBU and never written again shrinks it by one
//! block; `w1` stays within [1/8, 7/8] of the capacity. (A larger initial region or a
//! smaller TBU region lowered the write hit ratio on every stand-in of
//! docs/ba-gc.md.)

use super::eviction::{Replacement, SlotView};
use rustc_hash::FxHashMap;

const END: u32 = u32::MAX;

/// Several doubly linked lists over entry indices (an entry is in at most one).
#[derive(Clone)]
struct Lists {
    prev: Vec<u32>,
    next: Vec<u32>,
    list: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
}

impl Lists {
    fn new(entries: usize, lists: usize) -> Self {
        Lists {
            prev: vec![END; entries],
            next: vec![END; entries],
            list: vec![END; entries],
            head: vec![END; lists],
            tail: vec![END; lists],
            len: vec![0; lists],
        }
    }

    /// Put entry `e` at the MRU end (head) of list `l`.
    fn push_front(&mut self, l: u32, e: u32) {
        let (i, li) = (e as usize, l as usize);
        self.prev[i] = END;
        self.next[i] = self.head[li];
        if self.head[li] != END {
            self.prev[self.head[li] as usize] = e;
        } else {
            self.tail[li] = e;
        }
        self.head[li] = e;
        self.list[i] = l;
        self.len[li] += 1;
    }

    /// Put entry `e` at the LRU end (tail) of list `l`.
    fn push_back(&mut self, l: u32, e: u32) {
        let (i, li) = (e as usize, l as usize);
        self.next[i] = END;
        self.prev[i] = self.tail[li];
        if self.tail[li] != END {
            self.next[self.tail[li] as usize] = e;
        } else {
            self.head[li] = e;
        }
        self.tail[li] = e;
        self.list[i] = l;
        self.len[li] += 1;
    }

    fn unlink(&mut self, e: u32) {
        let i = e as usize;
        let l = self.list[i] as usize;
        let (p, n) = (self.prev[i], self.next[i]);
        if p != END {
            self.next[p as usize] = n;
        } else {
            self.head[l] = n;
        }
        if n != END {
            self.prev[n as usize] = p;
        } else {
            self.tail[l] = p;
        }
        self.len[l] -= 1;
        self.prev[i] = END;
        self.next[i] = END;
        self.list[i] = END;
    }

    fn move_front(&mut self, l: u32, e: u32) {
        self.unlink(e);
        self.push_front(l, e);
    }

    fn tail(&self, l: u32) -> Option<u32> {
        Some(self.tail[l as usize]).filter(|&e| e != END)
    }
}

/// The buffered pages grouped by logical block.
#[derive(Clone)]
struct BlockTable {
    ppb: u64,
    entry_of: FxHashMap<u64, u32>,
    /// Per entry: its logical block and the slots of its buffered pages.
    lbn: Vec<u64>,
    slots: Vec<Vec<u32>>,
    free: Vec<u32>,
    /// Per slot: the entry holding it.
    entry_of_slot: Vec<u32>,
}

impl BlockTable {
    fn new(capacity: u32, ppb: u32) -> Self {
        let n = capacity as usize;
        BlockTable {
            ppb: ppb.max(1) as u64,
            entry_of: FxHashMap::default(),
            lbn: vec![0; n],
            slots: vec![Vec::new(); n],
            free: (0..capacity).rev().collect(),
            entry_of_slot: vec![END; n],
        }
    }

    /// Add `slot` (holding `lpn`); returns its entry and whether the entry is new.
    fn add(&mut self, slot: u32, lpn: u64) -> (u32, bool) {
        let lbn = lpn / self.ppb;
        let (e, new) = match self.entry_of.get(&lbn) {
            Some(&e) => (e, false),
            None => {
                let e = self.free.pop().expect("an entry per slot at most");
                self.entry_of.insert(lbn, e);
                self.lbn[e as usize] = lbn;
                (e, true)
            }
        };
        self.slots[e as usize].push(slot);
        self.entry_of_slot[slot as usize] = e;
        (e, new)
    }

    /// Remove `slot`; returns its entry and whether the entry is now empty (freed).
    fn remove(&mut self, slot: u32) -> (u32, bool) {
        let e = self.entry_of_slot[slot as usize];
        self.entry_of_slot[slot as usize] = END;
        let s = &mut self.slots[e as usize];
        let at = s
            .iter()
            .position(|&x| x == slot)
            .expect("slot in its entry");
        s.swap_remove(at);
        let empty = s.is_empty();
        if empty {
            self.entry_of.remove(&self.lbn[e as usize]);
            self.free.push(e);
        }
        (e, empty)
    }

    fn count(&self, e: u32) -> u32 {
        self.slots[e as usize].len() as u32
    }
}

/// FAB: the block with the most buffered pages goes (ties: least recently written).
#[derive(Clone)]
pub struct Fab {
    table: BlockTable,
    /// One list per page count (index = count).
    lists: Lists,
    top: u32,
}

impl Fab {
    pub fn new(capacity: u32, ppb: u32) -> Self {
        Fab {
            table: BlockTable::new(capacity, ppb),
            lists: Lists::new(capacity as usize, ppb as usize + 1),
            top: 0,
        }
    }

    fn refile(&mut self, e: u32, new: bool) {
        let c = self.table.count(e);
        if new {
            self.lists.push_front(c, e);
        } else {
            self.lists.move_front(c, e);
        }
        self.top = self.top.max(c);
    }
}

impl Replacement for Fab {
    fn insert(&mut self, slot: u32, lpn: u64) {
        let (e, new) = self.table.add(slot, lpn);
        self.refile(e, new);
    }
    fn touch(&mut self, slot: u32, _lpn: u64, write: bool) {
        if write {
            let e = self.table.entry_of_slot[slot as usize];
            self.refile(e, false);
        }
    }
    fn remove(&mut self, slot: u32, _lpn: u64) {
        let (e, empty) = self.table.remove(slot);
        if empty {
            self.lists.unlink(e);
        } else {
            // One page fewer: filed as most recent of its new count.
            self.refile(e, false);
        }
    }
    fn victims(&mut self, _view: &SlotView, out: &mut Vec<u32>) {
        while self.top > 0 && self.lists.len[self.top as usize] == 0 {
            self.top -= 1;
        }
        if let Some(e) = self.lists.tail(self.top) {
            out.extend_from_slice(&self.table.slots[e as usize]);
        }
    }
    fn pads(&self) -> bool {
        false
    }
    fn update_probability(&self, _slot: u32) -> f64 {
        0.0
    }
}

/// BPLRU: block-level LRU with page padding and LRU compensation.
#[derive(Clone)]
pub struct Bplru {
    table: BlockTable,
    lists: Lists,
    /// Per entry: the next page offset expected of a block being written whole and
    /// in order from offset 0 (`END` once the order broke).
    seq_next: Vec<u32>,
}

impl Bplru {
    pub fn new(capacity: u32, ppb: u32) -> Self {
        Bplru {
            table: BlockTable::new(capacity, ppb),
            lists: Lists::new(capacity as usize, 1),
            seq_next: vec![END; capacity as usize],
        }
    }
}

impl Replacement for Bplru {
    fn insert(&mut self, slot: u32, lpn: u64) {
        let (e, new) = self.table.add(slot, lpn);
        let offset = (lpn % self.table.ppb) as u32;
        let i = e as usize;
        self.seq_next[i] = match (new, self.seq_next[i]) {
            (true, _) if offset == 0 => 1,
            (false, n) if n == offset => n + 1,
            _ => END,
        };
        if self.seq_next[i] as u64 == self.table.ppb {
            // Written whole and in order: it will not be rewritten soon (LRU compensation).
            if !new {
                self.lists.unlink(e);
            }
            self.lists.push_back(0, e);
        } else if new {
            self.lists.push_front(0, e);
        } else {
            self.lists.move_front(0, e);
        }
    }
    fn touch(&mut self, slot: u32, _lpn: u64, write: bool) {
        if write {
            let e = self.table.entry_of_slot[slot as usize];
            self.seq_next[e as usize] = END;
            self.lists.move_front(0, e);
        }
    }
    fn remove(&mut self, slot: u32, _lpn: u64) {
        let (e, empty) = self.table.remove(slot);
        if empty {
            self.lists.unlink(e);
        }
    }
    fn victims(&mut self, _view: &SlotView, out: &mut Vec<u32>) {
        if let Some(e) = self.lists.tail(0) {
            out.extend_from_slice(&self.table.slots[e as usize]);
        }
    }
    fn pads(&self) -> bool {
        true
    }
    fn update_probability(&self, _slot: u32) -> f64 {
        0.0
    }
}

/// The regions of the 3-region LRU, with their update probabilities (004 §6).
const INITIAL: u32 = 0;
const TBU: u32 = 1;
const TBE: u32 = 2;
const P_UPDATE: [f64; 3] = [0.3, 1.0, 0.0];

/// The 3-region LRU of BA-GC.
#[derive(Clone)]
pub struct ThreeRegion {
    table: BlockTable,
    lists: Lists,
    /// Pages buffered per region.
    pages: [u64; 3],
    capacity: u64,
    /// Region size limits in pages: initial (fixed) and TBU (adaptive).
    w0: u64,
    w1: u64,
    /// Per entry: demoted from TBU and not written since (for the adaptation).
    demoted: Vec<bool>,
    /// Per entry: the page offset written last (a write of the next one continues a
    /// block's first, in-order writing; any other write to it is an update).
    last_offset: Vec<u32>,
    /// Adaptation step (one block of pages) and the TBU bounds.
    step: u64,
    w1_min: u64,
    w1_max: u64,
}

impl ThreeRegion {
    pub fn new(capacity: u32, ppb: u32) -> Self {
        let c = capacity as u64;
        let w0 = (c / 16).max(1);
        ThreeRegion {
            table: BlockTable::new(capacity, ppb),
            lists: Lists::new(capacity as usize, 3),
            pages: [0; 3],
            capacity: c,
            w0,
            w1: c * 3 / 4,
            demoted: vec![false; capacity as usize],
            last_offset: vec![0; capacity as usize],
            step: ppb.max(1) as u64,
            w1_min: c / 8,
            w1_max: c * 7 / 8,
        }
    }

    fn region(&self, e: u32) -> u32 {
        self.lists.list[e as usize]
    }

    /// Move entry `e` (with `n` pages) to the MRU end of region `to`.
    fn file(&mut self, e: u32, to: u32) {
        let n = self.table.count(e) as u64;
        let from = self.region(e);
        if from != END {
            self.pages[from as usize] -= n;
            self.lists.unlink(e);
        }
        self.pages[to as usize] += n;
        self.lists.push_front(to, e);
    }

    /// Age blocks out of the initial and TBU regions while they are over size.
    fn age(&mut self) {
        while self.pages[INITIAL as usize] > self.w0 && self.lists.len[INITIAL as usize] > 1 {
            let e = self.lists.tail(INITIAL).expect("non-empty");
            self.file(e, TBE);
        }
        while self.pages[TBU as usize] > self.w1 && self.lists.len[TBU as usize] > 1 {
            let e = self.lists.tail(TBU).expect("non-empty");
            self.file(e, TBE);
            self.demoted[e as usize] = true;
        }
    }

    /// The TBU region's size limit now (pages).
    #[cfg(test)]
    pub fn tbu_limit(&self) -> u64 {
        self.w1
    }

    /// Total pages buffered, for consistency checks.
    fn total(&self) -> u64 {
        self.pages.iter().sum()
    }
}

impl ThreeRegion {
    /// A write updated buffered block `e`: it moves to the TBU region (from TBE, a sign
    /// that the TBU region is too small).
    fn updated(&mut self, e: u32) {
        if self.region(e) == TBE {
            self.w1 = (self.w1 + self.step).min(self.w1_max);
        }
        self.demoted[e as usize] = false;
        self.file(e, TBU);
    }
}

impl Replacement for ThreeRegion {
    fn insert(&mut self, slot: u32, lpn: u64) {
        let (e, new) = self.table.add(slot, lpn);
        let offset = (lpn % self.table.ppb) as u32;
        let i = e as usize;
        if new {
            self.demoted[i] = false;
            self.pages[INITIAL as usize] += 1;
            self.lists.push_front(INITIAL, e);
        } else {
            let r = self.region(e);
            self.pages[r as usize] += 1;
            if offset == self.last_offset[i].wrapping_add(1) {
                // The next page of a block being written in order: still its first
                // writing (recency kept in the initial region, refreshed elsewhere).
                if r != INITIAL {
                    self.lists.move_front(r, e);
                }
            } else {
                // A write to a buffered block out of order: an update of the block
                // (pages of a block are managed together, 004 §6).
                self.updated(e);
            }
        }
        self.last_offset[i] = offset;
        self.age();
        debug_assert!(self.total() <= self.capacity);
    }
    fn touch(&mut self, slot: u32, lpn: u64, write: bool) {
        if !write {
            return;
        }
        let e = self.table.entry_of_slot[slot as usize];
        self.last_offset[e as usize] = (lpn % self.table.ppb) as u32;
        self.updated(e);
        self.age();
    }
    fn remove(&mut self, slot: u32, _lpn: u64) {
        let e = self.table.entry_of_slot[slot as usize];
        let r = self.region(e);
        self.pages[r as usize] -= 1;
        let (_, empty) = self.table.remove(slot);
        if empty {
            if self.demoted[e as usize] {
                // Demoted from TBU and evicted without another write: TBU was too big.
                self.w1 = self.w1.saturating_sub(self.step).max(self.w1_min);
                self.demoted[e as usize] = false;
            }
            self.lists.unlink(e);
        }
    }
    fn victims(&mut self, _view: &SlotView, out: &mut Vec<u32>) {
        let e = self
            .lists
            .tail(TBE)
            .or_else(|| self.lists.tail(INITIAL))
            .or_else(|| self.lists.tail(TBU));
        if let Some(e) = e {
            out.extend_from_slice(&self.table.slots[e as usize]);
        }
    }
    fn pads(&self) -> bool {
        false
    }
    fn update_probability(&self, slot: u32) -> f64 {
        let e = self.table.entry_of_slot[slot as usize];
        if e == END {
            return 0.0;
        }
        P_UPDATE[self.region(e) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn victims(p: &mut dyn Replacement) -> Vec<u32> {
        let mut out = Vec::new();
        p.victims(
            &SlotView {
                lpn: &[],
                dirty: &[],
            },
            &mut out,
        );
        out.sort_unstable();
        out
    }

    #[test]
    fn fab_evicts_the_fullest_block_then_the_least_recent_among_equals() {
        // 4 pages per block. Block 0 gets slots 0, 1; block 1 gets slot 2; block 2 slot 3.
        let mut p = Fab::new(8, 4);
        p.insert(0, 0);
        p.insert(1, 1);
        p.insert(2, 4);
        p.insert(3, 8);
        assert_eq!(victims(&mut p), vec![0, 1]);
        p.remove(0, 0);
        p.remove(1, 1);
        // Blocks 1 and 2 hold one page each: block 1 was written first.
        assert_eq!(victims(&mut p), vec![2]);
        p.touch(2, 4, true);
        assert_eq!(victims(&mut p), vec![3]);
        // A read does not count as recency.
        p.touch(3, 8, false);
        assert_eq!(victims(&mut p), vec![3]);
    }

    #[test]
    fn bplru_is_block_lru_and_sends_a_block_written_whole_in_order_to_the_lru_end() {
        let mut p = Bplru::new(16, 4);
        assert!(p.pads());
        p.insert(0, 10); // block 2
        p.insert(1, 4); // block 1
        assert_eq!(victims(&mut p), vec![0]);
        p.touch(0, 10, true);
        assert_eq!(victims(&mut p), vec![1]);
        // Block 3 written whole and in order (12..15): evicted first although newest.
        for (s, l) in (2..6).zip(12..16) {
            p.insert(s, l);
        }
        assert_eq!(victims(&mut p), vec![2, 3, 4, 5]);
        // Out of order: an ordinary MRU block.
        let mut q = Bplru::new(16, 4);
        q.insert(0, 0);
        for (s, l) in [(1, 13), (2, 12), (3, 14), (4, 15)] {
            q.insert(s, l);
        }
        assert_eq!(victims(&mut q), vec![0]);
    }

    #[test]
    fn three_region_promotes_rewritten_blocks_and_evicts_from_to_be_evicted() {
        // Capacity 16 pages of blocks of 2: initial holds 4 pages, TBU 8.
        let mut p = ThreeRegion::new(16, 2);
        // Blocks 0..3 arrive (two pages each): the initial region overflows, the
        // oldest blocks age into TBE.
        let mut slot = 0;
        for lbn in 0..4u64 {
            for k in 0..2 {
                p.insert(slot, lbn * 2 + k);
                slot += 1;
            }
        }
        assert_eq!(p.update_probability(0), 0.0, "block 0 aged into TBE");
        assert_eq!(p.update_probability(7), 0.3, "block 3 still initial");
        // Block 1 (slots 2, 3) rewritten: TBU, and the TBU size grows (it was in TBE).
        let before = p.tbu_limit();
        p.touch(2, 2, true);
        assert_eq!(p.update_probability(3), 1.0);
        assert_eq!(p.tbu_limit(), before + 2);
        // The victim is the least recent TBE block: block 0.
        assert_eq!(victims(&mut p), vec![0, 1]);
    }
}
