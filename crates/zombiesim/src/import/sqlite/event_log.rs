//! The WAL event log (`sqlite_wal_events*.csv`: `t,kind,file,pgno,offset,len,
//! commit_size`), read row by row: frames, syncs, truncates and writes, in time order.

use super::layout::{FileKind, PAGE, REGION_BYTES};
use super::row::{check_range, count_write, num, Event, Row};
use crate::error::Result;
use crate::import::{ImportReport, Lines};
use crate::trace::parse_decimal_ns;

/// The event log's columns.
pub(super) const EVENT_FIELDS: &str = "t,kind,file,pgno,offset,len,commit_size";

/// The event log: `t,kind,file,pgno,offset,len,commit_size`.
pub(super) struct EventRows {
    lines: Lines,
    last: u64,
    pub(super) rows: u64,
}

impl EventRows {
    pub(super) fn new(lines: Lines) -> EventRows {
        EventRows {
            lines,
            last: 0,
            rows: 0,
        }
    }

    /// The next row (dropped rows are counted in `report`).
    pub(super) fn next(&mut self, report: &mut ImportReport) -> Result<Option<Row>> {
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
