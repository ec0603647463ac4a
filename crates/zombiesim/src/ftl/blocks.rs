//! The block manager: free blocks, open blocks per write stream, GC units, and the
//! placement policy that picks a page's stream — the block bookkeeping every FTL that
//! allocates flash blocks shares.
//!
//! ```text
//!   plane 0: free [b3, b9, b12 ...]   open (plane 0, stream s) = b7 | NONE
//!   plane 1: free [...]               ...
//!   GC unit u = planes [first_plane, first_plane + planes): its free-block count,
//!               its valid pages, its victim policy (candidates: its closed blocks)
//! ```
//!
//! Free blocks are kept per plane in FIFO order (erased blocks go to the back, which
//! spreads wear); a plane whose list is empty borrows from the richest plane of its GC
//! unit. Each `(plane, stream)` has at most one open block (its write frontier).

use crate::config::{Config, FtlLayout};
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, FlashState, Geometry, NONE};
use crate::ftl::{ExternalPolicies, ReclaimUnits, StreamCounts};
use crate::gc::{self, Chained, VictimPolicy};
use crate::placement::{
    FdpPlacement, FixedStreams, GcCopy, HostWrite, Placement, Reclaimed, StreamPlan,
};
use std::collections::VecDeque;

/// A contiguous range of planes served by one garbage collector.
#[derive(Clone)]
pub struct GcUnit {
    pub first_plane: u32,
    pub planes: u32,
    /// Free blocks of the unit.
    pub free: u32,
    /// Valid pages held by the unit's blocks, and pages programmed into them since
    /// they were erased.
    pub valid: u64,
    pub programmed: u64,
    /// Dynamic allocation sends no host write to the unit while it holds this many
    /// valid pages (its share of the logical space plus half its over-provisioning),
    /// so steering writes away from busy planes cannot pile data onto one unit.
    pub valid_limit: u64,
    /// The unit's victim policy: its candidates are the unit's closed blocks.
    pub policy: Box<dyn VictimPolicy>,
}

/// `policy` behind `placement`'s chain of FIFO groups when it has one (MiDAS), for
/// a unit whose candidates are `first ..` (`count` of them).
fn chained(
    policy: Box<dyn VictimPolicy>,
    placement: &dyn Placement,
    first: u32,
    count: u32,
    streams: u32,
) -> Box<dyn VictimPolicy> {
    if placement.chained() {
        Box::new(Chained::new(
            policy,
            first,
            count,
            streams,
            placement.chain(),
        ))
    } else {
        policy
    }
}

/// Free lists, write frontiers, GC units and the placement policy over a device's
/// blocks.
#[derive(Clone)]
pub struct BlockManager {
    pub units: Vec<GcUnit>,
    /// Which stream (write frontier) each page goes to (`ftl.placement`).
    pub(in crate::ftl) placement: Box<dyn Placement>,
    /// The placement's streams when it places by the kind of write alone (asked once).
    fixed: Option<FixedStreams>,
    block_unit: Vec<u32>,
    free: Vec<VecDeque<u32>>,
    open: Vec<u32>,
    streams: u32,
    blocks_per_plane: u32,
    /// FDP (`fdp.enabled`): blocks are taken and reclaimed a reclaim unit at a time;
    /// the units' free counts and victim candidates are then RUs.
    pub rus: Option<Box<ReclaimUnits>>,
    /// Logical time each block was last opened, kept only for a placement that hears
    /// of reclaimed blocks (empty otherwise).
    opened_at: Vec<u64>,
    /// Per stream, what was written to it and reclaimed from it, kept for a
    /// placement other than the default on a device without FDP (empty otherwise;
    /// FDP counts per stream itself).
    pub stream_counts: Vec<StreamCounts>,
}

