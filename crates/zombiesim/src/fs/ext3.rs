//! An ext3-like file system: block and inode allocation, files with direct and
//! indirect blocks, directories, and what each operation changes on disk.
//!
//! ```text
//!   create   inode bitmap, group descriptor, inode-table block, parent's directory
//!            block (a new one when full) and parent inode
//!   write    data blocks (allocated near the file's last block, after an indirect
//!            block every `block/4` pointers), block bitmap, descriptor, inode, the
//!            indirect block that maps each new block
//!   read     data blocks (through the page cache)
//!   delete   directory block, parent inode, inode-table block, inode bitmap; every
//!            data and indirect block freed (bitmap, descriptor); cached data dropped
//!   mkdir    a create with one directory block
//! ```
//!
//! Metadata changes go to the running transaction ([`Journal`]); a metadata block not
//! already held by it is read first (through the cache). Data goes to the page cache
//! (`writeback`, `ordered`) or to the transaction (`journal`, `vma`). Allocation
//! follows ext3: files in their directory's group, directories spread over groups,
//! data after the file's last block (a new file starts at a per-inode offset in its
//! group, as ext3's allocation colouring does), freed blocks reusable once the freeing
//! transaction commits. Not modelled: access times (`noatime`), directory lookups'
//! reads, xattrs, extents (ext3 has none), block reservation windows.

use super::bitmap::{bit, find_clear, set};
use super::inode::{Extent, Ino, Inode, DIRECT, DIRENT_BYTES};
use super::io::FsIo;
use super::journal::{Journal, JournalMode};
use super::layout::{Layout, FIRST_INODE, ROOT_INODE};
use crate::error::{Error, Result};
use crate::workload::IoKind;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;

/// File-system operations done, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct OpCounts {
    pub create: u64,
    pub mkdir: u64,
    pub delete: u64,
    pub write: u64,
    pub read: u64,
    pub fsync: u64,
}

impl OpCounts {
    pub fn total(&self) -> u64 {
        self.create + self.mkdir + self.delete + self.write + self.read + self.fsync
    }

    pub fn add(&mut self, o: &OpCounts) {
        self.create += o.create;
        self.mkdir += o.mkdir;
        self.delete += o.delete;
        self.write += o.write;
        self.read += o.read;
        self.fsync += o.fsync;
    }
}

/// One partition's file system.
pub struct Ext3 {
    pub layout: Layout,
    bitmap: Vec<u64>,
    ibitmap: Vec<u64>,
    group_free_inodes: Vec<u64>,
    group_free_blocks: Vec<u64>,
    free_blocks: u64,
    inodes: FxHashMap<Ino, Inode>,
    pub journal: Journal,
    /// What the operations so far ask of the layers below, in order.
    pub out: VecDeque<FsIo>,
    stamp: u64,
    next_dir_group: u64,
    /// Simulated time of the operation in progress (ns).
    pub now: u64,
    /// Build without I/O (files that exist before the run).
    quiet: bool,
    /// Blocks freed by the commit in progress, allocatable once it is done.
    unreleased: Vec<u64>,
    pub ops: OpCounts,
}

