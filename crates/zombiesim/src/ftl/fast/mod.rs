//! FAST (Lee et al., TECS 2007): block-mapped data blocks, one sequential log block
//! and a pool of random log blocks shared by every logical block, with the
//! buffer-aware merge (BA-BM) and victim selection (BA-VBS) of 004.
//!
//! ```text
//!   lpn ──► (b = lpn / ppb, k = lpn % ppb)
//!
//!   data[b] ──► data block D       page k of D: logical page b·ppb + k (in place)
//!   log_ppn[lpn] ──► a log page     the newest copy, when it is in a log block
//!
//!   write (b, k):
//!     k ≥ write pointer of D ─────────────► page k of D, in place (a sequential
//!                                            fill costs no merge)
//!     k = 0 ──────────────────────────────► SW: the sequential log block, opened
//!                                            afresh for b (the one in use is
//!                                            reclaimed first: switch / partial /
//!                                            full merge)
//!     SW belongs to b and k is its next ──► appended to SW
//!     otherwise ──────────────────────────► the open RW (random) log block; when
//!                                            none has room and all are in use,
//!                                            a victim RW block is reclaimed
//!
//!   RW log blocks:  [L_oldest, ..., L_open]   fully associative, page-mapped
//!   reclaim L:      full-merge every logical block with a valid page in L, erase L
//!   full merge b:   N = free block; page j of N = newest copy of (b, j) (from a log
//!                   block or D, or with BA-BM from the device buffer); erase D
//! ```
//!
//! A lookup is O(1): `log_ppn` holds, per logical page, the log page with its newest
//! copy (`NONE` when the newest copy is in the data block, or there is none).
//! Memory: 4 bytes per logical page and per logical block on top of the flash
//! state (about 8.5 bytes per physical page in all with 64-page blocks and 7%
//! over-provisioning).
//!
//! Spare blocks: the RW log blocks, the SW log block and one block a merge writes
//! into (`ftl.log_blocks` 0 = every spare block but those two). While a merge runs
//! every data block, every log block and the merge destination may be in use at
//! once, which is exactly the spare the configuration demands.
//!
//! Counting: each reclaim of a log block (RW victim or SW) is one GC invocation and
//! one GC victim; a RW log block emptied by other merges is erased at the next
//! reclaim as another victim. Merges count by kind in `merges` (a full merge per
//! logical block merged).
//!
//! Trims invalidate the newest copy; no block is erased for a trim (a merge that
//! finds no page of a logical block left unmaps it and erases its data block).

mod merge;
mod victim;

use crate::config::{Config, LogVictim};
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, NONE};
use crate::ftl::{BlockMapping, BufferView, FreeBlocks, FtlBase, Space};
use crate::stats::Cause;
use std::collections::VecDeque;

/// The block streams FAST opens blocks for (recorded in the flash state).
const STREAM_DATA: u8 = 0;
const STREAM_RW: u8 = 1;
const STREAM_SW: u8 = 2;

/// The costs BA-VBS weighs (µs): 004's `C_p`, `C_r`, `C_e`, `C_b`.
#[derive(Clone, Copy, Debug)]
struct Costs {
    program: f64,
    read: f64,
    erase: f64,
    buffer: f64,
}

/// The FAST FTL.
#[derive(Clone)]
pub struct FastFtl {
    base: FtlBase,
    /// Erased blocks per plane.
    free: FreeBlocks,
    /// Physical data block of every logical block (`NONE`: unmapped).
    data: Vec<u32>,
    /// Per logical page: the log page (RW or SW) holding its newest copy, or `NONE`.
    log_ppn: Vec<u32>,
    /// RW log blocks in use, oldest first; the last one is the one written.
    rw: VecDeque<u32>,
    rw_max: usize,
    /// The sequential log block (`NONE`: not in use) and its logical block.
    sw: u32,
    sw_owner: u32,
    victim: LogVictim,
    buffer_aware_merge: bool,
    costs: Costs,
}

/// Build it for the registry (`ftl.kind = "fast"`; it draws no random numbers).
pub(super) fn build(
    cfg: &Config,
    _seed: u64,
    verify: bool,
    _external: &crate::ftl::ExternalPolicies,
) -> Result<Box<dyn crate::ftl::Ftl>> {
    Ok(Box::new(FastFtl::new(cfg, verify)?))
}

