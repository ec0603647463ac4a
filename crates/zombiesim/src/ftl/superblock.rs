//! SuperBlock FTL (Kang et al., EMSOFT 2006): `N` adjacent logical blocks form a
//! superblock, mapped page by page inside it, and each superblock collects its own
//! garbage.
//!
//! ```text
//!   logical pages   | sb 0: N logical blocks | sb 1: N logical blocks | ...
//!                          │ l2p (a page-level entry per logical page)
//!                          ▼
//!   sb 0 owns   [closed][closed][closed][open ▒▒░░]    at most N + E_0 blocks
//!   (the last superblock may hold fewer than N logical blocks: N_last + E_last)
//!   sb 1 owns   [closed][open ░░░░]                    at most N + E_1 blocks
//!   free pool   [erased][erased] ...                   round-robin over the planes
//!
//!   a write of lpn goes to its superblock's open block; when that block is full:
//!     owns < cap  → take an erased block from the pool
//!     owns = cap  → collect: victim = the superblock's closed block with the fewest
//!                   valid pages (ties: the oldest); its valid pages are copied into
//!                   an erased block from the pool, which becomes the open block,
//!                   and the victim is erased back to the pool
//! ```
//!
//! Space: the spare blocks (physical blocks beyond the logical ones) less one are
//! shared out as the superblocks' extra blocks `E_i` (floor, the remainder to the
//! lowest-numbered superblocks); the configuration guarantees every `E_i ≥ 1`. The
//! caps sum to every usable block but one, so the pool always holds a block for a
//! collection to copy into, and a busy superblock never takes space another one was
//! promised.
//!
//! A victim always has an invalid page: a superblock collects only when all of its
//! `N + E_i` blocks are full, and it holds at most `N·ppb − 1` valid pages then (the
//! page being written is not valid anywhere: its old copy was invalidated first), so
//! its emptiest block has at most `⌊(N·ppb − 1) / (N + E_i)⌋ < ppb` valid pages, and
//! the copy leaves a free page in the new open block.
//!
//! Memory: a 4-byte mapping entry per logical page, and per superblock its list of
//! blocks (4 bytes per owned block), on top of the shared flash state.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::flash::{BlockStatus, NONE};
use crate::ftl::{BlockMapping, BufferView, FreeBlocks, FtlBase, Space};
use crate::stats::Cause;

/// The stream every SuperBlock block is opened for (there is one per superblock, so
/// the stream tag carries no information).
const STREAM: u8 = 0;

/// One superblock's physical blocks.
#[derive(Clone, Debug)]
struct Superblock {
    /// Physical blocks it owns (closed ones and the open one).
    blocks: crate::table::Table<u32>,
    /// The block host and buffer writes go to (`NONE` before the first write).
    open: u32,
    /// The most blocks it may own: `N + E_i`.
    cap: u32,
    /// Valid pages over its blocks (= its mapped logical pages).
    valid: u32,
}

/// The SuperBlock FTL.
#[derive(Clone)]
pub struct SuperblockFtl {
    base: FtlBase,
    /// Erased blocks per plane.
    free: FreeBlocks,
    /// Logical pages per superblock (`N × pages per block`).
    sb_pages: u64,
    /// Logical to physical page (`NONE`: unmapped).
    l2p: Vec<u32>,
    sbs: Vec<Superblock>,
    /// Scratch for the valid pages of a victim.
    victim_pages: crate::table::Table<u32>,
}

/// Build it for the registry (`ftl.kind = "superblock"`; it draws no random numbers).
pub(super) fn build(
    cfg: &Config,
    _seed: u64,
    verify: bool,
    _external: &crate::ftl::ExternalPolicies,
) -> Result<Box<dyn crate::ftl::Ftl>> {
    Ok(Box::new(SuperblockFtl::new(cfg, verify)?))
}

impl SuperblockFtl {
    /// A freshly erased device; `verify` keeps the integrity oracle.
    pub fn new(cfg: &Config, verify: bool) -> Result<Self> {
        let base = FtlBase::new(cfg, verify)?;
        let free = FreeBlocks::new(&base);
        let n = cfg.ftl.superblock_blocks;
        if n == 0 {
            return Err(Error::config(
                "ftl.superblock_blocks",
                "must be at least 1 logical block per superblock",
            ));
        }
        let ppb = base.ppb() as u64;
        let sb_pages = ppb * n as u64;
        let logical_blocks = (base.geo.logical_pages / ppb) as u32;
        // The last superblock may hold fewer logical blocks.
        let count = crate::config::superblock_count(cfg, &base.geo);
        let spare = crate::config::spare_blocks(&base.geo);
        if count == 0 || spare < count + 1 {
            return Err(Error::config(
                "ftl.superblock_blocks",
                format!(
                    "{count} superblocks of {n} blocks need {} spare blocks, and there are {spare}",
                    count + 1
                ),
            ));
        }
        let shared = spare - 1;
        let sbs = (0..count)
            .map(|i| {
                let data = n.min(logical_blocks - i * n);
                let extra = shared / count + u32::from(i < shared % count);
                Superblock {
                    blocks: Vec::with_capacity((data + extra) as usize + 1).into(),
                    open: NONE,
                    cap: data + extra,
                    valid: 0,
                }
            })
            .collect();
        Ok(SuperblockFtl {
            l2p: vec![NONE; base.geo.logical_pages as usize],
            sb_pages,
            sbs,
            victim_pages: Vec::with_capacity(ppb as usize).into(),
            base,
            free,
        })
    }

