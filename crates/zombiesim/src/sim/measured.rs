//! How a run's measured phase ran: through the device-level loop (`sim::measure`) or
//! the host model, and the report sections each fills in.

use crate::host::{self, HostWriteBuffer};
use crate::interface::HostInterface;
use crate::report::MeasuredSections;

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
    /// A `flows:` workload's loop (`sim::flows`).
    Flows(Box<super::flows::FlowsOutcome>),
}

impl Measured {
    /// The report sections the measured phase's driver fills in (`timed`: the timing
    /// model was on).
    pub(super) fn sections(self, timed: bool) -> MeasuredSections {
        let mut host_buffer = None;
        let mut power_loss = None;
        let (elapsed_ns, latency, throughput, app, cache, notify, quarters) = match self {
            Measured::Device(iface, hb, recorded, losses) => {
                let notify = hb.as_ref().map(|h| h.notify_report()).or(recorded);
                host_buffer = hb.map(|h| h.report());
                power_loss = Some(losses);
                (
                    iface.elapsed(),
                    timed.then(|| iface.latency()),
                    timed.then(|| iface.throughput()),
                    None,
                    None,
                    notify,
                    iface.write_quarters_us(),
                )
            }
            Measured::Host(o) => (
                o.elapsed_ns,
                Some(o.device_latency),
                Some(o.device_throughput),
                Some(o.app),
                Some(o.cache),
                Some(o.notify),
                o.device_write_quarters_us,
            ),
            Measured::Flows(f) => (
                f.elapsed_ns,
                timed.then(|| f.latency.report()),
                timed.then(|| f.latency.throughput(f.elapsed_ns)),
                None,
                None,
                None,
                f.latency.write_quarters_us(),
            ),
        };
        MeasuredSections {
            elapsed_ns,
            latency,
            throughput,
            app,
            cache,
            notify,
            host_buffer,
            power_loss,
            write_latency_quarters_us: quarters.filter(|_| timed),
        }
    }
}