impl FastFtl {
    /// A freshly erased device; `verify` keeps the integrity oracle.
    pub fn new(cfg: &Config, verify: bool) -> Result<Self> {
        let base = FtlBase::new(cfg, verify)?;
        let free = FreeBlocks::new(&base);
        let ppb = base.ppb() as u64;
        let logical_blocks = base.geo.logical_pages.div_ceil(ppb) as usize;
        let rw_max = crate::config::fast_log_blocks(cfg, &base.geo).max(1);
        let usable = free.count() as usize;
        if usable < logical_blocks + rw_max as usize + crate::config::FAST_EXTRA_BLOCKS as usize {
            return Err(Error::config(
                "ftl.log_blocks",
                format!(
                    "FAST needs {} spare blocks ({rw_max} log blocks + the sequential log \
                     block + a merge block) beside the {logical_blocks} logical blocks; \
                     {usable} blocks are usable",
                    rw_max + crate::config::FAST_EXTRA_BLOCKS
                ),
            ));
        }
        let t = &cfg.timing;
        Ok(FastFtl {
            data: vec![NONE; logical_blocks],
            log_ppn: vec![NONE; base.geo.logical_pages as usize],
            rw: VecDeque::with_capacity(rw_max as usize),
            rw_max: rw_max as usize,
            sw: NONE,
            sw_owner: NONE,
            victim: cfg.ftl.log_victim,
            buffer_aware_merge: cfg.ftl.buffer_aware_merge,
            costs: Costs {
                program: t.program_us,
                read: t.read_us,
                erase: t.erase_us,
                buffer: t.dram_ns / 1000.0,
            },
            base,
            free,
        })
    }

    /// The RW log blocks in use, oldest first.
    pub fn log_blocks(&self) -> Vec<u32> {
        self.rw.iter().copied().collect()
    }

    /// The sequential log block and the logical block it belongs to, when in use.
    pub fn sequential_log_block(&self) -> Option<(u32, u32)> {
        (self.sw != NONE).then_some((self.sw, self.sw_owner))
    }

    /// The data block of logical block `b`, when mapped.
    pub fn data_block(&self, b: u32) -> Option<u32> {
        self.data.get(b as usize).copied().filter(|&d| d != NONE)
    }

    /// Invalidate the newest copy of `lpn`, wherever it is.
    #[inline]
    fn drop_newest(&mut self, lpn: u64) {
        let p = self.newest(lpn);
        if p != NONE {
            self.base.invalidate(p);
        }
        self.log_ppn[lpn as usize] = NONE;
    }

    /// Program `lpn` (a host or buffer write) at `offset` of `block`; the older copy
    /// is invalidated first. `log`: the block is a log block.
    fn place(
        &mut self,
        block: u32,
        offset: u32,
        lpn: u64,
        value: Option<u64>,
        cause: Cause,
        log: bool,
    ) {
        self.drop_newest(lpn);
        let ppn = self.base.program_at(block, offset, lpn, cause);
        if log {
            self.log_ppn[lpn as usize] = ppn;
        }
        self.base.oracle_write(lpn, ppn, value);
    }

    /// The page-level view of the mapping (for the oracle).
    fn page_view(&self) -> Vec<u32> {
        (0..self.base.geo.logical_pages)
            .map(|l| self.newest(l))
            .collect()
    }

    /// The invariant checks beyond the flash state's own.
    fn check_mapping(&self) -> Result<()> {
        let flash = &self.base.flash;
        let ppb = self.base.ppb();
        let blocks = self.base.geo.blocks as usize;
        // Role of every block: data block of b, RW log, SW log.
        #[derive(Clone, Copy, PartialEq)]
        enum Role {
            None,
            Data(u32),
            Rw,
            Sw,
        }
        let mut role = vec![Role::None; blocks];
        let mut claim = |blk: u32, r: Role| -> Result<()> {
            let slot = &mut role[blk as usize];
            if *slot != Role::None {
                return Err(Error::integrity(format!(
                    "block {blk} has two roles in the FAST mapping"
                )));
            }
            if matches!(
                flash.status[blk as usize],
                BlockStatus::Free | BlockStatus::Reserved
            ) {
                return Err(Error::integrity(format!(
                    "block {blk} is in use by FAST but is {:?}",
                    flash.status[blk as usize]
                )));
            }
            *slot = r;
            Ok(())
        };
        for (b, &d) in self.data.iter().enumerate() {
            if d != NONE {
                claim(d, Role::Data(b as u32))?;
            }
        }
        if self.rw.len() > self.rw_max {
            return Err(Error::integrity(format!(
                "{} RW log blocks in use, at most {}",
                self.rw.len(),
                self.rw_max
            )));
        }
        for &l in &self.rw {
            claim(l, Role::Rw)?;
        }
        if self.sw != NONE {
            claim(self.sw, Role::Sw)?;
        }
        let mut used = 0u32;
        let mut free = 0u32;
        for (blk, r) in role.iter().enumerate() {
            match (flash.status[blk], *r) {
                (BlockStatus::Reserved, _) => {}
                (BlockStatus::Free, _) => free += 1,
                (s, Role::None) => {
                    return Err(Error::integrity(format!(
                        "block {blk} is {s:?} but FAST does not use it"
                    )))
                }
                _ => used += 1,
            }
        }
        let in_use = self.data.iter().filter(|&&d| d != NONE).count() as u32
            + self.rw.len() as u32
            + u32::from(self.sw != NONE);
        if free != self.free.count() || used != in_use {
            return Err(Error::integrity(format!(
                "{free} free and {used} used blocks; the free lists hold {} and FAST \
                 maps {in_use}",
                self.free.count()
            )));
        }
        // Every valid page is the newest copy of its logical page, in its place.
        let mut seen = vec![false; self.log_ppn.len()];
        for (blk, r) in role.iter().enumerate() {
            let blk = blk as u32;
            for ppn in flash.valid_pages(blk) {
                let lpn = flash.owner[ppn as usize];
                let off = ppn - flash.first_page(blk);
                let ok = match *r {
                    Role::Data(b) => {
                        lpn / ppb == b && lpn % ppb == off && self.log_ppn[lpn as usize] == NONE
                    }
                    Role::Sw => {
                        lpn / ppb == self.sw_owner
                            && lpn % ppb == off
                            && self.log_ppn[lpn as usize] == ppn
                    }
                    Role::Rw => {
                        self.log_ppn[lpn as usize] == ppn && self.data[(lpn / ppb) as usize] != NONE
                    }
                    Role::None => false,
                };
                if !ok || std::mem::replace(&mut seen[lpn as usize], true) {
                    return Err(Error::integrity(format!(
                        "valid page {ppn} (block {blk}) holding logical page {lpn} is not \
                         its one newest copy in place"
                    )));
                }
            }
        }
        for (lpn, &p) in self.log_ppn.iter().enumerate() {
            if p != NONE
                && !(flash.is_valid(p) && flash.owner[p as usize] == lpn as u32 && seen[lpn])
            {
                return Err(Error::integrity(format!(
                    "logical page {lpn} maps to log page {p}, which does not hold it"
                )));
            }
        }
        Ok(())
    }
}

