//! The measured phase without the host model: block requests go to the device
//! interface, through the host write buffer when there is one (`host.buffer`).
//!
//! ```text
//!  request ─► HostInterface::issue (queue depth, open/closed loop)
//!          ─► DeviceClock: the device's clock reaches the request (retention refresh
//!             that is due runs)
//!          ─► PowerLosses: a power loss that is due runs first (a restart time of
//!             `device.restart_at` the clock reached, or `device.power_loss_every`
//!             requests since the last): both buffers reset, dirty pages lost unless
//!             the device buffer is non-volatile, shadows live again, fast blocks
//!             refreshed; with --verify the integrity oracle checks right after
//!          ─► host write buffer (optional) ─► Device::submit ...      (host.buffer)
//!          └► Device::submit, one command per run                     (no host buffer)
//! ```
//!
//! A trace request that remapping split into runs is one command per run, the runs
//! after the first [`Command::continued`]: issued, counted and timed once.
//!
//! The device's clock is the issue time with timing on; with timing off it is the
//! request's arrival time (trace timestamps, a synthetic workload's `iops`), which a
//! device that keeps a clock needs. `device.power_loss_every` counts requests and
//! needs no clock.

use super::measured::Measured;
use super::oracle::FutureNotifier;
use super::recorder::Recorder;
use crate::config::Config;
use crate::device::{Command, Device, Payload};
use crate::error::{Error, Result};
use crate::ftl::FtlExt;
use crate::host::{HostWriteBuffer, RecordedHost};
use crate::interface::HostInterface;
use crate::report::PowerLossReport;
use crate::trace::MAX_TIME_NS;
use crate::workload::{Op, Request, Workload};
use std::collections::VecDeque;

/// Requests drawn ahead of the one being simulated (for prefetching).
pub(super) const LOOKAHEAD: usize = 8;

/// The device's clock as the measured phase drives it: ticks, and the restart times
/// it reaches.
struct DeviceClock {
    /// Restart times not reached yet (ns), latest first.
    restarts: Vec<u64>,
    needed: bool,
    timed: bool,
    speed: f64,
    /// The key that makes the device keep a clock (for the error without one).
    key: &'static str,
}

impl DeviceClock {
    fn new(cfg: &Config) -> Self {
        let mut restarts: Vec<u64> = cfg
            .device
            .restart_at
            .iter()
            .map(|s| (s * 1e9).round() as u64)
            .collect();
        restarts.reverse();
        let key = if cfg.gc.fast_write {
            "gc.fast_write"
        } else if cfg.ftl.retention_s > 0.0 {
            "ftl.retention_s"
        } else if cfg.device.buffer_max_dirty_age > 0.0 {
            "device.buffer_max_dirty_age"
        } else {
            "device.restart_at"
        };
        DeviceClock {
            restarts,
            needed: cfg.needs_clock(),
            timed: cfg.timing.enabled,
            speed: cfg.interface.speed,
            key,
        }
    }

    /// `req`, issued at `issue`, is about to run: the clock moves to it. Returns
    /// whether a restart time was reached (several reached at once are one restart).
    fn before(&mut self, device: &mut Device, req: &Request, issue: u64) -> Result<bool> {
        if !self.needed {
            return Ok(false);
        }
        let now = if self.timed {
            issue
        } else {
            let t = req.arrival_ns.ok_or_else(|| {
                Error::config(
                    self.key,
                    "needs the device's clock (retention, restarts, the age of dirty pages), and with timing off \
                     the clock is the requests' arrival times, which this workload does not \
                     give: set timing.enabled = true, replay a trace with timestamps, or give \
                     the synthetic workload iops=N",
                )
            })?;
            let now = (t as f64 / self.speed) as u64;
            device.tick(now)?;
            now
        };
        let mut reached = false;
        while self.restarts.last().is_some_and(|&t| t <= now) {
            self.restarts.pop();
            reached = true;
        }
        Ok(reached)
    }
}

/// Power losses of the measured phase: when they are due, running them, and what
/// they lost (the report's `power_loss` section).
struct PowerLosses {
    /// `device.power_loss_every` (0 = only the restart times).
    every: u64,
    /// Host requests counted since the last power loss `every` asked for.
    requests: u64,
    /// `every` requests have run since the last one: a power loss is due.
    due: bool,
    /// Run the integrity checks right after each power loss.
    verify: bool,
    report: PowerLossReport,
}

