//! The device's view of zombie pages (SPEC §1): each block's count of them.
//!
//! ```text
//!   host dirties L ──(notification channel)──► set_zombie(L): bit L set; if L is mapped,
//!                                              its block's zombie count + 1
//!   host writes L back (or trims it) ─────────► the old copy dies, bit L cleared
//!   host loses its dirty copy / power loss ───► clear_zombie(L) / clear_zombies(): live again
//!   GC copies a zombie page ──────────────────► the count moves to the destination block
//!                                               (the zombie block when gc.zombie_block)
//! ```
//!
//! The device keeps one bit per logical page *as it knows it*; the host keeps the truth.
//! The bitset is allocated on the first notification, so devices that never hear of
//! zombies pay nothing on the write path.

use super::PageMappedFtl;
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, NONE};
use crate::stats::Cause;

impl PageMappedFtl {
    /// Whether the device knows logical page `l` as a zombie.
    #[inline]
    pub(super) fn is_zombie(&self, l: usize) -> bool {
        self.base.marks.is_marked(l)
    }

    /// Forget that `l` is a zombie: its mapped copy died (written or trimmed); keeps
    /// the zombie count of the block holding `ppn` (if any) in step.
    #[inline]
    pub(super) fn drop_zombie(&mut self, l: usize, ppn: u32) {
        self.forget_zombie(l, ppn, true);
    }

    /// Forget that `l` is a zombie, its copy at `ppn` (if any) having `died` or become
    /// live again; a lifetime-aware device takes the sample.
    #[inline]
    fn forget_zombie(&mut self, l: usize, ppn: u32, died: bool) {
        if !self.base.marks.unmark(l) {
            return;
        }
        if ppn != NONE {
            self.change_zombies(self.base.flash.block_of(ppn), false, l);
        }
        if let Some(p) = self.lifetimes.as_deref_mut() {
            if died {
                p.died(l, self.base.clock);
                self.refresh_zombie_weights();
            } else {
                // Not a death: the host's copy is gone, the flash copy lives on.
                p.withdrawn(l);
            }
        }
    }

    /// `gc.zombie_weight = "lifetime"`: at each renewal of the zombies' chances (every
    /// H/4 host writes, and as the first samples double) and each note of the pages'
    /// life table (every H host writes), every block's weighted zombies anew
    /// (candidates re-keyed).
    #[inline]
    fn refresh_zombie_weights(&mut self) {
        let now = self.base.clock;
        let Some(p) = self.lifetimes.as_deref_mut() else {
            return;
        };
        let renewed = p.refresh(now);
        let noted = p.pages().note_due(now);
        if noted {
            p.pages_mut().note(now, &self.base.flash, &self.l2p);
        }
        if renewed || noted {
            self.reweigh_all_zombies();
        }
    }

    #[cold]
    fn reweigh_all_zombies(&mut self) {
        let now = self.base.clock;
        let p = self.lifetimes.as_deref().expect("lifetime weights");
        let flash = &mut self.base.flash;
        let mut changed = Vec::new();
        for b in 0..flash.zombies.len() {
            let w = p.weighted(b as u32, flash.zombies[b], now);
            if w != flash.zombie_weighted[b] {
                flash.zombie_weighted[b] = w;
                if flash.status[b] == BlockStatus::Closed {
                    changed.push(b as u32);
                }
            }
        }
        for b in changed {
            self.block_changed(b, self.base.flash.valid_count[b as usize]);
        }
    }

    /// `l` is written for `cause` (over a mapped copy when `had_copy`): a host write
    /// (directly or through the device buffer) teaches the life table, and a note is
    /// taken when one is due.
    #[inline]
    pub(super) fn learn_written(&mut self, l: usize, had_copy: bool, cause: Cause) {
        if !matches!(cause, Cause::Host | Cause::Buffer) {
            return;
        }
        if let Some(p) = self.lifetimes.as_deref_mut() {
            p.pages_mut().written(l, self.base.clock, had_copy);
            if p.pages().note_due(self.base.clock) {
                self.refresh_zombie_weights();
            }
        }
    }