impl BlockMapping for FastFtl {
    fn shared(&self) -> &FtlBase {
        &self.base
    }
    fn shared_mut(&mut self) -> &mut FtlBase {
        &mut self.base
    }
    /// The physical page holding the newest copy of `lpn` (`NONE`: none).
    #[inline]
    fn newest(&self, lpn: u64) -> u32 {
        let l = self.log_ppn[lpn as usize];
        if l != NONE {
            return l;
        }
        let d = self.data[self.base.logical_block(lpn).0];
        self.base.in_data_block(d, lpn)
    }
    fn write_inner(
        &mut self,
        lpn: u64,
        value: Option<u64>,
        cause: Cause,
        buffer: &mut dyn BufferView,
    ) -> Result<()> {
        let lpn = self.base.begin_write(lpn, cause)?;
        let (b, k) = self.base.logical_block(lpn);
        // Each pass either writes the page or reclaims a log block (which frees one).
        loop {
            let mut d = self.data[b];
            if d == NONE {
                d = self.free.take(&mut self.base, STREAM_DATA)?;
                self.data[b] = d;
            }
            if k >= self.base.flash.write_ptr[d as usize] {
                self.place(d, k, lpn, value, cause, false);
                return Ok(());
            }
            if k == 0 {
                if self.sw != NONE {
                    self.reclaim_sw(buffer)?;
                    continue;
                }
                let s = self.free.take(&mut self.base, STREAM_SW)?;
                self.sw = s;
                self.sw_owner = b as u32;
                self.place(s, 0, lpn, value, cause, true);
                return Ok(());
            }
            if self.sw != NONE
                && self.sw_owner == b as u32
                && self.base.flash.write_ptr[self.sw as usize] == k
            {
                self.place(self.sw, k, lpn, value, cause, true);
                return Ok(());
            }
            let open = self
                .rw
                .back()
                .copied()
                .filter(|&l| self.base.flash.write_ptr[l as usize] < self.base.ppb());
            let l = match open {
                Some(l) => l,
                None if self.rw.len() >= self.rw_max => {
                    self.reclaim_rw(buffer)?;
                    continue;
                }
                None => {
                    let l = self.free.take(&mut self.base, STREAM_RW)?;
                    self.rw.push_back(l);
                    l
                }
            };
            let offset = self.base.flash.write_ptr[l as usize];
            self.place(l, offset, lpn, value, cause, true);
            return Ok(());
        }
    }
    fn map_entry(&self, lpn: u64) -> (&[u32], usize) {
        (&self.data, self.base.logical_block(lpn).0)
    }

    fn trim_page(&mut self, lpn: u64) -> Result<()> {
        let lpn = self.base.check_lpn(lpn)?;
        self.base.counters.host_trim_pages += 1;
        self.base.written(lpn);
        self.drop_newest(lpn);
        if let Some(o) = &mut self.base.oracle {
            o.trim(lpn as usize);
        }
        self.base.ops.dram();
        Ok(())
    }

    fn check(&self) -> Result<()> {
        self.free.check(&self.base)?;
        self.check_mapping()?;
        if let Some(o) = &self.base.oracle {
            o.check_all(&self.page_view())?;
        }
        Ok(())
    }

    fn spare(&self) -> Space {
        Space {
            free_blocks: self.free.count() as u64,
            held_back_pages: {
                let data = self.data.iter().copied();
                let logs = self.rw.iter().copied().chain(std::iter::once(self.sw));
                self.free.held_back_pages(&self.base, data.chain(logs))
            },
            valid_pages: self.base.valid_pages(),
        }
    }

    fn state_bytes(&self) -> usize {
        self.base.memory_bytes() + self.data.len() * 4 + self.log_ppn.len() * 4 + self.rw.len() * 4
    }
}
