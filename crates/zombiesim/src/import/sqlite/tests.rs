//! Unit tests of the SQLite WAL importer.

use super::join::DbWrites;
use super::layout::{FileKind, PAGE, SHM_BASE, WAL_BASE};
use super::row::{Event, Row};
use super::*;
use crate::trace::{HostBuffer, ReadOptions, TraceFormat, TraceOp, TraceReader, TraceRecord};
use rustc_hash::FxHashSet;
use std::path::PathBuf;

const HEAD: &str = "t,kind,file,pgno,offset,len,commit_size\n";

/// A scratch folder, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn folder(events: Option<&str>, shim: Option<&str>) -> Dir {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("zs-sqlite-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(e) = events {
        std::fs::write(dir.join(EVENT_NAMES[0]), e).unwrap();
    }
    if let Some(s) = shim {
        std::fs::write(dir.join(SHIM_NAMES[0]), s).unwrap();
    }
    Dir(dir)
}

/// A record and its values.
type Rec = (TraceRecord, Vec<u64>);

/// Imports `dir`; returns the report and the records (absolute times) with values.
fn import(dir: &Path) -> Result<(ImportReport, Vec<Rec>)> {
    let out = dir.join("out.zst");
    let report = import_sqlite(dir, &out)?;
    let mut r = TraceReader::open(&out, TraceFormat::Native, &ReadOptions::default())?;
    let header = r.native_header()?.expect("a native header");
    assert!(header.host_events);
    let mut recs = Vec::new();
    while let Some(rec) = r.next() {
        let mut rec = rec?;
        rec.time_ns += r.first_time_ns().unwrap_or(0);
        recs.push((rec, r.values().to_vec()));
    }
    Ok((report, recs))
}

fn ops(recs: &[Rec]) -> Vec<(TraceOp, u64, u64, u32)> {
    recs.iter()
        .map(|(r, _)| (r.op, r.offset, r.size, r.device))
        .collect()
}

fn db(pgno: u64) -> u64 {
    (pgno - 1) * PAGE
}

#[test]
fn a_frame_then_its_checkpoint_write() {
    let events = format!(
        "{HEAD}1.000000,walframe,wal,3,32,24,0\n1.000100,walframe,wal,5,4152,24,5\n\
         1.000200,fdatasync,t.db-wal,,,,\n"
    );
    // Same run: the shim's WAL writes and, later, the checkpoint writes page 3.
    let shim = "W 1000000000 1 4 /x/t.db-wal 32 24 0 aa?\n\
                W 1000000010 1 4 /x/t.db-wal 56 4096 0 bb~,cc?\n\
                S 1000300000 1 4 /x/t.db-wal fdatasync\n\
                W 2000000000 1 3 /x/t.db 8192 4096 2 dd\n";
    let dir = folder(Some(&events), Some(shim));
    let (report, recs) = import(dir.path()).unwrap();
    let d = HostBuffer::Database.id();
    assert_eq!(
        ops(&recs),
        vec![
            (TraceOp::Dirty, db(3), PAGE, d),
            (TraceOp::Write, WAL_BASE, PAGE, 0),
            (TraceOp::Write, WAL_BASE, 2 * PAGE, 0),
            (TraceOp::Dirty, db(5), PAGE, d),
            (TraceOp::Flush, 0, 0, 0),
            (TraceOp::Flush, 0, 0, 0),
            (TraceOp::Clean, db(3), PAGE, d),
            (TraceOp::Write, db(3), PAGE, 0),
        ]
    );
    // The frames' writes come from the shim (same run), with its values.
    assert_eq!(recs[1].1, vec![0xaa]);
    assert_eq!(recs[2].1, vec![0xbb, 0xcc]);
    assert_eq!(recs[7].1, vec![0xdd]);
    assert_eq!(recs[7].0.time_ns, 2_000_000_000);
    assert_eq!((report.host_events, report.host_events_joined), (2, 1));
    assert_eq!((report.device_writes, report.device_writes_joined), (3, 3));
    let det = &report.details;
    assert_eq!(det["frames"], 2);
    assert_eq!(det["commits"], 1);
    assert_eq!(det["frame_writes"], 0);
    assert_eq!(det["checkpoint_writes"], 1);
    assert_eq!(det["pages_cleaned_by_checkpoint"], 1);
    assert_eq!(det["pages_dirty_at_end"], 1);
    assert_eq!(det["shim_log_other_run"], 0);
    assert_eq!(det["partial_page_values"], 3);
    assert_eq!(det["frames_off_stride"], 0);
}

