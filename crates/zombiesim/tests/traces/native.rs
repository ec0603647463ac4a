//! The native format's placement identifiers (version 3); versions 1 and 2 still read.

use super::support::{defaults, read_str, rec, write_all};
use zombiesim::trace::{
    NativeHeader, PlacementStats, TraceFormat, TraceOp, TraceRecord, TraceStats, TraceWriter,
};
use zombiesim::Error;

fn placed(time_ns: u64, op: TraceOp, offset: u64, size: u64, id: Option<u16>) -> TraceRecord {
    TraceRecord {
        placement: id,
        ..rec(time_ns, op, offset, size, 0)
    }
}

/// Reads every record of native `bytes` with its content values.
fn read_native(bytes: &[u8]) -> zombiesim::Result<Vec<(TraceRecord, Vec<u64>)>> {
    let mut r = read_str(TraceFormat::Native, bytes, &defaults());
    let mut out = Vec::new();
    while let Some(rec) = r.next() {
        out.push((rec?, r.values().to_vec()));
    }
    Ok(out)
}

/// One native record's 24 bytes (4 KiB at byte 0 on device 0).
fn native_record(time_ns: u64, op: TraceOp, flags: u8) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&time_ns.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    b.extend_from_slice(&4096u32.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    b.push(op.code());
    b.push(flags);
    b
}

fn native_start(magic: &[u8; 8], flags: u64) -> Vec<u8> {
    let mut b = magic.to_vec();
    b.extend_from_slice(&flags.to_le_bytes());
    b
}

fn expect_input_error(bytes: &[u8], line: u64, what: &str) {
    let err = read_native(bytes).unwrap_err();
    assert!(
        matches!(&err, Error::Input { file, line: l, reason } if file == "mem" && *l == line && reason.contains(what)),
        "expected line {line} `{what}`, got {err}"
    );
}

#[test]
fn native_v3_round_trips_placement_identifiers_with_values() {
    let header = NativeHeader::new(false, true).with_placement(true);
    let recs = [
        (placed(0, TraceOp::Write, 0, 8192, Some(1)), vec![11, 12]),
        (placed(10, TraceOp::Write, 8192, 4096, None), vec![13]),
        (placed(20, TraceOp::Write, 16384, 4096, Some(0)), vec![]),
        (placed(30, TraceOp::Read, 0, 4096, None), vec![]),
        (placed(40, TraceOp::Trim, 0, 4096, None), vec![]),
        (placed(50, TraceOp::Flush, 0, 0, None), vec![]),
        (
            placed(60, TraceOp::Write, 0, 4096, Some(u16::MAX)),
            vec![14],
        ),
    ];
    let mut w = TraceWriter::new(TraceFormat::Native, Vec::new())
        .declare(header)
        .unwrap();
    for (r, values) in &recs {
        w.write_values(r, values).unwrap();
    }
    let bytes = w.finish().unwrap();
    // Version 3, header bits 1 and 2; the first record flags both, and its identifier
    // comes right after its 24 bytes, before its two values.
    assert_eq!(&bytes[..8], b"ZSTRACE3");
    assert_eq!(bytes[8..16], 6u64.to_le_bytes());
    assert_eq!(bytes[16 + 23], 3);
    assert_eq!(bytes[40..42], 1u16.to_le_bytes());
    assert_eq!(bytes[42..50], 11u64.to_le_bytes());
    let mut r = read_str(TraceFormat::Native, &bytes, &defaults());
    assert_eq!(r.native_header().unwrap(), Some(header));
    assert_eq!(read_native(&bytes).unwrap(), recs.to_vec());
    // Native to native keeps them; other formats refuse them, naming the record.
    let mut again = TraceWriter::new(TraceFormat::Native, Vec::new())
        .declare(header)
        .unwrap();
    for (r, values) in read_native(&bytes).unwrap() {
        again.write_values(&r, &values).unwrap();
    }
    assert_eq!(again.finish().unwrap(), bytes);
    let mut fio = TraceWriter::new(TraceFormat::Fio, Vec::new()).named("out.fio");
    let err = fio.write(&recs[0].0).unwrap_err().to_string();
    assert!(
        err.starts_with("out.fio:1: cannot write record 1 (write of 8192 bytes at byte 0 on device 0, t=0 ns, placement id 1) as fio: fio holds no placement identifiers (only native does; converting would drop them)"),
        "{err}"
    );
    // Statistics count the writes that carry one and the identifiers.
    let st = TraceStats::compute(read_str(TraceFormat::Native, &bytes, &defaults()), 4096).unwrap();
    assert_eq!(
        st.placement,
        Some(PlacementStats {
            writes: 3,
            ids: vec![0, 1, u16::MAX],
        })
    );
}

