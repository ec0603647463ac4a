//! Reclaim units: the FDP device's unit of allocation and of garbage collection.
//!
//! A reclaim unit (RU) is one block on each of `ru_planes` adjacent planes, at the
//! same block offset (a superblock when it spans every plane of its reclaim group, one
//! erase block for the streams directive). The planes of a reclaim group fall into
//! RU *slots* of `ru_planes` planes; RU `slot · blocks_per_plane + k` is block `k` of
//! each plane of the slot:
//!
//! ```text
//!   reclaim group 0 (planes 0..4, ru_planes = 2)     RU id = slot · bpp + k
//!     slot 0: plane 0 [k=0][k=1]...   RU 0 = {p0 b0, p1 b0}, RU 1 = {p0 b1, p1 b1} ...
//!             plane 1 [k=0][k=1]...
//!     slot 1: plane 2, plane 3        RU bpp = {p2 b0, p3 b0} ...
//!
//!   stream s (a handle or a GC destination) ── open RU per slot ── its blocks are the
//!   write frontiers (plane, s); the stream's cursor visits the group's planes in turn,
//!   so an RU's blocks fill together, and it closes when the last of them is full.
//! ```
//!
//! A closed RU is a candidate of its reclaim group's victim policy, which sees the RU's
//! statistics summed over its blocks (valid, programmed and zombie pages; the latest
//! modification; its erase count) kept here in a [`FlashState`] of RUs. An open RU keeps
//! no sums (its blocks have them): they are taken from its blocks once, when its last
//! block fills, and kept from then on, so a page programmed costs the RU nothing. GC
//! copies every valid page out of the victim RU and erases all its blocks; the RU is
//! then free again.
//!
//! What each stream wrote and what GC moved out of it and erased of it are counted per
//! stream, for the FDP statistics log and the per-handle report.

use crate::config::{FdpLayout, Geometry};
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, FlashState, NONE};
use serde::Serialize;
use std::collections::VecDeque;

/// What one stream's reclaim units saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StreamCounts {
    /// Host (and buffer) pages written to the stream.
    pub host_pages: u64,
    /// GC (and translation) pages programmed into the stream's RUs.
    pub gc_pages: u64,
    /// Valid pages GC copied out of the stream's RUs.
    pub relocated_pages: u64,
    /// The stream's RUs GC reclaimed (erased).
    pub erased_rus: u64,
    /// Reclaims of the stream's RUs that had valid pages to move (FDP's "media
    /// relocated" events).
    pub relocation_events: u64,
}

impl StreamCounts {
    /// What was counted since `pre`.
    pub fn since(&self, pre: &StreamCounts) -> StreamCounts {
        StreamCounts {
            host_pages: self.host_pages - pre.host_pages,
            gc_pages: self.gc_pages - pre.gc_pages,
            relocated_pages: self.relocated_pages - pre.relocated_pages,
            erased_rus: self.erased_rus - pre.erased_rus,
            relocation_events: self.relocation_events - pre.relocation_events,
        }
    }
}

/// What an FDP device counted: per stream, and the writes whose placement
/// identifier named no handle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FdpCounts {
    pub streams: Vec<StreamCounts>,
    pub invalid_placement_ids: u64,
}

impl FdpCounts {
    /// What was counted since `pre`.
    pub fn since(&self, pre: &FdpCounts) -> FdpCounts {
        FdpCounts {
            streams: self
                .streams
                .iter()
                .zip(&pre.streams)
                .map(|(a, b)| a.since(b))
                .collect(),
            invalid_placement_ids: self.invalid_placement_ids - pre.invalid_placement_ids,
        }
    }
}

/// Reclaim units of every reclaim group, their free lists, the open RU of each
/// (slot, stream), and their summed statistics.
#[derive(Clone)]
pub struct ReclaimUnits {
    pub layout: FdpLayout,
    bpp: u32,
    /// Summed statistics per RU (per-block arrays only; pages per "block" = an RU's).
    pub table: FlashState,
    /// Usable (not reserved) blocks of each RU.
    usable: Vec<u8>,
    /// Free RUs per slot, FIFO.
    free: Vec<VecDeque<u32>>,
    /// The open RU of each (slot, stream), `NONE` when it has none.
    open_ru: Vec<u32>,
    /// Blocks still to fill in each open RU.
    left: Vec<u32>,
    /// The `(slot, stream)` entry of `open_ru` each open RU fills (cleared when it
    /// closes, so that a recycled RU is never taken for its old stream's).
    opened_as: Vec<u32>,
    /// The next plane (index within the reclaim group) each stream writes to.
    cursor: Vec<u32>,
    /// The first plane of each stream's reclaim group.
    base_plane: Vec<u32>,
    /// The RU of each block, and the slot of each plane (tables: no division per page).
    ru_of_block: Vec<u32>,
    slot_of_plane: Vec<u32>,
    streams: u32,
    /// Per stream.
    pub counts: Vec<StreamCounts>,
}

