//! PostgreSQL's WAL as the database buffer's dirty events (000 §4.3's redo-log monitor):
//! every WAL record's block references name the relation pages the database just dirtied
//! in its shared buffers. Joined to a notified trace of the same capture, they tell the
//! device which flash pages are zombies long before the page cache sees them.
//!
//! ```text
//!   pg_waldump text ─► record: lsn, block refs `rel SPC/DB/REL [fork F] blk N`, and the
//!        │             time of COMMIT records (other records: interpolated by LSN
//!        │             between the commits around them)
//!        │  REL + fork + N ─► file base/DB/REL[_fsm|_vm][.segment], 8 KiB page N
//!        │                    (under the data directory: where `PG_VERSION` is)
//!        │                    = 4 KiB pages 2N, 2N+1 ─extents.txt─► device blocks
//!        ▼
//!   dirty(blocks, database) ──┐
//!                             ├─ merged by time ─► notified trace
//!   the writes trace ─────────┘  (before a device write or a page-cache dirty event of a
//!                                 block dirty in the database buffer: clean(block,
//!                                 database): the database wrote its page down)
//! ```
//!
//! - A block reference is *joined* when its relation page resolves, through the relation
//!   file and `extents.txt`, to device blocks; one that does not is dropped, counted by
//!   reason. `wal_block_refs_written` counts the joined references whose page the writes
//!   trace writes at some time in the window: under PostgreSQL's spread checkpoints most
//!   pages dirtied in a window are written by the checkpoint after it, and stay dirty
//!   (zombies) past its end.
//! - Records must be in LSN order; a line that is not a `rmgr:` record is an error
//!   naming it, except `pg_waldump:` messages (the end of the readable WAL), counted.
//! - The database buffer's page is taken as cleaned when the page cache or the device
//!   next sees the page: a write into an already dirty page-cache page is invisible to
//!   the capture, so a page dirtied again in the database between such a write and the
//!   device write is counted clean too early (a small undercount of zombies).

use super::{memory_lines, Extents, ImportReport, Lines, Output};
use crate::error::Result;
use crate::trace::{
    HostBuffer, NativeHeader, ReadOptions, TraceFormat, TraceOp, TraceReader, TraceRecord,
};
use rustc_hash::FxHashSet;
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::Path;

const BLOCK: u64 = 4096;
/// PostgreSQL pages per relation segment file (1 GiB of 8 KiB pages).
const SEGMENT_PAGES: u64 = 131_072;
/// Records kept waiting for a time stamp before they take the last one known.
const MAX_PENDING: usize = 1 << 20;

/// One WAL record's dirty events, waiting for its time.
struct Pending {
    lsn: u64,
    /// Device blocks (4 KiB) the record's block references dirty.
    blocks: Vec<u64>,
}

/// Imports `waldump` (pg_waldump text) joined to the notified trace `writes` into `out`.
pub fn import_wal(
    waldump: &Path,
    writes: &Path,
    out: &Path,
    extents: Option<&Path>,
) -> Result<ImportReport> {
    let extents_path = match extents {
        Some(p) => p.to_path_buf(),
        None => waldump
            .parent()
            .unwrap_or(Path::new("."))
            .join("extents.txt"),
    };
    let extents = Extents::read_with_deleted(&extents_path)?;
    let wal = Lines::open(waldump, "WAL dump (pg_waldump text)")?;
    // Pass 1: the blocks the window writes.
    let written = written_blocks(open_writes(writes)?)?;
    let mut report = ImportReport::new("wal", out);
    let mut trace = open_writes(writes)?;
    let mut output = Output::create_declared(out, kept(&mut trace)?)?;
    merge(wal, &extents, &written, trace, &mut output, &mut report)?;
    output.close(&mut report)?;
    Ok(report)
}

