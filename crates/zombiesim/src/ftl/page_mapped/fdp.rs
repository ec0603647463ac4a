//! The page-mapped FTL on an FDP device (`fdp.enabled`): each stream (a reclaim-unit
//! handle, a GC destination) fills reclaim units, whose blocks are its write frontiers
//! on their planes; GC picks victim RUs and erases them whole (`ftl::ReclaimUnits`).
//!
//! ```text
//!   page of stream s ──► plane = s's cursor (the planes of s's reclaim group in turn)
//!                        frontier (plane, s) open? ── yes ──► program
//!                             │ no: this plane's block of the RU is full
//!                             ├─ the slot's RU has room on other planes ──► next plane
//!                             └─ the RU is full (closed: a GC candidate) ──► take a free
//!                                RU, open its blocks as the slot's frontiers of s; the
//!                                group now below gc.low_watermark RUs? GC until it has
//!                                gc.high_watermark
//! ```

use super::PageMappedFtl;
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, NONE};
use crate::ftl::BufferView;
use crate::gc::BlockStats;

impl PageMappedFtl {
    /// The plane the next page of `stream` goes to, with an open frontier there
    /// (opening a fresh reclaim unit, and collecting, when the stream's is full).
    #[inline]
    pub(super) fn fdp_plane(&mut self, stream: u32, buffer: &mut dyn BufferView) -> Result<u32> {
        match self.fdp_cursor_plane(stream) {
            (plane, true) => Ok(plane),
            (plane, false) => self.fdp_plane_slow(stream, plane, buffer),
        }
    }

    /// The plane `stream`'s cursor gives next, and whether the stream has an open
    /// frontier there.
    #[inline]
    fn fdp_cursor_plane(&mut self, stream: u32) -> (u32, bool) {
        let rus = self.blocks.rus.as_deref_mut().expect("fdp on");
        let plane = rus.next_plane(stream);
        (plane, self.blocks.open_block(plane, stream) != NONE)
    }

    /// [`Self::fdp_plane`] when the cursor's `plane` has no open frontier.
    #[cold]
    #[inline(never)]
    fn fdp_plane_slow(
        &mut self,
        stream: u32,
        mut plane: u32,
        buffer: &mut dyn BufferView,
    ) -> Result<u32> {
        let tries = 2 * self.layout.fdp.expect("fdp on").rg_planes + 1;
        for _ in 0..tries {
            let rus = self.blocks.rus.as_deref().expect("fdp on");
            let slot = rus.slot_of_plane(plane);
            if !rus.open_has_room(slot, stream) {
                self.open_ru(slot, stream, buffer)?;
                if self.blocks.open_block(plane, stream) != NONE {
                    return Ok(plane);
                }
            }
            // This plane's block of the RU is full (or absent): the next plane.
            let open;
            (plane, open) = self.fdp_cursor_plane(stream);
            if open {
                return Ok(plane);
            }
        }
        Err(Error::integrity(format!(
            "stream {stream} found no plane with room after opening a fresh reclaim unit"
        )))
    }

    /// Take a free reclaim unit for (slot, stream): its usable blocks become the
    /// frontiers of the slot's planes; GC runs if the group is now short of RUs.
    fn open_ru(&mut self, slot: u32, stream: u32, buffer: &mut dyn BufferView) -> Result<()> {
        let rus = self.blocks.rus.as_deref_mut().expect("fdp on");
        let group = rus.group_of_stream(stream);
        let ru = rus.take(slot, stream, group)?;
        let ru_planes = self.layout.fdp.expect("fdp on").ru_planes;
        let blocks: Vec<u32> = rus.blocks_of(ru).collect();
        self.blocks.units[group as usize].free -= 1;
        for (i, block) in blocks.into_iter().enumerate() {
            if self.base.flash.status[block as usize] != BlockStatus::Free {
                continue;
            }
            let on_plane = self.base.geo.plane_of(block);
            self.base.ops.need_erased(on_plane, block);
            self.base.flash.open(block, stream as u8);
            self.blocks
                .set_open(slot * ru_planes + i as u32, stream, block);
        }
        let u = group as usize;
        if !self.in_gc && self.blocks.units[u].free < self.trigger {
            self.collect(u, buffer)?;
        }
        Ok(())
    }

    /// A page was programmed for `stream` into `block` of an FDP device, which is now
    /// `full`: the stream's counts; a full RU becomes a candidate of its group's victim
    /// policy.
    #[inline]
    pub(super) fn fdp_programmed(
        &mut self,
        u: usize,
        stream: u32,
        block: u32,
        full: bool,
        host: bool,
    ) {
        let rus = self.blocks.rus.as_deref_mut().expect("fdp on");
        rus.programmed(stream, host);
        if full {
            if let Some(ru) = rus.block_full(block, &self.base.flash) {
                self.insert_ru(u, ru);
            }
        }
    }

