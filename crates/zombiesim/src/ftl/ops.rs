//! The flash-operations layer: every FTL reads, programs, copies and erases through
//! [`FlashOps`], which counts each operation by cause and, with the timing model on,
//! places it on the die and channel timelines.
//!
//! ```text
//!   FTL ── read(plane, cause) ─────┐
//!       ── program(plane, cause) ──┤   counts by cause (host, gc, buffer)
//!       ── copy(plane, start) ─────┼─► + timing::FlashTiming (when on): host and buffer
//!       ── erase(plane, block, …) ─┤     operations from the request's issue time; GC
//!       ── dram() ─────────────────┘     copies and erases from the time GC was decided
//!   begin(now) … finish() → when the request's operations complete
//! ```
//!
//! A request is bracketed by [`FlashOps::begin`] and [`FlashOps::finish`]: operations
//! issued for it start at its issue time, and its completion is the latest of theirs
//! (GC it triggers delays it only through the dies, as the scheduler decides).

use crate::config::{Config, Geometry};
use crate::stats::{ByCause, Cause};
use crate::timing::{CopyKind, FlashTiming, TimingSummary};

/// The nominal duration of each operation, for the accumulated GC latency (003 Fig.
/// 7), which is known whether the timing model runs or not: a flash read with its
/// transfer and ECC decode, a DRAM read, a normal or fast program with its transfer,
/// an erase (ns).
#[derive(Clone, Copy, Debug)]
struct NominalCost {
    read: u64,
    buffer_read: u64,
    program: u64,
    fast_program: u64,
    erase: u64,
}

impl NominalCost {
    fn new(cfg: &Config, geo: &Geometry) -> Self {
        let t = &cfg.timing;
        let ns = |us: f64| (us * 1000.0).round() as u64;
        let xfer = (geo.page_size as f64 / t.channel_mb_s * 1000.0).round() as u64;
        NominalCost {
            read: ns(t.read_us) + xfer + ns(t.ecc_us),
            buffer_read: t.dram_ns.round() as u64,
            program: xfer + ns(t.program_us),
            fast_program: xfer + ns(t.fast_program_us),
            erase: ns(t.erase_us),
        }
    }
}

/// Counts and times flash operations.
#[derive(Clone)]
pub struct FlashOps {
    timing: Option<FlashTiming>,
    cost: NominalCost,
    /// The timing model is running (off while preconditioning).
    on: bool,
    /// `timing.upkeep_time`: collections (GC, merges) and translation-page traffic
    /// take device time; when `false` they are counted but not timed.
    upkeep_timed: bool,
    /// Issue time of the current request, and when its operations complete (ns).
    now: u64,
    done: u64,
    pub programs: ByCause,
    pub reads: ByCause,
    pub erases: ByCause,
}

impl FlashOps {
    pub fn new(cfg: &Config, geo: &Geometry) -> Self {
        FlashOps {
            timing: cfg.timing.enabled.then(|| FlashTiming::new(cfg, geo)),
            cost: NominalCost::new(cfg, geo),
            on: cfg.timing.enabled,
            upkeep_timed: cfg.timing.upkeep_time,
            now: 0,
            done: 0,
            programs: ByCause::default(),
            reads: ByCause::default(),
            erases: ByCause::default(),
        }
    }

    /// The timing model, when it is running.
    #[inline]
    fn clock(&mut self) -> Option<&mut FlashTiming> {
        if self.on {
            self.timing.as_mut()
        } else {
            None
        }
    }

    /// The timing model, when it is running and times operations for `cause` (see
    /// `upkeep_timed`).
    #[inline]
    fn clock_for(&mut self, cause: Cause) -> Option<&mut FlashTiming> {
        if self.upkeep_timed || !(cause.collects() || cause == Cause::Translation) {
            self.clock()
        } else {
            None
        }
    }

    /// Whether the timing model is running.
    #[inline]
    pub fn timed(&self) -> bool {
        self.on
    }

    /// The current request's issue time (ns).
    #[inline]
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Turn the timing model on or off; either way the timelines restart at 0.
    pub fn set_timing(&mut self, on: bool) {
        self.on = on && self.timing.is_some();
        if let Some(t) = self.timing.as_mut() {
            t.reset();
        }
        self.now = 0;
        self.done = 0;
    }

    /// A request issued at `now` begins.
    #[inline]
    pub fn begin(&mut self, now: u64) {
        self.now = now;
        self.done = now;
        if let Some(t) = self.timing.as_mut() {
            t.advance(now);
        }
    }

    /// When the operations of the request begun last complete.
    #[inline]
    pub fn finish(&self) -> u64 {
        self.done
    }

    /// The request also waits until `t` (work of the FTL's own, such as hashing).
    #[inline]
    pub fn wait_until(&mut self, t: u64) {
        self.done = self.done.max(t);
    }

    /// Program a page on `plane` for `cause`. Host and buffer programs are issued at
    /// `start` and the request waits for them; relocations (GC, refresh) are timed
    /// with their copy.
    #[inline(always)]
    pub fn program(&mut self, plane: u32, cause: Cause, start: u64) {
        self.programs.add(cause, 1);
        if !cause.relocates() {
            if let Some(t) = self.clock_for(cause) {
                let end = t.program(plane, start, false, cause);
                self.done = self.done.max(end);
            }
        }
    }

