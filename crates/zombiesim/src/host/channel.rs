//! The notification channel: how the device learns which pages became dirty above it
//! (SPEC §2, 000 §3.3 and §4.2).
//!
//! ```text
//!   page cache: clean → dirty (L) ──► none:      dropped
//!                                 ──► ideal:     delivered at once
//!                                 ──► piggyback: FIFO zombie queue of extents ──► each read or
//!                                                write command carries `k` extents
//!                                 ──► command:   FIFO zombie queue ──► a notification command
//!                                                per `k` extents, occupying the interface
//! ```
//!
//! An extent is a run of consecutive pages of at most `extent_sectors` 512-byte sectors
//! (000: a 4-byte start sector and a 1-byte length, so ≤ 255 sectors); a page dirtied
//! right after the queue's last extent extends it. When an extent is delivered, the host
//! driver sends only the pages still dirty (a page written back meanwhile would
//! otherwise be marked zombie on the device after its newest copy arrived); the others
//! are counted as stale.
//!
//! A dirty page dropped above the device without a write (a deleted file's page, a
//! revoked journal block) takes its hint back through the same queue: a withdrawal
//! extent (003 notifies evictions from the host buffer the same way), delivered for the
//! pages still not dirty, which the device then holds live again. `ideal` un-marks at
//! once; `none` has nothing to take back.

use crate::config::{NotifyConfig, NotifyMode};
use crate::device::WITHDRAWN;
use crate::report::{AwarenessPoint, ChannelCounters, NotifyReport};
use std::collections::VecDeque;

/// The host side of the channel: the zombie queue.
pub struct NotificationChannel {
    pub mode: NotifyMode,
    per_command: usize,
    max_extent_pages: u32,
    queue: VecDeque<(u64, u32)>,
    pub counters: ChannelCounters,
}

impl NotificationChannel {
    pub fn new(cfg: &NotifyConfig, page_size: u64) -> Self {
        let max_pages = (cfg.extent_sectors as u64 * 512 / page_size).max(1) as u32;
        NotificationChannel {
            mode: cfg.mode,
            per_command: cfg.extents as usize,
            max_extent_pages: max_pages,
            queue: VecDeque::new(),
            counters: ChannelCounters::default(),
        }
    }

    /// Extents waiting in the zombie queue.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Page `lpn` became dirty. Returns true when it must be delivered now (`ideal`).
    #[inline]
    pub fn dirtied(&mut self, lpn: u64) -> bool {
        self.counters.dirtied_pages += 1;
        self.enqueue(lpn)
    }

    /// The dirty copy of page `lpn` was dropped above the device without a write: its
    /// hint is withdrawn. Returns true when the device must un-mark it now (`ideal`).
    #[inline]
    pub fn dropped(&mut self, lpn: u64) -> bool {
        self.counters.dropped_pages += 1;
        self.enqueue(lpn | WITHDRAWN)
    }

    /// Queue the hint `key` (a page, [`WITHDRAWN`] set for a withdrawal), extending the
    /// last extent when it follows it and is of the same kind; true for `ideal`.
    #[inline]
    fn enqueue(&mut self, key: u64) -> bool {
        match self.mode {
            NotifyMode::None => false,
            NotifyMode::Ideal => true,
            NotifyMode::Piggyback | NotifyMode::Command => {
                // A withdrawal's start has the top bit set, so it never extends a
                // marking extent, nor one a withdrawal.
                if let Some(last) = self.queue.back_mut() {
                    if last.0 + last.1 as u64 == key && last.1 < self.max_extent_pages {
                        last.1 += 1;
                        return false;
                    }
                }
                self.queue.push_back((key, 1));
                false
            }
        }
    }

    /// Whether `command` mode has a full batch to send.
    pub fn command_due(&self) -> bool {
        self.mode == NotifyMode::Command && self.queue.len() >= self.per_command
    }

    /// The extents one command carries, as zombie hints in `out` (cleared first): the
    /// pages still dirty in the host (`dirty`) are delivered, the others counted stale
    /// (a page written back meanwhile would otherwise be marked zombie on the device
    /// after its newest copy arrived). A withdrawal is delivered (with [`WITHDRAWN`]
    /// set) for the pages still not dirty: one dirtied again since keeps its mark.
    pub fn deliver(&mut self, out: &mut Vec<u64>, dirty: impl Fn(u64) -> bool) {
        out.clear();
        let n = self.batch();
        self.counters.extents += n as u64;
        for (key, len) in self.queue.drain(..n) {
            let withdrawal = key & WITHDRAWN;
            let lpn = key & !WITHDRAWN;
            for l in lpn..lpn + len as u64 {
                if dirty(l) == (withdrawal == 0) {
                    out.push(l | withdrawal);
                    if withdrawal == 0 {
                        self.counters.delivered_pages += 1;
                    } else {
                        self.counters.withdrawn_pages += 1;
                    }
                } else {
                    self.counters.stale_pages += 1;
                }
            }
        }
    }

    /// How many extents one command carries now.
    fn batch(&self) -> usize {
        match self.mode {
            NotifyMode::Piggyback | NotifyMode::Command => self.per_command.min(self.queue.len()),
            _ => 0,
        }
    }

    /// The extents one command carries, removed from the queue (what `deliver`
    /// works through; the tests look at the extents themselves).
    #[cfg(test)]
    fn take(&mut self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let n = self.batch();
        self.counters.extents += n as u64;
        self.queue.drain(..n)
    }
}