impl BlockManager {
    /// Every usable block of the freshly erased `flash` free, no block open, one GC
    /// unit per `layout.units` with a victim policy as `cfg.gc.policy` names.
    /// `external` chooses the victims and places the writes when it is given to.
    pub fn new(
        cfg: &Config,
        geo: &Geometry,
        layout: &FtlLayout,
        flash: &FlashState,
        external: &ExternalPolicies,
    ) -> Result<Self> {
        let bpp = geo.blocks_per_plane;
        let mut free: Vec<VecDeque<u32>> = vec![VecDeque::new(); geo.planes as usize];
        for block in 0..geo.blocks {
            if flash.status[block as usize] == BlockStatus::Free {
                free[(block / bpp) as usize].push_back(block);
            }
        }
        let mut block_unit = vec![0u32; geo.blocks as usize];
        let rus = layout
            .fdp
            .map(|f| Box::new(ReclaimUnits::new(f, geo, flash, layout.streams)));
        let plan = StreamPlan {
            host_streams: layout.regions,
            gc_first: layout.gc_first_stream,
            gc_streams: layout.gc_streams,
            zombie: layout.zombie_stream,
            logical_pages: geo.logical_pages,
            stored_pages: geo.logical_pages as usize,
            blocks: free.iter().map(|f| f.len() as u32).sum(),
            reserve: cfg.gc.high_watermark * layout.units.len() as u32
                + layout.streams * geo.planes / 2,
            pages_per_block: geo.pages_per_block,
        };
        let mut placement: Box<dyn Placement> = match layout.fdp {
            Some(f) => Box::new(FdpPlacement::new(f, layout.zombie_stream)),
            None => cfg.ftl.placement.build(&plan),
        };
        if external.victim.is_some() && cfg.gc.policy != crate::config::PolicySpec::Greedy {
            return Err(Error::config(
                "gc.policy",
                format!(
                    "the run's own victim policy (victim=) decides in place of gc.policy = \"{}\": \
                     leave gc.policy unset",
                    cfg.gc.policy
                ),
            ));
        }
        match (placement.takes_placer(), &external.placer) {
            (true, Some(placer)) => placement.attach(placer.clone()),
            (true, None) => {
                return Err(Error::config(
                    "ftl.placement",
                    format!(
                        "\"{}\" places by a function given to the run (placement= in Python, \
                         --placement on the command line), and none was given",
                        cfg.ftl.placement
                    ),
                ))
            }
            (false, Some(placer)) => {
                return Err(Error::config(
                    "ftl.placement",
                    format!(
                        "the placement given to the run ({}) needs ftl.placement = \"python:K\" \
                         (K host streams, 2-16), not \"{}\"",
                        placer.name(),
                        cfg.ftl.placement
                    ),
                ))
            }
            (false, None) => {}
        }
        let units = layout
            .units
            .iter()
            .enumerate()
            .map(|(u, r)| {
                let first_block = r.first_plane * bpp;
                let blocks = r.planes * bpp;
                block_unit[first_block as usize..(first_block + blocks) as usize].fill(u as u32);
                let free_blocks = (r.first_plane..r.first_plane + r.planes)
                    .map(|p| free[p as usize].len() as u32)
                    .sum();
                let share = geo.logical_pages as f64 * r.planes as f64 / geo.planes as f64;
                let capacity = free_blocks as f64 * geo.pages_per_block as f64;
                // With reclaim units the policy's candidates are the group's RUs.
                let (free, first, count, pages) = match rus.as_deref() {
                    Some(rus) => (
                        rus.usable_in_group(u as u32),
                        u as u32 * rus.rus_per_group(),
                        rus.rus_per_group(),
                        rus.table.pages_per_block(),
                    ),
                    None => (free_blocks, first_block, blocks, geo.pages_per_block),
                };
                GcUnit {
                    first_plane: r.first_plane,
                    planes: r.planes,
                    free,
                    valid: 0,
                    programmed: 0,
                    valid_limit: ((share + capacity) / 2.0) as u64,
                    policy: chained(
                        match &external.victim {
                            Some(chooser) => {
                                Box::new(gc::External::new(chooser.clone(), first, count))
                            }
                            None => gc::build(cfg.gc.scoring(), cfg.gc.cb_age, first, count, pages),
                        },
                        placement.as_ref(),
                        first,
                        count,
                        layout.streams,
                    ),
                }
            })
            .collect();
        if rus.is_some() {
            // Reclaim units keep the free blocks, a unit at a time.
            free.iter_mut().for_each(VecDeque::clear);
        }
        let opened_at = if placement.observes_reclaims() && rus.is_none() {
            vec![0; geo.blocks as usize]
        } else {
            Vec::new()
        };
        Ok(BlockManager {
            units,
            opened_at,
            stream_counts: if cfg.ftl.placement.is_default() || rus.is_some() {
                Vec::new()
            } else {
                vec![StreamCounts::default(); layout.streams as usize]
            },
            fixed: placement.fixed(),
            placement,
            block_unit,
            free,
            open: vec![NONE; (geo.planes * layout.streams) as usize],
            streams: layout.streams,
            blocks_per_plane: bpp,
            rus,
        })
    }

