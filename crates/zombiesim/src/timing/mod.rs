//! The NAND timing model: per-resource timelines, and a scheduler that decides when
//! garbage collection's flash work runs.
//!
//! ```text
//!  channel 0  ──[xfer]────────[xfer]──[xfer]──────────────►  bus: page_size / channel rate
//!  die 0      ──[  tR  ][xfer]──[xfer][     tPROG      ]───►  array op, then the register
//!  die 1      ─────────────[xfer][    tPROG     ]──[ tBERS ]►  is held until data moves
//! ```
//!
//! Every resource (a channel, and a die — or a plane when `timing.multi_plane` lets
//! the planes of a die work in parallel) has a time until which it is busy. An
//! operation issued at time `t` starts when its resources are free and reserves
//! them:
//!
//! - **read**: array read on the die (`tR`), then the page crosses the channel; the
//!   die's page register is held until the transfer ends; ECC decode follows.
//! - **program**: the page crosses the channel into the die's register (the die must
//!   be free), then the die programs (`tPROG`, or the fast-mode time).
//! - **erase**: the die erases (`tBERS`).
//! - **GC copy**: a read (with ECC) followed by a program on the same plane.
//!
//! Host operations are reserved in the order the simulator issues them, which is the
//! order of issue times, so the model is deterministic. A channel is shared by many
//! dies, so it keeps its future busy intervals and a transfer takes the earliest gap
//! that fits. Times are integer nanoseconds.
//!
//! ## When GC runs (`timing.scheduler`)
//!
//! ```text
//!  fifo     GC ──reserve now──► die: [copy][copy]...[copy][erase]   a host read issued
//!                                                       ▲           meanwhile waits for all
//!                                                    read waits
//!  rps      GC ──► per-die queue ──► runs while its die has nothing else to do:
//!                 die: [copy][read][copy][copy][read][erase]         a read waits for the
//!                                                                    one operation running
//!  suspend  rps, and a read suspends a program or erase in progress:
//!                 die: [copy: tR xfer tPRO|susp|read|resume|GRAM]    suspend_us each way,
//!                                                                    max_suspensions per op
//! ```
//!
//! With `rps` and `suspend`, GC operations wait in per-die FIFO queues. A queued
//! operation starts when its die is free and no host operation has claimed the die
//! first: queues are run up to each new request's issue time, so GC fills the idle
//! time between host operations. Host reads and programs are never queued behind GC
//! that has not started. GC cannot fall behind for good: a block whose erase is
//! still queued cannot be written, so opening it runs its die's queue up to that
//! erase ([`FlashTiming::need_erased`]). The mapping changes when GC is decided, in
//! every mode; the scheduler only decides when the flash work happens.
//!
//! `latency.gc_blocked` counts host reads that found their die busy with GC, and how
//! long they waited for it.

mod channel;
mod die;
mod summary;
#[cfg(test)]
mod tests;

pub use die::CopyKind;
pub use summary::{GcBlocked, TimingSummary};

use crate::config::Geometry;
use crate::config::{Config, Scheduler};
use crate::stats::Cause;
use channel::ChannelTimeline;
use die::{GcOp, Planned, Running};
use std::collections::VecDeque;

/// Nanoseconds from a configuration value in microseconds.
fn us(v: f64) -> u64 {
    (v * 1000.0).round() as u64
}

