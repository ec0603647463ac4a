//! The measured phase's driver, chosen by what drives the run: the VMs' file systems
//! (`fs:`) and application operations run the host model, block requests run it when
//! `host.*` enables it and the device-level loop otherwise, which is also where
//! `gc.policy = "oracle"` reads the future of the phase.

use super::measure::measure_device;
use super::measured::Measured;
use super::oracle::{FutureList, FutureNotifier};
use super::recorder::{HostObserver, Recorder};
use super::source::Source;
use crate::config::Config;
use crate::device::Device;
use crate::error::Result;
use crate::flash::Geometry;
use crate::fs::FsReport;
use crate::host::HostSim;
use crate::report::OracleReport;
use crate::workload::{AppSource, RequestSource, TraceInfo};

/// What the measured phase's driver leaves for the report.
pub(super) struct MeasuredPhase {
    /// How it ran, with the sections its driver fills in.
    pub(super) measured: Measured,
    /// The trace it replayed.
    pub(super) trace: Option<TraceInfo>,
    /// The fraction of its source done.
    pub(super) fraction: Option<f64>,
    /// The file systems' section (`fs:`).
    pub(super) fs: Option<FsReport>,
    /// The oracle's section (`gc.policy = "oracle"`).
    pub(super) oracle: Option<OracleReport>,
    /// The flows' section (`flows:`).
    pub(super) flows: Option<crate::report::FlowsReport>,
}

/// Run the measured phase of `source` on `device`, recording into `rec` (`future`:
/// what `gc.policy = "oracle"` knows of it).
pub(super) fn run_measured_phase(
    cfg: &Config,
    geo: &Geometry,
    device: &mut Device,
    source: Source,
    future: Option<FutureList>,
    rec: &mut Recorder,
) -> Result<MeasuredPhase> {
    let host_model = cfg.host.enabled() || matches!(source, Source::App(_) | Source::Fs(_));
    let mut notifier = match future {
        Some(f) => {
            let marks = cfg.gc.policy == crate::config::PolicySpec::Oracle;
            let lifetimes = cfg.ftl.placement.reads_future();
            let n = FutureNotifier::new(f, cfg.gc_horizon(geo)?, marks, lifetimes);
            n.tell_lifetimes(device)?;
            Some(n)
        }
        None => None,
    };
    let mut fs_report = None;
    let mut flows_report = None;
    let (measured, trace, fraction) = if let Source::Flows(specs, seed) = source {
        let (outcome, report) = super::flows::measure_flows(cfg, device, &specs, seed, rec)?;
        flows_report = Some(report);
        (Measured::Flows(Box::new(outcome)), None, None)
    } else if let Source::Fs(mut fs) = source {
        let mut observer = HostObserver {
            recorder: rec,
            fraction: None,
        };
        let mut outcome = HostSim::new(cfg, device).run(fs.as_mut(), &mut observer)?;
        fs_report = Some(fs.report(outcome.traffic.take().unwrap_or_default()));
        (Measured::Host(Box::new(outcome)), None, fs.progress())
    } else if host_model {
        let mut app: Box<dyn AppSource> = match source {
            Source::Requests(w) => Box::new(RequestSource::new(w)),
            Source::App(a) => a,
            Source::Fs(_) | Source::Flows(..) => unreachable!("taken above"),
        };
        let mut observer = HostObserver {
            recorder: rec,
            fraction: None,
        };
        let outcome = HostSim::new(cfg, device).run(app.as_mut(), &mut observer)?;
        let fraction = app.progress();
        (
            Measured::Host(Box::new(outcome)),
            app.trace_info(),
            fraction,
        )
    } else {
        let Source::Requests(mut workload) = source else {
            unreachable!("application sources run the host model")
        };
        let outcome = measure_device(
            cfg,
            device,
            workload.as_mut(),
            rec,
            notifier.as_mut(), // gc.policy = "oracle"
        )?;
        let fraction = workload.progress();
        (outcome, workload.trace_info(), fraction)
    };
    let interrupted = rec.ticker.stopped;
    let oracle = notifier.map(|o| o.finish(!interrupted)).transpose()?;
    Ok(MeasuredPhase {
        measured,
        trace,
        fraction,
        fs: fs_report,
        oracle,
        flows: flows_report,
    })
}
