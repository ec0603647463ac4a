//! Trace readers, writers, remapping and statistics, on the real sample traces in
//! `traces/samples` (a missing one fails its test) and on small
//! synthetic fixtures in `tests/data`.
//!
//! The blkparse fixture (`tests/data/blkparse_synthetic.txt`) is synthetic: written by
//! hand in blkparse's default output layout (events, then the per-CPU and total
//! summaries), not captured from a real device. It carries no comment because blkparse
//! output has none. The spc and disksim fixtures are synthetic too and say so in a
//! `#` comment.

use proptest::prelude::*;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use zombiesim::trace::{
    NativeHeader, OnError, PlacementStats, ReadOptions, RemapMode, Remapper, TraceFormat, TraceOp,
    TraceReader, TraceRecord, TraceStats, TraceWriter,
};
use zombiesim::Error;

use crate::common::sample;

// ---------------------------------------------------------------- helpers

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A fresh path in cargo's per-test-binary scratch directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("traces");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn read_all(path: &Path, format: TraceFormat, opts: &ReadOptions) -> Vec<TraceRecord> {
    TraceReader::open(path, format, opts)
        .unwrap()
        .collect::<zombiesim::Result<Vec<_>>>()
        .unwrap()
}

fn read_str(format: TraceFormat, text: &[u8], opts: &ReadOptions) -> TraceReader {
    TraceReader::from_reader("mem", Box::new(Cursor::new(text.to_vec())), format, opts).unwrap()
}

fn write_all(format: TraceFormat, records: &[TraceRecord]) -> Vec<u8> {
    let mut w = TraceWriter::new(format, Vec::new());
    for r in records {
        w.write(r).unwrap();
    }
    w.finish().unwrap()
}

fn rec(time_ns: u64, op: TraceOp, offset: u64, size: u64, device: u32) -> TraceRecord {
    TraceRecord {
        time_ns,
        op,
        offset,
        size,
        device,
        placement: None,
    }
}

fn defaults() -> ReadOptions {
    ReadOptions::default()
}

// ---------------------------------------------------------------- real samples

#[test]
fn msr_sample_reads_exactly() {
    let path = sample("msr-src1_0-excerpt.csv");
    let recs = read_all(&path, TraceFormat::Msr, &defaults());
    assert_eq!(recs.len(), 10_001, "the excerpt holds 10 001 lines");
    // 128166373321652068,src1,0,Write,3173167104,36864,3126
    assert_eq!(recs[0], rec(0, TraceOp::Write, 3173167104, 36864, 0));
    // 128166373321653856,src1,0,Write,3154128896,4096,1337: 1788 ticks later.
    assert_eq!(recs[1], rec(178_800, TraceOp::Write, 3154128896, 4096, 0));
    // 128166373371652876,src1,0,Write,3744964608,4096,1998
    assert_eq!(
        recs[3],
        rec(
            (128166373371652876 - 128166373321652068) * 100,
            TraceOp::Write,
            3744964608,
            4096,
            0
        )
    );
    // 128166453872075858,src1,0,Read,3261448192,4096,1309
    let last = recs.last().unwrap();
    assert_eq!(
        *last,
        rec(
            (128166453872075858 - 128166373321652068) * 100,
            TraceOp::Read,
            3261448192,
            4096,
            0
        )
    );
    let reads = recs.iter().filter(|r| r.op == TraceOp::Read).count();
    assert_eq!((reads, recs.len() - reads), (7362, 2639));
}

