//! The measured phase of a `flows:` workload: several request streams, each with its
//! own submission queue, arbitrated into one device (timing mode).
//!
//! ```text
//!  flow a (qd 1)   ──► SQ a ─┐
//!  flow b (qd 32)  ──► SQ b ─┼─ arbiter (rr | wrr) ──► controller: ≤ interface.queue_depth
//!  flow c (iops N) ──► SQ c ─┘                         commands in flight ──► link ──► FTL
//! ```
//!
//! Each flow submits as its own workload says: closed loop with `qd` requests
//! outstanding (the next submitted when one completes), or open loop at its `iops`
//! arrival times (waiting for a free slot when `qd` are outstanding). The controller
//! takes a command whenever it has fewer than `interface.queue_depth` in flight; when
//! several queues have one waiting then, the arbiter picks. A request's latency runs
//! from its submission (its arrival, open loop) to the host seeing it complete. The
//! phase ends when the first flow runs out of requests.
//!
//! Each flow then runs alone on a copy of the same preconditioned device (held
//! through the shared run: a flows run keeps two copies of the device's state), as many
//! requests as it issued together (not after an interruption), and its slowdown is its mean latency together ÷
//! alone; the fairness is the smallest
//! slowdown ÷ the largest (Tavakkol et al., FAST'18, after Mutlu and Moscibroda).

use super::recorder::Recorder;
use crate::config::{Arbitration, Config};
use crate::device::{Command, Device, Payload};
use crate::error::{Error, Result};
use crate::interface::{payload_bytes, Arbiter, Link, Queue};
use crate::latency::LatencyRecorder;
use crate::report::{FlowReport, FlowsReport};
use crate::steady::Checkpoints;
use crate::workload::flows::FlowSpec;
use crate::workload::{Op, Request, Synthetic, Workload};

/// One flow while it runs.
struct Flow {
    workload: Synthetic,
    /// Its submission queue's `qd` slots.
    queue: Queue,
    /// Its next request and when it is submitted (arrival, or a slot freed).
    next: Option<(Request, u64)>,
    latency: LatencyRecorder,
    /// Summed latency and the latest completion against requests issued (the series).
    latency_sum: u64,
    by_latency: Checkpoints,
    by_time: Checkpoints,
    last_done: u64,
    /// Requests it may still issue (an alone run repeats what it issued together).
    left: u64,
}

impl Flow {
    /// Draw the next request, and when it is submitted. False when the flow is done.
    fn refill(&mut self) -> Result<bool> {
        if self.next.is_some() {
            return Ok(true);
        }
        if self.left == 0 {
            return Ok(false);
        }
        let Some(req) = self.workload.next_request()? else {
            return Ok(false);
        };
        self.left -= 1;
        // Open loop at its arrival, closed loop as soon as a slot frees (a queue never
        // issues before its latest command).
        let at = self.queue.issue(req.arrival_ns.unwrap_or(0));
        self.next = Some((req, at));
        Ok(true)
    }
}

/// What running the flows together (or one alone) left.
pub(super) struct FlowsOutcome {
    pub(super) latency: LatencyRecorder,
    pub(super) elapsed_ns: u64,
    per_flow: Vec<(LatencyRecorder, Vec<[f64; 2]>)>,
    ended_by: usize,
}

