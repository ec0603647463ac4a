//! What the host's threads do: application operations, from a workload or a generator.

use super::{Op, TraceInfo, Workload};
use crate::error::Result;

/// What a page holds, for the traffic a file system reports by kind (002 Figs. 2–3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum IoKind {
    /// File contents (and anything that is not a file system's own structure).
    #[default]
    Data = 0,
    /// File-system structure at its home location: bitmaps, inodes, directories,
    /// indirect blocks, group descriptors.
    Metadata = 1,
    /// The journal region: descriptor, journaled copies, commit and journal superblock.
    Journal = 2,
}

impl IoKind {
    pub const COUNT: usize = 3;
    pub const ALL: [IoKind; 3] = [IoKind::Data, IoKind::Metadata, IoKind::Journal];

    /// The kind stored as `u8` (a per-page table).
    pub fn from_u8(v: u8) -> IoKind {
        match v {
            1 => IoKind::Metadata,
            2 => IoKind::Journal,
            _ => IoKind::Data,
        }
    }
}

/// One application operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppOp {
    /// Read pages (through the buffer cache).
    Read { lpn: u64, pages: u32, kind: IoKind },
    /// Write whole pages (buffered in the cache), each holding `value` when known,
    /// with the writer's placement identifier `id` (`host.placement = "writer"`).
    Write {
        lpn: u64,
        pages: u32,
        value: Option<u64>,
        kind: IoKind,
        id: Option<u16>,
    },
    /// Discard pages (a dirty copy is dropped; the device is trimmed).
    Trim { lpn: u64, pages: u32 },
    /// Write pages directly and synchronously, bypassing the cache (a redo log, a
    /// journal).
    SyncWrite { lpn: u64, pages: u32, kind: IoKind },
    /// Write back now, and wait for, whichever of these pages are dirty in the cache
    /// (ordered-mode data before a commit, a journal checkpoint).
    WriteBack { lpn: u64, pages: u32 },
    /// Drop these pages from the cache unwritten, without telling the device (the
    /// pages of a deleted file on a file system that does not discard).
    Drop { lpn: u64, pages: u32 },
    /// Data written into pages a transaction holds (full data journaling): cached and
    /// counted as dirty memory, written nowhere until [`AppOp::Unpin`].
    Pin { lpn: u64, pages: u32 },
    /// The transaction holding these pages committed: they are dirty now (a journal
    /// daemon's step: never throttled).
    Unpin { lpn: u64, pages: u32 },
    /// The thread computes (CPU time) until this time (ns).
    Idle { until: u64 },
    /// A daemon thread sleeps until this time (ns); its wake-up does not count as the
    /// application's work (the run's elapsed time ignores it).
    Sleep { until: u64 },
    /// A transaction committed (counted for TPS).
    Commit,
    /// A cache flush reaches the device (a trace's flush record).
    Flush,
}

/// A source of application operations for the host's threads.
pub trait AppSource: Send {
    /// The next operation of `thread`, which is ready at simulated time `now` (ns);
    /// `None` once the thread is done.
    fn next_op(&mut self, thread: usize, now: u64) -> Result<Option<(AppOp, Option<u64>)>>;
    /// Fraction done, when known.
    fn progress(&self) -> Option<f64>;
    /// The closed-loop threads this source runs (`None`: `host.threads` decides).
    fn threads(&self) -> Option<u32> {
        None
    }
    /// Whether the pages it writes carry an [`IoKind`] worth counting apart.
    fn counts_kinds(&self) -> bool {
        false
    }

    /// What a trace replay read, skipped and remapped.
    fn trace_info(&self) -> Option<TraceInfo> {
        None
    }
}

/// A request stream (synthetic or trace) as application operations, shared by all
/// threads in request order; the second element is the request's arrival time, if any.
pub struct RequestSource {
    workload: Box<dyn Workload>,
}

impl RequestSource {
    pub fn new(workload: Box<dyn Workload>) -> Self {
        RequestSource { workload }
    }
}

impl AppSource for RequestSource {
    fn next_op(&mut self, _thread: usize, _now: u64) -> Result<Option<(AppOp, Option<u64>)>> {
        let Some(r) = self.workload.next_request()? else {
            return Ok(None);
        };
        let (lpn, pages) = (r.lpn, r.pages);
        let op = match r.op {
            Op::Read => AppOp::Read {
                lpn,
                pages,
                kind: IoKind::Data,
            },
            Op::Write => AppOp::Write {
                lpn,
                pages,
                value: r.value,
                kind: IoKind::Data,
                id: r.hint.stream,
            },
            Op::Trim => AppOp::Trim { lpn, pages },
            Op::Flush => AppOp::Flush,
            Op::Dirty(_) | Op::Clean(_) => {
                return Err(crate::Error::integrity(
                    "a notified trace's host events reached the host model; such traces replay below it",
                ))
            }
        };
        Ok(Some((op, r.arrival_ns)))
    }

    fn progress(&self) -> Option<f64> {
        self.workload.progress()
    }

    fn trace_info(&self) -> Option<TraceInfo> {
        self.workload.trace_info()
    }
}
