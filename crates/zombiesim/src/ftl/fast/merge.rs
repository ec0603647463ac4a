//! FAST's merges: reclaiming the sequential log block (switch, partial or full
//! merge) and a victim random log block (a full merge of every logical block with a
//! valid page in it), with BA-BM (004 Fig. 2): a page dirty in the device buffer is
//! taken from the buffer instead of flash and becomes clean there.

use super::{FastFtl, STREAM_DATA};
use crate::error::Result;
use crate::flash::NONE;
use crate::ftl::{BlockMapping, BufferView};
use crate::stats::Cause;

impl FastFtl {
    /// Move the newest copy of `lpn` (or, with BA-BM, its dirty buffered copy) to
    /// page `offset` of `to` for a merge of `cause`. Returns whether a page was
    /// programmed (nothing is when `lpn` has no copy at all).
    fn move_page(
        &mut self,
        lpn: u64,
        to: u32,
        offset: u32,
        cause: Cause,
        buffer: &mut dyn BufferView,
    ) -> bool {
        let src = self.newest(lpn);
        if self.buffer_aware_merge && buffer.is_dirty(lpn) {
            // The buffered copy is the newest: it goes to flash now, and its
            // eviction will write nothing.
            let value = buffer.take(lpn);
            if src != NONE {
                self.base.invalidate(src);
            }
            self.log_ppn[lpn as usize] = NONE;
            let plane = self.base.geo.plane_of(to);
            let ppn = self.base.copy_to(to, offset, lpn, plane, true, cause);
            self.base.oracle_write(lpn, ppn, value);
            return true;
        }
        if src == NONE {
            return false;
        }
        let plane = self.base.geo.plane_of(self.base.flash.block_of(src));
        self.base.invalidate(src);
        self.log_ppn[lpn as usize] = NONE;
        let ppn = self.base.copy_to(to, offset, lpn, plane, false, cause);
        self.base.oracle_copy(src, ppn);
        true
    }

    /// Whether a merge of logical block `b` would move any page.
    fn has_pages(&self, b: u32, buffer: &dyn BufferView) -> bool {
        let ppb = self.base.ppb() as u64;
        let first = b as u64 * ppb;
        (first..first + ppb).any(|lpn| {
            self.newest(lpn) != NONE || (self.buffer_aware_merge && buffer.is_dirty(lpn))
        })
    }

    /// Full merge of logical block `b`: the newest copy of every page goes to its
    /// offset in a fresh block, which becomes the data block; the old data block is
    /// erased. A logical block with no page left is unmapped instead. The
    /// sequential log block, when it belongs to `b`, is left empty and erased.
    pub(super) fn full_merge(&mut self, b: u32, buffer: &mut dyn BufferView) -> Result<()> {
        let ppb = self.base.ppb();
        let old = self.data[b as usize];
        let new = if self.has_pages(b, buffer) {
            let new = self.free.take(&mut self.base, STREAM_DATA)?;
            let first = b as u64 * ppb as u64;
            for k in 0..ppb {
                self.move_page(first + k as u64, new, k, Cause::MergeFull, buffer);
            }
            new
        } else {
            NONE
        };
        self.data[b as usize] = new;
        if old != NONE {
            self.free.erase(&mut self.base, old, Cause::MergeFull);
        }
        self.base.counters.merges[2] += 1;
        if self.sw != NONE && self.sw_owner == b {
            debug_assert_eq!(self.base.flash.valid_count[self.sw as usize], 0);
            self.free.erase(&mut self.base, self.sw, Cause::MergeFull);
            self.base.counters.gc_victims += 1;
            self.sw = NONE;
            self.sw_owner = NONE;
        }
        Ok(())
    }

    /// Reclaim the sequential log block: a switch merge when it holds every page of
    /// its logical block, valid and in order; a partial merge when the pages it
    /// holds are all still valid (the rest are copied into it, then it is switched);
    /// a full merge otherwise. An empty one is just erased.
    pub(super) fn reclaim_sw(&mut self, buffer: &mut dyn BufferView) -> Result<()> {
        let s = self.sw;
        let b = self.sw_owner;
        let ppb = self.base.ppb();
        self.base.counters.gc_invocations += 1;
        let valid = self.base.flash.valid_count[s as usize];
        let written = self.base.flash.write_ptr[s as usize];
        if valid == 0 {
            self.free.erase(&mut self.base, s, Cause::MergeFull);
            self.base.counters.gc_victims += 1;
            self.sw = NONE;
            self.sw_owner = NONE;
            return Ok(());
        }
        // Its pages are programmed at offsets 0, 1, ... without gaps: all of them
        // are valid exactly when the valid count is the write pointer.
        if valid != written {
            return self.full_merge(b, buffer);
        }
        let first = b as u64 * ppb as u64;
        let cause = if written == ppb {
            Cause::MergeSwitch
        } else {
            Cause::MergePartial
        };
        for k in written..ppb {
            self.move_page(first + k as u64, s, k, cause, buffer);
        }
        for k in 0..written {
            self.log_ppn[(first + k as u64) as usize] = NONE;
        }
        let old = self.data[b as usize];
        self.data[b as usize] = s;
        if old != NONE {
            self.free.erase(&mut self.base, old, cause);
        }
        self.sw = NONE;
        self.sw_owner = NONE;
        let c = &mut self.base.counters;
        c.merges[if cause == Cause::MergeSwitch { 0 } else { 1 }] += 1;
        c.gc_victims += 1;
        Ok(())
    }

    /// Reclaim a random log block: the victim (`ftl.log_victim`) is emptied by a
    /// full merge of every logical block with a valid page in it and erased; any
    /// other full RW log block that merges left empty is erased too.
    pub(super) fn reclaim_rw(&mut self, buffer: &mut dyn BufferView) -> Result<()> {
        let i = self.choose_victim(buffer);
        let Some(v) = self.rw.remove(i) else {
            return Ok(());
        };
        self.base.counters.gc_invocations += 1;
        let ppb = self.base.ppb();
        let mut associated: Vec<u32> = self
            .base
            .flash
            .valid_pages(v)
            .map(|p| self.base.flash.owner[p as usize] / ppb)
            .collect();
        associated.sort_unstable();
        associated.dedup();
        for b in associated {
            self.full_merge(b, buffer)?;
        }
        debug_assert_eq!(self.base.flash.valid_count[v as usize], 0);
        self.free.erase(&mut self.base, v, Cause::MergeFull);
        self.base.counters.gc_victims += 1;
        let mut j = 0;
        while j < self.rw.len() {
            let l = self.rw[j];
            let f = &self.base.flash;
            if f.write_ptr[l as usize] == ppb && f.valid_count[l as usize] == 0 {
                self.rw.remove(j);
                self.free.erase(&mut self.base, l, Cause::MergeFull);
                self.base.counters.gc_victims += 1;
            } else {
                j += 1;
            }
        }
        Ok(())
    }
}
