//! UMass Trace Repository / SPC block traces (the "SPC trace file format" of the Storage
//! Performance Council, used by the UMass Financial and WebSearch traces).
//!
//! One request per line, comma-separated:
//!
//! ```text
//! ASU,LBA,Size,Opcode,Timestamp[,optional fields...]
//! 0,20941264,8192,W,0.551706
//! ```
//!
//! - `ASU`: application specific storage unit, the record's `device`.
//! - `LBA`: start, in 512-byte sectors (offset = LBA × 512).
//! - `Size`: bytes.
//! - `Opcode`: `r`/`R` read, `w`/`W` write. No trim, no flush (writing one is an error).
//! - `Timestamp`: seconds since the start of the trace, a decimal (parsed exactly to the
//!   nanosecond; the writer prints microseconds, six decimals, as the UMass files do).
//! - Further fields, which the specification allows, are ignored.
//!
//! Writing needs offsets that are whole sectors.

use super::codec::WriteError;
use super::codec::{LineError, LineResult, RawRecord};
use super::record::{TraceOp, TraceRecord};
use super::text::{parse_time, parse_u32, parse_u64, split_byte, split_n, write_fixed};
use std::io::Write;

/// Bytes per LBA.
pub const SECTOR: u64 = 512;

/// Parses one line.
pub(crate) fn parse(line: &str) -> LineResult {
    let (f, n) = split_n::<5>(split_byte(line, b','));
    if n < 5 {
        return Err(LineError::Malformed(format!(
            "expected at least 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found {n}"
        )));
    }
    let device = parse_u32(f[0].trim_ascii(), "ASU")?;
    let lba = parse_u64(f[1].trim_ascii(), "LBA (512-byte sectors)")?;
    let size = parse_u64(f[2].trim_ascii(), "Size (bytes)")?;
    let op = match f[3].trim_ascii() {
        "r" | "R" => TraceOp::Read,
        "w" | "W" => TraceOp::Write,
        other => {
            return Err(LineError::Malformed(format!(
                "expected Opcode `r`, `R`, `w` or `W`, found `{other}`"
            )))
        }
    };
    let time_ns = parse_time(f[4].trim_ascii(), 9, "Timestamp (seconds)")?;
    let offset = lba
        .checked_mul(SECTOR)
        .ok_or_else(|| LineError::Malformed(format!("expected LBA below 2^55, found {lba}")))?;
    Ok(Some(RawRecord {
        time_ns,
        op,
        offset,
        size,
        device,
        placement: None,
    }))
}

/// Writes one record as an SPC line (`w`/`r`, timestamp in seconds with six decimals).
pub(crate) fn write(w: &mut impl Write, rec: &TraceRecord) -> Result<(), WriteError> {
    let op = match rec.op {
        TraceOp::Read => 'r',
        TraceOp::Write => 'w',
        op => {
            return Err(WriteError::Unsupported(format!(
                "spc has no {op} (Opcode is r or w)"
            )))
        }
    };
    if !rec.offset.is_multiple_of(SECTOR) {
        return Err(WriteError::Unsupported(format!(
            "spc addresses 512-byte sectors and offset {} is not a multiple of 512",
            rec.offset
        )));
    }
    write!(
        w,
        "{},{},{},{},",
        rec.device,
        rec.offset / SECTOR,
        rec.size,
        op
    )?;
    write_fixed(w, rec.time_ns / 1_000, 6)?;
    w.write_all(b"\n")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_umass_line() {
        let r = parse("1,20941264,8192,W,0.551706").unwrap().unwrap();
        assert_eq!(r.time_ns, 551_706_000);
        assert_eq!(
            (r.op, r.offset, r.size, r.device),
            (TraceOp::Write, 20941264 * 512, 8192, 1)
        );
        let r = parse("0,303567,7168,r,0.000000,extra").unwrap().unwrap();
        assert_eq!(r.op, TraceOp::Read);
    }

    #[test]
    fn says_what_it_expected() {
        let Err(LineError::Malformed(m)) = parse("0,1,512,w") else {
            panic!()
        };
        assert!(
            m.starts_with("expected at least 5 comma-separated fields"),
            "{m}"
        );
        let Err(LineError::Malformed(m)) = parse("0,1,512,x,0.1") else {
            panic!()
        };
        assert!(m.contains("expected Opcode"), "{m}");
        let Err(LineError::Malformed(m)) = parse("0,1,512,w,-1") else {
            panic!()
        };
        assert!(m.contains("expected Timestamp (seconds)"), "{m}");
    }

    #[test]
    fn writes_microseconds() {
        let rec = TraceRecord {
            time_ns: 1_500_000_999,
            op: TraceOp::Write,
            offset: 1024,
            size: 4096,
            device: 3,
            placement: None,
        };
        let mut out = Vec::new();
        write(&mut out, &rec).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "3,2,4096,w,1.500000\n");
    }
}