impl PowerLosses {
    fn new(cfg: &Config, verify: bool) -> Self {
        PowerLosses {
            every: cfg.device.power_loss_every,
            requests: 0,
            due: false,
            verify,
            report: PowerLossReport::default(),
        }
    }

    /// One host request (a read, write or trim; not a flush) started.
    #[inline]
    fn count(&mut self) {
        if self.every > 0 {
            self.requests += 1;
            if self.requests == self.every {
                self.requests = 0;
                self.due = true;
            }
        }
    }

    /// Run a power loss when one is due (`restart`: a restart time was reached).
    fn run_due(
        &mut self,
        restart: bool,
        device: &mut Device,
        host_buffer: Option<&mut HostWriteBuffer>,
    ) -> Result<()> {
        if restart || self.due {
            self.due = false;
            self.run(device, host_buffer)?;
        }
        Ok(())
    }

    /// Power is lost and restored (003 §3.3): both buffers are reset (dirty pages lost
    /// unless the device buffer is non-volatile), shadows return to live, fast-written
    /// blocks are refreshed. With `verify` the integrity oracle then checks that
    /// nothing durable was lost.
    fn run(
        &mut self,
        device: &mut Device,
        host_buffer: Option<&mut HostWriteBuffer>,
    ) -> Result<()> {
        let r = &mut self.report;
        r.events += 1;
        let zombies = device.known_zombies();
        let fast = device.ftl().counters().refresh_fast_blocks;
        if let Some(h) = host_buffer {
            let before = h.report().counters.lost_pages;
            h.restart();
            r.host_buffer_lost_pages += h.report().counters.lost_pages - before;
            if self.verify {
                h.check()?;
            }
        }
        r.device_buffer_lost_pages += device.power_loss()?.len() as u64;
        r.zombies_revived += zombies.saturating_sub(device.known_zombies());
        r.fast_blocks_refreshed += device.ftl().counters().refresh_fast_blocks - fast;
        if self.verify {
            device.verify()?;
        }
        Ok(())
    }
}

