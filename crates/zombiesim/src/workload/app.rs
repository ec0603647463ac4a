//! What the host's threads do: application operations, from a workload or a generator.

use super::{Op, TraceInfo, Workload};
use crate::error::Result;

/// One application operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppOp {
    /// Read pages (through the buffer cache).
    Read { lpn: u64, pages: u32 },
    /// Write whole pages (buffered in the cache), each holding `value` when known.
    Write {
        lpn: u64,
        pages: u32,
        value: Option<u64>,
    },
    /// Discard pages (a dirty copy is dropped; the device is trimmed).
    Trim { lpn: u64, pages: u32 },
    /// Write pages directly and synchronously, bypassing the cache (a redo log).
    SyncWrite { lpn: u64, pages: u32 },
    /// A transaction committed (counted for TPS).
    Commit,
    /// A cache flush reaches the device (a trace's flush record).
    Flush,
}

/// A source of application operations for the host's threads.
pub trait AppSource: Send {
    /// The next operation of `thread`; `None` once the workload is done.
    fn next_op(&mut self, thread: usize) -> Result<Option<(AppOp, Option<u64>)>>;
    /// Fraction done, when known.
    fn progress(&self) -> Option<f64>;
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
    fn next_op(&mut self, _thread: usize) -> Result<Option<(AppOp, Option<u64>)>> {
        let Some(r) = self.workload.next_request()? else {
            return Ok(None);
        };
        let (lpn, pages) = (r.lpn, r.pages);
        let op = match r.op {
            Op::Read => AppOp::Read { lpn, pages },
            Op::Write => AppOp::Write {
                lpn,
                pages,
                value: r.value,
            },
            Op::Trim => AppOp::Trim { lpn, pages },
            Op::Flush => AppOp::Flush,
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