#[test]
fn fio_v3_excerpt_reads_exactly() {
    let path = sample("captures/fio-pareto/fio_pareto_iolog_v3_excerpt.txt");
    let recs = read_all(&path, TraceFormat::Fio, &defaults());
    // 294 <capture>/data.bin write 210542592 4096
    assert_eq!(recs[0], rec(0, TraceOp::Write, 210542592, 4096, 0));
    // 433 <capture>/data.bin write 87875584 4096
    assert_eq!(recs[1], rec(139_000, TraceOp::Write, 87875584, 4096, 0));
    // Line 69: 1183 <capture>/data.bin sync 19795968 0
    let first_sync = recs.iter().find(|r| r.op == TraceOp::Flush).unwrap();
    assert_eq!(*first_sync, rec(889_000, TraceOp::Flush, 0, 0, 0));
    let flushes = recs.iter().filter(|r| r.op == TraceOp::Flush).count();
    assert_eq!((recs.len(), flushes), (319, 25));
}

#[test]
fn fio_full_gz_log_streams() {
    let path = sample("captures/fio-pareto/fio_pareto_iolog_full_15s.txt.gz");
    let mut reader = TraceReader::open(&path, TraceFormat::Fio, &defaults()).unwrap();
    let (mut writes, mut flushes, mut last) = (0u64, 0u64, 0u64);
    for r in &mut reader {
        let r = r.unwrap();
        assert_eq!(r.device, 0);
        match r.op {
            TraceOp::Write => writes += 1,
            TraceOp::Flush => flushes += 1,
            op => panic!("unexpected {op}"),
        }
        assert!(r.time_ns >= last, "fio v3 times do not go backwards");
        last = r.time_ns;
    }
    assert_eq!((writes, flushes), (223_168, 3_487));
    assert_eq!(reader.line(), 226_659);
    // 14999818 (last sync) - 294 (first write), in ns.
    assert_eq!(last, (14_999_818 - 294) * 1_000);
}

// ---------------------------------------------------------------- fixtures

#[test]
fn spc_fixture_reads_exactly() {
    let recs = read_all(&fixture("spc_synthetic.spc"), TraceFormat::Spc, &defaults());
    assert_eq!(recs.len(), 6);
    assert_eq!(recs[0], rec(0, TraceOp::Write, 20941264 * 512, 8192, 0));
    assert_eq!(
        recs[2],
        rec(5_588_000, TraceOp::Read, 3436288 * 512, 15872, 1)
    );
    assert_eq!(
        recs[3],
        rec(8_294_000, TraceOp::Write, 20939856 * 512, 4096, 0)
    );
    assert_eq!(
        recs[5],
        rec(448_294_000, TraceOp::Write, 3436320 * 512, 4096, 1)
    );
}

#[test]
fn disksim_fixture_reads_exactly() {
    let recs = read_all(
        &fixture("disksim_synthetic.trace"),
        TraceFormat::Disksim,
        &defaults(),
    );
    assert_eq!(
        recs,
        vec![
            rec(0, TraceOp::Write, 2048 * 512, 4096, 0),
            rec(250_000, TraceOp::Read, 4096 * 512, 8192, 0),
            rec(1_500_000, TraceOp::Write, 0, 4096, 1),
            rec(2_000_001, TraceOp::Write, 2048 * 512, 4096, 0),
            rec(3_250_000, TraceOp::Read, 64 * 512, 4096, 1),
        ]
    );
}

#[test]
fn blkparse_fixture_keeps_one_action() {
    let path = fixture("blkparse_synthetic.txt");
    let sda = 8 << 20;
    let sdb = (8 << 20) | 16;
    assert_eq!(
        read_all(&path, TraceFormat::Blkparse, &defaults()),
        vec![
            rec(0, TraceOp::Write, 223490 * 512, 4096, sda),
            rec(9_000, TraceOp::Write, 223498 * 512, 4096, sda),
            rec(1_499_000, TraceOp::Read, 1048576 * 512, 16384, sda),
            rec(2_999_000, TraceOp::Flush, 0, 0, sda),
            rec(3_999_000, TraceOp::Trim, 4096 * 512, 1 << 20, sdb),
            rec(5_999_000, TraceOp::Write, 223506 * 512, 4096, sda),
        ]
    );
    let issued = ReadOptions {
        blkparse_action: 'D',
        ..defaults()
    };
    assert_eq!(
        read_all(&path, TraceFormat::Blkparse, &issued),
        vec![
            rec(0, TraceOp::Write, 223490 * 512, 8192, sda),
            rec(1_481_000, TraceOp::Read, 1048576 * 512, 16384, sda),
        ]
    );
}

