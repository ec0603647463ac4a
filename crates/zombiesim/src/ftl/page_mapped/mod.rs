//! Page-mapped FTL: every logical page maps to any physical page.
//!
//! ```text
//!  host write(L) ──► invalidate old copy ──► plane p = next in round-robin
//!                                            │
//!                     open block of (p, host stream) full? ──► take a free block of p's
//!                                            │                GC unit; if the unit now has
//!                                            ▼                fewer than `low` free blocks:
//!                     program next page, map L to it          GC until it has `high`
//!
//!  GC(unit): victim = policy.select() ─► copy each valid page to the unit's GC frontier
//!            (or the host frontier when `ftl.gc_frontier = "shared"`) ─► erase ─► free list
//! ```
//!
//! Host writes stripe page by page across all planes. Each GC unit (`gc.scope`:
//! device, die or plane) has its own victim policy and free-block count; a victim's
//! valid pages are copied to a frontier on the victim's own plane (copy-back), so
//! one victim needs at most one fresh block. Free blocks are kept per
//! plane in FIFO order (erased blocks go to the back, which spreads wear); a plane
//! whose list is empty borrows from the richest plane of its unit.
//!
//! Logical time (`clock`) counts host page writes; it stamps blocks for the age term
//! of cost-benefit.

use crate::config::{Allocation, Config, FtlLayout};
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, FlashState, Geometry, NONE};
use crate::ftl::{BlockManager, BufferView, FlashOps, Ftl, RefreshQueues, Wear};
use crate::stats::{Cause, Counters};
use crate::timing::TimingSummary;
use crate::verify::Oracle;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use translation::Translation;

/// The page-mapped FTL.
pub struct PageMappedFtl {
    geo: Geometry,
    /// GC units and write streams.
    layout: FtlLayout,
    flash: FlashState,
    l2p: Vec<u32>,
    /// One bit per logical page the device knows as a zombie (allocated on first use).
    zombie_bits: Option<Vec<u64>>,
    zombie_known: u64,
    /// DAC region of each logical page (empty with one region).
    region: Vec<u8>,
    /// Free lists, write frontiers, GC units and their victim policies.
    blocks: BlockManager,
    host_cursor: u32,
    allocation: Allocation,
    clock: u64,
    in_gc: bool,
    low: u32,
    high: u32,
    /// Victims per GC trigger (0 = until `high`), and the free-block count at or
    /// below which GC goes on past that bound.
    max_victims: u32,
    hard: u32,
    /// Background GC target (0 = off).
    background: u32,
    counters: Counters,
    oracle: Option<Oracle>,
    rng: Pcg64Mcg,
    /// Reused buffer of a victim's valid pages.
    scratch: Vec<u32>,
    /// Reads, programs, copies and erases: counted by cause and timed.
    ops: FlashOps,
    /// Content-aware flash (dedup, dead-value pool), when `content` enables it.
    content: Option<Box<content::ContentState>>,
    /// What GC does with shadow pages (003).
    shadow: ShadowGc,
    /// Retention refresh queues, when fast-write blocks or a normal retention exist.
    refresh: Option<RefreshQueues>,
    /// The device's clock (ns): issue time with timing on, else arrival time.
    now_ns: u64,
    /// DFTL's cached mapping table and translation pages (`ftl.kind = "dftl"`); the
    /// page-mapped FTL checks it once per operation.
    dftl: Option<Box<Translation>>,
}

/// What GC does with the valid pages of a victim that have a newer copy above the
/// flash (003 §3.3, SPEC §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShadowGc {
    /// Device- and twin-shadow pages are taken from the device write buffer.
    pub reads: bool,
    /// Host- and twin-shadow pages go to the zombie stream programmed in fast-write mode.
    pub fast: bool,
    /// Device-shadow pages are not copied at all (their flash copy is dropped).
    pub skip: bool,
}

impl ShadowGc {
    pub fn of(cfg: &Config) -> Self {
        ShadowGc {
            reads: cfg.gc.shadow_reads,
            fast: cfg.gc.fast_write,
            skip: cfg.gc.skip_shadows,
        }
    }
}

