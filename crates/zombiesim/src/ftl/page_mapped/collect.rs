//! Garbage collection of the page-mapped FTL: victim selection, copying out,
//! erasing; foreground (watermarks) and background (idle time).

use super::{PageMappedFtl, ShadowGc};
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, NONE};
use crate::ftl::{BufferView, PageState};
use crate::gc::SelectCtx;
use crate::placement::GcCopy;
use crate::stats::Cause;
use crate::timing::CopyKind;

/// Copies ahead of the one being made whose mapping entries GC asks the cache for, page
/// by page and in stripes.
const COPY_AHEAD: usize = 32;

impl PageMappedFtl {
    /// Ask unit `u`'s policy for a victim (removed from its candidates); an error when
    /// the policy failed (one decided outside the simulator).
    pub(in crate::ftl) fn select_victim(&mut self, u: usize) -> Result<Option<u32>> {
        // With reclaim units the candidates are RUs, scored on their sums.
        let blocks = &mut self.blocks;
        let flash = match blocks.rus.as_deref() {
            Some(rus) => &rus.table,
            None => &self.base.flash,
        };
        let mut ctx = SelectCtx {
            flash,
            now: self.base.clock,
            rng: &mut self.rng,
            chain: blocks.placement.chain(),
        };
        let policy = &mut blocks.units[u].policy;
        match policy.select(&mut ctx) {
            None => match policy.failure() {
                Some(why) => Err(Error::config("victim", why)),
                None => Ok(None),
            },
            found => Ok(found),
        }
    }

    /// Garbage-collect unit `u` until it has `high` free blocks; with
    /// `gc.max_victims_per_trigger`, stop after that many victims unless the unit is
    /// down to `gc.hard_watermark` free blocks.
    pub(super) fn collect(&mut self, u: usize, buffer: &mut dyn BufferView) -> Result<()> {
        self.in_gc = true;
        self.base.counters.gc_invocations += 1;
        let result = self.collect_inner(u, buffer);
        self.in_gc = false;
        result
    }

