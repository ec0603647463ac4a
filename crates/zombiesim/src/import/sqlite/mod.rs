//! A SQLite WAL-mode capture as a notified trace, at the *file* level.
//!
//! In WAL mode a transaction appends *frames* (a 24-byte header, then the page) to
//! `db-wal`; the header's first four bytes are the database page number. From that
//! moment the database file's copy of the page is stale (a zombie on flash) until a
//! checkpoint copies the frame back into the database file, or the WAL restarts.
//!
//! ```text
//!   sqlite_wal_events*.csv   t,kind,file,pgno,offset,len,commit_size   (required)
//!     walframe ─► dirty(db page pgno, database)      [+ write(WAL frame), see below]
//!     fdatasync / fsync ─► flush
//!     ftruncate of -wal ─► clean(database) of every page still dirty in the WAL
//!     write / pwrite / checkpoint (offset, len) ─► write(file region)
//!   sqlite_hashwrite*.log    LD_PRELOAD shim                           (optional)
//!     W t_ns pid fd path offset len first_page xxh3[,xxh3…] ─► write(file region, values)
//!     S t_ns pid fd path fsync|fdatasync ─► flush
//!        │
//!        └─ merged by time (the event log first on ties) ─► notified trace (ZSTRACE2)
//! ```
//!
//! **Address layout.** One byte address space holds the capture's three files: the
//! database file at [`DB_BASE`] (0; page `pgno` at `(pgno − 1) · 4096`), the WAL at
//! [`WAL_BASE`] (1 TiB) and the WAL index (`-shm`) at [`SHM_BASE`] (2 TiB), each at its
//! file offsets; a file must stay below 1 TiB. The trace is sparse, so a replay on a
//! small device remaps it. `--remap modulo` keeps the database pages' numbers (the WAL
//! and `-shm` wrap to 1 TiB and 2 TiB modulo the logical space) and, on a preconditioned
//! device, every dirtied database page has a flash copy to become a zombie.
//! `--remap compact` fits any device too, but it gives logical pages to the pages the
//! *requests* touch only: a database page dirtied and never written in the window gets
//! none, and its host events are dropped (`unmapped_event_pages` in the run's report).
//!
//! **Rules.**
//! - Every write is rounded out to whole 4 KiB pages (the page cache writes pages, and a
//!   fingerprint covers a page): a write of `[o, o + n)` becomes the pages from `o / 4096`
//!   through `(o + n − 1) / 4096`. The shim logs one hash per page touched (a trailing
//!   `~` or `?` marks a page the write covered only in part; the marker is dropped and
//!   counted as `partial_page_values`): they become the write's values.
//! - A `walframe` row dirties its database page in the database buffer (id 1: the newest
//!   copy is in the WAL, outside the database file). Unless the shim log of the *same
//!   run* covers the frame's time (its own WAL writes are then the device writes), the
//!   frame is also written to the WAL region: `len` (the 24-byte header) + 4096 bytes at
//!   `WAL_BASE + offset`, rounded out to pages — two pages for a frame, the neighbouring
//!   frames sharing one, so about twice the WAL page writes of a page cache that
//!   coalesces the appends (the frame writes carry no values: the log has no content).
//! - A write to the database file (a checkpoint) of a page dirty in the WAL is preceded
//!   by `clean(page, database)` at the same time: the replay (`host::recorded`) clears
//!   only the page-cache bit on a write, so without it the page would stay a zombie.
//! - An `ftruncate` of the WAL (it restarts after a checkpoint) cleans every page still
//!   dirty in the WAL: the checkpoint wrote them (unseen here, or the database would have
//!   cleaned them). Truncates of the database file or `-shm` are counted only.
//! - The two logs come from the same run when their time ranges overlap. When they do
//!   not, both are imported on their own clocks, `shim_log_other_run` is 1 and a note
//!   says so; no frame is then joined to a database write.
//! - Both inputs must be in time order; a row earlier than the one before is an
//!   [`Error::Input`] naming it, as is a malformed row. An unknown event kind is
//!   dropped and counted. A write to another file than the database's own three (a
//!   rollback journal, another database) is dropped; `-shm` writes are kept, not joined.
//!
//! **Report.** `host_events` = walframe rows; `host_events_joined` = frames whose page
//! the database file is written later in the same run (a checkpoint seen by the shim
//! log or the event log); `device_writes` = write rows of either log, joined when they
//! go to the database file or the WAL. `details`: `frames`, `commits` (commit_size > 0),
//! `checkpoint_writes` / `checkpoint_pages` (database-file writes), `truncates`,
//! `wal_truncates`, `pages_dirty_at_end`, and more.

