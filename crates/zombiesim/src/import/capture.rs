//! The three-level capture of a real program (the `pgbench-ext4` layout, also what
//! `zombiesim capture` writes) as a notified trace.
//!
//! ```text
//!   pagecache_dirty.csv.gz       t,ino,file,index        t: kernel uptime (s)
//!        │  file page ──extents.txt──► device block       t + (epoch − uptime)
//!        ▼                                                (uptime_start.txt)
//!   dirty(block, page cache) ──┐
//!                              ├─ merged by time (dirty first on ties) ─► ZSTRACE2
//!   write(block, xxh3) ────────┘
//!        ▲
//!   device_writes_hashed.csv.gz  t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write
//! ```
//!
//! - A device write is *joined* when `extents.txt` places the file page it names at
//!   its block (or, without a file name, some file page there): its dirty events can
//!   then be matched to it. Every device write is kept, joined or not.
//! - A dirty event is *joined* when its file page has a device block in `extents.txt`;
//!   the others are dropped, counted by reason: the file is gone by the end of the
//!   capture (temporary files, recycled WAL segments), or the page lies beyond the
//!   file's extents (never allocated). A `?` file is looked up by inode in
//!   `inodes.txt` when that file is there.
//! - Both inputs must be in time order (they are as captured); a row earlier than the
//!   one before is an error naming it.
//! - Content hashes become the writes' fingerprints (an empty hash: none).

use super::{member, Extents, ImportReport, Lines, Output};
use crate::error::{Error, Result};
use crate::fingerprint::fold128;
use crate::trace::{parse_decimal_ns, HostBuffer, TraceOp, TraceRecord};
use rustc_hash::FxHashMap;
use std::path::Path;

const BLOCK: u64 = 4096;