/// [`import_wal`] of inputs held in memory (the fuzz harness): the pg_waldump text, the
/// notified trace of the writes (native) and `extents.txt`. Returns the report and the
/// notified trace's bytes.
pub(crate) fn import_wal_in_memory(
    waldump: &[u8],
    writes: &[u8],
    extents: &[u8],
) -> Result<(ImportReport, Vec<u8>)> {
    let extents = Extents::from_lines(memory_lines("extents.txt", extents))?;
    let wal = memory_lines("waldump.txt", waldump);
    let open = || {
        let input = Box::new(std::io::Cursor::new(writes.to_vec()));
        let mut r = TraceReader::from_reader(
            "writes.bin",
            input,
            TraceFormat::Native,
            &ReadOptions::default(),
        )?;
        r.native_header()?;
        Ok::<_, crate::error::Error>(r)
    };
    let written = written_blocks(open()?)?;
    let out = Path::new("<memory>");
    let mut report = ImportReport::new("wal", out);
    let mut trace = open()?;
    let mut output = Output::memory_declared(kept(&mut trace)?)?;
    merge(wal, &extents, &written, trace, &mut output, &mut report)?;
    let bytes = output.finish(&mut report)?;
    Ok((report, bytes))
}

/// What the output keeps of the writes trace's header: its values and placement
/// identifiers.
fn kept(trace: &mut TraceReader) -> Result<NativeHeader> {
    let h = trace.native_header()?.unwrap_or_default();
    Ok(NativeHeader::new(true, h.values).with_placement(h.placement))
}

