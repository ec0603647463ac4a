//! The host-side write buffer of block requests (003 §3.1: a 128 MB LRU buffer above
//! the device), for traces and synthetic block workloads without the host model.
//!
//! ```text
//!   block request ─► write L: hit ─► absorbed (L was clean? it is dirty again: notify)
//!                 │           miss ─► full? evict the LRU page(s); a dirty victim is
//!                 │                   written to the device (coalesced runs, one command
//!                 │                   each); then L is buffered dirty: notify
//!                 ├► read L: hit ─► served from host DRAM; miss ─► device read (not buffered)
//!                 ├► trim L ─► dropped here, trimmed on the device
//!                 └► flush ─► every dirty page written to the device, then a device flush
//!   notify (clean → dirty) ─► NotificationChannel (none / ideal / piggyback / command):
//!       the device learns L is host-shadow; the write of L itself tells it L left the host
//! ```
//!
//! The buffer is the device layer's [`WriteBuffer`] (the same replacement policies),
//! volatile. It is a deliberately plain model of a block-level write buffer: no
//! writeback daemon, no dirty limits (that is the host model's page cache, `host.cache`).

use super::notifier::{CommandAt, Notifier};
use crate::config::{Config, DeviceConfig};
use crate::device::{
    BufferCounters, BufferReport, Command, Destaged, Device, Payload, WriteBuffer, WriteHint,
    NO_VALUE,
};
use crate::error::Result;
use crate::report::NotifyReport;
use crate::workload::Op;

/// The host write buffer and its notification channel.
pub struct HostWriteBuffer {
    buffer: WriteBuffer,
    notifier: Notifier,
    /// Counters when the measured phase began.
    start: BufferCounters,
    dram_ns: u64,
    /// Reused lists: dirty victims, values of a run.
    writebacks: Vec<Destaged>,
    values: Vec<u64>,
}

impl HostWriteBuffer {
    /// The buffer `cfg.host.buffer` describes, or `None` without one.
    pub fn new(cfg: &Config) -> Option<Self> {
        let page = cfg.flash.page_size.bytes();
        let pages = cfg.host.buffer.bytes() / page;
        (pages > 0).then(|| {
            let dc = DeviceConfig {
                buffer: cfg.host.buffer,
                buffer_policy: cfg.host.buffer_policy,
                ..DeviceConfig::default()
            };
            HostWriteBuffer {
                buffer: WriteBuffer::new(&dc, pages, cfg.flash.pages_per_block),
                notifier: Notifier::new(cfg),
                start: BufferCounters::default(),
                dram_ns: cfg.timing.dram_ns.round() as u64,
                writebacks: Vec::new(),
                values: Vec::new(),
            }
        })
    }

    /// One block request issued at `issue`: returns when it completes.
    pub fn request(
        &mut self,
        device: &mut Device,
        issue: u64,
        op: Op,
        lpn: u64,
        pages: u32,
        payload: Payload,
    ) -> Result<u64> {
        let end = lpn + pages as u64;
        let mut done = issue;
        match op {
            Op::Write => {
                for (i, l) in (lpn..end).enumerate() {
                    let v = payload.value(i).unwrap_or(NO_VALUE);
                    let was_dirty = match self.buffer.absorb(l, v, WriteHint::NONE) {
                        Some(was_dirty) => was_dirty,
                        None => {
                            self.buffer.make_room(&mut self.writebacks);
                            self.buffer.insert_dirty(l, v, WriteHint::NONE);
                            false
                        }
                    };
                    if !was_dirty {
                        self.dirtied(device, l, issue)?;
                    }
                }
                done = done.max(issue + pages as u64 * self.dram_ns);
                done = done.max(self.write_back(device, issue)?);
                // The next write that misses will most likely send this page down.
                if let Some(next) = self.buffer.next_victim() {
                    device.prefetch_write(next);
                }
            }
            Op::Read => {
                let mut run: Option<(u64, u32)> = None;
                let mut hits = 0u64;
                for l in lpn..end {
                    if self.buffer.read(l) {
                        hits += 1;
                        if let Some((s, n)) = run.take() {
                            done = done.max(self.submit(
                                device,
                                issue,
                                Command::new(Op::Read, s, n),
                            )?);
                        }
                    } else {
                        run = match run {
                            Some((s, n)) => Some((s, n + 1)),
                            None => Some((l, 1)),
                        };
                    }
                }
                if let Some((s, n)) = run {
                    done = done.max(self.submit(device, issue, Command::new(Op::Read, s, n))?);
                }
                done = done.max(issue + hits * self.dram_ns);
            }
            Op::Trim => {
                for l in lpn..end {
                    self.buffer.discard(l);
                }
                done = done.max(self.submit(device, issue, Command::new(Op::Trim, lpn, pages))?);
            }
            Op::Flush => done = done.max(self.flush(device, issue)?),
            Op::Dirty(_) | Op::Clean(_) => {
                return Err(crate::Error::config(
                    "host.buffer",
                    "a notified trace records its host's own buffers; a host write buffer above the device cannot replay it (set host.buffer = 0)",
                ))
            }
        }
        self.requests_sample(device);
        Ok(done)
    }

