//! The device: everything between the host interface and the flash translation layer.
//!
//! ```text
//!  run loop (HostInterface) ──┐
//!  host model (HostSim) ──────┤
//!  host write buffer ─────────┼─► Device::submit(issue, Command) ─┬─► idle time before
//!  oracle (page by page) ─────┤     the one way in                 │   `issue`: background GC
//!  preconditioning ───────────┘                                    ├─► hints the command carries
//!                                                                  │   (piggybacked zombies)
//!                                                                  └─► per page: Ftl::write_page
//!                                                                      (PageWrite: content value,
//!                                                                      WriteHint) / read / trim,
//!                                                                      or the write buffer, which
//!                                                                      keeps both until destaged
//!                                   ◄── completion time (the latest flash operation it waited for)
//! ```
//!
//! Every command enters through [`Device::submit`], whatever sits above the device: a
//! trace request split into several runs is one command per run (the later ones
//! [`Command::continued`]), and preconditioning's writes are [`Command::precondition`]
//! commands (straight to flash, untimed, not counted as requests). So a command is
//! dispatched the same way everywhere, and a write's content value and placement hint
//! travel with it all the way down. Besides commands, the device hears zombie
//! notifications ([`Device::hint_zombie`], from the host's notifier) and its clock.

mod block_policies;
mod buffer;
mod command;
mod eviction;
mod replacement;

pub use buffer::{BufferCounters, BufferReport, Destaged, WriteBuffer};
pub use command::{Command, Payload, WriteHint, NO_VALUE, WITHDRAWN};

pub use crate::ftl::PageState;
pub use eviction::{Replacement, SlotView};

use crate::config::Config;
use crate::error::Result;
use crate::ftl::{self, BufferView, Ftl, FtlExt, NoBuffer, PageWrite};
use crate::stats::{Cause, Counters};
use crate::workload::Op;

/// The buffer view the FTL gets: the write buffer, or none.
macro_rules! view {
    ($device:ident) => {
        match $device.buffer.as_mut() {
            Some(b) => b as &mut dyn BufferView,
            None => &mut $device.no_buffer as &mut dyn BufferView,
        }
    };
}

/// The simulated device.
#[derive(Clone)]
pub struct Device {
    ftl: Box<dyn Ftl>,
    /// The DRAM write buffer (`device.buffer` > 0).
    buffer: Option<WriteBuffer>,
    /// Buffer counters when the measured phase began.
    buffer_start: BufferCounters,
    /// Host page writes absorbed by the buffer and host page reads it served: the
    /// FTL never sees them, but they are host pages (the WAF's denominator).
    buffered_writes: u64,
    buffered_reads: u64,
    /// Background GC may run in idle time (timing on and `gc.background`).
    background_gc: bool,
    /// DRAM time per page moved through the buffer (ns), when timing is on.
    dram_ns: u64,
    timing_on: bool,
    /// The command in progress: when it was issued and the DRAM pages it moved.
    issue: u64,
    dram_pages: u64,
    /// The latest completion so far (ns).
    last_done: u64,
    /// Reused list of pages the buffer writes back.
    writebacks: Vec<Destaged>,
    /// A twin-shadow page the buffer evicts is dropped, not written (003 §3.2).
    discard_twins: bool,
    /// The device's clock (ns) and whether anything needs it (retention refresh).
    clock: u64,
    clocked: bool,
    /// Restarts so far.
    restarts: u64,
    /// Pages per logical block (a padding buffer evicts whole blocks).
    pages_per_block: u64,
    no_buffer: NoBuffer,
}

impl Device {
    /// A freshly erased device as `cfg` describes it. `seed` drives the randomised
    /// GC policies; `verify` keeps the integrity oracle.
    pub fn new(cfg: &Config, seed: u64, verify: bool) -> Result<Device> {
        Self::with_policies(cfg, seed, verify, &ftl::ExternalPolicies::default())
    }