/// Latencies and timelines of the flash array.
#[derive(Clone, Debug)]
pub struct FlashTiming {
    t_read: u64,
    t_program: u64,
    t_fast_program: u64,
    t_erase: u64,
    t_xfer: u64,
    t_ecc: u64,
    t_dram: u64,
    t_search: u64,
    t_suspend: u64,
    max_suspensions: u32,
    scheduler: Scheduler,
    planes_per_unit: u32,
    planes_per_channel: u32,
    unit_free: Vec<u64>,
    unit_busy: Vec<u64>,
    /// The end of the latest GC operation placed on each unit.
    gc_until: Vec<u64>,
    /// The host program each unit runs last (kept with `suspend` only).
    running: Vec<Running>,
    /// GC operations waiting for their unit (`rps`, `suspend`), and their work (ns).
    queued: Vec<VecDeque<GcOp>>,
    queued_ops: usize,
    queued_ns: Vec<u64>,
    /// GC operations placed on each unit that may not have ended (`rps`, `suspend`).
    planned: Vec<VecDeque<Planned>>,
    channels: Vec<ChannelTimeline>,
    units_per_channel: u32,
    /// No operation is issued before this time any more (the current request's).
    horizon: u64,
    /// Accumulated time of GC operations (reads, programs, erases), ns.
    gc_busy: u64,
    blocked_reads: u64,
    blocked_ns: u64,
    blocked_max: u64,
}

impl FlashTiming {
    pub fn new(cfg: &Config, geo: &Geometry) -> Self {
        let t = &cfg.timing;
        let planes_per_unit = if t.multi_plane { 1 } else { geo.planes_per_die };
        let units = (geo.planes / planes_per_unit) as usize;
        let planes_per_channel = geo.chips_per_channel * geo.dies_per_chip * geo.planes_per_die;
        // bytes / (MB/s) = µs; ×1000 = ns.
        let t_xfer = (geo.page_size as f64 / t.channel_mb_s * 1000.0).round() as u64;
        FlashTiming {
            t_read: us(t.read_us),
            t_program: us(t.program_us),
            t_fast_program: us(t.fast_program_us),
            t_erase: us(t.erase_us),
            t_xfer,
            t_ecc: us(t.ecc_us),
            t_dram: t.dram_ns.round() as u64,
            t_search: us(t.gc_search_us),
            t_suspend: us(t.suspend_us),
            max_suspensions: t.max_suspensions,
            scheduler: t.scheduler,
            planes_per_unit,
            planes_per_channel,
            unit_free: vec![0; units],
            unit_busy: vec![0; units],
            gc_until: vec![0; units],
            running: vec![Running::default(); units],
            queued: vec![VecDeque::new(); units],
            queued_ops: 0,
            queued_ns: vec![0; units],
            planned: vec![VecDeque::new(); units],
            channels: vec![
                ChannelTimeline::new((planes_per_channel / planes_per_unit) as usize);
                geo.channels as usize
            ],
            units_per_channel: planes_per_channel / planes_per_unit,
            horizon: 0,
            gc_busy: 0,
            blocked_reads: 0,
            blocked_ns: 0,
            blocked_max: 0,
        }
    }

    #[inline]
    fn unit(&self, plane: u32) -> usize {
        (plane / self.planes_per_unit) as usize
    }

    #[inline]
    fn channel_of_unit(&self, unit: usize) -> usize {
        (unit as u32 * self.planes_per_unit / self.planes_per_channel) as usize
    }

    /// A die's (or plane's) index on its channel.
    #[inline]
    fn on_channel(&self, unit: usize) -> usize {
        unit % self.units_per_channel as usize
    }

    /// GC work waits in queues (`rps`, `suspend`) rather than reserving at once.
    #[inline]
    fn queues_gc(&self) -> bool {
        self.scheduler != Scheduler::Fifo
    }

    #[inline]
    fn account(&mut self, cause: Cause, duration: u64) {
        if cause.collects() {
            self.gc_busy += duration;
        }
    }

    /// No operation will be issued before `now` from here on: queued GC that can
    /// start before `now` runs, and the channels forget past reservations.
    #[inline]
    pub fn advance(&mut self, now: u64) {
        if self.queued_ops > 0 {
            for u in 0..self.queued.len() {
                if !self.queued[u].is_empty() {
                    self.run_queued(u, now);
                }
            }
        }
        self.horizon = self.horizon.max(now);
    }

    /// Run unit `u`'s queued GC operations that can start before `until`.
    fn run_queued(&mut self, u: usize, until: u64) {
        while let Some(op) = self.queued[u].front() {
            if op.issue().max(self.unit_free[u]) >= until {
                break;
            }
            self.place_next(u);
        }
    }