    /// Superblocks.
    pub fn superblocks(&self) -> usize {
        self.sbs.len()
    }

    /// The superblock holding logical page `lpn`.
    pub fn superblock_of(&self, lpn: u64) -> usize {
        (lpn / self.sb_pages) as usize
    }

    /// The most physical blocks superblock `s` may own (`N + E_s`).
    pub fn cap(&self, s: usize) -> u32 {
        self.sbs[s].cap
    }

    /// Physical blocks superblock `s` owns now.
    pub fn owned(&self, s: usize) -> u32 {
        self.sbs[s].blocks.len() as u32
    }

    /// Erased blocks in the shared pool.
    pub fn free_blocks(&self) -> u32 {
        self.free.count()
    }

    #[inline]
    fn check_lpn(&self, lpn: u64) -> Result<usize> {
        self.base.check_lpn(lpn).map(|l| l as usize)
    }

    /// Invalidate the current copy of `l`, if any.
    #[inline]
    fn drop_copy(&mut self, l: usize) {
        let old = self.l2p[l];
        if old != NONE {
            self.base.invalidate(old);
            self.l2p[l] = NONE;
            self.sbs[l / self.sb_pages as usize].valid -= 1;
        }
    }

    /// The open block of superblock `s` with a free page: the current one, a block
    /// from the pool while `s` is under its cap, or the block a collection copied into.
    fn frontier(&mut self, s: usize) -> Result<u32> {
        let open = self.sbs[s].open;
        if open != NONE && self.base.flash.write_ptr[open as usize] < self.base.ppb() {
            return Ok(open);
        }
        let sb = &self.sbs[s];
        if (sb.blocks.len() as u32) < sb.cap {
            let b = self.free.take(&mut self.base, STREAM)?;
            let sb = &mut self.sbs[s];
            sb.blocks.push(b);
            sb.open = b;
            return Ok(b);
        }
        self.collect(s)
    }