/// Imports the capture in `folder` into the notified trace `out`.
pub fn import_capture(folder: &Path, out: &Path) -> Result<ImportReport> {
    if !folder.is_dir() {
        return Err(Error::Io {
            path: folder.display().to_string(),
            reason: "not a folder: expected a capture folder (pagecache_dirty.csv.gz, \
                     device_writes_hashed.csv.gz, extents.txt, uptime_start.txt)"
                .into(),
        });
    }
    let offset_ns = read_clock_offset(&member(folder, "uptime_start.txt"))?;
    let extents = Extents::read(&member(folder, "extents.txt"))?;
    let inodes = read_inodes(&member(folder, "inodes.txt"))?;
    let mut dirty = DirtyRows {
        lines: Lines::open(
            &find(folder, "pagecache_dirty.csv"),
            "page-cache dirty log (t,ino,file,index)",
        )?,
        offset_ns,
        last: i128::MIN,
    };
    let mut writes = WriteRows {
        lines: Lines::open(
            &find(folder, "device_writes_hashed.csv"),
            "device write log (t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write)",
        )?,
        last: 0,
    };
    let mut report = ImportReport::new("capture", out);
    let mut output = Output::create(out, true)?;
    let mut next_dirty = dirty.next(&extents, &inodes, &mut report)?;
    let mut next_write = writes.next(&extents, &mut report)?;
    let mut value = [0u64; 1];
    loop {
        let take_dirty = match (&next_dirty, &next_write) {
            (Some(d), Some(w)) => d.time_ns <= w.0.time_ns,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if take_dirty {
            let d = next_dirty.take().expect("a dirty event");
            output.write(&d, &[], &mut report)?;
            next_dirty = dirty.next(&extents, &inodes, &mut report)?;
        } else {
            let (w, v) = next_write.take().expect("a device write");
            let values: &[u64] = match v {
                Some(v) => {
                    value[0] = v;
                    &value
                }
                None => &[],
            };
            output.write(&w, values, &mut report)?;
            next_write = writes.next(&extents, &mut report)?;
        }
    }
    report
        .details
        .insert("files_in_extents".into(), extents.files() as u64);
    report
        .details
        .insert("extents_not_on_device".into(), extents.unplaced());
    report
        .details
        .insert("pagecache_rows".into(), dirty.lines.line.saturating_sub(1));
    report.details.insert(
        "device_write_rows".into(),
        writes.lines.line.saturating_sub(1),
    );
    output.close(&mut report)?;
    Ok(report)
}

/// The first component of a relative path (`base`, `pg_wal`), for the details.
fn top(file: &str) -> &str {
    file.split('/').next().unwrap_or(file)
}

/// `name.gz`, `name.zst` or `name` in `folder`, whichever exists (the `.gz` named in
/// the error when none does).
fn find(folder: &Path, name: &str) -> std::path::PathBuf {
    [".gz", ".zst", ""]
        .iter()
        .map(|ext| member(folder, &format!("{name}{ext}")))
        .find(|p| p.exists())
        .unwrap_or_else(|| member(folder, &format!("{name}.gz")))
}

/// `uptime_start.txt`: `uptime idle` then the epoch time taken at the same moment.
/// Returns epoch − uptime in nanoseconds.
fn read_clock_offset(path: &Path) -> Result<i128> {
    let mut lines = Lines::open(path, "clock reference (uptime, then epoch seconds)")?;
    let uptime = match lines.advance()?.then(|| lines.text()) {
        Some(l) => {
            let f = l.split_whitespace().next().unwrap_or("").to_string();
            parse_decimal_ns(&f).ok_or_else(|| {
                lines.error(format!(
                    "expected `uptime_seconds idle_seconds`, found `{l}`"
                ))
            })?
        }
        None => {
            return Err(lines.error("expected `uptime_seconds idle_seconds`, found an empty file"))
        }
    };
    let epoch = match lines.advance()?.then(|| lines.text()) {
        Some(l) => {
            let l = l.trim();
            parse_decimal_ns(l)
                .ok_or_else(|| lines.error(format!("expected epoch seconds, found `{l}`")))?
        }
        None => {
            return Err(lines.error("expected a second line with the epoch seconds"));
        }
    };
    Ok(epoch as i128 - uptime as i128)
}

/// `inodes.txt` (`ino size path`), when present: inode → path.
fn read_inodes(path: &Path) -> Result<FxHashMap<u64, String>> {
    let mut map = FxHashMap::default();
    if !path.exists() {
        return Ok(map);
    }
    let mut lines = Lines::open(path, "inode list")?;
    while lines.advance()? {
        let l = lines.text();
        let mut f = l.splitn(3, ' ');
        let (Some(ino), Some(_size), Some(p)) = (f.next(), f.next(), f.next()) else {
            if l.trim().is_empty() {
                continue;
            }
            return Err(lines.error(format!("expected `ino size path`, found `{l}`")));
        };
        let ino: u64 = ino
            .parse()
            .map_err(|_| lines.error(format!("expected an inode number, found `{ino}`")))?;
        map.insert(ino, p.to_string());
    }
    Ok(map)
}

struct DirtyRows {
    lines: Lines,
    offset_ns: i128,
    last: i128,
}

impl DirtyRows {
    /// The next joined dirty event (dropped rows are counted in `report`).
    fn next(
        &mut self,
        extents: &Extents,
        inodes: &FxHashMap<u64, String>,
        report: &mut ImportReport,
    ) -> Result<Option<TraceRecord>> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line = self.lines.text();
            if line.is_empty() || line.starts_with("t,") {
                continue;
            }
            let f: Vec<&str> = line.splitn(4, ',').collect();
            if f.len() != 4 {
                return Err(self.lines.error(format!(
                    "expected 4 comma-separated fields (t,ino,file,index), found {}",
                    f.len()
                )));
            }
            let t = parse_decimal_ns(f[0]).ok_or_else(|| {
                self.lines
                    .error(format!("expected t (uptime seconds), found `{}`", f[0]))
            })? as i128;
            let ino: u64 = f[1].parse().map_err(|_| {
                self.lines
                    .error(format!("expected ino (an inode number), found `{}`", f[1]))
            })?;
            let index: u64 = f[3].parse().map_err(|_| {
                self.lines.error(format!(
                    "expected index (a 4 KiB page number), found `{}`",
                    f[3]
                ))
            })?;
            let time = t + self.offset_ns;
            if time < self.last {
                return Err(self.lines.error(format!(
                    "events out of time order: t = {} s comes after a later row",
                    f[0]
                )));
            }
            self.last = time;
            report.host_events += 1;
            let mut file = f[2];
            if file.is_empty() || file == "?" {
                match inodes.get(&ino) {
                    Some(p) => file = p.as_str(),
                    None => {
                        report.drop(
                            "file unknown (inode not in inodes.txt)",
                            &self.lines.name,
                            self.lines.line,
                            format!("inode {ino} page {index}"),
                        );
                        continue;
                    }
                }
            }
            let Some(block) = extents.block_of(file, index) else {
                let reason = if extents.has_file(file) {
                    "page beyond the file's extents (not allocated at the end of the capture)"
                } else {
                    "file not in extents.txt (deleted or renamed before the end of the capture)"
                };
                report.drop(
                    reason,
                    &self.lines.name,
                    self.lines.line,
                    format!("{file} page {index}"),
                );
                continue;
            };
            report.host_events_joined += 1;
            *report
                .details
                .entry(format!("dirty_events_{}", top(file)))
                .or_default() += 1;
            return Ok(Some(TraceRecord {
                time_ns: time.max(0) as u64,
                op: TraceOp::Dirty,
                offset: block * BLOCK,
                size: BLOCK,
                device: HostBuffer::PageCache.id(),
            }));
        }
    }
}