    /// [`Device::new`], its FTL asking `external` what it decides (victims, placement).
    pub fn with_policies(
        cfg: &Config,
        seed: u64,
        verify: bool,
        external: &ftl::ExternalPolicies,
    ) -> Result<Device> {
        let page = cfg.flash.page_size.bytes();
        let pages = cfg.device.buffer_pages(page);
        Ok(Device {
            ftl: ftl::build_with(cfg, seed, verify, external)?,
            buffer: (pages > 0)
                .then(|| WriteBuffer::new(&cfg.device, pages, cfg.flash.pages_per_block)),
            pages_per_block: cfg.flash.pages_per_block as u64,
            buffer_start: BufferCounters::default(),
            buffered_writes: 0,
            buffered_reads: 0,
            background_gc: cfg.timing.enabled && cfg.gc.background,
            dram_ns: cfg.timing.dram_ns.round() as u64,
            timing_on: false,
            issue: 0,
            dram_pages: 0,
            last_done: 0,
            writebacks: Vec::new(),
            discard_twins: cfg.device.discard_twins && !cfg.device.buffer_nonvolatile,
            clock: 0,
            clocked: cfg.needs_clock(),
            restarts: 0,
            no_buffer: NoBuffer,
        })
    }

    /// Whether the device keeps a clock (retention refresh, restarts): a run with
    /// timing off must then give every request an arrival time.
    pub fn needs_clock(&self) -> bool {
        self.clocked
    }

    /// The device's clock reached `now` (ns): retention refresh that is due runs.
    pub fn tick(&mut self, now: u64) -> Result<()> {
        self.clock = self.clock.max(now);
        if self.clocked {
            self.ftl.tick(self.clock, view!(self))?;
            if let Some(b) = self.buffer.as_mut() {
                b.flush_aged(self.clock, &mut self.writebacks);
                if !self.writebacks.is_empty() {
                    self.write_back()?;
                }
            }
        }
        Ok(())
    }

    /// The device's clock (ns).
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Restarts so far.
    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// The state of flash page `ppn` as a copy of logical page `lpn`.
    pub fn page_state(&self, lpn: u64, ppn: u32) -> PageState {
        if self.ftl.mapped(lpn) != Some(ppn) {
            return PageState::Dead;
        }
        let host = self.ftl.is_host_shadow(lpn);
        let device = self.buffer.as_ref().is_some_and(|b| b.is_dirty(lpn));
        PageState::of(host, device)
    }

    /// The flash translation layer (counters, checks, state summaries).
    pub fn ftl(&self) -> &dyn Ftl {
        self.ftl.as_ref()
    }

    /// The write buffer, when there is one.
    pub fn buffer(&self) -> Option<&WriteBuffer> {
        self.buffer.as_ref()
    }

    /// Pages the host can address.
    pub fn logical_pages(&self) -> u64 {
        self.ftl.logical_pages()
    }

    /// Every counter so far: the FTL's, plus the host pages the buffer absorbed or
    /// served.
    pub fn counters(&self) -> Counters {
        let mut c = self.ftl.counters();
        c.host_write_pages += self.buffered_writes;
        c.host_read_pages += self.buffered_reads;
        c
    }

    /// Host page writes so far (cheaper than [`Device::counters`]).
    #[inline]
    pub fn host_write_pages(&self) -> u64 {
        self.ftl.host_write_pages() + self.buffered_writes
    }

    /// Turn the timing model on or off (off while preconditioning); the measured
    /// phase starts at time 0, and the buffer's counters start again.
    pub fn set_timing(&mut self, on: bool) {
        self.ftl.set_timing(on);
        self.timing_on = on;
        self.last_done = 0;
        if let Some(b) = &self.buffer {
            self.buffer_start = b.counters;
        }
    }

    /// Issue `cmd` at `issue`; returns when it completes (for a
    /// [`Command::continued`] run: when the whole command completes so far). This is
    /// the one way a command enters the device. A flush is not counted as a host
    /// request (it moves no host pages).
    #[inline]
    pub fn submit(&mut self, issue: u64, cmd: &Command) -> Result<u64> {
        if cmd.precondition {
            return self.precondition(cmd);
        }
        self.submit_host(issue, cmd)
    }

