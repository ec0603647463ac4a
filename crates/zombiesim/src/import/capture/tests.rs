//! The capture importer's tests: clocks, placement, trims, times out of range.

use super::*;

const EXTENTS: &[u8] = b"== a\n   0: 0..3: 100..103: 4: last,eof\n";
const DIRTY: &str = "t,ino,file,index\n";

fn import(clock: &str, dirty: &str) -> Result<(ImportReport, Vec<u8>)> {
    import_capture_in_memory(
        clock.as_bytes(),
        EXTENTS,
        None,
        dirty.as_bytes(),
        b"",
        None,
        None,
        CapturePlacement::None,
    )
}

/// The ops and (offset, size) of a notified trace's device requests, in order.
fn requests(bytes: Vec<u8>) -> Vec<(TraceOp, u64, u64)> {
    crate::trace::TraceReader::from_reader(
        "<memory>",
        Box::new(std::io::Cursor::new(bytes)),
        crate::trace::TraceFormat::Native,
        &crate::trace::ReadOptions::default(),
    )
    .unwrap()
    .map(|r| r.unwrap())
    .filter(|r| matches!(r.op, TraceOp::Write | TraceOp::Trim))
    .map(|r| (r.op, r.offset, r.size))
    .collect()
}

fn with_trims(trims: &str) -> Result<(ImportReport, Vec<u8>)> {
    let writes = "t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write\n\
                  1.0,W,100,a,0,,\n2.0,W,101,a,1,,\n3.0,W,102,a,2,,\n";
    import_capture_in_memory(
        b"0 0\n0\n",
        EXTENTS,
        None,
        DIRTY.as_bytes(),
        writes.as_bytes(),
        Some(trims.as_bytes()),
        None,
        CapturePlacement::None,
    )
}

#[test]
fn trims_are_merged_by_time_after_writes_of_the_same_time() {
    let (report, bytes) = with_trims("t_wall,fsblk,blocks\n2.0,100,2\n2.5,7,1\n").unwrap();
    assert_eq!(report.details["device_trim_rows"], 2);
    let b = BLOCK;
    assert_eq!(
        requests(bytes),
        vec![
            (TraceOp::Write, 100 * b, b),
            (TraceOp::Write, 101 * b, b),
            (TraceOp::Trim, 100 * b, 2 * b),
            (TraceOp::Trim, 7 * b, b),
            (TraceOp::Write, 102 * b, b),
        ]
    );
}

#[test]
fn a_bad_trim_row_names_its_line() {
    for (rows, want) in [
        (
            "2.0,100\n",
            "device_trims.csv:2: expected 3 comma-separated fields",
        ),
        ("2.0,100,0\n", "device_trims.csv:2: a trim of 0 blocks"),
        ("2.0,x,1\n", "device_trims.csv:2: expected fsblk"),
        (
            "2.0,4503599627370495,2\n",
            "device_trims.csv:2: a trim of 2 blocks",
        ),
        (
            "2.0,1,1\n1.0,1,1\n",
            "device_trims.csv:3: events out of time order",
        ),
    ] {
        let e = with_trims(&format!("t_wall,fsblk,blocks\n{rows}"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(want), "{e}");
    }
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
    let (report, _) = import("0 0\n18446744073.709551615\n", &format!("{DIRTY}0,1,a,0\n")).unwrap();
    assert_eq!(report.records, 1);
}

/// Writes of files `a` (blocks 100-103), `b` (200-201) and a block of no file (7).
fn placed(hints: Option<&[u8]>, placement: CapturePlacement) -> Result<Vec<Option<u16>>> {
    let extents =
        b"== a\n   0: 0..3: 100..103: 4: last,eof\n== b\n   0: 0..1: 200..201: 2: last,eof\n";
    let writes = "t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write\n\
                  1.0,W,100,a,0,,\n1.1,W,200,,,,\n1.2,W,7,,,,\n1.3,W,101,a,1,,\n1.4,R,100,a,0,,\n";
    let (_, bytes) = import_capture_in_memory(
        b"0 0\n0\n",
        extents,
        None,
        b"t,ino,file,index\n",
        writes.as_bytes(),
        None,
        hints,
        placement,
    )?;
    let reader = crate::trace::TraceReader::from_reader(
        "<memory>",
        Box::new(std::io::Cursor::new(bytes)),
        crate::trace::TraceFormat::Native,
        &crate::trace::ReadOptions::default(),
    )?;
    let mut ids = Vec::new();
    for r in reader {
        let r = r?;
        if r.op == TraceOp::Write {
            ids.push(r.placement);
        }
    }
    Ok(ids)
}

#[test]
fn placement_by_file_and_by_hint() {
    assert_eq!(
        placed(None, CapturePlacement::None).unwrap(),
        [None, None, None, None]
    );
    // Files 1, 2 in order of first write; the block of no file 0.
    assert_eq!(
        placed(None, CapturePlacement::File { ids: 8 }).unwrap(),
        [Some(1), Some(2), Some(0), Some(1)]
    );
    // Two identifiers: every file on 1.
    assert_eq!(
        placed(None, "file:2".parse().unwrap()).unwrap(),
        [Some(1), Some(1), Some(0), Some(1)]
    );
    assert_eq!(
        placed(Some(b"2 a\n"), CapturePlacement::Hint).unwrap(),
        [Some(2), Some(0), Some(0), Some(2)]
    );
    let e = placed(Some(b"2 a\n9 b\n"), CapturePlacement::Hint).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("hints.txt:2: expected a write-life hint 0-5, found `9`"),
        "{e}"
    );
}

#[test]
fn block_device_pages_are_their_blocks() {
    let (report, _) = import(
        "0 0\n0\n",
        &format!("{DIRTY}0.5,7340032,<block device>,42\n"),
    )
    .unwrap();
    assert_eq!(report.host_events_joined, 1);
    let e = import(
        "0 0\n0\n",
        &format!("{DIRTY}0.5,7340032,<block device>,18446744073709551615\n"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("beyond 2^52 blocks"), "{e}");
}

#[test]
fn hint_placement_without_hints_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("zs-capture-hints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("uptime_start.txt"), "0 0\n0\n").unwrap();
    std::fs::write(dir.join("extents.txt"), EXTENTS).unwrap();
    let e = import_capture_placed(&dir, &dir.join("t.zst"), CapturePlacement::Hint)
        .unwrap_err()
        .to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        e.contains("hints.txt") && e.contains("placement `hint`"),
        "{e}"
    );
}