use super::{member, memory_lines, ImportReport, Lines, Output, MAX_EXAMPLES};
use crate::error::{Error, Result};
use crate::fingerprint::fold128;
use crate::trace::{parse_decimal_ns, HostBuffer, TraceOp, TraceRecord};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Bytes per database page (and per fingerprint, and per device page).
pub const PAGE: u64 = 4096;
/// Where the database file starts in the trace's address space.
pub const DB_BASE: u64 = 0;
/// Where the WAL file (`-wal`) starts: 1 TiB.
pub const WAL_BASE: u64 = 1 << 40;
/// Where the WAL index (`-shm`) starts: 2 TiB.
pub const SHM_BASE: u64 = 2 << 40;
/// The largest file each region holds.
pub const REGION_BYTES: u64 = 1 << 40;
/// Bytes of the WAL's own header, before the first frame.
pub const WAL_HEADER: u64 = 32;

/// The event log's names (with `.gz` / `.zst` too), the first one named when missing.
const EVENT_NAMES: [&str; 2] = ["sqlite_wal_events_excerpt.csv", "sqlite_wal_events.csv"];
/// The shim log's names.
const SHIM_NAMES: [&str; 2] = ["sqlite_hashwrite_excerpt.log", "sqlite_hashwrite.log"];
const EVENT_FIELDS: &str = "t,kind,file,pgno,offset,len,commit_size";

/// Which of the database's files a write goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileKind {
    Db,
    Wal,
    Shm,
}

impl FileKind {
    fn base(self) -> u64 {
        match self {
            FileKind::Db => DB_BASE,
            FileKind::Wal => WAL_BASE,
            FileKind::Shm => SHM_BASE,
        }
    }

    /// The kind of `path` by its suffix (`-wal`, `-shm`, else the database), and the
    /// database's path; `None` for a rollback journal.
    fn of_path(path: &str) -> Option<(FileKind, &str)> {
        if path.ends_with("-journal") {
            None
        } else if let Some(db) = path.strip_suffix("-wal") {
            Some((FileKind::Wal, db))
        } else if let Some(db) = path.strip_suffix("-shm") {
            Some((FileKind::Shm, db))
        } else {
            Some((FileKind::Db, path))
        }
    }
}

/// One input row, ready to emit.
#[derive(Clone, Debug, PartialEq)]
enum Event {
    /// A WAL frame of database page `pgno` at WAL offset `offset` (header `len` bytes).
    Frame {
        pgno: u64,
        offset: u64,
        len: u64,
        commit: bool,
    },
    /// A write of `len` bytes at `offset` of a file, with one value per page touched
    /// (or none).
    Write {
        file: FileKind,
        offset: u64,
        len: u64,
        values: Vec<u64>,
    },
    Flush,
    Truncate(FileKind),
}

#[derive(Clone, Debug, PartialEq)]
struct Row {
    time_ns: u64,
    event: Event,
}

