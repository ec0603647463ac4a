//! What every block-mapped FTL (SuperBlock, FAST, block) keeps the same way: the flash
//! state, the flash-operations layer, counters, the integrity oracle, the host-shadow
//! bits the notification channel sets, and the trait methods that only pass these on
//! ([`block_mapped_common!`]).
//!
//! ```text
//!   FtlBase ── flash: FlashState      pages, validity, erase counts (shared arrays)
//!           ── ops: FlashOps          counts by cause, timing
//!           ── counters, oracle, host-shadow bits, logical clock
//!           ── free: FIFO of erased blocks, taken round-robin over the planes
//! ```
//!
//! Each FTL keeps its own mapping (data blocks, log blocks, superblocks) on top and
//! implements writes, reads, trims, merges and its invariant checks itself.

use crate::config::{Config, Geometry};
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, FlashState, NONE};
use crate::ftl::{FlashOps, Wear};
use crate::stats::Counters;
use crate::verify::Oracle;
use std::collections::VecDeque;

/// The shared state of a block-mapped FTL.
pub struct FtlBase {
    pub geo: Geometry,
    pub flash: FlashState,
    pub ops: FlashOps,
    pub counters: Counters,
    pub oracle: Option<Oracle>,
    /// Logical time: host page writes (stamps blocks' last modification).
    pub clock: u64,
    /// Erased blocks per plane, FIFO (erased blocks go to the back).
    free: Vec<VecDeque<u32>>,
    free_count: u32,
    /// The plane the next block is taken from (round-robin).
    plane_cursor: u32,
    /// Host-shadow bits (the host holds a dirty newer copy), set by the notification
    /// channel; the block-mapped FTLs do not score them, the device reads them.
    zombie_bits: Vec<u64>,
    zombie_known: u64,
}

impl FtlBase {
    /// A freshly erased device; `verify` keeps the integrity oracle.
    pub fn new(cfg: &Config, verify: bool) -> Result<Self> {
        let geo = Geometry::new(cfg)?;
        let flash = FlashState::new(&geo);
        let mut free = vec![VecDeque::new(); geo.planes as usize];
        let mut free_count = 0;
        for b in 0..geo.blocks {
            if flash.status[b as usize] == BlockStatus::Free {
                free[geo.plane_of(b) as usize].push_back(b);
                free_count += 1;
            }
        }
        let oracle = verify.then(|| {
            Oracle::new(
                geo.logical_pages,
                geo.blocks as u64 * geo.pages_per_block as u64,
            )
        });
        Ok(FtlBase {
            ops: FlashOps::new(cfg, &geo),
            counters: Counters::default(),
            oracle,
            clock: 0,
            free,
            free_count,
            plane_cursor: 0,
            zombie_bits: Vec::new(),
            zombie_known: 0,
            flash,
            geo,
        })
    }

    /// Pages per block.
    #[inline]
    pub fn ppb(&self) -> u32 {
        self.geo.pages_per_block
    }

    /// Check a host logical page number.
    #[inline]
    pub fn check_lpn(&self, lpn: u64) -> Result<u64> {
        if lpn < self.geo.logical_pages {
            Ok(lpn)
        } else {
            Err(Error::OutOfRange {
                lpn,
                logical_pages: self.geo.logical_pages,
            })
        }
    }

    /// Erased blocks available.
    #[inline]
    pub fn free_blocks(&self) -> u32 {
        self.free_count
    }

    /// Take an erased block (round-robin over the planes, the oldest erased block of
    /// the plane) and open it for `stream`. Errors if none is left: the FTL's own
    /// accounting must make sure one is.
    pub fn take_free(&mut self, stream: u8) -> Result<u32> {
        let planes = self.geo.planes;
        for i in 0..planes {
            let p = (self.plane_cursor + i) % planes;
            if let Some(b) = self.free[p as usize].pop_front() {
                self.plane_cursor = (p + 1) % planes;
                self.free_count -= 1;
                self.ops.need_erased(p, b);
                self.flash.open(b, stream);
                return Ok(b);
            }
        }
        Err(Error::integrity(
            "no free block is left: the FTL ran out of spare blocks",
        ))
    }