#[test]
fn device_filter_keeps_one_device() {
    let only = |d| ReadOptions {
        device: Some(d),
        ..defaults()
    };
    let recs = read_all(&fixture("spc_synthetic.spc"), TraceFormat::Spc, &only(1));
    assert_eq!(recs.len(), 2);
    assert!(recs.iter().all(|r| r.device == 1));
    assert_eq!(recs[0].time_ns, 0, "a filtered trace starts at 0");
    assert_eq!(recs[1].time_ns, 1_000_000_000 - 557_294_000);

    let sdb = (8 << 20) | 16;
    let recs = read_all(
        &fixture("blkparse_synthetic.txt"),
        TraceFormat::Blkparse,
        &only(sdb),
    );
    assert_eq!(recs, vec![rec(0, TraceOp::Trim, 4096 * 512, 1 << 20, sdb)]);

    let path = sample("msr-src1_0-excerpt.csv");
    assert_eq!(read_all(&path, TraceFormat::Msr, &only(0)).len(), 10_001);
    assert!(read_all(&path, TraceFormat::Msr, &only(1)).is_empty());
}

#[test]
fn time_offset_and_scale() {
    let opts = ReadOptions {
        time_scale: 0.5,
        time_offset_ns: 10,
        ..defaults()
    };
    let recs = read_all(
        &fixture("disksim_synthetic.trace"),
        TraceFormat::Disksim,
        &opts,
    );
    let times: Vec<u64> = recs.iter().map(|r| r.time_ns).collect();
    assert_eq!(times, vec![10, 125_010, 750_010, 1_000_011, 1_625_010]);
}

// ---------------------------------------------------------------- malformed input

/// One text per format whose line 4 is malformed (line 1 is a comment or the header,
/// line 2 is empty, lines 3 and 5 are good), and what the error must say.
fn malformed_cases() -> Vec<(TraceFormat, &'static str, &'static str)> {
    vec![
        (
            TraceFormat::Msr,
            "# msr\n\n1,h,0,Write,0,4096,1\n1,h,0,Write,3\n2,h,0,Read,0,4096,1\n",
            "expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found 5",
        ),
        (
            TraceFormat::Spc,
            "# spc\n\n0,1,512,w,0.1\n0,1,512,q,0.2\n0,1,512,r,0.3\n",
            "expected Opcode `r`, `R`, `w` or `W`, found `q`",
        ),
        (
            TraceFormat::Disksim,
            "# disksim\n\n0.0 0 1 8 0\n0.1 0 1 eight 0\n0.2 0 1 8 1\n",
            "expected size (512-byte sectors) to be an unsigned integer, found `eight`",
        ),
        (
            TraceFormat::Fio,
            "fio version 3 iolog\n\n1 f write 0 4096\n2 f write 0\n3 f read 0 4096\n",
            "expected `TIMESTAMP_US FILENAME ACTION [OFFSET LENGTH]` (3 or 5 whitespace-separated fields, fio iolog v3), found 4",
        ),
        (
            TraceFormat::Fio,
            "fio version 2 iolog\n\nf write 0 4096\nf scribble 0 4096\nf read 0 4096\n",
            "expected an action (add, open, close, read, write, trim, sync, datasync, wait), found `scribble`",
        ),
        (
            TraceFormat::Blkparse,
            "# blkparse\n\n8,0 0 1 0.0 1 Q W 8 + 8 [a]\n8,0 0 2 0.1 1 Q W 16 + many [a]\n8,0 0 3 0.2 1 Q R 8 + 8 [a]\n",
            "expected COUNT (512-byte sectors) to be an unsigned integer, found `many`",
        ),
    ]
}

