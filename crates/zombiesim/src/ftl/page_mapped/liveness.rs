//! The device's view of zombie pages (SPEC §1) and hot/cold regions (DAC).
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
        self.zombie_bits
            .as_ref()
            .is_some_and(|bits| bits[l >> 6] & (1u64 << (l & 63)) != 0)
    }

    /// Forget that `l` is a zombie (its mapped copy died or became live); keeps the
    /// zombie count of the block holding `ppn` (if any) in step.
    #[inline]
    pub(super) fn drop_zombie(&mut self, l: usize, ppn: u32) {
        let Some(bits) = self.zombie_bits.as_mut() else {
            return;
        };
        let mask = 1u64 << (l & 63);
        if bits[l >> 6] & mask == 0 {
            return;
        }
        bits[l >> 6] &= !mask;
        self.zombie_known -= 1;
        if ppn != NONE {
            self.change_zombies(self.flash.block_of(ppn), false);
        }
    }

    /// A block's zombie count goes up or down by one; its policy hears if it is a candidate.
    #[inline]
    pub(super) fn change_zombies(&mut self, block: u32, up: bool) {
        let b = block as usize;
        if up {
            self.flash.zombies[b] += 1;
        } else {
            self.flash.zombies[b] -= 1;
        }
        if self.flash.status[b] == BlockStatus::Closed {
            let u = self.blocks.unit_of_block(block);
            let (valid, zombies) = (self.flash.valid_count[b], self.flash.zombies[b]);
            self.blocks.units[u]
                .policy
                .zombies_changed(block, valid, zombies);
        }
    }

    /// The device learns that logical page `lpn` has a dirty newer copy in the host.
    pub fn mark_zombie(&mut self, lpn: u64) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        let words = self.l2p.len().div_ceil(64);
        let bits = self.zombie_bits.get_or_insert_with(|| vec![0; words]);
        let mask = 1u64 << (l & 63);
        if bits[l >> 6] & mask != 0 {
            return Ok(());
        }
        bits[l >> 6] |= mask;
        self.zombie_known += 1;
        let ppn = self.l2p[l];
        if ppn != NONE {
            self.change_zombies(self.flash.block_of(ppn), true);
        }
        Ok(())
    }

    /// The host lost or discarded its dirty copy of `lpn`: the flash copy is live again.
    pub fn unmark_zombie(&mut self, lpn: u64) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        let ppn = self.l2p[l];
        self.drop_zombie(l, ppn);
        Ok(())
    }

    /// Restart (power loss): every zombie page becomes live again.
    pub fn clear_all_zombies(&mut self) {
        let Some(bits) = self.zombie_bits.take() else {
            return;
        };
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let l = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                let ppn = self.l2p[l];
                if ppn != NONE {
                    self.change_zombies(self.flash.block_of(ppn), false);
                }
            }
        }
        self.zombie_known = 0;
    }

    /// The stream a host write of `l` goes to, promoting `l` one region (DAC).
    #[inline]
    pub(super) fn host_stream(&mut self, l: usize, overwrite: bool) -> u32 {
        if self.layout.regions <= 1 {
            return 0;
        }
        let r = &mut self.region[l];
        if overwrite && (*r as u32) + 1 < self.layout.regions {
            *r += 1;
        }
        *r as u32
    }

    /// The stream a GC copy of `l` goes to: the zombie block for a known zombie (when
    /// configured), else its region's GC stream after demoting it one region.
    #[inline]
    pub(super) fn gc_stream(&mut self, l: usize, zombie: bool) -> u32 {
        if zombie {
            if let Some(z) = self.layout.zombie_stream {
                return z;
            }
        }
        if self.layout.regions <= 1 {
            return self.layout.gc_first_stream;
        }
        let r = &mut self.region[l];
        *r = r.saturating_sub(1);
        self.layout.gc_first_stream + *r as u32
    }

    /// Check the zombie bookkeeping: each block's count equals its valid pages whose
    /// logical page is marked, and the marked total matches.
    pub(super) fn check_zombies(&self) -> Result<()> {
        let mut counts = vec![0u32; self.geo.blocks as usize];
        let mut marked = 0u64;
        if let Some(bits) = &self.zombie_bits {
            marked = bits.iter().map(|w| w.count_ones() as u64).sum();
            for (l, &ppn) in self.l2p.iter().enumerate() {
                if ppn != NONE && self.is_zombie(l) {
                    counts[self.flash.block_of(ppn) as usize] += 1;
                }
            }
        }
        if marked != self.zombie_known {
            return Err(Error::integrity(format!(
                "{marked} logical pages marked zombie but {} counted",
                self.zombie_known
            )));
        }
        for (b, (&want, &have)) in counts.iter().zip(&self.flash.zombies).enumerate() {
            if want != have {
                return Err(Error::integrity(format!(
                    "block {b}: zombie count {have} but {want} of its valid pages are zombies"
                )));
            }
        }
        Ok(())
    }
}