    /// Take unit `u`'s oldest queued GC operation out of the queue and place it.
    fn place_next(&mut self, u: usize) {
        let op = self.queued[u].pop_front().expect("a queued operation");
        self.queued_ops -= 1;
        self.queued_ns[u] -= self.gc_op_ns(&op);
        match op {
            GcOp::Copy { issue, kind } => {
                self.place_copy(u, issue, kind);
            }
            GcOp::Erase { issue, .. } => {
                self.place_erase(u, issue);
            }
        }
    }

    /// The die time of a GC operation (channel waits aside), ns.
    fn gc_op_ns(&self, op: &GcOp) -> u64 {
        match op {
            GcOp::Copy { kind, .. } => self.copy_ns(*kind),
            GcOp::Erase { .. } => self.t_erase,
        }
    }

    /// The time of one relocation (channel waits aside), ns.
    #[inline]
    fn copy_ns(&self, kind: CopyKind) -> u64 {
        let (lead, xfer, program) = self.copy_parts(kind);
        lead + xfer + program
    }

    /// A relocation's parts, ns: until its data is ready (the array read, or a DRAM
    /// read from the write buffer), its bus slot (out and back in with ECC decode, or
    /// in only), and its program.
    #[inline]
    fn copy_parts(&self, kind: CopyKind) -> (u64, u64, u64) {
        let program = if kind.fast {
            self.t_fast_program
        } else {
            self.t_program
        };
        if kind.from_buffer {
            (self.t_dram, self.t_xfer, program)
        } else {
            (self.t_read, 2 * self.t_xfer + self.t_ecc, program)
        }
    }

    /// Queue a GC operation on unit `u`.
    fn enqueue(&mut self, u: usize, op: GcOp) {
        self.queued_ns[u] += self.gc_op_ns(&op);
        self.queued[u].push_back(op);
        self.queued_ops += 1;
    }

    /// A block on `plane` is about to be written: if its erase is still queued, run
    /// the unit's queue up to and including it.
    pub fn need_erased(&mut self, plane: u32, block: u32) {
        if !self.queues_gc() {
            return;
        }
        let u = self.unit(plane);
        let at = self.queued[u]
            .iter()
            .position(|op| matches!(op, GcOp::Erase { block: b, .. } if *b == block));
        if let Some(i) = at {
            for _ in 0..=i {
                self.place_next(u);
            }
        }
    }

    /// When a host program issued at `start` on unit `u` may begin: queued GC that
    /// starts earlier runs first, then it waits for whatever the die is doing.
    #[inline]
    fn program_start(&mut self, u: usize, start: u64) -> u64 {
        if self.queues_gc() && !self.queued[u].is_empty() {
            self.run_queued(u, start);
        }
        start.max(self.unit_free[u])
    }

    /// A host read issued at `start` began at `began`: if its die was busy with GC
    /// then, it counts as blocked for the part of the wait GC caused.
    #[inline]
    fn note_blocked(&mut self, u: usize, start: u64, began: u64) {
        if began > start && self.gc_until[u] > start {
            let wait = began.min(self.gc_until[u]) - start;
            self.blocked_reads += 1;
            self.blocked_ns += wait;
            self.blocked_max = self.blocked_max.max(wait);
        }
    }

    /// Read one page on `plane`, issued at `start`; returns when its data is ready.
    #[inline]
    pub fn read(&mut self, plane: u32, start: u64, cause: Cause) -> u64 {
        let u = self.unit(plane);
        if self.queues_gc() {
            return self.read_preempting(u, start, cause);
        }
        let s = start.max(self.unit_free[u]);
        if cause == Cause::Host {
            self.note_blocked(u, start, s);
        }
        let xe = self.read_array(u, s);
        self.unit_free[u] = xe;
        self.account(cause, self.t_read + self.t_xfer + self.t_ecc);
        xe + self.t_ecc
    }