#[test]
fn a_truncate_cleans_a_never_checkpointed_page() {
    let events = format!(
        "{HEAD}1.0,walframe,wal,7,32,24,0\n1.1,walframe,wal,8,4152,24,0\n\
         1.2,walframe,wal,9,8272,24,9\n1.5,ftruncate,t.db-shm,,,,\n\
         2.0,ftruncate,t.db-wal,,,,\n"
    );
    let dir = folder(Some(&events), None);
    let (report, recs) = import(dir.path()).unwrap();
    let d = HostBuffer::Database.id();
    assert_eq!(
        ops(&recs),
        vec![
            (TraceOp::Dirty, db(7), PAGE, d),
            (TraceOp::Write, WAL_BASE, 2 * PAGE, 0),
            (TraceOp::Dirty, db(8), PAGE, d),
            (TraceOp::Write, WAL_BASE + PAGE, 2 * PAGE, 0),
            (TraceOp::Dirty, db(9), PAGE, d),
            (TraceOp::Write, WAL_BASE + 2 * PAGE, 2 * PAGE, 0),
            // Pages 7–9 are consecutive: one clean.
            (TraceOp::Clean, db(7), 3 * PAGE, d),
        ]
    );
    assert!(recs.iter().all(|(_, v)| v.is_empty()));
    assert_eq!(report.host_events_joined, 0);
    assert_eq!(report.device_writes, 0);
    let det = &report.details;
    assert_eq!(det["truncates"], 2);
    assert_eq!(det["wal_truncates"], 1);
    assert_eq!(det["pages_cleaned_by_truncate"], 3);
    assert_eq!(det["pages_dirty_at_end"], 0);
    assert_eq!(det["frame_writes"], 3);
    assert_eq!(det["shim_log_present"], 0);
}

#[test]
fn another_runs_shim_log_is_imported_not_joined() {
    let events = format!("{HEAD}1.0,walframe,wal,2,32,24,2\n");
    let shim = "W 900000000000 1 3 /x/t.db 4096 4096 1 ee\n\
                W 900000000001 1 5 /x/t.db-shm 4095 1 0 ff~\n\
                W 900000000002 1 5 /x/t.db-journal 0 512 0 11\n";
    let dir = folder(Some(&events), Some(shim));
    let (report, recs) = import(dir.path()).unwrap();
    let d = HostBuffer::Database.id();
    assert_eq!(
        ops(&recs),
        vec![
            (TraceOp::Dirty, db(2), PAGE, d),
            (TraceOp::Write, WAL_BASE, 2 * PAGE, 0),
            (TraceOp::Clean, db(2), PAGE, d),
            (TraceOp::Write, db(2), PAGE, 0),
            (TraceOp::Write, SHM_BASE, PAGE, 0),
        ]
    );
    // The database write is another run's: the frame is not joined to it.
    assert_eq!((report.host_events, report.host_events_joined), (1, 0));
    assert_eq!((report.device_writes, report.device_writes_joined), (2, 1));
    assert_eq!(report.details["shim_log_other_run"], 1);
    assert_eq!(report.details["runs_gap_s"], 899);
    assert!(
        report.examples[0].contains("another run"),
        "{:?}",
        report.examples
    );
    assert_eq!(report.dropped.len(), 2, "{:?}", report.dropped);
}

#[test]
fn rows_out_of_order_name_the_file_and_line() {
    let events = format!("{HEAD}2.0,walframe,wal,2,32,24,0\n1.0,walframe,wal,3,4152,24,0\n");
    let dir = folder(Some(&events), None);
    let e = import(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains(&format!("{}:3: rows out of time order", EVENT_NAMES[0])),
        "{e}"
    );
    let shim = "W 5 1 4 /x/t.db-wal 0 32 0 aa\nW 4 1 4 /x/t.db-wal 32 24 0 bb\n";
    let dir = folder(Some(HEAD), Some(shim));
    let e = import(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains(&format!("{}:2: rows out of time order", SHIM_NAMES[0])),
        "{e}"
    );
}

