//! The journal (ext3's JBD) and VM-aware journaling (002 §III).
//!
//! ```text
//!   running transaction ── every `commit_s` (5 s), on fsync, or at a quarter of the log
//!     │   journaled: metadata blocks (and data under `journal`/`vma`), held in memory
//!     │   ordered:   data blocks dirtied in it (`ordered`)
//!     │   freed:     blocks freed in it (reusable once it commits; revoked in the log)
//!     ▼ commit
//!   ordered:  write back the transaction's data and wait           (before the commit)
//!   log:      [descriptor][copies …][descriptor][copies …][revoke …] then [commit]
//!             synchronous writes at the log head; the log is circular
//!   vma:      nothing reaches the device: the VMM records (address, block) pairs
//!   then      the journaled blocks become dirty in the page cache (home locations)
//!
//!   checkpoint (the log or the VMM's area is short of space): write back the oldest
//!   committed transaction's blocks still dirty (and, from the journal, its copies of
//!   deleted data whose delete has not committed), drop it, move the tail (journal
//!   superblock write; `vma`: a release to the VMM)
//! ```
//!
//! Replaying the log after a crash ([`super::crash`]) applies every complete
//! transaction from the tail on, skipping copies revoked by a later transaction.

use super::io::{CommitRecord, FsIo, JournalBlock};
use super::layout::Layout;
use crate::workload::IoKind;
pub use crate::workload::JournalMode;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::collections::VecDeque;

/// A committed transaction not yet checkpointed.
#[derive(Debug)]
struct Live {
    tid: u64,
    /// Log position of its first block, and log blocks it takes.
    start: u64,
    len: u64,
    blocks: Vec<u64>,
    /// `vma`: entries the VMM dropped already (blocks a later committed transaction freed).
    released: u64,
}

/// The transaction accepting changes.
#[derive(Debug, Default)]
struct Running {
    journaled: Vec<(u64, IoKind)>,
    member: FxHashSet<u64>,
    ordered: FxHashMap<u64, u64>,
    freed: Vec<u64>,
    revoked: Vec<u64>,
    /// Deleted files' journaled data, dropped from the cache once this commits.
    drops: Vec<(u64, u32)>,
    /// When its first change came (ns).
    since: Option<u64>,
}

impl Running {
    fn is_empty(&self) -> bool {
        self.journaled.is_empty()
            && self.ordered.is_empty()
            && self.drops.is_empty()
            && self.freed.is_empty()
            && self.revoked.is_empty()
    }
}

/// Journal counters for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct JournalCounters {
    pub transactions: u64,
    pub checkpoints: u64,
    /// Log blocks written (descriptors, copies, revokes, commits, superblock updates).
    pub log_blocks: u64,
    /// Blocks committed to the VMM's memory instead of the log (`vma`).
    pub vmm_blocks: u64,
}

/// One partition's journal.
pub struct Journal {
    pub mode: JournalMode,
    /// The journal's blocks as runs `(first, len)`; log position 0 is the superblock.
    extents: Vec<(u64, u64)>,
    len: u64,
    tags: u64,
    revokes: u64,
    head: u64,
    free: u64,
    next_tid: u64,
    running: Running,
    live: VecDeque<Live>,
    /// Newest live transaction that journaled each block (revoke decisions).
    last_journaled: FxHashMap<u64, u64>,
    /// Blocks of transactions checkpointed by the commit in progress, with their tid:
    /// they keep their live copy until that commit's steps (the write-backs) are done,
    /// so a file deleted meanwhile does not drop a page a queued write-back still needs.
    checkpointing: FxHashMap<u64, u64>,
    /// Deleted files' data blocks whose cached pages were dropped at the delete while a
    /// committed transaction still held their copy (JBD's `journal_unmap_buffer`: the
    /// buffer is cleaned at once and forgotten when the deleting transaction commits),
    /// with the id of that transaction. A checkpoint of the copy's transaction before
    /// then writes the copy home itself: until the delete commits, recovery needs it.
    zapped: FxHashMap<u64, u64>,
    /// Blocks such a checkpoint wrote home, with the deleting transaction's id: their
    /// pages are dropped once it commits.
    rewritten: Vec<(u64, u64)>,
    vmm_entries: u64,
    vmm_capacity: u64,
    /// `ordered`: the data the commit in progress writes before its commit block.
    committing: FxHashSet<u64>,
    max_txn: u64,
    commit_ns: u64,
    pub counters: JournalCounters,
}