/// Imports the SQLite WAL capture in `folder` into the notified trace `out`.
pub fn import_sqlite(folder: &Path, out: &Path) -> Result<ImportReport> {
    if !folder.is_dir() {
        return Err(Error::Io {
            path: folder.display().to_string(),
            reason: format!(
                "not a folder: expected a SQLite WAL capture folder ({} with {EVENT_FIELDS}, \
                 optionally {})",
                EVENT_NAMES[0], SHIM_NAMES[0]
            ),
        });
    }
    let events_path = find(folder, &EVENT_NAMES).ok_or_else(|| Error::Io {
        path: member(folder, EVENT_NAMES[0]).display().to_string(),
        reason: format!(
            "missing: the WAL event log ({EVENT_FIELDS}) is needed (also looked for {}, \
             and .gz / .zst)",
            EVENT_NAMES[1]
        ),
    })?;
    let shim_path = find(folder, &SHIM_NAMES);
    let mut report = ImportReport::new("sqlite", out);
    let open_shim = shim_path
        .as_ref()
        .map(|p| move || Ok(ShimRows::new(Lines::open(p, SHIM_WHAT)?)));
    let merged = merge(
        || Ok(EventRows::new(Lines::open(&events_path, &event_what())?)),
        open_shim,
        |values| Output::create(out, values),
        &mut report,
    )?;
    let mut notes = merged.details(&file_name(&events_path), &mut report);
    let unread = unread_files(
        folder,
        &[Some(&events_path), shim_path.as_deref(), Some(out)],
    );
    report
        .details
        .insert("files_not_imported".into(), unread.len() as u64);
    if !unread.is_empty() {
        notes.push(format!(
            "{}: not imported: {} (device-level or other logs this importer does not read: \
             no file-to-block mapping joins them to the frames)",
            folder.display(),
            unread.join(", ")
        ));
    }
    if !notes.is_empty() {
        notes.append(&mut report.examples);
        notes.truncate(MAX_EXAMPLES);
        report.examples = notes;
    }
    merged.im.output.close(&mut report)?;
    Ok(report)
}

/// [`import_sqlite`] of logs held in memory (the fuzz harness): the event log and,
/// optionally, the shim log. Returns the report and the notified trace's bytes.
pub(crate) fn import_sqlite_in_memory(
    events: &[u8],
    shim: Option<&[u8]>,
) -> Result<(ImportReport, Vec<u8>)> {
    let mut report = ImportReport::new("sqlite", Path::new("<memory>"));
    let open_shim =
        shim.map(|b| move || Ok(ShimRows::new(memory_lines("sqlite_hashwrite.log", b))));
    let merged = merge(
        || {
            Ok(EventRows::new(memory_lines(
                "sqlite_wal_events.csv",
                events,
            )))
        },
        open_shim,
        Output::memory,
        &mut report,
    )?;
    let mut notes = merged.details("sqlite_wal_events.csv", &mut report);
    if !notes.is_empty() {
        notes.append(&mut report.examples);
        notes.truncate(MAX_EXAMPLES);
        report.examples = notes;
    }
    let bytes = merged.im.output.finish(&mut report)?;
    Ok((report, bytes))
}

const SHIM_WHAT: &str = "hashing shim log (W/S lines)";

fn event_what() -> String {
    format!("WAL event log ({EVENT_FIELDS})")
}

/// What the merge leaves for the report.
struct Merged<W: Write> {
    im: Importer<W>,
    events: EventRows,
    shim: Option<ShimRows>,
    shim_range: Option<Range>,
    event_range: Range,
    same_run: bool,
}