/// Running means of what the device knows as zombies against the pages the host holds
/// dirty, sampled as the run goes (000 Table 3's awareness).
#[derive(Clone, Copy, Debug, Default)]
pub struct AwarenessMeans {
    samples: u64,
    known_sum: f64,
    stale_sum: f64,
    aware_sum: f64,
    aware_samples: u64,
}

impl AwarenessMeans {
    /// One sample: the device knows `known` zombies (and holds `stale` marks of pages
    /// no longer dirty) while the host holds `dirty` dirty pages. Returns the
    /// awareness `known / dirty` (0 with nothing dirty), at most 1: marks beyond the
    /// pages dirty above the device are not the host's (the oracle marks pages whose
    /// death it is told from the future, dirty or not).
    pub fn sample(&mut self, known: u64, stale: u64, dirty: u64) -> f64 {
        self.samples += 1;
        self.known_sum += known as f64;
        self.stale_sum += stale as f64;
        if dirty == 0 {
            return 0.0;
        }
        let awareness = known.min(dirty) as f64 / dirty as f64;
        self.aware_sum += awareness;
        self.aware_samples += 1;
        awareness
    }

    /// Samples taken so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

impl NotificationChannel {
    /// The channel's report, with the awareness means and `series` of samples.
    pub fn report(&self, means: &AwarenessMeans, series: Vec<AwarenessPoint>) -> NotifyReport {
        NotifyReport {
            mode: self.mode,
            counters: self.counters,
            awareness_mean: if means.aware_samples > 0 {
                means.aware_sum / means.aware_samples as f64
            } else {
                0.0
            },
            known_zombies_mean: means.known_sum / means.samples.max(1) as f64,
            stale_marks_mean: means.stale_sum / means.samples.max(1) as f64,
            queued_extents_end: self.queued() as u64,
            series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(mode: NotifyMode, extents: u32, sectors: u32) -> NotificationChannel {
        let cfg = NotifyConfig {
            mode,
            extents,
            extent_sectors: sectors,
            ..NotifyConfig::default()
        };
        NotificationChannel::new(&cfg, 4096)
    }

    #[test]
    fn piggyback_merges_consecutive_pages_up_to_the_extent_limit() {
        // 255 sectors of 512 B hold 31 pages of 4 KiB.
        let mut c = channel(NotifyMode::Piggyback, 1, 255);
        for lpn in 100..140 {
            assert!(!c.dirtied(lpn));
        }
        c.dirtied(7);
        assert_eq!(c.queued(), 3);
        assert_eq!(c.take().collect::<Vec<_>>(), vec![(100, 31)]);
        assert_eq!(c.take().collect::<Vec<_>>(), vec![(131, 9)]);
        assert_eq!(c.take().collect::<Vec<_>>(), vec![(7, 1)]);
        assert_eq!(c.take().count(), 0);
    }

    #[test]
    fn awareness_is_at_most_one() {
        let mut m = AwarenessMeans::default();
        assert_eq!(m.sample(10, 0, 5), 1.0);
        assert_eq!(m.sample(2, 1, 4), 0.5);
        assert_eq!(m.sample(3, 0, 0), 0.0);
        let r = channel(NotifyMode::Ideal, 1, 255).report(&m, Vec::new());
        assert_eq!(r.awareness_mean, 0.75);
        assert_eq!(r.known_zombies_mean, 5.0);
    }

    #[test]
    fn ideal_delivers_at_once_and_none_never() {
        let mut ideal = channel(NotifyMode::Ideal, 1, 255);
        assert!(ideal.dirtied(5));
        assert_eq!(ideal.take().count(), 0);
        let mut none = channel(NotifyMode::None, 1, 255);
        assert!(!none.dirtied(5));
        assert_eq!(none.queued(), 0);
    }

    #[test]
    fn a_dropped_page_withdraws_its_hint_unless_dirtied_again() {
        let mut c = channel(NotifyMode::Piggyback, 4, 255);
        let mut out = Vec::new();
        c.dirtied(5);
        c.deliver(&mut out, |_| true);
        assert_eq!(out, vec![5]);
        // 5 and 6 dropped: one withdrawal extent, never merged with a marking one.
        c.dirtied(4);
        c.dropped(5);
        c.dropped(6);
        assert_eq!(c.queued(), 2);
        c.deliver(&mut out, |l| l == 4);
        assert_eq!(out, vec![4, 5 | WITHDRAWN, 6 | WITHDRAWN]);
        assert_eq!(c.counters.withdrawn_pages, 2);
        assert_eq!(c.counters.dropped_pages, 2);
        // Dirtied again before the withdrawal went out: the mark stays.
        c.dropped(9);
        c.deliver(&mut out, |l| l == 9);
        assert_eq!(out, Vec::<u64>::new());
        assert_eq!(c.counters.stale_pages, 1);
        // `ideal` un-marks at once, `none` has nothing to take back.
        assert!(channel(NotifyMode::Ideal, 1, 255).dropped(3));
        let mut none = channel(NotifyMode::None, 1, 255);
        assert!(!none.dropped(3));
        assert_eq!(none.queued(), 0);
    }

    #[test]
    fn command_mode_sends_full_batches() {
        let mut c = channel(NotifyMode::Command, 2, 8);
        c.dirtied(1);
        assert!(!c.command_due());
        c.dirtied(10);
        assert!(c.command_due());
        assert_eq!(c.take().count(), 2);
    }
}
