//! What drives a run's measured phase: block requests, application operations (`oltp`)
//! or the VMs' file systems (`fs:`).

use crate::workload::{AppSource, Workload};

/// What drives the measured phase.
pub(super) enum Source<'s> {
    /// Requests straight to the device interface (or through the host model when
    /// `host.*` enables it).
    Requests(Box<dyn Workload>),
    /// Application operations that need the host model (`oltp`).
    App(Box<dyn AppSource + 's>),
    /// The VMs' file systems (`fs:`), whose report section the run fills in.
    Fs(Box<crate::fs::FsWorkload>),
    /// Several request streams with their own queues (`flows:`), and the seed their
    /// workloads' streams derive from.
    Flows(Vec<crate::workload::flows::FlowSpec>, u64),
}
