//! MSR Cambridge block traces (SNIA IOTTA trace 388; Narayanan et al., FAST'08).
//!
//! One request per line, comma-separated, no header:
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166373321652068,src1,0,Write,3173167104,36864,3126
//! ```
//!
//! - `Timestamp`: Windows FILETIME, 100 ns ticks since 1601-01-01 UTC. Only differences
//!   matter here: the reader makes times relative to the first record.
//! - `Hostname`: ignored (the writer puts `zombiesim`).
//! - `DiskNumber`: the record's `device`.
//! - `Type`: `Read` or `Write` (any case). The format has no trim and no flush; writing
//!   either is an error.
//! - `Offset`, `Size`: bytes.
//! - `ResponseTime`: 100 ns ticks; checked to be an integer and otherwise ignored (the
//!   writer puts 0).
//!
//! A first line whose first field is `Timestamp` (a header some tools add) is skipped.

use super::codec::WriteError;
use super::codec::{LineError, LineResult, RawRecord};
use super::record::{TraceOp, TraceRecord};
use super::text::{parse_u32, parse_u64, split_byte, split_n};
use std::io::Write;

const FIELDS: &str = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";

/// Line parser; remembers whether a record was seen (for the optional header).
#[derive(Debug, Default)]
pub(crate) struct Parser {
    seen_line: bool,
}

impl Parser {
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let first_line = !self.seen_line;
        self.seen_line = true;
        let (f, n) = split_n::<7>(split_byte(line, b','));
        if first_line && f[0].trim_ascii().eq_ignore_ascii_case("timestamp") {
            return Ok(None);
        }
        if n != 7 {
            return Err(LineError::Malformed(format!(
                "expected 7 comma-separated fields ({FIELDS}), found {n}"
            )));
        }
        let ticks = parse_u64(f[0].trim_ascii(), "Timestamp (100 ns FILETIME ticks)")?;
        let device = parse_u32(f[2].trim_ascii(), "DiskNumber")?;
        let kind = f[3].trim_ascii();
        let op = if kind.eq_ignore_ascii_case("write") {
            TraceOp::Write
        } else if kind.eq_ignore_ascii_case("read") {
            TraceOp::Read
        } else {
            return Err(LineError::Malformed(format!(
                "expected Type `Read` or `Write`, found `{kind}`"
            )));
        };
        let offset = parse_u64(f[4].trim_ascii(), "Offset (bytes)")?;
        let size = parse_u64(f[5].trim_ascii(), "Size (bytes)")?;
        parse_u64(f[6].trim_ascii(), "ResponseTime (100 ns ticks)")?;
        Ok(Some(RawRecord {
            time_ns: u128::from(ticks) * 100,
            op,
            offset,
            size,
            device,
            placement: None,
        }))
    }
}

/// Writes one record as an MSR line (hostname `zombiesim`, response time 0).
pub(crate) fn write(w: &mut impl Write, rec: &TraceRecord) -> Result<(), WriteError> {
    let kind = match rec.op {
        TraceOp::Read => "Read",
        TraceOp::Write => "Write",
        op => {
            return Err(WriteError::Unsupported(format!(
                "msr has no {op} (Type is Read or Write)"
            )))
        }
    };
    writeln!(
        w,
        "{},zombiesim,{},{},{},{},0",
        rec.time_ns / 100,
        rec.device,
        kind,
        rec.offset,
        rec.size
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> LineResult {
        Parser { seen_line: true }.parse(line)
    }

    #[test]
    fn parses_the_readme_example() {
        let r = parse("128166373321652068,src1,0,Write,3173167104,36864,3126")
            .unwrap()
            .unwrap();
        assert_eq!(r.time_ns, 12_816_637_332_165_206_800);
        assert_eq!(
            (r.op, r.offset, r.size, r.device),
            (TraceOp::Write, 3173167104, 36864, 0)
        );
    }

    #[test]
    fn says_what_it_expected() {
        let Err(LineError::Malformed(m)) = parse("1,src1,0,Write,3") else {
            panic!("accepted a short line")
        };
        assert_eq!(
            m,
            "expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found 5"
        );
        let Err(LineError::Malformed(m)) = parse("1,src1,0,Trim,0,4096,0") else {
            panic!("accepted Trim")
        };
        assert!(m.contains("expected Type `Read` or `Write`"), "{m}");
    }

    #[test]
    fn skips_a_header_on_the_first_line_only() {
        let mut p = Parser::default();
        assert!(p.parse(FIELDS).unwrap().is_none());
        assert!(p.parse(FIELDS).is_err());
    }

    #[test]
    fn refuses_to_write_a_trim() {
        let rec = TraceRecord {
            time_ns: 0,
            op: TraceOp::Trim,
            offset: 0,
            size: 4096,
            device: 0,
            placement: None,
        };
        let mut out = Vec::new();
        assert!(matches!(
            write(&mut out, &rec),
            Err(WriteError::Unsupported(_))
        ));
        assert!(out.is_empty());
    }
}
