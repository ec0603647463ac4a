//! What a run is asked to do besides simulating the configured device: its seed,
//! verification, reproducible reports, the memory bound, whether to run a
//! configuration refused as unsafe, whether a text trace is parsed on a thread of
//! its own, the trace cache, the cache of preconditioned devices, and the policies
//! decided outside the simulator.

use super::PreconditionCache;
use crate::ftl::ExternalPolicies;
use crate::trace::TraceCache;
use std::sync::Arc;

/// Options of one run that are not part of the device's configuration.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub seed: u64,
    /// Keep the integrity oracle and check invariants every drive-write and at the end.
    pub verify: bool,
    /// Leave wall-clock times out of the report (byte-identical reports).
    pub reproducible: bool,
    /// Refuse a run whose estimated state exceeds this many bytes (`None`: the memory
    /// the operating system says is available, where it can tell).
    pub max_memory: Option<u64>,
    /// Run a configuration that is refused as unsafe (the skip policy with a volatile
    /// buffer), so that its data loss can be shown.
    pub force_unsafe: bool,
    /// Parse a text trace (decompress a compressed native one) on the simulation's
    /// thread rather than on a reader thread of its own ([`crate::trace::ReadAhead`]):
    /// for a worker of a pool that already runs one simulation per core, where a second
    /// thread costs more than it saves. Changes no result.
    pub inline_trace: bool,
    /// Replay a text trace from this cache of parsed traces when it holds it, and
    /// write it there when it does not ([`crate::trace::TraceCache`]; `None`: parse
    /// every time). Changes no result.
    pub trace_cache: Option<TraceCache>,
    /// Start from a copy of a device this cache holds when one was preconditioned
    /// under the same configuration and seed, and keep a copy of a device aged here
    /// ([`PreconditionCache`]; `None`: precondition every run). Changes no result.
    pub precondition_cache: Option<Arc<PreconditionCache>>,
    /// Policies decided outside the simulator (the Python binding's `victim=` and
    /// `placement=`): every GC unit asks `victim` instead of `gc.policy`'s, and
    /// `ftl.placement = "python:K"` asks `placer`. The run then ages its own device
    /// (no precondition cache).
    pub external: ExternalPolicies,
}
