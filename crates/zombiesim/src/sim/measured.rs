//! How a run's measured phase ran: through the device-level loop (`sim::measure`) or
//! the host model, and what each leaves for the report.

use crate::host::{self, HostWriteBuffer};
use crate::interface::HostInterface;

/// How the measured phase ran.
pub(super) enum Measured {
    /// The device-level loop: its interface, the host write buffer, the notify
    /// report of a notified trace's recorded host, and its power losses.
    Device(
        Box<HostInterface>,
        Option<Box<HostWriteBuffer>>,
        Option<crate::report::NotifyReport>,
        crate::report::PowerLossReport,
    ),
    Host(Box<host::HostOutcome>),
}
