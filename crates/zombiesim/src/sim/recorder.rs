//! What the measured phase records as it goes, for the device-level loop and the host
//! model alike: the time series, the held-back pages (and the over-provisioning GC
//! really has), the periodic integrity checks and progress.

use super::progress::{Phase, Progress, Ticker, TICK_MASK};
use crate::config::Config;
use crate::device::Device;
use crate::error::Result;
use crate::flash::Geometry;
use crate::ftl::{Ftl, FtlExt};
use crate::host;
use crate::stats::{Counters, SeriesPoint};
use crate::steady::Checkpoints;

/// What the measured phase records as it goes: the time series, the mean held-back
/// pages, periodic integrity checks and progress. Shared by the device-level loop and
/// the host model.
pub(super) struct Recorder<'t, 'c> {
    pub(super) pre: Counters,
    pub(super) logical: u64,
    pub(super) series_every: u64,
    pub(super) series: Vec<SeriesPoint>,
    pub(super) last_point: Counters,
    pub(super) next_point: u64,
    pub(super) verify: bool,
    pub(super) next_verify: u64,
    pub(super) held_sum: f64,
    pub(super) held_samples: u64,
    /// Whether every logical page has been written (by the fill or by the run itself):
    /// only then do held-back pages say how much spare space GC has.
    pub(super) filled: bool,
    pub(super) filled_held_sum: f64,
    pub(super) filled_samples: u64,
    pub(super) held_every: u64,
    pub(super) next_held: u64,
    pub(super) iter: u64,
    /// Flash programs against host page writes, for the steady-state check.
    pub(super) progress: Checkpoints,
    pub(super) ticker: &'t mut Ticker<'c>,
}

impl<'t, 'c> Recorder<'t, 'c> {
    /// The recorder of a measured phase that starts at the counters `pre`, a series
    /// point every `series_every` host page writes (0: no series); it tells the
    /// progress callback the phase has begun.
    pub(super) fn start(
        cfg: &Config,
        geo: &Geometry,
        device: &Device,
        pre: Counters,
        series_every: u64,
        verify: bool,
        ticker: &'t mut Ticker<'c>,
    ) -> Self {
        let logical = device.logical_pages();
        let rec = Recorder {
            pre,
            logical,
            series_every,
            series: Vec::new(),
            last_point: pre,
            next_point: series_every,
            verify,
            next_verify: logical,
            held_sum: 0.0,
            held_samples: 0,
            filled: cfg.precondition.fill || device.ftl().valid_pages() >= logical,
            filled_held_sum: 0.0,
            filled_samples: 0,
            held_every: (geo.pages_per_block as u64 * 4).max(64),
            next_held: 0,
            iter: 0,
            progress: Checkpoints::default(),
            ticker,
        };
        rec.ticker.force(Progress {
            phase: Phase::Measure,
            fraction: Some(0.0),
            write_pages: 0,
        });
        rec
    }

    /// After a device operation: sample, check, report progress. False once stopped.
    #[inline]
    pub(super) fn after(
        &mut self,
        device: &mut Device,
        fraction: impl FnOnce() -> Option<f64>,
    ) -> Result<bool> {
        let written = device.host_write_pages() - self.pre.host_write_pages;
        self.progress.observe(written, || {
            device.counters().programs.total() - self.pre.programs.total()
        });
        let ftl = device.ftl();
        if written >= self.next_held {
            let held = ftl.held_back_pages() as f64;
            self.held_sum += held;
            self.held_samples += 1;
            self.filled = self.filled || ftl.valid_pages() >= self.logical;
            if self.filled {
                self.filled_held_sum += held;
                self.filled_samples += 1;
            }
            self.next_held = written + self.held_every;
        }
        if self.series_every > 0 && written >= self.next_point {
            let now = device.counters();
            let free = device.ftl().free_blocks();
            self.series
                .push(series_point(&self.pre, &self.last_point, &now, free));
            self.last_point = now;
            self.next_point = written + self.series_every;
        }
        if self.verify && written >= self.next_verify {
            device.verify()?;
            self.next_verify = written + self.logical;
        }
        self.iter += 1;
        if self.iter & TICK_MASK == 0 {
            self.ticker.tick(|| Progress {
                phase: Phase::Measure,
                fraction: fraction(),
                write_pages: written,
            });
        }
        Ok(!self.ticker.stopped)
    }

    pub(super) fn held_mean(&self, ftl: &dyn Ftl) -> f64 {
        if self.held_samples == 0 {
            ftl.held_back_pages() as f64
        } else {
            self.held_sum / self.held_samples as f64
        }
    }

    /// `(physical − held back) / logical − 1` over the samples taken once every logical
    /// page had been written; `None` when there were none (a device that filled itself
    /// only partly: its never-written space is not spare space GC works with).
    pub(super) fn effective_over_provisioning(&self, ftl: &dyn Ftl, physical: u64) -> Option<f64> {
        let held = if self.filled_samples > 0 {
            self.filled_held_sum / self.filled_samples as f64
        } else if self.held_samples == 0 && self.filled {
            ftl.held_back_pages() as f64
        } else {
            return None;
        };
        Some((physical as f64 - held) / self.logical as f64 - 1.0)
    }
}

/// Host page writes between two points of the time series: `stats.series_every`, or
/// `stats.series_points` over the `expected` length of the measured phase (0: no
/// series). Unknown length (a trace): a point every quarter drive-write.
pub(super) fn series_every(cfg: &Config, expected: Option<u64>, logical: u64) -> u64 {
    match (cfg.stats.series_every, cfg.stats.series_points) {
        (n, _) if n > 0 => n,
        (_, 0) => 0,
        (_, pts) => expected.map_or((logical / 4).max(1), |w| (w / pts as u64).max(1)),
    }
}

/// The host model's view of the recorder.
pub(super) struct HostObserver<'r, 't, 'c> {
    pub(super) recorder: &'r mut Recorder<'t, 'c>,
    pub(super) fraction: Option<f64>,
}

impl host::Observer for HostObserver<'_, '_, '_> {
    fn after_command(&mut self, device: &mut Device) -> Result<bool> {
        let fraction = self.fraction;
        self.recorder.after(device, || fraction)
    }

    fn progress(&mut self, fraction: Option<f64>) {
        self.fraction = fraction;
    }
}

fn series_point(start: &Counters, prev: &Counters, now: &Counters, free: u64) -> SeriesPoint {
    let total = now.since(start);
    let interval = now.since(prev);
    SeriesPoint {
        host_write_pages: total.host_write_pages,
        flash_programs: total.programs.total(),
        flash_erases: total.erases.total(),
        gc_pages_copied: total.gc_pages_copied,
        waf_interval: interval.waf(),
        waf_cumulative: total.waf(),
        free_blocks: free,
    }
}