/// Merges the WAL records' dirty events into the writes trace, by time.
fn merge<W: Write>(
    mut wal: Lines,
    extents: &Extents,
    written: &BlockSet,
    mut trace: TraceReader,
    output: &mut Output<W>,
    report: &mut ImportReport,
) -> Result<()> {
    let mut parser = WalParser {
        data_dir: extents
            .directory_with("PG_VERSION", "base/")
            .unwrap_or("")
            .to_string(),
        ..WalParser::default()
    };
    let mut db_dirty: FxHashSet<u64> = FxHashSet::default();
    let mut pending: VecDeque<Pending> = VecDeque::new();
    // Events with their times, ready to merge: (time, blocks).
    let mut ready: VecDeque<(u64, Vec<u64>)> = VecDeque::new();
    let mut next_rec = next_record(&mut trace)?;
    let mut wal_done = false;
    loop {
        // Fill `ready` until it has an event or the dump is done.
        while ready.is_empty() && !wal_done {
            match parser.next(&mut wal, extents, written, report)? {
                Some(Parsed::Record(p)) => {
                    pending.push_back(p);
                    if pending.len() > MAX_PENDING {
                        let t = parser.last_time.unwrap_or(0);
                        for p in pending.drain(..) {
                            ready.push_back((t, p.blocks));
                        }
                    }
                }
                Some(Parsed::Time(lsn, t)) => {
                    // Records since the previous time stamp: interpolate by LSN.
                    let (lsn0, t0) = parser.prev_stamp.unwrap_or((lsn, t));
                    for p in pending.drain(..) {
                        let at = if lsn > lsn0 && t >= t0 {
                            let f = (p.lsn.saturating_sub(lsn0)) as f64 / (lsn - lsn0) as f64;
                            t0 + ((t - t0) as f64 * f.clamp(0.0, 1.0)) as u64
                        } else {
                            t
                        };
                        ready.push_back((at, p.blocks));
                    }
                    parser.prev_stamp = Some((lsn, t));
                }
                None => {
                    wal_done = true;
                    let t = parser.last_time.unwrap_or(0);
                    for p in pending.drain(..) {
                        ready.push_back((t, p.blocks));
                    }
                }
            }
        }
        let take_event = match (ready.front(), &next_rec) {
            (Some(e), Some(r)) => e.0 <= r.0.time_ns,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if take_event {
            let (t, blocks) = ready.pop_front().expect("an event");
            for b in blocks {
                db_dirty.insert(b);
                let rec = TraceRecord {
                    time_ns: t.max(output.last_ns()),
                    op: TraceOp::Dirty,
                    offset: b * BLOCK,
                    size: BLOCK,
                    device: HostBuffer::Database.id(),
                    placement: None,
                };
                output.write(&rec, &[], report)?;
            }
        } else {
            let (rec, values) = next_rec.take().expect("a record");
            let touches_page = matches!(rec.op, TraceOp::Write)
                || (rec.op == TraceOp::Dirty && rec.device == HostBuffer::PageCache.id());
            if touches_page && !db_dirty.is_empty() {
                let (first, n) = rec.pages(BLOCK);
                let range = first..first + n;
                // The blocks of the record dirty in the database, in ascending order;
                // found from the smaller side (a record can span a million blocks).
                let mut cleaned: Vec<u64> = if n > db_dirty.len() as u64 {
                    db_dirty
                        .iter()
                        .copied()
                        .filter(|b| range.contains(b))
                        .collect()
                } else {
                    range.filter(|b| db_dirty.contains(b)).collect()
                };
                cleaned.sort_unstable();
                for b in cleaned {
                    db_dirty.remove(&b);
                    let clean = TraceRecord {
                        time_ns: rec.time_ns.max(output.last_ns()),
                        op: TraceOp::Clean,
                        offset: b * BLOCK,
                        size: BLOCK,
                        device: HostBuffer::Database.id(),
                        placement: None,
                    };
                    output.write(&clean, &[], report)?;
                }
            }
            let rec = TraceRecord {
                time_ns: rec.time_ns.max(output.last_ns()),
                ..rec
            };
            if rec.op == TraceOp::Write {
                report.device_writes += 1;
                report.device_writes_joined += 1;
            }
            output.write(&rec, &values, report)?;
            next_rec = next_record(&mut trace)?;
        }
    }
    for (k, v) in parser.details() {
        report.details.insert(k.into(), v);
    }
    report
        .details
        .insert("database_dirty_at_end".into(), db_dirty.len() as u64);
    Ok(())
}

fn open_writes(path: &Path) -> Result<TraceReader> {
    let mut r = TraceReader::open(path, TraceFormat::Native, &ReadOptions::default())?;
    r.native_header()?;
    Ok(r)
}

/// The next record of the writes trace, with its values, on the trace's own clock
/// (absolute: the importers keep epoch nanoseconds, and the reader's relative times are
/// turned back with the first record's time).
fn next_record(r: &mut TraceReader) -> Result<Option<(TraceRecord, Vec<u64>)>> {
    match r.next() {
        None => Ok(None),
        Some(rec) => {
            let mut rec = rec?;
            rec.time_ns = rec.time_ns.saturating_add(r.first_time_ns().unwrap_or(0));
            Ok(Some((rec, r.values().to_vec())))
        }
    }
}

/// The blocks the writes trace writes.
fn written_blocks(trace: TraceReader) -> Result<BlockSet> {
    let mut set = BlockSet::default();
    for rec in trace {
        let rec = rec?;
        if rec.op == TraceOp::Write {
            let (first, n) = rec.pages(BLOCK);
            set.insert(first, first + n);
        }
    }
    Ok(set)
}

/// A set of blocks as disjoint runs `start → end` (exclusive): a write of a million
/// blocks is one entry, not a million.
#[derive(Debug, Default)]
struct BlockSet(BTreeMap<u64, u64>);

impl BlockSet {
    /// Adds the blocks `start..end`.
    fn insert(&mut self, mut start: u64, mut end: u64) {
        if start >= end {
            return;
        }
        if let Some((&s, &e)) = self.0.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
            }
        }
        while let Some((&s, &e)) = self.0.range(start..).next() {
            if s > end {
                break;
            }
            end = end.max(e);
            self.0.remove(&s);
        }
        self.0.insert(start, end);
    }

    fn contains(&self, block: u64) -> bool {
        self.0
            .range(..=block)
            .next_back()
            .is_some_and(|(_, &end)| block < end)
    }
}

enum Parsed {
    Record(Pending),
    /// A time stamp at an LSN (a COMMIT or ABORT record).
    Time(u64, u64),
}

#[derive(Default)]
struct WalParser {
    last_lsn: Option<u64>,
    last_time: Option<u64>,
    prev_stamp: Option<(u64, u64)>,
    /// A time stamp to hand out after the record that carried it.
    stamp: Option<(u64, u64)>,
    records: u64,
    stamps: u64,
    block_refs: u64,
    block_refs_written: u64,
    messages: u64,
    /// The cluster's data directory within the captured file system (`""` or `dir/`).
    data_dir: String,
}

