//! Content-aware writes of the page-mapped FTL: deduplication, dead-value revival and
//! the GC hooks that keep them consistent (model: `crate::content`).
//!
//! ```text
//!  write(L, v): tick pool clock; hash v (timing: content.hash_us, one hash engine)
//!    old = l2p[L]; dedup and live[v] == old?            ──► nothing changes (same value)
//!    release old: dedup refcount − 1; at 0 the page dies ──► invalidate; pool (v_old → old)
//!    dedup and live[v] = P?         ──► L joins P's sharers                   (no program)
//!    pool has a dead page D with v? ──► revive D: valid again, L → D          (no program)
//!    else                           ──► program a new page
//!  GC copy of P to P': every sharer of P is remapped to P', refcount and live entry move
//!  GC erase of a block: its pooled dead pages leave the pool
//! ```
//!
//! A revived page is valid again in whatever block holds it: an open block simply has
//! one more valid page, a closed block's valid count rises and its victim policy is
//! told ([`VictimPolicy::revived`](crate::gc::VictimPolicy::revived)). A GC victim's
//! dead pages are never revived: no host write runs while a victim is being emptied,
//! and its pooled pages leave the pool before it is erased.
//!
//! Writes without a fingerprint (preconditioning, traces without hashes) are programmed
//! as usual and their pages are never pooled or shared: their content is unknown.

use super::content_state::{ContentState, NO_VALUE, SENTINEL_STANDIN};
use super::PageMappedFtl;
use crate::config::PoolPolicy;
use crate::content::{degree, ContentCounters, ContentGauges, FpMap, DEGREES, MAX_POPULARITY};
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, NONE};
use crate::stats::Cause;

/// The content layer, borrowed as a field (so other fields stay usable).
macro_rules! content {
    ($ftl:ident) => {
        $ftl.content.as_deref_mut().expect("content layer on")
    };
}

impl PageMappedFtl {
    /// A host write with content awareness on (`value` = the page's fingerprint).
    pub(super) fn write_content(
        &mut self,
        write: crate::ftl::PageWrite,
        buffer: &mut dyn crate::ftl::BufferView,
    ) -> Result<()> {
        let crate::ftl::PageWrite {
            lpn,
            value,
            cause,
            hint,
        } = write;
        let l = self.check_lpn(lpn)?;
        self.base.clock += 1;
        if cause == Cause::Host {
            self.base.counters.host_write_pages += 1;
        }
        // The host's write is the newest copy (no longer a zombie); DAC promotes it.
        let mapped = self.l2p[l];
        self.learn_written(l, mapped != NONE, cause);
        self.drop_zombie(l, mapped);
        let stream = self.host_stream(l, mapped != NONE, hint);
        let (now, timing_on) = (self.base.ops.now(), self.base.ops.timed());
        let c = content!(self);
        if let Some(p) = &mut c.pool {
            p.tick();
        }
        let v = value.map(|v| if v == NO_VALUE { SENTINEL_STANDIN } else { v });
        let mut start = now;
        let mut earlier = 0u32;
        if let Some(v) = v {
            c.counters.valued_writes += 1;
            c.counters.hashed_pages += 1;
            if timing_on {
                start = now.max(c.hash_free) + c.hash_ns;
                c.hash_free = start;
            }
            if c.pool.is_some() {
                let n = c.seen.entry(v).or_insert(0);
                earlier = *n;
                *n = n.saturating_add(1);
            }
        }
        let old = self.l2p[l];
        // The same value rewritten over a deduplicated page: nothing changes.
        let live =
            |c: &ContentState, v: u64| c.sharing.as_ref().and_then(|s| s.live.get(&v).copied());
        if let Some(v) = v {
            if old != NONE && live(c, v) == Some(old) {
                c.counters.deduplicated += 1;
                bump(
                    &mut c.popularity,
                    l,
                    self.base.flash.owner[old as usize] as usize,
                );
                return self.mapped_done(l, v, start);
            }
        }
        if old != NONE {
            self.release(l, old);
            self.l2p[l] = NONE;
        }
        let Some(v) = v else {
            content!(self).popularity[l] = 0;
            let plane = self.host_plane();
            let ppn = self.program(plane, stream, l as u32, cause, start, buffer)?;
            self.l2p[l] = ppn;
            if let Some(o) = &mut self.base.oracle {
                o.write(l, ppn);
            }
            return self.content_programmed(l, ppn, None);
        };
        // Dedup: the value is live somewhere.
        let c = content!(self);
        if let Some(p) = live(c, v) {
            let owner = self.base.flash.owner[p as usize];
            c.sharing.as_mut().expect("dedup").join(l as u32, p, owner);
            c.counters.deduplicated += 1;
            bump(&mut c.popularity, l, owner as usize);
            self.l2p[l] = p;
            return self.mapped_done(l, v, start);
        }
        // The dead-value pool.
        if content!(self).pool.is_some() {
            if let Some((ppn, popularity)) = self.pool_take(l, v) {
                self.revive(l, ppn, v, popularity);
                let c = content!(self);
                c.counters.revived += 1;
                c.counters.hits_by_degree[degree_of(earlier)] += 1;
                return self.mapped_done(l, v, start);
            }
            let c = content!(self);
            c.counters.pool_misses += 1;
            c.counters.misses_by_degree[degree_of(earlier)] += 1;
        }
        content!(self).popularity[l] = 1;
        let plane = self.host_plane();
        let ppn = self.program(plane, stream, l as u32, cause, start, buffer)?;
        self.l2p[l] = ppn;
        if let Some(o) = &mut self.base.oracle {
            o.write_value(l, ppn, v);
        }
        self.content_programmed(l, ppn, Some(v))
    }