#[test]
fn malformed_lines_name_file_line_and_expectation() {
    for (i, (format, text, reason)) in malformed_cases().into_iter().enumerate() {
        let path = scratch(&format!("malformed-{i}.{format}"));
        std::fs::write(&path, text).unwrap();
        let given = path.display().to_string();
        let mut r = TraceReader::open(&path, format, &defaults()).unwrap();
        assert!(r.next().unwrap().is_ok(), "{format}: line 3 is fine");
        let err = r.next().unwrap().unwrap_err();
        assert_eq!(
            err,
            Error::Input {
                file: given.clone(),
                line: 4,
                reason: reason.to_string()
            },
            "{format}"
        );
        assert_eq!(err.to_string(), format!("{given}:4: {reason}"));
        assert!(r.next().is_none(), "{format}: Stop ends the iteration");
    }
}

#[test]
fn skip_mode_counts_malformed_lines() {
    let skip = ReadOptions {
        on_error: OnError::Skip,
        ..defaults()
    };
    for (format, text, reason) in malformed_cases() {
        let mut r = read_str(format, text.as_bytes(), &skip);
        let recs: Vec<_> = r.by_ref().collect::<zombiesim::Result<_>>().unwrap();
        assert_eq!(recs.len(), 2, "{format}");
        assert_eq!(r.skipped(), 1, "{format}");
        let ex = &r.skipped_examples()[0];
        assert_eq!((ex.line, ex.reason.as_str()), (4, reason), "{format}");
        assert_eq!(
            r.skipped_summary().unwrap(),
            format!("skipped 1 malformed line of mem; line 4: {reason}")
        );
    }
    // Only the first few examples are kept, all are counted.
    let mut text = String::from("0,1,512,w,0\n");
    for _ in 0..20 {
        text.push_str("garbage\n");
    }
    let mut r = read_str(TraceFormat::Spc, text.as_bytes(), &skip);
    assert_eq!(r.by_ref().count(), 1);
    assert_eq!(r.skipped(), 20);
    assert_eq!(
        r.skipped_examples().len(),
        zombiesim::trace::MAX_SKIPPED_EXAMPLES
    );
    assert!(r.skipped_summary().unwrap().ends_with("; ..."));
}

#[test]
fn fio_without_header_stops_even_in_skip_mode() {
    let skip = ReadOptions {
        on_error: OnError::Skip,
        ..defaults()
    };
    let mut r = read_str(TraceFormat::Fio, b"1 f write 0 4096\n", &skip);
    let err = r.next().unwrap().unwrap_err();
    assert!(
        err.to_string().starts_with(
            "mem:1: expected the header `fio version 2 iolog` or `fio version 3 iolog`"
        ),
        "{err}"
    );
    assert!(r.next().is_none());
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let err = TraceReader::open("no/such/trace.csv", TraceFormat::Msr, &defaults()).unwrap_err();
    assert!(
        matches!(&err, Error::Io { path, .. } if path == "no/such/trace.csv"),
        "{err:?}"
    );
}

#[test]
fn truncated_native_file_is_malformed() {
    let mut bytes = write_all(
        TraceFormat::Native,
        &[
            rec(0, TraceOp::Write, 0, 4096, 0),
            rec(5, TraceOp::Read, 0, 4096, 0),
        ],
    );
    bytes.truncate(bytes.len() - 3);
    let mut r = read_str(TraceFormat::Native, &bytes, &defaults());
    assert!(r.next().unwrap().is_ok());
    let err = r.next().unwrap().unwrap_err();
    assert!(
        matches!(&err, Error::Input { line: 2, reason, .. } if reason.starts_with("expected a 24-byte record, found 21 bytes")),
        "{err}"
    );
}

// ---------------------------------------------------------------- native placement (v3)

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

// ---------------------------------------------------------------- compression

