//! zombiesim's native binary trace format: compact, fixed-size, fast to read, and the one
//! format that holds *notified traces* (host events and content fingerprints) and the
//! NVMe placement identifiers of writes.
//!
//! ```text
//! version 3 (`ZSTRACE3`, written when the header declares placement identifiers):
//! version 2 with header flag bit 2 and record flag bit 1 (below).
//!
//! version 2 (`ZSTRACE2`, written otherwise):
//! offset  size  field
//! 0       8     magic, the ASCII bytes `ZSTRACE2` (`ZSTRACE3`)
//! 8       8     header flags u64: bit 0 host events present, bit 1 content values present,
//!               bit 2 placement identifiers present (version 3 only); other bits 0
//! then, per record, 24 bytes, all integers little-endian:
//! +0      8     time_ns  u64   nanoseconds (the reader makes them relative to the first)
//! +8      8     offset   u64   bytes
//! +16     4     size     u32   bytes
//! +20     2     device   u16   device id; for host events the buffer (0 page cache,
//!                              1 database buffer)
//! +22     1     op       u8    0 read, 1 write, 2 trim, 3 flush, 4 dirty, 5 clean
//! +23     1     flags    u8    bit 0: content values follow (writes only)
//!                              bit 1: a placement identifier follows (writes only,
//!                                     version 3 only)
//! then, when record flag bit 1 is set, the placement identifier: u16, 2 bytes;
//! then, when record flag bit 0 is set, ceil(size / 4096) u64 content fingerprints, one
//! per 4 KiB written, in order.
//!
//! version 1 (`ZSTRACE1`, read only): the magic, then the same 24-byte records with
//! ops 0–3 and byte +23 ignored.
//! ```
//!
//! There is no record count and no footer, so a file can be streamed and appended to.
//! A file whose header declares host events must be in time order (a record earlier than
//! the one before is an error naming it). Errors name the record number (from 1) as the
//! "line"; a bad magic or header is line 0. Writing needs sizes below 4 GiB and device
//! numbers below 65 536; a writer must declare host events, values and placement
//! identifiers in its header before it writes them ([`NativeHeader`]). A writer whose
//! header declares no placement identifiers writes version 2, so such files stay
//! readable by readers that know no version 3.
//!
//! A placement identifier is what an NVMe host puts in a write's DSPEC field under
//! Flexible Data Placement: `reclaim_group · handles + handle`. A replay hands it to the
//! device as the write's placement hint; only `fdp.enabled` devices use it (and refuse an
//! identifier they do not have); others carry it unused.

use super::codec::WriteError;
use super::codec::{LineError, RawRecord};
use super::record::{TraceOp, TraceRecord};
use serde::Serialize;

/// The first eight bytes of a version-2 native trace (what a writer writes when its
/// header declares no placement identifiers).
pub const MAGIC: &[u8; 8] = b"ZSTRACE2";
/// The first eight bytes of a version-3 native trace (placement identifiers declared).
pub const MAGIC_V3: &[u8; 8] = b"ZSTRACE3";
/// The first eight bytes of a version-1 native trace (read only).
pub const MAGIC_V1: &[u8; 8] = b"ZSTRACE1";
/// Bytes per record.
pub const RECORD_BYTES: usize = 24;
/// Bytes of content covered by one fingerprint.
pub const VALUE_BYTES: u64 = 4096;
/// Bytes of a placement identifier.
pub const PLACEMENT_BYTES: usize = 2;
/// Record flag: content values follow.
pub(crate) const FLAG_VALUES: u8 = 1;
/// Record flag: a placement identifier follows (version 3).
pub(crate) const FLAG_PLACEMENT: u8 = 2;

const HEADER_HOST_EVENTS: u64 = 1;
const HEADER_VALUES: u64 = 2;
const HEADER_PLACEMENT: u64 = 4;

/// What a native trace's header says about it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NativeHeader {
    /// 1, 2 or 3.
    pub version: u8,
    /// The trace carries host events (dirty, clean): a notified trace.
    pub host_events: bool,
    /// Writes carry content fingerprints.
    pub values: bool,
    /// Writes may carry an NVMe placement identifier (version 3).
    pub placement: bool,
}

impl NativeHeader {
    /// A version-2 header declaring what the file will hold (no placement
    /// identifiers; see [`NativeHeader::with_placement`]).
    pub fn new(host_events: bool, values: bool) -> NativeHeader {
        NativeHeader {
            version: 2,
            host_events,
            values,
            placement: false,
        }
    }

    /// This header, declaring placement identifiers or not: version 3 if it does,
    /// version 2 if not.
    pub fn with_placement(self, placement: bool) -> NativeHeader {
        NativeHeader {
            version: if placement { 3 } else { 2 },
            placement,
            ..self
        }
    }