    /// The array read on unit `u` from `s` and the transfer out; returns the
    /// transfer's end (the die is busy until then).
    #[inline]
    fn read_array(&mut self, u: usize, s: u64) -> u64 {
        let c = self.channel_of_unit(u);
        let die = self.on_channel(u);
        let xs = self.channels[c].reserve(die, s + self.t_read, self.t_xfer, self.horizon);
        let xe = xs + self.t_xfer;
        self.unit_busy[u] += xe - s;
        xe
    }

    /// A read at `start` suspends the program or erase on unit `u` that would end at
    /// `end`: the read's transfer end, when the operation resumes, and its new end.
    fn suspended_read(&mut self, u: usize, start: u64, end: u64) -> (u64, u64, u64) {
        let xe = self.read_array(u, start + self.t_suspend);
        let resume = xe + self.t_suspend;
        self.unit_busy[u] += 2 * self.t_suspend;
        (xe, resume, resume + (end - start))
    }

    /// A read with `rps` or `suspend`: it goes before GC that has not started, at the
    /// end of the GC operation in progress (`rps`), or suspends it (`suspend`, in its
    /// program or erase phase); the GC placed after it moves later by the time the
    /// read took. (Channel slots already reserved for that GC are not moved.)
    fn read_preempting(&mut self, u: usize, start: u64, cause: Cause) -> u64 {
        if !self.queued[u].is_empty() {
            self.run_queued(u, start);
        }
        let plan = &mut self.planned[u];
        while plan.front().is_some_and(|p| p.end <= start) {
            plan.pop_front();
        }
        let free = self.unit_free[u];
        let suspend = self.scheduler == Scheduler::Suspend;
        self.account(cause, self.t_read + self.t_xfer + self.t_ecc);
        if free <= start {
            let xe = self.read_array(u, start);
            self.unit_free[u] = xe;
            return xe + self.t_ecc;
        }
        let Some(&p) = self.planned[u].front() else {
            // A host operation is running: wait for it, or suspend a host program.
            let r = self.running[u];
            if suspend
                && r.end == free
                && start >= r.suspendable_from
                && r.suspensions < self.max_suspensions
            {
                let (xe, resume, end) = self.suspended_read(u, start, free);
                self.running[u] = Running {
                    suspendable_from: resume,
                    end,
                    suspensions: r.suspensions + 1,
                };
                self.unit_free[u] = end;
                return xe + self.t_ecc;
            }
            let xe = self.read_array(u, free);
            self.unit_free[u] = xe;
            return xe + self.t_ecc;
        };
        // GC is planned. Where the read goes, the first planned operation that moves
        // later, and by how much.
        let (s, xe, first_moved, delta) = if p.start >= start {
            // No GC runs at `start`: the read goes before the planned GC.
            let s = start.max(p.ready);
            let xe = self.read_array(u, s);
            (s, xe, 0, xe.saturating_sub(p.start))
        } else if suspend && start >= p.suspendable_from && p.suspensions < self.max_suspensions {
            // Suspend the GC operation in progress; it resumes after the read.
            let (xe, resume, end) = self.suspended_read(u, start, p.end);
            let q = &mut self.planned[u][0];
            q.suspensions += 1;
            q.suspendable_from = resume;
            q.end = end;
            (start + self.t_suspend, xe, 1, end - p.end)
        } else {
            // Wait for the GC operation in progress; the read goes right after it.
            let s = p.end;
            let xe = self.read_array(u, s);
            let next = match self.planned[u].get(1) {
                Some(q) => q.start,
                // A host operation may follow it at once.
                None if free > p.end => p.end,
                None => xe,
            };
            (s, xe, 1, xe.saturating_sub(next))
        };
        if cause == Cause::Host {
            self.note_blocked(u, start, s);
        }
        for q in self.planned[u].iter_mut().skip(first_moved) {
            q.ready += delta;
            q.start += delta;
            q.end += delta;
            q.suspendable_from += delta;
        }
        if delta > 0 {
            self.unit_free[u] = free + delta;
            if self.gc_until[u] > start {
                self.gc_until[u] += delta;
            }
        }
        self.unit_free[u] = self.unit_free[u].max(xe);
        xe + self.t_ecc
    }

