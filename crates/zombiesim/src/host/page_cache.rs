//! A Linux-like buffer cache over the device's logical pages: CLOCK replacement, dirty
//! tracking, and the order in which dirty pages are written back.
//!
//! ```text
//!   slots[capacity]  (lpn, referenced, dirty)      ◄── CLOCK hand sweeps for a victim
//!   slot_of[lpn]     → slot or NONE
//!   dirty bits[lpn]  one bit per logical page       ◄── ascending scans within a file
//!   files            the logical space cut in `host.file_size` pieces (0 = one file,
//!                    a raw block device); each has a dirty count, the time it went
//!                    from clean to dirty, and a writeback cursor
//!   dirty_files      BTreeSet<(dirtied_when, file)>: oldest-dirtied file first
//! ```
//!
//! Writeback takes the oldest-dirtied file and sweeps it in ascending page order from
//! its cursor, once around; each run of consecutive dirty pages (up to `max_write`) is
//! one device command. A page is clean from the moment its writeback is submitted; a
//! file still dirty after a full sweep (pages re-dirtied meanwhile) counts as dirtied
//! anew. With one page per file this is a database writer's checkpoint queue: the
//! oldest-dirtied page first.

use crate::flash::NONE;
use std::collections::BTreeSet;

const REFERENCED: u8 = 1;
const DIRTY: u8 = 2;
/// Held by a file system's running transaction: newer than flash, not writable yet.
const PINNED: u8 = 4;
/// Pinned pages CLOCK passes over to find a victim before it takes one anyway.
const PINNED_SKIPS: u64 = 64;

/// What touching a page found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The page was already cached.
    pub hit: bool,
    /// The page went from clean (or absent) to dirty: the host now holds a newer copy.
    pub dirtied: bool,
    /// A dirty page was evicted to make room: it must be written back now.
    pub evicted_dirty: Option<u32>,
}

impl Access {
    /// No cache: nothing is buffered, the caller goes to the device.
    const UNCACHED: Access = Access {
        hit: false,
        dirtied: false,
        evicted_dirty: None,
    };
}

/// The host buffer cache.
pub struct PageCache {
    capacity: u32,
    slot_lpn: Vec<u32>,
    slot_flags: Vec<u8>,
    slot_of: Vec<u32>,
    used: u32,
    hand: u32,
    dirty_bits: Vec<u64>,
    dirty: u64,
    file_pages: u64,
    file_dirty: Vec<u32>,
    file_since: Vec<u64>,
    file_cursor: Vec<u32>,
    dirty_files: BTreeSet<(u64, u32)>,
    logical_pages: u64,
    pinned: u64,
}

/// The sweep of one file in progress.
#[derive(Clone, Copy, Debug)]
pub struct Sweep {
    pub file: u32,
    /// Pages of the file scanned so far in this sweep.
    scanned: u64,
}

impl PageCache {
    /// A cache of `capacity` pages over `logical_pages`, with files of `file_pages`
    /// (0 = the whole space is one file).
    pub fn new(capacity: u64, logical_pages: u64, file_pages: u64) -> Self {
        let capacity = capacity.min(logical_pages).min(u32::MAX as u64 - 1) as u32;
        let file_pages = if file_pages == 0 {
            logical_pages
        } else {
            file_pages.min(logical_pages)
        };
        let files = logical_pages.div_ceil(file_pages) as usize;
        PageCache {
            capacity,
            slot_lpn: vec![NONE; capacity as usize],
            slot_flags: vec![0; capacity as usize],
            slot_of: if capacity > 0 {
                vec![NONE; logical_pages as usize]
            } else {
                Vec::new()
            },
            used: 0,
            hand: 0,
            dirty_bits: vec![0; (logical_pages as usize).div_ceil(64)],
            dirty: 0,
            file_pages,
            file_dirty: vec![0; files],
            file_since: vec![0; files],
            file_cursor: vec![0; files],
            dirty_files: BTreeSet::new(),
            logical_pages,
            pinned: 0,
        }
    }

    pub fn capacity(&self) -> u64 {
        self.capacity as u64
    }

    /// Dirty pages now.
    pub fn dirty(&self) -> u64 {
        self.dirty
    }

    /// Pinned pages now: newer than flash but held by a transaction (they count as
    /// dirty memory; no writeback can take them until they are unpinned).
    pub fn pinned(&self) -> u64 {
        self.pinned
    }