impl WalParser {
    fn details(&self) -> [(&'static str, u64); 5] {
        [
            ("wal_records", self.records),
            ("wal_time_stamps", self.stamps),
            ("wal_block_refs", self.block_refs),
            ("wal_block_refs_written", self.block_refs_written),
            ("pg_waldump_messages", self.messages),
        ]
    }

    fn next(
        &mut self,
        wal: &mut Lines,
        extents: &Extents,
        written: &BlockSet,
        report: &mut ImportReport,
    ) -> Result<Option<Parsed>> {
        if let Some((lsn, t)) = self.stamp.take() {
            return Ok(Some(Parsed::Time(lsn, t)));
        }
        loop {
            if !wal.advance()? {
                return Ok(None);
            }
            let line = wal.text().trim();
            if line.is_empty() {
                continue;
            }
            if line.starts_with("pg_waldump:") {
                self.messages += 1;
                continue;
            }
            if !line.starts_with("rmgr:") {
                return Err(wal.error(format!(
                    "expected a pg_waldump record line (`rmgr: ... lsn: X/Y, ... desc: ...`), found `{}`",
                    clip(line)
                )));
            }
            let lsn = field(line, "lsn: ")
                .and_then(parse_lsn)
                .ok_or_else(|| wal.error("expected `lsn: X/Y` (hexadecimal) in the record"))?;
            if self.last_lsn.is_some_and(|l| lsn <= l) {
                return Err(wal.error(format!(
                    "records out of LSN order: {} after {}",
                    fmt_lsn(lsn),
                    fmt_lsn(self.last_lsn.unwrap_or(0))
                )));
            }
            self.last_lsn = Some(lsn);
            self.records += 1;
            let mut blocks = Vec::new();
            let mut rest = line;
            while let Some(i) = rest.find("blkref #") {
                rest = &rest[i + 8..];
                let r = parse_blkref(rest).map_err(|why| wal.error(why))?;
                self.block_refs += 1;
                match resolve(&r, extents, &self.data_dir) {
                    Ok(bs) => {
                        report.host_events += 1;
                        report.host_events_joined += 1;
                        if bs.iter().any(|&b| written.contains(b)) {
                            self.block_refs_written += 1;
                        }
                        blocks.extend(bs);
                    }
                    Err(reason) => {
                        report.host_events += 1;
                        report.drop(reason, &wal.name, wal.line, r.describe());
                    }
                }
            }
            if let Some(t) = commit_time(line) {
                let t = t.map_err(|why| wal.error(why))?;
                self.stamps += 1;
                self.last_time = Some(t);
                self.stamp = Some((lsn, t));
            }
            let p = Pending { lsn, blocks };
            if p.blocks.is_empty() {
                if let Some((lsn, t)) = self.stamp.take() {
                    return Ok(Some(Parsed::Time(lsn, t)));
                }
                continue;
            }
            return Ok(Some(Parsed::Record(p)));
        }
    }
}

fn clip(s: &str) -> &str {
    match s.char_indices().nth(80) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The text after `key` up to the next comma.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let i = line.find(key)? + key.len();
    let rest = &line[i..];
    Some(rest.split(',').next().unwrap_or(rest).trim())
}

fn parse_lsn(s: &str) -> Option<u64> {
    let (hi, lo) = s.split_once('/')?;
    let hi = u64::from_str_radix(hi.trim(), 16).ok()?;
    let lo = u64::from_str_radix(lo.trim(), 16).ok()?;
    (hi <= u64::from(u32::MAX) && lo <= u64::from(u32::MAX)).then_some((hi << 32) | lo)
}

fn fmt_lsn(l: u64) -> String {
    format!("{:X}/{:X}", l >> 32, l & 0xFFFF_FFFF)
}

/// A block reference: `rel SPC/DB/REL [fork F] blk N`.
struct BlockRef {
    spc: u32,
    db: u32,
    rel: u32,
    fork: String,
    blk: u64,
}

impl BlockRef {
    fn describe(&self) -> String {
        format!(
            "rel {}/{}/{} fork {} blk {}",
            self.spc, self.db, self.rel, self.fork, self.blk
        )
    }
}

fn parse_blkref(s: &str) -> std::result::Result<BlockRef, String> {
    let bad = || {
        format!(
            "expected a block reference `blkref #N: rel SPC/DB/REL [fork F] blk N`, found `{}`",
            clip(s)
        )
    };
    let rel_at = s.find("rel ").ok_or_else(bad)? + 4;
    let mut words = s[rel_at..].split([' ', ',']).filter(|w| !w.is_empty());
    let ids: Vec<u32> = words
        .next()
        .ok_or_else(bad)?
        .split('/')
        .map(|x| x.parse().map_err(|_| bad()))
        .collect::<std::result::Result<_, _>>()?;
    if ids.len() != 3 {
        return Err(bad());
    }
    let mut fork = "main".to_string();
    let mut blk = None;
    while let Some(w) = words.next() {
        match w {
            "fork" => fork = words.next().ok_or_else(bad)?.to_string(),
            "blk" => {
                blk = Some(words.next().ok_or_else(bad)?.parse().map_err(|_| bad())?);
                break;
            }
            _ => return Err(bad()),
        }
    }
    Ok(BlockRef {
        spc: ids[0],
        db: ids[1],
        rel: ids[2],
        fork,
        blk: blk.ok_or_else(bad)?,
    })
}

/// The device blocks of a block reference's 8 KiB page.
fn resolve(
    r: &BlockRef,
    extents: &Extents,
    data_dir: &str,
) -> std::result::Result<Vec<u64>, &'static str> {
    let dir = match r.spc {
        1663 => format!("{data_dir}base/{}/{}", r.db, r.rel),
        1664 => format!("{data_dir}global/{}", r.rel),
        _ => return Err("relation in a tablespace outside the data directory"),
    };
    let fork = match r.fork.as_str() {
        "main" => "",
        "fsm" => "_fsm",
        "vm" => "_vm",
        "init" => "_init",
        _ => return Err("unknown relation fork"),
    };
    let segment = r.blk / SEGMENT_PAGES;
    let page = r.blk % SEGMENT_PAGES;
    let file = if segment == 0 {
        format!("{dir}{fork}")
    } else {
        format!("{dir}{fork}.{segment}")
    };
    if !extents.has_file(&file) {
        return Err(
            "relation file not in extents.txt (dropped or rewritten before the end of the capture)",
        );
    }
    let blocks: Vec<u64> = (2 * page..2 * page + 2)
        .filter_map(|p| extents.block_of(&file, p))
        .collect();
    if blocks.is_empty() {
        return Err(
            "relation page beyond the file's extents (not on the device at the end of the capture)",
        );
    }
    Ok(blocks)
}