    /// Program `lpn` at page `offset` of the open `block` (offsets only go up within
    /// a block: pages skipped stay erased and can no longer be programmed). With
    /// timing on, a host or buffer program counts towards the request; a relocation
    /// is timed by [`FlashOps::copy`] beforehand.
    #[inline]
    pub fn program_at(
        &mut self,
        block: u32,
        offset: u32,
        lpn: u64,
        cause: crate::stats::Cause,
    ) -> u32 {
        let b = block as usize;
        debug_assert!(
            offset >= self.flash.write_ptr[b],
            "pages are programmed in order"
        );
        self.flash.write_ptr[b] = offset;
        let (ppn, _) = self.flash.program(block, lpn as u32, self.clock);
        let now = self.ops.now();
        self.ops.program(self.geo.plane_of(block), cause, now);
        ppn
    }

    /// Relocate a valid page into page `offset` of `block` for `cause` (a merge):
    /// the read (none when `from_buffer`) and the program are counted and timed.
    #[inline]
    pub fn copy_to(
        &mut self,
        block: u32,
        offset: u32,
        lpn: u64,
        from_plane: u32,
        from_buffer: bool,
        cause: crate::stats::Cause,
    ) -> u32 {
        let now = self.ops.now();
        self.ops.copy(
            from_plane,
            now,
            crate::timing::CopyKind {
                from_buffer,
                fast: false,
            },
            cause,
        );
        if from_buffer {
            self.counters.gc_buffer_reads += 1;
        }
        self.counters.gc_pages_copied += 1;
        self.program_at(block, offset, lpn, cause)
    }

    /// The valid page at `lpn`'s own offset in data block `d` (`NONE`: no data block,
    /// or that page is not valid): where a block-mapped FTL keeps the page.
    #[inline]
    pub fn in_data_block(&self, d: u32, lpn: u64) -> u32 {
        if d == NONE {
            return NONE;
        }
        let ppn = self.flash.first_page(d) + (lpn % self.ppb() as u64) as u32;
        if self.flash.is_valid(ppn) {
            ppn
        } else {
            NONE
        }
    }

    /// Invalidate a valid page.
    #[inline]
    pub fn invalidate(&mut self, ppn: u32) {
        self.flash.invalidate(ppn, self.clock);
    }

    /// Erase `block` (all its pages invalid) for `cause` and put it at the back of its
    /// plane's free list.
    pub fn erase(&mut self, block: u32, cause: crate::stats::Cause) {
        let b = block as usize;
        if self.flash.status[b] == BlockStatus::Closed {
            self.flash.take_victim(block);
        }
        self.flash.status[b] = BlockStatus::Victim;
        self.flash.erase(block);
        let plane = self.geo.plane_of(block);
        let now = self.ops.now();
        self.ops.erase(plane, block, now, cause);
        self.free[plane as usize].push_back(block);
        self.free_count += 1;
    }

    /// A host read of the page at `ppn` (`NONE`: unwritten), checked by the oracle.
    pub fn host_read(&mut self, lpn: u64, ppn: u32) -> Result<()> {
        self.counters.host_read_pages += 1;
        if ppn == NONE {
            self.counters.host_read_unmapped += 1;
            self.ops.dram();
        } else {
            let plane = self.geo.plane_of(self.flash.block_of(ppn));
            self.ops.host_read(plane);
        }
        if let Some(o) = &self.oracle {
            o.check_read(lpn as usize, (ppn != NONE).then_some(ppn))?;
        }
        Ok(())
    }

    /// A page a buffer pads its victim block with is read from flash (`Cause::Buffer`).
    pub fn pad_read(&mut self, ppn: u32) {
        let plane = self.geo.plane_of(self.flash.block_of(ppn));
        self.ops.read(plane, crate::stats::Cause::Buffer);
    }

    /// The oracle learns that `lpn` was written (a host or buffer write) to `ppn`.
    #[inline]
    pub fn oracle_write(&mut self, lpn: u64, ppn: u32, value: Option<u64>) {
        if let Some(o) = &mut self.oracle {
            match value {
                Some(v) => o.write_value(lpn as usize, ppn, v),
                None => o.write(lpn as usize, ppn),
            }
        }
    }

    /// The oracle learns that a page's content moved.
    #[inline]
    pub fn oracle_copy(&mut self, from: u32, to: u32) {
        if let Some(o) = &mut self.oracle {
            o.copy(from, to);
        }
    }

    /// A write of `lpn` for `cause` begins: the page number is checked, a host page
    /// is counted (a buffer write-back was counted when it entered the buffer), the
    /// logical clock advances, and the page is no longer host-shadow — unless this is
    /// a write-back from the device buffer: the host may still hold a newer copy.
    #[inline]
    pub fn begin_write(&mut self, lpn: u64, cause: crate::stats::Cause) -> Result<u64> {
        let lpn = self.check_lpn(lpn)?;
        self.clock += 1;
        if cause == crate::stats::Cause::Host {
            self.counters.host_write_pages += 1;
        }
        if cause != crate::stats::Cause::Buffer {
            self.written(lpn);
        }
        Ok(lpn)
    }

