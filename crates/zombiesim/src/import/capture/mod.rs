//! The three-level capture of a real program (the `pgbench-ext4` layout, also what
//! `zombiesim capture` writes) as a notified trace.
//!
//! ```text
//!   pagecache_dirty.csv.gz       t,ino,file,index        t: kernel uptime (s)
//!        │  file page ──extents.txt──► device block       t + (epoch − uptime)
//!        ▼                                                (uptime_start.txt)
//!   dirty(block, page cache) ──┐
//!                              ├─ merged by time (dirty first on ties) ─► ZSTRACE2
//!   write(block, xxh3) ────────┤
//!        ▲                     │
//!   device_writes_hashed.csv.gz  t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write
//!                              │
//!   trim(blocks) ──────────────┘  (writes before trims on ties)
//!        ▲
//!   device_trims.csv.gz          t_wall,fsblk,blocks     (a capture with discard or fstrim)
//! ```
//!
//! - A device write is *joined* when `extents.txt` places the file page it names at
//!   its block (or, without a file name, some file page there): its dirty events can
//!   then be matched to it. Every device write is kept, joined or not.
//! - Files deleted during the run are in `extents_deleted.txt` (same format, named
//!   `<ino N.G>`: inode N's generation G), when the capture recorded ext4's block map.
//! - A dirty event of `<block device>` (the block device's own page cache: file-system
//!   metadata) is joined to the block its page index names.
//! - A dirty event is *joined* when its file page has a device block in `extents.txt`;
//!   the others are dropped, counted by reason: the file is gone by the end of the
//!   capture (temporary files, recycled WAL segments), or the page lies beyond the
//!   file's extents (never allocated). A `?` file is looked up by inode in
//!   `inodes.txt` when that file is there.
//! - Both inputs must be in time order (they are as captured); a row earlier than the
//!   one before is an error naming it.
//! - Content hashes become the writes' fingerprints (an empty hash: none).
//! - `device_trims.csv.gz`, when the capture has it, holds each discard request the file
//!   system sent (a mount with `discard`, or `fstrim`): one trim of `blocks` 4 KiB blocks
//!   from `fsblk`. Without it the trace has no trims.
//! - With a [`CapturePlacement`] other than `none`, each device write carries an NVMe
//!   placement identifier and the trace is version 3: by file (writes of no file 0, the
//!   files 1.. in order of first write), or by the file's Linux write-life hint, which
//!   `zombiesim capture` reads off every file at the end of the run (`hints.txt`,
//!   `hint path`: 0 not set, 1 none, 2 short, 3 medium, 4 long, 5 extreme).

use super::capture_placement::{header, read_hints, Placer};
use super::{member, memory_lines, Extents, ImportReport, Lines, Output};
use crate::error::{Error, Result};
use crate::fingerprint::fold128;
use crate::trace::{parse_decimal_ns, HostBuffer, TraceOp, TraceRecord};
use rustc_hash::FxHashMap;
use std::io::Write;
use std::path::Path;

pub use super::capture_placement::CapturePlacement;

const BLOCK: u64 = 4096;

/// Imports the capture in `folder` into the notified trace `out`.
pub fn import_capture(folder: &Path, out: &Path) -> Result<ImportReport> {
    import_capture_placed(folder, out, CapturePlacement::None)
}

/// [`import_capture`], each device write given a placement identifier by `placement`
/// (a version-3 trace unless `none`). `hint` needs the capture's `hints.txt`.
pub fn import_capture_placed(
    folder: &Path,
    out: &Path,
    placement: CapturePlacement,
) -> Result<ImportReport> {
    if !folder.is_dir() {
        return Err(Error::Io {
            path: folder.display().to_string(),
            reason: "not a folder: expected a capture folder (pagecache_dirty.csv.gz, \
                     device_writes_hashed.csv.gz, extents.txt, uptime_start.txt)"
                .into(),
        });
    }
    let offset_ns = read_clock_offset(Lines::open(&member(folder, "uptime_start.txt"), CLOCK)?)?;
    let extents = Extents::read_with_deleted(&member(folder, "extents.txt"))?;
    let inodes_path = member(folder, "inodes.txt");
    let inodes = if inodes_path.exists() {
        read_inodes(Lines::open(&inodes_path, "inode list")?)?
    } else {
        FxHashMap::default()
    };
    let hints = if placement == CapturePlacement::Hint {
        let path = member(folder, HINTS_FILE);
        if !path.exists() {
            return Err(Error::Io {
                path: path.display().to_string(),
                reason: "placement `hint` reads each file's write-life hint from this file, \
                         which `zombiesim capture` writes (a capture made without it, or on \
                         a kernel without F_GET_RW_HINT, has none): use placement `file`"
                    .into(),
            });
        }
        read_hints(Lines::open(&path, HINTS)?)?
    } else {
        FxHashMap::default()
    };
    let dirty = Lines::open(&find(folder, "pagecache_dirty.csv"), DIRTY)?;
    let writes = Lines::open(&find(folder, "device_writes_hashed.csv"), WRITES)?;
    let trims_path = find(folder, TRIMS_FILE);
    let trims = if trims_path.exists() {
        Some(Lines::open(&trims_path, TRIMS)?)
    } else {
        None
    };
    let mut report = ImportReport::new("capture", out);
    let mut output = Output::create_declared(out, header(placement))?;
    merge(
        offset_ns,
        &extents,
        &inodes,
        dirty,
        writes,
        trims,
        &mut Placer::new(placement, hints),
        &mut output,
        &mut report,
    )?;
    output.close(&mut report)?;
    Ok(report)
}

