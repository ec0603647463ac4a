//! Putting a run's report together. The simulator hands over what the run left —
//! counters, the end-of-run state of the FTL and the device, what the measured phase's
//! driver (the device-level loop or the host model) and its recorder gathered — as
//! values ([`RunParts`]); [`Report::assemble`] derives the figures the sections show
//! (WAF, drive writes, shares, the content layer's measured-phase counters) and fills
//! in every section. Nothing here reaches into the simulator.

use super::{
    AppReport, CacheReport, DeviceInfo, EndState, FtlReport, NotifyReport, OracleReport,
    PhaseReport, PowerLossReport, RefreshReport, Report, RunInfo,
};
use crate::config::{Config, FtlLayout, Geometry};
use crate::content::{ContentCounters, ContentReport};
use crate::device::BufferReport;
use crate::error::Result;
use crate::fs::FsReport;
use crate::latency::{LatencyReport, Throughput};
use crate::stats::{Cause, Counters, SeriesPoint};
use crate::steady::{QuarterChange, SteadyState};
use crate::workload::TraceInfo;

/// The sections the measured phase's driver fills in: its elapsed time and latencies,
/// the host model's (`app`, `cache`, `notify`), and the device-level loop's host write
/// buffer and power losses.
pub(crate) struct MeasuredSections {
    pub elapsed_ns: u64,
    /// `None` in counting mode.
    pub latency: Option<LatencyReport>,
    pub throughput: Option<Throughput>,
    pub app: Option<AppReport>,
    pub cache: Option<CacheReport>,
    pub notify: Option<NotifyReport>,
    pub host_buffer: Option<BufferReport>,
    /// The device-level loop's power losses (`None` under the host model).
    pub power_loss: Option<PowerLossReport>,
    /// Mean write latency (µs) of the quarter of the writes before the last, and of the
    /// last (timed runs with enough writes).
    pub write_latency_quarters_us: Option<(f64, f64)>,
}

/// A finished run, in the values its report is made of.
pub(crate) struct RunParts<'a> {
    pub cfg: &'a Config,
    pub geo: &'a Geometry,
    /// The workload as the run names it (`run.workload`).
    pub label: &'a str,
    /// The run options the report shows: the seed, whether the run verified, whether
    /// wall times are left out.
    pub seed: u64,
    pub verify: bool,
    pub reproducible: bool,
    /// The device's logical pages.
    pub logical: u64,
    /// The counters when preconditioning ended (the content layer's too), and whether
    /// its write amplification had settled.
    pub pre: Counters,
    pub pre_content: Option<ContentCounters>,
    /// What an FDP device had counted when preconditioning ended.
    pub pre_fdp: Option<crate::ftl::FdpCounts>,
    /// What a placement other than the default had counted per stream then.
    pub pre_streams: Option<Vec<crate::ftl::StreamCounts>>,
    pub steady: bool,
    /// The counters of the measured phase.
    pub measured: Counters,
    /// Whether the run was stopped, and the fraction of its source done then.
    pub interrupted: bool,
    pub fraction: Option<f64>,
    /// Wall time of the whole run and of the measured phase, s.
    pub wall_s: f64,
    pub measured_wall_s: f64,
    /// What the measured phase's recorder gathered.
    pub held_back_pages_mean: f64,
    pub effective_over_provisioning: Option<f64>,
    pub series: Vec<SeriesPoint>,
    /// Write amplification of the quarter of the phase's host writes before the last,
    /// and of the last.
    pub waf_quarters: Option<(f64, f64)>,
    pub driver: MeasuredSections,
    /// The FTL and the device at the end.
    pub end: EndState,
    /// Sections of particular workloads and policies.
    pub trace: Option<TraceInfo>,
    pub fs: Option<FsReport>,
    pub oracle: Option<OracleReport>,
    pub flows: Option<super::FlowsReport>,
}

