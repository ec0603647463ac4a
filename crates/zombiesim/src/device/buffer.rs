//! The device's DRAM write buffer: pages the host wrote that flash does not hold yet.
//!
//! ```text
//!   host write L ─► hit: the buffered copy is replaced (absorbed: no program)
//!                └► miss: full? evict the policy's victim(s): a dirty victim is
//!                   written to flash (Cause::Buffer), a clean one just dropped;
//!                   then L is buffered, dirty
//!   host read L  ─► hit: served from DRAM;  miss: read from flash (not buffered)
//!   flush        ─► every dirty page written to flash; they stay buffered, clean
//!   FUA write, trim of L ─► the buffered copy of L is dropped (flash gets the write)
//!   power loss   ─► volatile: dirty pages are lost; non-volatile: they survive
//! ```
//!
//! A logical page is *device-shadow* exactly while a dirty copy of it sits here
//! ([`WriteBuffer::is_dirty`]): its flash copy (if any) is valid but stale. The
//! buffer keeps slot arrays and a hash map from logical page to slot; eviction order
//! is the [`Replacement`] policy's.
//!
//! A page keeps the writer's [`WriteHint`] while it is buffered, so that the page
//! carries it to the FTL when it is destaged ([`Destaged`]). The hints live in a slot
//! array allocated at the first hinted write: a buffer that never sees one pays
//! nothing for them.

use super::command::{WriteHint, NO_VALUE};
use super::eviction::{Replacement, SlotView};
use super::replacement;
use crate::config::DeviceConfig;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The buffer's counters and end state, as the report shows them.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BufferReport {
    pub capacity_pages: u64,
    pub policy: String,
    pub nonvolatile: bool,
    #[serde(flatten)]
    pub counters: BufferCounters,
    pub dirty_pages_end: u64,
}

/// Counters kept as the run goes (the report takes differences).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BufferCounters {
    /// Host page reads served from the buffer, and those that went to flash.
    pub read_hits: u64,
    pub read_misses: u64,
    /// Host page writes that found the page buffered (absorbed), and those that did not.
    pub write_hits: u64,
    pub write_misses: u64,
    /// Pages evicted to make room, and how many of them were dirty (written to flash).
    pub evictions: u64,
    pub dirty_evictions: u64,
    /// Flush commands, and the dirty pages they wrote to flash.
    pub flushes: u64,
    pub flushed_pages: u64,
    /// Host page writes with forced unit access (written through to flash).
    pub fua_pages: u64,
    /// Dirty pages lost to power loss (volatile buffer only).
    pub lost_pages: u64,
    /// Dirty pages GC took for a relocation (`gc.shadow_reads`): they became clean.
    pub gc_takes: u64,
    /// Dirty twin-shadow pages evicted without a write: the host holds a newer copy
    /// (`device.discard_twins`, 003 §3.2).
    pub twin_discards: u64,
    /// Dirty pages written because they were older than `device.buffer_max_dirty_age`.
    pub aged_pages: u64,
}

impl BufferCounters {
    /// `self − earlier`, field by field.
    pub fn since(&self, e: &BufferCounters) -> BufferCounters {
        BufferCounters {
            read_hits: self.read_hits - e.read_hits,
            read_misses: self.read_misses - e.read_misses,
            write_hits: self.write_hits - e.write_hits,
            write_misses: self.write_misses - e.write_misses,
            evictions: self.evictions - e.evictions,
            dirty_evictions: self.dirty_evictions - e.dirty_evictions,
            flushes: self.flushes - e.flushes,
            flushed_pages: self.flushed_pages - e.flushed_pages,
            fua_pages: self.fua_pages - e.fua_pages,
            lost_pages: self.lost_pages - e.lost_pages,
            gc_takes: self.gc_takes - e.gc_takes,
            twin_discards: self.twin_discards - e.twin_discards,
            aged_pages: self.aged_pages - e.aged_pages,
        }
    }
}

/// A dirty page the buffer gives up (evicted, flushed or aged), for the caller to
/// write to flash: the page, its content value ([`NO_VALUE`]: unknown) and the hint
/// it was written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Destaged {
    pub lpn: u64,
    pub value: u64,
    pub hint: WriteHint,
}