/// Ask the CPU to start loading `table[index]` into cache (a hint; no effect on results).
#[inline(always)]
fn prefetch(table: &[u32], index: usize) {
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

impl PageMappedFtl {
    /// A freshly erased device. `seed` drives the randomised policies; `verify` keeps
    /// the integrity oracle.
    pub fn new(cfg: &Config, seed: u64, verify: bool) -> Result<Self> {
        let geo = Geometry::new(cfg)?;
        let layout = FtlLayout::new(cfg, &geo)?;
        Self::build(cfg, seed, verify, geo.clone(), geo, layout, None)
    }

    /// The FTL over `geo` (the host's view) storing `inner.logical_pages` logical
    /// pages (the host's and, with DFTL, the translation pages) laid out as `layout`.
    fn build(
        cfg: &Config,
        seed: u64,
        verify: bool,
        geo: Geometry,
        inner: Geometry,
        layout: FtlLayout,
        dftl: Option<Box<Translation>>,
    ) -> Result<Self> {
        let flash = FlashState::new(&geo);
        let blocks = BlockManager::new(cfg, &inner, &layout, &flash);
        let stored = inner.logical_pages as usize;
        let oracle = verify.then(|| {
            Oracle::new(
                stored as u64,
                geo.blocks as u64 * geo.pages_per_block as u64,
            )
        });
        Ok(PageMappedFtl {
            l2p: vec![NONE; stored],
            zombie_bits: None,
            zombie_known: 0,
            region: if layout.regions > 1 {
                vec![0; stored]
            } else {
                Vec::new()
            },
            blocks,
            host_cursor: 0,
            allocation: cfg.ftl.allocation,
            clock: 0,
            in_gc: false,
            low: cfg.gc.low_watermark,
            high: cfg.gc.high_watermark,
            max_victims: cfg.gc.max_victims_per_trigger,
            hard: cfg.gc.hard_watermark,
            background: if cfg.gc.background {
                cfg.gc.background_watermark
            } else {
                0
            },
            counters: Counters::default(),
            oracle,
            rng: Pcg64Mcg::seed_from_u64(seed),
            scratch: Vec::with_capacity(geo.pages_per_block as usize),
            ops: FlashOps::new(cfg, &geo),
            content: cfg.content.enabled().then(|| {
                Box::new(content::ContentState::new(
                    cfg,
                    geo.logical_pages,
                    geo.blocks as u64 * geo.pages_per_block as u64,
                    geo.blocks,
                ))
            }),
            shadow: ShadowGc::of(cfg),
            refresh: (cfg.gc.fast_write || cfg.ftl.retention_s > 0.0).then(|| {
                let interval = |t: f64| ((t - cfg.ftl.power_off_s).max(0.0) * 1e9) as u64;
                RefreshQueues::new(
                    if cfg.ftl.retention_s > 0.0 {
                        interval(cfg.ftl.retention_s).max(1)
                    } else {
                        0
                    },
                    interval(cfg.ftl.fast_retention_s).max(1),
                )
            }),
            now_ns: 0,
            dftl,
            flash,
            geo,
            layout,
        })
    }

    /// The resolved geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// The flash state (read-only), for tests and analyses.
    pub fn flash(&self) -> &FlashState {
        &self.flash
    }

    /// The physical page a logical page maps to, if any.
    pub fn lookup(&self, lpn: u64) -> Option<u32> {
        if lpn >= self.geo.logical_pages {
            return None;
        }
        self.l2p.get(lpn as usize).copied().filter(|&p| p != NONE)
    }

    /// Write one logical page: for the host (`Cause::Host`, counted as a host page)
    /// or for the device's write buffer (`Cause::Buffer`); the newest copy of `lpn` as
    /// far as the device knows, so whatever it knew of `lpn` as a zombie is gone.
    #[inline]
    fn write_one(
        &mut self,
        lpn: u64,
        value: Option<u64>,
        cause: Cause,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        if self.content.is_some() {
            return self.write_content(lpn, value, cause, buffer);
        }
        let l = self.check_lpn(lpn)?;
        self.clock += 1;
        if cause == Cause::Host {
            self.counters.host_write_pages += 1;
        }
        let old = self.l2p[l];
        self.drop_zombie(l, old);
        if old != NONE {
            self.invalidate(old);
        }
        let stream = self.host_stream(l, old != NONE);
        let plane = self.host_plane();
        let ppn = self.program(plane, stream, l as u32, cause, self.ops.now(), buffer)?;
        self.l2p[l] = ppn;
        if let Some(o) = &mut self.oracle {
            match value {
                Some(v) => o.write_value(l, ppn, v),
                None => o.write(l, ppn),
            }
        }
        Ok(())
    }

    #[inline]
    fn check_lpn(&self, lpn: u64) -> Result<usize> {
        if lpn < self.geo.logical_pages {
            Ok(lpn as usize)
        } else {
            Err(Error::OutOfRange {
                lpn,
                logical_pages: self.geo.logical_pages,
            })
        }
    }

    #[inline]
    fn invalidate(&mut self, ppn: u32) {
        let (block, valid) = self.flash.invalidate(ppn, self.clock);
        let u = self.blocks.unit_of_block(block);
        let unit = &mut self.blocks.units[u];
        unit.valid -= 1;
        if self.flash.status[block as usize] == BlockStatus::Closed {
            unit.policy.invalidated(block, valid);
        }
    }

    /// The plane for the next host page: round-robin, or with dynamic allocation and
    /// timing on, the first plane (from the round-robin cursor) that can start soonest.
    #[inline]
    fn host_plane(&mut self) -> u32 {
        let planes = self.geo.planes;
        let mut plane = self.host_cursor;
        if self.allocation == Allocation::Dynamic && self.ops.timed() {
            let now = self.ops.now();
            let ready = |p: u32| self.ops.ready_at(p, now).unwrap_or(now);
            let full = |p: u32| {
                let unit = &self.blocks.units[self.blocks.unit_of_plane(p)];
                unit.valid >= unit.valid_limit
            };
            let mut best = if full(plane) { u64::MAX } else { ready(plane) };
            if best > now {
                for i in 1..planes {
                    let p = (self.host_cursor + i) % planes;
                    if full(p) {
                        continue;
                    }
                    let r = ready(p);
                    if r < best {
                        (plane, best) = (p, r);
                        if r <= now {
                            break;
                        }
                    }
                }
            }
        }
        self.host_cursor = if plane + 1 == planes { 0 } else { plane + 1 };
        plane
    }

    /// Program `lpn` into the open block of `(plane, stream)`, opening one if needed.
    /// With timing on, a host program is issued at `start` and its completion counts
    /// towards the current request's.
    #[inline]
    fn program(
        &mut self,
        plane: u32,
        stream: u32,
        lpn: u32,
        cause: Cause,
        start: u64,
        buffer: &mut dyn BufferView,
    ) -> Result<u32> {
        loop {
            if let Some(ppn) = self.program_open(plane, stream, lpn, cause, start) {
                return Ok(ppn);
            }
            // Opening a block may run GC, which may fill and close it again (shared
            // frontier): go round until a block is open.
            self.open_block(plane, stream, buffer)?;
        }
    }

    /// Program `lpn` into the open block of `(plane, stream)` if it has one (the
    /// common case, kept apart from opening a block so that it inlines into GC).
    #[inline(always)]
    fn program_open(
        &mut self,
        plane: u32,
        stream: u32,
        lpn: u32,
        cause: Cause,
        start: u64,
    ) -> Option<u32> {
        let block = self.blocks.open_block(plane, stream);
        if block == NONE {
            return None;
        }
        let (ppn, full) = self.flash.program(block, lpn, self.clock);
        let u = self.blocks.unit_of_block(block);
        self.blocks.units[u].valid += 1;
        // Relocations are timed as a whole with their copy.
        self.ops.program(self.geo.plane_of(block), cause, start);
        if full {
            self.blocks.set_open(plane, stream, NONE);
            self.blocks.units[u].policy.insert(block, &self.flash);
        }
        Some(ppn)
    }

    fn open_block(&mut self, plane: u32, stream: u32, buffer: &mut dyn BufferView) -> Result<()> {
        let block = self.blocks.take_free(plane)?;
        let on_plane = self.geo.plane_of(block);
        self.ops.need_erased(on_plane, block);
        self.flash.open(block, stream as u8);
        self.blocks.set_open(plane, stream, block);
        if let Some(r) = self.refresh.as_mut() {
            let fast = self.shadow.fast && Some(stream) == self.layout.zombie_stream;
            r.opened(
                block,
                self.flash.open_seq[block as usize],
                self.now_ns,
                fast,
            );
        }
        let u = self.blocks.unit_of_plane(plane);
        if !self.in_gc && self.blocks.units[u].free < self.low {
            self.collect(u, buffer)?;
        }
        Ok(())
    }

    /// Whether `block` is programmed in fast-write mode.
    #[inline]
    fn is_fast(&self, block: u32) -> bool {
        self.shadow.fast
            && Some(self.flash.stream[block as usize] as u32) == self.layout.zombie_stream
    }
}

impl PageMappedFtl {
    /// [`Ftl::write_page`] through the full mapping table.
    #[inline]
    fn write_mapped(
        &mut self,
        lpn: u64,
        value: Option<u64>,
        cause: Cause,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        let keep_zombie =
            cause == Cause::Buffer && self.zombie_known > 0 && self.is_host_shadow(lpn);
        self.write_one(lpn, value, cause, buffer)?;
        if keep_zombie {
            self.mark_zombie(lpn)?;
        }
        Ok(())
    }

    /// [`Ftl::read`] through the full mapping table.
    #[inline]
    fn read_mapped(&mut self, lpn: u64) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        if let Some(c) = self.content.as_deref_mut() {
            c.on_read(l);
        }
        self.counters.host_read_pages += 1;
        let ppn = self.l2p[l];
        if ppn == NONE {
            self.counters.host_read_unmapped += 1;
            self.ops.dram();
        } else {
            self.ops
                .host_read(self.geo.plane_of(self.flash.block_of(ppn)));
        }
        if let Some(o) = &self.oracle {
            o.check_read(l, (ppn != NONE).then_some(ppn))?;
        }
        Ok(())
    }

    /// [`Ftl::pad`] through the full mapping table: the page's current content is read
    /// and written again for the buffer; the configuration keeps padding buffers and
    /// the content layer apart.
    fn pad_mapped(&mut self, lpn: u64, buffer: &mut dyn BufferView) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        let ppn = self.l2p[l];
        if ppn == NONE {
            return Ok(());
        }
        if self.content.is_some() {
            return Err(Error::config(
                "device.buffer_policy",
                "a padding buffer cannot run with the content layer (content.*)",
            ));
        }
        self.ops
            .read(self.geo.plane_of(self.flash.block_of(ppn)), Cause::Buffer);
        // The page keeps its content (known to the oracle when one runs).
        let value = self.oracle.as_ref().and_then(|o| o.content_of(l));
        self.write_mapped(lpn, value, Cause::Buffer, buffer)
    }

    /// [`Ftl::trim`] through the full mapping table.
    #[inline]
    fn trim_mapped(&mut self, lpn: u64) -> Result<()> {
        if self.content.is_some() {
            return self.trim_content(lpn);
        }
        let l = self.check_lpn(lpn)?;
        self.counters.host_trim_pages += 1;
        let ppn = self.l2p[l];
        self.drop_zombie(l, ppn);
        if ppn != NONE {
            self.invalidate(ppn);
            self.l2p[l] = NONE;
        }
        if let Some(o) = &mut self.oracle {
            o.trim(l);
        }
        self.ops.dram();
        Ok(())
    }
}

