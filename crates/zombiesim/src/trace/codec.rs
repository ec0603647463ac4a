//! The contract between the per-format modules and the reader and writer that drive
//! them: what a format's parser makes of one line ([`RawRecord`], [`LineError`],
//! [`LineResult`]) and why a format's writer refuses a record ([`WriteError`]). The
//! format modules depend on it, not on `reader` or `writer`, so the dependency goes
//! one way: reader / writer ─► format modules ─► codec.

use super::record::TraceOp;
use std::io;

/// A record as a format parser sees it: time in nanoseconds on the file's own clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawRecord {
    pub time_ns: u128,
    pub op: TraceOp,
    pub offset: u64,
    pub size: u64,
    pub device: u32,
    /// The placement identifier of a write (native version 3 only).
    pub placement: Option<u16>,
}

/// Why a parser rejected a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LineError {
    /// This line is wrong; the rest may be fine.
    Malformed(String),
    /// Nothing after this can be read (no fio header, no native magic).
    Fatal(String),
}

/// What a parser makes of one line: a record, nothing (a header, a skipped event kind),
/// or an error.
pub(crate) type LineResult = std::result::Result<Option<RawRecord>, LineError>;

/// Why a format's writer refused a record.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// The format cannot represent this record; the reason says why.
    Unsupported(String),
    Io(io::Error),
}

impl From<io::Error> for WriteError {
    fn from(e: io::Error) -> Self {
        WriteError::Io(e)
    }
}