impl Report {
    /// The report of the run `parts` describe.
    pub(crate) fn assemble(parts: RunParts) -> Result<Report> {
        let RunParts {
            cfg,
            geo,
            label,
            seed,
            verify,
            reproducible,
            logical,
            pre,
            pre_content,
            pre_fdp,
            pre_streams,
            steady,
            measured,
            interrupted,
            fraction,
            wall_s,
            measured_wall_s,
            held_back_pages_mean,
            effective_over_provisioning,
            series,
            waf_quarters,
            driver,
            end:
                EndState {
                    timing,
                    wear,
                    content,
                    state_bytes,
                    buffer,
                    restarts,
                    durable_pages_lost,
                    fdp,
                    zombie_weight,
                    placement_model,
                    streams,
                },
            trace,
            fs,
            oracle,
            flows,
        } = parts;
        let timed = cfg.timing.enabled;
        let MeasuredSections {
            elapsed_ns,
            latency,
            throughput,
            app,
            cache,
            notify,
            host_buffer,
            power_loss,
            write_latency_quarters_us,
        } = driver;
        let (host, flash, gc) = Report::sections(&measured);
        let latency = latency.map(|mut l| {
            l.gc_blocked = timing.as_ref().map(|t| t.gc_blocked.clone());
            l
        });
        let content = content.map(|(c, g)| {
            let c = pre_content.map_or(c, |p| c.since(&p));
            ContentReport::new(&cfg.content, &c, &g, measured.host_write_pages)
        });
        let fdp = match fdp {
            Some(end) => {
                let counts = pre_fdp.map_or_else(|| end.clone(), |p| end.since(&p));
                super::FdpReport::new(cfg, geo, &measured, &counts)?
            }
            None => None,
        };
        let streams = streams
            .map(|end| super::StreamReport::of(&end, pre_streams.as_deref(), geo.pages_per_block));
        Ok(Report {
            waf: measured.defined_waf(),
            host,
            flash,
            gc,
            ftl: FtlReport::new(cfg.ftl.kind, &measured),
            io_time_s: measured.io_time_ns as f64 / 1e9,
            wear,
            device: DeviceInfo {
                logical_pages: logical,
                physical_pages: geo.physical_pages,
                page_size: geo.page_size,
                pages_per_block: geo.pages_per_block,
                blocks: geo.blocks,
                planes: geo.planes,
                gc_units: FtlLayout::new(cfg, geo)?.units.len() as u32,
                over_provisioning: geo.over_provisioning(),
                held_back_pages_mean,
                effective_over_provisioning,
                state_bytes,
            },
            elapsed_s: timed.then_some(elapsed_ns as f64 / 1e9),
            latency,
            throughput,
            timing,
            trace,
            app,
            cache,
            notify,
            series,
            precondition: PhaseReport {
                host_write_pages: pre.host_write_pages,
                flash_programs: pre.programs.total(),
                flash_erases: pre.erases.total(),
                gc_pages_copied: pre.gc_pages_copied,
                waf: pre.defined_waf(),
                drive_writes: pre.host_write_pages as f64 / logical as f64,
                steady,
            },
            steady_state: SteadyState::of(
                QuarterChange::of(waf_quarters, cfg.stats.steady_waf_tolerance),
                QuarterChange::of(
                    write_latency_quarters_us,
                    cfg.stats.steady_latency_tolerance,
                ),
            ),
            run: RunInfo {
                version: crate::VERSION.to_string(),
                seed,
                workload: label.to_string(),
                config: serde_json::to_value(cfg).expect("configs serialize"),
                wall_s: (!reproducible).then_some(wall_s),
                measured_wall_s: (!reproducible).then_some(measured_wall_s),
                verified: verify,
                interrupted,
                progress: if interrupted {
                    fraction.unwrap_or(0.0)
                } else {
                    1.0
                },
                victim_policy: None,
                placement: None,
            },
            content,
            buffer,
            host_buffer,
            refresh: cfg.needs_clock().then(|| RefreshReport {
                blocks: measured.refresh_blocks,
                fast_blocks: measured.refresh_fast_blocks,
                pages: measured.refresh_pages,
                restarts,
                program_share: if measured.programs.total() == 0 {
                    0.0
                } else {
                    measured.programs.get(Cause::Refresh) as f64 / measured.programs.total() as f64
                },
            }),
            power_loss: (!cfg.device.restart_at.is_empty() || cfg.device.power_loss_every > 0)
                .then(|| PowerLossReport {
                    durable_pages_lost,
                    ..power_loss.unwrap_or_default()
                }),
            fs,
            oracle,
            fdp,
            zombie_weight,
            placement_model,
            streams,
            flows,
        })
    }
}
