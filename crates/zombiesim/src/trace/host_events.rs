//! What a notified trace's host events say, for `trace stats`: how many pages went dirty
//! in each host buffer, how long the device's copy stayed a zombie (dirty → written), and
//! the awareness an ideal channel would reach.
//!
//! ```text
//!   dirty(L) ──────────────► write(L)        zombie lifetime = t(write) − t(first dirty)
//!      │  (L clean → dirty)      │           an overwrite of L is *known* when L went
//!      └─ dirty again: no change └► L clean  dirty since its previous write
//! ```
//!
//! - A page is dirty while any buffer (page cache, database) holds it dirty; a device
//!   write of L cleans it in the page cache, a `clean` event in the buffer it names, a
//!   trim everywhere.
//! - `ideal_awareness` is the share of overwrites (a write of a page already written in
//!   the trace) whose page had a dirty event since its previous write: the share of dying
//!   flash copies that an ideal channel (every dirty event delivered at once) would have
//!   marked as zombies before they died. Writes that no dirty event announces (direct
//!   I/O, a buffer the capture did not see) lower it.
//! - Counting starts at the first host event (a plain block trace costs nothing); from
//!   then on memory grows with the pages touched, not with the trace's length, and a
//!   request of more than 2^20 pages is left out of the per-page books. Lifetimes go
//!   into a histogram (microseconds, 3 significant digits).

use super::record::{HostBuffer, TraceOp, TraceRecord};
use hdrhistogram::Histogram;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Percentiles of zombie lifetimes (dirty → written), in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Lifetimes {
    pub count: u64,
    pub mean_s: f64,
    pub p10_s: f64,
    pub p50_s: f64,
    pub p90_s: f64,
    pub p99_s: f64,
    pub max_s: f64,
}

/// The host events of a notified trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HostEventStats {
    /// Dirty events (records), and the pages they name.
    pub dirty_events: u64,
    pub dirty_event_pages: u64,
    /// Clean events (records), and the pages they name.
    pub clean_events: u64,
    pub clean_event_pages: u64,
    /// Pages that went clean → dirty in the page cache and in the database buffer.
    pub page_cache_dirtied: u64,
    pub database_dirtied: u64,
    /// Pages that went from clean everywhere to dirty somewhere: zombies born.
    pub zombies: u64,
    /// Zombies whose page was written to the device, with how long it took.
    pub zombie_lifetime: Lifetimes,
    /// Page writes of pages written before in the trace.
    pub overwrites: u64,
    /// Of those, the ones announced by a dirty event since the previous write.
    pub announced_overwrites: u64,
    /// `announced_overwrites / overwrites`: the awareness an ideal channel reaches.
    pub ideal_awareness: f64,
    /// Pages cleaned by a clean event (not by a write) while dirty nowhere else.
    pub cleaned_unwritten: u64,
    /// Pages still dirty at the end of the trace.
    pub dirty_at_end: u64,
}

/// Larger requests are left out of the per-page books.
const MAX_PAGES: u64 = 1 << 20;

#[derive(Clone, Copy, Default)]
struct Page {
    /// Buffers holding the page dirty (bit per [`HostBuffer`] id).
    buffers: u8,
    /// When it went dirty (ns), valid while `buffers != 0`.
    since: u64,
    written: bool,
    /// A dirty event since the last write.
    announced: bool,
}

/// Accumulates [`HostEventStats`] record by record.
pub(crate) struct HostEventCounter {
    stats: HostEventStats,
    pages: FxHashMap<u64, Page>,
    lifetimes_us: Histogram<u64>,
    lifetime_sum_ns: u128,
    any: bool,
}

impl HostEventCounter {
    pub(crate) fn new() -> Self {
        HostEventCounter {
            stats: HostEventStats::default(),
            pages: FxHashMap::default(),
            // 1 µs to 30 days, 3 significant digits.
            lifetimes_us: Histogram::new_with_bounds(1, 30 * 86_400 * 1_000_000, 3)
                .expect("valid histogram bounds"),
            lifetime_sum_ns: 0,
            any: false,
        }
    }