impl Journal {
    /// A journal over `extents` (its blocks, in log order) for `layout`; `vmm_entries`
    /// sizes the VMM's journal area under `vma`.
    pub fn new(
        mode: JournalMode,
        extents: Vec<(u64, u64)>,
        layout: &Layout,
        commit_ns: u64,
        vmm_entries: u64,
    ) -> Journal {
        let len: u64 = extents.iter().map(|e| e.1).sum();
        let log = len - 1;
        let max_txn = if mode == JournalMode::Vma {
            vmm_entries / 4
        } else {
            log / 4
        };
        Journal {
            mode,
            extents,
            len,
            tags: layout.tags_per_descriptor(),
            revokes: layout.revokes_per_block(),
            head: 1,
            free: log,
            next_tid: 1,
            running: Running::default(),
            live: VecDeque::new(),
            last_journaled: FxHashMap::default(),
            checkpointing: FxHashMap::default(),
            zapped: FxHashMap::default(),
            rewritten: Vec::new(),
            vmm_entries: 0,
            vmm_capacity: vmm_entries,
            committing: FxHashSet::default(),
            max_txn: max_txn.max(8),
            commit_ns,
            counters: JournalCounters::default(),
        }
    }

    /// The journal's blocks as runs.
    pub fn extents(&self) -> &[(u64, u64)] {
        &self.extents
    }

    /// Log positions (1..len are the circular log).
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The block at log position `pos`.
    pub fn block_at(&self, mut pos: u64) -> u64 {
        for &(first, n) in &self.extents {
            if pos < n {
                return first + pos;
            }
            pos -= n;
        }
        unreachable!("log position beyond the journal")
    }

    /// Whether `block` is held by the running transaction (its newest version is in memory).
    #[inline]
    pub fn holds(&self, block: u64) -> bool {
        self.running.member.contains(&block)
    }

    fn started(&mut self, now: u64) {
        if self.running.since.is_none() {
            self.running.since = Some(now);
        }
    }

    /// `block` (metadata, or data under full data journaling) changed in the running
    /// transaction.
    #[inline]
    pub fn journal_block(&mut self, block: u64, kind: IoKind, now: u64) {
        if self.running.member.insert(block) {
            self.running.journaled.push((block, kind));
            self.started(now);
            // Journaled again after a free in this transaction: the revoke is cancelled.
            if !self.running.revoked.is_empty() {
                self.running.revoked.retain(|&b| b != block);
            }
        }
    }

    /// Data `block` was dirtied with `stamp` in the running transaction (`ordered`
    /// writes these before the commit; `writeback` only records them for the oracle).
    #[inline]
    pub fn order_data(&mut self, block: u64, stamp: u64, now: u64) {
        self.running.ordered.insert(block, stamp);
        self.started(now);
    }

    /// Drop the cached pages of `block..block + count` once the running transaction
    /// commits (full data journaling: a committed copy may still have to go home).
    pub fn drop_at_commit(&mut self, block: u64, count: u32) {
        self.running.drops.push((block, count));
    }

    /// Whether a committed, not yet checkpointed transaction holds a copy of `block`.
    #[inline]
    pub fn has_live_copy(&self, block: u64) -> bool {
        self.last_journaled.contains_key(&block)
    }