    /// [`Device::submit`] of a host command (not a preconditioning write): kept out of
    /// line so that preconditioning, page by page, pays for one test only.
    #[inline(never)]
    fn submit_host(&mut self, issue: u64, cmd: &Command) -> Result<u64> {
        if !cmd.continued {
            self.begin(issue)?;
            if cmd.op != Op::Flush {
                self.ftl.count_request();
            }
            for &hint in cmd.zombies {
                self.apply_hint(hint)?;
            }
        }
        if self.buffer.is_some() {
            self.apply_buffered(cmd)?;
        } else {
            self.apply(cmd)?;
        }
        Ok(self.end().max(issue))
    }

    /// A command is issued at `issue`: GC may use the idle time before it, and the
    /// clock reaches it.
    #[inline]
    fn begin(&mut self, issue: u64) -> Result<()> {
        if self.background_gc {
            let idle_from = self.ftl.busy_until();
            if idle_from < issue {
                self.ftl
                    .idle(idle_from.max(self.last_done.min(issue)), issue, view!(self))?;
            }
        }
        if self.timing_on && self.clocked {
            self.tick(issue)?;
        }
        self.ftl.begin(issue);
        self.issue = issue;
        self.dram_pages = 0;
        Ok(())
    }

    /// A preconditioning write ([`Command::precondition`]): every page straight to
    /// flash, past the (still empty) write buffer, untimed and not counted as a request.
    #[inline]
    fn precondition(&mut self, cmd: &Command) -> Result<u64> {
        if cmd.op != Op::Write || self.timing_on {
            return Err(crate::Error::integrity(format!(
                "a preconditioning command must be an untimed write, not {:?}",
                cmd.op
            )));
        }
        debug_assert!(self.buffer.as_ref().is_none_or(|b| b.dirty_count() == 0));
        for (i, lpn) in (cmd.lpn..cmd.lpn + cmd.pages as u64).enumerate() {
            let write = PageWrite {
                hint: cmd.hint,
                ..PageWrite::new(lpn, cmd.payload.value(i), Cause::Host)
            };
            self.ftl.write_page(write, &mut NoBuffer)?;
        }
        Ok(0)
    }

    /// The pages of `cmd`, with no write buffer.
    #[inline]
    fn apply(&mut self, cmd: &Command) -> Result<()> {
        let (lpn, end) = (cmd.lpn, cmd.lpn + cmd.pages as u64);
        match cmd.op {
            Op::Write => {
                for (i, l) in (lpn..end).enumerate() {
                    self.write_to_flash(l, cmd.payload.value(i), cmd.hint)?;
                }
            }
            Op::Read => {
                for l in lpn..end {
                    self.ftl.read(l)?;
                }
            }
            Op::Trim => {
                for l in lpn..end {
                    self.ftl.trim(l)?;
                }
            }
            Op::Flush => {}
            Op::Dirty(_) | Op::Clean(_) => return Err(host_event_at_device(cmd.op)),
        }
        Ok(())
    }

    /// A write of `lpn` is likely soon: start loading what it will look up (the
    /// buffer's map, or the mapping table without a buffer). A hint: nothing changes.
    #[inline]
    pub fn prefetch_write(&self, lpn: u64) {
        match &self.buffer {
            Some(b) => b.warm(lpn),
            None => self.ftl.prefetch(lpn),
        }
    }

