//! Invariant checks of the page-mapped FTL (run by `Ftl::verify`).

use super::PageMappedFtl;
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, NONE};

impl PageMappedFtl {
    /// Valid pages per GC unit, as the invariant check recounts them.
    /// Per GC unit, the valid and the programmed pages of its blocks.
    fn unit_valid_counts(&self) -> Vec<(u64, u64)> {
        let mut counts = vec![(0u64, 0u64); self.blocks.units.len()];
        for block in 0..self.base.geo.blocks {
            let c = &mut counts[self.blocks.unit_of_block(block)];
            c.0 += self.base.flash.valid_count[block as usize] as u64;
            c.1 += self.base.flash.write_ptr[block as usize] as u64;
        }
        counts
    }

    pub(super) fn check_invariants(&self) -> Result<()> {
        let ppb = self.base.geo.pages_per_block;
        let mut closed_per_unit = vec![0usize; self.blocks.units.len()];
        let mut free_blocks = 0usize;
        let mut valid_total = 0u64;
        for block in 0..self.base.geo.blocks {
            let b = block as usize;
            let bits = self.base.flash.count_valid_bits(block);
            if bits != self.base.flash.valid_count[b] {
                return Err(Error::integrity(format!(
                    "block {block}: valid count {} but {bits} valid bits",
                    self.base.flash.valid_count[b]
                )));
            }
            valid_total += bits as u64;
            // The block's count of known zombies: its valid pages whose logical page
            // is marked (GC moves a block with none in runs, unlooked at). With the
            // content layer a page may stand for several logical pages, each counted.
            if self.content.is_none() {
                let flash = &self.base.flash;
                let zombies = flash
                    .valid_pages(block)
                    .filter(|&p| self.is_zombie(flash.owner[p as usize] as usize))
                    .count() as u32;
                if zombies != flash.zombies[b] {
                    return Err(Error::integrity(format!(
                        "block {block}: zombie count {} but {zombies} valid pages are marked",
                        flash.zombies[b]
                    )));
                }
            }
            match self.base.flash.status[b] {
                BlockStatus::Free => {
                    free_blocks += 1;
                    if self.base.flash.write_ptr[b] != 0 || bits != 0 {
                        return Err(Error::integrity(format!(
                            "free block {block} is not erased"
                        )));
                    }
                }
                BlockStatus::Closed => {
                    // With reclaim units the candidates are RUs (`check_fdp`).
                    if self.blocks.rus.is_none() {
                        closed_per_unit[self.blocks.unit_of_block(block)] += 1;
                    }
                    if self.base.flash.write_ptr[b] != ppb {
                        return Err(Error::integrity(format!(
                            "closed block {block} is not full"
                        )));
                    }
                }
                BlockStatus::Open => {
                    if !self.blocks.is_open(block) {
                        return Err(Error::integrity(format!(
                            "block {block} is open but no frontier holds it"
                        )));
                    }
                }
                BlockStatus::Victim => {
                    return Err(Error::integrity(format!(
                        "block {block} is a victim outside GC"
                    )));
                }
                BlockStatus::Reserved => {
                    if self.base.flash.write_ptr[b] != 0 {
                        return Err(Error::integrity(format!(
                            "reserved block {block} was written"
                        )));
                    }
                }
            }
        }
        let listed: usize = self.blocks.free_lists().iter().map(|f| f.len()).sum();
        let counted: u32 = self.blocks.units.iter().map(|u| u.free).sum();
        if let Some(rus) = self.blocks.rus.as_deref() {
            // Free blocks are the free reclaim units' (`check_fdp` counts the RUs).
            if rus.free_blocks() != free_blocks as u64 || listed != 0 {
                return Err(Error::integrity(format!(
                    "free blocks: {free_blocks} by status, {} in free reclaim units, {listed} in plane lists",
                    rus.free_blocks()
                )));
            }
        } else if listed != free_blocks || counted as usize != free_blocks {
            return Err(Error::integrity(format!(
                "free blocks: {free_blocks} by status, {listed} in free lists, {counted} counted"
            )));
        }
        for f in self.blocks.free_lists() {
            if let Some(&b) = f
                .iter()
                .find(|&&b| self.base.flash.status[b as usize] != BlockStatus::Free)
            {
                return Err(Error::integrity(format!(
                    "block {b} is in a free list but not free"
                )));
            }
        }
        for (u, (unit, (valid, programmed))) in self
            .blocks
            .units
            .iter()
            .zip(self.unit_valid_counts())
            .enumerate()
        {
            if unit.valid != valid {
                return Err(Error::integrity(format!(
                    "GC unit {u}: {} valid pages counted, {valid} in its blocks",
                    unit.valid
                )));
            }
            if unit.programmed != programmed {
                return Err(Error::integrity(format!(
                    "GC unit {u}: {} programmed pages counted, {programmed} in its blocks",
                    unit.programmed
                )));
            }
            if self.blocks.rus.is_none() && unit.policy.len() != closed_per_unit[u] {
                return Err(Error::integrity(format!(
                    "GC unit {u}: policy holds {} candidates, {} blocks are closed",
                    unit.policy.len(),
                    closed_per_unit[u]
                )));
            }
        }
        let mut mapped = 0u64;
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn == NONE {
                continue;
            }
            mapped += 1;
            if !self.base.flash.is_valid(ppn)
                || (self.base.flash.owner[ppn as usize] != lpn as u32 && !self.content_shared(ppn))
            {
                return Err(Error::integrity(format!(
                    "logical page {lpn} maps to physical page {ppn}, which is {} and owned by {}",
                    if self.base.flash.is_valid(ppn) {
                        "valid"
                    } else {
                        "invalid"
                    },
                    self.base.flash.owner[ppn as usize]
                )));
            }
        }
        let shared = self.check_content()?;
        if mapped.saturating_sub(shared) != valid_total {
            return Err(Error::integrity(format!(
                "{mapped} mapped logical pages but {valid_total} valid physical pages"
            )));
        }
        Ok(())
    }
}