    /// `n` relocations of the same `kind` on `plane` for `cause`, issued at `start`:
    /// [`FlashOps::copy`] and [`FlashOps::program`] `n` times each, in that order.
    #[inline]
    pub fn relocations(&mut self, plane: u32, start: u64, kind: CopyKind, cause: Cause, n: u64) {
        debug_assert!(cause.relocates());
        if !kind.from_buffer {
            self.reads.add(cause, n);
        }
        if let Some(t) = self.clock_for(cause) {
            t.copies(plane, start, kind, cause, n);
        }
        self.programs.add(cause, n);
    }

    /// Read a page on `plane` for the host; the request waits for its data.
    #[inline]
    pub fn host_read(&mut self, plane: u32) {
        self.read(plane, Cause::Host);
    }

    /// Read a page on `plane` for `cause` on the request's behalf (the host, a
    /// translation page, a page a buffer pads its victim with); the request waits
    /// for the data.
    #[inline]
    pub fn read(&mut self, plane: u32, cause: Cause) {
        self.reads.add(cause, 1);
        let now = self.now;
        if let Some(t) = self.clock_for(cause) {
            let end = t.read(plane, now, cause);
            self.done = self.done.max(end);
        }
    }

    /// GC or refresh (`cause`) relocates a valid page on `plane`, issued at `start`:
    /// the read is counted here (none when the content comes from the write buffer),
    /// the program by [`FlashOps::program`]; the timing model places both.
    #[inline]
    pub fn copy(&mut self, plane: u32, start: u64, kind: CopyKind, cause: Cause) {
        if !kind.from_buffer {
            self.reads.add(cause, 1);
        }
        if let Some(t) = self.clock_for(cause) {
            t.copy(plane, start, kind, cause);
        }
    }

    /// GC or refresh (`cause`) erases `block` on `plane`, issued at `start`.
    #[inline]
    pub fn erase(&mut self, plane: u32, block: u32, start: u64, cause: Cause) {
        self.erases.add(cause, 1);
        if let Some(t) = self.clock_for(cause) {
            t.erase(plane, block, start, cause);
        }
    }

    /// The accumulated GC latency (ns): every flash read, buffer read (of
    /// `buffer_reads`), program (`fast_programs` of them in fast-write mode) and
    /// erase of a collection (GC, or a block-mapped FTL's merge) at its nominal
    /// duration; the same sum the timing model takes as GC busy time.
    pub fn gc_latency_ns(&self, buffer_reads: u64, fast_programs: u64) -> u64 {
        let c = &self.cost;
        let collecting = |by: &ByCause| -> u64 {
            Cause::ALL
                .iter()
                .filter(|cause| cause.collects())
                .map(|&cause| by.get(cause))
                .sum()
        };
        let programs = collecting(&self.programs);
        collecting(&self.reads) * c.read
            + buffer_reads * c.buffer_read
            + (programs - fast_programs) * c.program
            + fast_programs * c.fast_program
            + collecting(&self.erases) * c.erase
    }

    /// The I/O execution time of 004 (ns): every program, erase and non-host flash
    /// read at its nominal duration, plus `buffer_reads` DRAM reads (pages GC or a
    /// merge took from the write buffer). Host reads are left out, as 004 does.
    /// `fast_programs` of the programs ran in fast-write mode.
    pub fn io_time_ns(&self, buffer_reads: u64, fast_programs: u64) -> u64 {
        let c = &self.cost;
        (self.reads.total() - self.reads.get(Cause::Host)) * c.read
            + buffer_reads * c.buffer_read
            + (self.programs.total() - fast_programs) * c.program
            + fast_programs * c.fast_program
            + self.erases.total() * c.erase
    }

    /// The request waits for one DRAM access (a read of an unwritten page, a trim).
    #[inline]
    pub fn dram(&mut self) {
        self.dram_from(self.now);
    }

    /// The request waits for one DRAM access that starts at `start`.
    #[inline]
    pub fn dram_from(&mut self, start: u64) {
        if self.on {
            if let Some(t) = self.timing.as_ref() {
                self.done = self.done.max(start + t.dram());
            }
        }
    }

    /// Firmware time to score `blocks` GC candidates (0 with timing off).
    #[inline]
    pub fn search(&mut self, blocks: u64) -> u64 {
        self.clock_for(Cause::Gc).map_or(0, |t| t.search(blocks))
    }

    /// A block on `plane` is about to be written: its queued erase must run first.
    #[inline]
    pub fn need_erased(&mut self, plane: u32, block: u32) {
        if let Some(t) = self.clock() {
            t.need_erased(plane, block);
        }
    }

    /// When `plane` can start an operation issued at `now`, with timing on.
    #[inline]
    pub fn ready_at(&self, plane: u32, now: u64) -> Option<u64> {
        if self.on {
            self.timing.as_ref().map(|t| t.ready_at(plane, now))
        } else {
            None
        }
    }

    /// The latest time any flash resource is reserved until.
    pub fn busy_until(&self) -> u64 {
        self.timing.as_ref().map_or(0, |t| t.busy_until())
    }

    /// Timing figures over `elapsed` ns, when the timing model exists.
    pub fn summary(&self, elapsed: u64) -> Option<TimingSummary> {
        self.timing.as_ref().map(|t| t.summary(elapsed))
    }
}