    /// What the placement fitted to the workload, if it fits anything.
    pub fn placement_model(&self) -> Option<crate::placement::PlacementModel> {
        self.placement.model()
    }

    /// Host writes whose placement hint named no stream (FDP's invalid placement
    /// identifiers).
    pub fn rejected_hints(&self) -> u64 {
        self.placement.rejected_hints()
    }

    /// The stream of a host or buffer write: the placement policy's (without asking
    /// it when it places by the kind of write alone).
    #[inline]
    pub fn host_stream(&mut self, write: &HostWrite) -> u32 {
        match self.fixed {
            Some(fixed) => fixed.host,
            None => self.placement.host_stream(write),
        }
    }

    /// The stream of a GC or refresh copy, likewise.
    #[inline]
    pub fn gc_stream(&mut self, copy: &GcCopy) -> u32 {
        match self.fixed {
            Some(fixed) => fixed.gc_stream(copy.zombie),
            None => self.placement.gc_stream(copy),
        }
    }

    /// Bytes of the placement policy's own state (and the block opening times kept
    /// for it).
    pub fn placement_bytes(&self) -> usize {
        self.placement.memory_bytes()
            + self.opened_at.len() * 8
            + self.stream_counts.len() * std::mem::size_of::<StreamCounts>()
    }

    /// The run's future says `lpn`'s current version dies `left` writes after `now`.
    pub fn told_lifetime(&mut self, lpn: usize, left: Option<u64>, now: u64) {
        self.placement.told_lifetime(lpn, left, now);
    }

    /// `block` was opened at logical time `now`.
    #[inline]
    pub fn opened(&mut self, block: u32, now: u64) {
        if let Some(t) = self.opened_at.get_mut(block as usize) {
            *t = now;
        }
    }

    /// A page was programmed for `stream` (by the host or a buffer when `host`).
    #[inline]
    pub fn count_program(&mut self, stream: u32, host: bool) {
        self.count_programs(stream, host, 1);
    }

    /// `n` pages were programmed for `stream`, as [`BlockManager::count_program`].
    #[inline]
    pub fn count_programs(&mut self, stream: u32, host: bool, n: u64) {
        if let Some(c) = self.stream_counts.get_mut(stream as usize) {
            if host {
                c.host_pages += n;
            } else {
                c.gc_pages += n;
            }
        }
    }

    /// The stream every GC copy of a victim written for `from_stream` goes to, known
    /// zombies' aside, when the placement fixes it per victim (`None`: page by page).
    #[inline]
    pub fn victim_gc_stream(&self, from_stream: u32) -> Option<u32> {
        match self.fixed {
            Some(fixed) => Some(fixed.gc),
            None => self.placement.victim_gc_stream(from_stream),
        }
    }

    /// GC is about to reclaim a block of `stream` holding `valid` valid pages.
    pub fn count_reclaim(&mut self, stream: u32, valid: u32) {
        if let Some(c) = self.stream_counts.get_mut(stream as usize) {
            c.relocated_pages += u64::from(valid);
            c.relocation_events += u64::from(valid > 0);
            c.erased_rus += 1;
        }
    }