/// The write buffer.
#[derive(Clone)]
pub struct WriteBuffer {
    capacity: u32,
    slot_of: FxHashMap<u64, u32>,
    lpn: Vec<u64>,
    value: Vec<u64>,
    /// Each slot's write hint; empty until the first hinted write.
    hints: Vec<WriteHint>,
    dirty: Vec<bool>,
    free: Vec<u32>,
    dirty_pages: u64,
    policy: Box<dyn Replacement>,
    policy_name: &'static str,
    /// The policy evicts whole logical blocks: their pages are written in order.
    block_granular: bool,
    /// When each slot's page last became dirty (ns on the device clock), and the
    /// dirty pages in that order, for the compulsory flush of old dirty pages
    /// (`device.buffer_max_dirty_age`, ns; 0 = never).
    dirty_since: Vec<u64>,
    aging: std::collections::VecDeque<(u64, u32)>,
    max_dirty_age: u64,
    now: u64,
    nonvolatile: bool,
    pub counters: BufferCounters,
    scratch: Vec<u32>,
}

impl WriteBuffer {
    /// A buffer of `capacity` pages (at least 1) as `cfg` describes it.
    pub fn new(cfg: &DeviceConfig, capacity: u64, pages_per_block: u32) -> Self {
        let capacity = capacity.clamp(1, u32::MAX as u64 - 1) as u32;
        let n = capacity as usize;
        let mut slot_of = FxHashMap::default();
        slot_of.reserve(n);
        WriteBuffer {
            capacity,
            slot_of,
            lpn: vec![0; n],
            value: vec![0; n],
            hints: Vec::new(),
            dirty: vec![false; n],
            free: (0..capacity).rev().collect(),
            dirty_pages: 0,
            policy: replacement::build(
                cfg.buffer_policy,
                capacity,
                cfg.cflru_window,
                pages_per_block,
            ),
            block_granular: cfg.buffer_policy.block_granular(),
            dirty_since: vec![0; n],
            aging: std::collections::VecDeque::new(),
            max_dirty_age: (cfg.buffer_max_dirty_age * 1e9) as u64,
            now: 0,
            policy_name: cfg.buffer_policy.name(),
            nonvolatile: cfg.buffer_nonvolatile,
            counters: BufferCounters::default(),
            scratch: Vec::new(),
        }
    }

    /// Whether a dirty copy of `lpn` is buffered (the page is device-shadow).
    #[inline]
    pub fn is_dirty(&self, lpn: u64) -> bool {
        self.slot_of
            .get(&lpn)
            .is_some_and(|&s| self.dirty[s as usize])
    }

    /// The content value buffered for `lpn`, if it is buffered.
    pub fn value_of(&self, lpn: u64) -> Option<u64> {
        self.slot_of.get(&lpn).map(|&s| self.value[s as usize])
    }

    /// A host read of `lpn`: whether the buffer serves it.
    #[inline]
    pub fn read(&mut self, lpn: u64) -> bool {
        match self.slot_of.get(&lpn) {
            Some(&s) => {
                self.policy.touch(s, lpn, false);
                self.counters.read_hits += 1;
                true
            }
            None => {
                self.counters.read_misses += 1;
                false
            }
        }
    }

    /// A host write of `lpn` holding `value` with `hint`, if the page is buffered
    /// (absorbed): true. Otherwise the caller makes room ([`WriteBuffer::make_room`])
    /// and inserts it.
    #[inline]
    pub fn write_hit(&mut self, lpn: u64, value: u64, hint: WriteHint) -> bool {
        self.absorb(lpn, value, hint).is_some()
    }

    /// [`WriteBuffer::write_hit`], saying whether the absorbed page was dirty before:
    /// `Some(was_dirty)` when it was buffered, `None` when the caller is to insert it.
    #[inline]
    pub fn absorb(&mut self, lpn: u64, value: u64, hint: WriteHint) -> Option<bool> {
        let Some(&s) = self.slot_of.get(&lpn) else {
            self.counters.write_misses += 1;
            return None;
        };
        let i = s as usize;
        self.value[i] = value;
        self.set_hint(i, hint);
        let was_dirty = self.dirty[i];
        if !was_dirty {
            self.dirty[i] = true;
            self.dirty_pages += 1;
            self.note_dirty(s);
        }
        self.policy.touch(s, lpn, true);
        self.counters.write_hits += 1;
        Some(was_dirty)
    }