    /// The bytes that open a file: version 3 when placement identifiers are declared,
    /// version 2 otherwise.
    pub(crate) fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(if self.placement { MAGIC_V3 } else { MAGIC });
        let flags = u64::from(self.host_events) * HEADER_HOST_EVENTS
            + u64::from(self.values) * HEADER_VALUES
            + u64::from(self.placement) * HEADER_PLACEMENT;
        b[8..].copy_from_slice(&flags.to_le_bytes());
        b
    }

    /// Decodes the header flags that follow a version-2 or version-3 magic.
    pub(crate) fn decode_flags(b: &[u8; 8], version: u8) -> Result<NativeHeader, LineError> {
        let flags = u64::from_le_bytes(*b);
        let known = if version >= 3 {
            HEADER_HOST_EVENTS | HEADER_VALUES | HEADER_PLACEMENT
        } else {
            HEADER_HOST_EVENTS | HEADER_VALUES
        };
        if flags & !known != 0 {
            let expected = if version >= 3 {
                "bits 0 (host events), 1 (values) and 2 (placement identifiers)"
            } else {
                "bits 0 (host events) and 1 (values)"
            };
            return Err(LineError::Fatal(format!(
                "expected version-{version} header flags with {expected} only, found {flags:#x} \
                 (a newer zombiesim wrote this file?)"
            )));
        }
        Ok(NativeHeader {
            version,
            host_events: flags & HEADER_HOST_EVENTS != 0,
            values: flags & HEADER_VALUES != 0,
            placement: flags & HEADER_PLACEMENT != 0,
        })
    }
}

/// What follows a record's 24 bytes, as its flags say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Follows {
    /// A placement identifier (2 bytes), first.
    pub placement: bool,
    /// Content values (8 bytes per 4 KiB written), after it.
    pub values: bool,
}

/// Decodes one record of a file with `header`; also returns what follows it.
pub(crate) fn decode(
    b: &[u8; RECORD_BYTES],
    header: &NativeHeader,
) -> Result<(RawRecord, Follows), LineError> {
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let size = u32::from_le_bytes(b[16..20].try_into().expect("4 bytes"));
    let device = u16::from_le_bytes(b[20..22].try_into().expect("2 bytes"));
    let op = match TraceOp::from_code(b[22]) {
        Some(op) if header.version >= 2 || !op.is_host_event() => op,
        _ if header.version == 1 => {
            return Err(LineError::Malformed(format!(
                "expected op 0 (read), 1 (write), 2 (trim) or 3 (flush), found {}",
                b[22]
            )))
        }
        _ => {
            return Err(LineError::Malformed(format!(
                "unknown event kind {}: expected 0 (read), 1 (write), 2 (trim), 3 (flush), \
                 4 (dirty) or 5 (clean)",
                b[22]
            )))
        }
    };
    let mut follows = Follows::default();
    if header.version >= 2 {
        let flags = b[23];
        if header.version == 2 && flags & !FLAG_VALUES != 0 {
            return Err(LineError::Malformed(format!(
                "expected record flags 0 or 1 (values follow), found {flags:#x}"
            )));
        }
        if flags & !(FLAG_VALUES | FLAG_PLACEMENT) != 0 {
            return Err(LineError::Malformed(format!(
                "expected record flags with bits 0 (values follow) and 1 (placement identifier \
                 follows) only, found {flags:#x}"
            )));
        }
        follows.values = flags & FLAG_VALUES != 0;
        follows.placement = flags & FLAG_PLACEMENT != 0;
        if follows.values && op != TraceOp::Write {
            return Err(LineError::Malformed(format!(
                "a {op} record carries content values; only writes do"
            )));
        }
        if follows.values && !header.values {
            return Err(LineError::Malformed(
                "a record carries content values the header did not declare".into(),
            ));
        }
        if follows.placement && op != TraceOp::Write {
            return Err(LineError::Malformed(format!(
                "a {op} record carries a placement identifier; only writes do"
            )));
        }
        if follows.placement && !header.placement {
            return Err(LineError::Malformed(
                "a record carries a placement identifier the header did not declare (header \
                 flag bit 2)"
                    .into(),
            ));
        }
        if op.is_host_event() && !header.host_events {
            return Err(LineError::Malformed(format!(
                "a {op} host event in a trace whose header declares none"
            )));
        }
        if op.is_host_event() && super::record::HostBuffer::from_id(u32::from(device)).is_none() {
            return Err(LineError::Malformed(format!(
                "a {op} host event in buffer {device}: expected 0 (page cache) or 1 (database buffer)"
            )));
        }
    }
    let (offset, size) = if op == TraceOp::Flush {
        (0, 0)
    } else {
        (u64_at(8), u64::from(size))
    };
    Ok((
        RawRecord {
            time_ns: u128::from(u64_at(0)),
            op,
            offset,
            size,
            device: u32::from(device),
            placement: None,
        },
        follows,
    ))
}