    /// Whether the commit in progress checkpointed the transaction holding `block`'s
    /// live copy: its queued write-back still needs the cached page.
    #[inline]
    pub fn checkpointing_copy(&self, block: u64) -> bool {
        !self.checkpointing.is_empty()
            && self
                .checkpointing
                .get(&block)
                .is_some_and(|t| self.last_journaled.get(&block) == Some(t))
    }

    /// A deleted file's data `block`, whose live copy is in a committed transaction,
    /// was dropped from the cache unwritten (see `zapped`).
    pub fn zap(&mut self, block: u64) {
        self.zapped.insert(block, self.next_tid);
    }

    /// Whether `block` is data the commit in progress writes first (`ordered`).
    #[inline]
    pub fn committing_data(&self, block: u64) -> bool {
        !self.committing.is_empty() && self.committing.contains(&block)
    }

    /// The commit in progress is done: its checkpoints' write-backs are issued, so
    /// the blocks they wrote home hold no live copy any more.
    pub fn commit_finished(&mut self) {
        self.committing.clear();
        for (b, tid) in std::mem::take(&mut self.checkpointing) {
            if self.last_journaled.get(&b) == Some(&tid) {
                self.last_journaled.remove(&b);
            }
        }
    }

    /// `block` was freed: reusable after the commit, and revoked if the log holds a copy.
    pub fn free_block(&mut self, block: u64, now: u64) {
        self.started(now);
        self.running.freed.push(block);
        self.running.ordered.remove(&block);
        if self.running.member.remove(&block) {
            self.running.journaled.retain(|&(b, _)| b != block);
        }
        if self.last_journaled.contains_key(&block) {
            self.running.revoked.push(block);
        }
    }

    /// Whether the running transaction must commit now: its age reached the commit
    /// interval, or its size JBD's limit.
    pub fn commit_due(&self, now: u64) -> bool {
        self.due_at().is_some_and(|t| now >= t) || self.over_size()
    }

    /// When the running transaction's commit interval is over (`None`: it is empty).
    pub fn due_at(&self) -> Option<u64> {
        self.running.since.map(|s| s + self.commit_ns)
    }

    /// Whether the running transaction reached JBD's size limit (a quarter of the log;
    /// `ordered`: or four times that in data to write first).
    pub fn over_size(&self) -> bool {
        self.running.journaled.len() as u64 >= self.max_txn
            || (self.mode == JournalMode::Ordered
                && self.running.ordered.len() as u64 >= self.max_txn * 4)
    }

