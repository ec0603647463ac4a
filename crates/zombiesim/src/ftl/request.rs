//! What the device sends an FTL: page writes with their hints, and events.

use crate::placement::WriteHint;
use crate::stats::Cause;

/// The fingerprint that stands for "content unknown", the one sentinel of every layer:
/// a command's per-page list (the device's `Payload::PerPage`), a write buffer's
/// slots, the content layer's pages.
pub const NO_VALUE: u64 = u64::MAX;

/// One page write on its way to an FTL: which page, what it holds, why it is
/// written, and what the writer says about where it should go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageWrite {
    pub lpn: u64,
    /// The page's content fingerprint, when known: the content layer uses it when
    /// on; the integrity oracle checks reads by it.
    pub value: Option<u64>,
    /// `Host` (counted as a host page) or `Buffer` (a page the device's write buffer
    /// evicts or flushes; the host page was counted when it entered the buffer).
    pub cause: Cause,
    /// The writer's placement and lifetime hints ([`WriteHint`]).
    pub hint: WriteHint,
}

impl PageWrite {
    /// A write of `lpn` holding `value` for `cause`, with no hint.
    pub fn new(lpn: u64, value: Option<u64>, cause: Cause) -> Self {
        PageWrite {
            lpn,
            value,
            cause,
            hint: WriteHint::NONE,
        }
    }

    /// A write of `lpn` for the host with no content and no hint.
    pub fn host(lpn: u64) -> Self {
        Self::new(lpn, None, Cause::Host)
    }
}

/// Something the device tells an FTL besides a page operation.
#[derive(Clone, Copy, Debug)]
pub enum DeviceEvent<'a> {
    /// Turn the timing model on or off (off while preconditioning). Turning it on
    /// clears all reservations: the measured phase starts at time 0.
    Timing(bool),
    /// The device is idle from `from` until `until` (ns): background GC may work.
    Idle { from: u64, until: u64 },
    /// The device's clock reached `now` (ns): blocks whose retention deadline has
    /// passed are refreshed (`ftl.fast_retention_s`, `ftl.retention_s`).
    Tick { now: u64 },
    /// The device restarts after a power-off (power loss, or a clean restart at
    /// `now`): every shadow page is live again, every fast-written block holding
    /// valid pages is refreshed, and `lost` (ascending) names the logical pages
    /// whose buffered copy the power-off destroyed.
    Restart { now: u64, lost: &'a [u64] },
    /// The host says `lpn` has (`marked`) a dirty newer copy above the device, or
    /// that it lost that copy and the flash copy is live again.
    HostShadow { lpn: u64, marked: bool },
    /// The run's future says `lpn`'s current version dies `left` host page writes from
    /// now (`None`: never): told to a placement that reads the future
    /// (`ftl.placement = "oracle:K"`), at the start of the measured phase.
    Lifetime { lpn: u64, left: Option<u64> },
}
