//! The state every FTL shares: the flash state, the flash-operations layer, counters,
//! the integrity oracle, the host-shadow marks the notification channel sets, and the
//! logical clock. Each FTL keeps one [`FtlBase`] and its own mapping on top.
//!
//! ```text
//!   FtlBase ── flash: FlashState      pages, validity, erase counts (shared arrays)
//!           ── ops: FlashOps          counts by cause, timing
//!           ── counters, oracle, marks: ZombieMarks, clock (host page writes)
//!
//!   page-mapped ── base + l2p + BlockManager (free blocks and victims per GC unit)
//!   superblock, FAST, block ── base + their block maps + FreeBlocks
//! ```
//!
//! The [`crate::ftl::Ftl`] trait reaches the base through `Ftl::base`; what every FTL
//! answers the same way (counters, timing, the marks, wear) is answered from it once,
//! in [`crate::ftl::FtlExt`].

use crate::config::{Config, Geometry};
use crate::error::{Error, Result};
use crate::flash::{FlashState, NONE};
use crate::ftl::{DeviceEvent, FlashOps, ZombieMarks};
use crate::stats::Counters;
use crate::verify::Oracle;
use serde::Serialize;

/// The state every FTL shares.
#[derive(Clone)]
pub struct FtlBase {
    pub geo: Geometry,
    pub flash: FlashState,
    pub ops: FlashOps,
    pub counters: Counters,
    pub oracle: Option<Oracle>,
    /// Logical time: host page writes (stamps blocks' last modification).
    pub clock: u64,
    /// Host-shadow marks (the host holds a dirty newer copy), set by the notification
    /// channel.
    pub marks: ZombieMarks,
}

impl FtlBase {
    /// A freshly erased device; `verify` keeps the integrity oracle.
    pub fn new(cfg: &Config, verify: bool) -> Result<Self> {
        let geo = Geometry::new(cfg)?;
        let stored = geo.logical_pages;
        Ok(Self::over(cfg, geo, stored, verify))
    }

    /// A freshly erased device of geometry `geo` (the host's view) storing `stored`
    /// logical pages (more than the host's when the FTL stores its own, DFTL's
    /// translation pages).
    pub fn over(cfg: &Config, geo: Geometry, stored: u64, verify: bool) -> Self {
        let flash = FlashState::new(&geo);
        let oracle =
            verify.then(|| Oracle::new(stored, geo.blocks as u64 * geo.pages_per_block as u64));
        FtlBase {
            ops: FlashOps::new(cfg, &geo),
            counters: Counters::default(),
            oracle,
            clock: 0,
            marks: ZombieMarks::default(),
            flash,
            geo,
        }
    }

    /// Pages per block.
    #[inline]
    pub fn ppb(&self) -> u32 {
        self.geo.pages_per_block
    }

    /// The logical block holding `lpn` and `lpn`'s offset in it (a block-mapped FTL's
    /// `(b, k)`: logical page `b·ppb + k`).
    #[inline]
    pub fn logical_block(&self, lpn: u64) -> (usize, u32) {
        let ppb = self.ppb() as u64;
        ((lpn / ppb) as usize, (lpn % ppb) as u32)
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

    /// A page a buffer pads its victim block with is read from flash
    /// (`Cause::Buffer`); the content it holds, to be written again (known to the
    /// oracle when one runs).
    pub fn pad_read(&mut self, lpn: u64, ppn: u32) -> Option<u64> {
        let plane = self.geo.plane_of(self.flash.block_of(ppn));
        self.ops.read(plane, crate::stats::Cause::Buffer);
        self.oracle
            .as_ref()
            .and_then(|o| o.content_of(lpn as usize))
    }

    /// What an FTL without background work (no background GC, no retention refresh:
    /// [`crate::ftl::Capabilities`] refuses the keys that would ask for them) does
    /// with a device event: timing and the host-shadow marks are the base's; a
    /// restart forgets the marks.
    pub fn on_event_without_background(&mut self, event: DeviceEvent) -> Result<()> {
        match event {
            DeviceEvent::Timing(on) => self.ops.set_timing(on),
            DeviceEvent::Idle { .. } | DeviceEvent::Tick { .. } | DeviceEvent::Lifetime { .. } => {}
            DeviceEvent::Restart { lost, .. } => self.restart(lost),
            DeviceEvent::HostShadow { lpn, marked } => self.set_zombie(lpn, marked)?,
        }
        Ok(())
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
            gc_latency_ns: self.ops.gc_latency_ns(
                self.counters.gc_buffer_reads,
                self.counters.gc_fast_programs,
            ),
            io_time_ns: self.ops.io_time_ns(
                self.counters.gc_buffer_reads,
                self.counters.gc_fast_programs,
            ),
            ..self.counters
        }
    }

    /// The host says `lpn` has a dirty newer copy above the device, or not.
    pub fn set_zombie(&mut self, lpn: u64, zombie: bool) -> Result<()> {
        let l = self.check_lpn(lpn)? as usize;
        if zombie {
            self.marks.mark(l, self.geo.logical_pages as usize);
        } else {
            self.marks.unmark(l);
        }
        Ok(())
    }

    /// Whether the device knows `lpn` as host-shadow.
    #[inline]
    pub fn is_host_shadow(&self, lpn: u64) -> bool {
        lpn < self.geo.logical_pages && self.marks.is_marked(lpn as usize)
    }

    /// A written page is the newest copy: it is not host-shadow any more.
    #[inline]
    pub fn written(&mut self, lpn: u64) {
        self.marks.unmark(lpn as usize);
    }

    /// Restart after a power-off: host-shadow marks are gone, the oracle learns what
    /// the buffer lost.
    pub fn restart(&mut self, lost: &[u64]) {
        self.marks.clear();
        if let Some(o) = self.oracle.as_mut() {
            o.power_lost(lost);
        }
    }

    /// Erase-count summary over usable blocks.
    pub fn wear(&self) -> Wear {
        Wear::of(&self.flash)
    }

    /// Check every block's valid count against its validity bits.
    pub fn check_valid_counts(&self) -> Result<()> {
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

    /// Valid flash pages.
    pub fn valid_pages(&self) -> u64 {
        self.flash.valid_count.iter().map(|&v| v as u64).sum()
    }

    /// Bytes of the shared state.
    pub fn memory_bytes(&self) -> usize {
        self.flash.memory_bytes() + self.marks.memory_bytes()
    }
}

/// Summary of block wear.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Wear {
    pub erase_min: u32,
    pub erase_mean: f64,
    pub erase_max: u32,
}

impl Wear {
    /// Erase counts over the usable (not reserved) blocks of `flash`.
    pub fn of(flash: &FlashState) -> Wear {
        let counts: Vec<u32> = (0..flash.blocks() as usize)
            .filter(|&b| flash.status[b] != crate::flash::BlockStatus::Reserved)
            .map(|b| flash.erase_count[b])
            .collect();
        let n = counts.len().max(1) as f64;
        Wear {
            erase_min: counts.iter().copied().min().unwrap_or(0),
            erase_mean: counts.iter().map(|&c| c as f64).sum::<f64>() / n,
            erase_max: counts.iter().copied().max().unwrap_or(0),
        }
    }
}