    /// Commit the running transaction: its I/O goes to `out`. Returns the blocks it
    /// freed (now reusable).
    pub fn commit(&mut self, out: &mut VecDeque<FsIo>) -> Vec<u64> {
        if self.running.is_empty() {
            self.running.since = None;
            return Vec::new();
        }
        let run = std::mem::take(&mut self.running);
        // `next_tid` moves past this transaction only once it is written: a checkpoint
        // that empties the log meanwhile points the tail at this transaction.
        let tid = self.next_tid;
        self.counters.transactions += 1;
        let mut ordered: Vec<(u64, u64)> = run.ordered.into_iter().collect();
        ordered.sort_unstable();
        if self.mode == JournalMode::Ordered {
            push_runs(out, ordered.iter().map(|&(b, _)| b), |block, count| {
                FsIo::WriteBack { block, count }
            });
            self.committing.extend(ordered.iter().map(|&(b, _)| b));
        }
        let homes: Vec<u64> = run.journaled.iter().map(|&(b, _)| b).collect();
        let n = homes.len() as u64;
        let in_vmm = self.mode == JournalMode::Vma;
        if in_vmm {
            self.counters.vmm_blocks += n;
            self.vmm_entries += n;
            self.live.push_back(Live {
                tid,
                start: 0,
                len: 0,
                blocks: homes.clone(),
                released: 0,
            });
        } else {
            let descs = n.div_ceil(self.tags);
            let revs = (run.revoked.len() as u64).div_ceil(self.revokes);
            let need = n + descs + revs + 1;
            while self.free < need && !self.live.is_empty() {
                self.checkpoint(out);
            }
            let mut contents = Vec::with_capacity((need - 1) as usize);
            for chunk in homes.chunks(self.tags as usize) {
                contents.push(JournalBlock::Descriptor {
                    tid,
                    homes: chunk.into(),
                });
                contents.extend(chunk.iter().map(|&home| JournalBlock::Copy { home, tid }));
            }
            for chunk in run.revoked.chunks(self.revokes as usize) {
                contents.push(JournalBlock::Revoke {
                    tid,
                    blocks: chunk.into(),
                });
            }
            let start = self.head;
            // The commit block is written once the rest is on the device.
            self.write_log(out, contents);
            self.write_log(out, vec![JournalBlock::Commit { tid }]);
            self.free -= need;
            self.live.push_back(Live {
                tid,
                start,
                len: need,
                blocks: homes.clone(),
                released: 0,
            });
        }
        self.next_tid += 1;
        for &b in &homes {
            self.last_journaled.insert(b, tid);
        }
        // The commit is durable now (the oracle's record comes before any home write).
        out.push_back(FsIo::Committed(CommitRecord {
            tid,
            journaled: homes.as_slice().into(),
            ordered: ordered.into(),
            freed: run.freed.as_slice().into(),
            in_vmm,
        }));
        // Deleted files' data: its copies are revoked now, the cache may drop it.
        for &(block, count) in &run.drops {
            out.push_back(FsIo::Drop { block, count });
        }
        if !self.zapped.is_empty() || !self.rewritten.is_empty() {
            self.zapped.retain(|_, t| *t != tid);
            let mut redrop = Vec::new();
            self.rewritten.retain(|&(b, t)| {
                if t == tid {
                    redrop.push(b);
                }
                t != tid
            });
            redrop.sort_unstable();
            push_runs(out, redrop.into_iter(), |block, count| FsIo::Drop {
                block,
                count,
            });
        }
        // Committed blocks are dirty at home now, for the flusher or a checkpoint: the
        // data the transaction held first (unpinned), then the metadata.
        let mut sorted = run.journaled;
        sorted.sort_unstable_by_key(|&(b, kind)| (kind != IoKind::Data, b));
        let mut i = 0;
        while i < sorted.len() {
            let (block, kind) = sorted[i];
            let mut count = 1;
            while i + count < sorted.len()
                && sorted[i + count] == (block + count as u64, kind)
                && count < u32::MAX as usize
            {
                count += 1;
            }
            let count_u32 = count as u32;
            out.push_back(if kind == IoKind::Data {
                FsIo::Unpin {
                    block,
                    count: count_u32,
                    version: tid,
                }
            } else {
                FsIo::Write {
                    block,
                    count: count_u32,
                    kind,
                    version: tid,
                }
            });
            i += count;
        }
        // `vma`: the VMM's area is checkpointed once this transaction is in it, so a
        // block this transaction freed never needs its older copy written home; the
        // VMM drops the entries of those blocks now (002: reclaimed buffers leave the
        // journal information).
        if in_vmm {
            for b in &run.freed {
                if let Some(t) = self.last_journaled.remove(b) {
                    if let Some(l) = self.live.iter_mut().find(|l| l.tid == t) {
                        l.released += 1;
                        self.vmm_entries -= 1;
                    }
                }
            }
            while self.vmm_entries > self.vmm_capacity && self.live.len() > 1 {
                self.checkpoint(out);
            }
        }
        run.freed
    }