    /// Slot `i` now holds a page written with `hint`.
    #[inline]
    fn set_hint(&mut self, i: usize, hint: WriteHint) {
        if !self.hints.is_empty() {
            self.hints[i] = hint;
        } else if hint != WriteHint::NONE {
            self.hints = vec![WriteHint::NONE; self.capacity as usize];
            self.hints[i] = hint;
        }
    }

    /// Slot `i`'s page as it leaves dirty.
    #[inline]
    fn destaged(&self, i: usize) -> Destaged {
        Destaged {
            lpn: self.lpn[i],
            value: self.value[i],
            hint: self.hints.get(i).copied().unwrap_or(WriteHint::NONE),
        }
    }

    /// Make room for one page when the buffer is full: the policy's victims leave
    /// the buffer, and the dirty ones are appended to `out` for the caller to write
    /// to flash.
    pub fn make_room(&mut self, out: &mut Vec<Destaged>) {
        if !self.free.is_empty() {
            return;
        }
        let mut victims = std::mem::take(&mut self.scratch);
        victims.clear();
        self.policy.victims(
            &SlotView {
                lpn: &self.lpn,
                dirty: &self.dirty,
            },
            &mut victims,
        );
        debug_assert!(!victims.is_empty(), "a full buffer has a victim");
        let start = out.len();
        for &s in &victims {
            let i = s as usize;
            self.counters.evictions += 1;
            if self.dirty[i] {
                self.counters.dirty_evictions += 1;
                out.push(self.destaged(i));
            }
            self.drop_slot(s);
        }
        if self.block_granular {
            out[start..].sort_unstable_by_key(|d| d.lpn);
        }
        self.scratch = victims;
    }

    /// The page a write that misses would most likely evict next, when the buffer is
    /// full and its policy can tell (a hint for prefetching).
    #[inline]
    pub fn next_victim(&self) -> Option<u64> {
        if !self.free.is_empty() {
            return None;
        }
        let lpn = self.lpn[self.policy.next_victim()? as usize];
        self.warm(lpn);
        Some(lpn)
    }

    /// Look `lpn` up ahead of the write or eviction that will: the lookup's cache
    /// misses overlap the work before it (a hint: nothing changes).
    #[inline]
    pub fn warm(&self, lpn: u64) {
        std::hint::black_box(self.slot_of.get(&lpn));
    }

    /// Whether an evicted block is padded with the pages the buffer lacks (BPLRU).
    pub fn pads(&self) -> bool {
        self.policy.pads()
    }

    /// A page became dirty now: it joins the aging queue (when one is kept).
    #[inline]
    fn note_dirty(&mut self, s: u32) {
        if self.max_dirty_age > 0 {
            self.dirty_since[s as usize] = self.now;
            self.aging.push_back((self.now, s));
        }
    }

    /// The device clock reached `now` (ns): dirty pages older than
    /// `device.buffer_max_dirty_age` are appended to `out` for the caller to write
    /// (ascending); they stay buffered, clean.
    pub fn flush_aged(&mut self, now: u64, out: &mut Vec<Destaged>) {
        self.now = self.now.max(now);
        if self.max_dirty_age == 0 {
            return;
        }
        let start = out.len();
        while let Some(&(t, s)) = self.aging.front() {
            if t + self.max_dirty_age > self.now {
                break;
            }
            self.aging.pop_front();
            let i = s as usize;
            // Stale entries: the slot was cleaned, emptied or dirtied again since.
            if self.dirty[i] && self.dirty_since[i] == t {
                self.dirty[i] = false;
                self.dirty_pages -= 1;
                out.push(self.destaged(i));
            }
        }
        out[start..].sort_unstable_by_key(|d| d.lpn);
        self.counters.aged_pages += (out.len() - start) as u64;
    }

    /// Buffer `lpn` (not buffered yet, and room made), dirty, holding `value`,
    /// written with `hint`.
    #[inline]
    pub fn insert_dirty(&mut self, lpn: u64, value: u64, hint: WriteHint) {
        let s = self.free.pop().expect("room was made");
        let i = s as usize;
        self.lpn[i] = lpn;
        self.value[i] = value;
        self.set_hint(i, hint);
        self.dirty[i] = true;
        self.dirty_pages += 1;
        self.slot_of.insert(lpn, s);
        self.policy.insert(s, lpn);
        self.note_dirty(s);
    }