    /// Program one page on `plane`, issued at `start`; returns when it is durable.
    #[inline]
    pub fn program(&mut self, plane: u32, start: u64, fast: bool, cause: Cause) -> u64 {
        let u = self.unit(plane);
        let s = self.program_start(u, start);
        let c = self.channel_of_unit(u);
        let die = self.on_channel(u);
        let xs = self.channels[c].reserve(die, s, self.t_xfer, self.horizon);
        let xe = xs + self.t_xfer;
        let t_prog = if fast {
            self.t_fast_program
        } else {
            self.t_program
        };
        let done = xe + t_prog;
        self.unit_busy[u] += done - xs;
        self.unit_free[u] = done;
        if self.scheduler == Scheduler::Suspend {
            self.running[u] = Running {
                suspendable_from: xe,
                end: done,
                suspensions: 0,
            };
        }
        self.account(cause, self.t_xfer + t_prog);
        done
    }

    /// Erase `block` on `plane` for GC, issued at `start`. With `fifo` it is reserved
    /// at once and its end returned; otherwise it is queued and `start` returned.
    #[inline]
    pub fn erase(&mut self, plane: u32, block: u32, start: u64, cause: Cause) -> u64 {
        let u = self.unit(plane);
        self.account(cause, self.t_erase);
        if self.queues_gc() {
            self.enqueue(
                u,
                GcOp::Erase {
                    issue: start,
                    block,
                },
            );
            return start;
        }
        self.place_erase(u, start)
    }

    fn place_erase(&mut self, u: usize, start: u64) -> u64 {
        let ready = self.unit_free[u];
        let s = start.max(ready);
        let done = s + self.t_erase;
        self.unit_busy[u] += self.t_erase;
        self.unit_free[u] = done;
        self.gc_until[u] = done;
        self.plan(u, ready, s, s, done);
        done
    }

    /// When `plane`'s die (or plane) is free for an operation issued at `now`. The
    /// channel is not consulted: a transfer is short and the bus rarely the
    /// bottleneck, so this is what write placement and background GC go by.
    #[inline]
    pub fn ready_at(&self, plane: u32, now: u64) -> u64 {
        let u = self.unit(plane);
        (self.unit_free[u] + self.queued_ns[u]).max(now)
    }

    /// Relocate a valid page to another page of the same plane (GC or refresh):
    /// array read, the page out to the controller and back in one bus slot of two
    /// transfers (ECC decode overlaps the return), then the program; from the write
    /// buffer, a DRAM read and one transfer in, then the program. With `fifo` it is
    /// reserved at once and its end returned; otherwise it is queued and `start`
    /// returned. Only GC relocations count towards the GC busy time.
    #[inline]
    pub fn copy(&mut self, plane: u32, start: u64, kind: CopyKind, cause: Cause) -> u64 {
        let u = self.unit(plane);
        let op = GcOp::Copy { issue: start, kind };
        self.account(cause, self.gc_op_ns(&op));
        if self.queues_gc() {
            self.enqueue(u, op);
            return start;
        }
        self.place_copy(u, start, kind)
    }

    /// `n` relocations on `plane` issued at `start`, one after another: the same as
    /// `n` calls of [`FlashTiming::copy`], with the unit, its channel and the times
    /// worked out once.
    #[inline]
    pub fn copies(&mut self, plane: u32, start: u64, kind: CopyKind, cause: Cause, n: u64) {
        if n == 0 {
            return;
        }
        let u = self.unit(plane);
        let op = GcOp::Copy { issue: start, kind };
        self.account(cause, n * self.gc_op_ns(&op));
        if self.queues_gc() {
            for _ in 0..n {
                self.enqueue(u, op);
            }
            return;
        }
        let c = self.channel_of_unit(u);
        let die = self.on_channel(u);
        let (lead, xfer, program) = self.copy_parts(kind);
        let horizon = self.horizon;
        let channel = &mut self.channels[c];
        let mut s = start.max(self.unit_free[u]);
        let mut busy = 0;
        for _ in 0..n {
            let xs = channel.reserve(die, s + lead, xfer, horizon);
            let done = xs + xfer + program;
            busy += done - s;
            s = done;
        }
        self.unit_busy[u] += busy;
        self.unit_free[u] = s;
        self.gc_until[u] = s;
    }

