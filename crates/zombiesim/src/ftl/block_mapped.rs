//! Plain block mapping: every logical block maps to one physical data block, and
//! logical page offset `k` lives at page `k` of it.
//!
//! ```text
//!   lpn ──► (b = lpn / ppb, k = lpn % ppb)
//!
//!   data[b] ──► physical block D           page k of D holds logical page b·ppb + k
//!
//!   write (b, k):
//!     no data block           take a free block, program page k in place
//!     page k erased and       program page k in place (pages skipped below k stay
//!       k ≥ write pointer       erased; a block is programmed upwards only)
//!     otherwise               read-modify-write (a full merge):
//!                               N = a free block
//!                               every valid page j ≠ k of D ──copy──► page j of N
//!                               the new page k ────────────program──► page k of N
//!                               erase D; data[b] = N
//! ```
//!
//! The read-modify-write counts as a full merge (`Cause::MergeFull`,
//! `merges[2]`, one GC invocation and one victim). It needs one spare block: at
//! most one block per logical block is in use, so with one spare block a free
//! block is always there to merge into.
//!
//! A trim invalidates the page; the data block stays mapped even when no valid
//! page is left in it (its erased pages above the write pointer stay writable in
//! place, and the next update that needs a merge erases it then).

use crate::config::Config;
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, NONE};
use crate::ftl::{BlockMapping, BufferView, FreeBlocks, FtlBase, Space};
use crate::stats::Cause;

/// Block-mapped FTL.
#[derive(Clone)]
pub struct BlockMappedFtl {
    base: FtlBase,
    /// Erased blocks per plane.
    free: FreeBlocks,
    /// Physical data block of every logical block (`NONE`: unmapped).
    data: Vec<u32>,
}

/// Build it for the registry (`ftl.kind = "block"`; it draws no random numbers).
pub(super) fn build(
    cfg: &Config,
    _seed: u64,
    verify: bool,
    _external: &crate::ftl::ExternalPolicies,
) -> Result<Box<dyn crate::ftl::Ftl>> {
    Ok(Box::new(BlockMappedFtl::new(cfg, verify)?))
}

impl BlockMappedFtl {
    /// A freshly erased device; `verify` keeps the integrity oracle.
    pub fn new(cfg: &Config, verify: bool) -> Result<Self> {
        let base = FtlBase::new(cfg, verify)?;
        let free = FreeBlocks::new(&base);
        let ppb = base.ppb() as u64;
        let logical_blocks = base.geo.logical_pages.div_ceil(ppb) as usize;
        let usable = free.count() as usize;
        if usable <= logical_blocks {
            return Err(Error::config(
                "ftl.over_provisioning",
                format!(
                    "block mapping needs a spare block beside the {logical_blocks} logical \
                     blocks; {usable} blocks are usable"
                ),
            ));
        }
        Ok(BlockMappedFtl {
            base,
            free,
            data: vec![NONE; logical_blocks],
        })
    }

    /// The page-level view of the mapping (for the oracle).
    fn page_view(&self) -> Vec<u32> {
        (0..self.base.geo.logical_pages)
            .map(|l| self.newest(l))
            .collect()
    }
}

