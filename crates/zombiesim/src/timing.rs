//! The NAND timing model: per-resource timelines reserved first come, first served.
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
//! Operations are reserved in the order the simulator issues them, which is the
//! order of issue times, so the model is deterministic. A die runs its operations
//! first come, first served: GC reserves the die it cleans, and host operations
//! issued after it on that die wait behind it (foreground GC, no preemption). A
//! channel is shared by many dies, so it keeps its future busy intervals and a
//! transfer takes the earliest gap that fits: a transfer reserved far ahead (behind
//! a long GC on one die) does not block the other dies on the channel.
//! Times are integer nanoseconds.

use crate::config::Config;
use crate::flash::Geometry;
use crate::stats::Cause;
use serde::Serialize;
use std::collections::VecDeque;

/// A channel: the bus transfers of each die on it, each die's in time order (a
/// die runs its operations first come, first served, so its transfers only ever
/// append). A transfer takes the earliest time at or after its request when no
/// other die's transfer overlaps it.
#[derive(Clone, Debug)]
struct ChannelTimeline {
    dies: Vec<VecDeque<(u64, u64)>>,
    total: u64,
    /// The end of the latest transfer reserved on the channel.
    last_end: u64,
    /// The horizon the lists were last pruned at.
    pruned: u64,
}

impl ChannelTimeline {
    fn new(dies: usize) -> Self {
        ChannelTimeline {
            dies: vec![VecDeque::new(); dies],
            total: 0,
            last_end: 0,
            pruned: 0,
        }
    }

    /// The earliest start at or after `at` when `len` ns are free on the bus for
    /// `die` (whose own transfers all end by `at`). Transfers that end by `horizon`
    /// are forgotten.
    #[inline]
    fn earliest(&mut self, die: usize, at: u64, len: u64, horizon: u64) -> u64 {
        if horizon > self.pruned {
            for list in self.dies.iter_mut() {
                while list.front().is_some_and(|&(_, e)| e <= horizon) {
                    list.pop_front();
                }
            }
            self.pruned = horizon;
        }
        // Nothing is reserved from `at` on: the bus is free.
        if at >= self.last_end {
            return at;
        }
        let mut t = at;
        loop {
            let mut moved = false;
            for (d, list) in self.dies.iter().enumerate() {
                if d == die {
                    continue;
                }
                // Nothing overlaps when everything ends by `t` or starts after the window.
                match (list.front(), list.back()) {
                    (Some(&(first, _)), Some(&(_, last))) if last > t && first < t + len => {}
                    _ => continue,
                }
                let i = list.partition_point(|&(_, e)| e <= t);
                if let Some(&(s, e)) = list.get(i) {
                    if s < t + len {
                        t = e;
                        moved = true;
                    }
                }
            }
            if !moved {
                return t;
            }
        }
    }

    /// Reserve `len` ns for `die` (its index on this channel) at or after `at`.
    #[inline]
    fn reserve(&mut self, die: usize, at: u64, len: u64, horizon: u64) -> u64 {
        let start = self.earliest(die, at, len, horizon);
        let list = &mut self.dies[die];
        debug_assert!(
            list.back().is_none_or(|&(_, e)| e <= start),
            "a die's transfers are in order"
        );
        match list.back_mut() {
            Some(last) if last.1 == start => last.1 = start + len,
            _ => list.push_back((start, start + len)),
        }
        self.total += len;
        self.last_end = self.last_end.max(start + len);
        start
    }
}

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
    planes_per_unit: u32,
    planes_per_channel: u32,
    unit_free: Vec<u64>,
    unit_busy: Vec<u64>,
    channels: Vec<ChannelTimeline>,
    units_per_channel: u32,
    /// No operation is issued before this time any more (the current request's).
    horizon: u64,
    /// Accumulated time of GC operations (reads, programs, erases), ns.
    gc_busy: u64,
}