impl Ftl for PageMappedFtl {
    fn logical_pages(&self) -> u64 {
        self.geo.logical_pages
    }

    /// A write-back from the device buffer is not the newest copy when the host holds
    /// a newer dirty one (the page was twin-shadow): the new flash copy stays
    /// host-shadow.
    #[inline]
    fn write_page(
        &mut self,
        lpn: u64,
        value: Option<u64>,
        cause: Cause,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        if self.dftl.is_some() {
            return self.dftl_write_page(lpn, value, cause, buffer);
        }
        self.write_mapped(lpn, value, cause, buffer)
    }

    fn content_stats(
        &self,
    ) -> Option<(
        crate::content::ContentCounters,
        crate::content::ContentGauges,
    )> {
        PageMappedFtl::content_stats(self)
    }

    fn read(&mut self, lpn: u64) -> Result<()> {
        if self.dftl.is_some() {
            return self.dftl_read(lpn);
        }
        self.read_mapped(lpn)
    }

    /// Padding rewrites the page's current content (read, then written for the
    /// buffer); a page of unknown content only (the configuration keeps padding
    /// buffers and the content layer apart).
    fn pad(&mut self, lpn: u64, buffer: &mut dyn BufferView) -> Result<()> {
        if self.dftl.is_some() {
            return self.dftl_pad(lpn, buffer);
        }
        self.pad_mapped(lpn, buffer)
    }