impl Ext3 {
    /// A freshly made file system (`mkfs`), journal placed in the middle group.
    pub fn new(
        layout: Layout,
        mode: JournalMode,
        commit_ns: u64,
        vmm_entries: u64,
    ) -> Result<Ext3> {
        let words = layout.blocks.div_ceil(64) as usize;
        let mut bitmap = vec![0u64; words];
        let mut group_free_blocks = vec![0u64; layout.groups as usize];
        for g in 0..layout.groups {
            for b in layout.group_start(g)..layout.first_data(g) {
                set(&mut bitmap, b, true);
            }
            group_free_blocks[g as usize] = layout.group_end(g) - layout.first_data(g);
        }
        let free_blocks = group_free_blocks.iter().sum();
        let inodes_total = layout.total_inodes();
        let mut fs = Ext3 {
            ibitmap: vec![0u64; inodes_total.div_ceil(64) as usize],
            group_free_inodes: vec![layout.inodes_per_group; layout.groups as usize],
            group_free_blocks,
            free_blocks,
            bitmap,
            inodes: FxHashMap::default(),
            journal: Journal::new(mode, vec![(0, 2)], &layout, commit_ns, vmm_entries),
            out: VecDeque::new(),
            stamp: 0,
            next_dir_group: 1,
            now: 0,
            quiet: true,
            unreleased: Vec::new(),
            ops: OpCounts::default(),
            layout,
        };
        for ino in 0..FIRST_INODE {
            fs.take_inode(ino);
        }
        // The journal: an inode's blocks from the middle group's data area on.
        let mid = fs.layout.groups / 2;
        let mut goal = fs.layout.first_data(mid);
        let mut extents: Vec<(u64, u64)> = Vec::new();
        for _ in 0..fs.layout.journal_blocks {
            let b = fs.alloc_block(goal)?;
            match extents.last_mut() {
                Some((s, n)) if *s + *n == b => *n += 1,
                _ => extents.push((b, 1)),
            }
            goal = b + 1;
        }
        fs.journal = Journal::new(mode, extents, &fs.layout, commit_ns, vmm_entries);
        let root = Inode {
            dir: Some(Box::default()),
            parent: ROOT_INODE as Ino,
            ..Inode::default()
        };
        fs.inodes.insert(ROOT_INODE as Ino, root);
        fs.add_dir_block(ROOT_INODE as Ino)?;
        fs.quiet = false;
        fs.ops = OpCounts::default();
        Ok(fs)
    }

    /// Build (`true`) or stop building (`false`) without I/O: files that exist before
    /// the measured run.
    pub fn set_quiet(&mut self, quiet: bool) {
        self.quiet = quiet;
    }

    pub fn root(&self) -> Ino {
        ROOT_INODE as Ino
    }

    pub fn mode(&self) -> JournalMode {
        self.journal.mode
    }

    /// Free data blocks.
    pub fn free_blocks(&self) -> u64 {
        self.free_blocks
    }

    /// A file's size in bytes.
    pub fn size(&self, ino: Ino) -> u64 {
        self.inodes.get(&ino).map_or(0, |i| i.size)
    }

    fn take_inode(&mut self, ino: u64) {
        set(&mut self.ibitmap, ino, true);
        self.group_free_inodes[(ino / self.layout.inodes_per_group) as usize] -= 1;
    }

    // ---- what reaches the journal and the cache ----

    /// Change metadata block `block` in the running transaction (reading it first
    /// unless the transaction holds it or it is `fresh`).
    #[inline]
    fn meta(&mut self, block: u64, fresh: bool) {
        if self.quiet || self.journal.holds(block) {
            return;
        }
        if !fresh {
            self.out.push_back(FsIo::Read {
                block,
                count: 1,
                kind: IoKind::Metadata,
            });
        }
        self.journal
            .journal_block(block, IoKind::Metadata, self.now);
    }

    /// New contents for the data blocks `block..block + count`.
    fn data(&mut self, block: u64, count: u64) {
        if self.quiet {
            return;
        }
        match self.journal.mode {
            JournalMode::Writeback | JournalMode::Ordered => {
                self.stamp += 1;
                self.out.push_back(FsIo::Write {
                    block,
                    count: count as u32,
                    kind: IoKind::Data,
                    version: self.stamp,
                });
                {
                    for b in block..block + count {
                        self.journal.order_data(b, self.stamp, self.now);
                    }
                }
            }
            JournalMode::Journal | JournalMode::Vma => {
                for b in block..block + count {
                    self.journal.journal_block(b, IoKind::Data, self.now);
                }
                self.out.push_back(FsIo::Pin {
                    block,
                    count: count as u32,
                });
            }
        }
    }

    /// Read data blocks `block..block + count` (those the running transaction holds
    /// are in memory).
    fn read_data(&mut self, block: u64, count: u64) {
        if self.quiet {
            return;
        }
        let mut run: Option<(u64, u64)> = None;
        for b in block..block + count {
            if self.journal.mode.journals_data() && self.journal.holds(b) {
                if let Some((s, n)) = run.take() {
                    self.push_read(s, n);
                }
            } else {
                run = match run {
                    Some((s, n)) => Some((s, n + 1)),
                    None => Some((b, 1)),
                };
            }
        }
        if let Some((s, n)) = run {
            self.push_read(s, n);
        }
    }

    fn push_read(&mut self, block: u64, count: u64) {
        self.out.push_back(FsIo::Read {
            block,
            count: count as u32,
            kind: IoKind::Data,
        });
    }

