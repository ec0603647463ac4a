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

use super::{member, memory_lines, Extents, ImportReport, Lines, Output};
use crate::error::{Error, Result};
use crate::fingerprint::fold128;
use crate::trace::{parse_decimal_ns, HostBuffer, TraceOp, TraceRecord};
use rustc_hash::FxHashMap;
use std::io::Write;
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
    let offset_ns = read_clock_offset(Lines::open(&member(folder, "uptime_start.txt"), CLOCK)?)?;
    let extents = Extents::read(&member(folder, "extents.txt"))?;
    let inodes_path = member(folder, "inodes.txt");
    let inodes = if inodes_path.exists() {
        read_inodes(Lines::open(&inodes_path, "inode list")?)?
    } else {
        FxHashMap::default()
    };
    let dirty = Lines::open(&find(folder, "pagecache_dirty.csv"), DIRTY)?;
    let writes = Lines::open(&find(folder, "device_writes_hashed.csv"), WRITES)?;
    let mut report = ImportReport::new("capture", out);
    let mut output = Output::create(out, true)?;
    merge(
        offset_ns,
        &extents,
        &inodes,
        dirty,
        writes,
        &mut output,
        &mut report,
    )?;
    output.close(&mut report)?;
    Ok(report)
}

const CLOCK: &str = "clock reference (uptime, then epoch seconds)";
const DIRTY: &str = "page-cache dirty log (t,ino,file,index)";
const WRITES: &str = "device write log (t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write)";

/// [`import_capture`] of a capture held in memory (the fuzz harness): the contents of
/// `uptime_start.txt`, `extents.txt`, `inodes.txt` (if any), `pagecache_dirty.csv` and
/// `device_writes_hashed.csv`. Returns the report and the notified trace's bytes.
pub(crate) fn import_capture_in_memory(
    clock: &[u8],
    extents: &[u8],
    inodes: Option<&[u8]>,
    dirty: &[u8],
    writes: &[u8],
) -> Result<(ImportReport, Vec<u8>)> {
    let offset_ns = read_clock_offset(memory_lines("uptime_start.txt", clock))?;
    let extents = Extents::from_lines(memory_lines("extents.txt", extents))?;
    let inodes = match inodes {
        Some(b) => read_inodes(memory_lines("inodes.txt", b))?,
        None => FxHashMap::default(),
    };
    let out = Path::new("<memory>");
    let mut report = ImportReport::new("capture", out);
    let mut output = Output::memory(true)?;
    merge(
        offset_ns,
        &extents,
        &inodes,
        memory_lines("pagecache_dirty.csv", dirty),
        memory_lines("device_writes_hashed.csv", writes),
        &mut output,
        &mut report,
    )?;
    let bytes = output.finish(&mut report)?;
    Ok((report, bytes))
}

/// Merges the dirty events and the device writes by time into `output`.
fn merge<W: Write>(
    offset_ns: i128,
    extents: &Extents,
    inodes: &FxHashMap<u64, String>,
    dirty: Lines,
    writes: Lines,
    output: &mut Output<W>,
    report: &mut ImportReport,
) -> Result<()> {
    let mut dirty = DirtyRows {
        lines: dirty,
        offset_ns,
        last: i128::MIN,
    };
    let mut writes = WriteRows {
        lines: writes,
        last: 0,
    };
    let mut next_dirty = dirty.next(extents, inodes, report)?;
    let mut next_write = writes.next(extents, report)?;
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
            next_write = writes.next(extents, report)?;
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
                    placement: None,
                },
                value,
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXTENTS: &[u8] = b"== a\n   0: 0..3: 100..103: 4: last,eof\n";
    const DIRTY: &str = "t,ino,file,index\n";

    fn import(clock: &str, dirty: &str) -> Result<(ImportReport, Vec<u8>)> {
        import_capture_in_memory(clock.as_bytes(), EXTENTS, None, dirty.as_bytes(), b"")
    }

    #[test]
    fn imports_from_memory() {
        let (report, bytes) = import("100 50\n1000\n", &format!("{DIRTY}100.5,1,a,2\n")).unwrap();
        assert_eq!((report.records, report.host_events_joined), (1, 1));
        assert_eq!(&bytes[..8], b"ZSTRACE2");
    }

    #[test]
    fn times_beyond_64_bits_of_nanoseconds_are_errors() {
        // Each used to wrap (`as i128`, `as u64`) or overflow `t + epoch - uptime`.
        for (clock, dirty, want) in [
            (
                "340282366920938463463.374607431768211455 0\n1\n",
                DIRTY.to_string(),
                "uptime_start.txt:1: expected `uptime_seconds idle_seconds`",
            ),
            (
                "1 0\n18446744073.709551616\n",
                DIRTY.to_string(),
                "uptime_start.txt:2: expected epoch seconds",
            ),
            (
                "0 0\n1\n",
                format!("{DIRTY}170141183460469231731687303715.884105727,1,a,0\n"),
                "pagecache_dirty.csv:2: expected t (uptime seconds)",
            ),
            (
                "0 0\n18446744073.709551615\n",
                format!("{DIRTY}1.0,1,a,0\n"),
                "pagecache_dirty.csv:2: t beyond 2^64 ns",
            ),
        ] {
            let e = import(clock, &dirty).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
        // The largest time that fits is kept.
        let (report, _) =
            import("0 0\n18446744073.709551615\n", &format!("{DIRTY}0,1,a,0\n")).unwrap();
        assert_eq!(report.records, 1);
    }
}