    /// Checkpoint the oldest committed transaction: write back its blocks still dirty
    /// and release its log space (or VMM entries).
    pub fn checkpoint(&mut self, out: &mut VecDeque<FsIo>) {
        let Some(old) = self.live.pop_front() else {
            return;
        };
        self.counters.checkpoints += 1;
        let mut blocks = old.blocks;
        blocks.sort_unstable();
        if !self.zapped.is_empty() {
            // Copies of deleted data the delete has not committed yet: write them home
            // from the journal's copy (the page was dropped), then as the rest.
            for &b in &blocks {
                if let Some(&by) = self.zapped.get(&b) {
                    if self.last_journaled.get(&b) == Some(&old.tid) {
                        self.zapped.remove(&b);
                        self.rewritten.push((b, by));
                        out.push_back(FsIo::Write {
                            block: b,
                            count: 1,
                            kind: IoKind::Data,
                            version: old.tid,
                        });
                    }
                }
            }
        }
        push_runs(out, blocks.iter().copied(), |block, count| {
            FsIo::WriteBack { block, count }
        });
        self.checkpointing
            .extend(blocks.iter().map(|&b| (b, old.tid)));
        if self.mode == JournalMode::Vma {
            self.vmm_entries -= blocks.len() as u64 - old.released;
            out.push_back(FsIo::VmmRelease { upto: old.tid });
        } else {
            self.free += old.len;
            let (tail, tail_tid) = match self.live.front() {
                Some(l) => (l.start, l.tid),
                None => (self.head, self.next_tid),
            };
            debug_assert!(old.start > 0);
            self.write_super(out, tail, tail_tid);
        }
    }

    /// Checkpoint everything (unmount, sync).
    pub fn checkpoint_all(&mut self, out: &mut VecDeque<FsIo>) {
        while !self.live.is_empty() {
            self.checkpoint(out);
        }
    }

    fn write_super(&mut self, out: &mut VecDeque<FsIo>, tail: u64, tail_tid: u64) {
        self.counters.log_blocks += 1;
        out.push_back(FsIo::Journal {
            block: self.block_at(0),
            contents: vec![JournalBlock::Super { tail, tail_tid }],
        });
    }

    /// Write `contents` at the log head (wrapping, split where the journal's blocks
    /// are not contiguous).
    fn write_log(&mut self, out: &mut VecDeque<FsIo>, contents: Vec<JournalBlock>) {
        self.counters.log_blocks += contents.len() as u64;
        let mut piece: Vec<JournalBlock> = Vec::new();
        let mut first = 0;
        for c in contents {
            let here = self.block_at(self.head);
            if !piece.is_empty() && here != first + piece.len() as u64 {
                out.push_back(FsIo::Journal {
                    block: first,
                    contents: std::mem::take(&mut piece),
                });
            }
            if piece.is_empty() {
                first = here;
            }
            piece.push(c);
            self.head = if self.head + 1 == self.len {
                1
            } else {
                self.head + 1
            };
        }
        if !piece.is_empty() {
            out.push_back(FsIo::Journal {
                block: first,
                contents: piece,
            });
        }
    }
}

/// Push one `make(first, count)` per run of consecutive blocks of `blocks` (ascending).
pub(super) fn push_runs(
    out: &mut VecDeque<FsIo>,
    blocks: impl Iterator<Item = u64>,
    make: impl Fn(u64, u32) -> FsIo,
) {
    let mut run: Option<(u64, u32)> = None;
    for b in blocks {
        run = match run {
            Some((s, n)) if s + n as u64 == b => Some((s, n + 1)),
            Some((s, n)) => {
                out.push_back(make(s, n));
                Some((b, 1))
            }
            None => Some((b, 1)),
        };
    }
    if let Some((s, n)) = run {
        out.push_back(make(s, n));
    }
}

/// The superblock a fresh journal starts with.
pub fn initial_super() -> JournalBlock {
    JournalBlock::Super {
        tail: 1,
        tail_tid: 1,
    }
}

impl Journal {
    /// Blocks freed in the running transaction (allocated until it commits).
    pub fn pending_frees(&self) -> usize {
        self.running.freed.len()
    }
}
