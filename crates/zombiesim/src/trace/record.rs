//! The one record type every trace format reads into and writes from.
//!
//! A [`TraceRecord`] is one host request in bytes: what ([`TraceOp`]), where (`offset`,
//! `size`, `device`) and when (`time_ns`, nanoseconds since the first record the reader
//! kept, after the reader's time offset and scale). Formats that count in sectors or
//! ticks are converted on the way in and back on the way out.
//!
//! Every reader returns flushes with `offset == 0` and `size == 0`: no format gives a
//! flush a meaningful range (fio's `sync` lines repeat the last offset, blkparse prints
//! none), so that is the one canonical form and writers ignore both fields.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a trace request asks of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceOp {
    Read,
    Write,
    /// Discard / deallocate / unmap.
    Trim,
    /// Cache flush (fio `sync`/`datasync`, blkparse `F` without data).
    Flush,
}

impl TraceOp {
    /// Every operation, in the order of [`TraceOp::code`].
    pub const ALL: [TraceOp; 4] = [TraceOp::Read, TraceOp::Write, TraceOp::Trim, TraceOp::Flush];

    /// Lower-case name: `read`, `write`, `trim`, `flush`.
    pub fn name(self) -> &'static str {
        match self {
            TraceOp::Read => "read",
            TraceOp::Write => "write",
            TraceOp::Trim => "trim",
            TraceOp::Flush => "flush",
        }
    }

    /// The byte the native format stores: 0 read, 1 write, 2 trim, 3 flush.
    pub fn code(self) -> u8 {
        match self {
            TraceOp::Read => 0,
            TraceOp::Write => 1,
            TraceOp::Trim => 2,
            TraceOp::Flush => 3,
        }
    }

    /// Inverse of [`TraceOp::code`].
    pub fn from_code(code: u8) -> Option<TraceOp> {
        TraceOp::ALL.get(code as usize).copied()
    }
}

impl fmt::Display for TraceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One host request of a block trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Nanoseconds since the first record kept, after the reader's offset and scale.
    pub time_ns: u64,
    pub op: TraceOp,
    /// Start of the request, in bytes.
    pub offset: u64,
    /// Length of the request, in bytes (0 for a flush).
    pub size: u64,
    /// Disk number (msr), ASU (spc), device number (disksim), file index (fio),
    /// `major << 20 | minor` (blkparse) or device id (native).
    pub device: u32,
}

impl TraceRecord {
    /// The pages of `page_size` bytes this request touches: `(first page, page count)`.
    /// A zero-length request (a flush) touches none.
    pub fn pages(&self, page_size: u64) -> (u64, u64) {
        debug_assert!(page_size > 0);
        if self.size == 0 {
            return (self.offset / page_size, 0);
        }
        let first = self.offset / page_size;
        let last = self.offset.saturating_add(self.size - 1) / page_size;
        (first, last - first + 1)
    }
}

impl fmt::Display for TraceRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} bytes at byte {} on device {}, t={} ns",
            self.op, self.size, self.offset, self.device, self.time_ns
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_codes_round_trip() {
        for op in TraceOp::ALL {
            assert_eq!(TraceOp::from_code(op.code()), Some(op));
        }
        assert_eq!(TraceOp::from_code(4), None);
    }

    #[test]
    fn pages_of_a_request() {
        let r = |offset, size| TraceRecord {
            time_ns: 0,
            op: TraceOp::Write,
            offset,
            size,
            device: 0,
        };
        assert_eq!(r(0, 4096).pages(4096), (0, 1));
        assert_eq!(r(4095, 2).pages(4096), (0, 2));
        assert_eq!(r(8192, 16384).pages(4096), (2, 4));
        assert_eq!(r(8192, 0).pages(4096), (2, 0));
        assert_eq!(r(u64::MAX - 1, 10).pages(1 << 20).1, 1);
    }
}
