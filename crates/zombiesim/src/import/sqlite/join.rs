//! What the first pass over the logs gathers for the join: each log's time range
//! ([`Range`]: do the two logs come from the same run, which frames the shim log
//! covers) and when each database page is written ([`DbWrites`]: which frames a
//! checkpoint joins).

use super::layout::{pages, FileKind};
use super::row::{Event, Row};
use rustc_hash::{FxHashMap, FxHashSet};

/// The first and last time of a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Range {
    pub(super) first: u64,
    pub(super) last: u64,
}

impl Default for Range {
    fn default() -> Self {
        Range {
            first: u64::MAX,
            last: 0,
        }
    }
}

impl Range {
    pub(super) fn add(&mut self, t: u64) {
        self.first = self.first.min(t);
        self.last = self.last.max(t);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.first > self.last
    }

    pub(super) fn contains(&self, t: u64) -> bool {
        self.first <= t && t <= self.last
    }

    pub(super) fn overlaps(&self, o: &Range) -> bool {
        !self.is_empty() && !o.is_empty() && self.first <= o.last && o.first <= self.last
    }
}

/// Writes to the database file of more pages than this are kept as ranges (see
/// [`DbWrites`]).
const BIG_WRITE_PAGES: u64 = 256;

/// For each database page a log writes, the latest time it is written (what a frame
/// joins to). A write of more than [`BIG_WRITE_PAGES`] pages is kept as a range and, at
/// the end, applied to the pages frames dirty only (the only pages the join looks up),
/// so that one row with a huge `len` costs neither memory nor time per page.
#[derive(Default)]
pub(super) struct DbWrites {
    pages: FxHashMap<u64, u64>,
    /// `(first page, pages, time)` of the big writes.
    big: Vec<(u64, u64, u64)>,
}

impl DbWrites {
    pub(super) fn note(&mut self, row: &Row) {
        if let Event::Write {
            file: FileKind::Db,
            offset,
            len,
            ..
        } = &row.event
        {
            let (first, n) = pages(*offset, *len);
            if n > BIG_WRITE_PAGES {
                self.big.push((first, n, row.time_ns));
                return;
            }
            for p in first..first + n {
                let t = self.pages.entry(p).or_insert(row.time_ns);
                *t = (*t).max(row.time_ns);
            }
        }
    }

    /// Page → latest write time, for every page a small write writes and every page in
    /// `frames` a big write writes.
    pub(super) fn finish(mut self, frames: &FxHashSet<u64>) -> FxHashMap<u64, u64> {
        for (first, n, time) in std::mem::take(&mut self.big) {
            let mut add = |p: u64| {
                let t = self.pages.entry(p).or_insert(time);
                *t = (*t).max(time);
            };
            if n <= frames.len() as u64 {
                (first..first + n)
                    .filter(|p| frames.contains(p))
                    .for_each(&mut add);
            } else {
                frames
                    .iter()
                    .copied()
                    .filter(|p| (first..first + n).contains(p))
                    .for_each(&mut add);
            }
        }
        self.pages
    }
}