    // ---- allocation ----

    /// Allocate one block at or after `goal` (wrapping): bitmap and descriptor change.
    fn alloc_block(&mut self, goal: u64) -> Result<u64> {
        let n = self.layout.blocks;
        let goal = goal.min(n - 1);
        let b = find_clear(&self.bitmap, goal, n)
            .or_else(|| find_clear(&self.bitmap, 0, goal))
            .ok_or_else(|| {
                Error::workload(
                    "fs",
                    format!(
                        "the file system is full ({} blocks of {} B): give the VMs larger \
                         partitions (`partition=`) or the workload less data",
                        n, self.layout.block_bytes
                    ),
                )
            })?;
        set(&mut self.bitmap, b, true);
        self.free_blocks -= 1;
        let g = self.layout.group_of(b);
        self.group_free_blocks[g as usize] -= 1;
        self.meta(self.layout.block_bitmap(g), false);
        self.meta(self.layout.descriptor_block(g), false);
        Ok(b)
    }

    /// Free block `b` (reusable when the running transaction commits).
    fn free_block(&mut self, b: u64) {
        let g = self.layout.group_of(b);
        self.meta(self.layout.block_bitmap(g), false);
        self.meta(self.layout.descriptor_block(g), false);
        if self.quiet {
            self.release(&[b]);
        } else {
            self.journal.free_block(b, self.now);
        }
    }

    /// Blocks freed by a committed transaction become allocatable.
    fn release(&mut self, blocks: &[u64]) {
        for &b in blocks {
            debug_assert!(bit(&self.bitmap, b));
            set(&mut self.bitmap, b, false);
            self.free_blocks += 1;
            self.group_free_blocks[self.layout.group_of(b) as usize] += 1;
        }
    }

    /// Allocate an inode: directories spread over groups, files in their parent's.
    fn alloc_inode(&mut self, parent: Ino, dir: bool) -> Result<Ino> {
        let groups = self.layout.groups;
        let start = if dir {
            let g = self.next_dir_group % groups;
            self.next_dir_group += 1;
            g
        } else {
            parent as u64 / self.layout.inodes_per_group
        };
        let ipg = self.layout.inodes_per_group;
        for k in 0..groups {
            let g = (start + k) % groups;
            if self.group_free_inodes[g as usize] == 0 {
                continue;
            }
            let lo = (g * ipg).max(FIRST_INODE);
            if let Some(ino) = find_clear(&self.ibitmap, lo, (g + 1) * ipg) {
                self.take_inode(ino);
                self.meta(self.layout.inode_bitmap(g), false);
                self.meta(self.layout.descriptor_block(g), false);
                self.meta(self.layout.inode_block(ino), false);
                return Ok(ino as Ino);
            }
        }
        Err(Error::workload(
            "fs",
            "the file system ran out of inodes: give the VMs larger partitions",
        ))
    }

    fn inode(&mut self, ino: Ino) -> &mut Inode {
        self.inodes.get_mut(&ino).expect("a live inode")
    }

    /// Give directory `dir` one more block.
    fn add_dir_block(&mut self, dir: Ino) -> Result<usize> {
        let goal = {
            let d = self.inodes[&dir].dir.as_ref().expect("a directory");
            match d.blocks.last() {
                Some(&b) => b + 1,
                None => self
                    .layout
                    .first_data(dir as u64 / self.layout.inodes_per_group),
            }
        };
        let b = self.alloc_block(goal)?;
        self.meta(b, true);
        self.meta(self.layout.inode_block(dir as u64), false);
        let block_bytes = self.layout.block_bytes;
        let node = self.inode(dir);
        node.size += block_bytes;
        node.nblocks += 1;
        let d = node.dir.as_mut().expect("a directory");
        d.blocks.push(b);
        d.counts.push(0);
        Ok(d.blocks.len() - 1)
    }

