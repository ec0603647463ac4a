//! Per-page and per-block flash state in flat arrays (struct of arrays).
//!
//! Per physical page: the logical page last programmed there (`owner`, kept after the
//! page dies so later layers can ask what a dead page held) and one validity bit.
//! Per block: valid count, next page to program, erase count, time of the last
//! program or invalidation, the sequence number at which it was opened, the stream
//! it was opened for, how many of its valid pages are known zombies, and its status.
//! Memory: 4 bytes + 1 bit per page.

use super::Geometry;

/// "No page / no block / unmapped" in `u32` index arrays.
pub const NONE: u32 = u32::MAX;

/// Where a block is in its life cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockStatus {
    /// Erased, in a free list.
    Free,
    /// A write frontier: being programmed page by page.
    Open,
    /// Fully programmed: a GC candidate.
    Closed,
    /// Chosen by GC, being emptied.
    Victim,
    /// Withheld from use (factory spare).
    Reserved,
}

/// The state of every page and block of the device.
#[derive(Clone, Debug)]
pub struct FlashState {
    pages_per_block: u32,
    /// `log2(pages_per_block)` when it is a power of two (a shift is cheaper than a division).
    shift: Option<u32>,
    /// Logical page last programmed into each physical page (`NONE` once erased).
    pub owner: crate::table::Table<u32>,
    valid: Vec<u64>,
    pub valid_count: Vec<u32>,
    pub write_ptr: Vec<u32>,
    pub erase_count: Vec<u32>,
    /// Logical time of the block's last program or invalidation.
    pub last_modified: Vec<u64>,
    /// Sequence number at which the block was last opened (FIFO order of blocks).
    pub open_seq: Vec<u64>,
    /// Stream the block was opened for.
    pub stream: Vec<u8>,
    /// Valid pages of the block that the device knows as zombies (host-shadow): their
    /// logical page has a dirty newer copy in the host buffer. Kept by the FTL.
    pub zombies: Vec<u32>,
    /// Known zombies per block as a victim score counts them, each by its weight
    /// (`gc.zombie_weight = "lifetime"`; empty: every zombie counts whole).
    pub zombie_weighted: Vec<u32>,
    pub status: Vec<BlockStatus>,
    next_seq: u64,
}

impl FlashState {
    /// All blocks erased and free (reserved ones marked reserved).
    pub fn new(geo: &Geometry) -> Self {
        let ppb = geo.pages_per_block;
        let pages = geo.blocks as usize * ppb as usize;
        let blocks = geo.blocks as usize;
        let status = (0..geo.blocks)
            .map(|b| {
                if geo.is_reserved(b) {
                    BlockStatus::Reserved
                } else {
                    BlockStatus::Free
                }
            })
            .collect();
        FlashState {
            pages_per_block: ppb,
            shift: ppb.is_power_of_two().then(|| ppb.trailing_zeros()),
            owner: crate::table::filled(pages, NONE),
            valid: vec![0; pages.div_ceil(64)],
            valid_count: vec![0; blocks],
            write_ptr: vec![0; blocks],
            erase_count: vec![0; blocks],
            last_modified: vec![0; blocks],
            open_seq: vec![0; blocks],
            stream: vec![0; blocks],
            zombies: vec![0; blocks],
            zombie_weighted: Vec::new(),
            status,
            next_seq: 0,
        }
    }

    /// Per-block arrays only, for `units` units of `pages_per_unit` pages each: the
    /// summed statistics of groups of blocks (FDP's reclaim units,
    /// `ftl::ReclaimUnits`), which victim policies read as they read blocks. It has
    /// no pages of its own: `owner` and the validity bits are empty.
    pub fn of_units(units: u32, pages_per_unit: u32) -> Self {
        let n = units as usize;
        FlashState {
            pages_per_block: pages_per_unit,
            shift: None,
            owner: Default::default(),
            valid: Vec::new(),
            valid_count: vec![0; n],
            write_ptr: vec![0; n],
            erase_count: vec![0; n],
            last_modified: vec![0; n],
            open_seq: vec![0; n],
            stream: vec![0; n],
            zombies: vec![0; n],
            zombie_weighted: Vec::new(),
            status: vec![BlockStatus::Free; n],
            next_seq: 0,
        }
    }