    fn collect_inner(&mut self, u: usize, buffer: &mut dyn BufferView) -> Result<()> {
        let mut fruitless = 0usize;
        let mut victims = 0u32;
        // GC operations are issued when the request that triggered GC was.
        let mut start = self.base.ops.now();
        while self.blocks.units[u].free < self.high {
            if self.max_victims > 0
                && victims >= self.max_victims
                && self.blocks.units[u].free > self.hard
            {
                return Ok(());
            }
            victims += 1;
            let victim = self.select_victim(u)?;
            let Some(victim) = victim else {
                if self.blocks.units[u].free == 0 {
                    return Err(Error::DeviceFull {
                        reason: format!("GC unit {u} has no free block and nothing to reclaim"),
                    });
                }
                return Ok(());
            };
            if self.postpone > 0.0
                && self.blocks.units[u].free >= self.low
                && self.victim_invalid_share(victim) < self.postpone
            {
                // Lazy reclaim: not worth it yet, and GC is not forced.
                self.return_candidate(victim);
                return Ok(());
            }
            if self.victim_is_full(victim) && !self.blocks.units[u].policy.advances() {
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
            start += self.base.ops.search(scored);
            self.reclaim(u, victim, start, buffer)?;
        }
        Ok(())
    }

    /// Copy a victim's valid pages out, then erase it.
    pub(super) fn reclaim(
        &mut self,
        u: usize,
        victim: u32,
        start: u64,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        if self.blocks.rus.is_some() {
            return self.reclaim_ru(u, victim, start, buffer);
        }
        let v = victim as usize;
        let stream = u32::from(self.base.flash.stream[v]);
        self.blocks
            .count_reclaim(stream, self.base.flash.valid_count[v]);
        self.base.flash.take_victim(victim);
        self.base.counters.gc_victims += 1;
        self.relocate_valid(u, victim, start, Cause::Gc, buffer)?;
        debug_assert_eq!(self.base.flash.valid_count[victim as usize], 0);
        if self.content.is_some() {
            self.content_erasing(victim);
        }
        let plane = self.base.geo.plane_of(victim);
        self.blocks.units[u].programmed -= u64::from(self.base.flash.write_ptr[victim as usize]);
        self.blocks.reclaimed(victim, stream, self.base.clock);
        self.base.flash.erase(victim);
        self.base.ops.erase(plane, victim, start, Cause::Gc);
        self.blocks.release(victim);
        Ok(())
    }

    /// Move every valid page of `block` (GC's victim, or a block due for refresh) to
    /// another block of its plane, issued at `start`.
    ///
    /// GC treats each page by its state (SPEC §1, 003 §3.3): a device-shadow or
    /// twin-shadow page is taken from the write buffer with `gc.shadow_reads` (no
    /// flash read; the buffered copy becomes clean), or dropped with
    /// `gc.skip_shadows` when only the buffer holds its newer copy; a host-shadow or
    /// twin-shadow page goes to the zombie stream (fast-write mode with
    /// `gc.fast_write`). Refresh moves every page as it is, in normal mode.
    ///
    /// The mapping-table entries of the pages to move are scattered over the whole
    /// table, so each update is a cache miss; the valid pages are gathered first and
    /// their entries prefetched a few copies ahead, which overlaps the misses.
    pub(super) fn relocate_valid(
        &mut self,
        u: usize,
        block: u32,
        start: u64,
        cause: Cause,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        let gc = cause == Cause::Gc;
        // Copies stay on the block's plane (copy-back), so each GC stream (one per
        // region, plus the zombie block) needs at most one fresh block per victim.
        let plane = self.base.geo.plane_of(block);
        let mut pages = std::mem::take(&mut self.scratch);
        pages.clear();
        pages.extend(self.base.flash.valid_pages(block));
        let mut result = Ok(());
        let ShadowGc { reads, fast, skip } = if gc { self.shadow } else { ShadowGc::default() };
        let fast = fast && self.layout.zombie_stream.is_some();
        // GC takes pages out of the buffer as it goes, so this is asked once per page
        // only while some page is dirty.
        let mut any_dirty = buffer.any_dirty();
        // The age the placement policy reads, before the copies stamp the block.
        let block_modified = self.base.flash.last_modified[block as usize];
        let from_stream = self.base.flash.stream[block as usize] as u32;
        let fdp = self.blocks.rus.is_some();
        // Internal pages (beyond the host's) go back to the translation stream.
        let internal = self
            .layout
            .translation_stream
            .map(|s| (self.base.geo.logical_pages, s));
        // Counted here and added once: relocated pages by state, buffer reads, fast programs.
        let mut by_state = [0u64; 4];
        let (mut buffer_reads, mut fast_programs) = (0u64, 0u64);
        // Pages that left the block (copied or skipped): the victim RU's sums, once.
        let mut left_victim = 0u32;
        // Copies that all go to one stream with nothing else to book (no content layer,
        // oracle or internal pages) can move together: the pages that need no look of
        // their own (not a known zombie, not dirty in the buffer) go in stretches, the
        // others one by one below, in the victim's page order. A stretch moves in runs
        // of one destination block, or with reclaim units in stripes over the planes of
        // the stream's reclaim group.
        let plain =
            if gc && internal.is_none() && self.content.is_none() && self.base.oracle.is_none() {
                self.blocks.victim_gc_stream(from_stream)
            } else {
                None
            };
        let (batch, striped) = if fdp { (None, plain) } else { (plain, None) };
        // No known zombie on the block: no page needs its mark read.
        let no_zombies = self.base.flash.zombies[block as usize] == 0;
        for &ppn in pages.iter().take(COPY_AHEAD) {
            crate::table::prefetch(&self.l2p, self.base.flash.owner[ppn as usize] as usize);
        }
        let mut i = 0;
        while i < pages.len() {
            if let Some(stream) = batch {
                let end = i + self.plain_stretch(&pages[i..], no_zombies, any_dirty, buffer);
                if end > i {
                    let (copied, outcome) =
                        self.relocate_runs(u, plane, start, stream, &pages[i..end], buffer);
                    by_state[0] += copied;
                    if outcome.is_err() {
                        result = outcome;
                        break;
                    }
                    i = end;
                    continue;
                }
            } else if let Some(stream) = striped {
                let k = self.plain_stretch(&pages[i..], no_zombies, any_dirty, buffer);
                let copied = self.relocate_striped(u, plane, start, stream, &pages[i..], k);
                if copied > 0 {
                    by_state[0] += copied as u64;
                    left_victim += copied as u32;
                    i += copied;
                    continue;
                }
            }
            if let Some(&ahead) = pages.get(i + COPY_AHEAD) {
                crate::table::prefetch(&self.l2p, self.base.flash.owner[ahead as usize] as usize);
            }
            let ppn = pages[i];
            i += 1;
            let lpn = self.base.flash.owner[ppn as usize];
            let zombie = self.is_zombie(lpn as usize);
            let device = any_dirty && buffer.is_dirty(lpn as u64);
            if zombie {
                if let Some(p) = self.lifetimes.as_deref_mut().filter(|_| gc) {
                    p.copied();
                }
                self.change_zombies(block, false, lpn as usize);
            }
            self.base.flash.invalidate(ppn, self.base.clock);
            self.blocks.units[u].valid -= 1;
            left_victim += 1;
            if !gc {
                if self.base.flash.status[block as usize] == BlockStatus::Closed {
                    let valid = self.base.flash.valid_count[block as usize];
                    self.block_changed(block, valid);
                }
            } else if skip && device && !zombie {
                // Only the buffer holds the newest copy now: nothing is copied.
                self.l2p[lpn as usize] = NONE;
                self.base.counters.gc_skipped += 1;
                if let Some(o) = &mut self.base.oracle {
                    o.skip(lpn as usize);
                }
                continue;
            }
            let from_buffer = reads && device;
            let kind = CopyKind {
                from_buffer,
                fast: fast && zombie,
            };
            let value = if from_buffer {
                let v = buffer.take(lpn as u64);
                any_dirty = buffer.any_dirty();
                v
            } else {
                None
            };
            self.base.ops.copy(plane, start, kind, cause);
            let stream = match internal {
                Some((host, s)) if lpn as u64 >= host => s,
                _ => self.blocks.gc_stream(&GcCopy {
                    lpn: lpn as usize,
                    // Known zombies go to the zombie block while they are worth it.
                    zombie: gc && zombie && self.segregate_zombie(lpn as usize),
                    block_modified,
                    now: self.base.clock,
                    from_stream,
                }),
            };
            // Copy-back to the victim's plane, or with reclaim units the plane the
            // destination's RU fills next.
            let to = if fdp {
                match self.fdp_plane(stream, buffer) {
                    Ok(p) => p,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            } else {
                plane
            };
            let new = match self.program_open(to, stream, lpn, cause, start) {
                Some(new) => new,
                None => match self.program(to, stream, lpn, cause, start, buffer) {
                    Ok(new) => new,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                },
            };
            self.l2p[lpn as usize] = new;
            if self.content.is_some() {
                self.content_moved(lpn, ppn, new);
            }
            if let Some(i) = PageState::of(zombie, device).index() {
                by_state[i] += 1;
            }
            buffer_reads += u64::from(from_buffer);
            fast_programs += u64::from(kind.fast);
            if zombie {
                self.change_zombies(self.base.flash.block_of(new), true, lpn as usize);
                if gc {
                    self.base.counters.gc_zombie_pages_copied += 1;
                }
            }
            if let Some(o) = &mut self.base.oracle {
                if from_buffer {
                    match value {
                        Some(v) => o.write_value(lpn as usize, new, v),
                        None => o.write(lpn as usize, new),
                    }
                } else {
                    o.copy(ppn, new);
                }
            }
        }
        if let Some(rus) = self.blocks.rus.as_deref_mut() {
            // The victim RU is no candidate: only its sums change.
            let ru = rus.ru_of(block);
            rus.victim_pages_moved(ru, left_victim, self.base.clock);
        }
        if let Some(moved) = self.moved.as_mut() {
            // Their owners are still recorded where they were.
            let owner = &self.base.flash.owner;
            moved.extend(pages.iter().map(|&ppn| owner[ppn as usize]));
        }
        self.scratch = pages;
        let moved: u64 = by_state.iter().sum();
        if gc {
            let c = &mut self.base.counters;
            c.gc_pages_copied += moved;
            for (total, n) in c.gc_copied_by_state.iter_mut().zip(by_state) {
                *total += n;
            }
            c.gc_buffer_reads += buffer_reads;
            c.gc_fast_programs += fast_programs;
        } else {
            self.base.counters.refresh_pages += moved;
        }
        result
    }

    /// How many of a victim's valid `pages`, from the first, need no look of their own:
    /// not a known zombie (none is when `no_zombies`), not dirty in the write buffer.
    #[inline]
    fn plain_stretch(
        &self,
        pages: &[u32],
        no_zombies: bool,
        any_dirty: bool,
        buffer: &dyn BufferView,
    ) -> usize {
        pages
            .iter()
            .position(|&ppn| {
                let lpn = self.base.flash.owner[ppn as usize];
                (!no_zombies && self.is_zombie(lpn as usize))
                    || (any_dirty && buffer.is_dirty(lpn as u64))
            })
            .unwrap_or(pages.len())
    }

    /// GC's copy of the first `k` of a victim's valid `pages`, none of which needs a
    /// look of its own, when every copy goes to `stream` and reclaim units stripe it
    /// over its reclaim group's planes: copy `j` goes to the `j`-th plane from the
    /// stream's cursor on, as [`PageMappedFtl::fdp_plane`] would send it, while no
    /// destination block fills (filling a block, and opening an RU, are the
    /// page-by-page loop's). Copies the longest such prefix and returns its length (0:
    /// the loop takes the next page). Every count, time and order of flash events is
    /// the loop's; the mapping entries are prefetched [`COPY_AHEAD`] copies ahead.
    fn relocate_striped(
        &mut self,
        u: usize,
        plane: u32,
        start: u64,
        stream: u32,
        pages: &[u32],
        k: usize,
    ) -> usize {
        let ppb = self.base.flash.pages_per_block() as usize;
        let rus = self.blocks.rus.as_deref().expect("fdp on");
        let r = rus.layout.rg_planes as usize;
        let mut stripe = std::mem::take(&mut self.stripe);
        stripe.clear();
        let mut m = k;
        for (o, p) in rus.planes_ahead(stream).enumerate() {
            let block = self.blocks.open_block(p, stream);
            if block == NONE {
                m = 0;
                break;
            }
            // Offset `o` takes copies o, o + r, ...: `room - 1` of them fill nothing.
            let room = ppb - self.base.flash.write_ptr[block as usize] as usize;
            if room == 0 {
                m = 0;
                break;
            }
            m = m.min(o + r * (room - 1));
            stripe.push(block);
        }
        if m > 0 {
            let clock = self.base.clock;
            self.base
                .ops
                .relocations(plane, start, CopyKind::default(), Cause::Gc, m as u64);
            for (j, &ppn) in pages[..m].iter().enumerate() {
                if let Some(&next) = pages.get(j + COPY_AHEAD) {
                    crate::table::prefetch(
                        &self.l2p,
                        self.base.flash.owner[next as usize] as usize,
                    );
                }
                let lpn = self.base.flash.owner[ppn as usize];
                self.base.flash.invalidate(ppn, clock);
                let (new, full) = self.base.flash.program(stripe[j % r], lpn, clock);
                debug_assert!(!full);
                self.l2p[lpn as usize] = new;
            }
            for (o, &block) in stripe.iter().enumerate().take(m) {
                let n = ((m - 1 - o) / r + 1) as u64;
                let to = self.blocks.unit_of_block(block);
                self.blocks.units[to].valid += n;
                self.blocks.units[to].programmed += n;
            }
            self.blocks.units[u].valid -= m as u64;
            let rus = self.blocks.rus.as_deref_mut().expect("fdp on");
            rus.copies_striped(stream, m as u32);
        }
        self.stripe = stripe;
        m
    }

    /// GC's copy of a stretch of a victim's valid `pages` none of which needs a look
    /// of its own (no known zombie, nothing dirty in the write buffer; no content
    /// layer, oracle, reclaim units or internal pages, and a placement that sends every
    /// copy to one `stream`): [`PageMappedFtl::relocate_valid`]'s page-by-page loop done in runs,
    /// each as many pages as the destination block has room for. The flash state of a
    /// run moves in one step ([`crate::flash::FlashState::move_pages`]); the mapping
    /// entries, scattered over the table, are prefetched `RUN_AHEAD` copies ahead.
    /// Every count, time and order of events is the loop's. Returns the pages copied
    /// and the outcome (an error stops the copying, as in the loop).
    fn relocate_runs(
        &mut self,
        u: usize,
        plane: u32,
        start: u64,
        stream: u32,
        pages: &[u32],
        buffer: &mut dyn BufferView,
    ) -> (u64, Result<()>) {
        const RUN_AHEAD: usize = 64;
        let ppb = self.base.flash.pages_per_block();
        let mut done = 0usize;
        for &ppn in pages.iter().take(RUN_AHEAD) {
            crate::table::prefetch(&self.l2p, self.base.flash.owner[ppn as usize] as usize);
        }
        while done < pages.len() {
            let to = self.blocks.open_block(plane, stream);
            if to == NONE {
                if let Err(e) = self.open_block(plane, stream, buffer) {
                    return (done as u64, Err(e));
                }
                continue;
            }
            let room = (ppb - self.base.flash.write_ptr[to as usize]) as usize;
            let run = &pages[done..done + room.min(pages.len() - done)];
            let k = run.len();
            let kind = CopyKind::default();
            self.base
                .ops
                .relocations(plane, start, kind, Cause::Gc, k as u64);
            let (first, full) = self.base.flash.move_pages(run, to, self.base.clock);
            let to_unit = self.blocks.unit_of_block(to);
            self.blocks.units[to_unit].valid += k as u64;
            self.blocks.units[to_unit].programmed += k as u64;
            self.blocks.units[u].valid -= k as u64;
            self.blocks.count_programs(stream, false, k as u64);
            for (new, i) in (first..).zip(done..done + k) {
                if let Some(&ahead) = pages.get(i + RUN_AHEAD) {
                    crate::table::prefetch(
                        &self.l2p,
                        self.base.flash.owner[ahead as usize] as usize,
                    );
                }
                self.l2p[self.base.flash.owner[new as usize] as usize] = new;
            }
            if full {
                self.blocks.set_open(plane, stream, NONE);
                self.block_closed(to);
            }
            done += k;
        }
        (done as u64, Ok(()))
    }

    /// Refresh every block whose retention deadline the clock has passed.
    pub(super) fn refresh_due(&mut self, buffer: &mut dyn BufferView) -> Result<()> {
        let now = self.now_ns;
        while let Some((block, fast)) = self
            .refresh
            .as_mut()
            .and_then(|r| r.next_due(now, &self.base.flash))
        {
            match self.base.flash.status[block as usize] {
                BlockStatus::Closed => self.refresh_block(block, fast, buffer)?,
                BlockStatus::Open => {
                    // Still a write frontier: look again a little later.
                    let r = self.refresh.as_mut().expect("refresh on");
                    let due = now + r.retry_ns(fast);
                    r.defer(block, self.base.flash.open_seq[block as usize], due, fast);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Restart: refresh every fast-written block that holds valid pages, the open
    /// frontiers of the fast stream included (their pages predate the power-off too;
    /// the frontier stays open for new pages).
    pub(super) fn refresh_fast_blocks(&mut self, buffer: &mut dyn BufferView) -> Result<()> {
        if !self.shadow.fast {
            return Ok(());
        }
        for block in 0..self.base.geo.blocks {
            let status = self.base.flash.status[block as usize];
            if matches!(status, BlockStatus::Closed | BlockStatus::Open) && self.is_fast(block) {
                self.refresh_block(block, true, buffer)?;
            }
        }
        Ok(())
    }

    /// Move a block's valid pages to normal-mode blocks; GC erases it later (a closed
    /// block; an open one stays the frontier).
    fn refresh_block(&mut self, block: u32, fast: bool, buffer: &mut dyn BufferView) -> Result<()> {
        if self.base.flash.valid_count[block as usize] == 0 {
            return Ok(());
        }
        self.base.counters.refresh_blocks += 1;
        self.base.counters.refresh_fast_blocks += u64::from(fast);
        let u = self.blocks.unit_of_block(block);
        let was = self.in_gc;
        self.in_gc = true;
        let result = self.relocate_valid(u, block, self.base.ops.now(), Cause::Refresh, buffer);
        self.in_gc = was;
        result?;
        if !self.in_gc && self.blocks.units[u].free < self.trigger {
            self.collect(u, buffer)?;
        }
        Ok(())
    }

    /// GC by garbage proportion (`gc.invalid_share_trigger`): in each unit whose invalid
    /// pages exceed the share of its programmed pages, reclaim one victim if it has at
    /// least that share invalid (else it is put back).
    #[cold]
    pub(super) fn collect_by_share(&mut self, buffer: &mut dyn BufferView) -> Result<()> {
        let share = self.share_trigger;
        for u in 0..self.blocks.units.len() {
            let unit = &self.blocks.units[u];
            let programmed = unit.programmed;
            if programmed == 0 || ((programmed - unit.valid) as f64) <= share * programmed as f64 {
                continue;
            }
            let Some(victim) = self.select_victim(u)? else {
                continue;
            };
            if self.victim_invalid_share(victim) < share {
                self.return_candidate(victim);
                continue;
            }
            self.in_gc = true;
            self.base.counters.gc_invocations += 1;
            let result = self.reclaim(u, victim, self.base.ops.now(), buffer);
            self.in_gc = false;
            result?;
        }
        Ok(())
    }

    /// Background GC: while the device is idle, reclaim one victim at a time in the
    /// unit with the fewest free blocks below `gc.background_watermark`. A victim is
    /// started only before `until` and runs to completion (it may delay the next
    /// request). Victims with no invalid page are left alone.
    pub(super) fn background_collect(
        &mut self,
        from: u64,
        until: u64,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        if self.background == 0 || !self.base.ops.timed() {
            return Ok(());
        }
        let mut start = from;
        while start < until {
            let target = self.background;
            let Some(u) = (0..self.blocks.units.len())
                .filter(|&u| self.blocks.units[u].free < target)
                .min_by_key(|&u| (self.blocks.units[u].free, u))
            else {
                break;
            };
            let victim = self.select_victim(u)?;
            let Some(victim) = victim else { break };
            if self.victim_is_full(victim) {
                self.return_candidate(victim);
                break;
            }
            self.in_gc = true;
            let result = self.reclaim(u, victim, start, buffer);
            self.in_gc = false;
            result?;
            self.base.counters.gc_background_victims += 1;
            let plane = self.victim_plane(victim);
            start = self.base.ops.ready_at(plane, start).unwrap_or(until);
        }
        Ok(())
    }
}