    /// Add an entry to directory `dir`; returns the index of its block.
    fn dir_add(&mut self, dir: Ino) -> Result<u32> {
        let per_block = (self.layout.block_bytes / DIRENT_BYTES) as u32;
        let found = {
            let d = self.inodes[&dir].dir.as_ref().expect("a directory");
            let n = d.blocks.len();
            (0..n)
                .map(|k| (d.hint + k) % n)
                .find(|&i| d.counts[i] < per_block)
        };
        let i = match found {
            Some(i) => i,
            None => self.add_dir_block(dir)?,
        };
        let d = self.inode(dir).dir.as_mut().expect("a directory");
        d.counts[i] += 1;
        d.hint = i;
        let block = d.blocks[i];
        self.meta(block, false);
        self.meta(self.layout.inode_block(dir as u64), false);
        Ok(i as u32)
    }

    // ---- operations ----

    /// Create a file (or, with `dir`, a directory) in `parent`.
    pub fn create(&mut self, parent: Ino, dir: bool) -> Result<Ino> {
        let ino = self.alloc_inode(parent, dir)?;
        let slot = self.dir_add(parent)?;
        self.inodes.insert(
            ino,
            Inode {
                parent,
                slot,
                dir: dir.then(Box::default),
                ..Inode::default()
            },
        );
        if dir {
            self.ops.mkdir += 1;
            self.add_dir_block(ino)?;
        } else {
            self.ops.create += 1;
        }
        Ok(ino)
    }

    /// The physical block of logical block `lblk` of `ino`.
    fn map(&self, ino: Ino, lblk: u64) -> u64 {
        let node = &self.inodes[&ino];
        let i = node.extents.partition_point(|e| e.lblk + e.len <= lblk);
        let e = node.extents[i];
        e.pblk + (lblk - e.lblk)
    }

    /// Map logical blocks `from..to` of `ino` as physical runs.
    fn runs(&self, ino: Ino, from: u64, to: u64) -> Vec<(u64, u64)> {
        let node = &self.inodes[&ino];
        let mut out = Vec::new();
        let mut i = node.extents.partition_point(|e| e.lblk + e.len <= from);
        let mut l = from;
        while l < to && i < node.extents.len() {
            let e = node.extents[i];
            let end = (e.lblk + e.len).min(to);
            out.push((e.pblk + (l - e.lblk), end - l));
            l = end;
            i += 1;
        }
        out
    }

    /// Append logical block `lblk` (= the file's block count) to `ino`: the indirect
    /// blocks it needs, then the data block. Returns the data block.
    fn grow(&mut self, ino: Ino, goal: u64) -> Result<u64> {
        let p = self.layout.pointers_per_block();
        let lblk = self.inodes[&ino].nblocks;
        let mut goal = goal;
        let new_indirect = |fs: &mut Ext3, goal: &mut u64| -> Result<u64> {
            let b = fs.alloc_block(*goal)?;
            fs.meta(b, true);
            fs.inode(ino).indirect.push(b);
            *goal = b + 1;
            Ok(b)
        };
        let holder = if lblk < DIRECT {
            None
        } else if lblk < DIRECT + p {
            if lblk == DIRECT {
                new_indirect(self, &mut goal)?;
            }
            Some(0)
        } else {
            let k = (lblk - DIRECT - p) / p;
            if k >= p {
                return Err(Error::workload(
                    "fs",
                    "a file grew past what double-indirect blocks map (triple-indirect \
                     files are not modelled)",
                ));
            }
            if lblk == DIRECT + p {
                new_indirect(self, &mut goal)?; // the double-indirect block
            }
            if (lblk - DIRECT - p).is_multiple_of(p) {
                new_indirect(self, &mut goal)?;
                let dind = self.inodes[&ino].indirect[1];
                self.meta(dind, false);
            }
            Some(2 + k as usize)
        };
        if let Some(h) = holder {
            let ind = self.inodes[&ino].indirect[h];
            self.meta(ind, false);
        }
        let b = self.alloc_block(goal)?;
        let node = self.inode(ino);
        match node.extents.last_mut() {
            Some(e) if e.pblk + e.len == b => e.len += 1,
            _ => node.extents.push(Extent {
                lblk,
                pblk: b,
                len: 1,
            }),
        }
        node.nblocks += 1;
        Ok(b)
    }

