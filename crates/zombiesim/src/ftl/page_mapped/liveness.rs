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

impl PageMappedFtl {
    /// Whether the device knows logical page `l` as a zombie.
    #[inline]
    pub(super) fn is_zombie(&self, l: usize) -> bool {
        self.base.marks.is_marked(l)
    }

    /// Forget that `l` is a zombie (its mapped copy died or became live); keeps the
    /// zombie count of the block holding `ppn` (if any) in step.
    #[inline]
    pub(super) fn drop_zombie(&mut self, l: usize, ppn: u32) {
        if !self.base.marks.unmark(l) {
            return;
        }
        if ppn != NONE {
            self.change_zombies(self.base.flash.block_of(ppn), false);
        }
        if let Some(p) = self.lifetimes.as_deref_mut() {
            p.died(l, self.base.clock);
            self.zombie_weight_changed();
        }
    }

    /// `gc.zombie_weight = "lifetime"`: after a sample, move the score's zombie scale if
    /// the weight has moved a step.
    #[inline]
    fn zombie_weight_changed(&mut self) {
        let Some(p) = self.lifetimes.as_deref() else {
            return;
        };
        let scale = p.scale();
        if scale != self.base.flash.zombie_scale {
            self.set_zombie_scale(scale);
        }
    }

    /// Set how much a known zombie counts (256ths), and re-key every candidate holding
    /// zombies (the victim index keys on the weighted count).
    #[cold]
    pub(super) fn set_zombie_scale(&mut self, scale: u32) {
        self.base.flash.zombie_scale = scale;
        if let Some(rus) = self.blocks.rus.as_deref_mut() {
            rus.table.zombie_scale = scale;
            let candidates: Vec<u32> = (0..rus.table.zombies.len() as u32)
                .filter(|&ru| {
                    rus.table.zombies[ru as usize] > 0
                        && rus.table.status[ru as usize] == BlockStatus::Closed
                })
                .collect();
            for ru in candidates {
                let first = self.blocks.rus.as_deref().expect("fdp on").block(ru, 0);
                let u = self.blocks.unit_of_block(first);
                self.fdp_changed(u, ru);
            }
            return;
        }
        for b in 0..self.base.flash.zombies.len() as u32 {
            let i = b as usize;
            if self.base.flash.zombies[i] > 0 && self.base.flash.status[i] == BlockStatus::Closed {
                self.block_changed(b, self.base.flash.valid_count[i]);
            }
        }
    }

    /// Whether GC sends known zombies to the zombie block now: always, unless
    /// `gc.zombie_weight = "lifetime"` finds them not worth it ([`ZombieLifetimes`]).
    ///
    /// [`ZombieLifetimes`]: crate::ftl::ZombieLifetimes
    #[inline]
    pub(super) fn segregate_zombies(&mut self) -> bool {
        let now = self.base.clock;
        self.lifetimes
            .as_deref_mut()
            .is_none_or(|p| p.segregate(now))
    }

    /// A block's zombie count goes up or down by one; its policy hears if it is a candidate.
    #[inline]
    pub(super) fn change_zombies(&mut self, block: u32, up: bool) {
        let b = block as usize;
        if up {
            self.base.flash.zombies[b] += 1;
        } else {
            self.base.flash.zombies[b] -= 1;
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
            self.change_zombies(self.base.flash.block_of(ppn), true);
        }
        Ok(())
    }

    /// The host lost or discarded its dirty copy of `lpn`: the flash copy is live again.
    pub fn unmark_zombie(&mut self, lpn: u64) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        let ppn = self.l2p[l];
        if let Some(p) = self.lifetimes.as_deref_mut() {
            // Not a death: the host's copy is gone, the flash copy lives on.
            p.withdrawn(l);
        }
        self.drop_zombie(l, ppn);
        Ok(())
    }

    /// Restart (power loss): every zombie page becomes live again.
    pub fn clear_all_zombies(&mut self) {
        if let Some(p) = self.lifetimes.as_deref_mut() {
            p.forget_all();
        }
        for l in self.base.marks.clear() {
            let ppn = self.l2p[l];
            if ppn != NONE {
                self.change_zombies(self.base.flash.block_of(ppn), false);
            }
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
