//! Workloads: where host requests come from.
//!
//! A workload is written on the command line as `NAME:key=value,key=value`
//! (`uniform:drive_writes=4`, `hotcold:r=0.9,f=0.1`). [`WorkloadSpec::parse`] checks
//! the name and every key; [`WorkloadSpec::build`] turns it into a stream of
//! [`Request`]s for a device of a given logical size. Every generator draws from
//! its own seeded PCG stream, so the same spec and seed give the same requests
//! whatever the GC policy does.
//!
//! The host model runs application operations ([`AppOp`]) from an [`AppSource`]: a
//! request stream seen through [`RequestSource`], or the `oltp` transaction generator
//! ([`OltpWorkload`]).

mod app;
mod catalog;
pub mod flows;
mod footprint;
mod fs_spec;
mod keys;
mod oltp;
mod permutation;
mod spec;
mod synthetic;
mod trace;
mod trace_info;
mod values;
mod writers;

pub use app::{AppOp, AppSource, IoKind, RequestSource};
pub use catalog::{WorkloadInfo, WORKLOADS};
pub use fs_spec::{Bench as FsBench, FsParams, JournalMode, DEFAULT_MEMORY};
pub use keys::WorkloadSpec;
pub use oltp::OltpWorkload;
pub use synthetic::Synthetic;
pub use trace::{LoadedTrace, TraceSpec, TraceWorkload};
pub use trace_info::TraceInfo;
pub use values::ValueModel;

use crate::error::Result;
pub use crate::placement::WriteHint;

/// What a request asks of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Trim,
    /// Make every write acknowledged so far durable (a cache flush): moves no pages
    /// of its own (`lpn` 0, `pages` 0).
    Flush,
    /// A notified trace's host event: the pages went clean → dirty in a host buffer.
    /// Moves no data; it reaches the device only through the notification channel.
    Dirty(crate::trace::HostBuffer),
    /// A notified trace's host event: the pages were cleaned (or dropped) in a host
    /// buffer without being written to the device.
    Clean(crate::trace::HostBuffer),
}

impl Op {
    /// Whether this is a host event (never a device command).
    pub fn is_host_event(self) -> bool {
        matches!(self, Op::Dirty(_) | Op::Clean(_))
    }
}

/// One host request over a run of logical pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub op: Op,
    /// First logical page.
    pub lpn: u64,
    /// Number of consecutive logical pages (at least 1; 0 for a flush).
    pub pages: u32,
    /// When the request arrives (ns from the start), for open-loop replay of traces;
    /// `None` for closed-loop sources.
    pub arrival_ns: Option<u64>,
    /// This run of pages belongs to the same host request as the previous one
    /// (a trace request split by remapping).
    pub continued: bool,
    /// Content fingerprint of every page written (hashed traces and the `values`
    /// workload issue one-page writes); `None` when the content is unknown.
    pub value: Option<u64>,
    /// What the writer says about where the pages go (an NVMe placement identifier, a
    /// stream) and when they die; [`WriteHint::NONE`] for sources that say nothing.
    pub hint: WriteHint,
}

/// A source of host requests.
pub trait Workload: Send {
    /// The next request, `Ok(None)` when the workload is done.
    fn next_request(&mut self) -> Result<Option<Request>>;
    /// Fraction of the workload done so far, when its length is known.
    fn progress(&self) -> Option<f64>;
    /// Host page writes the whole workload will issue, when known in advance.
    fn expected_write_pages(&self) -> Option<u64>;
    /// For trace replays: what the replay read, skipped and remapped.
    fn trace_info(&self) -> Option<TraceInfo> {
        None
    }
    /// An endless stream of this workload's own writes for preconditioning
    /// (`precondition.pattern = "workload"`), when it can give one.
    fn own_writes(&self) -> Result<Option<Box<dyn Workload>>> {
        Ok(None)
    }
    /// Whether the source is a notified trace: its requests include host events
    /// ([`Op::Dirty`], [`Op::Clean`]) that the replay hands to the recorded host.
    fn is_notified(&self) -> bool {
        false
    }
    /// Whether the source's writes carry placement hints ([`Request::hint`]), so that
    /// a configuration that would drop them (a host cache above the device) is refused.
    fn places(&self) -> bool {
        false
    }
}