    /// Closed RU `ru` of unit `u` becomes a candidate of its victim policy.
    fn insert_ru(&mut self, u: usize, ru: u32) {
        let rus = self.blocks.rus.as_deref().expect("fdp on");
        let stats = BlockStats::of(ru, &rus.table);
        self.blocks.units[u].policy.insert(&stats);
    }

    /// Candidate RU `ru` of unit `u` changed: its policy hears of it.
    #[inline]
    pub(super) fn fdp_changed(&mut self, u: usize, ru: u32) {
        let rus = self.blocks.rus.as_deref().expect("fdp on");
        let stats = BlockStats::of(ru, &rus.table);
        self.blocks.units[u].policy.changed(&stats);
    }

    /// Reclaim victim RU `ru` of unit `u`: copy out and erase each of its blocks.
    pub(super) fn reclaim_ru(
        &mut self,
        u: usize,
        ru: u32,
        start: u64,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        let rus = self.blocks.rus.as_deref_mut().expect("fdp on");
        rus.take_victim(ru);
        let blocks: Vec<u32> = rus.blocks_of(ru).collect();
        self.base.counters.gc_victims += 1;
        for block in blocks {
            if self.base.flash.status[block as usize] != BlockStatus::Closed {
                continue;
            }
            self.base.flash.take_victim(block);
            self.relocate_valid(u, block, start, crate::stats::Cause::Gc, buffer)?;
            let plane = self.base.geo.plane_of(block);
            self.blocks.units[u].programmed -= u64::from(self.base.flash.write_ptr[block as usize]);
            self.base.flash.erase(block);
            self.base
                .ops
                .erase(plane, block, start, crate::stats::Cause::Gc);
        }
        self.blocks.rus.as_deref_mut().expect("fdp on").erased(ru);
        self.blocks.units[u].free += 1;
        Ok(())
    }

    /// Whether candidate `victim` (a block, or an RU with FDP) holds only valid pages.
    #[inline]
    pub(super) fn victim_is_full(&self, victim: u32) -> bool {
        match self.blocks.rus.as_deref() {
            Some(rus) => {
                let v = victim as usize;
                rus.table.valid_count[v] == rus.table.write_ptr[v]
            }
            None => self.base.flash.valid_count[victim as usize] == self.base.geo.pages_per_block,
        }
    }

    /// The share of candidate `victim`'s written pages (a block, or an RU with FDP)
    /// that are invalid.
    pub(super) fn victim_invalid_share(&self, victim: u32) -> f64 {
        let v = victim as usize;
        let (valid, written) = match self.blocks.rus.as_deref() {
            Some(rus) => (rus.table.valid_count[v], rus.table.write_ptr[v]),
            None => (self.base.flash.valid_count[v], self.base.flash.write_ptr[v]),
        };
        if written == 0 {
            return 0.0;
        }
        f64::from(written - valid) / f64::from(written)
    }

    /// A plane `victim` (a block, or an RU with FDP) lies on.
    #[inline]
    pub(super) fn victim_plane(&self, victim: u32) -> u32 {
        match self.blocks.rus.as_deref() {
            Some(rus) => self.base.geo.plane_of(rus.block(victim, 0)),
            None => self.base.geo.plane_of(victim),
        }
    }

    /// Give a victim back to its policy unreclaimed (background GC found it full).
    pub(super) fn return_candidate(&mut self, victim: u32) {
        match self.blocks.rus.as_deref_mut() {
            Some(rus) => {
                rus.table.status[victim as usize] = BlockStatus::Closed;
                let first = rus.block(victim, 0);
                let u = self.blocks.unit_of_block(first);
                self.insert_ru(u, victim);
            }
            None => self.block_closed(victim),
        }
    }

    /// The FDP invariants: the RUs' sums match their blocks, every closed RU is a
    /// candidate, and the free counts match the free RUs.
    pub(super) fn check_fdp(&self) -> Result<()> {
        let Some(rus) = self.blocks.rus.as_deref() else {
            return Ok(());
        };
        rus.check(&self.base.flash)?;
        let per = rus.rus_per_group();
        for (u, unit) in self.blocks.units.iter().enumerate() {
            let range = u as u32 * per..(u as u32 + 1) * per;
            let closed = range
                .clone()
                .filter(|&r| rus.table.status[r as usize] == BlockStatus::Closed)
                .count();
            if unit.policy.len() != closed {
                return Err(Error::integrity(format!(
                    "reclaim group {u}: policy holds {} candidates, {closed} reclaim units are closed",
                    unit.policy.len()
                )));
            }
        }
        let counted: u32 = self.blocks.units.iter().map(|u| u.free).sum();
        if counted as usize != rus.free_rus() {
            return Err(Error::integrity(format!(
                "{counted} free reclaim units counted, {} listed",
                rus.free_rus()
            )));
        }
        Ok(())
    }
}