    /// GC erased `block`, written for `stream`: the placement hears of it if it asked.
    #[inline]
    pub fn reclaimed(&mut self, block: u32, stream: u32, now: u64) {
        if let Some(&opened) = self.opened_at.get(block as usize) {
            self.placement.reclaimed(&Reclaimed {
                stream,
                opened,
                now,
            });
        }
    }

    /// The GC unit a block belongs to.
    #[inline]
    pub fn unit_of_block(&self, block: u32) -> usize {
        self.block_unit[block as usize] as usize
    }

    /// The GC unit a plane belongs to.
    #[inline]
    pub fn unit_of_plane(&self, plane: u32) -> usize {
        self.block_unit[(plane * self.blocks_per_plane) as usize] as usize
    }

    /// The open block of `(plane, stream)`, or `NONE`.
    #[inline]
    pub fn open_block(&self, plane: u32, stream: u32) -> u32 {
        self.open[(plane * self.streams + stream) as usize]
    }

    /// Make `block` the open block of `(plane, stream)` (`NONE`: it has none).
    #[inline]
    pub fn set_open(&mut self, plane: u32, stream: u32, block: u32) {
        self.open[(plane * self.streams + stream) as usize] = block;
    }

    /// Whether some write frontier holds `block`.
    pub fn is_open(&self, block: u32) -> bool {
        self.open.contains(&block)
    }

    /// Take a free block for `plane` (from another plane of its GC unit when the
    /// plane has none); the unit's free count goes down.
    pub fn take_free(&mut self, plane: u32) -> Result<u32> {
        let u = self.unit_of_plane(plane);
        let block = match self.free[plane as usize].pop_front() {
            Some(b) => b,
            None => {
                let unit = &self.units[u];
                let richest = (unit.first_plane..unit.first_plane + unit.planes)
                    .max_by_key(|&p| (self.free[p as usize].len(), std::cmp::Reverse(p)))
                    .expect("a unit has planes");
                self.free[richest as usize]
                    .pop_front()
                    .ok_or_else(|| Error::DeviceFull {
                        reason: format!(
                            "GC unit {u} has no free block left (raise ftl.over_provisioning or gc.low_watermark)"
                        ),
                    })?
            }
        };
        self.units[u].free -= 1;
        Ok(block)
    }

    /// An erased block is free again (at the back of its plane's list).
    pub fn release(&mut self, block: u32) {
        let plane = block / self.blocks_per_plane;
        self.free[plane as usize].push_back(block);
        let u = self.unit_of_block(block);
        self.units[u].free += 1;
    }

    /// The free lists, one per plane.
    pub fn free_lists(&self) -> &[VecDeque<u32>] {
        &self.free
    }

    /// Erased blocks available, over all units.
    pub fn free_blocks(&self) -> u64 {
        match self.rus.as_deref() {
            Some(rus) => rus.free_blocks(),
            None => self.units.iter().map(|u| u.free as u64).sum(),
        }
    }

    /// Pages held out of the data cycle: free blocks plus the unwritten pages of open
    /// blocks.
    pub fn held_back_pages(&self, flash: &FlashState, pages_per_block: u32) -> u64 {
        let ppb = pages_per_block as u64;
        let free = self.free_blocks();
        if let Some(rus) = self.rus.as_deref() {
            return free * ppb + rus.open_pages_left(flash);
        }
        let open: u64 = self
            .open
            .iter()
            .filter(|&&b| b != NONE)
            .map(|&b| ppb - flash.write_ptr[b as usize] as u64)
            .sum();
        free * ppb + open
    }

    /// Valid pages over all units.
    pub fn valid_pages(&self) -> u64 {
        self.units.iter().map(|u| u.valid).sum()
    }

    /// Approximate bytes of memory the bookkeeping occupies (the per-block unit
    /// index; the free lists and frontiers are small).
    pub fn memory_bytes(&self) -> usize {
        self.block_unit.len() * 4
    }
}