    /// The pages of `cmd` through the write buffer; `fua` writes go through to flash.
    fn apply_buffered(&mut self, cmd: &Command) -> Result<()> {
        let (lpn, end) = (cmd.lpn, cmd.lpn + cmd.pages as u64);
        let (payload, hint) = (cmd.payload, cmd.hint);
        match cmd.op {
            Op::Write if cmd.fua => {
                for (i, l) in (lpn..end).enumerate() {
                    let buffer = self.buffer.as_mut().expect("a buffer");
                    buffer.discard(l);
                    buffer.counters.fua_pages += 1;
                    self.write_to_flash(l, payload.value(i), hint)?;
                }
            }
            Op::Write => {
                let zombies = self.ftl.known_zombies() > 0;
                for (i, l) in (lpn..end).enumerate() {
                    let v = payload.value(i).unwrap_or(NO_VALUE);
                    self.buffered_writes += 1;
                    self.dram_pages += 1;
                    // The host's newer copy is now in the device: not a host zombie.
                    if zombies {
                        self.ftl.set_zombie(l, false)?;
                    }
                    let buffer = self.buffer.as_mut().expect("a buffer");
                    if buffer.write_hit(l, v, hint) {
                        continue;
                    }
                    buffer.make_room(&mut self.writebacks);
                    if buffer.pads() {
                        // The victim block is written before the new page enters: its
                        // padding must not rewrite the stale flash copy of a page
                        // buffered dirty meanwhile (a merge during the padding may
                        // take the buffered copy, BA-BM, and the pad would then land
                        // on top of it).
                        self.write_back_padded()?;
                        let buffer = self.buffer.as_mut().expect("a buffer");
                        buffer.insert_dirty(l, v, hint);
                    } else {
                        buffer.insert_dirty(l, v, hint);
                        self.write_back()?;
                    }
                }
                // The next write that misses will most likely write this page to flash.
                if let Some(next) = self.buffer.as_ref().and_then(|b| b.next_victim()) {
                    self.ftl.prefetch(next);
                }
            }
            Op::Read => {
                for l in lpn..end {
                    if self.buffer.as_mut().expect("a buffer").read(l) {
                        self.buffered_reads += 1;
                        self.dram_pages += 1;
                    } else {
                        self.ftl.read(l)?;
                    }
                }
            }
            Op::Trim => {
                for l in lpn..end {
                    self.buffer.as_mut().expect("a buffer").discard(l);
                    self.ftl.trim(l)?;
                }
            }
            Op::Flush => {
                let buffer = self.buffer.as_mut().expect("a buffer");
                buffer.flush(&mut self.writebacks);
                self.write_back()?;
            }
            Op::Dirty(_) | Op::Clean(_) => return Err(host_event_at_device(cmd.op)),
        }
        Ok(())
    }

    /// A host write of `lpn` straight to flash (no buffer, or FUA).
    #[inline]
    fn write_to_flash(&mut self, lpn: u64, value: Option<u64>, hint: WriteHint) -> Result<()> {
        let write = PageWrite {
            lpn,
            value,
            cause: Cause::Host,
            hint,
        };
        self.ftl.write_page(write, view!(self))
    }

    /// Program the pages the buffer gave up (evicted or flushed dirty pages), each
    /// with the hint it was written with. A twin-shadow page is dropped instead when
    /// `device.discard_twins` is on: the host holds a newer copy and will write it
    /// (003 §3.2).
    fn write_back(&mut self) -> Result<()> {
        let twins = self.discard_twins && self.ftl.known_zombies() > 0;
        for i in 0..self.writebacks.len() {
            let Destaged { lpn, value, hint } = self.writebacks[i];
            if twins && self.ftl.is_host_shadow(lpn) {
                if let Some(b) = self.buffer.as_mut() {
                    b.counters.twin_discards += 1;
                }
                continue;
            }
            let write = PageWrite {
                lpn,
                value: Some(value).filter(|&v| v != NO_VALUE),
                cause: Cause::Buffer,
                hint,
            };
            self.ftl.write_page(write, view!(self))?;
        }
        self.writebacks.clear();
        Ok(())
    }

    /// Program the pages of the logical block(s) a padding buffer evicted (BPLRU):
    /// every page of each block in logical order, the buffered ones from the buffer,
    /// the others read from flash and written again (`Ftl::pad`), so the block is
    /// written whole and in order.
    fn write_back_padded(&mut self) -> Result<()> {
        if self.writebacks.is_empty() {
            return Ok(());
        }
        let mut evicted = std::mem::take(&mut self.writebacks);
        let ppb = self.pages_per_block;
        let end = self.ftl.logical_pages();
        let mut i = 0;
        while i < evicted.len() {
            let lbn = evicted[i].lpn / ppb;
            let (first, last) = (lbn * ppb, ((lbn + 1) * ppb).min(end));
            for l in first..last {
                if i < evicted.len() && evicted[i].lpn == l {
                    self.writebacks.push(evicted[i]);
                    i += 1;
                    self.write_back()?;
                } else {
                    self.ftl.pad(l, view!(self))?;
                }
            }
        }
        evicted.clear();
        self.writebacks = evicted;
        Ok(())
    }