    /// Every counter so far.
    pub fn counters(&self) -> Counters {
        Counters {
            programs: self.ops.programs,
            reads: self.ops.reads,
            erases: self.ops.erases,
            gc_latency_ns: self.ops.gc_latency_ns(self.counters.gc_buffer_reads, 0),
            io_time_ns: self.ops.io_time_ns(self.counters.gc_buffer_reads, 0),
            ..self.counters
        }
    }

    /// The host says `lpn` has a dirty newer copy above the device, or not.
    pub fn set_zombie(&mut self, lpn: u64, zombie: bool) -> Result<()> {
        let l = self.check_lpn(lpn)? as usize;
        if self.zombie_bits.is_empty() {
            if !zombie {
                return Ok(());
            }
            self.zombie_bits = vec![0; (self.geo.logical_pages as usize).div_ceil(64)];
        }
        let mask = 1u64 << (l & 63);
        let was = self.zombie_bits[l >> 6] & mask != 0;
        if was != zombie {
            self.zombie_bits[l >> 6] ^= mask;
            if zombie {
                self.zombie_known += 1;
            } else {
                self.zombie_known -= 1;
            }
        }
        Ok(())
    }

    /// Whether the device knows `lpn` as host-shadow.
    #[inline]
    pub fn is_host_shadow(&self, lpn: u64) -> bool {
        let l = lpn as usize;
        self.zombie_bits
            .get(l >> 6)
            .is_some_and(|w| w & (1u64 << (l & 63)) != 0)
    }

    /// Logical pages known as host-shadow.
    pub fn known_zombies(&self) -> u64 {
        self.zombie_known
    }

    /// A written page is the newest copy: it is not host-shadow any more.
    #[inline]
    pub fn written(&mut self, lpn: u64) {
        if self.zombie_known > 0 && self.is_host_shadow(lpn) {
            let _ = self.set_zombie(lpn, false);
        }
    }

    /// Restart after a power-off: host-shadow bits are gone, the oracle learns what
    /// the buffer lost.
    pub fn restart(&mut self, lost: &[u64]) {
        self.zombie_bits.clear();
        self.zombie_known = 0;
        if let Some(o) = self.oracle.as_mut() {
            o.power_lost(lost);
        }
    }

    /// Erase-count summary over usable blocks.
    pub fn wear(&self) -> Wear {
        Wear::of(&self.flash)
    }

    /// Check the free lists and every block's valid count against its validity bits.
    pub fn check_blocks(&self) -> Result<()> {
        let mut listed = 0;
        for list in &self.free {
            for &b in list {
                if self.flash.status[b as usize] != BlockStatus::Free {
                    return Err(Error::integrity(format!(
                        "block {b} is on a free list but is {:?}",
                        self.flash.status[b as usize]
                    )));
                }
                listed += 1;
            }
        }
        if listed != self.free_count {
            return Err(Error::integrity(format!(
                "{listed} blocks on the free lists, counted {}",
                self.free_count
            )));
        }
        for b in 0..self.geo.blocks {
            let bits = self.flash.count_valid_bits(b);
            if bits != self.flash.valid_count[b as usize] {
                return Err(Error::integrity(format!(
                    "block {b}: {bits} valid pages, counted {}",
                    self.flash.valid_count[b as usize]
                )));
            }
        }
        Ok(())
    }

    /// Free blocks × pages plus the unwritten pages of `open` blocks.
    pub fn held_back_pages(&self, open: impl Iterator<Item = u32>) -> u64 {
        let ppb = self.ppb() as u64;
        self.free_count as u64 * ppb
            + open
                .filter(|&b| b != NONE)
                .map(|b| ppb - self.flash.write_ptr[b as usize] as u64)
                .sum::<u64>()
    }

    /// Valid flash pages.
    pub fn valid_pages(&self) -> u64 {
        self.flash.valid_count.iter().map(|&v| v as u64).sum()
    }

    /// Bytes of the shared state.
    pub fn memory_bytes(&self) -> usize {
        self.flash.memory_bytes() + self.free_count as usize * 4 + self.zombie_bits.len() * 8
    }
}