#[test]
fn malformed_rows_are_errors() {
    for (row, why) in [
        ("1.0,walframe,wal,,32,24,0", "expected pgno"),
        (
            "1.0,walframe,wal,0,32,24,0",
            "pgno 0 is not a database page",
        ),
        ("1.0,walframe,wal,x3,32,24,0", "expected pgno"),
        ("1.0,walframe,wal,3,,24,0", "expected offset"),
        (
            "1.0,walframe,wal,3,32,24",
            "expected 7 comma-separated fields",
        ),
        ("soon,walframe,wal,3,32,24,0", "expected t"),
    ] {
        let dir = folder(Some(&format!("{HEAD}{row}\n")), None);
        let e = import(dir.path()).unwrap_err();
        assert!(matches!(e, Error::Input { line: 2, .. }), "{row}: {e}");
        assert!(e.to_string().contains(why), "{row}: {e}");
    }
    for (row, why) in [
        ("W 1 1 4 /x/t.db-wal 56 4096 0 aa", "expected 2 hashes"),
        ("W 1 1 4 /x/t.db-wal 56 4096 1 aa,bb", "first_page 1"),
        ("W 1 1 4 /x/t.db-wal 0 10 0 zz", "expected an xxh3 hash"),
        ("S 1 1 4 /x/t.db-wal sync", "expected fsync or fdatasync"),
        ("X 1 1 4", "expected a `W`"),
    ] {
        let dir = folder(Some(HEAD), Some(&format!("{row}\n")));
        let e = import(dir.path()).unwrap_err();
        assert!(matches!(e, Error::Input { line: 1, .. }), "{row}: {e}");
        assert!(e.to_string().contains(why), "{row}: {e}");
    }
    // An unknown kind is dropped, not an error.
    let dir = folder(Some(&format!("{HEAD}1.0,mmap,wal,,,,\n")), None);
    let (report, _) = import(dir.path()).unwrap();
    assert_eq!(report.dropped["unknown event kind (skipped)"], 1);
}

#[test]
fn the_event_log_is_required() {
    let dir = folder(None, Some("S 1 1 4 /x/t.db-wal fsync\n"));
    let e = import(dir.path()).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    assert!(e.to_string().contains(EVENT_NAMES[0]), "{e}");
    let e = import_sqlite(&dir.path().join("nope"), &dir.path().join("o")).unwrap_err();
    assert!(e.to_string().contains("not a folder"), "{e}");
}

#[test]
fn huge_lengths_are_refused_not_overflowed_or_allocated() {
    // A frame's header length near 2^64 overflowed `len + 4096`.
    let dir = folder(
        Some(&format!(
            "{HEAD}1.0,walframe,wal,3,32,18446744073709551615,0\n"
        )),
        None,
    );
    let e = import(dir.path()).unwrap_err();
    assert!(matches!(e, Error::Input { line: 2, .. }), "{e}");
    assert!(e.to_string().contains("reach beyond the 1 TiB"), "{e}");
    for (row, why) in [
        // The byte range's end overflowed when counting its pages.
        (
            "W 1 1 4 /x/t.db 18446744073709547520 8192 4503599627370495 aa",
            "reach beyond the 1 TiB",
        ),
        // The page count of a huge `len` sized the hashes' vector before it was checked.
        (
            "W 1 1 4 /x/t.db 0 1099511627776000 0 aa",
            "expected 268435456000 hashes",
        ),
    ] {
        let dir = folder(Some(HEAD), Some(&format!("{row}\n")));
        let e = import(dir.path()).unwrap_err();
        assert!(matches!(e, Error::Input { line: 1, .. }), "{row}: {e}");
        assert!(e.to_string().contains(why), "{row}: {e}");
    }
}

#[test]
fn a_checkpoint_of_a_million_pages_costs_nothing_per_page() {
    // One write of 4 GiB - 4 KiB to the database file: the join (pass 1) and the clean
    // (pass 2) look at the pages frames dirtied, not at every page written.
    let events = format!(
        "{HEAD}1.0,walframe,wal,3,32,24,0\n2.0,checkpoint,t.db,,0,4294963200,\n\
         3.0,walframe,wal,1048576,4152,24,0\n"
    );
    let dir = folder(Some(&events), None);
    let (report, recs) = import(dir.path()).unwrap();
    assert_eq!((report.host_events, report.host_events_joined), (2, 1));
    assert_eq!(report.details["pages_cleaned_by_checkpoint"], 1);
    assert_eq!(report.details["checkpoint_pages"], 1_048_575);
    let d = HostBuffer::Database.id();
    assert!(recs
        .iter()
        .any(|(r, _)| (r.op, r.offset, r.device) == (TraceOp::Clean, db(3), d)));

    let mut w = DbWrites::default();
    let row = |t: u64, offset: u64, len: u64| Row {
        time_ns: t,
        event: Event::Write {
            file: FileKind::Db,
            offset,
            len,
            values: Vec::new(),
        },
    };
    w.note(&row(5, 0, PAGE));
    w.note(&row(7, 0, 1 << 40));
    w.note(&row(6, 10 * PAGE, 1000 * PAGE));
    let frames: FxHashSet<u64> = [0, 20, (1 << 28) - 1, 1 << 28].into_iter().collect();
    let map = w.finish(&frames);
    assert_eq!(map.len(), 3, "{map:?}");
    assert_eq!((map[&0], map[&20], map[&((1 << 28) - 1)]), (7, 7, 7));
}