impl ReclaimUnits {
    /// Every usable RU of `flash` (freshly erased) free; `streams` write streams.
    pub fn new(layout: FdpLayout, geo: &Geometry, flash: &FlashState, streams: u32) -> Self {
        let bpp = geo.blocks_per_plane;
        let ru_planes = layout.ru_planes;
        let slots = geo.planes / ru_planes;
        let rus = slots * bpp;
        let mut usable = vec![0u8; rus as usize];
        let mut free = vec![VecDeque::new(); slots as usize];
        for ru in 0..rus {
            let n = (0..ru_planes)
                .filter(|&i| {
                    let b = Self::block_in(bpp, ru_planes, ru, i);
                    flash.status[b as usize] == BlockStatus::Free
                })
                .count();
            usable[ru as usize] = n as u8;
            if n > 0 {
                free[(ru / bpp) as usize].push_back(ru);
            }
        }
        let ppb = geo.pages_per_block;
        let table = FlashState::of_units(rus, ppb * ru_planes);
        let ru_of_block = (0..geo.planes * bpp)
            .map(|b| ((b / bpp) / ru_planes) * bpp + b % bpp)
            .collect();
        let slot_of_plane = (0..geo.planes).map(|p| p / ru_planes).collect();
        let base_plane = (0..streams)
            .map(|s| layout.group_of_stream(s) * layout.rg_planes)
            .collect();
        ReclaimUnits {
            layout,
            bpp,
            table,
            usable,
            free,
            open_ru: vec![NONE; (slots * streams) as usize],
            left: vec![0; rus as usize],
            opened_as: vec![NONE; rus as usize],
            cursor: vec![0; streams as usize],
            base_plane,
            ru_of_block,
            slot_of_plane,
            streams,
            counts: vec![StreamCounts::default(); streams as usize],
        }
    }

    #[inline]
    fn block_in(bpp: u32, ru_planes: u32, ru: u32, i: u32) -> u32 {
        let slot = ru / bpp;
        (slot * ru_planes + i) * bpp + ru % bpp
    }

    /// Block `i` (0 .. ru_planes) of RU `ru`.
    #[inline]
    pub fn block(&self, ru: u32, i: u32) -> u32 {
        Self::block_in(self.bpp, self.layout.ru_planes, ru, i)
    }

