//! What one VM's file system asks of the layers below: block reads and writes through
//! the host page cache, synchronous journal writes, forced writeback, and (for the
//! crash-consistency oracle) what each commit made durable.
//!
//! Block numbers are the partition's file-system blocks. Contents are tracked as
//! versions: a block written at its home location carries the transaction id that
//! committed it (metadata, and data under full data journaling) or the stamp of the
//! write that dirtied it (data under `writeback` and `ordered`); a journal block says
//! what it is ([`JournalBlock`]).

use crate::workload::IoKind;
use std::sync::Arc;

/// What a journal-area block holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalBlock {
    /// The journal superblock: replay starts at `tail` (a log position) with
    /// transaction `tail_tid`.
    Super { tail: u64, tail_tid: u64 },
    /// A descriptor of transaction `tid`: the home blocks of the copies that follow.
    Descriptor { tid: u64, homes: Arc<[u64]> },
    /// The journaled copy of `home` as transaction `tid` committed it.
    Copy { home: u64, tid: u64 },
    /// Blocks freed by `tid`: copies of them in earlier transactions must not be replayed.
    Revoke { tid: u64, blocks: Arc<[u64]> },
    /// Transaction `tid` is complete.
    Commit { tid: u64 },
}

/// What a commit made durable, for the crash-consistency oracle (not device I/O).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitRecord {
    pub tid: u64,
    /// Blocks journaled (metadata; data too under full data journaling), now at version `tid`.
    pub journaled: Arc<[u64]>,
    /// Data blocks written in the transaction and the stamps they held (`ordered`
    /// writes them home before the commit; `writeback` does not); empty when data is
    /// journaled.
    pub ordered: Arc<[(u64, u64)]>,
    /// Blocks freed by the transaction.
    pub freed: Arc<[u64]>,
    /// `vma`: the commit went to the VMM's memory, not to the journal area.
    pub in_vmm: bool,
}

/// One step of a VM's file system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FsIo {
    /// Read blocks through the page cache.
    Read {
        block: u64,
        count: u32,
        kind: IoKind,
    },
    /// Dirty blocks in the page cache (buffered), all holding `version`.
    Write {
        block: u64,
        count: u32,
        kind: IoKind,
        version: u64,
    },
    /// Data written into blocks the running transaction holds (full data journaling):
    /// cached and counted as dirty memory, not writable until [`FsIo::Unpin`].
    Pin { block: u64, count: u32 },
    /// The transaction holding these data blocks committed: dirty in the cache now,
    /// holding `version` (the journal daemon's step: never throttled).
    Unpin {
        block: u64,
        count: u32,
        version: u64,
    },
    /// Write journal-area blocks synchronously (FUA), contiguous from `block`.
    Journal {
        block: u64,
        contents: Vec<JournalBlock>,
    },
    /// Write back, and wait for, whichever of these blocks are dirty in the cache.
    WriteBack { block: u64, count: u32 },
    /// Drop these blocks from the cache unwritten (a deleted file's data).
    Drop { block: u64, count: u32 },
    /// The application computes for `ns` (CPU time).
    Think { ns: u64 },
    /// The journal daemon sleeps until `until` (ns).
    Sleep { until: u64 },
    /// A transaction committed (oracle bookkeeping).
    Committed(CommitRecord),
    /// `vma`: the VMM drops its journal information of transactions up to `tid`.
    VmmRelease { upto: u64 },
    /// The commit (or sync) in progress is over: another may start (bookkeeping).
    CommitEnd,
}
