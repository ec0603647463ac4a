//! DiskSim ASCII traces, the input format of DiskSim and (with the caveat below) of the
//! SSD simulators built on its conventions, MQSim and SSDSim.
//!
//! One request per line, five whitespace-separated fields:
//!
//! ```text
//! time dev lba size flags
//! 12.500000 0 2048 8 0
//! ```
//!
//! - `time`: arrival time in milliseconds, a decimal (parsed exactly to the nanosecond;
//!   the writer prints six decimals, so nanoseconds survive a round trip).
//! - `dev`: device number, the record's `device`.
//! - `lba`: start, in 512-byte sectors.
//! - `size`: length, in 512-byte sectors.
//! - `flags`: bit 0 set = read, clear = write (other bits ignored). No trim, no flush
//!   (writing one is an error).
//!
//! MQSim and SSDSim read the first column as integer nanoseconds rather than DiskSim's
//! milliseconds; read such a file with `time_scale = 1e-6`.
//!
//! Writing needs offsets and sizes that are whole sectors.

use super::codec::WriteError;
use super::codec::{LineError, LineResult, RawRecord};
use super::record::{TraceOp, TraceRecord};
use super::text::{parse_time, parse_u32, parse_u64, split_n, write_fixed};
use std::io::Write;

/// Bytes per sector.
pub const SECTOR: u64 = 512;

/// Parses one line.
pub(crate) fn parse(line: &str) -> LineResult {
    let (f, n) = split_n::<5>(line.split_ascii_whitespace());
    if n != 5 {
        return Err(LineError::Malformed(format!(
            "expected 5 whitespace-separated fields (time_ms dev lba_sectors size_sectors flags), found {n}"
        )));
    }
    let time_ns = parse_time(f[0], 6, "time (milliseconds)")?;
    let device = parse_u32(f[1], "dev")?;
    let lba = parse_u64(f[2], "lba (512-byte sectors)")?;
    let sectors = parse_u64(f[3], "size (512-byte sectors)")?;
    let flags = parse_u32(f[4], "flags")?;
    let too_big =
        |what: &str, v: u64| LineError::Malformed(format!("expected {what} below 2^55, found {v}"));
    let offset = lba.checked_mul(SECTOR).ok_or_else(|| too_big("lba", lba))?;
    let size = sectors
        .checked_mul(SECTOR)
        .ok_or_else(|| too_big("size", sectors))?;
    let op = if flags & 1 == 1 {
        TraceOp::Read
    } else {
        TraceOp::Write
    };
    Ok(Some(RawRecord {
        time_ns,
        op,
        offset,
        size,
        device,
        placement: None,
    }))
}

/// Writes one record as a DiskSim line (time in ms with six decimals, flags 1 or 0).
pub(crate) fn write(w: &mut impl Write, rec: &TraceRecord) -> Result<(), WriteError> {
    let flags = match rec.op {
        TraceOp::Read => 1,
        TraceOp::Write => 0,
        op => {
            return Err(WriteError::Unsupported(format!(
                "disksim has no {op} (flags say read or write)"
            )))
        }
    };
    if !rec.offset.is_multiple_of(SECTOR) || !rec.size.is_multiple_of(SECTOR) {
        return Err(WriteError::Unsupported(format!(
            "disksim counts 512-byte sectors and offset {} or size {} is not a multiple of 512",
            rec.offset, rec.size
        )));
    }
    write_fixed(w, rec.time_ns, 6)?;
    writeln!(
        w,
        " {} {} {} {}",
        rec.device,
        rec.offset / SECTOR,
        rec.size / SECTOR,
        flags
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_writes_a_line() {
        let r = parse("12.5 2 2048 8 1").unwrap().unwrap();
        assert_eq!(r.time_ns, 12_500_000);
        assert_eq!(
            (r.op, r.offset, r.size, r.device),
            (TraceOp::Read, 2048 * 512, 4096, 2)
        );
        let rec = TraceRecord {
            time_ns: 12_500_001,
            op: TraceOp::Write,
            offset: 1 << 20,
            size: 8192,
            device: 0,
            placement: None,
        };
        let mut out = Vec::new();
        write(&mut out, &rec).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "12.500001 0 2048 16 0\n");
    }

    #[test]
    fn says_what_it_expected() {
        let Err(LineError::Malformed(m)) = parse("0.0 0 1 8") else {
            panic!()
        };
        assert!(
            m.starts_with("expected 5 whitespace-separated fields"),
            "{m}"
        );
        let Err(LineError::Malformed(m)) = parse("0.0 0 x 8 0") else {
            panic!()
        };
        assert!(m.contains("expected lba (512-byte sectors)"), "{m}");
    }
}
