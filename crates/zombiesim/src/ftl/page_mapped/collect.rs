//! Garbage collection of the page-mapped FTL: victim selection, copying out,
//! erasing; foreground (watermarks) and background (idle time).

use super::{prefetch, PageMappedFtl};
use crate::error::{Error, Result};
use crate::gc::SelectCtx;
use crate::stats::Cause;

impl PageMappedFtl {
    /// Ask unit `u`'s policy for a victim (removed from its candidates).
    fn select_victim(&mut self, u: usize) -> Option<u32> {
        let mut ctx = SelectCtx {
            flash: &self.flash,
            now: self.clock,
            rng: &mut self.rng,
        };
        self.blocks.units[u].policy.select(&mut ctx)
    }

    /// Garbage-collect unit `u` until it has `high` free blocks; with
    /// `gc.max_victims_per_trigger`, stop after that many victims unless the unit is
    /// down to `gc.hard_watermark` free blocks.
    pub(super) fn collect(&mut self, u: usize) -> Result<()> {
        self.in_gc = true;
        self.counters.gc_invocations += 1;
        let result = self.collect_inner(u);
        self.in_gc = false;
        result
    }

    fn collect_inner(&mut self, u: usize) -> Result<()> {
        let ppb = self.geo.pages_per_block;
        let mut fruitless = 0usize;
        let mut victims = 0u32;
        // GC operations are issued when the request that triggered GC was.
        let mut start = self.ops.now();
        while self.blocks.units[u].free < self.high {
            if self.max_victims > 0
                && victims >= self.max_victims
                && self.blocks.units[u].free > self.hard
            {
                return Ok(());
            }
            victims += 1;
            let victim = self.select_victim(u);
            let Some(victim) = victim else {
                if self.blocks.units[u].free == 0 {
                    return Err(Error::DeviceFull {
                        reason: format!("GC unit {u} has no free block and nothing to reclaim"),
                    });
                }
                return Ok(());
            };
            if self.flash.valid_count[victim as usize] == ppb {
                fruitless += 1;
                if fruitless > self.blocks.units[u].policy.len() + 1 {
                    return Err(Error::DeviceFull {
                        reason: format!(
                            "GC unit {u}: every candidate block is fully valid; nothing can be reclaimed"
                        ),
                    });
                }
            } else {
                fruitless = 0;
            }
            let scored = self.blocks.units[u].policy.last_scored();
            start += self.ops.search(scored);
            self.reclaim(u, victim, start)?;
        }
        Ok(())
    }

    /// Copy a victim's valid pages out, then erase it.
    ///
    /// The mapping-table entries of the pages to copy are scattered over the whole
    /// table, so each update is a cache miss; the valid pages are gathered first and
    /// their entries prefetched a few copies ahead, which overlaps the misses.
    fn reclaim(&mut self, u: usize, victim: u32, start: u64) -> Result<()> {
        const AHEAD: usize = 12;
        self.flash.take_victim(victim);
        self.counters.gc_victims += 1;
        // Copies stay on the victim's plane (copy-back), so each GC stream (one per
        // region, plus the zombie block) needs at most one fresh block per victim.
        let plane = self.geo.plane_of(victim);
        let mut pages = std::mem::take(&mut self.scratch);
        pages.clear();
        pages.extend(self.flash.valid_pages(victim));
        for &ppn in pages.iter().take(AHEAD) {
            prefetch(&self.l2p, self.flash.owner[ppn as usize] as usize);
        }
        for i in 0..pages.len() {
            if let Some(&ahead) = pages.get(i + AHEAD) {
                prefetch(&self.l2p, self.flash.owner[ahead as usize] as usize);
            }
            let ppn = pages[i];
            let lpn = self.flash.owner[ppn as usize];
            self.ops.copy(plane, start);
            let zombie = self.is_zombie(lpn as usize);
            if zombie {
                self.change_zombies(victim, false);
            }
            self.flash.invalidate(ppn, self.clock);
            self.blocks.units[u].valid -= 1;
            let stream = self.gc_stream(lpn as usize, zombie);
            let new = match self.program(plane, stream, lpn, Cause::Gc, start) {
                Ok(new) => new,
                Err(e) => {
                    self.scratch = pages;
                    return Err(e);
                }
            };
            self.l2p[lpn as usize] = new;
            if self.content.is_some() {
                self.content_moved(lpn, ppn, new);
            }
            self.counters.gc_pages_copied += 1;
            if zombie {
                self.change_zombies(self.flash.block_of(new), true);
                self.counters.gc_zombie_pages_copied += 1;
            }
            if let Some(o) = &mut self.oracle {
                o.copy(ppn, new);
            }
        }
        self.scratch = pages;
        debug_assert_eq!(self.flash.valid_count[victim as usize], 0);
        if self.content.is_some() {
            self.content_erasing(victim);
        }
        self.flash.erase(victim);
        self.ops.erase(plane, victim, start);
        self.blocks.release(victim);
        Ok(())
    }

    /// Background GC: while the device is idle, reclaim one victim at a time in the
    /// unit with the fewest free blocks below `gc.background_watermark`. A victim is
    /// started only before `until` and runs to completion (it may delay the next
    /// request). Victims with no invalid page are left alone.
    pub(super) fn background_collect(&mut self, from: u64, until: u64) -> Result<()> {
        if self.background == 0 || !self.ops.timed() {
            return Ok(());
        }
        let ppb = self.geo.pages_per_block;
        let mut start = from;
        while start < until {
            let target = self.background;
            let Some(u) = (0..self.blocks.units.len())
                .filter(|&u| self.blocks.units[u].free < target)
                .min_by_key(|&u| (self.blocks.units[u].free, u))
            else {
                break;
            };
            let victim = self.select_victim(u);
            let Some(victim) = victim else { break };
            if self.flash.valid_count[victim as usize] == ppb {
                self.blocks.units[u].policy.insert(victim, &self.flash);
                break;
            }
            self.in_gc = true;
            let result = self.reclaim(u, victim, start);
            self.in_gc = false;
            result?;
            self.counters.gc_background_victims += 1;
            let plane = self.geo.plane_of(victim);
            start = self.ops.ready_at(plane, start).unwrap_or(until);
        }
        Ok(())
    }
}