/// The [`crate::ftl::Ftl`] methods every block-mapped FTL shares. The FTL keeps its
/// [`FtlBase`] in the field `base` and has two inherent methods the macro calls:
/// `newest(&self, lpn) -> u32`, the physical page of `lpn`'s newest copy (`NONE`: none),
/// and `write_inner(&mut self, lpn, value, cause, buffer) -> Result<()>`, its write
/// path. Reads, padding (read the page, write it again with the content it holds) and
/// `mapped` follow from them. It has no background GC, retention refresh or content
/// layer: [`crate::ftl::Capabilities`] refuses the keys that would ask for them, so
/// `idle` and `tick` have nothing to do.
macro_rules! block_mapped_common {
    () => {
        fn write_page(
            &mut self,
            lpn: u64,
            value: Option<u64>,
            cause: $crate::stats::Cause,
            buffer: &mut dyn $crate::ftl::BufferView,
        ) -> $crate::error::Result<()> {
            self.write_inner(lpn, value, cause, buffer)
        }
        fn read(&mut self, lpn: u64) -> $crate::error::Result<()> {
            let lpn = self.base.check_lpn(lpn)?;
            let ppn = self.newest(lpn);
            self.base.host_read(lpn, ppn)
        }
        fn pad(
            &mut self,
            lpn: u64,
            buffer: &mut dyn $crate::ftl::BufferView,
        ) -> $crate::error::Result<()> {
            let lpn = self.base.check_lpn(lpn)?;
            let ppn = self.newest(lpn);
            if ppn == $crate::flash::NONE {
                return Ok(());
            }
            self.base.pad_read(ppn);
            // The same content is written again.
            let value = self
                .base
                .oracle
                .as_ref()
                .and_then(|o| o.content_of(lpn as usize));
            self.write_inner(lpn, value, $crate::stats::Cause::Buffer, buffer)
        }
        fn mapped(&self, lpn: u64) -> Option<u32> {
            if lpn >= self.base.geo.logical_pages {
                return None;
            }
            Some(self.newest(lpn)).filter(|&p| p != $crate::flash::NONE)
        }
        fn logical_pages(&self) -> u64 {
            self.base.geo.logical_pages
        }
        fn prefetch(&self, _lpn: u64) {}
        fn set_timing(&mut self, on: bool) {
            self.base.ops.set_timing(on);
        }
        fn begin(&mut self, now: u64) {
            self.base.ops.begin(now);
        }
        fn finish(&mut self) -> u64 {
            self.base.ops.finish()
        }
        fn idle(
            &mut self,
            _from: u64,
            _until: u64,
            _buffer: &mut dyn $crate::ftl::BufferView,
        ) -> $crate::error::Result<()> {
            Ok(())
        }
        fn tick(
            &mut self,
            _now: u64,
            _buffer: &mut dyn $crate::ftl::BufferView,
        ) -> $crate::error::Result<()> {
            Ok(())
        }
        fn restart(
            &mut self,
            _now: u64,
            lost: &[u64],
            _buffer: &mut dyn $crate::ftl::BufferView,
        ) -> $crate::error::Result<()> {
            self.base.restart(lost);
            Ok(())
        }
        fn busy_until(&self) -> u64 {
            self.base.ops.busy_until()
        }
        fn timing_summary(&self, elapsed: u64) -> Option<$crate::timing::TimingSummary> {
            self.base.ops.summary(elapsed)
        }
        fn set_zombie(&mut self, lpn: u64, zombie: bool) -> $crate::error::Result<()> {
            self.base.set_zombie(lpn, zombie)
        }
        fn known_zombies(&self) -> u64 {
            self.base.known_zombies()
        }
        fn is_host_shadow(&self, lpn: u64) -> bool {
            self.base.is_host_shadow(lpn)
        }
        fn count_request(&mut self) {
            self.base.counters.host_requests += 1;
        }
        fn host_write_pages(&self) -> u64 {
            self.base.counters.host_write_pages
        }
        fn counters(&self) -> $crate::stats::Counters {
            self.base.counters()
        }
        fn oracle(&self) -> Option<&$crate::verify::Oracle> {
            self.base.oracle.as_ref()
        }
        fn wear(&self) -> $crate::ftl::Wear {
            self.base.wear()
        }
        fn content_stats(
            &self,
        ) -> Option<(
            $crate::content::ContentCounters,
            $crate::content::ContentGauges,
        )> {
            None
        }
    };
}
pub(crate) use block_mapped_common;
