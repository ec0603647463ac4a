//! The merge's state machine: the database pages dirty in the WAL, their cleaning by a
//! checkpoint's writes to the database file or by a WAL truncate, and the records
//! (host events in the database buffer, device writes, flushes) each row becomes.

use super::join::Range;
use super::layout::{pages, FileKind, DB_BASE, PAGE, WAL_BASE, WAL_HEADER};
use super::row::{Event, Row};
use crate::error::Result;
use crate::import::{ImportReport, Output};
use crate::trace::{HostBuffer, TraceOp, TraceRecord};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeSet;
use std::io::Write;

/// What the merge counts, for the report's details.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) frames: u64,
    pub(super) commits: u64,
    pub(super) frame_writes: u64,
    pub(super) frames_off_stride: u64,
    pub(super) checkpoint_writes: u64,
    pub(super) checkpoint_pages: u64,
    pub(super) cleaned_by_checkpoint: u64,
    pub(super) truncates: u64,
    pub(super) wal_truncates: u64,
    pub(super) cleaned_by_truncate: u64,
    pub(super) flushes: u64,
}

/// The merge's state: what it writes, and the pages dirty in the WAL.
pub(super) struct Importer<W: Write> {
    pub(super) output: Output<W>,
    /// Database pages (from 0) whose newest copy is in the WAL.
    pub(super) wal_dirty: BTreeSet<u64>,
    pub(super) dirtied: FxHashSet<u64>,
    /// Database page → the last time the database file is written there (joins).
    pub(super) db_written: FxHashMap<u64, u64>,
    /// The time range in which the same run's shim log has the WAL writes.
    pub(super) shim_cover: Option<Range>,
    pub(super) counts: Counts,
}

impl<W: Write> Importer<W> {
    pub(super) fn emit(&mut self, row: Row, report: &mut ImportReport) -> Result<()> {
        let t = row.time_ns;
        match row.event {
            Event::Frame {
                pgno,
                offset,
                len,
                commit,
            } => {
                let page = pgno - 1;
                let c = &mut self.counts;
                c.frames += 1;
                c.commits += u64::from(commit);
                report.host_events += 1;
                if self.db_written.get(&page).is_some_and(|&w| w >= t) {
                    report.host_events_joined += 1;
                }
                if offset < WAL_HEADER || !(offset - WAL_HEADER).is_multiple_of(len + PAGE) {
                    c.frames_off_stride += 1;
                }
                self.dirtied.insert(page);
                self.wal_dirty.insert(page);
                self.record(t, TraceOp::Dirty, DB_BASE + page * PAGE, 1, report)?;
                if !self.shim_cover.is_some_and(|r| r.contains(t)) {
                    self.counts.frame_writes += 1;
                    let (first, n) = pages(offset, len + PAGE);
                    self.write(t, WAL_BASE + first * PAGE, n, &[], report)?;
                }
            }
            Event::Write {
                file,
                offset,
                len,
                values,
            } => {
                let (first, n) = pages(offset, len);
                if file == FileKind::Db {
                    self.counts.checkpoint_writes += 1;
                    self.counts.checkpoint_pages += n;
                    let cleaned: Vec<u64> =
                        self.wal_dirty.range(first..first + n).copied().collect();
                    for p in &cleaned {
                        self.wal_dirty.remove(p);
                    }
                    self.counts.cleaned_by_checkpoint += cleaned.len() as u64;
                    self.clean(t, &cleaned, report)?;
                }
                self.write(t, file.base() + first * PAGE, n, &values, report)?;
            }
            Event::Flush => {
                self.counts.flushes += 1;
                let rec = TraceRecord {
                    time_ns: t,
                    op: TraceOp::Flush,
                    offset: 0,
                    size: 0,
                    device: 0,
                    placement: None,
                };
                self.output.write(&rec, &[], report)?;
            }
            Event::Truncate(file) => {
                self.counts.truncates += 1;
                if file == FileKind::Wal {
                    self.counts.wal_truncates += 1;
                    let cleaned: Vec<u64> =
                        std::mem::take(&mut self.wal_dirty).into_iter().collect();
                    self.counts.cleaned_by_truncate += cleaned.len() as u64;
                    self.clean(t, &cleaned, report)?;
                }
            }
        }
        Ok(())
    }

    /// `clean(database)` of `pages` (ascending), in runs of consecutive pages.
    fn clean(&mut self, t: u64, pages: &[u64], report: &mut ImportReport) -> Result<()> {
        let mut i = 0;
        while i < pages.len() {
            let mut j = i + 1;
            while j < pages.len() && pages[j] == pages[j - 1] + 1 {
                j += 1;
            }
            self.record(
                t,
                TraceOp::Clean,
                DB_BASE + pages[i] * PAGE,
                (j - i) as u64,
                report,
            )?;
            i = j;
        }
        Ok(())
    }

    /// A host event of `n` pages in the database buffer.
    fn record(
        &mut self,
        t: u64,
        op: TraceOp,
        offset: u64,
        n: u64,
        report: &mut ImportReport,
    ) -> Result<()> {
        let rec = TraceRecord {
            time_ns: t,
            op,
            offset,
            size: n * PAGE,
            device: HostBuffer::Database.id(),
            placement: None,
        };
        self.output.write(&rec, &[], report)
    }

    fn write(
        &mut self,
        t: u64,
        offset: u64,
        n: u64,
        values: &[u64],
        report: &mut ImportReport,
    ) -> Result<()> {
        let rec = TraceRecord {
            time_ns: t,
            op: TraceOp::Write,
            offset,
            size: n * PAGE,
            device: 0,
            placement: None,
        };
        self.output.write(&rec, values, report)
    }
}
