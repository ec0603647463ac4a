//! The host: application threads, a Linux-like buffer cache with its writeback daemon,
//! and the channel that tells the device which flash pages are zombies.
//!
//! ```text
//!   thread 1..N (closed loop) ─┐  read: hit, or miss ──► device read (the thread waits)
//!   or arrivals (open loop)  ──┤  write: page dirty in the cache (returns at once) ──┐
//!                              │        dirty > dirty_ratio: the writer sleeps until  │
//!                              │        writeback brings it back under               │
//!                              ▼                                                      │
//!   PageCache (CLOCK) ── evicting a dirty page writes it back (the thread waits)      │
//!        │  clean → dirty ─────────────► NotificationChannel (none/ideal/piggyback/   │
//!        │                               command) ──► zombie hints to the Device      │
//!        ▼                                                                            │
//!   flusher: wakes every dirty_writeback; writes files dirty longer than dirty_expire,│
//!   and the oldest files while dirty > dirty_background_ratio; at most queue_depth  ◄─┘
//!   writeback commands in flight
//!        ▼
//!   interface::Queue (queue_depth slots, FIFO) ──► Device::submit: completion times
//! ```
//!
//! Everything runs on one deterministic [`EventQueue`]: thread wake-ups, arrivals, the
//! flusher, writeback completions and awareness samples, ties in scheduling order. A
//! device command is processed by the FTL when it is issued (its completion time is
//! known then), and issue times never decrease, so the flash timelines are reserved in
//! time order. Notifications ride on the commands that carry them, so the device's view
//! lags the host's truth exactly as the channel dictates.

mod channel;
mod notifier;
mod page_cache;
mod placement;
mod recorded;
mod write_buffer;

pub use channel::{AwarenessMeans, NotificationChannel};
pub use notifier::{CommandAt, HostChange, Notifier, SAMPLE_EVERY};
pub use page_cache::PageCache;
pub use recorded::RecordedHost;
pub use write_buffer::HostWriteBuffer;

use crate::config::Config;
use crate::device::Device;
use crate::engine::EventQueue;
use crate::error::Result;
use crate::interface::Queue;
use crate::latency::{LatencyRecorder, LatencyReport, Throughput};
use crate::report::{AppReport, AwarenessPoint, CacheReport, NotifyReport, WritebackPages};
use crate::workload::{AppOp, AppSource};

/// What the host model adds to a report.
#[derive(Clone, Debug)]
pub struct HostOutcome {
    pub app: AppReport,
    pub cache: CacheReport,
    pub notify: NotifyReport,
    pub device_latency: LatencyReport,
    pub device_throughput: Throughput,
    /// Mean device write latency (µs) over the quarter before the last and the last.
    pub device_write_quarters_us: Option<(f64, f64)>,
    /// Simulated end of the measured phase (ns).
    pub elapsed_ns: u64,
    pub interrupted: bool,
    /// Device traffic by what the pages hold (sources that count kinds only).
    pub traffic: Option<crate::fs::TrafficByKind>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// A closed-loop thread is ready for its next operation.
    Thread(u32),
    /// The next open-loop arrival is due.
    Arrival,
    Flusher,
    WritebackDone,
    /// Pages an application wrote back and waited for have reached the device:
    /// throttled writers may go on.
    SyncWritebackDone,
    Sample,
}

/// Why a page is written back.
#[derive(Clone, Copy)]
enum Reason {
    Expire,
    Background,
    Evict,
    Sync,
}

/// Hooks the measured loop gives the host model: progress and stop, and checks.
pub trait Observer {
    /// Called after each device command; false stops the run.
    fn after_command(&mut self, device: &mut Device) -> Result<bool>;
    /// The workload's progress (fraction done, when known), before each event.
    fn progress(&mut self, _fraction: Option<f64>) {}
}

