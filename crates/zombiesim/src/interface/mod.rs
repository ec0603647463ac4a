//! The host interface in timing mode: when each command is issued, and its latency.
//!
//! ```text
//!  closed loop (synthetic workloads, or interface.replay = "closed"):
//!      queue_depth requests outstanding; the next is issued when the earliest completes
//!  open loop (traces with timestamps, interface.replay = "open"):
//!      issued at arrival / speed, or when a queue slot frees if queue_depth are outstanding
//!  non-queued commands (a notification command, SATA TRIM-like): wait for every
//!      outstanding command, and nothing is issued until they are done
//!
//!  latency = completion − arrival   (closed loop: arrival = issue)
//!  a command reaches the controller after the link's submission and write data, and
//!  the host sees it complete after the read data and the completion entry (link.rs)
//! ```
//!
//! [`Queue`] is the one queue-depth model: the device-level run loop
//! ([`HostInterface`]) and the host model both issue through it. Issue times never
//! decrease, so the flash timelines are reserved in time order.

mod arbiter;
mod link;

pub use arbiter::Arbiter;
pub use link::{payload_bytes, Link};

use crate::config::{Config, Replay};
use crate::latency::{LatencyRecorder, LatencyReport, Throughput};
use crate::workload::{Op, Request};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Command slots of the device interface, issued in FIFO order.
#[derive(Debug)]
pub struct Queue {
    depth: usize,
    /// Completion times of the commands in flight.
    outstanding: BinaryHeap<Reverse<u64>>,
    last_issue: u64,
}

impl Queue {
    /// A queue of `depth` slots (at least 1).
    pub fn new(depth: u32) -> Self {
        Queue {
            depth: depth.max(1) as usize,
            outstanding: BinaryHeap::new(),
            last_issue: 0,
        }
    }

    /// Slots of the queue.
    pub fn depth(&self) -> u32 {
        self.depth as u32
    }

    /// When a command submitted at `now` is issued: once a slot is free, and never
    /// before an earlier command.
    #[inline]
    pub fn issue(&mut self, now: u64) -> u64 {
        while self.outstanding.peek().is_some_and(|Reverse(t)| *t <= now) {
            self.outstanding.pop();
        }
        let mut at = now.max(self.last_issue);
        if self.outstanding.len() >= self.depth {
            let Reverse(t) = self.outstanding.pop().expect("queue is full");
            at = at.max(t);
        }
        self.last_issue = at;
        at
    }

    /// The command issued last completes at `done`: it holds its slot until then.
    #[inline]
    pub fn complete(&mut self, done: u64) {
        self.outstanding.push(Reverse(done));
    }

    /// A non-queued command submitted at `now` that takes `duration`: it starts once
    /// every outstanding command has completed, and nothing is issued until it is
    /// done. Returns when it is done.
    pub fn barrier(&mut self, now: u64, duration: u64) -> u64 {
        let drained = self
            .outstanding
            .drain()
            .map(|Reverse(t)| t)
            .fold(now.max(self.last_issue), u64::max);
        let done = drained + duration;
        self.last_issue = done;
        self.outstanding.push(Reverse(done));
        done
    }
}

/// Issues a request stream to the device and records its latencies (the run loop
/// without a host model).
pub struct HostInterface {
    open: bool,
    speed: f64,
    page_size: u64,
    queue: Queue,
    link: Link,
    /// The issue time of the latest request.
    clock: u64,
    last_done: u64,
    latency: LatencyRecorder,
}

impl HostInterface {
    pub fn new(cfg: &Config) -> Self {
        HostInterface {
            open: cfg.interface.replay == Replay::Open,
            speed: cfg.interface.speed,
            page_size: cfg.flash.page_size.bytes(),
            queue: Queue::new(cfg.interface.queue_depth),
            link: Link::new(cfg),
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
                self.clock = self.queue.issue(arrival);
                (self.clock, arrival)
            }
            None => {
                self.clock = self.queue.issue(self.clock);
                (self.clock, self.clock)
            }
        }
    }

    fn bytes(&self, req: &Request) -> u64 {
        payload_bytes(req.op, req.pages, self.page_size)
    }

    /// `req`, issued by the host at `issue`: when the controller has it with its data.
    #[inline]
    pub fn to_device(&mut self, req: &Request, issue: u64) -> u64 {
        let bytes = self.bytes(req);
        self.link.to_device(req.op, bytes, issue)
    }

    /// `req`, which arrived at `arrival`, was done on the device at `done`.
    #[inline]
    pub fn complete(&mut self, req: &Request, arrival: u64, done: u64) {
        let bytes = self.bytes(req);
        let done = self.link.to_host(req.op, bytes, done);
        self.release(done);
        self.latency
            .record(req.op == Op::Read, done.saturating_sub(arrival), bytes);
    }

    /// The command issued last (a request, or a flush, which has no latency figure
    /// of its own) completed at `done`: it held its queue slot until then.
    #[inline]
    pub fn release(&mut self, done: u64) {
        self.queue.complete(done);
        self.last_done = self.last_done.max(done);
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

    /// Mean write latency (µs) over the quarter of the writes before the last, and the last.
    pub fn write_quarters_us(&self) -> Option<(f64, f64)> {
        self.latency.write_quarters_us()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_issues_when_the_earliest_completes() {
        let mut q = Queue::new(2);
        assert_eq!(q.issue(0), 0);
        q.complete(100);
        assert_eq!(q.issue(10), 10);
        q.complete(50);
        // Both slots held: the next waits for the earlier completion (50).
        assert_eq!(q.issue(20), 50);
        q.complete(70);
        // Never issued before an earlier command.
        assert_eq!(q.issue(0), 70);
    }

    #[test]
    fn a_barrier_waits_for_every_outstanding_command() {
        let mut q = Queue::new(4);
        q.issue(0);
        q.complete(300);
        q.issue(5);
        q.complete(200);
        assert_eq!(q.barrier(10, 40), 340);
        assert_eq!(
            q.issue(20),
            340,
            "nothing is issued before the barrier is done"
        );
    }
}
