//! The recorded host: a notified trace's own host events, replayed in place of a
//! modelled cache. The trace's writes are what reached the device; its dirty and clean
//! events say what the host's buffers held, and the notification channel that is
//! configured (`notify.mode`) decides what the device learns and when.
//!
//! ```text
//!   trace ─► dirty(L, buffer) ─► L clean everywhere before? ─► NotificationChannel
//!        │                                                     none:      dropped
//!        │                                                     ideal:     hint now
//!        │                                                     piggyback: rides the next
//!        │                                                                read/write
//!        │                                                     command:   a command per
//!        │                                                                `k` extents
//!        ├► clean(L, buffer) ─► L clean everywhere now? ideal: the device un-marks L;
//!        │                      the other modes carry only dirtying (000's protocol)
//!        ├► write(L) ─► the page cache's copy reached the device (L clean there);
//!        │              still dirty in the database buffer? a zombie again at once
//!        └► trim(L) ─► clean everywhere
//! ```
//!
//! State is one byte per logical page (which buffers hold it dirty), whatever the
//! trace's length. Awareness (what the device knows against what the host holds dirty)
//! is sampled after every host event and every [`SAMPLE_EVERY`](super::SAMPLE_EVERY) requests. The channel,
//! its command cost and the samples are the one [`Notifier`]'s; a piggybacked batch is
//! marked just before its command is submitted (ahead of the command's idle-time work,
//! as the replay has always delivered it).

use super::notifier::{CommandAt, Notifier};
use crate::config::{Config, NotifyMode};
use crate::device::Device;
use crate::error::Result;
use crate::report::NotifyReport;
use crate::trace::HostBuffer;
use crate::workload::Op;

const PAGE_CACHE: u8 = 1 << HostBuffer::PageCache as u8;

/// The host events of a notified trace and the channel that carries them.
pub struct RecordedHost {
    notifier: Notifier,
    /// Per logical page, a bit per [`HostBuffer`] holding it dirty.
    dirty: Vec<u8>,
    dirty_count: u64,
}

impl RecordedHost {
    /// The recorded host of a device of `logical_pages` pages; `deliver = false` keeps
    /// the channel silent (`notify.mode = none`: under the oracle, whose own marks
    /// replace every channel's).
    pub fn new(cfg: &Config, logical_pages: u64, deliver: bool) -> Self {
        let mut notify = cfg.notify.clone();
        if !deliver {
            notify.mode = NotifyMode::None;
        }
        RecordedHost {
            notifier: Notifier::with(cfg, &notify),
            dirty: vec![0; logical_pages as usize],
            dirty_count: 0,
        }
    }

    /// A host event (`Op::Dirty` or `Op::Clean`) over `lpn .. lpn + pages`, at `issue`.
    pub fn event(
        &mut self,
        device: &mut Device,
        op: Op,
        lpn: u64,
        pages: u32,
        issue: u64,
    ) -> Result<()> {
        let end = lpn + pages as u64;
        match op {
            Op::Dirty(b) => {
                let bit = 1 << b as u8;
                for l in lpn..end {
                    let d = &mut self.dirty[l as usize];
                    let was = *d;
                    *d |= bit;
                    if was == 0 {
                        self.dirty_count += 1;
                        self.dirtied(device, l, issue)?;
                    }
                }
            }
            Op::Clean(b) => {
                let bit = 1 << b as u8;
                for l in lpn..end {
                    let d = &mut self.dirty[l as usize];
                    if *d & bit != 0 {
                        *d &= !bit;
                        if *d == 0 {
                            self.dirty_count -= 1;
                            self.notifier.cleaned(device, l)?;
                        }
                    }
                }
            }
            _ => unreachable!("only host events are recorded host events"),
        }
        self.sample(device);
        Ok(())
    }

    /// A device command (`op`) is about to run: piggybacked hints ride on it.
    pub fn before_command(&mut self, device: &mut Device, op: Op) -> Result<()> {
        let dirty = &self.dirty;
        self.notifier
            .piggyback_ahead(device, op, |l| dirty[l as usize] != 0)
    }

    /// The device wrote or trimmed `lpn .. lpn + pages` (after the command ran).
    pub fn after_command(
        &mut self,
        device: &mut Device,
        op: Op,
        lpn: u64,
        pages: u32,
        issue: u64,
    ) -> Result<()> {
        let end = lpn + pages as u64;
        match op {
            Op::Write => {
                for l in lpn..end {
                    let d = &mut self.dirty[l as usize];
                    if *d == 0 {
                        continue;
                    }
                    *d &= !PAGE_CACHE;
                    if *d == 0 {
                        self.dirty_count -= 1;
                    } else {
                        // Still dirty in the database buffer: the copy just written is
                        // already stale, and the channel says so.
                        self.dirtied(device, l, issue)?;
                    }
                }
            }
            Op::Trim => {
                for l in lpn..end {
                    let d = &mut self.dirty[l as usize];
                    if *d != 0 {
                        *d = 0;
                        self.dirty_count -= 1;
                    }
                }
            }
            _ => {}
        }
        let dirty = &self.dirty;
        self.notifier
            .count_request(device, self.dirty_count, |l| dirty[l as usize] != 0);
        Ok(())
    }

    /// Page `lpn` went from clean everywhere to dirty somewhere: the channel learns it.
    fn dirtied(&mut self, device: &mut Device, lpn: u64, issue: u64) -> Result<()> {
        let dirty = &self.dirty;
        let at = CommandAt::Issue(issue);
        self.notifier
            .dirtied(device, lpn, |l| dirty[l as usize] != 0, at)
            .map(|_| ())
    }

    fn sample(&mut self, device: &Device) {
        let dirty = &self.dirty;
        self.notifier
            .sample(device, self.dirty_count, |l| dirty[l as usize] != 0);
    }

    /// Pages dirty in some host buffer now.
    pub fn dirty_pages(&self) -> u64 {
        self.dirty_count
    }

    /// The channel's report.
    pub fn notify_report(&self) -> NotifyReport {
        self.notifier.report(Vec::new())
    }
}