const CLOCK: &str = "clock reference (uptime, then epoch seconds)";
/// The `file` of the block device's own page cache (file-system metadata): its page
/// index is the device block.
const BLOCK_DEVICE: &str = "<block device>";
const HINTS_FILE: &str = "hints.txt";
const HINTS: &str = "write-life hints (hint path)";
const DIRTY: &str = "page-cache dirty log (t,ino,file,index)";
const WRITES: &str = "device write log (t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write)";
const TRIMS_FILE: &str = "device_trims.csv";
const TRIMS: &str = "device trim log (t_wall,fsblk,blocks)";

/// [`import_capture`] of a capture held in memory (the fuzz harness): the contents of
/// `uptime_start.txt`, `extents.txt`, `inodes.txt` (if any), `pagecache_dirty.csv`,
/// `device_writes_hashed.csv` and `device_trims.csv` (if any), and `hints.txt` (if any)
/// with the placement to give. Returns the report and the notified trace's bytes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn import_capture_in_memory(
    clock: &[u8],
    extents: &[u8],
    inodes: Option<&[u8]>,
    dirty: &[u8],
    writes: &[u8],
    trims: Option<&[u8]>,
    hints: Option<&[u8]>,
    placement: CapturePlacement,
) -> Result<(ImportReport, Vec<u8>)> {
    let offset_ns = read_clock_offset(memory_lines("uptime_start.txt", clock))?;
    let extents = Extents::from_lines(memory_lines("extents.txt", extents))?;
    let inodes = match inodes {
        Some(b) => read_inodes(memory_lines("inodes.txt", b))?,
        None => FxHashMap::default(),
    };
    let hints = match hints {
        Some(b) => read_hints(memory_lines(HINTS_FILE, b))?,
        None => FxHashMap::default(),
    };
    let out = Path::new("<memory>");
    let mut report = ImportReport::new("capture", out);
    let mut output = Output::memory_declared(header(placement))?;
    merge(
        offset_ns,
        &extents,
        &inodes,
        memory_lines("pagecache_dirty.csv", dirty),
        memory_lines("device_writes_hashed.csv", writes),
        trims.map(|b| memory_lines(TRIMS_FILE, b)),
        &mut Placer::new(placement, hints),
        &mut output,
        &mut report,
    )?;
    let bytes = output.finish(&mut report)?;
    Ok((report, bytes))
}

