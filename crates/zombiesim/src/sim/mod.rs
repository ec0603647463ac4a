//! Running one simulation: preconditioning, the measured phase, the report.
//!
//! ```text
//!  fill (every logical page once, in order)
//!    └─► random writes, in quarter-drive-write windows, until WA settles
//!          or `precondition.random_drive_writes` is spent      ── reported as `precondition`
//!  snapshot counters
//!    └─► the workload's requests, a series point every N host page writes
//!                                                              ── reported at the top level
//! ```
//!
//! Randomness comes from independent seeded streams (workload, preconditioning,
//! GC), so two runs that differ only in GC policy see the same requests. The
//! progress callback is called at most every ~100 ms; returning `false` stops the
//! run, which still returns a report, marked `run.interrupted`.

use crate::config::{available_memory, Config, MemoryEstimate, TracePlacement};
use crate::device::Device;
use crate::error::Result;
use crate::flash::Geometry;
use crate::ftl::FtlExt;
use crate::host::HostSim;
use crate::report::{Report, RunParts};
use crate::workload::{
    AppSource, RequestSource, Synthetic, TraceSpec, TraceWorkload, WorkloadSpec,
};
use std::time::Instant;

mod measure;
mod measured;
mod options;
mod oracle;
mod precondition;
mod progress;
mod recorder;
mod seeds;
mod source;

pub use options::RunOptions;
pub use progress::{Phase, Progress};
pub use seeds::stream_seed;

use measure::measure_device;
use measured::Measured;
use precondition::{own_writes, precondition};
use progress::Ticker;
use recorder::{HostObserver, Recorder};
use seeds::{STREAM_GC, STREAM_PRECONDITION, STREAM_WORKLOAD};
use source::Source;

/// Refuse, before allocating, a run whose state would not fit (see
/// [`MemoryEstimate`]).
fn check_memory(cfg: &Config, opts: &RunOptions) -> Result<()> {
    let estimate = MemoryEstimate::new(cfg, opts.verify)?;
    match opts.max_memory {
        Some(limit) => estimate.check(limit, "the limit given by --max-memory"),
        None => match available_memory() {
            Some(free) => estimate.check(free, "the memory available on this machine"),
            None => Ok(()),
        },
    }
}