    /// Write `bytes` at `offset` of file `ino` (appending past its end).
    pub fn write(&mut self, ino: Ino, offset: u64, bytes: u64) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.ops.write += 1;
        let bs = self.layout.block_bytes;
        let (first, last) = (offset / bs, (offset + bytes - 1) / bs);
        let (old_size, old_blocks) = {
            let n = &self.inodes[&ino];
            (n.size, n.nblocks)
        };
        // A partial block that holds data is read before it is changed.
        for l in [first, last] {
            let partial = (l == first && !offset.is_multiple_of(bs))
                || (l == last && !(offset + bytes).is_multiple_of(bs) && offset + bytes < old_size);
            if partial && l < old_blocks && l * bs < old_size {
                let b = self.map(ino, l);
                self.read_data(b, 1);
            }
            if first == last {
                break;
            }
        }
        // Blocks that exist are rewritten in place.
        let existing_end = (last + 1).min(old_blocks);
        if first < existing_end {
            for (b, n) in self.runs(ino, first, existing_end) {
                self.data(b, n);
            }
        }
        // New blocks (and any hole up to them) are allocated after the last one.
        if last + 1 > old_blocks {
            let mut goal = match self.inodes[&ino].extents.last() {
                Some(e) => e.pblk + e.len,
                None => {
                    let g = ino as u64 / self.layout.inodes_per_group;
                    let span = self.layout.group_end(g) - self.layout.first_data(g);
                    self.layout.first_data(g) + (ino as u64 % 16) * (span / 16)
                }
            };
            let mut run: Option<(u64, u64)> = None;
            for _ in old_blocks..=last {
                let b = self.grow(ino, goal)?;
                goal = b + 1;
                run = match run {
                    Some((s, n)) if s + n == b => Some((s, n + 1)),
                    Some((s, n)) => {
                        self.data(s, n);
                        Some((b, 1))
                    }
                    None => Some((b, 1)),
                };
            }
            if let Some((s, n)) = run {
                self.data(s, n);
            }
        }
        let node = self.inode(ino);
        node.size = node.size.max(offset + bytes);
        self.meta(self.layout.inode_block(ino as u64), false);
        Ok(())
    }

    /// Append `bytes` to file `ino`.
    pub fn append(&mut self, ino: Ino, bytes: u64) -> Result<()> {
        let size = self.size(ino);
        self.write(ino, size, bytes)
    }

    /// Read `bytes` at `offset` of file `ino` (clipped to its size).
    pub fn read(&mut self, ino: Ino, offset: u64, bytes: u64) {
        self.ops.read += 1;
        let size = self.size(ino);
        let end = (offset + bytes).min(size);
        if end <= offset {
            return;
        }
        let bs = self.layout.block_bytes;
        for (b, n) in self.runs(ino, offset / bs, end.div_ceil(bs)) {
            self.read_data(b, n);
        }
    }

    /// Delete file or empty directory `ino`.
    pub fn delete(&mut self, ino: Ino) {
        let Some(node) = self.inodes.remove(&ino) else {
            return;
        };
        self.ops.delete += 1;
        // The directory entry.
        let parent = node.parent;
        if let Some(d) = self.inodes.get_mut(&parent).and_then(|p| p.dir.as_mut()) {
            let i = node.slot as usize;
            d.counts[i] -= 1;
            let block = d.blocks[i];
            self.meta(block, false);
            self.meta(self.layout.inode_block(parent as u64), false);
        }
        // Data: blocks freed, cached pages dropped unwritten at once (JBD's
        // `journal_unmap_buffer` cleans them), except what a commit in progress still
        // has to write: `ordered` data on the committing transaction's list (the commit
        // writes it first) and, under `journal` and `vma`, blocks whose committed copy
        // that commit is checkpointing (its queued write-back needs the page; dropped
        // when this transaction commits). Other journaled copies are `zap`ped: a
        // checkpoint before this transaction commits writes them home from the journal.
        let journals_data = matches!(self.journal.mode, JournalMode::Journal | JournalMode::Vma);
        for e in &node.extents {
            if !self.quiet {
                let mut dropped = Vec::with_capacity(e.len as usize);
                for b in e.pblk..e.pblk + e.len {
                    if !journals_data {
                        if !self.journal.committing_data(b) {
                            dropped.push(b);
                        }
                    } else if self.journal.checkpointing_copy(b) {
                        self.journal.drop_at_commit(b, 1);
                    } else {
                        dropped.push(b);
                        if self.journal.has_live_copy(b) {
                            self.journal.zap(b);
                        }
                    }
                }
                super::journal::push_runs(&mut self.out, dropped.into_iter(), |block, count| {
                    FsIo::Drop { block, count }
                });
            }
            for b in e.pblk..e.pblk + e.len {
                self.free_block(b);
            }
        }
        let dir_blocks = node.dir.as_ref().map_or(&[][..], |d| &d.blocks[..]);
        for &b in node.indirect.iter().chain(dir_blocks) {
            self.free_block(b);
        }
        // The inode.
        let g = ino as u64 / self.layout.inodes_per_group;
        self.meta(self.layout.inode_block(ino as u64), false);
        self.meta(self.layout.inode_bitmap(g), false);
        self.meta(self.layout.descriptor_block(g), false);
        set(&mut self.ibitmap, ino as u64, false);
        self.group_free_inodes[g as usize] += 1;
    }

    /// The application thinks (CPU time) for `ns`.
    pub fn think(&mut self, ns: u64) {
        if !self.quiet && ns > 0 {
            self.out.push_back(FsIo::Think { ns });
        }
    }

    /// Commit the running transaction now (the 5 s timer, fsync, sync). The blocks it
    /// freed become allocatable when its I/O is done ([`Ext3::commit_finished`]).
    pub fn commit(&mut self) {
        let freed = self.journal.commit(&mut self.out);
        self.unreleased.extend(freed);
    }

    /// The commit in progress has written everything: its freed blocks are reusable.
    pub fn commit_finished(&mut self) {
        let freed = std::mem::take(&mut self.unreleased);
        self.release(&freed);
        self.journal.commit_finished();
    }

    /// `sync` at the end of a run: commit, write back everything dirty, checkpoint.
    pub fn sync(&mut self) {
        self.commit();
        self.out.push_back(FsIo::WriteBack {
            block: 0,
            count: self.layout.blocks as u32,
        });
        self.journal.checkpoint_all(&mut self.out);
    }

    /// Check the allocator's books: every file's blocks are allocated exactly once
    /// and the free counts agree with the bitmap (tests).
    pub fn check(&self) -> std::result::Result<(), String> {
        let mut owned = vec![0u64; self.bitmap.len()];
        let mut claim = |b: u64, what: &str| -> std::result::Result<(), String> {
            if bit(&owned, b) {
                return Err(format!("block {b} ({what}) is owned twice"));
            }
            if !bit(&self.bitmap, b) {
                return Err(format!(
                    "block {b} ({what}) is in use but free in the bitmap"
                ));
            }
            set(&mut owned, b, true);
            Ok(())
        };
        for g in 0..self.layout.groups {
            for b in self.layout.group_start(g)..self.layout.first_data(g) {
                claim(b, "fixed metadata")?;
            }
        }
        for &(s, n) in self.journal.extents() {
            for b in s..s + n {
                claim(b, "journal")?;
            }
        }
        let mut inos: Vec<_> = self.inodes.keys().copied().collect();
        inos.sort_unstable();
        for ino in inos {
            let node = &self.inodes[&ino];
            if !bit(&self.ibitmap, ino as u64) {
                return Err(format!("inode {ino} is live but free in the inode bitmap"));
            }
            let mut n = 0;
            for e in &node.extents {
                for b in e.pblk..e.pblk + e.len {
                    claim(b, "file data")?;
                }
                n += e.len;
            }
            for &b in node.indirect.iter() {
                claim(b, "indirect")?;
            }
            if let Some(d) = &node.dir {
                for &b in &d.blocks {
                    claim(b, "directory")?;
                }
            } else if n != node.nblocks {
                return Err(format!(
                    "inode {ino}: {n} mapped blocks, {} counted",
                    node.nblocks
                ));
            }
        }
        let pending = (self.journal.pending_frees() + self.unreleased.len()) as u64;
        let used = self
            .bitmap
            .iter()
            .map(|w| w.count_ones() as u64)
            .sum::<u64>();
        let owned_n = owned.iter().map(|w| w.count_ones() as u64).sum::<u64>();
        if used != owned_n + pending {
            return Err(format!(
                "{used} blocks allocated in the bitmap, {owned_n} owned and {pending} \
                 awaiting their transaction's commit"
            ));
        }
        if self.free_blocks != self.layout.blocks - used {
            return Err(format!(
                "free count {} but the bitmap says {}",
                self.free_blocks,
                self.layout.blocks - used
            ));
        }
        Ok(())
    }
}
