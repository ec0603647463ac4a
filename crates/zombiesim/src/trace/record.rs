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
//!
//! Notified traces (the native format, version 2) also carry *host events*: a page went
//! clean → dirty in a host buffer ([`TraceOp::Dirty`]) or was cleaned there without being
//! written to the device ([`TraceOp::Clean`]). They move no data; their `device` field
//! names the buffer ([`HostBuffer`]). Only the native format can hold them.
//!
//! A write may also carry the NVMe *placement identifier* its host gave it
//! (`placement`, native version 3): `reclaim_group · handles + handle` under Flexible
//! Data Placement. Every other format reads `None` and refuses to write one.

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
    /// Host event: the range went clean → dirty in a host buffer (its flash copy is
    /// now a zombie). Moves no data.
    Dirty,
    /// Host event: the range was cleaned (or dropped) in a host buffer without being
    /// written to the device. Moves no data.
    Clean,
}

impl TraceOp {
    /// Every operation, in the order of [`TraceOp::code`].
    pub const ALL: [TraceOp; 6] = [
        TraceOp::Read,
        TraceOp::Write,
        TraceOp::Trim,
        TraceOp::Flush,
        TraceOp::Dirty,
        TraceOp::Clean,
    ];

    /// Lower-case name: `read`, `write`, `trim`, `flush`, `dirty`, `clean`.
    pub fn name(self) -> &'static str {
        match self {
            TraceOp::Read => "read",
            TraceOp::Write => "write",
            TraceOp::Trim => "trim",
            TraceOp::Flush => "flush",
            TraceOp::Dirty => "dirty",
            TraceOp::Clean => "clean",
        }
    }

    /// The byte the native format stores: 0 read, 1 write, 2 trim, 3 flush, 4 dirty,
    /// 5 clean.
    pub fn code(self) -> u8 {
        match self {
            TraceOp::Read => 0,
            TraceOp::Write => 1,
            TraceOp::Trim => 2,
            TraceOp::Flush => 3,
            TraceOp::Dirty => 4,
            TraceOp::Clean => 5,
        }
    }

    /// Whether this is a host event (dirty, clean) rather than a device request.
    pub fn is_host_event(self) -> bool {
        matches!(self, TraceOp::Dirty | TraceOp::Clean)
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

/// The host buffer a host event happened in (the `device` field of a
/// [`TraceOp::Dirty`] or [`TraceOp::Clean`] record).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostBuffer {
    /// The operating system's page cache (device id 0).
    PageCache,
    /// An application's own buffer, e.g. a database's shared buffers (device id 1).
    Database,
}

impl HostBuffer {
    /// Both buffers, in the order of their ids.
    pub const ALL: [HostBuffer; 2] = [HostBuffer::PageCache, HostBuffer::Database];

    /// The id stored in a record's `device` field.
    pub fn id(self) -> u32 {
        self as u32
    }

    /// Inverse of [`HostBuffer::id`].
    pub fn from_id(id: u32) -> Option<HostBuffer> {
        HostBuffer::ALL.get(id as usize).copied()
    }

    /// `page-cache` or `database`.
    pub fn name(self) -> &'static str {
        match self {
            HostBuffer::PageCache => "page-cache",
            HostBuffer::Database => "database",
        }
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
    /// `major << 20 | minor` (blkparse) or device id (native); for host events, the
    /// [`HostBuffer`] id.
    pub device: u32,
    /// The NVMe placement identifier the host gave this write (native version 3
    /// only; `None` for every other op and format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<u16>,
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

    /// [`TraceRecord::pages`] for pages of `1 << shift` bytes, without dividing.
    #[inline]
    pub fn pages_shifted(&self, shift: u32) -> (u64, u64) {
        let first = self.offset >> shift;
        if self.size == 0 {
            return (first, 0);
        }
        let last = self.offset.saturating_add(self.size - 1) >> shift;
        (first, last - first + 1)
    }
}

impl fmt::Display for TraceRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} bytes at byte {} on device {}, t={} ns",
            self.op, self.size, self.offset, self.device, self.time_ns
        )?;
        if let Some(p) = self.placement {
            write!(f, ", placement id {p}")?;
        }
        Ok(())
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
        assert_eq!(TraceOp::from_code(6), None);
        assert!(TraceOp::Dirty.is_host_event() && !TraceOp::Write.is_host_event());
        for b in HostBuffer::ALL {
            assert_eq!(HostBuffer::from_id(b.id()), Some(b));
        }
    }

    #[test]
    fn pages_of_a_request() {
        let r = |offset, size| TraceRecord {
            time_ns: 0,
            op: TraceOp::Write,
            offset,
            size,
            device: 0,
            placement: None,
        };
        assert_eq!(r(0, 4096).pages(4096), (0, 1));
        assert_eq!(r(4095, 2).pages(4096), (0, 2));
        assert_eq!(r(8192, 16384).pages(4096), (2, 4));
        assert_eq!(r(8192, 0).pages(4096), (2, 0));
        assert_eq!(r(u64::MAX - 1, 10).pages(1 << 20).1, 1);
        use proptest::prelude::*;
        proptest!(|(offset in any::<u64>(), size in prop_oneof![0u64..1 << 20, any::<u64>()], shift in 0u32..40)| {
            prop_assert_eq!(r(offset, size).pages_shifted(shift), r(offset, size).pages(1 << shift));
        });
    }
}