    /// The command started last is complete (so far): when (ns).
    #[inline]
    fn end(&mut self) -> u64 {
        let mut done = self.ftl.finish();
        if self.timing_on && self.dram_pages > 0 {
            done = done.max(self.issue + self.dram_pages * self.dram_ns);
        }
        self.last_done = self.last_done.max(done);
        done
    }

    /// A non-queued command (a notification command) holds the interface until `done`.
    pub fn hold_until(&mut self, done: u64) {
        self.last_done = self.last_done.max(done);
    }

    /// The host says `lpn` holds a dirty newer copy above the device (`true`), or that
    /// it lost that copy and the flash copy is live again (`false`).
    pub fn hint_zombie(&mut self, lpn: u64, zombie: bool) -> Result<()> {
        self.ftl.set_zombie(lpn, zombie)
    }

    /// The run's future says `lpn`'s current version dies `left` host page writes from
    /// now (`None`: never): for a placement that reads the future.
    pub fn tell_lifetime(&mut self, lpn: u64, left: Option<u64>) -> Result<()> {
        self.ftl.on_event(
            crate::ftl::DeviceEvent::Lifetime { lpn, left },
            &mut NoBuffer,
        )
    }

    /// One zombie hint as a command carries it: a logical page to mark, or one to
    /// un-mark with [`WITHDRAWN`] set.
    #[inline]
    pub fn apply_hint(&mut self, hint: u64) -> Result<()> {
        self.ftl
            .set_zombie(hint & !WITHDRAWN, hint & WITHDRAWN == 0)
    }

    /// Whether the device knows `lpn` as a zombie (host-shadow) now.
    pub fn is_host_shadow(&self, lpn: u64) -> bool {
        self.ftl.is_host_shadow(lpn)
    }

    /// Logical pages the device knows as zombies.
    pub fn known_zombies(&self) -> u64 {
        self.ftl.known_zombies()
    }

    /// Power is lost and restored. A volatile buffer loses its dirty pages (their
    /// logical numbers are returned, ascending; flash keeps the older copies); every
    /// zombie page is live again (the host's buffers are gone too), and every
    /// fast-written block holding valid pages is refreshed.
    pub fn power_loss(&mut self) -> Result<Vec<u64>> {
        let mut lost = Vec::new();
        if let Some(b) = self.buffer.as_mut() {
            b.power_loss(&mut lost);
        }
        self.restarts += 1;
        self.ftl.restart(self.clock, &lost, view!(self))?;
        Ok(lost)
    }

    /// What a read of `lpn` returns now, as the content value last written to it
    /// (`None`: unwritten, trimmed, or written without a value). Needs the integrity
    /// oracle (`verify`) for pages that are not buffered.
    pub fn content_of(&self, lpn: u64) -> Option<u64> {
        match self.buffer.as_ref().and_then(|b| b.value_of(lpn)) {
            Some(v) => Some(v).filter(|&v| v != NO_VALUE),
            None => self.ftl.oracle().and_then(|o| o.content_of(lpn as usize)),
        }
    }

    /// The buffer's report over the measured phase, when there is a buffer.
    pub fn buffer_report(&self) -> Option<BufferReport> {
        self.buffer.as_ref().map(|b| b.report(&self.buffer_start))
    }

    /// Run the FTL's invariant checks and integrity oracle, and check the buffer.
    pub fn verify(&self) -> Result<()> {
        self.ftl.verify()?;
        if let Some(b) = &self.buffer {
            b.check().map_err(crate::Error::integrity)?;
        }
        Ok(())
    }

    /// Approximate bytes of memory the device's state occupies.
    pub fn memory_bytes(&self) -> usize {
        self.ftl.memory_bytes() + self.buffer.as_ref().map_or(0, |b| b.memory_bytes())
    }
}

/// The error for a host event handed to the device: they travel only through the
/// notification channel (the replay of a notified trace takes them out first).
fn host_event_at_device(op: Op) -> crate::Error {
    crate::Error::integrity(format!(
        "a host event ({op:?}) reached the device; host events go through the notification channel"
    ))
}

#[cfg(test)]
mod tests;