    /// One record, whose pages of `page_size` bytes are `first .. first + count`.
    pub(crate) fn record(&mut self, rec: &TraceRecord, first: u64, count: u64) {
        if (!self.any && !rec.op.is_host_event()) || count > MAX_PAGES {
            return;
        }
        match rec.op {
            TraceOp::Dirty => {
                self.any = true;
                self.stats.dirty_events += 1;
                self.stats.dirty_event_pages += count;
                let bit = buffer_bit(rec.device);
                for l in first..first + count {
                    let p = self.pages.entry(l).or_default();
                    if p.buffers & bit == 0 {
                        if rec.device == HostBuffer::Database.id() {
                            self.stats.database_dirtied += 1;
                        } else {
                            self.stats.page_cache_dirtied += 1;
                        }
                    }
                    if p.buffers == 0 {
                        self.stats.zombies += 1;
                        p.since = rec.time_ns;
                    }
                    p.buffers |= bit;
                    p.announced = true;
                }
            }
            TraceOp::Clean => {
                self.any = true;
                self.stats.clean_events += 1;
                self.stats.clean_event_pages += count;
                let bit = buffer_bit(rec.device);
                for l in first..first + count {
                    if let Some(p) = self.pages.get_mut(&l) {
                        if p.buffers == bit {
                            self.stats.cleaned_unwritten += 1;
                        }
                        p.buffers &= !bit;
                    }
                }
            }
            TraceOp::Write => {
                let pc = buffer_bit(HostBuffer::PageCache.id());
                for l in first..first + count {
                    let p = self.pages.entry(l).or_default();
                    if p.written {
                        self.stats.overwrites += 1;
                        if p.announced {
                            self.stats.announced_overwrites += 1;
                        }
                    }
                    if p.buffers != 0 && p.buffers & pc != 0 && p.buffers & !pc == 0 {
                        let ns = rec.time_ns.saturating_sub(p.since);
                        self.lifetime_sum_ns += u128::from(ns);
                        self.lifetimes_us.saturating_record((ns / 1000).max(1));
                    }
                    p.buffers &= !pc;
                    p.written = true;
                    p.announced = p.buffers != 0;
                    if p.buffers != 0 {
                        // Still dirty in the database buffer: a zombie again at once.
                        p.since = rec.time_ns;
                    }
                }
            }
            TraceOp::Trim => {
                for l in first..first + count {
                    if let Some(p) = self.pages.get_mut(&l) {
                        *p = Page::default();
                    }
                }
            }
            TraceOp::Read | TraceOp::Flush => {}
        }
    }

    /// The statistics, `None` when the trace had no host events.
    pub(crate) fn finish(mut self) -> Option<HostEventStats> {
        if !self.any {
            return None;
        }
        let s = &mut self.stats;
        s.dirty_at_end = self.pages.values().filter(|p| p.buffers != 0).count() as u64;
        s.ideal_awareness = if s.overwrites == 0 {
            0.0
        } else {
            s.announced_overwrites as f64 / s.overwrites as f64
        };
        let h = &self.lifetimes_us;
        let n = h.len();
        if n > 0 {
            let q = |x: f64| h.value_at_quantile(x) as f64 / 1e6;
            s.zombie_lifetime = Lifetimes {
                count: n,
                mean_s: self.lifetime_sum_ns as f64 / n as f64 / 1e9,
                p10_s: q(0.10),
                p50_s: q(0.50),
                p90_s: q(0.90),
                p99_s: q(0.99),
                max_s: h.max() as f64 / 1e6,
            };
        }
        Some(self.stats)
    }
}

fn buffer_bit(device: u32) -> u8 {
    1 << device.min(7)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u64, op: TraceOp, device: u32) -> TraceRecord {
        TraceRecord {
            time_ns: t,
            op,
            offset: 0,
            size: 4096,
            device,
            placement: None,
        }
    }

    #[test]
    fn lifetimes_and_awareness() {
        let mut c = HostEventCounter::new();
        let db = HostBuffer::Database.id();
        // Nothing is counted before the first host event.
        c.record(&rec(0, TraceOp::Write, 0), 0, 1);
        c.record(&rec(0, TraceOp::Dirty, 0), 9, 1);
        c.record(&rec(0, TraceOp::Write, 0), 9, 1);
        // Page 0: written, dirtied at 1 s, written at 3 s (known), written at 4 s (not).
        c.record(&rec(0, TraceOp::Write, 0), 0, 1);
        c.record(&rec(1_000_000_000, TraceOp::Dirty, 0), 0, 1);
        c.record(&rec(2_000_000_000, TraceOp::Dirty, 0), 0, 1);
        c.record(&rec(3_000_000_000, TraceOp::Write, 0), 0, 1);
        c.record(&rec(4_000_000_000, TraceOp::Write, 0), 0, 1);
        // Page 1: dirty in the database buffer, cleaned there without a write.
        c.record(&rec(5_000_000_000, TraceOp::Dirty, db), 1, 1);
        c.record(&rec(6_000_000_000, TraceOp::Clean, db), 1, 1);
        // Page 2: dirty at the end.
        c.record(&rec(7_000_000_000, TraceOp::Dirty, 0), 2, 1);
        let s = c.finish().unwrap();
        assert_eq!((s.dirty_events, s.clean_events, s.zombies), (5, 1, 4));
        assert_eq!((s.page_cache_dirtied, s.database_dirtied), (3, 1));
        assert_eq!((s.overwrites, s.announced_overwrites), (2, 1));
        assert_eq!(s.ideal_awareness, 0.5);
        assert_eq!((s.cleaned_unwritten, s.dirty_at_end), (1, 1));
        assert_eq!(s.zombie_lifetime.count, 2);
        assert!((s.zombie_lifetime.max_s - 2.0).abs() < 0.01, "{s:?}");
        assert!(HostEventCounter::new().finish().is_none());
    }
}