/// Timing figures for the report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TimingSummary {
    /// Accumulated time of GC reads, programs and erases (003's "GC latency"), s.
    pub gc_busy_s: f64,
    /// Busy fraction of each channel over the elapsed time.
    pub channel_utilisation: Vec<f64>,
    /// Busy fraction of each die (or plane, with multi-plane) over the elapsed time.
    pub die_utilisation: Vec<f64>,
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
            planes_per_unit,
            planes_per_channel,
            unit_free: vec![0; units],
            unit_busy: vec![0; units],
            channels: vec![
                ChannelTimeline::new((planes_per_channel / planes_per_unit) as usize);
                geo.channels as usize
            ],
            units_per_channel: planes_per_channel / planes_per_unit,
            horizon: 0,
            gc_busy: 0,
        }
    }

    #[inline]
    fn unit(&self, plane: u32) -> usize {
        (plane / self.planes_per_unit) as usize
    }

    #[inline]
    fn channel(&self, plane: u32) -> usize {
        (plane / self.planes_per_channel) as usize
    }

    /// A die's (or plane's) index on its channel.
    #[inline]
    fn on_channel(&self, unit: usize) -> usize {
        unit % self.units_per_channel as usize
    }

    #[inline]
    fn account(&mut self, cause: Cause, duration: u64) {
        if cause == Cause::Gc {
            self.gc_busy += duration;
        }
    }

    /// No operation will be issued before `now` from here on (lets the channels
    /// forget past reservations).
    #[inline]
    pub fn advance(&mut self, now: u64) {
        self.horizon = self.horizon.max(now);
    }

    /// Read one page on `plane`, issued at `start`; returns when its data is ready.
    #[inline]
    pub fn read(&mut self, plane: u32, start: u64, cause: Cause) -> u64 {
        let (u, c) = (self.unit(plane), self.channel(plane));
        let s = start.max(self.unit_free[u]);
        let array_done = s + self.t_read;
        let die = self.on_channel(u);
        let xs = self.channels[c].reserve(die, array_done, self.t_xfer, self.horizon);
        let xe = xs + self.t_xfer;
        self.unit_busy[u] += xe - s;
        self.unit_free[u] = xe;
        self.account(cause, self.t_read + self.t_xfer + self.t_ecc);
        xe + self.t_ecc
    }

    /// Program one page on `plane`, issued at `start`; returns when it is durable.
    #[inline]
    pub fn program(&mut self, plane: u32, start: u64, fast: bool, cause: Cause) -> u64 {
        let (u, c) = (self.unit(plane), self.channel(plane));
        let die = self.on_channel(u);
        let xs =
            self.channels[c].reserve(die, start.max(self.unit_free[u]), self.t_xfer, self.horizon);
        let xe = xs + self.t_xfer;
        let t_prog = if fast {
            self.t_fast_program
        } else {
            self.t_program
        };
        let done = xe + t_prog;
        self.unit_busy[u] += done - xs;
        self.unit_free[u] = done;
        self.account(cause, self.t_xfer + t_prog);
        done
    }

    /// Erase a block on `plane`, issued at `start`; returns when it is done.
    #[inline]
    pub fn erase(&mut self, plane: u32, start: u64, cause: Cause) -> u64 {
        let u = self.unit(plane);
        let s = start.max(self.unit_free[u]);
        let done = s + self.t_erase;
        self.unit_busy[u] += self.t_erase;
        self.unit_free[u] = done;
        self.account(cause, self.t_erase);
        done
    }

    /// When `plane`'s die (or plane) is free for an operation issued at `now`. The
    /// channel is not consulted: a transfer is short and the bus rarely the
    /// bottleneck, so this is what write placement and background GC go by.
    #[inline]
    pub fn ready_at(&self, plane: u32, now: u64) -> u64 {
        self.unit_free[self.unit(plane)].max(now)
    }

    /// Copy a valid page to another page of the same plane (GC): array read, the
    /// page out to the controller and back in one bus slot of two transfers (ECC
    /// decode overlaps the return), then the program. Returns when it is durable.
    #[inline]
    pub fn copy(&mut self, plane: u32, start: u64) -> u64 {
        let (u, c) = (self.unit(plane), self.channel(plane));
        let s = start.max(self.unit_free[u]);
        let array_done = s + self.t_read;
        let xfer = 2 * self.t_xfer + self.t_ecc;
        let die = self.on_channel(u);
        let xs = self.channels[c].reserve(die, array_done, xfer, self.horizon);
        let done = xs + xfer + self.t_program;
        self.unit_busy[u] += done - s;
        self.unit_free[u] = done;
        self.gc_busy += self.t_read + xfer + self.t_program;
        done
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

    /// Forget all reservations and busy time (the measured phase starts at 0).
    pub fn reset(&mut self) {
        self.unit_free.fill(0);
        self.unit_busy.fill(0);
        for c in &mut self.channels {
            *c = ChannelTimeline::new(c.dies.len());
        }
        self.horizon = 0;
        self.gc_busy = 0;
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(multi_plane: bool) -> FlashTiming {
        let mut cfg = Config::preset("default").unwrap();
        cfg.flash.planes_per_die = 2;
        cfg.timing.enabled = true;
        cfg.timing.read_us = 50.0;
        cfg.timing.program_us = 500.0;
        cfg.timing.erase_us = 3000.0;
        cfg.timing.channel_mb_s = 400.0; // 4096 B -> 10.24 µs
        cfg.timing.ecc_us = 2.0;
        cfg.timing.multi_plane = multi_plane;
        let geo = Geometry::new(&cfg).unwrap();
        FlashTiming::new(&cfg, &geo)
    }

    #[test]
    fn a_read_is_array_time_transfer_and_ecc() {
        let mut t = timing(true);
        assert_eq!(
            t.read(0, 1_000, Cause::Host),
            1_000 + 50_000 + 10_240 + 2_000
        );
    }

    #[test]
    fn a_read_behind_an_erase_waits_for_it() {
        let mut t = timing(true);
        let erased = t.erase(0, 0, Cause::Gc);
        assert_eq!(erased, 3_000_000);
        assert_eq!(
            t.read(0, 100, Cause::Host),
            3_000_000 + 50_000 + 10_240 + 2_000
        );
        // Another die on the same channel is not delayed: its transfer fits in the
        // gap before the transfer reserved behind the erase.
        assert_eq!(t.read(2, 100, Cause::Host), 100 + 50_000 + 10_240 + 2_000);
        // A transfer that does not fit in a gap goes after the busy interval.
        let late = t.read(3, 3_050_000 - 60_000, Cause::Host);
        assert_eq!(late, 3_060_240 + 10_240 + 2_000);
        assert_eq!(t.summary(3_000_000).gc_busy_s, 0.003);
    }

    #[test]
    fn planes_share_a_die_unless_multi_plane() {
        let mut single = timing(false);
        let mut multi = timing(true);
        let a = single.program(0, 0, false, Cause::Host);
        let b = single.program(1, 0, false, Cause::Host);
        assert!(
            b >= a + 500_000,
            "plane 1 waits for plane 0 on the same die"
        );
        let a = multi.program(0, 0, false, Cause::Host);
        let b = multi.program(1, 0, false, Cause::Host);
        assert_eq!(b, a + 10_240, "only the shared channel serialises");
    }

    #[test]
    fn channel_transfers_fill_gaps_between_other_dies_transfers() {
        let mut c = ChannelTimeline::new(2);
        assert_eq!(c.reserve(0, 100, 10, 0), 100);
        assert_eq!(c.reserve(0, 200, 10, 0), 200);
        // Die 1 asks for 95: overlaps die 0's [100, 110), goes after it.
        assert_eq!(c.reserve(1, 95, 10, 0), 110);
        // Die 1 asks for 120: free until die 0's [200, 210).
        assert_eq!(c.reserve(1, 120, 10, 0), 120);
        // Die 1 may take [130, 200) but not 71 ns from 130: that would overlap die 0's
        // [200, 210), so it goes after it.
        assert_eq!(c.clone().earliest(1, 130, 70, 0), 130);
        assert_eq!(c.clone().earliest(1, 130, 71, 0), 210);
        // Die 1 asks for 195 with 10 ns: must pass die 0's [200, 210).
        assert_eq!(c.reserve(1, 195, 10, 0), 210);
        assert_eq!(c.total, 50);
        // Everything ending by the horizon is forgotten.
        assert_eq!(c.reserve(0, 300, 10, 250), 300);
        assert_eq!(c.dies[0].len(), 1);
        assert_eq!(c.dies[1].len(), 0);
    }

    #[test]
    fn fast_programs_are_faster() {
        let mut t = timing(true);
        let normal = t.program(0, 0, false, Cause::Host);
        let fast = t.program(2, 0, true, Cause::Host);
        assert!(fast < normal);
    }
}
