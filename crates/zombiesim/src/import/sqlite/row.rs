//! One input row of either log, ready to emit ([`Row`], [`Event`]), and the field
//! checks and write counting both log readers share.

use super::layout::{FileKind, REGION_BYTES};
use crate::error::Result;
use crate::import::{ImportReport, Lines};

/// One input row, ready to emit.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Event {
    /// A WAL frame of database page `pgno` at WAL offset `offset` (header `len` bytes).
    Frame {
        pgno: u64,
        offset: u64,
        len: u64,
        commit: bool,
    },
    /// A write of `len` bytes at `offset` of a file, with one value per page touched
    /// (or none).
    Write {
        file: FileKind,
        offset: u64,
        len: u64,
        values: Vec<u64>,
    },
    Flush,
    Truncate(FileKind),
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Row {
    pub(super) time_ns: u64,
    pub(super) event: Event,
}

/// Parses a decimal field, or fails naming it.
pub(super) fn num(lines: &Lines, v: &str, what: &str) -> Result<u64> {
    v.trim()
        .parse()
        .map_err(|_| lines.error(format!("expected {what}, found `{v}`")))
}

/// A byte range of a file, checked to fit its 1 TiB region.
pub(super) fn check_range(lines: &Lines, offset: u64, len: u64) -> Result<()> {
    if offset.checked_add(len).is_none_or(|end| end > REGION_BYTES) {
        return Err(lines.error(format!(
            "bytes {offset} + {len} reach beyond the 1 TiB each file has in the trace's address space"
        )));
    }
    Ok(())
}

/// Counts a device write: joined when it is to the database file or the WAL; a write
/// to the `-shm` WAL index is kept but not joined (counted as dropped from the join).
pub(super) fn count_write(
    report: &mut ImportReport,
    kind: FileKind,
    lines: &Lines,
    what: impl FnOnce() -> String,
) {
    report.device_writes += 1;
    if kind == FileKind::Shm {
        report.drop(
            "write to the -shm WAL index (kept, not joined)",
            &lines.name,
            lines.line,
            what(),
        );
    } else {
        report.device_writes_joined += 1;
    }
}