    /// Write every dirty page to the device, then flush the device; returns when done.
    pub fn flush(&mut self, device: &mut Device, issue: u64) -> Result<u64> {
        self.buffer.flush(&mut self.writebacks);
        let done = self.write_back(device, issue)?;
        let flushed = device.submit(issue, &Command::new(Op::Flush, 0, 0))?;
        Ok(done.max(flushed))
    }

    /// A restart (003 §3.3, as after a power failure): everything buffered is gone,
    /// dirty pages included (counted as lost in the report).
    pub fn restart(&mut self) {
        let mut lost = Vec::new();
        self.buffer.power_loss(&mut lost);
    }

    /// Page `lpn` went clean → dirty here: the channel learns it.
    fn dirtied(&mut self, device: &mut Device, lpn: u64, issue: u64) -> Result<()> {
        let host = &self.buffer;
        let at = CommandAt::Issue(issue);
        self.notifier
            .dirtied(device, lpn, |l| host.is_dirty(l), at)
            .map(|_| ())
    }

    /// Submit one device command at `issue`, carrying piggybacked hints.
    fn submit(&mut self, device: &mut Device, issue: u64, cmd: Command) -> Result<u64> {
        let host = &self.buffer;
        self.notifier
            .submit(device, issue, cmd, |l| host.is_dirty(l))
    }

    /// Write the pages evicted or flushed (in `writebacks`) to the device, one
    /// command per run of consecutive pages; returns when the last completes.
    fn write_back(&mut self, device: &mut Device, issue: u64) -> Result<u64> {
        let mut done = issue;
        if self.writebacks.is_empty() {
            return Ok(done);
        }
        let mut pages = std::mem::take(&mut self.writebacks);
        pages.sort_unstable_by_key(|d| d.lpn);
        let mut values = std::mem::take(&mut self.values);
        let mut i = 0;
        let mut result = Ok(());
        while i < pages.len() {
            let first = pages[i].lpn;
            let mut n = 1;
            while i + n < pages.len() && pages[i + n].lpn == first + n as u64 {
                n += 1;
            }
            values.clear();
            values.extend(pages[i..i + n].iter().map(|d| d.value));
            let payload = if values.iter().all(|&v| v == NO_VALUE) {
                Payload::Unknown
            } else {
                Payload::PerPage(&values)
            };
            let cmd = Command {
                payload,
                ..Command::new(Op::Write, first, n as u32)
            };
            match self.submit(device, issue, cmd) {
                Ok(t) => done = done.max(t),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
            i += n;
        }
        pages.clear();
        self.writebacks = pages;
        self.values = values;
        result.map(|_| done)
    }

    fn requests_sample(&mut self, device: &Device) {
        let buffer = &self.buffer;
        let aware = self
            .notifier
            .count_request(device, buffer.dirty_count(), |l| buffer.is_dirty(l));
        // The device knows a page only while the host holds it dirty: at most 1.
        debug_assert!(
            aware.is_none_or(|a| a <= 1.0),
            "the device knows more zombies than are dirty"
        );
    }

    /// The measured phase begins: counters start again.
    pub fn start_measuring(&mut self) {
        self.start = self.buffer.counters;
    }

    /// The buffer's report over the measured phase.
    pub fn report(&self) -> BufferReport {
        self.buffer.report(&self.start)
    }

    /// The channel's report.
    pub fn notify_report(&self) -> NotifyReport {
        self.notifier.report(Vec::new())
    }

    /// Check the buffer's bookkeeping.
    pub fn check(&self) -> Result<()> {
        self.buffer.check().map_err(crate::Error::integrity)
    }
}