    /// A host trim with content awareness on: the page's last mapping goes, and the
    /// page dies (and is pooled: its content is still on flash).
    pub(super) fn trim_content(&mut self, lpn: u64) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        self.base.counters.host_trim_pages += 1;
        let old = self.l2p[l];
        // Trimmed, the page is no zombie any more (as without content).
        self.learn_trimmed(l, old);
        self.drop_zombie(l, old);
        if old != NONE {
            self.release(l, old);
            self.l2p[l] = NONE;
        }
        content!(self).popularity[l] = 0;
        if let Some(o) = &mut self.base.oracle {
            o.trim(l);
        }
        self.base.ops.dram();
        Ok(())
    }

    /// Bookkeeping after programming `ppn` for `l`.
    fn content_programmed(&mut self, l: usize, ppn: u32, v: Option<u64>) -> Result<()> {
        let c = content!(self);
        c.value[ppn as usize] = v.unwrap_or(NO_VALUE);
        if let Some(s) = &mut c.sharing {
            s.map_alone(l as u32, ppn);
            if let Some(v) = v {
                s.live.insert(v, ppn);
            }
        }
        Ok(())
    }

    /// A write served without a program: the oracle learns the value, the request
    /// waits for the hash and one mapping-table access.
    fn mapped_done(&mut self, l: usize, v: u64, start: u64) -> Result<()> {
        if let Some(o) = &mut self.base.oracle {
            o.write_mapped(l, v);
        }
        self.base.ops.dram_from(start);
        Ok(())
    }

    /// Logical page `l` stops mapping to `ppn`; the page dies when nothing maps to it.
    fn release(&mut self, l: usize, ppn: u32) {
        let c = content!(self);
        if let Some(s) = &mut c.sharing {
            let (left, other) = s.leave(l as u32, ppn);
            if left > 0 {
                let other = other.expect("a sharer remains");
                let value = c.value[ppn as usize];
                // The departing page may carry the highest count: hand it on.
                let pop = c.popularity[l].max(c.popularity[other as usize]);
                c.popularity[other as usize] = pop;
                if self.base.flash.owner[ppn as usize] == l as u32 {
                    self.base.flash.owner[ppn as usize] = other;
                }
                debug_assert_ne!(value, NO_VALUE);
                return;
            }
            let v = c.value[ppn as usize];
            if v != NO_VALUE && s.live.get(&v) == Some(&ppn) {
                s.live.remove(&v);
            }
        }
        self.invalidate(ppn);
        let c = content!(self);
        let v = c.value[ppn as usize];
        if v == NO_VALUE || c.pool.is_none() {
            return;
        }
        let key = if c.pool_policy == PoolPolicy::Lx {
            l as u64
        } else {
            v
        };
        let popularity = c.popularity[l] as u32;
        let mut released = std::mem::take(&mut c.released);
        c.pool
            .as_mut()
            .expect("pool")
            .insert(key, ppn, popularity, &mut released);
        let w = (degree(popularity).saturating_sub(1)) as u8;
        c.weight[ppn as usize] = w;
        self.add_weight(ppn, w as i64);
        for &gone in &released {
            self.unpool_weight(gone);
        }
        released.clear();
        content!(self).released = released;
    }

    /// Find a pooled dead page for value `v` written to `l`.
    fn pool_take(&mut self, l: usize, v: u64) -> Option<(u32, u32)> {
        let c = self.content.as_deref_mut().expect("content layer on");
        let pool = c.pool.as_mut()?;
        let values = &c.value;
        let found = if c.pool_policy == PoolPolicy::Lx {
            pool.take(l as u64, |ppn| values[ppn as usize] == v)
        } else {
            pool.take(v, |_| true)
        };
        if let Some((ppn, _)) = found {
            self.unpool_weight(ppn);
        }
        found
    }

    /// Make dead page `ppn` (holding `v`) the live copy of `l`.
    fn revive(&mut self, l: usize, ppn: u32, v: u64, popularity: u32) {
        let (block, valid) = self.base.flash.revive(ppn, l as u32, self.base.clock);
        let u = self.blocks.unit_of_block(block);
        self.blocks.units[u].valid += 1;
        match self.base.flash.status[block as usize] {
            BlockStatus::Closed => self.block_changed(block, valid),
            BlockStatus::Open => {}
            s => unreachable!("revived a page of a {s:?} block"),
        }
        self.l2p[l] = ppn;
        let c = content!(self);
        c.popularity[l] = popularity.min(MAX_POPULARITY) as u8;
        if let Some(s) = &mut c.sharing {
            s.map_alone(l as u32, ppn);
            s.live.insert(v, ppn);
        }
    }

    /// A pooled page left the pool: remove its weight from its block.
    fn unpool_weight(&mut self, ppn: u32) {
        let w = std::mem::take(&mut content!(self).weight[ppn as usize]);
        self.add_weight(ppn, -(w as i64));
    }

    fn add_weight(&mut self, ppn: u32, delta: i64) {
        if delta == 0 {
            return;
        }
        let block = self.base.flash.block_of(ppn);
        let c = self.content.as_deref_mut().expect("content layer on");
        let bw = &mut c.block_weight[block as usize];
        *bw = (*bw as i64 + delta) as u32;
        // A candidate's policy hears of it; an open block's weight is read when it
        // becomes one.
        if self.base.flash.status[block as usize] == BlockStatus::Closed {
            self.block_changed(block, self.base.flash.valid_count[block as usize]);
        }
    }

    /// GC moved logical page `lpn`'s page `from` to `to`: carry the content and fix
    /// every other logical page sharing it.
    pub(super) fn content_moved(&mut self, lpn: u32, from: u32, to: u32) {
        let c = self.content.as_deref_mut().expect("content layer on");
        let v = c.value[from as usize];
        c.value[to as usize] = v;
        let Some(s) = &mut c.sharing else { return };
        s.moved(from, to);
        if v != NO_VALUE && s.live.get(&v) == Some(&from) {
            s.live.insert(v, to);
        }
        // The other sharers move too, and the zombie counts of those known as zombies
        // with them (the caller moves `lpn`'s).
        let marks = &self.base.marks;
        let mut zombies = Vec::new();
        let mut m = s.next_sharer(lpn);
        while m != lpn {
            self.l2p[m as usize] = to;
            if marks.is_marked(m as usize) {
                zombies.push(m as usize);
            }
            m = s.next_sharer(m);
        }
        for m in zombies {
            self.change_zombies(self.base.flash.block_of(from), false, m);
            self.change_zombies(self.base.flash.block_of(to), true, m);
        }
    }

    /// GC is about to erase `block`: its pooled dead pages leave the pool.
    pub(super) fn content_erasing(&mut self, block: u32) {
        let first = self.base.flash.first_page(block);
        let n = self.base.flash.write_ptr[block as usize];
        let c = self.content.as_deref_mut().expect("content layer on");
        for ppn in first..first + n {
            if let Some(p) = &mut c.pool {
                p.erase_page(ppn);
            }
            c.weight[ppn as usize] = 0;
            c.value[ppn as usize] = NO_VALUE;
        }
        c.block_weight[block as usize] = 0;
    }

    /// Counters and end-of-run state of the content layer.
    pub(super) fn content_stats(&self) -> Option<(ContentCounters, ContentGauges)> {
        let c = self.content.as_deref()?;
        let (shared_pages, shared_mappings) = match &c.sharing {
            None => (0, 0),
            Some(s) => {
                let mut pages = 0u64;
                let mut extra = 0u64;
                for b in 0..self.base.geo.blocks {
                    for p in self.base.flash.valid_pages(b) {
                        let r = s.refs(p) as u64;
                        if r > 1 {
                            pages += 1;
                            extra += r - 1;
                        }
                    }
                }
                (pages, extra)
            }
        };
        let pool = c.pool.as_ref();
        Some((
            c.counters(),
            ContentGauges {
                pool_entries: pool.map_or(0, |p| p.entries() as u64),
                pool_entries_peak: pool.map_or(0, |p| p.peak_entries() as u64),
                pool_pages: pool.map_or(0, |p| p.pages()),
                shared_pages,
                shared_mappings,
                state_bytes: c.memory_bytes() as u64,
            },
        ))
    }

    /// Whether `lpn → ppn` is a legitimate mapping whose page `owner` names another
    /// logical page (a deduplicated share).
    pub(super) fn content_shared(&self, ppn: u32) -> bool {
        self.content
            .as_deref()
            .and_then(|c| c.sharing.as_ref())
            .is_some_and(|s| s.refs(ppn) > 1)
    }

    /// Invariants of the content layer; returns the number of logical mappings beyond
    /// one per valid page (dedup shares).
    pub(super) fn check_content(&self) -> Result<u64> {
        let Some(c) = self.content.as_deref() else {
            return Ok(0);
        };
        let bad = |m: String| Err(Error::integrity(m));
        let mut weights = vec![0u32; self.base.geo.blocks as usize];
        if let Some(p) = &c.pool {
            let mut pages = 0u64;
            for (key, ppn) in p.pooled_pages() {
                pages += 1;
                let block = self.base.flash.block_of(ppn);
                let st = self.base.flash.status[block as usize];
                if self.base.flash.is_valid(ppn)
                    || matches!(st, BlockStatus::Free | BlockStatus::Victim)
                {
                    return bad(format!("pooled page {ppn} is valid or in a {st:?} block"));
                }
                let want = if c.pool_policy == PoolPolicy::Lx {
                    self.base.flash.owner[ppn as usize] as u64
                } else {
                    c.value[ppn as usize]
                };
                if key != want || c.value[ppn as usize] == NO_VALUE {
                    return bad(format!(
                        "pooled page {ppn} is under key {key:#x} but holds {want:#x}"
                    ));
                }
                weights[block as usize] += c.weight[ppn as usize] as u32;
            }
            if pages != p.pages() {
                return bad(format!("pool counts {} pages, lists {pages}", p.pages()));
            }
        }
        if let Some(b) = (0..weights.len()).find(|&b| weights[b] != c.block_weight[b]) {
            return bad(format!(
                "block {b}: popularity weight {} but its pooled pages weigh {}",
                c.block_weight[b], weights[b]
            ));
        }
        let Some(s) = &c.sharing else { return Ok(0) };
        if let Some(l) = s.rings_consistent() {
            return bad(format!("logical page {l}: sharer ring is broken"));
        }
        let mut refs: FpMap<u32> = FpMap::default();
        for &ppn in self.l2p.iter().filter(|&&p| p != NONE) {
            *refs.entry(ppn as u64).or_insert(0) += 1;
        }
        let mut extra = 0u64;
        for (&ppn, &n) in &refs {
            if s.refs(ppn as u32) != n {
                return bad(format!(
                    "physical page {ppn}: reference count {} but {n} logical pages map to it",
                    s.refs(ppn as u32)
                ));
            }
            extra += n as u64 - 1;
        }
        for (&v, &ppn) in &s.live {
            if !self.base.flash.is_valid(ppn) || c.value[ppn as usize] != v {
                return bad(format!(
                    "live value {v:#x} points at physical page {ppn}, which does not hold it"
                ));
            }
        }
        Ok(extra)
    }
}

/// The degree index of a value written `earlier` times before.
#[inline]
fn degree_of(earlier: u32) -> usize {
    (degree(earlier.min(MAX_POPULARITY)) as usize).min(DEGREES - 1)
}

/// `l` now holds the value `owner` holds, written once more: both carry the count.
#[inline]
fn bump(popularity: &mut [u8], l: usize, owner: usize) {
    let p = popularity[owner].max(popularity[l]).saturating_add(1);
    popularity[owner] = p;
    popularity[l] = p;
}