/// The measured phase without a host model: requests go to the device interface,
/// through the host write buffer when there is one.
pub(super) fn measure_device(
    cfg: &Config,
    device: &mut Device,
    workload: &mut dyn Workload,
    rec: &mut Recorder,
    mut oracle: Option<&mut FutureNotifier>,
) -> Result<Measured> {
    let timed = cfg.timing.enabled;
    let mut iface = HostInterface::new(cfg);
    let mut clock = DeviceClock::new(cfg);
    let mut losses = PowerLosses::new(cfg, rec.verify);
    let mut host_buffer = HostWriteBuffer::new(cfg).map(Box::new);
    if let Some(h) = host_buffer.as_mut() {
        h.start_measuring();
    }
    // A notified trace's host events: the recorded host replaces the modelled one.
    // Under gc.policy = "oracle" the oracle's own marks replace every channel: the
    // events are still replayed and counted, but not delivered.
    let mut recorded = workload.is_notified().then(|| {
        let oracle = cfg.gc.policy == crate::config::PolicySpec::Oracle;
        RecordedHost::new(cfg, device.logical_pages(), !oracle)
    });
    // Arrivals past this are issued beyond the clock's range once slowed down.
    let latest_arrival = (MAX_TIME_NS as f64 * cfg.interface.speed).min(u64::MAX as f64) as u64;
    // Requests are drawn a few ahead so the FTL can prefetch their mapping entries.
    let mut pending: VecDeque<Request> = VecDeque::with_capacity(LOOKAHEAD);
    // The request being timed (a trace request may span several runs), its arrival,
    // its issue time and (through the host buffer) when its runs complete.
    let mut current: Option<(Request, u64, u64, u64)> = None;
    while !rec.ticker.stopped {
        while pending.len() < LOOKAHEAD {
            match workload.next_request()? {
                Some(r) => {
                    device.ftl().prefetch(r.lpn);
                    pending.push_back(r);
                }
                None => break,
            }
        }
        let Some(req) = pending.pop_front() else {
            break;
        };
        if let Some(late) = req.arrival_ns.filter(|&a| a > latest_arrival) {
            return Err(too_late(cfg, late));
        }
        if req.op.is_host_event() {
            let Some(r) = recorded.as_mut() else {
                return Err(Error::integrity(
                    "a host event in a trace whose header declares none",
                ));
            };
            // Its time matters only to a timed notification command (`notify.mode =
            // "command"` holds the interface from then on).
            let at = (req.arrival_ns.unwrap_or(0) as f64 / cfg.interface.speed) as u64;
            r.event(device, req.op, req.lpn, req.pages, at)?;
            continue;
        }
        let continued = req.op != Op::Flush && req.continued;
        if !continued {
            if let Some((prev, arrival, _, done)) = current.take() {
                complete(&mut iface, timed, (&prev, arrival, done));
            }
            // Issued by the host, then at the controller once the link has carried the
            // command (and a write's data).
            let (issue, arrival) = if timed {
                let (issue, arrival) = iface.issue(&req);
                (iface.to_device(&req, issue), arrival)
            } else {
                (0, 0)
            };
            let restart = clock.before(device, &req, issue)?;
            losses.run_due(restart, device, host_buffer.as_deref_mut())?;
            if req.op == Op::Flush {
                let done = match host_buffer.as_mut() {
                    Some(h) => h.flush(device, issue)?,
                    None => device.submit(issue, &Command::new(Op::Flush, 0, 0))?,
                };
                if timed {
                    iface.release(done);
                }
                rec.after(device, || workload.progress())?;
                continue;
            }
            losses.count();
            if let Some(r) = recorded.as_mut() {
                r.before_command(device, req.op)?;
            }
            if timed || host_buffer.is_some() {
                current = Some((req, arrival, issue, issue));
            }
        } else if let Some((prev, ..)) = current.as_mut() {
            prev.pages += req.pages;
        }
        let payload = req.value.map_or(Payload::Unknown, Payload::Same);
        let issue = current.as_ref().map_or(0, |c| c.2);
        let t = match host_buffer.as_mut() {
            Some(h) => h.request(device, issue, req.op, req.lpn, req.pages, payload)?,
            None => {
                let cmd = Command {
                    payload,
                    continued,
                    hint: req.hint,
                    ..Command::new(req.op, req.lpn, req.pages)
                };
                match oracle.as_deref_mut() {
                    // gc.policy = "oracle": its zombie marks go in page by page.
                    Some(o) => o.submit(device, issue, &cmd)?,
                    None => device.submit(issue, &cmd)?,
                }
            }
        };
        if let Some((.., done)) = current.as_mut() {
            *done = (*done).max(t);
        }
        if let Some(r) = recorded.as_mut() {
            r.after_command(device, req.op, req.lpn, req.pages, issue)?;
        }
        rec.after(device, || workload.progress())?;
    }
    if let Some((prev, arrival, _, done)) = current.take() {
        complete(&mut iface, timed, (&prev, arrival, done));
    }
    // The power loss due after the last requests (not after an interruption).
    if !rec.ticker.stopped {
        losses.run_due(false, device, host_buffer.as_deref_mut())?;
    }
    if rec.verify {
        if let Some(h) = host_buffer.as_ref() {
            h.check()?;
        }
    }
    let recorded = recorded.map(|r| r.notify_report());
    Ok(Measured::Device(
        Box::new(iface),
        host_buffer,
        recorded,
        losses.report,
    ))
}

/// `req` completed at `done` (the latest completion of its runs).
fn complete(iface: &mut HostInterface, timed: bool, (req, arrival, done): (&Request, u64, u64)) {
    if timed {
        iface.complete(req, arrival, done);
    }
}

/// The error for a request arriving at `arrival` ns that `interface.speed` would issue
/// beyond the simulated clock's range.
fn too_late(cfg: &Config, arrival: u64) -> Error {
    Error::config(
        "interface.speed",
        format!(
            "{} puts a request arriving at {arrival} ns at {:.3e} ns, beyond 2^62 ns (about \
             146 years) that the simulated clock holds: raise interface.speed or the \
             workload's rate (iops), or rescale a trace's times (time_scale)",
            cfg.interface.speed,
            arrival as f64 / cfg.interface.speed
        ),
    )
}