    /// Collect inside superblock `s` (which owns its cap of blocks, all full): copy
    /// the valid pages of its emptiest block into an erased block, which becomes its
    /// open block, and erase the victim. Returns the new open block.
    fn collect(&mut self, s: usize) -> Result<u32> {
        let ppb = self.base.ppb();
        let flash = &self.base.flash;
        let (slot, victim) = self.sbs[s]
            .blocks
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, b)| flash.status[b as usize] == BlockStatus::Closed)
            .min_by_key(|&(_, b)| (flash.valid_count[b as usize], flash.open_seq[b as usize]))
            .ok_or_else(|| Error::integrity(format!("superblock {s} has no closed block")))?;
        let valid = flash.valid_count[victim as usize];
        debug_assert!(
            valid < ppb,
            "superblock {s}: the victim {victim} has no invalid page"
        );
        if valid >= ppb {
            return Err(Error::integrity(format!(
                "superblock {s}: every owned block is full of valid pages"
            )));
        }
        self.base.counters.gc_invocations += 1;
        self.base.counters.gc_victims += 1;
        let dest = self.free.take(&mut self.base, STREAM)?;
        self.base.flash.take_victim(victim);
        let from_plane = self.base.geo.plane_of(victim);
        let mut pages = std::mem::take(&mut self.victim_pages);
        pages.clear();
        pages.extend(self.base.flash.valid_pages(victim));
        for (offset, &ppn) in pages.iter().enumerate() {
            let lpn = self.base.flash.owner[ppn as usize];
            let new = self.base.copy_to(
                dest,
                offset as u32,
                lpn as u64,
                from_plane,
                false,
                Cause::Gc,
            );
            self.base.invalidate(ppn);
            self.base.oracle_copy(ppn, new);
            self.l2p[lpn as usize] = new;
        }
        self.victim_pages = pages;
        self.free.erase(&mut self.base, victim, Cause::Gc);
        let sb = &mut self.sbs[s];
        sb.blocks[slot] = dest;
        sb.open = dest;
        Ok(dest)
    }

    /// Check ownership, caps, per-superblock valid counts and the mapping.
    fn check_superblocks(&self) -> Result<()> {
        let flash = &self.base.flash;
        let blocks = self.base.geo.blocks as usize;
        let mut owner = vec![NONE; blocks];
        let mut owned_total = 0u32;
        for (s, sb) in self.sbs.iter().enumerate() {
            if sb.blocks.len() as u32 > sb.cap {
                return Err(Error::integrity(format!(
                    "superblock {s} owns {} blocks, more than its cap {}",
                    sb.blocks.len(),
                    sb.cap
                )));
            }
            let mut valid = 0u32;
            for &b in &sb.blocks {
                if owner[b as usize] != NONE {
                    return Err(Error::integrity(format!(
                        "block {b} is owned by superblocks {} and {s}",
                        owner[b as usize]
                    )));
                }
                owner[b as usize] = s as u32;
                owned_total += 1;
                let status = flash.status[b as usize];
                let want = if b == sb.open && flash.write_ptr[b as usize] < self.base.ppb() {
                    BlockStatus::Open
                } else {
                    BlockStatus::Closed
                };
                if status != want {
                    return Err(Error::integrity(format!(
                        "block {b} of superblock {s} is {status:?}, expected {want:?}"
                    )));
                }
                valid += flash.valid_count[b as usize];
            }
            if sb.open != NONE && !sb.blocks.contains(&sb.open) {
                return Err(Error::integrity(format!(
                    "superblock {s}: its open block {} is not one of its blocks",
                    sb.open
                )));
            }
            if valid != sb.valid {
                return Err(Error::integrity(format!(
                    "superblock {s}: {valid} valid pages in its blocks, counted {}",
                    sb.valid
                )));
            }
        }
        let usable = (0..blocks)
            .filter(|&b| flash.status[b] != BlockStatus::Reserved)
            .count() as u32;
        if owned_total + self.free.count() != usable {
            return Err(Error::integrity(format!(
                "{owned_total} owned + {} free blocks, {usable} usable",
                self.free.count()
            )));
        }
        let mut mapped = vec![0u32; self.sbs.len()];
        for (l, &ppn) in self.l2p.iter().enumerate() {
            if ppn == NONE {
                continue;
            }
            let s = l / self.sb_pages as usize;
            mapped[s] += 1;
            let b = flash.block_of(ppn);
            if !flash.is_valid(ppn) || flash.owner[ppn as usize] as usize != l {
                return Err(Error::integrity(format!(
                    "logical page {l} maps to physical page {ppn}, which does not hold it"
                )));
            }
            if owner[b as usize] != s as u32 {
                return Err(Error::integrity(format!(
                    "logical page {l} of superblock {s} lives in block {b}, owned by {}",
                    owner[b as usize] as i64
                )));
            }
        }
        for (s, (sb, &m)) in self.sbs.iter().zip(&mapped).enumerate() {
            if sb.valid != m {
                return Err(Error::integrity(format!(
                    "superblock {s}: {m} mapped logical pages, {} valid pages",
                    sb.valid
                )));
            }
        }
        Ok(())
    }
}

impl BlockMapping for SuperblockFtl {
    fn shared(&self) -> &FtlBase {
        &self.base
    }
    fn shared_mut(&mut self) -> &mut FtlBase {
        &mut self.base
    }
    /// The physical page of `lpn`'s copy (`NONE`: none).
    fn newest(&self, lpn: u64) -> u32 {
        self.l2p[lpn as usize]
    }
    /// The write path: the page goes to its superblock's open block.
    fn write_inner(
        &mut self,
        lpn: u64,
        value: Option<u64>,
        cause: Cause,
        _buffer: &mut dyn BufferView,
    ) -> Result<()> {
        let l = self.base.begin_write(lpn, cause)? as usize;
        self.drop_copy(l);
        let s = l / self.sb_pages as usize;
        let block = self.frontier(s)?;
        let offset = self.base.flash.write_ptr[block as usize];
        let ppn = self.base.program_at(block, offset, lpn, cause);
        self.l2p[l] = ppn;
        self.sbs[s].valid += 1;
        self.base.oracle_write(lpn, ppn, value);
        Ok(())
    }
    fn map_entry(&self, lpn: u64) -> (&[u32], usize) {
        (&self.l2p, lpn as usize)
    }

    fn trim_page(&mut self, lpn: u64) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        self.base.counters.host_trim_pages += 1;
        self.base.written(lpn);
        self.drop_copy(l);
        if let Some(o) = &mut self.base.oracle {
            o.trim(l);
        }
        self.base.ops.dram();
        Ok(())
    }

    fn check(&self) -> Result<()> {
        self.free.check(&self.base)?;
        self.check_superblocks()?;
        if let Some(o) = &self.base.oracle {
            o.check_all(&self.l2p)?;
        }
        Ok(())
    }

    fn spare(&self) -> Space {
        Space {
            free_blocks: self.free.count() as u64,
            held_back_pages: self
                .free
                .held_back_pages(&self.base, self.sbs.iter().map(|sb| sb.open)),
            valid_pages: self.sbs.iter().map(|sb| sb.valid as u64).sum(),
        }
    }

    fn state_bytes(&self) -> usize {
        self.base.memory_bytes()
            + self.l2p.len() * 4
            + self
                .sbs
                .iter()
                .map(|sb| std::mem::size_of::<Superblock>() + sb.blocks.capacity() * 4)
                .sum::<usize>()
            + self.victim_pages.capacity() * 4
    }
}
