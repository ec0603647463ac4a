//! Helpers the trace tests share: fixture and scratch paths, whole traces, records.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use zombiesim::trace::{ReadOptions, TraceFormat, TraceOp, TraceReader, TraceRecord, TraceWriter};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A fresh path in cargo's per-test-binary scratch directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("traces");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

pub fn read_all(path: &Path, format: TraceFormat, opts: &ReadOptions) -> Vec<TraceRecord> {
    TraceReader::open(path, format, opts)
        .unwrap()
        .collect::<zombiesim::Result<Vec<_>>>()
        .unwrap()
}

pub fn read_str(format: TraceFormat, text: &[u8], opts: &ReadOptions) -> TraceReader {
    TraceReader::from_reader("mem", Box::new(Cursor::new(text.to_vec())), format, opts).unwrap()
}

pub fn write_all(format: TraceFormat, records: &[TraceRecord]) -> Vec<u8> {
    let mut w = TraceWriter::new(format, Vec::new());
    for r in records {
        w.write(r).unwrap();
    }
    w.finish().unwrap()
}

pub fn rec(time_ns: u64, op: TraceOp, offset: u64, size: u64, device: u32) -> TraceRecord {
    TraceRecord {
        time_ns,
        op,
        offset,
        size,
        device,
        placement: None,
    }
}

pub fn defaults() -> ReadOptions {
    ReadOptions::default()
}