impl BlockMapping for BlockMappedFtl {
    fn shared(&self) -> &FtlBase {
        &self.base
    }
    fn shared_mut(&mut self) -> &mut FtlBase {
        &mut self.base
    }
    /// The physical page holding `lpn`, if any.
    #[inline]
    fn newest(&self, lpn: u64) -> u32 {
        let d = self.data[self.base.logical_block(lpn).0];
        self.base.in_data_block(d, lpn)
    }
    fn write_inner(
        &mut self,
        lpn: u64,
        value: Option<u64>,
        cause: Cause,
        _buffer: &mut dyn BufferView,
    ) -> Result<()> {
        let lpn = self.base.begin_write(lpn, cause)?;
        let (b, k) = self.base.logical_block(lpn);
        let mut d = self.data[b];
        if d == NONE {
            d = self.free.take(&mut self.base, 0)?;
            self.data[b] = d;
        }
        if k >= self.base.flash.write_ptr[d as usize] {
            // Never programmed since the erase: in place.
            let ppn = self.base.program_at(d, k, lpn, cause);
            self.base.oracle_write(lpn, ppn, value);
            return Ok(());
        }
        // Read-modify-write into a fresh block.
        let new = self.free.take(&mut self.base, 0)?;
        let old_first = self.base.flash.first_page(d);
        let plane = self.base.geo.plane_of(d);
        let ppb = self.base.ppb();
        let first_lpn = b as u64 * ppb as u64;
        for j in 0..ppb {
            let old = old_first + j;
            let valid = self.base.flash.is_valid(old);
            if valid {
                self.base.invalidate(old);
            }
            if j == k {
                let ppn = self.base.program_at(new, k, lpn, cause);
                self.base.oracle_write(lpn, ppn, value);
            } else if valid {
                let to =
                    self.base
                        .copy_to(new, j, first_lpn + j as u64, plane, false, Cause::MergeFull);
                self.base.oracle_copy(old, to);
            }
        }
        self.free.erase(&mut self.base, d, Cause::MergeFull);
        self.data[b] = new;
        let c = &mut self.base.counters;
        c.merges[2] += 1;
        c.gc_invocations += 1;
        c.gc_victims += 1;
        Ok(())
    }
    fn map_entry(&self, lpn: u64) -> (&[u32], usize) {
        (&self.data, self.base.logical_block(lpn).0)
    }

    fn trim_page(&mut self, lpn: u64) -> Result<()> {
        let lpn = self.base.check_lpn(lpn)?;
        self.base.counters.host_trim_pages += 1;
        self.base.written(lpn);
        let ppn = self.newest(lpn);
        if ppn != NONE {
            self.base.invalidate(ppn);
        }
        if let Some(o) = &mut self.base.oracle {
            o.trim(lpn as usize);
        }
        self.base.ops.dram();
        Ok(())
    }

    fn check(&self) -> Result<()> {
        self.free.check(&self.base)?;
        let flash = &self.base.flash;
        let ppb = self.base.ppb();
        let mut owner_of = vec![NONE; self.base.geo.blocks as usize];
        for (b, &d) in self.data.iter().enumerate() {
            if d == NONE {
                continue;
            }
            if owner_of[d as usize] != NONE {
                return Err(Error::integrity(format!(
                    "physical block {d} is the data block of logical blocks {} and {b}",
                    owner_of[d as usize]
                )));
            }
            owner_of[d as usize] = b as u32;
            if matches!(
                flash.status[d as usize],
                BlockStatus::Free | BlockStatus::Reserved
            ) {
                return Err(Error::integrity(format!(
                    "logical block {b} maps to block {d}, which is {:?}",
                    flash.status[d as usize]
                )));
            }
            for ppn in flash.valid_pages(d) {
                let want = b as u64 * ppb as u64 + (ppn - flash.first_page(d)) as u64;
                if flash.owner[ppn as usize] as u64 != want {
                    return Err(Error::integrity(format!(
                        "page {ppn} of data block {d} (logical block {b}) holds logical page \
                         {}, not {want}",
                        flash.owner[ppn as usize]
                    )));
                }
            }
        }
        let mut free = 0;
        for blk in 0..self.base.geo.blocks {
            match flash.status[blk as usize] {
                BlockStatus::Reserved => {}
                BlockStatus::Free => free += 1,
                s if owner_of[blk as usize] == NONE => {
                    return Err(Error::integrity(format!(
                        "block {blk} is {s:?} but is no logical block's data block"
                    )));
                }
                _ => {}
            }
        }
        if free != self.free.count() {
            return Err(Error::integrity(format!(
                "{free} blocks are free, the free lists hold {}",
                self.free.count()
            )));
        }
        if let Some(o) = &self.base.oracle {
            o.check_all(&self.page_view())?;
        }
        Ok(())
    }

    fn spare(&self) -> Space {
        Space {
            free_blocks: self.free.count() as u64,
            held_back_pages: self
                .free
                .held_back_pages(&self.base, self.data.iter().copied().filter(|&d| d != NONE)),
            valid_pages: self.base.valid_pages(),
        }
    }

    fn state_bytes(&self) -> usize {
        self.base.memory_bytes() + self.data.len() * 4
    }
}