    /// Drop the buffered copy of `lpn`, if any (a trim, or a write through to flash).
    pub fn discard(&mut self, lpn: u64) {
        if let Some(&s) = self.slot_of.get(&lpn) {
            self.drop_slot(s);
        }
    }

    fn drop_slot(&mut self, s: u32) {
        let i = s as usize;
        if self.dirty[i] {
            self.dirty[i] = false;
            self.dirty_pages -= 1;
        }
        self.slot_of.remove(&self.lpn[i]);
        self.policy.remove(s, self.lpn[i]);
        self.free.push(s);
    }

    /// A flush: every dirty page, in ascending logical order, into `out`; they stay
    /// buffered, clean.
    pub fn flush(&mut self, out: &mut Vec<Destaged>) {
        self.counters.flushes += 1;
        let start = out.len();
        for &s in self.slot_of.values() {
            let i = s as usize;
            if self.dirty[i] {
                self.dirty[i] = false;
                out.push(self.destaged(i));
            }
        }
        out[start..].sort_unstable_by_key(|d| d.lpn);
        let n = (out.len() - start) as u64;
        self.dirty_pages -= n;
        self.counters.flushed_pages += n;
    }

    /// Power is lost. A volatile buffer loses everything: the dirty pages' logical
    /// numbers are appended to `lost` (ascending). A non-volatile buffer keeps its
    /// contents and loses nothing.
    pub fn power_loss(&mut self, lost: &mut Vec<u64>) {
        if self.nonvolatile {
            return;
        }
        let start = lost.len();
        let slots: Vec<u32> = self.slot_of.values().copied().collect();
        for s in slots {
            if self.dirty[s as usize] {
                lost.push(self.lpn[s as usize]);
            }
            self.drop_slot(s);
        }
        lost[start..].sort_unstable();
        self.counters.lost_pages += (lost.len() - start) as u64;
    }

    /// The report of the counters since `start`.
    pub fn report(&self, start: &BufferCounters) -> BufferReport {
        BufferReport {
            capacity_pages: self.capacity as u64,
            policy: self.policy_name.to_string(),
            nonvolatile: self.nonvolatile,
            counters: self.counters.since(start),
            dirty_pages_end: self.dirty_pages,
        }
    }

    /// Dirty pages buffered now.
    pub fn dirty_count(&self) -> u64 {
        self.dirty_pages
    }

    /// Check the buffer's bookkeeping: the map and the slots agree, and the dirty
    /// count is right.
    pub fn check(&self) -> Result<(), String> {
        let used = self.capacity as usize - self.free.len();
        if self.slot_of.len() != used {
            return Err(format!(
                "write buffer: {} pages mapped but {used} slots in use",
                self.slot_of.len()
            ));
        }
        let mut dirty = 0u64;
        for (&lpn, &s) in &self.slot_of {
            if self.lpn[s as usize] != lpn {
                return Err(format!(
                    "write buffer: slot {s} maps page {lpn} but holds {}",
                    self.lpn[s as usize]
                ));
            }
            dirty += u64::from(self.dirty[s as usize]);
        }
        if dirty != self.dirty_pages {
            return Err(format!(
                "write buffer: {dirty} dirty slots, counted {}",
                self.dirty_pages
            ));
        }
        Ok(())
    }

    /// Approximate bytes of memory the buffer's state occupies.
    pub fn memory_bytes(&self) -> usize {
        self.capacity as usize * (8 + 8 + 1 + 4 + 16 + 8)
            + self.dirty_since.len() * 8
            + self.aging.len() * 16
            + self.hints.len() * std::mem::size_of::<WriteHint>()
    }
}

impl crate::ftl::BufferView for WriteBuffer {
    fn any_dirty(&self) -> bool {
        self.dirty_pages > 0
    }

    #[inline]
    fn is_dirty(&self, lpn: u64) -> bool {
        WriteBuffer::is_dirty(self, lpn)
    }

    fn take(&mut self, lpn: u64) -> Option<u64> {
        let &s = self.slot_of.get(&lpn)?;
        let i = s as usize;
        if self.dirty[i] {
            self.dirty[i] = false;
            self.dirty_pages -= 1;
            self.counters.gc_takes += 1;
        }
        Some(self.value[i]).filter(|&v| v != NO_VALUE)
    }

    fn update_probability(&self, lpn: u64) -> f64 {
        self.slot_of
            .get(&lpn)
            .map_or(0.0, |&s| self.policy.update_probability(s))
    }
}
