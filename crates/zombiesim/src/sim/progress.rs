//! What a run tells its caller as it goes: which phase is under way and how far it is
//! ([`Progress`]), through a callback that may ask the run to stop ([`Ticker`]: called
//! at most every ~100 ms; the loops look at the clock once every `TICK_MASK + 1`
//! iterations).

use std::time::{Duration, Instant};

/// Which part of a run is under way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `gc.policy = "oracle"` reads the measured phase's requests ahead of the run.
    Oracle,
    Precondition,
    Measure,
}

/// What the progress callback is told.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub phase: Phase,
    /// Fraction of this phase done, when known.
    pub fraction: Option<f64>,
    /// Host page writes so far in this phase.
    pub write_pages: u64,
}

/// The progress callback, called at most every `every`; once it asks to stop, every
/// later phase of the run (the oracle's pre-pass, preconditioning, measuring) stops too.
pub(super) struct Ticker<'a> {
    callback: &'a mut dyn FnMut(&Progress) -> bool,
    last: Instant,
    every: Duration,
    pub(super) stopped: bool,
}

impl<'a> Ticker<'a> {
    pub(super) fn new(callback: &'a mut dyn FnMut(&Progress) -> bool) -> Self {
        Ticker {
            callback,
            last: Instant::now(),
            every: Duration::from_millis(100),
            stopped: false,
        }
    }

    /// Report progress if enough time passed; false once the callback asked to stop.
    #[inline]
    pub(super) fn tick(&mut self, p: impl FnOnce() -> Progress) -> bool {
        if self.stopped {
            return false;
        }
        let now = Instant::now();
        if now.duration_since(self.last) >= self.every {
            self.last = now;
            if !(self.callback)(&p()) {
                self.stopped = true;
            }
        }
        !self.stopped
    }

    pub(super) fn force(&mut self, p: Progress) -> bool {
        if !self.stopped && !(self.callback)(&p) {
            self.stopped = true;
        }
        !self.stopped
    }
}

/// How often (in loop iterations) to look at the clock.
pub(super) const TICK_MASK: u64 = (1 << 12) - 1;
