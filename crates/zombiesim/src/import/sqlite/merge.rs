//! The two-pass merge of the event log and the shim log by time (the event log first
//! on ties) into the output, and the report's details and notes it leaves.

use super::event_log::EventRows;
use super::importer::{Counts, Importer};
use super::join::{DbWrites, Range};
use super::row::Event;
use super::shim_log::ShimRows;
use crate::error::Result;
use crate::import::{ImportReport, Output};
use rustc_hash::FxHashSet;
use std::collections::BTreeSet;
use std::io::Write;

/// What the merge leaves for the report.
pub(super) struct Merged<W: Write> {
    pub(super) im: Importer<W>,
    events: EventRows,
    shim: Option<ShimRows>,
    shim_range: Option<Range>,
    event_range: Range,
    same_run: bool,
}

/// Reads the logs twice (pass 1: time ranges and database writes; pass 2: the merge by
/// time into the output `create` makes, told whether values are written).
pub(super) fn merge<W: Write, S: Fn() -> Result<ShimRows>>(
    open_events: impl Fn() -> Result<EventRows>,
    open_shim: Option<S>,
    create: impl FnOnce(bool) -> Result<Output<W>>,
    report: &mut ImportReport,
) -> Result<Merged<W>> {
    // Pass 1: the logs' time ranges, and when each logs writes each database page.
    let mut scratch = ImportReport::default();
    let mut event_range = Range::default();
    let mut db_written = DbWrites::default();
    // The database pages frames dirty.
    let mut frames = FxHashSet::default();
    let mut rows = open_events()?;
    while let Some(row) = rows.next(&mut scratch)? {
        event_range.add(row.time_ns);
        db_written.note(&row);
        if let Event::Frame { pgno, .. } = row.event {
            frames.insert(pgno - 1);
        }
    }
    let mut shim_written = DbWrites::default();
    let shim_range = match &open_shim {
        Some(open) => {
            let mut rows = open()?;
            let mut range = Range::default();
            while let Some(row) = rows.next(&mut scratch)? {
                range.add(row.time_ns);
                shim_written.note(&row);
            }
            Some(range)
        }
        None => None,
    };
    let mut db_written = db_written.finish(&frames);
    let same_run = shim_range.is_some_and(|s| s.overlaps(&event_range));
    if same_run {
        // Only the same run's database writes are joins.
        for (page, t) in shim_written.finish(&frames) {
            let w = db_written.entry(page).or_insert(t);
            *w = (*w).max(t);
        }
    }

    // Pass 2: merge by time.
    let output = create(open_shim.is_some())?;
    let mut events = open_events()?;
    let mut shim = match &open_shim {
        Some(open) => Some(open()?),
        None => None,
    };
    let mut im = Importer {
        output,
        wal_dirty: BTreeSet::new(),
        dirtied: FxHashSet::default(),
        db_written,
        shim_cover: if same_run { shim_range } else { None },
        counts: Counts::default(),
    };
    let mut next_event = events.next(report)?;
    let mut next_shim = match shim.as_mut() {
        Some(s) => s.next(report)?,
        None => None,
    };
    loop {
        let take_event = match (&next_event, &next_shim) {
            (Some(e), Some(s)) => e.time_ns <= s.time_ns,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if take_event {
            let row = next_event.take().expect("an event row");
            im.emit(row, report)?;
            next_event = events.next(report)?;
        } else {
            let row = next_shim.take().expect("a shim row");
            im.emit(row, report)?;
            next_shim = shim.as_mut().expect("the shim log").next(report)?;
        }
    }
    Ok(Merged {
        im,
        events,
        shim,
        shim_range,
        event_range,
        same_run,
    })
}

impl<W: Write> Merged<W> {
    /// Fills in the report's details; returns the notes (`events_file` names the event
    /// log in them).
    pub(super) fn details(&self, events_file: &str, report: &mut ImportReport) -> Vec<String> {
        let (im, events, event_range) = (&self.im, &self.events, self.event_range);
        let c = &im.counts;
        let d = &mut report.details;
        d.insert("event_rows".into(), events.rows);
        d.insert("frames".into(), c.frames);
        d.insert("commits".into(), c.commits);
        d.insert("frame_writes".into(), c.frame_writes);
        d.insert("frames_off_stride".into(), c.frames_off_stride);
        d.insert("distinct_pages_dirtied".into(), im.dirtied.len() as u64);
        d.insert("checkpoint_writes".into(), c.checkpoint_writes);
        d.insert("checkpoint_pages".into(), c.checkpoint_pages);
        d.insert(
            "pages_cleaned_by_checkpoint".into(),
            c.cleaned_by_checkpoint,
        );
        d.insert("truncates".into(), c.truncates);
        d.insert("wal_truncates".into(), c.wal_truncates);
        d.insert("pages_cleaned_by_truncate".into(), c.cleaned_by_truncate);
        d.insert("flushes".into(), c.flushes);
        d.insert("pages_dirty_at_end".into(), im.wal_dirty.len() as u64);
        d.insert("shim_log_present".into(), u64::from(self.shim.is_some()));
        let mut notes = Vec::new();
        if let (Some(s), Some(r)) = (&self.shim, self.shim_range) {
            d.insert("shim_rows".into(), s.rows);
            d.insert("shim_writes".into(), s.writes);
            d.insert("shim_syncs".into(), s.syncs);
            d.insert("partial_page_values".into(), s.partial_values);
            d.insert("shim_log_other_run".into(), u64::from(!self.same_run));
            if !self.same_run && !r.is_empty() && !event_range.is_empty() {
                let gap = if r.first > event_range.last {
                    r.first - event_range.last
                } else {
                    event_range.first.saturating_sub(r.last)
                };
                d.insert("runs_gap_s".into(), gap / 1_000_000_000);
                notes.push(format!(
                    "{}: another run than {} (t {} to {} s against {} to {} s, {} s apart): \
                     imported on its own clock, not joined to the frames",
                    s.lines.name,
                    events_file,
                    secs(r.first),
                    secs(r.last),
                    secs(event_range.first),
                    secs(event_range.last),
                    gap / 1_000_000_000
                ));
            }
        }
        notes
    }
}

/// Epoch nanoseconds as seconds with 3 decimals.
fn secs(ns: u64) -> String {
    format!(
        "{}.{:03}",
        ns / 1_000_000_000,
        ns % 1_000_000_000 / 1_000_000
    )
}