/// The host model running over one FTL.
pub struct HostSim<'a> {
    device: &'a mut Device,
    cache: PageCache,
    notifier: Notifier,
    events: EventQueue<Event>,
    queue: Queue,
    /// The NVMe link's time per command (interface.submit_us, complete_us, link_mb_s).
    link: crate::interface::Link,
    threads: u32,
    open_loop: bool,
    request_ns: u64,
    max_write: u32,
    writeback_ns: u64,
    expire_ns: u64,
    background_limit: u64,
    dirty_limit: u64,
    cache_page_bytes: u64,
    // Writeback state.
    sweep: Option<page_cache::Sweep>,
    sweep_reason: Reason,
    inflight: u32,
    expire_armed: bool,
    /// Threads sleeping until dirty pages fall under the limit, with when they slept.
    throttled: Vec<(u32, u64)>,
    /// Pages of application writebacks (`AppOp::WriteBack`) still in flight, by
    /// completion time: like dirty pages, they count against `dirty_ratio` (Linux counts
    /// pages under writeback), as the flusher's few commands in flight need not.
    sync_writeback: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64)>>,
    sync_writeback_pages: u64,
    /// The content value of each cached page (empty until a write carries one).
    values: Vec<u64>,
    /// What each cached page holds ([`crate::workload::IoKind`] as `u8`), when the
    /// source counts kinds; empty otherwise.
    kinds: Vec<u8>,
    /// The placement identifier of each write (`host.placement`).
    ids: placement::HostIds,
    traffic: crate::fs::TrafficByKind,
    // Accounting.
    app: LatencyRecorder,
    device_latency: LatencyRecorder,
    app_counts: AppReport,
    cache_counts: CacheReport,
    awareness: Vec<AwarenessPoint>,
    sample_ns: u64,
    dirty_sum: f64,
    last_done: u64,
    app_end: u64,
    /// False once the observer asked to stop.
    commands_ok: bool,
}

impl<'a> HostSim<'a> {
    pub fn new(cfg: &Config, device: &'a mut Device) -> Self {
        let page = cfg.flash.page_size.bytes();
        let logical = device.logical_pages();
        let h = &cfg.host;
        let cache_pages = h.cache.bytes() / page;
        let file_pages = h.file_size.bytes().div_ceil(page);
        let qd = cfg.interface.queue_depth;
        let threads = if h.threads == 0 { qd } else { h.threads };
        let latency = || LatencyReport {
            read: Default::default(),
            write: Default::default(),
            all: Default::default(),
            gc_blocked: None,
        };
        HostSim {
            cache: PageCache::new(cache_pages, logical, file_pages),
            notifier: Notifier::new(cfg),
            events: EventQueue::new(),
            queue: Queue::new(qd),
            link: crate::interface::Link::new(cfg),
            threads,
            open_loop: h.threads == 0,
            request_ns: (h.request_us * 1e3) as u64,
            max_write: (h.max_write.bytes() / page).max(1) as u32,
            writeback_ns: (h.dirty_writeback_s * 1e9) as u64,
            expire_ns: (h.dirty_expire_s * 1e9) as u64,
            background_limit: (h.dirty_background_ratio * cache_pages as f64) as u64,
            dirty_limit: (h.dirty_ratio * cache_pages as f64) as u64,
            cache_page_bytes: page,
            sweep: None,
            sweep_reason: Reason::Background,
            inflight: 0,
            expire_armed: false,
            throttled: Vec::new(),
            sync_writeback: Default::default(),
            sync_writeback_pages: 0,
            values: Vec::new(),
            kinds: Vec::new(),
            ids: placement::HostIds::new(
                h.placement,
                logical,
                file_pages,
                // host.placement needs FDP (the config check), so this is always set.
                cfg.fdp.placement_ids().unwrap_or(1),
            ),
            traffic: Default::default(),
            app: LatencyRecorder::default(),
            device_latency: LatencyRecorder::default(),
            app_counts: AppReport {
                threads: if h.threads == 0 { 0 } else { threads },
                requests: 0,
                read_pages: 0,
                write_pages: 0,
                sync_write_pages: 0,
                trim_pages: 0,
                transactions: 0,
                tps: 0.0,
                elapsed_s: 0.0,
                throttled_s: 0.0,
                latency: latency(),
            },
            cache_counts: CacheReport {
                capacity_pages: cache_pages.min(logical),
                read_hits: 0,
                read_misses: 0,
                write_hits: 0,
                write_misses: 0,
                absorbed_writes: 0,
                writeback_pages: WritebackPages::default(),
                writeback_commands: 0,
                dirty_pages_mean: 0.0,
                dirty_pages_end: 0,
            },
            awareness: Vec::new(),
            sample_ns: ((h.dirty_writeback_s * 1e9) as u64 / 5).max(1),
            dirty_sum: 0.0,
            last_done: 0,
            app_end: 0,
            commands_ok: true,
            device,
        }
    }

