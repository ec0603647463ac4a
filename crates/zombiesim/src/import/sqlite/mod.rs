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
//! **Address layout** ([`layout`]). One byte address space holds the capture's three
//! files: the database file at [`DB_BASE`](layout::DB_BASE) (0; page `pgno` at
//! `(pgno − 1) · 4096`), the WAL at [`WAL_BASE`](layout::WAL_BASE) (1 TiB) and the WAL
//! index (`-shm`) at [`SHM_BASE`](layout::SHM_BASE) (2 TiB), each at its file offsets;
//! a file must stay below 1 TiB. The trace is sparse, so a replay on a
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

mod event_log;
mod folder;
mod importer;
mod join;
mod layout;
mod merge;
mod row;
mod shim_log;

use super::{member, memory_lines, ImportReport, Lines, Output, MAX_EXAMPLES};
use crate::error::{Error, Result};
use event_log::{EventRows, EVENT_FIELDS};
use folder::{file_name, find, unread_files};
use merge::merge;
use shim_log::ShimRows;
use std::path::Path;

/// The event log's names (with `.gz` / `.zst` too), the first one named when missing.
const EVENT_NAMES: [&str; 2] = ["sqlite_wal_events_excerpt.csv", "sqlite_wal_events.csv"];
/// The shim log's names.
const SHIM_NAMES: [&str; 2] = ["sqlite_hashwrite_excerpt.log", "sqlite_hashwrite.log"];

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

#[cfg(test)]
mod tests;
