//! zombiesim's native binary trace format: compact, fixed-size, fast to read.
//!
//! ```text
//! offset  size  field
//! 0       8     magic, the ASCII bytes `ZSTRACE1`
//! then, per record, 24 bytes, all integers little-endian:
//! +0      8     time_ns  u64   nanoseconds (the reader makes them relative to the first)
//! +8      8     offset   u64   bytes
//! +16     4     size     u32   bytes
//! +20     2     device   u16
//! +22     1     op       u8    0 read, 1 write, 2 trim, 3 flush
//! +23     1     pad      u8    0 (ignored when read)
//! ```
//!
//! There is no record count and no footer, so a file can be streamed and appended to.
//! Errors name the record number (from 1) as the "line"; a bad magic is line 0. Writing
//! needs sizes below 4 GiB and device numbers below 65 536.

use super::reader::{LineError, RawRecord};
use super::record::{TraceOp, TraceRecord};
use super::writer::WriteError;

/// The first eight bytes of every native trace.
pub const MAGIC: &[u8; 8] = b"ZSTRACE1";
/// Bytes per record.
pub const RECORD_BYTES: usize = 24;

/// Decodes one record.
pub(crate) fn decode(b: &[u8; RECORD_BYTES]) -> Result<RawRecord, LineError> {
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let size = u32::from_le_bytes(b[16..20].try_into().expect("4 bytes"));
    let device = u16::from_le_bytes(b[20..22].try_into().expect("2 bytes"));
    let op = TraceOp::from_code(b[22]).ok_or_else(|| {
        LineError::Malformed(format!(
            "expected op 0 (read), 1 (write), 2 (trim) or 3 (flush), found {}",
            b[22]
        ))
    })?;
    let (offset, size) = if op == TraceOp::Flush {
        (0, 0)
    } else {
        (u64_at(8), u64::from(size))
    };
    Ok(RawRecord {
        time_ns: u128::from(u64_at(0)),
        op,
        offset,
        size,
        device: u32::from(device),
    })
}

/// Encodes one record.
pub(crate) fn encode(rec: &TraceRecord) -> Result<[u8; RECORD_BYTES], WriteError> {
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
    let mut b = [0u8; RECORD_BYTES];
    b[0..8].copy_from_slice(&rec.time_ns.to_le_bytes());
    b[8..16].copy_from_slice(&rec.offset.to_le_bytes());
    b[16..20].copy_from_slice(&size.to_le_bytes());
    b[20..22].copy_from_slice(&device.to_le_bytes());
    b[22] = rec.op.code();
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_as_documented() {
        let rec = TraceRecord {
            time_ns: 0x0102_0304_0506_0708,
            op: TraceOp::Trim,
            offset: 0x1112_1314_1516_1718,
            size: 0x2122_2324,
            device: 0x3132,
        };
        let b = encode(&rec).unwrap();
        assert_eq!(b[0], 0x08);
        assert_eq!(b[8], 0x18);
        assert_eq!(b[16..20], [0x24, 0x23, 0x22, 0x21]);
        assert_eq!(b[20..24], [0x32, 0x31, 2, 0]);
        let r = decode(&b).unwrap();
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
    }

    #[test]
    fn rejects_what_it_cannot_hold() {
        let rec = TraceRecord {
            time_ns: 0,
            op: TraceOp::Write,
            offset: 0,
            size: 1 << 32,
            device: 0,
        };
        assert!(encode(&rec).is_err());
        assert!(encode(&TraceRecord {
            size: 1,
            device: 70_000,
            ..rec
        })
        .is_err());
        let mut b = encode(&TraceRecord { size: 1, ..rec }).unwrap();
        b[22] = 9;
        assert!(matches!(decode(&b), Err(LineError::Malformed(m)) if m.contains("expected op")));
    }
}