    /// Whether the host holds a dirty copy of `lpn`.
    #[inline]
    pub fn is_dirty(&self, lpn: u64) -> bool {
        let l = lpn as usize;
        self.dirty_bits[l >> 6] & (1u64 << (l & 63)) != 0
    }

    /// Whether `lpn` is cached.
    pub fn contains(&self, lpn: u64) -> bool {
        self.capacity > 0 && self.slot_of[lpn as usize] != NONE
    }

    #[inline]
    fn file_of(&self, lpn: u64) -> u32 {
        (lpn / self.file_pages) as u32
    }

    fn set_dirty(&mut self, lpn: u64, now: u64) {
        let l = lpn as usize;
        self.dirty_bits[l >> 6] |= 1u64 << (l & 63);
        self.dirty += 1;
        let f = self.file_of(lpn);
        if self.file_dirty[f as usize] == 0 {
            self.file_since[f as usize] = now;
            self.dirty_files.insert((now, f));
        }
        self.file_dirty[f as usize] += 1;
    }

    fn set_clean(&mut self, lpn: u64) {
        let l = lpn as usize;
        debug_assert!(self.is_dirty(lpn));
        self.dirty_bits[l >> 6] &= !(1u64 << (l & 63));
        self.dirty -= 1;
        let f = self.file_of(lpn) as usize;
        self.file_dirty[f] -= 1;
        if self.file_dirty[f] == 0 {
            self.dirty_files.remove(&(self.file_since[f], f as u32));
        }
        if self.capacity > 0 {
            let slot = self.slot_of[l];
            if slot != NONE {
                self.slot_flags[slot as usize] &= !DIRTY;
            }
        }
    }

    /// Find a slot for `lpn`, evicting by CLOCK if full. Returns the slot and the dirty
    /// page evicted, if any (it is clean and gone from the cache on return).
    fn allocate(&mut self, lpn: u64) -> (u32, Option<u32>) {
        let slot = if self.used < self.capacity {
            self.used += 1;
            self.used - 1
        } else {
            // Pinned pages are passed over, a bounded number of them (then the hand
            // takes what it finds: a pinned page dropped unwritten, its transaction
            // still holding the contents).
            let mut budget = PINNED_SKIPS;
            loop {
                let h = self.hand as usize;
                self.hand = if self.hand + 1 == self.capacity {
                    0
                } else {
                    self.hand + 1
                };
                let flags = self.slot_flags[h];
                if flags & PINNED != 0 && budget > 0 {
                    budget -= 1;
                } else if flags & REFERENCED != 0 {
                    self.slot_flags[h] &= !REFERENCED;
                } else {
                    break h as u32;
                }
            }
        };
        let mut evicted = None;
        let old = self.slot_lpn[slot as usize];
        self.clear_pin(slot);
        if old != NONE {
            if self.slot_flags[slot as usize] & DIRTY != 0 {
                self.set_clean(old as u64);
                evicted = Some(old);
            }
            self.slot_of[old as usize] = NONE;
        }
        self.slot_lpn[slot as usize] = lpn as u32;
        self.slot_flags[slot as usize] = REFERENCED;
        self.slot_of[lpn as usize] = slot;
        (slot, evicted)
    }

    /// The application reads `lpn`. A miss brings it in (the caller reads the device).
    pub fn read(&mut self, lpn: u64) -> Access {
        if self.capacity == 0 {
            return Access::UNCACHED;
        }
        let slot = self.slot_of[lpn as usize];
        if slot != NONE {
            self.slot_flags[slot as usize] |= REFERENCED;
            return Access {
                hit: true,
                dirtied: false,
                evicted_dirty: None,
            };
        }
        let (_, evicted_dirty) = self.allocate(lpn);
        Access {
            hit: false,
            dirtied: false,
            evicted_dirty,
        }
    }

    /// Slot `slot` is no longer pinned (if it was).
    fn clear_pin(&mut self, slot: u32) {
        let flags = &mut self.slot_flags[slot as usize];
        if *flags & PINNED != 0 {
            *flags &= !PINNED;
            self.pinned -= 1;
        }
    }

    /// The slot holding `lpn`, allocated (by CLOCK) on a miss: `(slot, hit, the dirty
    /// page evicted)`; `None` without a cache.
    fn slot_for(&mut self, lpn: u64) -> Option<(u32, bool, Option<u32>)> {
        if self.capacity == 0 {
            return None;
        }
        let slot = self.slot_of[lpn as usize];
        if slot != NONE {
            return Some((slot, true, None));
        }
        let (slot, evicted) = self.allocate(lpn);
        Some((slot, false, evicted))
    }

