//! What a victim policy learns of a candidate block: one view of its statistics,
//! passed when the block becomes a candidate ([`crate::gc::VictimPolicy::insert`]) and
//! whenever any of them changes ([`crate::gc::VictimPolicy::changed`]).
//!
//! ```text
//!   a page of the block dies (overwrite, trim)   ─┐
//!   a dead page is revived (dead-value pool)      ├─► changed(&BlockStats { block, valid, .. })
//!   its count of known zombies changes            │     valid, invalid, programmed, zombies,
//!   the weight of its pooled dead pages changes  ─┘     last modified, erase count, weight
//! ```
//!
//! A policy reads what it keys on; the view reads the flash state only when asked, so
//! a policy that keys on the valid count alone pays nothing for the rest.

use crate::flash::FlashState;

/// The statistics of one candidate block, as they stand.
#[derive(Clone, Copy)]
pub struct BlockStats<'a> {
    /// The block.
    pub block: u32,
    /// Its valid pages.
    pub valid: u32,
    flash: &'a FlashState,
    /// Weights of pooled dead pages per block (the content layer's; empty without).
    weights: &'a [u32],
}

impl<'a> BlockStats<'a> {
    /// The statistics of `block`, holding `valid` valid pages, in `flash`; `weights`
    /// are the content layer's per-block weights (empty without one).
    #[inline]
    pub fn new(block: u32, valid: u32, flash: &'a FlashState, weights: &'a [u32]) -> Self {
        BlockStats {
            block,
            valid,
            flash,
            weights,
        }
    }

    /// The statistics of `block` as `flash` holds them, with no content layer.
    pub fn of(block: u32, flash: &'a FlashState) -> Self {
        Self::new(block, flash.valid_count[block as usize], flash, &[])
    }

    /// Pages programmed since the block was erased.
    #[inline]
    pub fn programmed(&self) -> u32 {
        self.flash.write_ptr[self.block as usize]
    }

    /// Pages that hold a dead copy.
    #[inline]
    pub fn invalid(&self) -> u32 {
        self.programmed() - self.valid
    }

    /// Valid pages the device knows as zombies (host-shadow), as a victim score counts
    /// them (each by its weight, `gc.zombie_weight`; whole by default).
    #[inline]
    pub fn zombies(&self) -> u32 {
        self.flash.weighted_zombies(self.block)
    }

    /// Logical time (host page writes) the block was last modified: a page written
    /// or invalidated.
    #[inline]
    pub fn last_modified(&self) -> u64 {
        self.flash.last_modified[self.block as usize]
    }

    /// The stream the block was written for.
    #[inline]
    pub fn stream(&self) -> u32 {
        u32::from(self.flash.stream[self.block as usize])
    }

    /// Times the block was erased.
    #[inline]
    pub fn erase_count(&self) -> u32 {
        self.flash.erase_count[self.block as usize]
    }

    /// The popularity weight of the block's pooled dead pages (001 §IV-D; 0 without
    /// the dead-value pool).
    #[inline]
    pub fn weight(&self) -> u32 {
        self.weights.get(self.block as usize).copied().unwrap_or(0)
    }
}