    /// The usable blocks of RU `ru`.
    pub fn blocks_of(&self, ru: u32) -> impl Iterator<Item = u32> + '_ {
        (0..self.layout.ru_planes).map(move |i| self.block(ru, i))
    }

    /// The RU holding `block`.
    #[inline]
    pub fn ru_of(&self, block: u32) -> u32 {
        self.ru_of_block[block as usize]
    }

    /// RUs per reclaim group, and the first RU of group `g`.
    pub fn rus_per_group(&self) -> u32 {
        self.layout.groups_per_rg() * self.bpp
    }

    /// Usable RUs of reclaim group `g` (its free count when the device is erased).
    pub fn usable_in_group(&self, g: u32) -> u32 {
        let per = self.rus_per_group();
        (g * per..(g + 1) * per)
            .filter(|&r| self.usable[r as usize] > 0)
            .count() as u32
    }

    /// The reclaim group a stream belongs to ([`FdpLayout::group_of_stream`]).
    #[inline]
    pub fn group_of_stream(&self, stream: u32) -> u32 {
        self.layout.group_of_stream(stream)
    }

    /// The next plane stream `stream` writes to: its cursor's, moved on by one.
    #[inline]
    pub fn next_plane(&mut self, stream: u32) -> u32 {
        let c = &mut self.cursor[stream as usize];
        let plane = self.base_plane[stream as usize] + *c;
        *c = if *c + 1 == self.layout.rg_planes {
            0
        } else {
            *c + 1
        };
        plane
    }

    /// The planes stream `stream` writes to next, one turn of its reclaim group from
    /// its cursor on: what `rg_planes` calls of [`Self::next_plane`] would give.
    #[inline]
    pub fn planes_ahead(&self, stream: u32) -> impl Iterator<Item = u32> {
        let n = self.layout.rg_planes;
        let (base, c) = (
            self.base_plane[stream as usize],
            self.cursor[stream as usize],
        );
        (0..n).map(move |i| base + (c + i) % n)
    }

    /// `n` GC copies programmed for `stream` plane after plane: its cursor moves on by
    /// `n` and its counts take them, as `n` calls of [`Self::next_plane`] and
    /// [`Self::programmed`] do.
    #[inline]
    pub fn copies_striped(&mut self, stream: u32, n: u32) {
        let s = stream as usize;
        self.cursor[s] = (self.cursor[s] + n % self.layout.rg_planes) % self.layout.rg_planes;
        self.counts[s].gc_pages += u64::from(n);
    }

    /// The RU slot of a plane.
    #[inline]
    pub fn slot_of_plane(&self, plane: u32) -> u32 {
        self.slot_of_plane[plane as usize]
    }

    /// Whether (slot, stream) has an open RU (one with pages left: a full RU leaves its
    /// entry when it closes).
    #[inline]
    pub fn open_has_room(&self, slot: u32, stream: u32) -> bool {
        self.open_ru[(slot * self.streams + stream) as usize] != NONE
    }

    /// Take a free RU for (slot, stream), from another slot of its reclaim group when
    /// the slot has none; it becomes the open RU of (slot, stream).
    pub fn take(&mut self, slot: u32, stream: u32, group: u32) -> Result<u32> {
        let ru = match self.free[slot as usize].pop_front() {
            Some(r) => r,
            None => {
                let per = self.layout.groups_per_rg();
                let richest = (group * per..(group + 1) * per)
                    .max_by_key(|&s| (self.free[s as usize].len(), std::cmp::Reverse(s)))
                    .expect("a reclaim group has slots");
                self.free[richest as usize]
                    .pop_front()
                    .ok_or_else(|| Error::DeviceFull {
                        reason: format!(
                            "reclaim group {group} has no free reclaim unit left (raise ftl.over_provisioning or gc.low_watermark)"
                        ),
                    })?
            }
        };
        let r = ru as usize;
        self.left[r] = self.usable[r] as u32;
        self.table.status[r] = BlockStatus::Open;
        self.table.stream[r] = stream as u8;
        let entry = slot * self.streams + stream;
        self.open_ru[entry as usize] = ru;
        self.opened_as[r] = entry;
        Ok(ru)
    }

    /// A page was programmed for `stream`, for the host (or the buffer) or not (GC,
    /// translation).
    #[inline]
    pub fn programmed(&mut self, stream: u32, host: bool) {
        let c = &mut self.counts[stream as usize];
        if host {
            c.host_pages += 1;
        } else {
            c.gc_pages += 1;
        }
    }

    /// Open block `block` of `flash` is full; its RU, when that was the RU's last
    /// block to fill (the RU is closed now, its sums taken from its blocks: a GC
    /// candidate).
    pub fn block_full(&mut self, block: u32, flash: &FlashState) -> Option<u32> {
        let ru = self.ru_of(block);
        let r = ru as usize;
        self.left[r] -= 1;
        if self.left[r] > 0 {
            return None;
        }
        let (mut valid, mut written, mut zombies, mut modified) = (0u32, 0u32, 0u32, 0u64);
        for b in self.blocks_of(ru) {
            let i = b as usize;
            if flash.status[i] == BlockStatus::Reserved {
                continue;
            }
            valid += flash.valid_count[i];
            written += flash.write_ptr[i];
            zombies += flash.zombies[i];
            modified = modified.max(flash.last_modified[i]);
        }
        let t = &mut self.table;
        t.valid_count[r] = valid;
        t.write_ptr[r] = written;
        t.zombies[r] = zombies;
        t.last_modified[r] = modified;
        t.status[r] = BlockStatus::Closed;
        let entry = std::mem::replace(&mut self.opened_as[r], NONE) as usize;
        if self.open_ru[entry] == ru {
            self.open_ru[entry] = NONE;
        }
        Some(ru)
    }

    /// A page of `block` died at logical time `now`; the RU and whether it is a
    /// candidate.
    #[inline]
    pub fn invalidated(&mut self, block: u32, now: u64) -> (u32, bool) {
        let ru = self.ru_of(block);
        let r = ru as usize;
        if self.table.status[r] == BlockStatus::Open {
            return (ru, false);
        }
        self.table.valid_count[r] -= 1;
        self.table.last_modified[r] = now;
        (ru, self.table.status[r] == BlockStatus::Closed)
    }

    /// `pages` pages of victim RU `ru` died (GC moved them out) at logical time `now`.
    #[inline]
    pub fn victim_pages_moved(&mut self, ru: u32, pages: u32, now: u64) {
        let r = ru as usize;
        self.table.valid_count[r] -= pages;
        self.table.last_modified[r] = now;
    }

    /// The zombie count of `block`'s RU goes up or down by one; the RU and whether it
    /// is a candidate.
    #[inline]
    pub fn zombies_changed(&mut self, block: u32, up: bool) -> (u32, bool) {
        let ru = self.ru_of(block);
        let r = ru as usize;
        if self.table.status[r] == BlockStatus::Open {
            return (ru, false);
        }
        if up {
            self.table.zombies[r] += 1;
        } else {
            self.table.zombies[r] -= 1;
        }
        (ru, self.table.status[r] == BlockStatus::Closed)
    }

    /// GC chose `ru`: it is no candidate any more.
    pub fn take_victim(&mut self, ru: u32) {
        self.table.status[ru as usize] = BlockStatus::Victim;
        let s = self.table.stream[ru as usize] as usize;
        let valid = self.table.valid_count[ru as usize] as u64;
        self.counts[s].relocated_pages += valid;
        self.counts[s].relocation_events += u64::from(valid > 0);
    }

    /// Every block of `ru` was erased: it is free again.
    pub fn erased(&mut self, ru: u32) {
        let r = ru as usize;
        debug_assert_eq!(self.table.valid_count[r], 0);
        let s = self.table.stream[r] as usize;
        self.counts[s].erased_rus += 1;
        self.table.erase(ru);
        self.free[(ru / self.bpp) as usize].push_back(ru);
    }

    /// Free RUs over every slot.
    pub fn free_rus(&self) -> usize {
        self.free.iter().map(|f| f.len()).sum()
    }

    /// Usable blocks of the free RUs.
    pub fn free_blocks(&self) -> u64 {
        self.free
            .iter()
            .flatten()
            .map(|&r| self.usable[r as usize] as u64)
            .sum()
    }

    /// Unprogrammed pages of the open RUs (their usable blocks in `flash`).
    pub fn open_pages_left(&self, flash: &FlashState) -> u64 {
        let ppb = flash.pages_per_block() as u64;
        self.open_ru
            .iter()
            .filter(|&&r| r != NONE)
            .flat_map(|&r| self.blocks_of(r))
            .filter(|&b| flash.status[b as usize] != BlockStatus::Reserved)
            .map(|b| ppb - flash.write_ptr[b as usize] as u64)
            .sum()
    }

    /// Check the summed statistics of every RU that keeps them (all but the open)
    /// against its blocks in `flash`, and that every open RU a (slot, stream) fills is
    /// open for that stream.
    pub fn check(&self, flash: &FlashState) -> Result<()> {
        for (entry, &ru) in self.open_ru.iter().enumerate() {
            if ru == NONE {
                continue;
            }
            let stream = entry as u32 % self.streams;
            let r = ru as usize;
            if self.table.status[r] != BlockStatus::Open || self.table.stream[r] as u32 != stream {
                return Err(Error::integrity(format!(
                    "stream {stream} fills reclaim unit {ru}, which is {:?} for stream {}",
                    self.table.status[r], self.table.stream[r]
                )));
            }
        }
        for ru in 0..self.table.blocks() {
            let r = ru as usize;
            let t = &self.table;
            let (mut valid, mut written, mut zombies) = (0u32, 0u32, 0u32);
            for b in self.blocks_of(ru) {
                let i = b as usize;
                valid += flash.valid_count[i];
                written += flash.write_ptr[i];
                zombies += flash.zombies[i];
                let st = flash.status[i];
                if st != BlockStatus::Reserved
                    && st != BlockStatus::Free
                    && flash.stream[i] != t.stream[r]
                {
                    return Err(Error::integrity(format!(
                        "reclaim unit {ru} belongs to stream {} but its block {b} was opened for stream {}",
                        t.stream[r], flash.stream[i]
                    )));
                }
            }
            if t.status[r] == BlockStatus::Open {
                continue;
            }
            if (valid, written, zombies) != (t.valid_count[r], t.write_ptr[r], t.zombies[r]) {
                return Err(Error::integrity(format!(
                    "reclaim unit {ru}: its blocks hold {valid} valid, {written} programmed, {zombies} zombie pages \
                     but it counts {}, {}, {}",
                    t.valid_count[r], t.write_ptr[r], t.zombies[r]
                )));
            }
        }
        Ok(())
    }

    /// Bytes of the bookkeeping.
    pub fn memory_bytes(&self) -> usize {
        self.table.memory_bytes()
            + self.usable.len()
            + (self.left.len() + self.open_ru.len() + self.opened_as.len()) * 4
            + (self.ru_of_block.len() + self.slot_of_plane.len() + self.base_plane.len()) * 4
    }
}