    #[inline]
    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }

    #[inline]
    pub fn blocks(&self) -> u32 {
        self.valid_count.len() as u32
    }

    /// The block holding a physical page.
    #[inline]
    pub fn block_of(&self, ppn: u32) -> u32 {
        match self.shift {
            Some(s) => ppn >> s,
            None => ppn / self.pages_per_block,
        }
    }

    /// The first physical page of a block.
    #[inline]
    pub fn first_page(&self, block: u32) -> u32 {
        match self.shift {
            Some(s) => block << s,
            None => block * self.pages_per_block,
        }
    }

    #[inline]
    pub fn is_valid(&self, ppn: u32) -> bool {
        self.valid[(ppn >> 6) as usize] & (1u64 << (ppn & 63)) != 0
    }

    /// Mark a block as a write frontier for `stream`.
    pub fn open(&mut self, block: u32, stream: u8) {
        debug_assert_eq!(self.status[block as usize], BlockStatus::Free);
        let b = block as usize;
        self.status[b] = BlockStatus::Open;
        self.stream[b] = stream;
        self.open_seq[b] = self.next_seq;
        self.next_seq += 1;
    }

    /// Program the next page of an open block with logical page `lpn`.
    /// Returns the physical page and whether the block is now full.
    #[inline(always)]
    pub fn program(&mut self, block: u32, lpn: u32, now: u64) -> (u32, bool) {
        let b = block as usize;
        debug_assert_eq!(self.status[b], BlockStatus::Open);
        let page = self.write_ptr[b];
        debug_assert!(page < self.pages_per_block);
        let ppn = self.first_page(block) + page;
        self.owner[ppn as usize] = lpn;
        self.valid[(ppn >> 6) as usize] |= 1u64 << (ppn & 63);
        self.valid_count[b] += 1;
        self.write_ptr[b] = page + 1;
        self.last_modified[b] = now;
        let full = page + 1 == self.pages_per_block;
        if full {
            self.status[b] = BlockStatus::Closed;
        }
        (ppn, full)
    }

    /// Prefetch what invalidating page `ppn` will touch (its validity word and its
    /// block's counts); a hint, nothing for `NONE`.
    #[inline(always)]
    pub fn prefetch_page(&self, ppn: u32) {
        if ppn == NONE {
            return;
        }
        let b = self.block_of(ppn) as usize;
        crate::table::prefetch(&self.valid, (ppn >> 6) as usize);
        crate::table::prefetch(&self.valid_count, b);
        crate::table::prefetch(&self.last_modified, b);
    }

    /// GC's copy of a run of valid pages `from` (all of one block) into the open block
    /// `to`, which has room for all of them: each copy keeps its page's owner and the
    /// source dies, exactly as [`FlashState::invalidate`] then [`FlashState::program`]
    /// page by page would leave them. Returns the first new page and whether `to` is
    /// now full (and closed).
    pub fn move_pages(&mut self, from: &[u32], to: u32, now: u64) -> (u32, bool) {
        let t = to as usize;
        let n = from.len() as u32;
        let page = self.write_ptr[t];
        debug_assert_eq!(self.status[t], BlockStatus::Open);
        debug_assert!(page + n <= self.pages_per_block);
        let first = self.first_page(to) + page;
        if from.is_empty() {
            return (first, false);
        }
        for (dst, &src) in (first..).zip(from) {
            debug_assert!(self.is_valid(src));
            self.valid[(src >> 6) as usize] &= !(1u64 << (src & 63));
            self.owner[dst as usize] = self.owner[src as usize];
            self.valid[(dst >> 6) as usize] |= 1u64 << (dst & 63);
        }
        let b = self.block_of(from[0]) as usize;
        debug_assert!(from.iter().all(|&p| self.block_of(p) as usize == b));
        self.valid_count[b] -= n;
        self.last_modified[b] = now;
        self.valid_count[t] += n;
        self.write_ptr[t] = page + n;
        self.last_modified[t] = now;
        let full = page + n == self.pages_per_block;
        if full {
            self.status[t] = BlockStatus::Closed;
        }
        (first, full)
    }

    /// Invalidate a valid page; returns its block and the block's new valid count.
    #[inline]
    pub fn invalidate(&mut self, ppn: u32, now: u64) -> (u32, u32) {
        debug_assert!(self.is_valid(ppn));
        self.valid[(ppn >> 6) as usize] &= !(1u64 << (ppn & 63));
        let block = self.block_of(ppn);
        let b = block as usize;
        self.valid_count[b] -= 1;
        self.last_modified[b] = now;
        (block, self.valid_count[b])
    }

    /// Make a dead, still programmed page valid again for logical page `lpn` (a dead-value
    /// pool revival); returns its block and the block's new valid count.
    #[inline]
    pub fn revive(&mut self, ppn: u32, lpn: u32, now: u64) -> (u32, u32) {
        debug_assert!(!self.is_valid(ppn));
        let block = self.block_of(ppn);
        let b = block as usize;
        debug_assert!(ppn - self.first_page(block) < self.write_ptr[b]);
        self.valid[(ppn >> 6) as usize] |= 1u64 << (ppn & 63);
        self.owner[ppn as usize] = lpn;
        self.valid_count[b] += 1;
        self.last_modified[b] = now;
        (block, self.valid_count[b])
    }

    /// Mark a closed block as GC's victim.
    pub fn take_victim(&mut self, block: u32) {
        debug_assert_eq!(self.status[block as usize], BlockStatus::Closed);
        self.status[block as usize] = BlockStatus::Victim;
    }

    /// Erase a block whose pages are all invalid; it becomes free.
    pub fn erase(&mut self, block: u32) {
        let b = block as usize;
        debug_assert_eq!(self.valid_count[b], 0);
        debug_assert_eq!(self.zombies[b], 0);
        if !self.owner.is_empty() {
            let first = self.first_page(block) as usize;
            let n = self.pages_per_block as usize;
            self.owner[first..first + n].fill(NONE);
        }
        self.write_ptr[b] = 0;
        self.erase_count[b] += 1;
        self.status[b] = BlockStatus::Free;
    }

    /// Count the validity bits of a block (for invariant checks).
    pub fn count_valid_bits(&self, block: u32) -> u32 {
        let first = self.first_page(block);
        (first..first + self.pages_per_block)
            .filter(|&p| self.is_valid(p))
            .count() as u32
    }

    /// The valid pages of a block, in page order.
    pub fn valid_pages(&self, block: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.first_page(block);
        let end = first + self.write_ptr[block as usize];
        // A word of validity bits at a time: its set bits in order, masked to the block.
        (first / 64..end.div_ceil(64)).flat_map(move |w| {
            let base = w * 64;
            let mut bits = self.valid[w as usize];
            if base < first {
                bits &= !0u64 << (first - base);
            }
            if end < base + 64 {
                bits &= (1u64 << (end - base)) - 1;
            }
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let p = base + bits.trailing_zeros();
                    bits &= bits - 1;
                    p
                })
            })
        })
    }

    /// Block `b`'s known zombies as a victim score counts them: each whole, or by its
    /// weight (`zombie_weighted`).
    #[inline]
    pub fn weighted_zombies(&self, b: u32) -> u32 {
        match self.zombie_weighted.get(b as usize) {
            Some(&w) => w,
            None => self.zombies[b as usize],
        }
    }

    /// Bytes of memory held by the state arrays.
    pub fn memory_bytes(&self) -> usize {
        self.owner.len() * 4
            + self.valid.len() * 8
            + self.valid_count.len() * (4 + 4 + 4 + 8 + 8 + 1 + 1 + 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use proptest::prelude::*;

    fn flash(pages_per_block: u32) -> FlashState {
        let mut cfg = Config::preset("default").unwrap();
        cfg.set("ftl.over_provisioning", "0.25").unwrap();
        cfg.set("flash.channels", "1").unwrap();
        cfg.set("flash.chips_per_channel", "1").unwrap();
        cfg.set("flash.blocks_per_plane", "64").unwrap();
        cfg.set("flash.pages_per_block", &pages_per_block.to_string())
            .unwrap();
        FlashState::new(&Geometry::new(&cfg).unwrap())
    }

    proptest! {
        /// Word-at-a-time `valid_pages` and run-at-a-time `move_pages` leave what
        /// the page-by-page definitions do, for block sizes that do and do not
        /// divide a 64-bit word.
        #[test]
        fn runs_match_pages(
            ppb in prop::sample::select(vec![3u32, 32, 64, 100, 128, 256]),
            kills in prop::collection::vec(any::<bool>(), 256),
            written in 0u32..=256,
        ) {
            let mut a = flash(ppb);
            let written = written.min(ppb);
            let (victim, to) = (3u32, 5u32);
            a.open(victim, 0);
            for i in 0..written {
                a.program(victim, 1000 + i, 1);
            }
            for i in 0..written {
                if kills[i as usize] {
                    a.invalidate(a.first_page(victim) + i, 2);
                }
            }
            let naive: Vec<u32> = (a.first_page(victim)..a.first_page(victim) + written)
                .filter(|&p| a.is_valid(p))
                .collect();
            prop_assert_eq!(a.valid_pages(victim).collect::<Vec<_>>(), naive.clone());
            let mut b = a.clone();
            a.open(to, 1);
            b.open(to, 1);
            let (first, full) = a.move_pages(&naive, to, 9);
            let mut last = (NONE, false);
            for &p in &naive {
                let lpn = b.owner[p as usize];
                b.invalidate(p, 9);
                last = b.program(to, lpn, 9);
            }
            if let Some(&first_b) = naive.first() {
                prop_assert_eq!(first, b.first_page(to));
                prop_assert_eq!(full, last.1);
                prop_assert!(b.owner[first_b as usize] != NONE);
            }
            prop_assert_eq!(&a.owner, &b.owner);
            prop_assert_eq!(&a.valid, &b.valid);
            prop_assert_eq!(&a.valid_count, &b.valid_count);
            prop_assert_eq!(&a.write_ptr, &b.write_ptr);
            prop_assert_eq!(&a.last_modified, &b.last_modified);
            prop_assert_eq!(&a.status, &b.status);
        }
    }
}
