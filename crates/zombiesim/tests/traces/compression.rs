//! Compressed traces: gzip and zstd, read and written by the file's extension.

use super::support::{defaults, read_all, rec, scratch};
use crate::common::sample;
use std::io::Write;
use zombiesim::trace::{TraceFormat, TraceOp, TraceReader, TraceWriter};
use zombiesim::Error;

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
