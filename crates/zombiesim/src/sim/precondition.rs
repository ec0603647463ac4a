//! Preconditioning: the device filled (every logical page once, in order), then random
//! writes (or the measured workload's own, `precondition.pattern = "workload"`) in
//! quarter-drive-write windows until write amplification settles or
//! `precondition.random_drive_writes` is spent.
//!
//! The writes enter the device like every other command, through
//! [`Device::submit`], marked [`Command::precondition`]: straight to flash, past the
//! write buffer, with timing off, and not counted as host requests.

use super::measure::LOOKAHEAD;
use super::options::RunOptions;
use super::progress::{Phase, Progress, Ticker, TICK_MASK};
use super::seeds::{stream_seed, STREAM_PRECONDITION};
use super::source::Source;
use crate::config::Config;
use crate::device::{Command, Device, WriteHint};
use crate::error::Result;
use crate::workload::{Op, Synthetic, Workload};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The measured workload's own writes, for `precondition.pattern = "workload"`: a
/// synthetic workload's write stream, or a trace's writes read again (and again).
pub(super) fn own_writes(
    cfg: &Config,
    source: &Source,
    synthetic: Option<&Synthetic>,
    seed: u64,
) -> Result<Option<Box<dyn Workload>>> {
    if !cfg.precondition.replays_own_writes() {
        return Ok(None);
    }
    if let Some(w) = synthetic {
        return Ok(Some(Box::new(w.writes_only(seed))));
    }
    match source {
        Source::Requests(w) => w.own_writes(),
        _ => Ok(None),
    }
}

/// A preconditioning write of `pages` pages from `lpn`, placed as `hint` says (the
/// fill and the uniform pattern say nothing: the default handle).
#[inline]
fn write(device: &mut Device, lpn: u64, pages: u32, hint: WriteHint) -> Result<()> {
    let cmd = Command {
        precondition: true,
        hint,
        ..Command::new(Op::Write, lpn, pages)
    };
    device.submit(0, &cmd).map(|_| ())
}

/// Fill, then random writes until steady (timing off). Returns whether WA settled.
pub(super) fn precondition(
    cfg: &Config,
    device: &mut Device,
    own: Option<Box<dyn Workload>>,
    opts: &RunOptions,
    ticker: &mut Ticker,
) -> Result<bool> {
    let p = &cfg.precondition;
    let logical = device.logical_pages();
    let random_pages = (p.random_drive_writes * logical as f64).round() as u64;
    let total = if p.fill { logical } else { 0 } + random_pages;
    if total == 0 {
        return Ok(false);
    }
    let report = |done: u64| Progress {
        phase: Phase::Precondition,
        fraction: Some(done as f64 / total as f64),
        write_pages: done,
    };
    ticker.force(report(0));
    let mut done = 0u64;
    if p.fill {
        // In runs that end where the progress is reported (every TICK_MASK + 1 pages).
        while done < logical {
            let end = ((done | TICK_MASK) + 1).min(logical);
            write(device, done, (end - done) as u32, WriteHint::NONE)?;
            done = end;
            if done & TICK_MASK == 0 && !ticker.tick(|| report(done)) {
                return Ok(false);
            }
        }
    }
    let seed = stream_seed(opts.seed, STREAM_PRECONDITION);
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut own = own;
    let mut ahead = [0u64; LOOKAHEAD];
    if own.is_none() {
        for a in ahead.iter_mut() {
            *a = rng.random_range(0..logical);
        }
    }
    let mut slot = 0usize;
    let window = (logical / 4).max(1);
    let min_windows = 4; // at least one drive-write before judging steadiness
    let mut prev_waf: Option<f64> = None;
    let mut calm = 0;
    let mut windows = 0;
    let mut written = 0u64;
    while written < random_pages {
        let start = device.counters();
        let end = (written + window).min(random_pages);
        while written < end {
            match own.as_mut() {
                None => {
                    let lpn = ahead[slot];
                    ahead[slot] = rng.random_range(0..logical);
                    device.ftl().prefetch(ahead[slot]);
                    slot = (slot + 1) % LOOKAHEAD;
                    write(device, lpn, 1, WriteHint::NONE)?;
                    written += 1;
                }
                Some(w) => {
                    let Some(req) = w.next_request()? else {
                        return Err(crate::Error::config(
                            "precondition.pattern",
                            "`workload`: the measured workload writes nothing to replay; use `uniform`",
                        ));
                    };
                    let stop = (req.lpn + req.pages as u64).min(req.lpn + (end - written));
                    if stop > req.lpn {
                        write(device, req.lpn, (stop - req.lpn) as u32, req.hint)?;
                    }
                    written += stop - req.lpn;
                }
            }
            done = if p.fill { logical } else { 0 } + written;
            if written & TICK_MASK == 0 && !ticker.tick(|| report(done)) {
                return Ok(false);
            }
        }
        windows += 1;
        let waf = device.counters().since(&start).waf();
        if let Some(prev) = prev_waf {
            if p.steady_tolerance > 0.0 && (waf - prev).abs() <= p.steady_tolerance * waf.max(1.0) {
                calm += 1;
            } else {
                calm = 0;
            }
        }
        prev_waf = Some(waf);
        if windows >= min_windows && calm >= 2 {
            return Ok(true);
        }
    }
    Ok(false)
}