    fn trim(&mut self, lpn: u64) -> Result<()> {
        if self.dftl.is_some() {
            return self.dftl_trim(lpn);
        }
        self.trim_mapped(lpn)
    }
    #[inline]
    fn prefetch(&self, lpn: u64) {
        prefetch(&self.l2p, lpn as usize);
    }

    fn set_timing(&mut self, on: bool) {
        self.ops.set_timing(on);
        if let Some(c) = self.content.as_deref_mut() {
            c.reset_time();
        }
    }

    #[inline]
    fn begin(&mut self, now: u64) {
        self.ops.begin(now);
    }

    #[inline]
    fn finish(&mut self) -> u64 {
        self.ops.finish()
    }

    fn busy_until(&self) -> u64 {
        self.ops.busy_until()
    }

    fn idle(&mut self, from: u64, until: u64, buffer: &mut dyn BufferView) -> Result<()> {
        self.background_collect(from, until, buffer)?;
        self.dftl_flush_pending(buffer)
    }

    fn tick(&mut self, now: u64, buffer: &mut dyn BufferView) -> Result<()> {
        self.now_ns = self.now_ns.max(now);
        if self.refresh.is_some() {
            self.refresh_due(buffer)?;
            self.dftl_flush_pending(buffer)?;
        }
        Ok(())
    }

