//! The hashing shim's log (`sqlite_hashwrite*.log`, written by an `LD_PRELOAD` shim):
//! `W` lines (a write with one xxh3 per page touched) and `S` lines (a sync), read row
//! by row in time order, keeping the one database's files.

use super::layout::{pages, FileKind, PAGE};
use super::row::{check_range, count_write, num, Event, Row};
use crate::error::Result;
use crate::fingerprint::fold128;
use crate::import::{ImportReport, Lines};

/// The hashing shim's log: `W t_ns pid fd path offset len first_page xxh3[,xxh3…]`,
/// `S t_ns pid fd path fsync|fdatasync`.
pub(super) struct ShimRows {
    pub(super) lines: Lines,
    last: u64,
    /// The database's path (the first file seen, without `-wal` / `-shm`).
    db: Option<String>,
    pub(super) rows: u64,
    pub(super) writes: u64,
    pub(super) syncs: u64,
    pub(super) partial_values: u64,
}

impl ShimRows {
    pub(super) fn new(lines: Lines) -> ShimRows {
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

    pub(super) fn next(&mut self, report: &mut ImportReport) -> Result<Option<Row>> {
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
