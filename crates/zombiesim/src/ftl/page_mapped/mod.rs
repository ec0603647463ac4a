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
use crate::ftl::{
    BlockManager, BufferView, DeviceEvent, ExternalPolicies, Ftl, FtlBase, FtlSummary, PageWrite,
    RefreshQueues, Space,
};
use crate::gc::BlockStats;
use crate::placement::{HostWrite, WriteHint};
use crate::stats::Cause;
use crate::table::Lookbehind;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// The page-mapped FTL.
#[derive(Clone)]
pub struct PageMappedFtl {
    /// Flash state, operations, counters, oracle, zombie marks, logical clock.
    base: FtlBase,
    /// GC units and write streams.
    layout: FtlLayout,
    l2p: crate::table::Table<u32>,
    /// Free lists, write frontiers, GC units and their victim policies.
    blocks: BlockManager,
    host_cursor: u32,
    allocation: Allocation,
    in_gc: bool,
    /// GC is forced below `low` free blocks and works up to `high`.
    low: u32,
    high: u32,
    /// GC starts below this many free blocks: `low`, or `high` with lazy reclaim.
    trigger: u32,
    /// Lazy reclaim: unforced GC puts back a victim with fewer invalid pages than this
    /// share (0 = off).
    postpone: f64,
    /// `gc.invalid_share_trigger`: GC by garbage proportion (0 = off).
    share_trigger: f64,
    /// `gc.zombie_weight = "lifetime"`: the online estimate of what a zombie is worth.
    lifetimes: Option<Box<crate::ftl::ZombieLifetimes>>,
    /// Victims per GC trigger (0 = until `high`), and the free-block count at or
    /// below which GC goes on past that bound.
    max_victims: u32,
    hard: u32,
    /// Background GC target (0 = off).
    background: u32,
    rng: Pcg64Mcg,
    /// Reused buffer of a victim's valid pages.
    scratch: Vec<u32>,
    /// Reused buffer of the open blocks a GC stream's copies stripe over (FDP).
    stripe: Vec<u32>,
    /// Content-aware flash (dedup, dead-value pool), when `content` enables it.
    content: Option<Box<content_state::ContentState>>,
    /// What GC does with shadow pages (003).
    shadow: ShadowGc,
    /// Retention refresh queues, when fast-write blocks or a normal retention exist.
    refresh: Option<RefreshQueues>,
    /// The device's clock (ns): issue time with timing on, else arrival time.
    now_ns: u64,
    /// The logical pages GC and refresh moved (or dropped) since the FTL built on this
    /// one last took them, kept only when it asks ([`crate::ftl::DftlFtl`]: their
    /// mappings changed).
    moved: Option<Vec<u32>>,
    /// Pages whose mapping entries were prefetched lately: a few requests on, the
    /// page each maps to is prefetched in turn (the validity word its overwrite clears).
    prefetched: Lookbehind<4>,
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

impl PageMappedFtl {
    /// A freshly erased device. `seed` drives the randomised policies; `verify` keeps
    /// the integrity oracle.
    pub fn new(cfg: &Config, seed: u64, verify: bool) -> Result<Self> {
        Self::with_policies(cfg, seed, verify, &ExternalPolicies::default())
    }

    /// [`PageMappedFtl::new`], asking `external` what it decides.
    pub fn with_policies(
        cfg: &Config,
        seed: u64,
        verify: bool,
        external: &ExternalPolicies,
    ) -> Result<Self> {
        let geo = Geometry::new(cfg)?;
        let layout = FtlLayout::new(cfg, &geo)?;
        Self::build(cfg, seed, verify, geo.clone(), geo, layout, false, external)
    }