struct WriteRows {
    lines: Lines,
    last: u128,
}

impl WriteRows {
    /// The next device request, with its fingerprint.
    fn next(
        &mut self,
        extents: &Extents,
        report: &mut ImportReport,
    ) -> Result<Option<(TraceRecord, Option<u64>)>> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line = self.lines.text();
            if line.is_empty() || line.starts_with("t_wall") {
                continue;
            }
            let f: Vec<&str> = line.splitn(7, ',').collect();
            if f.len() != 7 {
                return Err(self.lines.error(format!(
                    "expected 7 comma-separated fields (t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write), found {}",
                    f.len()
                )));
            }
            let t = parse_decimal_ns(f[0]).ok_or_else(|| {
                self.lines
                    .error(format!("expected t_wall (epoch seconds), found `{}`", f[0]))
            })?;
            if t < self.last {
                return Err(self.lines.error(format!(
                    "events out of time order: t_wall = {} comes after a later row",
                    f[0]
                )));
            }
            self.last = t;
            let op = crate::trace::pgbench::rwbs_op(f[1]).map_err(|r| self.lines.error(r))?;
            let block: u64 = f[2].parse().map_err(|_| {
                self.lines.error(format!(
                    "expected fsblk (a 4 KiB block number), found `{}`",
                    f[2]
                ))
            })?;
            if block > u64::MAX / BLOCK {
                return Err(self
                    .lines
                    .error(format!("fsblk {block} is beyond 2^52 blocks")));
            }
            let value = if op == TraceOp::Write && !f[5].is_empty() {
                let h = u128::from_str_radix(f[5], 16).map_err(|_| {
                    self.lines.error(format!(
                        "expected content_xxh3 as hexadecimal digits, found `{}`",
                        f[5]
                    ))
                })?;
                Some(fold128(h))
            } else {
                None
            };
            if op == TraceOp::Write {
                report.device_writes += 1;
                let page: Option<u64> = f[4].parse().ok();
                let owner = extents.page_of(block);
                let joined = match (f[3], page, owner) {
                    (_, _, None) => {
                        report.drop(
                            "device write to a block of no file in extents.txt (kept, not joined)",
                            &self.lines.name,
                            self.lines.line,
                            format!("fsblk {block}"),
                        );
                        false
                    }
                    ("", _, Some(_)) => true,
                    (file, Some(p), Some((of, op))) if file == of && p == op => true,
                    (file, _, Some((of, op))) => {
                        report.drop(
                            "device write whose file page extents.txt places elsewhere (kept, not joined)",
                            &self.lines.name,
                            self.lines.line,
                            format!("fsblk {block} is {of} page {op}, the log says {file} page {}", f[4]),
                        );
                        false
                    }
                };
                if joined {
                    report.device_writes_joined += 1;
                    let file = if f[3].is_empty() {
                        owner.map_or("", |o| o.0)
                    } else {
                        f[3]
                    };
                    *report
                        .details
                        .entry(format!("device_writes_{}", top(file)))
                        .or_default() += 1;
                }
            }
            let time_ns =
                u64::try_from(t).map_err(|_| self.lines.error("t_wall beyond 2^64 ns"))?;
            return Ok(Some((
                TraceRecord {
                    time_ns,
                    op,
                    offset: block * BLOCK,
                    size: BLOCK,
                    device: 0,
                },
                value,
            )));
        }
    }
}
