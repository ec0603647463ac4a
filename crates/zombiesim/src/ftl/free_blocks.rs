//! The free blocks of a block-mapped FTL (SuperBlock, FAST, block): one FIFO of
//! erased blocks per plane, taken round-robin over the planes.
//!
//! ```text
//!   plane 0: [b3, b9, b12 ...]  ◄── erase(b) puts b at the back of its plane's list
//!   plane 1: [...]
//!   take(): the front of the next plane in turn that has one (the oldest erased block)
//! ```
//!
//! The page-mapped FTL keeps its free blocks per GC unit instead
//! ([`crate::ftl::BlockManager`]).

use crate::error::{Error, Result};
use crate::flash::{BlockStatus, NONE};
use crate::ftl::FtlBase;
use crate::stats::Cause;
use std::collections::VecDeque;

/// Erased blocks per plane, FIFO.
#[derive(Clone)]
pub struct FreeBlocks {
    free: Vec<VecDeque<u32>>,
    count: u32,
    /// The plane the next block is taken from (round-robin).
    cursor: u32,
}

impl FreeBlocks {
    /// Every free block of `base`'s freshly erased flash.
    pub fn new(base: &FtlBase) -> Self {
        let geo = &base.geo;
        let mut free = vec![VecDeque::new(); geo.planes as usize];
        let mut count = 0;
        for b in 0..geo.blocks {
            if base.flash.status[b as usize] == BlockStatus::Free {
                free[geo.plane_of(b) as usize].push_back(b);
                count += 1;
            }
        }
        FreeBlocks {
            free,
            count,
            cursor: 0,
        }
    }

    /// Erased blocks available.
    #[inline]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Take an erased block (round-robin over the planes, the oldest erased block of
    /// the plane) and open it for `stream`. Errors if none is left: the FTL's own
    /// accounting must make sure one is.
    pub fn take(&mut self, base: &mut FtlBase, stream: u8) -> Result<u32> {
        let planes = base.geo.planes;
        for i in 0..planes {
            let p = (self.cursor + i) % planes;
            if let Some(b) = self.free[p as usize].pop_front() {
                self.cursor = (p + 1) % planes;
                self.count -= 1;
                base.ops.need_erased(p, b);
                base.flash.open(b, stream);
                return Ok(b);
            }
        }
        Err(Error::integrity(
            "no free block is left: the FTL ran out of spare blocks",
        ))
    }

    /// Erase `block` (all its pages invalid) for `cause` and put it at the back of its
    /// plane's free list.
    pub fn erase(&mut self, base: &mut FtlBase, block: u32, cause: Cause) {
        let b = block as usize;
        if base.flash.status[b] == BlockStatus::Closed {
            base.flash.take_victim(block);
        }
        base.flash.status[b] = BlockStatus::Victim;
        base.flash.erase(block);
        let plane = base.geo.plane_of(block);
        let now = base.ops.now();
        base.ops.erase(plane, block, now, cause);
        self.free[plane as usize].push_back(block);
        self.count += 1;
    }

    /// Check the free lists against the blocks' states, then every block's valid
    /// count against its validity bits.
    pub fn check(&self, base: &FtlBase) -> Result<()> {
        let mut listed = 0;
        for list in &self.free {
            for &b in list {
                if base.flash.status[b as usize] != BlockStatus::Free {
                    return Err(Error::integrity(format!(
                        "block {b} is on a free list but is {:?}",
                        base.flash.status[b as usize]
                    )));
                }
                listed += 1;
            }
        }
        if listed != self.count {
            return Err(Error::integrity(format!(
                "{listed} blocks on the free lists, counted {}",
                self.count
            )));
        }
        base.check_valid_counts()
    }

    /// Free blocks × pages plus the unwritten pages of `open` blocks.
    pub fn held_back_pages(&self, base: &FtlBase, open: impl Iterator<Item = u32>) -> u64 {
        let ppb = base.ppb() as u64;
        self.count as u64 * ppb
            + open
                .filter(|&b| b != NONE)
                .map(|b| ppb - base.flash.write_ptr[b as usize] as u64)
                .sum::<u64>()
    }

    /// Bytes of the lists.
    pub fn memory_bytes(&self) -> usize {
        self.count as usize * 4
    }
}
