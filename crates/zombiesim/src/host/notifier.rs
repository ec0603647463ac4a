//! The one notification component: every producer of zombie notifications (the host
//! model's page cache, a notified trace's recorded host, the host write buffer, the
//! oracle) tells the device through a [`Notifier`].
//!
//! ```text
//!   producer: page L went clean → dirty above the device
//!     └► Notifier::changed(Dirtied) ─► NotificationChannel (none / ideal / piggyback / command)
//!          ideal:     Device::hint_zombie(L) now
//!          command:   a full batch of extents ─► Device::apply_hint for each page
//!                     still dirty, as a notification command charged by CommandAt
//!          piggyback: waits in the queue ─► Notifier::submit puts the next batch on
//!                     the next read or write command (Command::zombies)
//!   producer: page L's dirty copy dropped unwritten
//!     └► Notifier::changed(Dropped) ─► a withdrawal through the same channel (ideal:
//!                             un-marked now); until it arrives the device's mark is stale
//!   producer: a request done ─► Notifier::count_request: awareness sampled every
//!                               SAMPLE_EVERY requests (the host model samples by time);
//!                               stale marks are not counted as known zombies
//! ```
//!
//! A notification command costs `notify.command_us`. Where that time is charged is the
//! producer's one difference ([`CommandAt`]): the host model owns its interface queue,
//! and the command is non-queued there ([`Queue::barrier`]); the device-level run loop's
//! producers charge it from the issue time of the request that caused it, when timing
//! is on, holding the device but not the run loop's queue.

use super::channel::{AwarenessMeans, NotificationChannel};
use crate::config::{Config, NotifyConfig, NotifyMode};
use crate::device::{Command, Device};
use crate::error::Result;
use crate::interface::Queue;
use crate::report::{AwarenessPoint, NotifyReport};
use crate::workload::Op;

/// What happened to a page above the device ([`Notifier::changed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostChange {
    /// Clean → dirty.
    Dirtied,
    /// A dirty copy dropped without a write.
    Dropped,
}

/// Awareness is sampled every this many requests (producers that sample by request).
pub const SAMPLE_EVERY: u64 = 256;

/// Where a notification command's time is charged (see the module docs).
pub enum CommandAt<'q> {
    /// Non-queued in the host's own interface queue, submitted at `now`: it waits for
    /// every outstanding command, and nothing is issued until it is done.
    Queue(&'q mut Queue, u64),
    /// From `issue`, the issue time of the request that caused it, when timing is on.
    Issue(u64),
}

/// The notification component: the channel, the reused hint list, the command cost
/// and the awareness samples.
pub struct Notifier {
    channel: NotificationChannel,
    /// Reused list of the zombie hints one command carries.
    hints: Vec<u64>,
    /// Pages dropped or cleaned above the device while it held them as zombies: each
    /// is a stale mark until the device hears of it (or the page is dirtied again).
    unconfirmed: Vec<u64>,
    command_ns: u64,
    timed: bool,
    requests: u64,
    awareness: AwarenessMeans,
}

impl Notifier {
    /// The notifier `cfg.notify` describes.
    pub fn new(cfg: &Config) -> Self {
        Self::with(cfg, &cfg.notify)
    }

    /// The notifier of `notify` (the rest from `cfg`).
    pub fn with(cfg: &Config, notify: &NotifyConfig) -> Self {
        Self::of(notify, cfg.flash.page_size.bytes(), cfg.timing.enabled)
    }

    /// An ideal channel: every dirtied page is marked at once, nothing is sampled (the
    /// oracle's, whose dirty events come from the future).
    pub fn ideal() -> Self {
        let notify = NotifyConfig {
            mode: NotifyMode::Ideal,
            command_us: 0.0,
            ..NotifyConfig::default()
        };
        Self::of(&notify, 4096, false)
    }

    /// The notifier of `notify` for pages of `page_size` bytes; `timed`: whether
    /// notification commands take time.
    fn of(notify: &NotifyConfig, page_size: u64, timed: bool) -> Self {
        Notifier {
            channel: NotificationChannel::new(notify, page_size),
            hints: Vec::new(),
            unconfirmed: Vec::new(),
            command_ns: (notify.command_us * 1e3) as u64,
            timed,
            requests: 0,
            awareness: AwarenessMeans::default(),
        }
    }

    /// The channel's mode.
    #[inline]
    pub fn mode(&self) -> NotifyMode {
        self.channel.mode
    }

    /// Page `lpn` went clean → dirty above the device ([`HostChange::Dirtied`]):
    /// `ideal` marks it on the device at once; or its dirty copy was dropped without a
    /// write ([`HostChange::Dropped`]: a deleted file's page, a revoked journal block):
    /// the hint is withdrawn through the channel (`ideal` un-marks at once), and until
    /// the device hears of it the mark is stale and not counted as a known zombie. In
    /// `command` mode a full batch is then sent as a notification command, charged
    /// `at`. `dirty` says which pages are still dirty above the device (the others of a
    /// batch are stale). Returns when a notification command sent now is done (when
    /// its time is charged).
    #[inline]
    pub fn changed(
        &mut self,
        device: &mut Device,
        lpn: u64,
        change: HostChange,
        dirty: impl Fn(u64) -> bool,
        at: CommandAt,
    ) -> Result<Option<u64>> {
        match change {
            HostChange::Dirtied => {
                if self.channel.dirtied(lpn) {
                    device.hint_zombie(lpn, true)?;
                    self.channel.counters.delivered_pages += 1;
                }
            }
            HostChange::Dropped => {
                if self.channel.dropped(lpn) {
                    device.hint_zombie(lpn, false)?;
                    self.channel.counters.withdrawn_pages += 1;
                } else if device.is_host_shadow(lpn) {
                    self.unconfirmed.push(lpn);
                }
            }
        }
        self.send_due(device, dirty, at)
    }