/// The flows of `specs` on `device`, each issuing at most `limits` requests (`None`:
/// its workload's): `rec` records the phase (`None` for an alone run).
#[allow(clippy::too_many_arguments)]
fn run(
    cfg: &Config,
    device: &mut Device,
    specs: &[FlowSpec],
    logical: u64,
    page_size: u64,
    seeds: &[u64],
    limits: Option<&[u64]>,
    mut rec: Option<&mut Recorder>,
) -> Result<FlowsOutcome> {
    let mut flows = specs
        .iter()
        .zip(seeds)
        .enumerate()
        .map(|(i, (s, &seed))| {
            Ok(Flow {
                workload: s.workload.build(logical, page_size, seed)?,
                queue: Queue::new(s.queue_depth),
                next: None,
                latency: LatencyRecorder::default(),
                latency_sum: 0,
                by_latency: Checkpoints::default(),
                by_time: Checkpoints::default(),
                last_done: 0,
                left: limits.map_or(u64::MAX, |l| l[i]),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut arbiter = Arbiter::new(cfg, specs)?;
    let mut link = Link::new(cfg);
    // The controller's slots: `interface.queue_depth` commands in flight.
    let mut controller = Queue::new(cfg.interface.queue_depth);
    let mut all = LatencyRecorder::default();
    let mut elapsed = 0u64;
    let mut ended_by = None;
    'phase: loop {
        for (i, f) in flows.iter_mut().enumerate() {
            if !f.refill()? {
                ended_by = Some(i);
                break 'phase;
            }
        }
        // The controller takes a command once it has room and one has been submitted.
        let earliest = flows
            .iter()
            .filter_map(|f| f.next.as_ref().map(|n| n.1))
            .min()
            .expect("every flow has a request");
        let now = controller.issue(earliest);
        let i = arbiter
            .pick(|i| flows[i].next.as_ref().is_some_and(|n| n.1 <= now))
            .expect("a flow's request was submitted by now");
        let f = &mut flows[i];
        let (req, submitted) = f.next.take().expect("picked");
        let bytes = payload_bytes(req.op, req.pages, page_size);
        let at = link.to_device(req.op, bytes, now);
        let cmd = Command {
            payload: req.value.map_or(Payload::Unknown, Payload::Same),
            hint: req.hint,
            ..Command::new(req.op, req.lpn, req.pages)
        };
        let done = link.to_host(req.op, bytes, device.submit(at, &cmd)?);
        f.queue.complete(done);
        controller.complete(done);
        let latency = done.saturating_sub(submitted);
        f.latency.record(req.op == Op::Read, latency, bytes);
        all.record(req.op == Op::Read, latency, bytes);
        f.last_done = f.last_done.max(done);
        f.latency_sum += latency;
        let (n, sum, last) = (f.latency.count(), f.latency_sum, f.last_done);
        f.by_latency.observe(n, || sum);
        f.by_time.observe(n, || last);
        elapsed = elapsed.max(done);
        if let Some(r) = rec.as_deref_mut() {
            // The phase ends with the flow that runs out first.
            let fraction = || {
                flows
                    .iter()
                    .filter_map(|f| f.workload.progress())
                    .max_by(f64::total_cmp)
            };
            if !r.after(device, fraction)? {
                break;
            }
        }
    }
    Ok(FlowsOutcome {
        latency: all,
        elapsed_ns: elapsed,
        per_flow: flows
            .into_iter()
            .map(|f| {
                let end = (f.latency.count(), f.latency_sum, f.last_done);
                let series = series(&f.by_latency, &f.by_time, end);
                (f.latency, series)
            })
            .collect(),
        ended_by: ended_by.unwrap_or(0),
    })
}

/// What a `flows:` run refuses up front: counting mode, and what its loop does not
/// model (the host model and host write buffer, the oracle, power losses and a
/// precondition replaying the workload).
pub(super) fn refuse(cfg: &Config) -> Result<()> {
    let refused = [
        (!cfg.timing.enabled, "timing.enabled", "flows are a timing feature: set timing.enabled = true"),
        (cfg.host.enabled(), "host.cache", "flows issue block requests to the device; the host model has its own threads (leave host.cache and host.threads unset)"),
        (cfg.host.buffer.bytes() > 0, "host.buffer", "flows issue straight to the device's queues (leave host.buffer unset)"),
        (cfg.gc.policy == crate::config::PolicySpec::Oracle, "gc.policy", "the oracle reads one request stream's future; flows are several"),
        (!cfg.device.restart_at.is_empty(), "device.restart_at", "power losses are not modelled with flows"),
        (cfg.device.power_loss_every > 0, "device.power_loss_every", "power losses are not modelled with flows"),
        (cfg.precondition.replays_own_writes(), "precondition.pattern", "\"workload\" replays one workload's writes; with flows use \"uniform\""),
        (cfg.needs_clock(), "device.buffer_max_dirty_age", "the device's clock (retention, refresh, dirty-page age) is not kept with flows"),
    ];
    match refused.iter().find(|(bad, ..)| *bad) {
        Some((_, key, why)) => Err(Error::config(
            *key,
            format!("with a flows: workload: {why}"),
        )),
        None => Ok(()),
    }
}

/// The measured phase of `specs`: all of them together on `device`, recorded into
/// `rec`; then each alone on a copy of `device` as it was before, for as many requests
/// as it issued together (so both means cover the same stretch of its workload).
pub(super) fn measure_flows(
    cfg: &Config,
    device: &mut Device,
    specs: &[FlowSpec],
    seed: u64,
    rec: &mut Recorder,
) -> Result<(FlowsOutcome, FlowsReport)> {
    let logical = device.logical_pages();
    let page_size = cfg.flash.page_size.bytes();
    let seeds: Vec<u64> = (0..specs.len() as u64)
        .map(|i| super::seeds::stream_seed(seed, i))
        .collect();
    let arbiter = Arbiter::new(cfg, specs)?;
    let before = device.clone();
    let out = run(
        cfg,
        device,
        specs,
        logical,
        page_size,
        &seeds,
        None,
        Some(&mut *rec),
    )?;
    // An interrupted run is reported as far as it went, without the alone runs.
    let stopped = rec.ticker.stopped;
    let mut alone = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate().filter(|_| !stopped) {
        let issued = [out.per_flow[i].0.count()];
        let mut copy = before.clone();
        let one = std::slice::from_ref(spec);
        let solo = run(
            cfg,
            &mut copy,
            one,
            logical,
            page_size,
            &seeds[i..=i],
            Some(&issued),
            None,
        )?;
        alone.push(mean_us(&solo.per_flow[0].0));
    }
    let total: u64 = out.per_flow.iter().map(|(l, _)| l.count()).sum();
    let flows: Vec<FlowReport> = specs
        .iter()
        .zip(&out.per_flow)
        .zip(alone.iter().copied().chain(std::iter::repeat(0.0)))
        .enumerate()
        .map(|(i, ((s, (lat, series)), alone_mean_us))| {
            let mean = mean_us(lat);
            FlowReport {
                name: s.name.clone(),
                workload: s.workload.as_str().to_string(),
                queue_depth: s.queue_depth,
                class: s.class.map(|c| c.name().to_string()),
                weight: arbiter.weight(i),
                requests: lat.count(),
                share: if total > 0 {
                    lat.count() as f64 / total as f64
                } else {
                    0.0
                },
                throughput: lat.throughput(out.elapsed_ns),
                latency: lat.report(),
                alone_mean_us,
                slowdown: (alone_mean_us > 0.0 && lat.count() > 0).then(|| mean / alone_mean_us),
                series: series.clone(),
            }
        })
        .collect();
    let slowdowns: Option<Vec<f64>> = flows.iter().map(|f| f.slowdown).collect();
    let fairness = slowdowns.filter(|s| !s.is_empty()).map(|s| {
        let (lo, hi) = s.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
        lo / hi
    });
    let report = FlowsReport {
        arbitration: match cfg.interface.arbitration {
            Arbitration::Rr => "rr",
            Arbitration::Wrr => "wrr",
        }
        .to_string(),
        ended_by: specs[out.ended_by].name.clone(),
        fairness,
        flows,
    };
    Ok((out, report))
}

/// `[t_s, mean_us]` between consecutive points of the two logs (taken at the same
/// counts), the last window ending at `end` (requests, summed latency, last completion).
fn series(by_latency: &Checkpoints, by_time: &Checkpoints, end: (u64, u64, u64)) -> Vec<[f64; 2]> {
    let mut points: Vec<(u64, u64, u64)> = by_latency
        .points()
        .iter()
        .zip(by_time.points())
        .map(|(&(n, sum), &(_, t))| (n, sum, t))
        .collect();
    if points.last().is_some_and(|p| p.0 < end.0) {
        points.push(end);
    }
    points
        .windows(2)
        .map(|w| {
            let (n, sum) = (w[1].0 - w[0].0, w[1].1 - w[0].1);
            [w[1].2 as f64 / 1e9, sum as f64 / n as f64 / 1000.0]
        })
        .collect()
}

fn mean_us(l: &LatencyRecorder) -> f64 {
    l.mean_ns() / 1000.0
}
