//! The host interface in timing mode: when each request is issued, and its latency.
//!
//! ```text
//!  closed loop (synthetic workloads, or interface.replay = "closed"):
//!      queue_depth requests outstanding; the next is issued when the earliest completes
//!  open loop (traces with timestamps, interface.replay = "open"):
//!      issued at arrival / speed, or when a queue slot frees if queue_depth are outstanding
//!
//!  latency = completion − arrival   (closed loop: arrival = issue)
//! ```
//!
//! Outstanding requests sit in the deterministic [`EventQueue`] by completion time.
//! Issue times never decrease, so the flash timelines are reserved in time order.

use crate::config::{Config, Replay};
use crate::engine::EventQueue;
use crate::latency::{LatencyRecorder, LatencyReport, Throughput};
use crate::workload::{Op, Request};

/// Issues requests and records their latencies.
pub struct HostInterface {
    open: bool,
    speed: f64,
    queue_depth: usize,
    page_size: u64,
    outstanding: EventQueue<()>,
    clock: u64,
    last_done: u64,
    latency: LatencyRecorder,
}

impl HostInterface {
    pub fn new(cfg: &Config) -> Self {
        HostInterface {
            open: cfg.interface.replay == Replay::Open,
            speed: cfg.interface.speed,
            queue_depth: cfg.interface.queue_depth as usize,
            page_size: cfg.flash.page_size.bytes(),
            outstanding: EventQueue::new(),
            clock: 0,
            last_done: 0,
            latency: LatencyRecorder::default(),
        }
    }

    /// When `req` is issued to the device, and when it arrived (ns).
    #[inline]
    pub fn issue(&mut self, req: &Request) -> (u64, u64) {
        match req.arrival_ns.filter(|_| self.open) {
            Some(t) => {
                let arrival = (t as f64 / self.speed) as u64;
                while self
                    .outstanding
                    .peek_time()
                    .is_some_and(|done| done <= arrival)
                {
                    self.outstanding.pop();
                }
                let mut at = arrival.max(self.clock);
                if self.outstanding.len() >= self.queue_depth {
                    let (done, ()) = self.outstanding.pop().expect("queue is full");
                    at = at.max(done);
                }
                self.clock = at;
                (at, arrival)
            }
            None => {
                if self.outstanding.len() >= self.queue_depth {
                    let (done, ()) = self.outstanding.pop().expect("queue is full");
                    self.clock = self.clock.max(done);
                }
                (self.clock, self.clock)
            }
        }
    }

    /// `req`, which arrived at `arrival`, completed at `done`.
    #[inline]
    pub fn complete(&mut self, req: &Request, arrival: u64, done: u64) {
        self.outstanding.push(done, ());
        self.last_done = self.last_done.max(done);
        let bytes = if req.op == Op::Trim {
            0
        } else {
            req.pages as u64 * self.page_size
        };
        self.latency
            .record(req.op == Op::Read, done.saturating_sub(arrival), bytes);
    }

    /// Simulated time from 0 to the last completion (ns).
    pub fn elapsed(&self) -> u64 {
        self.last_done
    }

    pub fn latency(&self) -> LatencyReport {
        self.latency.report()
    }

    pub fn throughput(&self) -> Throughput {
        self.latency.throughput(self.last_done)
    }
}