    fn restart(&mut self, now: u64, lost: &[u64], buffer: &mut dyn BufferView) -> Result<()> {
        self.now_ns = self.now_ns.max(now);
        self.clear_all_zombies();
        if let Some(o) = self.oracle.as_mut() {
            o.power_lost(lost);
        }
        self.refresh_fast_blocks(buffer)?;
        self.dftl_flush_pending(buffer)
    }

    fn timing_summary(&self, elapsed: u64) -> Option<TimingSummary> {
        self.ops.summary(elapsed)
    }

    fn count_request(&mut self) {
        self.counters.host_requests += 1;
    }

    #[inline]
    fn host_write_pages(&self) -> u64 {
        self.counters.host_write_pages
    }

    fn counters(&self) -> Counters {
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

    fn set_zombie(&mut self, lpn: u64, zombie: bool) -> Result<()> {
        if zombie {
            self.mark_zombie(lpn)
        } else {
            self.unmark_zombie(lpn)
        }
    }

    fn known_zombies(&self) -> u64 {
        self.zombie_known
    }

    fn is_host_shadow(&self, lpn: u64) -> bool {
        lpn < self.geo.logical_pages && self.is_zombie(lpn as usize)
    }

    fn mapped(&self, lpn: u64) -> Option<u32> {
        self.lookup(lpn)
    }

    fn verify(&self) -> Result<()> {
        self.check_invariants()?;
        self.check_zombies()?;
        if let Some(o) = &self.oracle {
            o.check_all(&self.l2p)?;
        }
        if let Some(t) = &self.dftl {
            t.check()?;
        }
        Ok(())
    }

    fn oracle(&self) -> Option<&Oracle> {
        self.oracle.as_ref()
    }

    fn wear(&self) -> Wear {
        Wear::of(&self.flash)
    }

    fn held_back_pages(&self) -> u64 {
        self.blocks
            .held_back_pages(&self.flash, self.geo.pages_per_block)
    }

    fn free_blocks(&self) -> u64 {
        self.blocks.free_blocks()
    }

    fn valid_pages(&self) -> u64 {
        self.blocks.valid_pages()
    }

    fn memory_bytes(&self) -> usize {
        self.flash.memory_bytes()
            + self.l2p.len() * 4
            + self.blocks.memory_bytes()
            + self.region.len()
            + self.zombie_bits.as_ref().map_or(0, |b| b.len() * 8)
            + self.content.as_ref().map_or(0, |c| c.memory_bytes())
            + self.refresh.as_ref().map_or(0, |r| r.memory_bytes())
            + self.dftl.as_ref().map_or(0, |t| t.memory_bytes())
    }
}

mod collect;
mod content;
mod invariants;
mod liveness;
#[cfg(test)]
mod tests;
mod translation;