#[test]
fn native_without_placement_is_written_as_version_2_and_versions_1_and_2_read() {
    let plain = write_all(TraceFormat::Native, &[rec(0, TraceOp::Write, 0, 4096, 0)]);
    assert_eq!(&plain[..8], b"ZSTRACE2");
    let undeclared = NativeHeader::new(true, true).with_placement(false);
    let mut w = TraceWriter::new(TraceFormat::Native, Vec::new())
        .declare(undeclared)
        .unwrap();
    w.write(&rec(0, TraceOp::Write, 0, 4096, 0)).unwrap();
    // A placement identifier it was not declared to hold is refused, naming the record.
    let err = w
        .write(&placed(1, TraceOp::Write, 0, 4096, Some(2)))
        .unwrap_err();
    assert!(
        matches!(&err, Error::Input { line: 2, reason, .. } if reason.contains("not declared to hold them")),
        "{err}"
    );
    let bytes = w.finish().unwrap();
    assert_eq!(&bytes[..8], b"ZSTRACE2");
    assert_eq!(read_native(&bytes).unwrap().len(), 1);
    // Hand-made version 2 and version 1 files.
    let mut v2 = native_start(b"ZSTRACE2", 0);
    v2.extend(native_record(5, TraceOp::Write, 0));
    v2.extend(native_record(6, TraceOp::Read, 0));
    let got = read_native(&v2).unwrap();
    assert_eq!(got.len(), 2);
    assert!(got.iter().all(|(r, _)| r.placement.is_none()));
    let mut v1 = b"ZSTRACE1".to_vec();
    v1.extend(native_record(5, TraceOp::Write, 0x80));
    assert_eq!(read_native(&v1).unwrap()[0].0.op, TraceOp::Write);
    // A version-3 file that declares no placement reads as such.
    let mut v3 = native_start(b"ZSTRACE3", 0);
    v3.extend(native_record(5, TraceOp::Write, 0));
    assert_eq!(read_native(&v3).unwrap()[0].0.placement, None);
}

#[test]
fn native_placement_errors_name_the_record() {
    let write = |flags| native_record(1, TraceOp::Write, flags);
    // A placement flag the header did not declare (version 3 without bit 2).
    let mut b = native_start(b"ZSTRACE3", 0);
    b.extend(write(0));
    b.extend(write(2));
    b.extend(7u16.to_le_bytes());
    expect_input_error(&b, 2, "a placement identifier the header did not declare");
    // A placement flag on a read.
    let mut b = native_start(b"ZSTRACE3", 4);
    b.extend(write(2));
    b.extend(1u16.to_le_bytes());
    b.extend(native_record(2, TraceOp::Read, 2));
    b.extend(1u16.to_le_bytes());
    expect_input_error(
        &b,
        2,
        "a read record carries a placement identifier; only writes do",
    );
    // Record bit 1 in a version-2 file, and header bit 2 in a version-2 file.
    let mut b = native_start(b"ZSTRACE2", 0);
    b.extend(write(2));
    expect_input_error(&b, 1, "expected record flags 0 or 1");
    expect_input_error(
        &native_start(b"ZSTRACE2", 4),
        0,
        "bits 0 (host events) and 1",
    );
    // An identifier cut short ends reading.
    let mut b = native_start(b"ZSTRACE3", 4);
    b.extend(write(2));
    b.push(1);
    expect_input_error(
        &b,
        1,
        "2-byte placement identifier after the record, found 1 bytes",
    );
}