/// The time of a COMMIT / ABORT record (`COMMIT 2026-11-22 04:51:09.042881 UTC`), as
/// epoch nanoseconds; `None` for other records.
fn commit_time(line: &str) -> Option<std::result::Result<u64, String>> {
    let desc = &line[line.find("desc: ")? + 6..];
    let rest = desc
        .strip_prefix("COMMIT ")
        .or_else(|| desc.strip_prefix("ABORT "))
        .or_else(|| desc.strip_prefix("COMMIT_PREPARED "))?;
    let mut it = rest.split_whitespace();
    let (date, time) = (it.next()?, it.next()?);
    if !date.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let zone = it.next().unwrap_or("UTC").trim_end_matches(';');
    Some(parse_timestamp(date, time, zone))
}

fn parse_timestamp(date: &str, time: &str, zone: &str) -> std::result::Result<u64, String> {
    let bad = || {
        format!(
            "expected a time stamp `YYYY-MM-DD HH:MM:SS.ffffff UTC`, found `{date} {time} {zone}`"
        )
    };
    if zone != "UTC" {
        return Err(format!(
            "{}: only UTC time stamps are read (run pg_waldump with TZ=UTC)",
            bad()
        ));
    }
    let d: Vec<i64> = date
        .split('-')
        .map(|x| x.parse().map_err(|_| bad()))
        .collect::<std::result::Result<_, _>>()?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let t: Vec<i64> = hms
        .split(':')
        .map(|x| x.parse().map_err(|_| bad()))
        .collect::<std::result::Result<_, _>>()?;
    if d.len() != 3 || t.len() != 3 {
        return Err(bad());
    }
    // Fields in range (a wild year or day would overflow the arithmetic below).
    let within = |v: i64, lo: i64, hi: i64| (lo..=hi).contains(&v);
    if !(within(d[0], 0, 9999)
        && within(d[1], 1, 12)
        && within(d[2], 1, 31)
        && within(t[0], 0, 24)
        && within(t[1], 0, 59)
        && within(t[2], 0, 60))
    {
        return Err(bad());
    }
    let days = days_from_civil(d[0], d[1], d[2]);
    let secs = days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2];
    let frac_ns = crate::trace::parse_decimal_ns(&format!("0.{frac}")).ok_or_else(bad)? as i64;
    // In i128: nanoseconds since 1970 overflow i64 after 2262.
    let ns = i128::from(secs) * 1_000_000_000 + i128::from(frac_ns);
    u64::try_from(ns).map_err(|_| bad())
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces() {
        assert_eq!(parse_lsn("0/7C0020F8"), Some(0x7C00_20F8));
        assert_eq!(parse_lsn("1/0"), Some(1 << 32));
        let r = parse_blkref("0: rel 1663/16384/16397 fork vm blk 14111 FPW").unwrap();
        assert_eq!(
            (r.spc, r.db, r.rel, r.fork.as_str(), r.blk),
            (1663, 16384, 16397, "vm", 14111)
        );
        assert!(parse_blkref("0: rel 1663/16384 blk 1").is_err());
        // 2026-11-22 04:51:09.042881 UTC, and the capture's epoch clock.
        let line = "rmgr: Transaction len (rec/tot):    34/    34, tx:     254492, lsn: 0/7C013808, prev 0/7C0137B8, desc: COMMIT 2026-11-22 04:51:09.042881 UTC";
        let t = commit_time(line).unwrap().unwrap();
        assert_eq!(t, 1_795_323_069_042_881_000);
        assert!(commit_time("rmgr: Heap desc: HOT_UPDATE off 1").is_none());
        assert!(commit_time("rmgr: T desc: COMMIT 2026-11-22 04:51:09 CET")
            .unwrap()
            .is_err());
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn wild_time_stamps_are_errors_not_overflows() {
        for (date, time) in [
            ("9223372036854775807-01-01", "00:00:00"),
            ("2026-01-9223372036854775807", "00:00:00"),
            ("2026-13-01", "00:00:00"),
            ("2026-01-01", "9223372036854775807:00:00"),
            ("1969-12-31", "23:59:59"),
            // Found by fuzzing: in range, but beyond ±2^63 ns (i64 arithmetic overflowed).
            ("1485-01-11", "00:16:40.650000"),
            ("9999-12-31", "23:59:59"),
            ("2554-07-21", "23:34:34"),
        ] {
            let e = parse_timestamp(date, time, "UTC").unwrap_err();
            assert!(e.starts_with("expected a time stamp"), "{date} {time}: {e}");
        }
        assert_eq!(
            parse_timestamp("1970-01-01", "00:16:40.65", "UTC"),
            Ok(1_000_650_000_000)
        );
        // The last second of 64-bit nanoseconds since 1970.
        assert_eq!(
            parse_timestamp("2554-07-21", "23:34:33.709551615", "UTC"),
            Ok(u64::MAX)
        );
    }

    #[test]
    fn block_sets_keep_runs() {
        let mut s = BlockSet::default();
        s.insert(10, 20);
        s.insert(30, 40);
        s.insert(20, 25); // touches the first run
        s.insert(5, 6);
        s.insert(0, 1 << 20); // swallows everything
        s.insert(7, 7); // empty
        assert_eq!(s.0.len(), 1);
        assert!(s.contains(0) && s.contains((1 << 20) - 1) && !s.contains(1 << 20));
        let mut s = BlockSet::default();
        s.insert(100, 101);
        s.insert(103, 104);
        s.insert(101, 103);
        assert_eq!(s.0.iter().collect::<Vec<_>>(), [(&100, &104)]);
        assert!(!s.contains(99) && s.contains(102) && !s.contains(104));
        // A million-block write is one entry.
        s.insert(u64::MAX - (1 << 20), u64::MAX);
        assert_eq!(s.0.len(), 2);
    }
}