    /// [`Notifier::changed`] for a page that went clean → dirty.
    #[inline]
    pub fn dirtied(
        &mut self,
        device: &mut Device,
        lpn: u64,
        dirty: impl Fn(u64) -> bool,
        at: CommandAt,
    ) -> Result<Option<u64>> {
        self.changed(device, lpn, HostChange::Dirtied, dirty, at)
    }

    /// In `command` mode, a full batch of hints is sent as a notification command,
    /// charged `at`; returns when it is done (when its time is charged).
    fn send_due(
        &mut self,
        device: &mut Device,
        dirty: impl Fn(u64) -> bool,
        at: CommandAt,
    ) -> Result<Option<u64>> {
        if !self.channel.command_due() {
            return Ok(None);
        }
        self.channel.deliver(&mut self.hints, dirty);
        for &hint in &self.hints {
            device.apply_hint(hint)?;
        }
        self.channel.counters.commands += 1;
        let done = match at {
            CommandAt::Queue(queue, now) => Some(queue.barrier(now, self.command_ns)),
            CommandAt::Issue(issue) => self.timed.then_some(issue + self.command_ns),
        };
        if let Some(t) = done {
            device.hold_until(t);
        }
        Ok(done)
    }

    /// Page `lpn` is clean everywhere above the device again (a notified trace's
    /// clean event, which a write of the page may follow): an `ideal` channel un-marks
    /// it; the other modes carry only dirtying (000's protocol), and the mark is not
    /// counted as a known zombie until the write arrives.
    pub fn cleaned(&mut self, device: &mut Device, lpn: u64) -> Result<()> {
        if self.channel.mode == NotifyMode::Ideal {
            device.hint_zombie(lpn, false)?;
        } else if device.is_host_shadow(lpn) {
            self.unconfirmed.push(lpn);
        }
        Ok(())
    }

    /// The hints a command of `op` carries: in `piggyback` mode, a read or write
    /// carries the next batch of extents (the pages still `dirty`); otherwise none.
    #[inline]
    pub fn piggyback(&mut self, op: Op, dirty: impl Fn(u64) -> bool) -> &[u64] {
        if self.channel.mode == NotifyMode::Piggyback && matches!(op, Op::Read | Op::Write) {
            self.channel.deliver(&mut self.hints, dirty);
            &self.hints
        } else {
            &[]
        }
    }

    /// Submit `cmd` to `device` at `issue`, carrying the piggybacked hints
    /// ([`Notifier::piggyback`]); returns when it completes.
    #[inline]
    pub fn submit(
        &mut self,
        device: &mut Device,
        issue: u64,
        cmd: Command,
        dirty: impl Fn(u64) -> bool,
    ) -> Result<u64> {
        let zombies = self.piggyback(cmd.op, dirty);
        device.submit(issue, &Command { zombies, ..cmd })
    }

    /// The piggybacked hints of a command of `op` marked on `device` just before the
    /// command is submitted (a notified trace's replay, which delivers them ahead of
    /// the command's idle-time work).
    pub fn piggyback_ahead(
        &mut self,
        device: &mut Device,
        op: Op,
        dirty: impl Fn(u64) -> bool,
    ) -> Result<()> {
        for &hint in self.piggyback(op, dirty) {
            device.apply_hint(hint)?;
        }
        Ok(())
    }

    /// One request done, with `dirty` pages dirty above the device (`is_dirty` says
    /// which): awareness is sampled every [`SAMPLE_EVERY`] requests (the awareness,
    /// when sampled).
    #[inline]
    pub fn count_request(
        &mut self,
        device: &Device,
        dirty: u64,
        is_dirty: impl Fn(u64) -> bool,
    ) -> Option<f64> {
        self.requests += 1;
        self.requests
            .is_multiple_of(SAMPLE_EVERY)
            .then(|| self.sample(device, dirty, is_dirty).0)
    }

    /// One awareness sample while `dirty` pages are dirty above `device` (`is_dirty`
    /// says which). The device's marks of pages dropped or cleaned above it that it
    /// has not heard of yet are stale: they are not known zombies. Returns the
    /// awareness, known zombies ÷ dirty pages (0 with nothing dirty, at most 1), and
    /// the known zombies.
    pub fn sample(
        &mut self,
        device: &Device,
        dirty: u64,
        is_dirty: impl Fn(u64) -> bool,
    ) -> (f64, u64) {
        self.unconfirmed
            .retain(|&l| device.is_host_shadow(l) && !is_dirty(l));
        self.unconfirmed.sort_unstable();
        self.unconfirmed.dedup();
        let stale = self.unconfirmed.len() as u64;
        let known = device.known_zombies() - stale;
        (self.awareness.sample(known, stale, dirty), known)
    }

    /// Samples taken so far.
    pub fn samples(&self) -> u64 {
        self.awareness.samples()
    }

    /// The channel's report, with `series` of samples.
    pub fn report(&self, series: Vec<AwarenessPoint>) -> NotifyReport {
        self.channel.report(&self.awareness, series)
    }
}