/// How many fingerprints a write of `size` bytes carries.
pub fn value_count(size: u64) -> usize {
    size.div_ceil(VALUE_BYTES) as usize
}

/// Encodes one record; its placement identifier and `values` (one per 4 KiB, writes
/// only) are flagged to follow, in that order (the caller writes them).
pub(crate) fn encode(
    rec: &TraceRecord,
    values: &[u64],
    header: &NativeHeader,
) -> Result<[u8; RECORD_BYTES], WriteError> {
    let size = u32::try_from(rec.size).map_err(|_| {
        WriteError::Unsupported(format!(
            "native sizes are 32-bit and {} bytes is larger",
            rec.size
        ))
    })?;
    let device = u16::try_from(rec.device).map_err(|_| {
        WriteError::Unsupported(format!(
            "native device numbers are 16-bit and {} is larger",
            rec.device
        ))
    })?;
    if rec.op.is_host_event() && !header.host_events {
        return Err(WriteError::Unsupported(format!(
            "a {} host event, but the file's header was not declared to hold host events",
            rec.op
        )));
    }
    if !values.is_empty() {
        if !header.values {
            return Err(WriteError::Unsupported(
                "content values, but the file's header was not declared to hold them".into(),
            ));
        }
        if rec.op != TraceOp::Write || values.len() != value_count(rec.size) {
            return Err(WriteError::Unsupported(format!(
                "{} content values for a {} of {} bytes (expected one per 4 KiB written)",
                values.len(),
                rec.op,
                rec.size
            )));
        }
    }
    if rec.placement.is_some() {
        if !header.placement {
            return Err(WriteError::Unsupported(
                "a placement identifier, but the file's header was not declared to hold them"
                    .into(),
            ));
        }
        if rec.op != TraceOp::Write {
            return Err(WriteError::Unsupported(format!(
                "a placement identifier on a {}; only writes carry one",
                rec.op
            )));
        }
    }
    let mut b = [0u8; RECORD_BYTES];
    b[0..8].copy_from_slice(&rec.time_ns.to_le_bytes());
    b[8..16].copy_from_slice(&rec.offset.to_le_bytes());
    b[16..20].copy_from_slice(&size.to_le_bytes());
    b[20..22].copy_from_slice(&device.to_le_bytes());
    b[22] = rec.op.code();
    b[23] = if values.is_empty() { 0 } else { FLAG_VALUES }
        | if rec.placement.is_some() {
            FLAG_PLACEMENT
        } else {
            0
        };
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: NativeHeader = NativeHeader {
        version: 2,
        host_events: false,
        values: false,
        placement: false,
    };

    #[test]
    fn layout_is_as_documented() {
        let rec = TraceRecord {
            time_ns: 0x0102_0304_0506_0708,
            op: TraceOp::Trim,
            offset: 0x1112_1314_1516_1718,
            size: 0x2122_2324,
            device: 0x3132,
            placement: None,
        };
        let b = encode(&rec, &[], &PLAIN).unwrap();
        assert_eq!(b[0], 0x08);
        assert_eq!(b[8], 0x18);
        assert_eq!(b[16..20], [0x24, 0x23, 0x22, 0x21]);
        assert_eq!(b[20..24], [0x32, 0x31, 2, 0]);
        let (r, follows) = decode(&b, &PLAIN).unwrap();
        assert_eq!(follows, Follows::default());
        assert_eq!(
            (r.time_ns, r.op, r.offset, r.size, r.device),
            (
                0x0102_0304_0506_0708,
                TraceOp::Trim,
                rec.offset,
                rec.size,
                rec.device
            )
        );
        let h = NativeHeader::new(true, true).encode();
        assert_eq!(&h[..8], b"ZSTRACE2");
        assert_eq!(h[8], 3);
        assert_eq!(
            NativeHeader::decode_flags(&h[8..].try_into().unwrap(), 2).unwrap(),
            NativeHeader::new(true, true)
        );
        // Placement declared: version 3, header bit 2, record bit 1.
        let placed = NativeHeader::new(false, true).with_placement(true);
        let h = placed.encode();
        assert_eq!(&h[..8], b"ZSTRACE3");
        assert_eq!(h[8], 6);
        assert_eq!(
            NativeHeader::decode_flags(&h[8..].try_into().unwrap(), 3).unwrap(),
            placed
        );
        let write = TraceRecord {
            op: TraceOp::Write,
            size: 4096,
            placement: Some(0x0102),
            ..rec
        };
        let b = encode(&write, &[9], &placed).unwrap();
        assert_eq!(b[23], 3);
        let (_, follows) = decode(&b, &placed).unwrap();
        assert_eq!(
            follows,
            Follows {
                placement: true,
                values: true
            }
        );
        assert_eq!(
            NativeHeader::new(true, false).with_placement(false),
            NativeHeader::new(true, false)
        );
    }

    #[test]
    fn rejects_what_it_cannot_hold() {
        let rec = TraceRecord {
            time_ns: 0,
            op: TraceOp::Write,
            offset: 0,
            size: 1 << 32,
            device: 0,
            placement: None,
        };
        assert!(encode(&rec, &[], &PLAIN).is_err());
        assert!(encode(
            &TraceRecord {
                size: 1,
                device: 70_000,
                ..rec
            },
            &[],
            &PLAIN
        )
        .is_err());
        let small = TraceRecord { size: 8192, ..rec };
        // Values and events must be declared, and one value per 4 KiB.
        assert!(encode(&small, &[1, 2], &PLAIN).is_err());
        let full = NativeHeader::new(true, true);
        assert!(encode(&small, &[1], &full).is_err());
        assert!(encode(&small, &[1, 2], &full).is_ok());
        let dirty = TraceRecord {
            op: TraceOp::Dirty,
            ..small
        };
        assert!(encode(&dirty, &[], &PLAIN).is_err());
        assert!(encode(&dirty, &[1, 2], &full).is_err());
        let mut b = encode(&small, &[], &PLAIN).unwrap();
        b[22] = 9;
        assert!(
            matches!(decode(&b, &PLAIN), Err(LineError::Malformed(m)) if m.contains("unknown event kind 9"))
        );
        b[22] = 4;
        assert!(
            matches!(decode(&b, &PLAIN), Err(LineError::Malformed(m)) if m.contains("declares none"))
        );
        let v1 = NativeHeader {
            version: 1,
            ..PLAIN
        };
        assert!(
            matches!(decode(&b, &v1), Err(LineError::Malformed(m)) if m.contains("expected op 0"))
        );
        b[22] = 1;
        b[23] = 0x80;
        assert!(decode(&b, &PLAIN).is_err());
        assert!(decode(&b, &v1).is_ok(), "version 1 ignores the pad byte");
        assert!(NativeHeader::decode_flags(&[4, 0, 0, 0, 0, 0, 0, 0], 2).is_err());
        assert!(NativeHeader::decode_flags(&[4, 0, 0, 0, 0, 0, 0, 0], 3).is_ok());
        assert!(NativeHeader::decode_flags(&[8, 0, 0, 0, 0, 0, 0, 0], 3).is_err());
    }

    #[test]
    fn placement_identifiers_are_declared_and_on_writes_only() {
        let placed = NativeHeader::new(false, false).with_placement(true);
        let write = TraceRecord {
            time_ns: 0,
            op: TraceOp::Write,
            offset: 0,
            size: 4096,
            device: 0,
            placement: Some(3),
        };
        let refused =
            |rec: &TraceRecord, header: &NativeHeader, what: &str| match encode(rec, &[], header) {
                Err(WriteError::Unsupported(m)) => assert!(m.contains(what), "{m}"),
                other => panic!("{other:?}"),
            };
        refused(&write, &PLAIN, "not declared");
        let read = TraceRecord {
            op: TraceOp::Read,
            ..write
        };
        refused(&read, &placed, "only writes");
        let mut b = encode(&write, &[], &placed).unwrap();
        assert_eq!(b[23], FLAG_PLACEMENT);
        let malformed =
            |b: &[u8; RECORD_BYTES], header: &NativeHeader, what: &str| match decode(b, header) {
                Err(LineError::Malformed(m)) => assert!(m.contains(what), "{m}"),
                other => panic!("{other:?}"),
            };
        // In a version-2 file bit 1 is unknown; in a version-3 file it must be declared.
        malformed(&b, &PLAIN, "expected record flags 0 or 1");
        let v3_undeclared = NativeHeader {
            version: 3,
            ..PLAIN
        };
        malformed(&b, &v3_undeclared, "the header did not declare");
        b[22] = TraceOp::Trim.code();
        malformed(&b, &placed, "a trim record carries a placement identifier");
        b[23] = 0x04;
        malformed(&b, &placed, "bits 0 (values follow) and 1");
    }
}