#[test]
fn gz_and_zst_are_decompressed_by_extension() {
    let source = sample("msr-src1_0-excerpt.csv");
    let format = TraceFormat::Msr;
    let plain = std::fs::read(&source).unwrap();
    let expected = read_all(&source, format, &defaults());

    // Two gzip members back to back, as `cat a.gz b.gz` makes: both are read.
    let half = plain.len() / 2;
    let cut = half + plain[half..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let gz_path = scratch("sample.csv.gz");
    let mut gz = Vec::new();
    for part in [&plain[..cut], &plain[cut..]] {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(part).unwrap();
        gz.extend(enc.finish().unwrap());
    }
    std::fs::write(&gz_path, gz).unwrap();
    assert_eq!(read_all(&gz_path, format, &defaults()), expected);

    let zst_path = scratch("sample.csv.zst");
    std::fs::write(&zst_path, zstd::encode_all(&plain[..], 3).unwrap()).unwrap();
    assert_eq!(read_all(&zst_path, format, &defaults()), expected);

    // A corrupt gzip stream is an I/O error naming the file.
    let bad_path = scratch("corrupt.csv.gz");
    let mut bad = std::fs::read(&gz_path).unwrap();
    bad.truncate(bad.len() / 3);
    std::fs::write(&bad_path, bad).unwrap();
    let err = TraceReader::open(&bad_path, format, &defaults())
        .unwrap()
        .find_map(|r| r.err())
        .unwrap();
    assert!(
        matches!(&err, Error::Io { path, .. } if *path == bad_path.display().to_string()),
        "{err:?}"
    );
}

#[test]
fn created_files_are_compressed_by_extension() {
    let recs = vec![
        rec(0, TraceOp::Write, 4096, 8192, 0),
        rec(1_000, TraceOp::Trim, 0, 4096, 1),
        rec(2_000, TraceOp::Flush, 0, 0, 1),
    ];
    for name in ["out.native", "out.native.gz", "out.native.zst"] {
        let path = scratch(name);
        let mut w = TraceWriter::create(&path, TraceFormat::Native).unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        w.close().unwrap();
        assert_eq!(
            read_all(&path, TraceFormat::Native, &defaults()),
            recs,
            "{name}"
        );
    }
    let raw = std::fs::read(scratch("out.native.gz")).unwrap();
    assert_eq!(raw[..2], [0x1f, 0x8b], "gzip magic");
}

// ---------------------------------------------------------------- conversion

/// What `format` can hold, as (ops, offset alignment, size alignment, max size, max device).
fn capabilities(format: TraceFormat) -> (&'static [TraceOp], u64, u64, u64, u32) {
    use TraceOp::*;
    const RW: &[TraceOp] = &[Read, Write];
    const ALL: &[TraceOp] = &[Read, Write, Trim, Flush];
    match format {
        TraceFormat::Msr => (RW, 1, 1, u64::MAX >> 8, u32::MAX),
        TraceFormat::Spc => (RW, 512, 1, u64::MAX >> 8, u32::MAX),
        TraceFormat::Disksim => (RW, 512, 512, u64::MAX >> 8, u32::MAX),
        TraceFormat::Fio => (ALL, 1, 1, u64::from(u32::MAX), u32::MAX),
        TraceFormat::Blkparse => (ALL, 512, 512, u64::from(u32::MAX) * 512, u32::MAX),
        TraceFormat::Native => (ALL, 1, 1, u64::from(u32::MAX), u32::from(u16::MAX)),
        f => unreachable!("{f} is read only"),
    }
}

/// The formats zombiesim writes (the hashed formats are read only).
fn writable() -> Vec<TraceFormat> {
    TraceFormat::ALL
        .iter()
        .copied()
        .filter(|f| f.is_writable())
        .collect()
}

/// Bends an arbitrary record into one `format` can hold.
fn fit(format: TraceFormat, r: (u64, usize, u64, u64, u32)) -> TraceRecord {
    let (ops, oalign, salign, max_size, max_dev) = capabilities(format);
    let op = ops[r.1 % ops.len()];
    let device = r.4.min(max_dev);
    if op == TraceOp::Flush {
        return rec(r.0, op, 0, 0, device);
    }
    let offset = (r.2 >> 8) / oalign * oalign;
    let size = (r.3 % (max_size + 1)) / salign * salign;
    rec(r.0, op, offset, size, device)
}

/// The record a round trip through `format` should give back.
fn expected_after(format: TraceFormat, r: &TraceRecord) -> TraceRecord {
    let res = format.time_resolution_ns();
    TraceRecord {
        time_ns: r.time_ns / res * res,
        ..*r
    }
}

fn round_trip(format: TraceFormat, recs: &[TraceRecord]) -> Vec<TraceRecord> {
    let bytes = write_all(format, recs);
    read_str(format, &bytes, &defaults())
        .collect::<zombiesim::Result<Vec<_>>>()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_format_round_trips(
        format in prop::sample::select(writable()),
        raw in prop::collection::vec(
            (0u64..1 << 52, 0usize..4, any::<u64>(), any::<u64>(), any::<u32>()),
            1..40,
        ),
    ) {
        let mut recs: Vec<TraceRecord> = raw.into_iter().map(|r| fit(format, r)).collect();
        // Times are relative to the first record: make it the earliest, at 0.
        recs[0].time_ns = 0;
        let back = round_trip(format, &recs);
        let expected: Vec<TraceRecord> = recs.iter().map(|r| expected_after(format, r)).collect();
        prop_assert_eq!(back, expected);
    }

    #[test]
    fn conversion_between_formats_round_trips(
        from in prop::sample::select(writable()),
        to in prop::sample::select(writable()),
        raw in prop::collection::vec(
            (0u64..1 << 40, 0usize..4, any::<u64>(), any::<u64>(), any::<u32>()),
            1..20,
        ),
    ) {
        // Records both formats hold: fit to one, then to the other, and keep the ops
        // both have.
        let (to_ops, ..) = capabilities(to);
        let mut recs: Vec<TraceRecord> = raw
            .into_iter()
            .map(|r| fit(to, r))
            .map(|r| fit(from, (r.time_ns, r.op as usize, r.offset << 8, r.size, r.device)))
            .filter(|r| to_ops.contains(&r.op))
            .collect();
        prop_assume!(!recs.is_empty());
        recs[0].time_ns = 0;
        let in_a = round_trip(from, &recs);
        let in_b = round_trip(to, &in_a);
        let expected: Vec<TraceRecord> = recs
            .iter()
            .map(|r| expected_after(to, &expected_after(from, r)))
            .collect();
        prop_assert_eq!(in_b, expected);
    }
}

#[test]
fn op_index_matches_fit() {
    // `fit` indexes ops by `TraceOp as usize`; keep that in line with the declaration order.
    assert_eq!(TraceOp::Read as usize, 0);
    assert_eq!(TraceOp::Flush as usize, 3);
}

#[test]
fn msr_sample_converts_to_every_format_and_back() {
    let path = sample("msr-src1_0-excerpt.csv");
    let original = read_all(&path, TraceFormat::Msr, &defaults());
    for format in writable() {
        let back = round_trip(format, &original);
        let expected: Vec<TraceRecord> =
            original.iter().map(|r| expected_after(format, r)).collect();
        assert_eq!(back, expected, "msr -> {format} -> records");
    }
    // msr -> msr rewrites every line with hostname `zombiesim`, response time 0 and
    // timestamps relative to the first.
    let text = String::from_utf8(write_all(TraceFormat::Msr, &original)).unwrap();
    assert_eq!(
        text.lines().nth(1).unwrap(),
        "1788,zombiesim,0,Write,3154128896,4096,0"
    );
}

#[test]
fn fio_sample_converts_to_blkparse_and_native() {
    let path = sample("captures/fio-pareto/fio_pareto_iolog_v3_excerpt.txt");
    let original = read_all(&path, TraceFormat::Fio, &defaults());
    for format in [TraceFormat::Fio, TraceFormat::Blkparse, TraceFormat::Native] {
        assert_eq!(round_trip(format, &original), original, "fio -> {format}");
    }
    // msr has no flush: the first sync is refused, naming the record.
    let mut w = TraceWriter::new(TraceFormat::Msr, Vec::new()).named("out.csv");
    let err = original.iter().find_map(|r| w.write(r).err()).unwrap();
    let nth = original
        .iter()
        .position(|r| r.op == TraceOp::Flush)
        .unwrap()
        + 1;
    assert!(
        err.to_string().starts_with(&format!(
            "out.csv:{nth}: cannot write record {nth} (flush of 0 bytes"
        )),
        "{err}"
    );
    assert!(err
        .to_string()
        .ends_with("msr has no flush (Type is Read or Write)"));
}

// ---------------------------------------------------------------- remapping

#[test]
fn remap_modes_on_the_msr_sample() {
    let path = sample("msr-src1_0-excerpt.csv");
    let recs = read_all(&path, TraceFormat::Msr, &defaults());
    let page = 4096;
    let stats = TraceStats::compute(recs.iter().copied().map(Ok), page).unwrap();
    let gib = 1u64 << 30;

    // The volume is addressed well past 1 GiB: `none` refuses the first such request.
    let mut none = Remapper::new(RemapMode::None, gib, page).unwrap();
    let err = recs
        .iter()
        .enumerate()
        .find_map(|(i, r)| none.map(i as u64 + 1, r).err())
        .unwrap();
    assert!(
        err.to_string().contains("record 1 (write of 36864 bytes"),
        "{err}"
    );
    assert!(err
        .to_string()
        .contains("use remap=modulo or remap=compact"));

    // `compact` makes the footprint dense from page 0.
    let mut compact = Remapper::new(RemapMode::Compact, gib, page).unwrap();
    let mut max_page = 0;
    for (i, r) in recs.iter().enumerate() {
        for run in compact.map(i as u64 + 1, r).unwrap() {
            max_page = max_page.max(run.page + run.count - 1);
        }
    }
    let s = compact.stats();
    assert_eq!(s.distinct_pages, stats.unique_pages);
    assert_eq!(max_page + 1, stats.unique_pages);
    assert_eq!(s.requests, 10_001);
    assert!(s.remapped_pages > 0 && s.remapped_pages <= s.pages);

    // ... and refuses a device smaller than the footprint.
    let small = (stats.unique_pages - 1) * page;
    let mut tight = Remapper::new(RemapMode::Compact, small, page).unwrap();
    let err = recs
        .iter()
        .enumerate()
        .find_map(|(i, r)| tight.map(i as u64 + 1, r).err())
        .unwrap();
    assert!(
        err.to_string().contains("were taken (compact remap)"),
        "{err}"
    );

    // `modulo` keeps every page inside the device and the page count unchanged.
    let mut modulo = Remapper::new(RemapMode::Modulo, gib, page).unwrap();
    let mut pages = 0;
    for (i, r) in recs.iter().enumerate() {
        for run in modulo.map(i as u64 + 1, r).unwrap() {
            assert!(run.page + run.count <= gib / page);
            pages += run.count;
        }
    }
    assert_eq!(pages, modulo.stats().pages);
    let beyond = recs.iter().filter(|r| r.offset + r.size > gib).count() as u64;
    assert_eq!(modulo.stats().remapped_requests, beyond);
}

// ---------------------------------------------------------------- statistics

#[test]
fn stats_on_the_msr_sample() {
    let path = sample("msr-src1_0-excerpt.csv");
    let reader = TraceReader::open(&path, TraceFormat::Msr, &defaults()).unwrap();
    let s = TraceStats::compute(reader, 4096).unwrap();
    assert_eq!(s.records, 10_001);
    assert_eq!(
        (s.reads.count, s.writes.count, s.trims.count, s.flushes),
        (7362, 2639, 0, 0)
    );
    let duration = (128166453872075858u64 - 128166373321652068) as f64 * 100e-9;
    assert!((s.duration_s - duration).abs() < 1e-9);
    assert!(s.unique_pages > 0 && s.written_pages <= s.unique_pages);
    assert_eq!(s.footprint_bytes, s.unique_pages * 4096);
    let histogram_total: u64 = s.size_histogram.iter().map(|b| b.count).sum();
    assert_eq!(histogram_total, s.records);
    assert!(s
        .size_histogram
        .windows(2)
        .all(|w| w[0].le_bytes < w[1].le_bytes));
    let ia = s.interarrival;
    assert_eq!(ia.count, 10_000);
    assert!((ia.mean_ns - duration * 1e9 / 10_000.0).abs() < 1.0);
    assert!(ia.p50_ns <= ia.p99_ns && ia.p99_ns <= ia.max_ns);
    let w = s.write_skew;
    assert!(w.page_writes >= s.written_pages);
    assert!(w.hottest_1pct >= 0.01 && w.hottest_1pct <= w.hottest_10pct);
    assert!(w.hottest_10pct <= w.hottest_20pct && w.hottest_20pct <= w.hottest_50pct);
    assert!(w.hottest_50pct <= 1.0 && (0.0..1.0).contains(&w.gini));
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["writes"]["count"], 2639);
    assert!(json["write_skew"]["gini"].is_number());
    println!(
        "msr sample stats: {}",
        serde_json::to_string_pretty(&s).unwrap()
    );
}