/// Merges the dirty events, the device writes and the trims (if any) by time into
/// `output`: on ties dirty events first, then writes, then trims.
#[allow(clippy::too_many_arguments)]
fn merge<W: Write>(
    offset_ns: i128,
    extents: &Extents,
    inodes: &FxHashMap<u64, String>,
    dirty: Lines,
    writes: Lines,
    trims: Option<Lines>,
    placer: &mut Placer,
    output: &mut Output<W>,
    report: &mut ImportReport,
) -> Result<()> {
    let mut trims = trims.map(|lines| TrimRows {
        log: WallLog::new(lines),
    });
    let mut next_trim = match trims.as_mut() {
        Some(t) => t.next()?,
        None => None,
    };
    let mut dirty = DirtyRows {
        lines: dirty,
        offset_ns,
        last: i128::MIN,
    };
    let mut writes = WriteRows {
        log: WallLog::new(writes),
    };
    let mut next_dirty = dirty.next(extents, inodes, report)?;
    let mut next_write = writes.next(extents, placer, report)?;
    let mut value = [0u64; 1];
    loop {
        let trim_due = next_trim.as_ref().map(|r| r.time_ns);
        let before_trim = |t: u64| trim_due.is_none_or(|due| t <= due);
        let take_dirty = match (&next_dirty, &next_write) {
            (Some(d), Some(w)) => d.time_ns <= w.0.time_ns && before_trim(d.time_ns),
            (Some(d), None) => before_trim(d.time_ns),
            (None, _) => false,
        };
        let take_write = !take_dirty
            && next_write
                .as_ref()
                .is_some_and(|w| before_trim(w.0.time_ns));
        if !take_dirty && !take_write {
            let Some(trim) = next_trim.take() else {
                break;
            };
            output.write(&trim, &[], report)?;
            next_trim = trims
                .as_mut()
                .expect("a trim came from the trim log")
                .next()?;
            continue;
        }
        if take_dirty {
            let d = next_dirty.take().expect("a dirty event");
            output.write(&d, &[], report)?;
            next_dirty = dirty.next(extents, inodes, report)?;
        } else {
            let (w, v) = next_write.take().expect("a device write");
            let values: &[u64] = match v {
                Some(v) => {
                    value[0] = v;
                    &value
                }
                None => &[],
            };
            output.write(&w, values, report)?;
            next_write = writes.next(extents, placer, report)?;
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
        writes.log.lines.line.saturating_sub(1),
    );
    if let Some(t) = trims {
        report.details.insert(
            "device_trim_rows".into(),
            t.log.lines.line.saturating_sub(1),
        );
    }
    placer.summarize(report);
    Ok(())
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
fn read_clock_offset(mut lines: Lines) -> Result<i128> {
    let uptime = match lines.advance()?.then(|| lines.text()) {
        Some(l) => {
            let f = l.split_whitespace().next().unwrap_or("").to_string();
            below_2_64(parse_decimal_ns(&f)).ok_or_else(|| {
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
            below_2_64(parse_decimal_ns(l))
                .ok_or_else(|| lines.error(format!("expected epoch seconds, found `{l}`")))?
        }
        None => {
            return Err(lines.error("expected a second line with the epoch seconds"));
        }
    };
    Ok(epoch as i128 - uptime as i128)
}

/// A time in nanoseconds that fits 64 bits (584 years), so that sums and differences
/// of two such times fit `i128`.
fn below_2_64(ns: Option<u128>) -> Option<u128> {
    ns.filter(|&ns| ns <= u128::from(u64::MAX))
}

/// `inodes.txt` (`ino size path`): inode → path.
fn read_inodes(mut lines: Lines) -> Result<FxHashMap<u64, String>> {
    let mut map = FxHashMap::default();
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
            let t = below_2_64(parse_decimal_ns(f[0])).ok_or_else(|| {
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
            let block = if file == BLOCK_DEVICE {
                if index > u64::MAX / BLOCK {
                    return Err(self
                        .lines
                        .error(format!("index {index} is beyond 2^52 blocks")));
                }
                Some(index)
            } else {
                extents.block_of(file, index)
            };
            let Some(block) = block else {
                let reason = if extents.has_file(file) {
                    "page beyond the file's extents (not allocated at the end of the capture)"
                } else if file.starts_with("<ino ") {
                    "page of a file deleted during the capture that never reached the device"
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
            let time_ns = u64::try_from(time.max(0))
                .map_err(|_| self.lines.error("t beyond 2^64 ns on the epoch clock"))?;
            report.host_events_joined += 1;
            *report
                .details
                .entry(format!("dirty_events_{}", top(file)))
                .or_default() += 1;
            return Ok(Some(TraceRecord {
                time_ns,
                op: TraceOp::Dirty,
                offset: block * BLOCK,
                size: BLOCK,
                device: HostBuffer::PageCache.id(),
                placement: None,
            }));
        }
    }
}

/// A device log in time order, `t_wall` (epoch seconds) first: the writes or the trims.
struct WallLog {
    lines: Lines,
    last: u128,
}

impl WallLog {
    fn new(lines: Lines) -> WallLog {
        WallLog { lines, last: 0 }
    }

    /// Moves to the next row of `columns` (`n` comma-separated fields; the header and
    /// empty lines skipped) and checks its time order: its `t_wall` in nanoseconds, or
    /// None at the end. The row's fields are `self.fields(n)`.
    fn advance(&mut self, n: usize, columns: &str) -> Result<Option<u128>> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line = self.lines.text();
            if line.is_empty() || line.starts_with("t_wall") {
                continue;
            }
            let f = self.fields(n);
            if f.len() != n {
                return Err(self.lines.error(format!(
                    "expected {n} comma-separated fields ({columns}), found {}",
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
            return Ok(Some(t));
        }
    }

    /// The current row's fields (at most `n`: the last keeps any further commas).
    fn fields(&self, n: usize) -> Vec<&str> {
        self.lines.text().splitn(n, ',').collect()
    }

    fn time_ns(&self, t: u128) -> Result<u64> {
        u64::try_from(t).map_err(|_| self.lines.error("t_wall beyond 2^64 ns"))
    }
}

/// `device_trims.csv`: `t_wall,fsblk,blocks`, one row per discard request.
struct TrimRows {
    log: WallLog,
}

impl TrimRows {
    /// The next trim.
    fn next(&mut self) -> Result<Option<TraceRecord>> {
        let Some(t) = self.log.advance(3, "t_wall,fsblk,blocks")? else {
            return Ok(None);
        };
        let f = self.log.fields(3);
        let number = |i: usize, what: &str| -> Result<u64> {
            f[i].parse().map_err(|_| {
                self.log
                    .lines
                    .error(format!("expected {what}, found `{}`", f[i]))
            })
        };
        let block = number(1, "fsblk (a 4 KiB block number)")?;
        let blocks = number(2, "blocks (a count of 4 KiB blocks, 1 or more)")?;
        let end = block.checked_add(blocks).filter(|&e| e <= u64::MAX / BLOCK);
        if blocks == 0 || end.is_none() {
            return Err(self.log.lines.error(format!(
                "a trim of {blocks} blocks from fsblk {block}: expected 1 or more blocks \
                 ending below 2^52"
            )));
        }
        Ok(Some(TraceRecord {
            time_ns: self.log.time_ns(t)?,
            op: TraceOp::Trim,
            offset: block * BLOCK,
            size: blocks * BLOCK,
            device: 0,
            placement: None,
        }))
    }
}

struct WriteRows {
    log: WallLog,
}

impl WriteRows {
    /// The next device request, with its fingerprint.
    fn next(
        &mut self,
        extents: &Extents,
        placer: &mut Placer,
        report: &mut ImportReport,
    ) -> Result<Option<(TraceRecord, Option<u64>)>> {
        let columns = "t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write";
        let Some(t) = self.log.advance(7, columns)? else {
            return Ok(None);
        };
        let f = self.log.fields(7);
        let lines = &self.log.lines;
        let op = crate::trace::pgbench::rwbs_op(f[1]).map_err(|r| lines.error(r))?;
        let block: u64 = f[2].parse().map_err(|_| {
            lines.error(format!(
                "expected fsblk (a 4 KiB block number), found `{}`",
                f[2]
            ))
        })?;
        if block > u64::MAX / BLOCK {
            return Err(lines.error(format!("fsblk {block} is beyond 2^52 blocks")));
        }
        let value = if op == TraceOp::Write && !f[5].is_empty() {
            let h = u128::from_str_radix(f[5], 16).map_err(|_| {
                lines.error(format!(
                    "expected content_xxh3 as hexadecimal digits, found `{}`",
                    f[5]
                ))
            })?;
            Some(fold128(h))
        } else {
            None
        };
        let mut placement = None;
        if op == TraceOp::Write {
            report.device_writes += 1;
            let page: Option<u64> = f[4].parse().ok();
            let owner = extents.page_of(block);
            // The file page the log names is at this block (also when the block
            // has since held another file's page: a file deleted during the run).
            let named_here =
                !f[3].is_empty() && page.is_some_and(|p| extents.block_of(f[3], p) == Some(block));
            // The file the log names at the time of the write, else the block's
            // owner at the end of the capture.
            let file = if f[3].is_empty() {
                owner.map(|o| o.0)
            } else {
                Some(f[3])
            };
            placement = placer.place(file);
            let joined = match (f[3], page, owner) {
                _ if named_here => true,
                (_, _, None) => {
                    report.drop(
                        "device write to a block of no file in extents.txt (kept, not joined)",
                        &lines.name,
                        lines.line,
                        format!("fsblk {block}"),
                    );
                    false
                }
                ("", _, Some(_)) => true,
                (file, Some(p), Some((of, op))) if file == of && p == op => true,
                (file, _, Some((of, op))) => {
                    report.drop(
                        "device write whose file page extents.txt places elsewhere (kept, not joined)",
                        &lines.name,
                        lines.line,
                        format!("fsblk {block} is {of} page {op}, the log says {file} page {}", f[4]),
                    );
                    false
                }
            };
            if joined {
                report.device_writes_joined += 1;
                *report
                    .details
                    .entry(format!("device_writes_{}", top(file.unwrap_or(""))))
                    .or_default() += 1;
            }
        }
        let time_ns = self.log.time_ns(t)?;
        Ok(Some((
            TraceRecord {
                time_ns,
                op,
                offset: block * BLOCK,
                size: BLOCK,
                device: 0,
                placement,
            },
            value,
        )))
    }
}

#[cfg(test)]
mod tests;