/// Run one simulation of the synthetic workload `spec` on the device `cfg` describes.
pub fn simulate(
    cfg: &Config,
    spec: &WorkloadSpec,
    opts: &RunOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Report> {
    cfg.validate()?;
    check_memory(cfg, opts)?;
    let geo = Geometry::new(cfg)?;
    if let Some(members) = oracle::envelope(cfg, &geo, false)? {
        return oracle::best_of(cfg, members, |c| simulate(c, spec, opts, progress));
    }
    let seed = stream_seed(opts.seed, STREAM_WORKLOAD);
    if let Some((fs, cfg)) =
        crate::fs::FsWorkload::build(spec, cfg, geo.logical_pages, geo.page_size, seed)?
    {
        return run(
            &cfg,
            &geo,
            Source::Fs(Box::new(fs)),
            None,
            None,
            spec.as_str(),
            opts,
            &mut Ticker::new(progress),
        );
    }
    if let Some(oltp) = spec.build_oltp(cfg, geo.logical_pages, seed)? {
        return run(
            cfg,
            &geo,
            Source::App(Box::new(oltp)),
            None,
            None,
            spec.as_str(),
            opts,
            &mut Ticker::new(progress),
        );
    }
    let workload = spec.build(geo.logical_pages, geo.page_size, seed)?;
    let source = workload.clone();
    // gc.policy = "oracle": the measured phase's future, read from a second copy.
    let mut ticker = Ticker::new(progress);
    let future = oracle::prepare(cfg, &geo, opts, || Ok(source.clone()), &mut ticker)?;
    run(
        cfg,
        &geo,
        Source::Requests(Box::new(workload)),
        Some(&source),
        future,
        spec.as_str(),
        opts,
        &mut ticker,
    )
}

/// Replay a block trace on the device `cfg` describes.
pub fn simulate_trace(
    cfg: &Config,
    trace: &TraceSpec,
    opts: &RunOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Report> {
    cfg.validate()?;
    check_memory(cfg, opts)?;
    let geo = Geometry::new(cfg)?;
    let workload = TraceWorkload::open(trace, geo.logical_pages, geo.page_size)?;
    if let Some(members) = oracle::envelope(cfg, &geo, workload.is_notified())? {
        return oracle::best_of(cfg, members, |c| simulate_trace(c, trace, opts, progress));
    }
    if workload.is_notified() {
        check_notified(cfg, &workload, geo.page_size)?;
    }
    // A trace placed below the cache is what reached the device: no host model. A
    // notified trace is always below it: its own host events replace the model.
    let below;
    let cfg = if (cfg.host.trace == TracePlacement::Below || workload.is_notified())
        && cfg.host.enabled()
    {
        let mut c = cfg.clone();
        c.host.cache = crate::units::ByteSize(0);
        c.host.threads = 0;
        below = c;
        &below
    } else {
        cfg
    };
    // gc.policy = "oracle": the measured phase's future, read from the trace again (a
    // notified trace's host events are not in it: the oracle's marks replace them).
    let mut ticker = Ticker::new(progress);
    let future = oracle::prepare(
        cfg,
        &geo,
        opts,
        || TraceWorkload::open(trace, geo.logical_pages, geo.page_size),
        &mut ticker,
    )?;
    run(
        cfg,
        &geo,
        Source::Requests(Box::new(workload)),
        None,
        future,
        &trace.label(),
        opts,
        &mut ticker,
    )
}

/// What a notified trace cannot be replayed with, refused before anything runs.
fn check_notified(cfg: &Config, workload: &TraceWorkload, page_size: u64) -> Result<()> {
    if cfg.host.buffer.bytes() > 0 {
        return Err(crate::Error::config(
            "host.buffer",
            "a notified trace records its host's own buffers and what reached the device; a \
             host write buffer above the device would buffer it twice (set host.buffer = 0)",
        ));
    }
    if workload.has_values() && page_size != 4096 && cfg.content.enabled() {
        return Err(crate::Error::config(
            "flash.page_size",
            format!(
                "{page_size}: the trace carries one content hash per 4 KiB and the content \
                 layer needs them per page; use 4KiB pages"
            ),
        ));
    }
    Ok(())
}

/// Precondition, then run `workload` on a device already validated as `geo` (`future`:
/// what `gc.policy = "oracle"` knows of the measured phase).
#[allow(clippy::too_many_arguments)]
fn run(
    cfg: &Config,
    geo: &Geometry,
    source: Source,
    synthetic: Option<&Synthetic>,
    future: Option<oracle::FutureList>,
    label: &str,
    opts: &RunOptions,
    ticker: &mut Ticker,
) -> Result<Report> {
    let started = Instant::now();
    if !matches!(source, Source::Requests(_)) {
        oracle::refuse_app(cfg)?;
    }
    if cfg.gc.skip_shadows && !cfg.device.buffer_nonvolatile && !opts.force_unsafe {
        return Err(crate::Error::config(
            "gc.skip_shadows",
            "drops flash copies whose newer copy is only in the device buffer; with a \
             volatile buffer (device.buffer_nonvolatile = false) a power loss then loses \
             data: set device.buffer_nonvolatile = true (or give --force-unsafe, force_unsafe=True in Python, to see the loss)",
        ));
    }
    let mut device = Device::new(cfg, stream_seed(opts.seed, STREAM_GC), opts.verify)?;
    let logical = device.logical_pages();

    device.set_timing(false);
    let own = own_writes(
        cfg,
        &source,
        synthetic,
        stream_seed(opts.seed, STREAM_PRECONDITION),
    )?;
    let steady = precondition(cfg, &mut device, own, opts, ticker)?;
    let pre = device.counters();
    let pre_content = device.ftl().content_stats().map(|(c, _)| c);
    let timed = cfg.timing.enabled;
    device.set_timing(timed);
    if opts.verify {
        device.verify()?;
    }

    let measure_start = Instant::now();
    let expected = match &source {
        Source::Requests(w) => w.expected_write_pages(),
        Source::App(_) | Source::Fs(_) => None,
    };
    let series_every = match (cfg.stats.series_every, cfg.stats.series_points) {
        (n, _) if n > 0 => n,
        (_, 0) => 0,
        // Unknown length (a trace): a point every quarter drive-write.
        (_, pts) => expected.map_or((logical / 4).max(1), |w| (w / pts as u64).max(1)),
    };
    let mut rec = Recorder {
        pre,
        logical,
        series_every,
        series: Vec::new(),
        last_point: pre,
        next_point: series_every,
        verify: opts.verify,
        next_verify: logical,
        held_sum: 0.0,
        held_samples: 0,
        filled: cfg.precondition.fill || device.ftl().valid_pages() >= logical,
        filled_held_sum: 0.0,
        filled_samples: 0,
        held_every: (geo.pages_per_block as u64 * 4).max(64),
        next_held: 0,
        iter: 0,
        ticker,
    };
    rec.ticker.force(Progress {
        phase: Phase::Measure,
        fraction: Some(0.0),
        write_pages: 0,
    });
    let host_model = cfg.host.enabled() || !matches!(source, Source::Requests(_));
    let mut notifier = match future {
        Some(f) => Some(oracle::FutureNotifier::new(f, oracle::horizon(cfg, geo)?)),
        None => None,
    };
    let mut fs_report = None;
    let (measured_phase, trace_info, fraction) = if let Source::Fs(mut fs) = source {
        let mut observer = HostObserver {
            recorder: &mut rec,
            fraction: None,
        };
        let mut outcome = HostSim::new(cfg, &mut device).run(fs.as_mut(), &mut observer)?;
        fs_report = Some(fs.report(outcome.traffic.take().unwrap_or_default()));
        (Measured::Host(Box::new(outcome)), None, fs.progress())
    } else if host_model {
        let mut app: Box<dyn AppSource> = match source {
            Source::Requests(w) => Box::new(RequestSource::new(w)),
            Source::App(a) => a,
            Source::Fs(_) => unreachable!("taken above"),
        };
        let mut observer = HostObserver {
            recorder: &mut rec,
            fraction: None,
        };
        let outcome = HostSim::new(cfg, &mut device).run(app.as_mut(), &mut observer)?;
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
            &mut device,
            workload.as_mut(),
            &mut rec,
            notifier.as_mut(), // gc.policy = "oracle"
        )?;
        let fraction = workload.progress();
        (outcome, workload.trace_info(), fraction)
    };
    let interrupted = rec.ticker.stopped;
    let oracle = notifier.map(|o| o.finish(!interrupted)).transpose()?;
    let measured_wall = measure_start.elapsed().as_secs_f64();
    if opts.verify {
        device.verify()?;
    }
    let total = device.counters();
    let ftl = device.ftl();
    let measured = total.since(&pre);
    if !interrupted && measured.host_requests == 0 {
        return Err(nothing_to_simulate(label, trace_info.as_ref()));
    }
    if !interrupted {
        rec.ticker.force(Progress {
            phase: Phase::Measure,
            fraction: Some(1.0),
            write_pages: measured.host_write_pages,
        });
    }
    let driver = measured_phase.sections(timed);
    let timing = ftl.timing_summary(driver.elapsed_ns);
    Report::assemble(RunParts {
        cfg,
        geo,
        label,
        seed: opts.seed,
        verify: opts.verify,
        reproducible: opts.reproducible,
        logical,
        pre,
        pre_content,
        steady,
        measured,
        interrupted,
        fraction,
        wall_s: started.elapsed().as_secs_f64(),
        measured_wall_s: measured_wall,
        held_back_pages_mean: rec.held_mean(ftl),
        effective_over_provisioning: rec.effective_over_provisioning(ftl, geo.physical_pages),
        series: std::mem::take(&mut rec.series),
        driver,
        timing,
        wear: ftl.wear(),
        content: ftl.content_stats(),
        state_bytes: device.memory_bytes() as u64,
        buffer: device.buffer_report(),
        restarts: device.restarts(),
        // Checked after every power loss: a loss would have stopped the run.
        durable_pages_lost: opts
            .verify
            .then(|| ftl.oracle().map_or(0, |o| o.lost_pages() as u64)),
        trace: trace_info,
        fs: fs_report,
        oracle,
    })
}

/// The error for a measured phase that issued no request: what was read, and why
/// nothing of it reached the device.
fn nothing_to_simulate(label: &str, trace: Option<&crate::workload::TraceInfo>) -> crate::Error {
    let reason = match trace {
        Some(t) if t.records == 0 && t.skipped_lines > 0 => format!(
            "no request to simulate: every one of its {} lines was malformed and skipped",
            t.skipped_lines
        ),
        Some(t) if t.limit == Some(0) => "no request to simulate: a limit of 0 records \
             replays nothing (give --limit 1 or more)"
            .to_string(),
        Some(t) if t.records == 0 => match t.device {
            Some(d) => format!(
                "no request to simulate: no record of the trace is on device {d} \
                 (--trace-device); `zombiesim trace stats` lists what the trace holds"
            ),
            None => "no request to simulate: the trace holds no record".to_string(),
        },
        Some(t) => format!(
            "no request to simulate: its {} records are all flushes, which move no data",
            t.records
        ),
        None => "no request to simulate: the workload issued nothing (a length of 0?)".into(),
    };
    crate::Error::workload(label, reason)
}