// ---------------------------------------------------------------- throughput

/// Read throughput, release build: `cargo test --release --test integration -- --ignored
/// --nocapture throughput`. Generates a 1M-line MSR file in the system temp directory.
#[test]
#[ignore]
fn throughput() {
    let path = std::env::temp_dir().join("zombiesim-msr-1m.csv");
    if !path.exists() {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..1_000_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let kind = if x.is_multiple_of(3) { "Read" } else { "Write" };
            writeln!(
                w,
                "{},src1,{},{},{},{},{}",
                128166373321652068 + i * 1733,
                x % 4,
                kind,
                (x >> 20) % (1 << 26) * 4096,
                4096 * (1 + x % 16),
                x % 5000
            )
            .unwrap();
        }
    }
    let measure = |label: &str, path: &Path, format: TraceFormat| {
        let start = Instant::now();
        let mut n = 0u64;
        for r in TraceReader::open(path, format, &defaults()).unwrap() {
            std::hint::black_box(r.unwrap());
            n += 1;
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{label}: {n} records in {:.3} s = {:.2} M records/s",
            secs,
            n as f64 / secs / 1e6
        );
    };
    measure("msr 1M lines", &path, TraceFormat::Msr);
    let native = std::env::temp_dir().join("zombiesim-msr-1m.native");
    let mut w = TraceWriter::create(&native, TraceFormat::Native).unwrap();
    for r in TraceReader::open(&path, TraceFormat::Msr, &defaults()).unwrap() {
        let mut r = r.unwrap();
        r.device %= 4;
        w.write(&r).unwrap();
    }
    w.close().unwrap();
    measure("native 1M records", &native, TraceFormat::Native);
    let gz = sample("captures/fio-pareto/fio_pareto_iolog_full_15s.txt.gz");
    measure("fio 1.8 MB gz", &gz, TraceFormat::Fio);
}

#[test]
fn readers_and_writers_can_move_between_threads() {
    fn send<T: Send>(_: &T) {}
    let reader = read_str(TraceFormat::Msr, b"", &defaults());
    send(&reader);
    let out: Box<dyn Write + Send> = Box::new(Vec::new());
    let writer = TraceWriter::new(TraceFormat::Fio, out);
    send(&writer);
    writer.finish().unwrap();
    send(&Remapper::new(RemapMode::Compact, 1 << 20, 4096).unwrap());
}
