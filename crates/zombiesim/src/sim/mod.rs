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
//! A run given a [`PreconditionCache`] (`RunOptions::precondition_cache`) starts from a
//! copy of a device aged under the same device settings and seed when the cache holds
//! one, and leaves a copy of the device it aged there (`sim::warm`): same report, less time.
//!
//! Randomness comes from independent seeded streams (workload, preconditioning,
//! GC), so two runs that differ only in GC policy see the same requests. The
//! progress callback is called at most every ~100 ms; returning `false` stops the
//! run, which still returns a report, marked `run.interrupted`.

use crate::config::{available_memory, Config, HostPlacement, MemoryEstimate, TracePlacement};
use crate::content::ContentCounters;
use crate::device::Device;
use crate::error::Result;
use crate::flash::Geometry;
use crate::ftl::FtlExt;
use crate::report::{EndState, Report, RunParts};
use crate::stats::Counters;
use crate::workload::{LoadedTrace, Synthetic, TraceSpec, TraceWorkload, WorkloadSpec};
use oracle::FutureShare;
use std::time::Instant;

mod dispatch;
mod flows;
mod measure;
mod measured;
mod options;
mod oracle;
mod precondition;
mod progress;
mod recorder;
mod seeds;
mod source;
mod warm;

pub use options::RunOptions;
pub use progress::{Phase, Progress};
pub use seeds::stream_seed;
pub use warm::{PreconditionCache, PreconditionCacheStats};

use dispatch::{run_measured_phase, MeasuredPhase};
use precondition::{own_writes, precondition};
use progress::Ticker;
use recorder::{series_every, Recorder};
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
    simulate_sharing(cfg, spec, opts, progress, &mut FutureShare::default())
}

/// [`simulate`], with the future `share` holds (an envelope member's).
fn simulate_sharing(
    cfg: &Config,
    spec: &WorkloadSpec,
    opts: &RunOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
    share: &mut FutureShare,
) -> Result<Report> {
    cfg.validate()?;
    check_memory(cfg, opts)?;
    let geo = Geometry::new(cfg)?;
    let seed = stream_seed(opts.seed, STREAM_WORKLOAD);
    if let Some(specs) = spec.flows()? {
        flows::refuse(cfg)?;
        return run(
            cfg,
            &geo,
            Source::Flows(specs, seed),
            None,
            None,
            spec.as_str(),
            opts,
            &mut Ticker::new(progress),
        );
    }
    if let Some(members) = oracle::envelope(cfg, &geo, false)? {
        let mut share = FutureShare::default();
        return oracle::best_of(cfg, members, |c| {
            simulate_sharing(c, spec, opts, progress, &mut share)
        });
    }
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
    let future = oracle::prepare(cfg, &geo, opts, || Ok(source.clone()), &mut ticker, share)?;
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
    simulate_trace_sharing(
        cfg,
        trace,
        opts,
        progress,
        &mut FutureShare::default(),
        None,
    )
}

/// The most a trace held in memory for the oracle's envelope may take: an eighth of the
/// run's memory limit (or of the memory available), at most 1 GiB.
fn loaded_trace_budget(opts: &RunOptions) -> u64 {
    const MAX: u64 = 1 << 30;
    opts.max_memory
        .or_else(available_memory)
        .map_or(MAX, |m| (m / 8).min(MAX))
}