    /// The application writes a whole page `lpn` (buffered): it becomes dirty.
    /// Without a cache nothing is buffered (`hit = false`, the caller writes through).
    pub fn write(&mut self, lpn: u64, now: u64) -> Access {
        let Some((slot, hit, evicted_dirty)) = self.slot_for(lpn) else {
            return Access::UNCACHED;
        };
        let flags = &mut self.slot_flags[slot as usize];
        *flags |= REFERENCED;
        let dirtied = *flags & DIRTY == 0;
        if dirtied {
            *flags |= DIRTY;
            self.set_dirty(lpn, now);
        }
        Access {
            hit,
            dirtied,
            evicted_dirty,
        }
    }

    /// A file system holds newer contents of `lpn` in its running transaction: cached,
    /// pinned (not dirty: no writeback may take them) until [`PageCache::unpin`]. A page
    /// already dirty stays dirty (its committed contents must still go home).
    pub fn pin(&mut self, lpn: u64) -> Access {
        let Some((slot, hit, evicted_dirty)) = self.slot_for(lpn) else {
            return Access::UNCACHED;
        };
        let flags = &mut self.slot_flags[slot as usize];
        *flags |= REFERENCED;
        if *flags & (DIRTY | PINNED) == 0 {
            *flags |= PINNED;
            self.pinned += 1;
        }
        Access {
            hit,
            dirtied: false,
            evicted_dirty,
        }
    }

    /// The transaction holding `lpn` committed: the page is dirty now (cached again if
    /// it was dropped meanwhile).
    pub fn unpin(&mut self, lpn: u64, now: u64) -> Access {
        if self.capacity > 0 && self.slot_of[lpn as usize] != NONE {
            self.clear_pin(self.slot_of[lpn as usize]);
        }
        self.write(lpn, now)
    }

    /// The application discards `lpn` (trim): a dirty copy is dropped unwritten.
    /// Returns whether a dirty copy was dropped.
    pub fn discard(&mut self, lpn: u64) -> bool {
        let was_dirty = self.take_dirty(lpn);
        if self.capacity > 0 {
            let slot = self.slot_of[lpn as usize];
            if slot != NONE {
                self.clear_pin(slot);
                self.slot_of[lpn as usize] = NONE;
                self.slot_lpn[slot as usize] = NONE;
                self.slot_flags[slot as usize] = 0;
            }
        }
        was_dirty
    }

    /// Mark `lpn` clean for a writeback the caller submits; false if it was not dirty.
    pub fn take_dirty(&mut self, lpn: u64) -> bool {
        let was_dirty = self.is_dirty(lpn);
        if was_dirty {
            self.set_clean(lpn);
        }
        was_dirty
    }

    /// The oldest-dirtied file, if it went dirty at or before `before`.
    pub fn oldest_dirty_file(&self, before: u64) -> Option<u32> {
        self.dirty_files
            .first()
            .filter(|(since, _)| *since <= before)
            .map(|&(_, f)| f)
    }

    /// Start a sweep of `file` from its cursor.
    pub fn start_sweep(&self, file: u32) -> Sweep {
        Sweep { file, scanned: 0 }
    }

    /// The next run of consecutive dirty pages of the sweep (at most `max` pages), marked
    /// clean; `None` when the sweep has gone once around the file. A file still dirty at
    /// the end of its sweep counts as dirtied at `now`.
    pub fn next_run(&mut self, sweep: &mut Sweep, max: u32, now: u64) -> Option<(u64, u32)> {
        let f = sweep.file as usize;
        let start = f as u64 * self.file_pages;
        let len = self.file_pages.min(self.logical_pages - start);
        while sweep.scanned < len && self.file_dirty[f] > 0 {
            let cursor = self.file_cursor[f] as u64;
            // Next dirty page at or after the cursor, within the file.
            let from = start + cursor;
            let found = self.next_dirty(from, start + len);
            let Some(lpn) = found else {
                sweep.scanned += len - cursor;
                self.file_cursor[f] = 0;
                continue;
            };
            let mut n = 0u32;
            while n < max && lpn + (n as u64) < start + len && self.is_dirty(lpn + n as u64) {
                self.set_clean(lpn + n as u64);
                n += 1;
            }
            let end = lpn + n as u64 - start;
            sweep.scanned += end - cursor;
            self.file_cursor[f] = if end >= len { 0 } else { end as u32 };
            return Some((lpn, n));
        }
        if self.file_dirty[f] > 0 {
            // Re-dirtied during the sweep: it starts a new dirty period now.
            self.dirty_files.remove(&(self.file_since[f], f as u32));
            self.file_since[f] = now;
            self.dirty_files.insert((now, f as u32));
        }
        None
    }