    fn place_copy(&mut self, u: usize, start: u64, kind: CopyKind) -> u64 {
        let c = self.channel_of_unit(u);
        let ready = self.unit_free[u];
        let s = start.max(ready);
        let (lead, xfer, program) = self.copy_parts(kind);
        let die = self.on_channel(u);
        let xs = self.channels[c].reserve(die, s + lead, xfer, self.horizon);
        let done = xs + xfer + program;
        self.unit_busy[u] += done - s;
        self.unit_free[u] = done;
        self.gc_until[u] = done;
        self.plan(u, ready, s, xs + xfer, done);
        done
    }

    /// Remember a GC operation placed on unit `u` (`rps`, `suspend`).
    #[inline]
    fn plan(&mut self, u: usize, ready: u64, start: u64, suspendable_from: u64, end: u64) {
        if !self.queues_gc() {
            return;
        }
        let horizon = self.horizon;
        let plan = &mut self.planned[u];
        while plan.front().is_some_and(|p| p.end <= horizon) {
            plan.pop_front();
        }
        plan.push_back(Planned {
            ready,
            start,
            end,
            suspendable_from,
            suspensions: 0,
        });
    }

    /// A DRAM access (mapping lookups of unmapped pages, trims).
    #[inline]
    pub fn dram(&self) -> u64 {
        self.t_dram
    }

    /// Firmware time to score `blocks` GC candidates.
    #[inline]
    pub fn search(&self, blocks: u64) -> u64 {
        self.t_search * blocks
    }

    /// The latest time any resource is busy until.
    pub fn busy_until(&self) -> u64 {
        let channels = self.channels.iter().map(|c| c.last_end);
        self.unit_free
            .iter()
            .copied()
            .chain(channels)
            .max()
            .unwrap_or(0)
    }

    /// Forget all reservations, queued GC and busy time (the measured phase starts at 0).
    pub fn reset(&mut self) {
        self.unit_free.fill(0);
        self.unit_busy.fill(0);
        self.gc_until.fill(0);
        self.running.fill(Running::default());
        for q in &mut self.queued {
            q.clear();
        }
        for p in &mut self.planned {
            p.clear();
        }
        self.queued_ns.fill(0);
        self.queued_ops = 0;
        for c in &mut self.channels {
            *c = ChannelTimeline::new(c.dies.len());
        }
        self.horizon = 0;
        self.gc_busy = 0;
        self.blocked_reads = 0;
        self.blocked_ns = 0;
        self.blocked_max = 0;
    }

    /// Busy times as fractions of `elapsed` ns.
    pub fn summary(&self, elapsed: u64) -> TimingSummary {
        let frac = |b: &u64| {
            if elapsed == 0 {
                0.0
            } else {
                (*b as f64 / elapsed as f64).min(1.0)
            }
        };
        TimingSummary {
            gc_busy_s: self.gc_busy as f64 / 1e9,
            channel_utilisation: self.channels.iter().map(|c| frac(&c.total)).collect(),
            die_utilisation: self.unit_busy.iter().map(frac).collect(),
            gc_blocked: GcBlocked {
                reads: self.blocked_reads,
                total_s: self.blocked_ns as f64 / 1e9,
                mean_us: if self.blocked_reads == 0 {
                    0.0
                } else {
                    self.blocked_ns as f64 / self.blocked_reads as f64 / 1e3
                },
                max_us: self.blocked_max as f64 / 1e3,
            },
        }
    }
}