    /// The host trimmed `l`, mapped at `ppn`: a mapped copy died.
    #[inline]
    pub(super) fn learn_trimmed(&mut self, l: usize, ppn: u32) {
        if ppn == NONE {
            return;
        }
        if let Some(p) = self.lifetimes.as_deref_mut() {
            p.pages_mut().trimmed(l, self.base.clock);
        }
    }

    /// Whether GC sends known zombie `l` to the zombie block now: always, unless
    /// `gc.zombie_weight = "lifetime"` finds it not worth it ([`ZombieLifetimes`]).
    ///
    /// [`ZombieLifetimes`]: crate::ftl::ZombieLifetimes
    #[inline]
    pub(super) fn segregate_zombie(&self, l: usize) -> bool {
        self.lifetimes
            .as_deref()
            .is_none_or(|p| p.segregate(l, self.base.clock))
    }

    /// A block's zombie count goes up or down by one, `l`; its policy hears if it is a
    /// candidate.
    #[inline]
    pub(super) fn change_zombies(&mut self, block: u32, up: bool, l: usize) {
        let b = block as usize;
        if up {
            self.base.flash.zombies[b] += 1;
        } else {
            self.base.flash.zombies[b] -= 1;
        }
        if let Some(p) = self.lifetimes.as_deref_mut() {
            p.block_zombie(block, up, l);
            let z = self.base.flash.zombies[b];
            self.base.flash.zombie_weighted[b] = p.weighted(block, z, self.base.clock);
        }
        if let Some(rus) = self.blocks.rus.as_deref_mut() {
            let (ru, candidate) = rus.zombies_changed(block, up);
            if candidate {
                let u = self.blocks.unit_of_block(block);
                self.fdp_changed(u, ru);
            }
            return;
        }
        if self.base.flash.status[b] == BlockStatus::Closed {
            self.block_changed(block, self.base.flash.valid_count[b]);
        }
    }

    /// The device learns that logical page `lpn` has a dirty newer copy in the host.
    pub fn mark_zombie(&mut self, lpn: u64) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        if !self.base.marks.mark(l, self.l2p.len()) {
            return Ok(());
        }
        if let Some(p) = self.lifetimes.as_deref_mut() {
            p.marked(l, self.base.clock);
        }
        let ppn = self.l2p[l];
        if ppn != NONE {
            self.change_zombies(self.base.flash.block_of(ppn), true, l);
        }
        self.refresh_zombie_weights();
        Ok(())
    }

    /// The host lost or discarded its dirty copy of `lpn`: the flash copy is live again.
    pub fn unmark_zombie(&mut self, lpn: u64) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        // Most pages the host cleans were never marked: ask the marks before the
        // mapping table (a cache miss on a large device).
        if self.base.marks.is_marked(l) {
            self.forget_zombie(l, self.l2p[l], false);
        }
        Ok(())
    }

    /// Restart (power loss): every zombie page becomes live again.
    pub fn clear_all_zombies(&mut self) {
        for l in self.base.marks.clear() {
            let ppn = self.l2p[l];
            if ppn != NONE {
                self.change_zombies(self.base.flash.block_of(ppn), false, l);
            }
        }
        if let Some(p) = self.lifetimes.as_deref_mut() {
            p.forget_all();
        }
    }

    /// Check the zombie bookkeeping: each block's count equals its valid pages whose
    /// logical page is marked, and the marked total matches.
    pub(super) fn check_zombies(&self) -> Result<()> {
        let mut counts = vec![0u32; self.base.geo.blocks as usize];
        let marked = self.base.marks.count_bits();
        if marked > 0 {
            for (l, &ppn) in self.l2p.iter().enumerate() {
                if ppn != NONE && self.is_zombie(l) {
                    counts[self.base.flash.block_of(ppn) as usize] += 1;
                }
            }
        }
        if marked != self.base.marks.known() {
            return Err(Error::integrity(format!(
                "{marked} logical pages marked zombie but {} counted",
                self.base.marks.known()
            )));
        }
        for (b, (&want, &have)) in counts.iter().zip(&self.base.flash.zombies).enumerate() {
            if want != have {
                return Err(Error::integrity(format!(
                    "block {b}: zombie count {have} but {want} of its valid pages are zombies"
                )));
            }
        }
        Ok(())
    }
}