    /// Run `source` to its end (or until the observer stops it).
    pub fn run(
        mut self,
        source: &mut dyn AppSource,
        observer: &mut dyn Observer,
    ) -> Result<HostOutcome> {
        if let Some(n) = source.threads() {
            self.threads = n.max(1);
            self.open_loop = false;
        }
        if source.counts_kinds() {
            self.kinds = vec![0; self.device.logical_pages() as usize];
        }
        // Open loop needs arrival times: a source without them runs closed loop.
        let mut first = source.next_op(0, 0)?;
        if self.open_loop && first.is_some_and(|(_, at)| at.is_none()) {
            self.open_loop = false;
        }
        let mut pending_arrival: Option<(AppOp, u64)> = None;
        let mut active = if self.open_loop {
            if let Some((op, at)) = first.take() {
                let at = at.unwrap_or(0);
                pending_arrival = Some((op, at));
                self.events.push(at, Event::Arrival);
            }
            u32::from(pending_arrival.is_some())
        } else {
            for t in 0..self.threads {
                self.events.push(0, Event::Thread(t));
            }
            self.threads
        };
        self.events.push(self.writeback_ns, Event::Flusher);
        self.events.push(0, Event::Sample);
        let mut interrupted = false;
        while active > 0 {
            let Some((now, event)) = self.events.pop() else {
                break;
            };
            observer.progress(source.progress());
            let go_on = match event {
                Event::Thread(t) => match first
                    .take()
                    .map_or_else(|| source.next_op(t as usize, now), |f| Ok(Some(f)))?
                {
                    Some((op, _)) => {
                        let daemon = matches!(op, AppOp::Sleep { .. });
                        let (done, sleeps) = self.execute(op, now, observer)?;
                        if sleeps {
                            self.throttled.push((t, done));
                        } else {
                            self.events.push(done, Event::Thread(t));
                        }
                        if !daemon {
                            self.app_end = self.app_end.max(done);
                        }
                        self.commands_ok
                    }
                    None => {
                        active -= 1;
                        true
                    }
                },
                Event::Arrival => {
                    if let Some((op, _)) = pending_arrival.take() {
                        let (done, _) = self.execute(op, now, observer)?;
                        self.app_end = self.app_end.max(done);
                    }
                    match source.next_op(0, now)? {
                        Some((op, at)) => {
                            let at = at.unwrap_or(now).max(now);
                            pending_arrival = Some((op, at));
                            self.events.push(at, Event::Arrival);
                        }
                        None => active = 0,
                    }
                    self.commands_ok
                }
                Event::Flusher => {
                    self.expire_armed = true;
                    self.wake_throttled(now);
                    self.pump(now, observer)?;
                    self.events.push(now + self.writeback_ns, Event::Flusher);
                    self.commands_ok
                }
                Event::WritebackDone => {
                    self.inflight -= 1;
                    self.wake_throttled(now);
                    self.pump(now, observer)?;
                    self.commands_ok
                }
                Event::SyncWritebackDone => {
                    self.wake_throttled(now);
                    true
                }
                Event::Sample => {
                    self.sample(now);
                    self.events.push(now + self.sample_ns, Event::Sample);
                    true
                }
            };
            if !go_on {
                interrupted = true;
                break;
            }
        }
        Ok(self.finish(interrupted))
    }
}

mod engine;