    /// The first dirty page in `from .. end`.
    fn next_dirty(&self, from: u64, end: u64) -> Option<u64> {
        let mut w = (from >> 6) as usize;
        let mut word = self.dirty_bits.get(w)? & (!0u64 << (from & 63));
        loop {
            if word != 0 {
                let lpn = (w as u64) * 64 + word.trailing_zeros() as u64;
                return (lpn < end).then_some(lpn);
            }
            w += 1;
            if (w as u64) * 64 >= end {
                return None;
            }
            word = self.dirty_bits[w];
        }
    }

    /// Bytes of memory the cache model holds.
    pub fn memory_bytes(&self) -> usize {
        self.slot_lpn.len() * 5
            + self.slot_of.len() * 4
            + self.dirty_bits.len() * 8
            + self.file_dirty.len() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_evicts_unreferenced_pages_and_reports_dirty_victims() {
        let mut c = PageCache::new(2, 100, 0);
        assert!(c.write(1, 0).dirtied);
        assert!(!c.read(2).hit);
        assert!(c.read(2).hit);
        // Both referenced: the hand clears both bits, then evicts slot 0 (page 1, dirty).
        let a = c.read(3);
        assert_eq!(a.evicted_dirty, Some(1));
        assert!(!c.contains(1));
        assert_eq!(c.dirty(), 0);
        // A second write to a dirty page does not dirty it again.
        assert!(c.write(3, 1).dirtied);
        assert!(!c.write(3, 2).dirtied);
    }

    #[test]
    fn writeback_sweeps_oldest_file_in_ascending_runs() {
        let mut c = PageCache::new(64, 64, 16);
        for (t, lpn) in [40u64, 41, 42, 3, 5, 4, 20].into_iter().enumerate() {
            c.write(lpn, 10 + t as u64);
        }
        // File 2 (pages 32-47) went dirty first, at time 10; file 0 at time 13.
        assert_eq!(c.oldest_dirty_file(u64::MAX), Some(2));
        assert_eq!(c.oldest_dirty_file(9), None);
        let mut s = c.start_sweep(2);
        assert_eq!(c.next_run(&mut s, 2, 100), Some((40, 2)));
        assert_eq!(c.next_run(&mut s, 2, 100), Some((42, 1)));
        assert_eq!(c.next_run(&mut s, 2, 100), None);
        assert_eq!(c.oldest_dirty_file(u64::MAX), Some(0));
        let mut s = c.start_sweep(0);
        assert_eq!(c.next_run(&mut s, 8, 100), Some((3, 3)));
        assert_eq!(c.next_run(&mut s, 8, 100), None);
        assert_eq!(c.dirty(), 1, "page 20 (file 1) is left");
    }

    #[test]
    fn a_sweep_goes_once_around_from_the_cursor() {
        let mut c = PageCache::new(0, 32, 0);
        // No cache: nothing is buffered.
        assert!(!c.write(3, 0).dirtied);
        let mut c = PageCache::new(32, 32, 0);
        for lpn in [2u64, 9, 30] {
            c.write(lpn, 0);
        }
        let mut s = c.start_sweep(0);
        assert_eq!(c.next_run(&mut s, 1, 0), Some((2, 1)));
        c.write(1, 5); // behind the cursor: left for the next sweep
        assert_eq!(c.next_run(&mut s, 1, 0), Some((9, 1)));
        c.write(12, 6); // ahead of the cursor: this sweep takes it
        assert_eq!(c.next_run(&mut s, 1, 0), Some((12, 1)));
        assert_eq!(c.next_run(&mut s, 1, 0), Some((30, 1)));
        assert_eq!(c.next_run(&mut s, 1, 7), None);
        // Still dirty after the sweep: dirtied anew at time 7.
        assert_eq!(c.oldest_dirty_file(6), None);
        let mut s = c.start_sweep(0);
        assert_eq!(c.next_run(&mut s, 1, 8), Some((1, 1)));
        assert_eq!(c.dirty(), 0);
    }
}