    /// The FTL over `geo` (the host's view) storing `inner.logical_pages` logical
    /// pages (the host's and those of an FTL built on this one, e.g. DFTL's
    /// translation pages) laid out as `layout`; `log_moves` keeps the pages GC moves
    /// for [`PageMappedFtl::take_moved`]; `external` decides what it is given to.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::ftl) fn build(
        cfg: &Config,
        seed: u64,
        verify: bool,
        geo: Geometry,
        inner: Geometry,
        layout: FtlLayout,
        log_moves: bool,
        external: &ExternalPolicies,
    ) -> Result<Self> {
        let stored = inner.logical_pages as usize;
        let base = FtlBase::over(cfg, geo, stored as u64, verify);
        let (geo, flash) = (&base.geo, &base.flash);
        let blocks = BlockManager::new(cfg, &inner, &layout, flash, external)?;
        let mut ftl = PageMappedFtl {
            l2p: crate::table::filled(stored, NONE),
            blocks,
            host_cursor: 0,
            allocation: cfg.ftl.allocation,
            in_gc: false,
            low: cfg.gc.low_watermark,
            high: cfg.gc.high_watermark,
            trigger: if cfg.gc.postpone_below_invalid > 0.0 {
                cfg.gc.high_watermark
            } else {
                cfg.gc.low_watermark
            },
            postpone: cfg.gc.postpone_below_invalid,
            share_trigger: cfg.gc.invalid_share_trigger,
            lifetimes: match cfg.gc.zombie_weight {
                crate::config::ZombieWeight::All => None,
                crate::config::ZombieWeight::Lifetime => {
                    Some(Box::new(crate::ftl::ZombieLifetimes::tuned(
                        stored,
                        geo.blocks as usize,
                        cfg.lifetime_horizon(geo)?,
                        geo.pages_per_block as u64 * geo.planes as u64,
                        &cfg.gc,
                    )))
                }
            },
            max_victims: cfg.gc.max_victims_per_trigger,
            hard: cfg.gc.hard_watermark,
            background: if cfg.gc.background {
                cfg.gc.background_watermark
            } else {
                0
            },
            rng: Pcg64Mcg::seed_from_u64(seed),
            scratch: Vec::with_capacity(geo.pages_per_block as usize),
            stripe: Vec::new(),
            content: cfg.content.enabled().then(|| {
                Box::new(content_state::ContentState::new(
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
            moved: log_moves.then(Vec::new),
            prefetched: Lookbehind::default(),
            base,
            layout,
        };
        // Weighted zombies start at nothing: the base policy until zombies are seen.
        if ftl.lifetimes.is_some() {
            ftl.base.flash.zombie_weighted = vec![0; ftl.base.flash.zombies.len()];
        }
        Ok(ftl)
    }

    /// The resolved geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.base.geo
    }

    /// The flash state (read-only), for tests and analyses.
    pub fn flash(&self) -> &FlashState {
        &self.base.flash
    }

    /// The physical page a logical page maps to, if any.
    pub fn lookup(&self, lpn: u64) -> Option<u32> {
        if lpn >= self.base.geo.logical_pages {
            return None;
        }
        self.l2p.get(lpn as usize).copied().filter(|&p| p != NONE)
    }

    /// Write one logical page: for the host (`Cause::Host`, counted as a host page)
    /// or for the device's write buffer (`Cause::Buffer`); the newest copy of `lpn` as
    /// far as the device knows, so whatever it knew of `lpn` as a zombie is gone.
    #[inline]
    fn write_one(&mut self, write: PageWrite, buffer: &mut dyn BufferView) -> Result<()> {
        if self.content.is_some() {
            return self.write_content(write, buffer);
        }
        let l = self.check_lpn(write.lpn)?;
        self.base.clock += 1;
        if write.cause == Cause::Host {
            self.base.counters.host_write_pages += 1;
        }
        let old = self.l2p[l];
        self.learn_written(l, old != NONE, write.cause);
        self.drop_zombie(l, old);
        self.replace(l, old, None, write, buffer)
    }

    /// Write `write` to logical page `l`, whose copy was at `old` (`NONE`: none): the
    /// old copy dies, the placement policy picks the stream (unless `stream` is
    /// given), the round-robin the plane, and the new copy is mapped (and known to the
    /// oracle).
    #[inline(always)]
    fn replace(
        &mut self,
        l: usize,
        old: u32,
        stream: Option<u32>,
        write: PageWrite,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        if old != NONE {
            self.invalidate(old);
        }
        let stream = match stream {
            Some(s) => s,
            None => self.host_stream(l, old != NONE, write.hint),
        };
        let plane = if self.blocks.rus.is_some() {
            self.fdp_plane(stream, buffer)?
        } else {
            self.host_plane()
        };
        let now = self.base.ops.now();
        let ppn = self.program(plane, stream, l as u32, write.cause, now, buffer)?;
        self.l2p[l] = ppn;
        if let Some(o) = &mut self.base.oracle {
            match write.value {
                Some(v) => o.write_value(l, ppn, v),
                None => o.write(l, ppn),
            }
        }
        Ok(())
    }

    /// Write internal logical page `l` (one beyond the host's: an FTL built on this
    /// one keeps its own pages there, as DFTL its translation pages) for `cause`:
    /// programmed like a host page, into the layout's translation stream when it has
    /// one (else placed as a host page), but not counted as one, and unknown to the
    /// zombie marks and the content layer.
    pub(in crate::ftl) fn write_internal(
        &mut self,
        l: usize,
        cause: Cause,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        let old = self.l2p[l];
        let stream = self.layout.translation_stream;
        self.replace(
            l,
            old,
            stream,
            PageWrite::new(l as u64, None, cause),
            buffer,
        )
    }

    /// Where logical page `l` is (host or internal; `NONE` when unmapped).
    #[inline]
    pub(in crate::ftl) fn entry(&self, l: usize) -> u32 {
        self.l2p[l]
    }

    /// Hand each logical page GC or refresh moved (or dropped) since the last call to
    /// `f`, oldest first (nothing unless built with `log_moves`).
    #[inline]
    pub(in crate::ftl) fn drain_moved(&mut self, mut f: impl FnMut(usize)) {
        if let Some(moved) = self.moved.as_mut() {
            moved.drain(..).for_each(|l| f(l as usize));
        }
    }

    /// Reclaim `victim` of unit `u` now, as foreground GC would.
    #[cfg(test)]
    pub(in crate::ftl) fn reclaim_now(
        &mut self,
        u: usize,
        victim: u32,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        self.in_gc = true;
        let result = self.reclaim(u, victim, 0, buffer);
        self.in_gc = false;
        result
    }

    /// The stream a host (or buffer) write of `l` goes to: the placement policy's.
    #[inline]
    pub(super) fn host_stream(&mut self, l: usize, overwrite: bool, hint: WriteHint) -> u32 {
        let write = HostWrite {
            lpn: l,
            overwrite,
            hint,
            now: self.base.clock,
        };
        self.blocks.host_stream(&write)
    }

    #[inline]
    fn check_lpn(&self, lpn: u64) -> Result<usize> {
        self.base.check_lpn(lpn).map(|l| l as usize)
    }

    #[inline]
    fn invalidate(&mut self, ppn: u32) {
        let (block, valid) = self.base.flash.invalidate(ppn, self.base.clock);
        let u = self.blocks.unit_of_block(block);
        self.blocks.units[u].valid -= 1;
        if let Some(rus) = self.blocks.rus.as_deref_mut() {
            let (ru, candidate) = rus.invalidated(block, self.base.clock);
            if candidate {
                self.fdp_changed(u, ru);
            }
            return;
        }
        if self.base.flash.status[block as usize] == BlockStatus::Closed {
            self.unit_block_changed(u, block, valid);
        }
    }

    /// Candidate `block` (holding `valid` pages) changed: its victim policy hears of
    /// it through the block-statistics event.
    #[inline]
    pub(super) fn block_changed(&mut self, block: u32, valid: u32) {
        let u = self.blocks.unit_of_block(block);
        if let Some(rus) = self.blocks.rus.as_deref() {
            // Reclaim units: the RU is the candidate, its sums kept where pages change.
            let ru = rus.ru_of(block);
            if rus.table.status[ru as usize] == BlockStatus::Closed {
                self.fdp_changed(u, ru);
            }
            return;
        }
        self.unit_block_changed(u, block, valid);
    }

    /// [`PageMappedFtl::block_changed`] for a block of unit `u`.
    #[inline]
    fn unit_block_changed(&mut self, u: usize, block: u32, valid: u32) {
        let weights = content_state::block_weights(self.content.as_deref());
        let stats = BlockStats::new(block, valid, &self.base.flash, weights);
        self.blocks.units[u].policy.changed(&stats);
    }

    /// `block` is full: it becomes a candidate of its unit's victim policy.
    pub(super) fn block_closed(&mut self, block: u32) {
        if let Some(p) = self.lifetimes.as_deref_mut() {
            let b = block as usize;
            p.pages_mut()
                .sealed(block, &self.base.flash, self.base.clock);
            self.base.flash.zombie_weighted[b] =
                p.weighted(block, self.base.flash.zombies[b], self.base.clock);
        }
        let u = self.blocks.unit_of_block(block);
        let valid = self.base.flash.valid_count[block as usize];
        let weights = content_state::block_weights(self.content.as_deref());
        let stats = BlockStats::new(block, valid, &self.base.flash, weights);
        self.blocks.units[u].policy.insert(&stats);
    }

    /// The plane for the next host page: round-robin, or with dynamic allocation and
    /// timing on, the first plane (from the round-robin cursor) that can start soonest.
    #[inline]
    fn host_plane(&mut self) -> u32 {
        let planes = self.base.geo.planes;
        let mut plane = self.host_cursor;
        if self.allocation == Allocation::Dynamic && self.base.ops.timed() {
            let now = self.base.ops.now();
            let ready = |p: u32| self.base.ops.ready_at(p, now).unwrap_or(now);
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
        let (ppn, full) = self.base.flash.program(block, lpn, self.base.clock);
        let u = self.blocks.unit_of_block(block);
        self.blocks.units[u].valid += 1;
        self.blocks.units[u].programmed += 1;
        // Relocations are timed as a whole with their copy.
        self.base
            .ops
            .program(self.base.geo.plane_of(block), cause, start);
        if self.blocks.rus.is_some() {
            if full {
                self.blocks.set_open(plane, stream, NONE);
            }
            let host = matches!(cause, Cause::Host | Cause::Buffer);
            self.fdp_programmed(u, stream, block, full, host);
            return Some(ppn);
        }
        self.blocks
            .count_program(stream, matches!(cause, Cause::Host | Cause::Buffer));
        if full {
            self.blocks.set_open(plane, stream, NONE);
            self.block_closed(block);
        }
        Some(ppn)
    }

    fn open_block(&mut self, plane: u32, stream: u32, buffer: &mut dyn BufferView) -> Result<()> {
        if self.blocks.rus.is_some() {
            // Planes come from `fdp_plane`, which leaves the frontier open.
            return Err(Error::integrity(format!(
                "stream {stream} has no open block on plane {plane} of its reclaim unit"
            )));
        }
        let block = self.blocks.take_free(plane)?;
        let on_plane = self.base.geo.plane_of(block);
        self.base.ops.need_erased(on_plane, block);
        self.base.flash.open(block, stream as u8);
        self.blocks.set_open(plane, stream, block);
        self.blocks.opened(block, self.base.clock);
        if let Some(r) = self.refresh.as_mut() {
            let fast = self.shadow.fast && Some(stream) == self.layout.zombie_stream;
            r.opened(
                block,
                self.base.flash.open_seq[block as usize],
                self.now_ns,
                fast,
            );
        }
        let u = self.blocks.unit_of_plane(plane);
        if !self.in_gc && self.blocks.units[u].free < self.trigger {
            self.collect(u, buffer)?;
        }
        Ok(())
    }

    /// Whether `block` is programmed in fast-write mode.
    #[inline]
    fn is_fast(&self, block: u32) -> bool {
        self.shadow.fast
            && Some(self.base.flash.stream[block as usize] as u32) == self.layout.zombie_stream
    }
}

mod collect;
mod content;
mod content_state;
mod contract;
mod fdp;
mod invariants;
mod liveness;
#[cfg(test)]
mod tests;