/// [`simulate_trace`], with the future `share` holds and the trace `loaded` holds in
/// memory (an envelope member's).
fn simulate_trace_sharing(
    cfg: &Config,
    trace: &TraceSpec,
    opts: &RunOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
    share: &mut FutureShare,
    loaded: Option<&LoadedTrace>,
) -> Result<Report> {
    cfg.validate()?;
    check_memory(cfg, opts)?;
    let geo = Geometry::new(cfg)?;
    // Without FDP the trace's identifiers are carried unused, and unchecked.
    let placement_ids = cfg.fdp.placement_ids();
    let read_ahead = !opts.inline_trace;
    let open = || match loaded {
        Some(l) => TraceWorkload::loaded(trace, l, geo.logical_pages, geo.page_size, placement_ids),
        None => TraceWorkload::open(
            trace,
            geo.logical_pages,
            geo.page_size,
            placement_ids,
            read_ahead,
            opts.trace_cache.as_ref(),
        ),
    };
    let workload = open()?;
    if let Some(members) = oracle::envelope(cfg, &geo, workload.is_notified())? {
        // Every member replays the trace: it is decoded once, when it fits in memory.
        let loaded = LoadedTrace::read(
            trace,
            geo.page_size,
            opts.trace_cache.as_ref(),
            loaded_trace_budget(opts),
        )?;
        let mut share = FutureShare::default();
        return oracle::best_of(cfg, members, |c| {
            simulate_trace_sharing(c, trace, opts, progress, &mut share, loaded.as_ref())
        });
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
    let future = oracle::prepare(cfg, &geo, opts, open, &mut ticker, share)?;
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
    refuse_for_run(cfg, &source, opts)?;
    let (mut device, steady) = preconditioned_device(cfg, &source, synthetic, opts, ticker)?;
    let start = start_measured_phase(cfg, &mut device, opts)?;

    let measure_start = Instant::now();
    let expected = match &source {
        Source::Requests(w) => w.expected_write_pages(),
        Source::App(_) | Source::Fs(_) | Source::Flows(..) => None,
    };
    let series_every = series_every(cfg, expected, device.logical_pages());
    let mut rec = Recorder::start(
        cfg,
        geo,
        &device,
        start.counters,
        series_every,
        opts.verify,
        ticker,
    );
    let phase = run_measured_phase(cfg, geo, &mut device, source, future, &mut rec)?;
    let measured_wall_s = measure_start.elapsed().as_secs_f64();
    let interrupted = rec.ticker.stopped;
    let measured = finish_measured_phase(&mut device, &mut rec, &phase, label, opts)?;

    let driver = phase.measured.sections(cfg.timing.enabled);
    let ftl = device.ftl();
    let mut report = Report::assemble(RunParts {
        cfg,
        geo,
        label,
        seed: opts.seed,
        verify: opts.verify,
        reproducible: opts.reproducible,
        logical: rec.logical,
        pre: start.counters,
        pre_content: start.content,
        pre_fdp: start.fdp,
        pre_streams: start.streams,
        steady,
        measured,
        interrupted,
        fraction: phase.fraction,
        wall_s: started.elapsed().as_secs_f64(),
        measured_wall_s,
        held_back_pages_mean: rec.held_mean(ftl),
        effective_over_provisioning: rec.effective_over_provisioning(ftl, geo.physical_pages),
        series: std::mem::take(&mut rec.series),
        waf_quarters: rec
            .progress
            .quarters(measured.host_write_pages, measured.programs.total()),
        end: EndState::of(&device, driver.elapsed_ns, opts.verify),
        driver,
        trace: phase.trace,
        fs: phase.fs,
        oracle: phase.oracle,
        flows: phase.flows,
    })?;
    report.run.victim_policy = opts.external.victim.as_ref().map(|v| v.name());
    report.run.placement = opts.external.placer.as_ref().map(|p| p.name());
    Ok(report)
}

/// A new device of `cfg`, preconditioned (timing off), and whether its WA settled: a
/// copy of the one in `opts.precondition_cache` when it holds this device aged by this
/// seed; else aged here, and a copy kept there when the budget allows.
fn preconditioned_device(
    cfg: &Config,
    source: &Source,
    synthetic: Option<&Synthetic>,
    opts: &RunOptions,
    ticker: &mut Ticker,
) -> Result<(Device, bool)> {
    let own = own_writes(
        cfg,
        source,
        synthetic,
        stream_seed(opts.seed, STREAM_PRECONDITION),
    )?;
    // A preconditioning that replays the workload's own writes depends on the workload.
    // So does one whose victims are chosen outside (the cache cannot tell choosers apart).
    let cached = (opts.precondition_cache.as_deref())
        .filter(|_| own.is_none() && opts.external.is_empty())
        .map(|cache| (cache, warm::key(cfg, opts.seed, opts.verify)));
    if let Some(hit) = cached.as_ref().and_then(|(cache, key)| cache.get(key)) {
        return Ok(hit);
    }
    let seed = stream_seed(opts.seed, STREAM_GC);
    let mut device = Device::with_policies(cfg, seed, opts.verify, &opts.external)?;
    device.set_timing(false);
    let steady = precondition(cfg, &mut device, own, opts, ticker)?;
    // An interrupted preconditioning is not the device the key names.
    if let Some((cache, key)) = cached.filter(|_| !ticker.stopped) {
        cache.keep(key, cfg, opts.verify, &device, steady);
    }
    Ok((device, steady))
}

/// What a run refuses once its source is known: the oracle under an application
/// source, and skipping shadows over a volatile buffer (unless forced).
fn refuse_for_run(cfg: &Config, source: &Source, opts: &RunOptions) -> Result<()> {
    if matches!(source, Source::App(_) | Source::Fs(_)) {
        oracle::refuse_app(cfg)?;
    }
    let places = matches!(source, Source::Requests(w) if w.places());
    let placement = cfg.host.placement;
    // Placement identifiers of the source reach the device on the direct path, or
    // through the host model when it keeps them (host.placement = writer).
    if places && cfg.host.buffer.bytes() > 0 {
        return Err(crate::Error::config(
            "host.buffer",
            "the source's writes carry placement identifiers, which the host write buffer \
             does not keep: leave it unset (or, for a workload, give hints=false)",
        ));
    }
    if places && cfg.host.enabled() && placement != HostPlacement::Writer {
        return Err(crate::Error::config(
            "host.placement",
            format!(
                "the source's writes carry placement identifiers, which host.placement = {} \
                 does not pass on: set host.placement = \"writer\" (or, for a workload, give \
                 hints=false)",
                placement.name()
            ),
        ));
    }
    if placement == HostPlacement::Writer && !places {
        return Err(crate::Error::config(
            "host.placement",
            "\"writer\" passes on the identifiers of the source's writes, and this source \
             gives none (a native trace of version 3, or kvcache / streams with hints)",
        ));
    }
    let counts_kinds = match source {
        Source::Fs(_) => true,
        Source::App(a) => a.counts_kinds(),
        Source::Requests(_) | Source::Flows(..) => false,
    };
    if placement == HostPlacement::Kind && !counts_kinds {
        return Err(crate::Error::config(
            "host.placement",
            "\"kind\" tells data, metadata and journal apart, which only a file-system \
             workload (fs:...) says",
        ));
    }
    if cfg.gc.skip_shadows && !cfg.device.buffer_nonvolatile && !opts.force_unsafe {
        return Err(crate::Error::config(
            "gc.skip_shadows",
            "drops flash copies whose newer copy is only in the device buffer; with a \
             volatile buffer (device.buffer_nonvolatile = false) a power loss then loses \
             data: set device.buffer_nonvolatile = true (or give --force-unsafe, force_unsafe=True in Python, to see the loss)",
        ));
    }
    Ok(())
}

/// Where the measured phase starts: the counters when preconditioning ended (the
/// content layer's too).
struct PhaseStart {
    counters: Counters,
    content: Option<ContentCounters>,
    fdp: Option<crate::ftl::FdpCounts>,
    streams: Option<Vec<crate::ftl::StreamCounts>>,
}

/// End preconditioning: snapshot the counters, turn the timing model on (when
/// configured), check the device (verified runs).
fn start_measured_phase(
    cfg: &Config,
    device: &mut Device,
    opts: &RunOptions,
) -> Result<PhaseStart> {
    let start = PhaseStart {
        counters: device.counters(),
        content: device.ftl().content_stats().map(|(c, _)| c),
        fdp: device.ftl().fdp_counts(),
        streams: device.ftl().summary().streams,
    };
    device.set_timing(cfg.timing.enabled);
    if opts.verify {
        device.verify()?;
    }
    Ok(start)
}

/// End the measured phase: check the device (verified runs), refuse a phase that
/// issued nothing, tell the progress callback a phase that ran to its end is done.
/// Returns its counters.
fn finish_measured_phase(
    device: &mut Device,
    rec: &mut Recorder,
    phase: &MeasuredPhase,
    label: &str,
    opts: &RunOptions,
) -> Result<Counters> {
    let interrupted = rec.ticker.stopped;
    if opts.verify {
        device.verify()?;
    }
    let measured = device.counters().since(&rec.pre);
    if !interrupted && measured.host_requests == 0 {
        return Err(nothing_to_simulate(label, phase.trace.as_ref()));
    }
    if !interrupted {
        rec.ticker.force(Progress {
            phase: Phase::Measure,
            fraction: Some(1.0),
            write_pages: measured.host_write_pages,
        });
    }
    Ok(measured)
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