/// Reads the logs twice (pass 1: time ranges and database writes; pass 2: the merge by
/// time into the output `create` makes, told whether values are written).
fn merge<W: Write, S: Fn() -> Result<ShimRows>>(
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
    fn details(&self, events_file: &str, report: &mut ImportReport) -> Vec<String> {
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

/// The first of `names` (or with `.gz` / `.zst`) in `folder`.
fn find(folder: &Path, names: &[&str]) -> Option<PathBuf> {
    names.iter().find_map(|name| {
        ["", ".gz", ".zst"]
            .iter()
            .map(|ext| member(folder, &format!("{name}{ext}")))
            .find(|p| p.is_file())
    })
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The folder's files other than `read` (and hidden ones), by name, sorted.
fn unread_files(folder: &Path, read: &[Option<&Path>]) -> Vec<String> {
    let same = |p: &Path, q: &Path| {
        p == q
            || p.canonicalize()
                .ok()
                .is_some_and(|c| q.canonicalize().ok() == Some(c))
    };
    let Ok(dir) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.path())
        .filter(|p| !read.iter().flatten().any(|q| same(p, q)))
        .map(|p| file_name(&p))
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// Epoch nanoseconds as seconds with 3 decimals.
fn secs(ns: u64) -> String {
    format!(
        "{}.{:03}",
        ns / 1_000_000_000,
        ns % 1_000_000_000 / 1_000_000
    )
}

/// Writes to the database file of more pages than this are kept as ranges (see
/// [`DbWrites`]).
const BIG_WRITE_PAGES: u64 = 256;

/// For each database page a log writes, the latest time it is written (what a frame
/// joins to). A write of more than [`BIG_WRITE_PAGES`] pages is kept as a range and, at
/// the end, applied to the pages frames dirty only (the only pages the join looks up),
/// so that one row with a huge `len` costs neither memory nor time per page.
#[derive(Default)]
struct DbWrites {
    pages: FxHashMap<u64, u64>,
    /// `(first page, pages, time)` of the big writes.
    big: Vec<(u64, u64, u64)>,
}

impl DbWrites {
    fn note(&mut self, row: &Row) {
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
    fn finish(mut self, frames: &FxHashSet<u64>) -> FxHashMap<u64, u64> {
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

/// The 4 KiB pages `[offset, offset + len)` touches: `(first, count)`.
fn pages(offset: u64, len: u64) -> (u64, u64) {
    if len == 0 {
        return (offset / PAGE, 0);
    }
    let first = offset / PAGE;
    let last = offset.saturating_add(len - 1) / PAGE;
    (first, last - first + 1)
}

/// The first and last time of a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    first: u64,
    last: u64,
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
    fn add(&mut self, t: u64) {
        self.first = self.first.min(t);
        self.last = self.last.max(t);
    }

    fn is_empty(&self) -> bool {
        self.first > self.last
    }

    fn contains(&self, t: u64) -> bool {
        self.first <= t && t <= self.last
    }

    fn overlaps(&self, o: &Range) -> bool {
        !self.is_empty() && !o.is_empty() && self.first <= o.last && o.first <= self.last
    }
}

#[derive(Default)]
struct Counts {
    frames: u64,
    commits: u64,
    frame_writes: u64,
    frames_off_stride: u64,
    checkpoint_writes: u64,
    checkpoint_pages: u64,
    cleaned_by_checkpoint: u64,
    truncates: u64,
    wal_truncates: u64,
    cleaned_by_truncate: u64,
    flushes: u64,
}

/// The merge's state: what it writes, and the pages dirty in the WAL.
struct Importer<W: Write> {
    output: Output<W>,
    /// Database pages (from 0) whose newest copy is in the WAL.
    wal_dirty: BTreeSet<u64>,
    dirtied: FxHashSet<u64>,
    /// Database page → the last time the database file is written there (joins).
    db_written: FxHashMap<u64, u64>,
    /// The time range in which the same run's shim log has the WAL writes.
    shim_cover: Option<Range>,
    counts: Counts,
}

impl<W: Write> Importer<W> {
    fn emit(&mut self, row: Row, report: &mut ImportReport) -> Result<()> {
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
        };
        self.output.write(&rec, values, report)
    }
}

/// Parses a decimal field, or fails naming it.
fn num(lines: &Lines, v: &str, what: &str) -> Result<u64> {
    v.trim()
        .parse()
        .map_err(|_| lines.error(format!("expected {what}, found `{v}`")))
}

/// A byte range of a file, checked to fit its 1 TiB region.
fn check_range(lines: &Lines, offset: u64, len: u64) -> Result<()> {
    if offset.checked_add(len).is_none_or(|end| end > REGION_BYTES) {
        return Err(lines.error(format!(
            "bytes {offset} + {len} reach beyond the 1 TiB each file has in the trace's address space"
        )));
    }
    Ok(())
}

/// The event log: `t,kind,file,pgno,offset,len,commit_size`.
struct EventRows {
    lines: Lines,
    last: u64,
    rows: u64,
}

impl EventRows {
    fn new(lines: Lines) -> EventRows {
        EventRows {
            lines,
            last: 0,
            rows: 0,
        }
    }

    /// The next row (dropped rows are counted in `report`).
    fn next(&mut self, report: &mut ImportReport) -> Result<Option<Row>> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line = self.lines.text();
            if line.trim().is_empty() || line.starts_with("t,") {
                continue;
            }
            self.rows += 1;
            let f: Vec<&str> = line.split(',').collect();
            if f.len() != 7 {
                return Err(self.lines.error(format!(
                    "expected 7 comma-separated fields ({EVENT_FIELDS}), found {}",
                    f.len()
                )));
            }
            let t = parse_decimal_ns(f[0])
                .and_then(|t| u64::try_from(t).ok())
                .ok_or_else(|| {
                    self.lines
                        .error(format!("expected t (epoch seconds), found `{}`", f[0]))
                })?;
            if t < self.last {
                return Err(self.lines.error(format!(
                    "rows out of time order: t = {} s comes after a later row",
                    f[0]
                )));
            }
            self.last = t;
            let kind = f[1].trim();
            let file = f[2].trim();
            let event = match kind {
                "walframe" => {
                    let pgno = num(&self.lines, f[3], "pgno (a database page number from 1)")?;
                    if pgno == 0 || pgno > REGION_BYTES / PAGE {
                        return Err(self.lines.error(format!(
                            "pgno {pgno} is not a database page (1 to {})",
                            REGION_BYTES / PAGE
                        )));
                    }
                    let offset = num(
                        &self.lines,
                        f[4],
                        "offset (the frame's byte offset in the WAL)",
                    )?;
                    let len = num(&self.lines, f[5], "len (the frame header's length, 24)")?;
                    let commit = if f[6].trim().is_empty() {
                        0
                    } else {
                        num(
                            &self.lines,
                            f[6],
                            "commit_size (database pages after a commit, or 0)",
                        )?
                    };
                    check_range(&self.lines, offset, len.saturating_add(PAGE))?;
                    Event::Frame {
                        pgno,
                        offset,
                        len,
                        commit: commit > 0,
                    }
                }
                "fdatasync" | "fsync" => Event::Flush,
                "ftruncate" => {
                    Event::Truncate(FileKind::of_path(file).map_or(FileKind::Db, |k| k.0))
                }
                "write" | "pwrite" | "checkpoint" => {
                    let Some((kind, _)) = FileKind::of_path(file) else {
                        report.drop(
                            "write to a rollback journal (skipped)",
                            &self.lines.name,
                            self.lines.line,
                            file.to_string(),
                        );
                        continue;
                    };
                    let offset = num(&self.lines, f[4], "offset (bytes)")?;
                    let len = num(&self.lines, f[5], "len (bytes)")?;
                    check_range(&self.lines, offset, len)?;
                    count_write(report, kind, &self.lines, || {
                        format!("{file} offset {offset}")
                    });
                    if len == 0 {
                        continue;
                    }
                    Event::Write {
                        file: kind,
                        offset,
                        len,
                        values: Vec::new(),
                    }
                }
                _ => {
                    report.drop(
                        "unknown event kind (skipped)",
                        &self.lines.name,
                        self.lines.line,
                        format!("`{kind}`"),
                    );
                    continue;
                }
            };
            return Ok(Some(Row { time_ns: t, event }));
        }
    }
}

/// The hashing shim's log: `W t_ns pid fd path offset len first_page xxh3[,xxh3…]`,
/// `S t_ns pid fd path fsync|fdatasync`.
struct ShimRows {
    lines: Lines,
    last: u64,
    /// The database's path (the first file seen, without `-wal` / `-shm`).
    db: Option<String>,
    rows: u64,
    writes: u64,
    syncs: u64,
    partial_values: u64,
}

impl ShimRows {
    fn new(lines: Lines) -> ShimRows {
        ShimRows {
            lines,
            last: 0,
            db: None,
            rows: 0,
            writes: 0,
            syncs: 0,
            partial_values: 0,
        }
    }

    fn next(&mut self, report: &mut ImportReport) -> Result<Option<Row>> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line = self.lines.text();
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.is_empty() || f[0].starts_with('#') {
                continue;
            }
            self.rows += 1;
            let (min, shape) = match f[0] {
                "W" => (9, "W t_ns pid fd path offset len first_page xxh3[,xxh3…]"),
                "S" => (6, "S t_ns pid fd path fsync|fdatasync"),
                other => {
                    return Err(self.lines.error(format!(
                        "expected a `W` (write) or `S` (sync) line, found `{other}`"
                    )))
                }
            };
            if f.len() < min {
                return Err(self
                    .lines
                    .error(format!("expected `{shape}`, found {} fields", f.len())));
            }
            let t = num(&self.lines, f[1], "t_ns (epoch nanoseconds)")?;
            if t < self.last {
                return Err(self.lines.error(format!(
                    "rows out of time order: t_ns = {} comes after a later row",
                    f[1]
                )));
            }
            self.last = t;
            if f[0] == "S" {
                let what = f[f.len() - 1];
                if what != "fsync" && what != "fdatasync" {
                    return Err(self
                        .lines
                        .error(format!("expected fsync or fdatasync, found `{what}`")));
                }
                self.syncs += 1;
                return Ok(Some(Row {
                    time_ns: t,
                    event: Event::Flush,
                }));
            }
            // A path with spaces: everything between fd and the last four fields.
            let n = f.len();
            let path = f[4..n - 4].join(" ");
            let offset = num(&self.lines, f[n - 4], "offset (bytes)")?;
            let len = num(&self.lines, f[n - 3], "len (bytes)")?;
            let first_page = num(&self.lines, f[n - 2], "first_page (offset / 4096)")?;
            if first_page != offset / PAGE {
                return Err(self.lines.error(format!(
                    "first_page {first_page} but offset {offset} is in page {}",
                    offset / PAGE
                )));
            }
            let (_, count) = pages(offset, len);
            // Room for the hashes the line holds (not for `count`, which `len` sets).
            let commas = f[n - 1].bytes().filter(|&b| b == b',').count();
            let mut values = Vec::with_capacity(commas + 1);
            for h in f[n - 1].split(',') {
                let digits = h.trim_end_matches(['~', '?']);
                if digits.len() != h.len() {
                    self.partial_values += 1;
                }
                let v = (!digits.is_empty() && digits.len() <= 32)
                    .then(|| u128::from_str_radix(digits, 16).ok())
                    .flatten()
                    .ok_or_else(|| {
                        self.lines
                            .error(format!("expected an xxh3 hash (hexadecimal), found `{h}`"))
                    })?;
                values.push(fold128(v));
            }
            if values.len() as u64 != count {
                return Err(self.lines.error(format!(
                    "expected {count} hashes (one per 4 KiB page bytes {offset} + {len} touch), \
                     found {}",
                    values.len()
                )));
            }
            check_range(&self.lines, offset, len)?;
            let Some((kind, db)) = FileKind::of_path(&path) else {
                report.drop(
                    "write to a rollback journal (skipped)",
                    &self.lines.name,
                    self.lines.line,
                    path.clone(),
                );
                continue;
            };
            match &self.db {
                None => self.db = Some(db.to_string()),
                Some(d) if d == db => {}
                Some(d) => {
                    let d = d.clone();
                    report.drop(
                        "write to another database's file (skipped)",
                        &self.lines.name,
                        self.lines.line,
                        format!("{path} (the database is {d})"),
                    );
                    continue;
                }
            }
            self.writes += 1;
            count_write(report, kind, &self.lines, || {
                format!("{path} offset {offset}")
            });
            if len == 0 {
                continue;
            }
            return Ok(Some(Row {
                time_ns: t,
                event: Event::Write {
                    file: kind,
                    offset,
                    len,
                    values,
                },
            }));
        }
    }
}

/// Counts a device write: joined when it is to the database file or the WAL; a write
/// to the `-shm` WAL index is kept but not joined (counted as dropped from the join).
fn count_write(
    report: &mut ImportReport,
    kind: FileKind,
    lines: &Lines,
    what: impl FnOnce() -> String,
) {
    report.device_writes += 1;
    if kind == FileKind::Shm {
        report.drop(
            "write to the -shm WAL index (kept, not joined)",
            &lines.name,
            lines.line,
            what(),
        );
    } else {
        report.device_writes_joined += 1;
    }
}

#[cfg(test)]
mod tests;
