//! The default text output of `blkparse` (blktrace's formatter).
//!
//! Every traced block-layer event is a line; the header columns are fixed:
//!
//! ```text
//! MAJ,MIN CPU SEQUENCE SECONDS.NANOS PID ACTION RWBS [SECTOR + COUNT] [PROCESS]
//!   8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
//!   8,0    1       33     0.072633433  1220  Q FWS [kworker/0:1H]
//! ```
//!
//! - `MAJ,MIN`: the device; the record's `device` is `MAJ << 20 | MIN` (the kernel's
//!   12-bit major / 20-bit minor split).
//! - `SECONDS.NANOS`: time since the trace started.
//! - `ACTION`: one event kind is kept, `Q` (queued: what the file system asked for) by
//!   default; [`ReadOptions::blkparse_action`](super::ReadOptions) picks another (`D`
//!   issued to the driver, `C` completed, ...). Lines of other actions are skipped.
//! - `RWBS`: `D` = trim (discard), else `W` = write, else `R` = read; `F` (preflush or
//!   FUA) on an event without data (no `+`, or a count of 0) = flush. Others (`N`) are
//!   skipped.
//! - `SECTOR + COUNT`: start and length in 512-byte sectors.
//!
//! Lines that do not start with `MAJ,MIN` — the per-CPU and total summaries blkparse
//! prints at the end (`CPU0 (8,0):`, `Reads Queued: ...`, `Events (8,0): ...`) — are
//! skipped, as are data-less events without `F` and SCSI pass-through events (a byte count
//! instead of `SECTOR + COUNT`). A line that starts with `MAJ,MIN` but is otherwise
//! malformed is an error.
//!
//! The writer prints `Q` events from CPU 0, PID 0, process `zombiesim`, RWBS `R`, `W`,
//! `D` or `FWS` (flush, no sectors), with sequence numbers counting from 1. Offsets and
//! sizes must be whole sectors and counts must fit 32 bits.

use super::codec::WriteError;
use super::codec::{LineError, LineResult, RawRecord};
use super::record::{TraceOp, TraceRecord};
use super::text::{parse_time, parse_u32, parse_u64};
use std::io::Write;

/// Bytes per sector.
pub const SECTOR: u64 = 512;

const HEADER: &str = "MAJ,MIN CPU SEQUENCE SECONDS PID ACTION RWBS";

/// Line parser for one kept action.
#[derive(Debug)]
pub(crate) struct Parser {
    action: char,
}

impl Parser {
    pub(crate) fn new(action: char) -> Parser {
        Parser { action }
    }

    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let mut it = line.split_ascii_whitespace();
        let Some(dev) = it.next() else {
            return Ok(None);
        };
        let Some((maj, min)) = dev.split_once(',') else {
            return Ok(None);
        };
        let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !numeric(maj) || !numeric(min) {
            return Ok(None);
        }
        let mut f = [""; 6];
        let mut n = 0;
        for field in it.by_ref().take(6) {
            f[n] = field;
            n += 1;
        }
        if n < 6 {
            return Err(LineError::Malformed(format!(
                "expected at least 7 whitespace-separated fields ({HEADER}), found {}",
                n + 1
            )));
        }
        let [_cpu, _seq, time, _pid, action, rwbs] = f;
        let mut chars = action.chars();
        if chars.next() != Some(self.action) || chars.next().is_some() {
            return Ok(None);
        }
        let major = parse_u32(maj, "device major")?;
        let minor = parse_u32(min, "device minor")?;
        if major >= 1 << 12 || minor >= 1 << 20 {
            return Err(LineError::Malformed(format!(
                "expected a device major below 4096 and minor below 1048576, found `{dev}`"
            )));
        }
        parse_u32(f[0], "CPU")?;
        parse_u64(f[1], "SEQUENCE")?;
        let time_ns = parse_time(time, 9, "SECONDS (seconds.nanoseconds)")?;
        parse_u64(f[3], "PID")?;
        if rwbs.is_empty() || !rwbs.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(LineError::Malformed(format!(
                "expected RWBS flags (letters such as R, W, D, F, S, M), found `{rwbs}`"
            )));
        }
        let has = |c: char| rwbs.contains(c);
        let device = (major << 20) | minor;
        let flush = RawRecord {
            time_ns,
            op: TraceOp::Flush,
            offset: 0,
            size: 0,
            device,
            placement: None,
        };
        let sector_field = match it.next() {
            None => None,
            Some(t) if t.starts_with('[') || t.starts_with('(') => None,
            Some(t) => Some(t),
        };
        let Some(sector_field) = sector_field else {
            return Ok(has('F').then_some(flush));
        };
        let sector = parse_u64(sector_field, "SECTOR (or `[PROCESS]`) after RWBS")?;
        if it.next() != Some("+") {
            // Pass-through (`BYTES (CDB) [PROCESS]`) or split (`SECTOR / NEW`): not block I/O.
            return Ok(None);
        }
        let Some(count_field) = it.next() else {
            return Err(LineError::Malformed(
                "expected COUNT (512-byte sectors) after `+`, found the end of the line".into(),
            ));
        };
        let count = parse_u64(count_field, "COUNT (512-byte sectors)")?;
        let op = if has('D') {
            TraceOp::Trim
        } else if has('F') && count == 0 {
            return Ok(Some(flush));
        } else if has('W') {
            TraceOp::Write
        } else if has('R') {
            TraceOp::Read
        } else {
            return Ok(None);
        };
        let bytes = |v: u64| {
            v.checked_mul(SECTOR).ok_or_else(|| {
                LineError::Malformed(format!("expected a sector number below 2^55, found {v}"))
            })
        };
        Ok(Some(RawRecord {
            time_ns,
            op,
            offset: bytes(sector)?,
            size: bytes(count)?,
            device,
            placement: None,
        }))
    }
}

/// Writer state: the sequence number.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    sequence: u64,
}

impl Writer {
    pub(crate) fn write(
        &mut self,
        w: &mut impl Write,
        rec: &TraceRecord,
    ) -> Result<(), WriteError> {
        let rwbs = match rec.op {
            TraceOp::Read => "R",
            TraceOp::Write => "W",
            TraceOp::Trim => "D",
            TraceOp::Flush => "FWS",
            TraceOp::Dirty | TraceOp::Clean => {
                return Err(WriteError::Unsupported(format!(
                    "blkparse holds no host events ({})",
                    rec.op
                )))
            }
        };
        if rec.op != TraceOp::Flush {
            if !rec.offset.is_multiple_of(SECTOR) || !rec.size.is_multiple_of(SECTOR) {
                return Err(WriteError::Unsupported(format!(
                    "blkparse counts 512-byte sectors and offset {} or size {} is not a multiple of 512",
                    rec.offset, rec.size
                )));
            }
            if rec.size / SECTOR > u64::from(u32::MAX) {
                return Err(WriteError::Unsupported(format!(
                    "blkparse sector counts are 32-bit and {} bytes is larger",
                    rec.size
                )));
            }
        }
        self.sequence += 1;
        write!(
            w,
            "{:3},{:<3} {:2} {:8} {:5}.{:09} {:5} {:>2} {:>3} ",
            rec.device >> 20,
            rec.device & ((1 << 20) - 1),
            0,
            self.sequence,
            rec.time_ns / 1_000_000_000,
            rec.time_ns % 1_000_000_000,
            0,
            'Q',
            rwbs
        )?;
        if rec.op != TraceOp::Flush {
            write!(w, "{} + {} ", rec.offset / SECTOR, rec.size / SECTOR)?;
        }
        w.write_all(b"[zombiesim]\n")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> LineResult {
        Parser::new('Q').parse(line)
    }

    #[test]
    fn parses_queue_events() {
        let r = parse("  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]")
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.time_ns, r.op, r.offset, r.size, r.device),
            (0, TraceOp::Write, 223490 * 512, 4096, 8 << 20)
        );
        let r = parse("259,1 0 5 1.500000001 1 Q RM 8 + 16 [ls]")
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.time_ns, r.op, r.device),
            (1_500_000_001, TraceOp::Read, 259 << 20 | 1)
        );
        let r = parse("8,0 1 33 0.072633433 1220 Q FWS [kworker/0:1H]")
            .unwrap()
            .unwrap();
        assert_eq!((r.op, r.offset, r.size), (TraceOp::Flush, 0, 0));
        let r = parse("8,0 1 34 0.1 1 Q DS 2048 + 2048 [fstrim]")
            .unwrap()
            .unwrap();
        assert_eq!((r.op, r.size), (TraceOp::Trim, 1 << 20));
        let r = parse("8,0 1 35 0.1 1 Q FWFS 100 + 8 [jbd2/sda1-8]")
            .unwrap()
            .unwrap();
        assert_eq!(r.op, TraceOp::Write);
    }

    #[test]
    fn skips_other_events_and_summaries() {
        for line in [
            "  8,0    3        2     0.000010000   697  G   W 223490 + 8 [kjournald]",
            "  8,0    3        3     0.000020000   697  P   N [kjournald]",
            "  8,0    3        4     0.000030000   697  UT  N [kjournald] 1",
            "  8,0    3        5     0.000040000   697  Q   N [kjournald]",
            "  8,0    3        6     0.000050000   697  Q   R 36 (12 00 ..) [sg_inq]",
            "CPU0 (8,0):",
            " Reads Queued:           0,        0KiB\t Writes Queued:          33,      132KiB",
            "Total (8,0):",
            "Events (8,0): 250 entries",
            "Throughput (R/W): 0KiB/s / 5KiB/s",
        ] {
            assert!(parse(line).unwrap().is_none(), "{line}");
        }
    }

    #[test]
    fn says_what_it_expected() {
        let Err(LineError::Malformed(m)) = parse("8,0 3 1 0.0 697") else {
            panic!()
        };
        assert!(
            m.starts_with("expected at least 7 whitespace-separated fields"),
            "{m}"
        );
        let Err(LineError::Malformed(m)) = parse("8,0 3 1 0.0 697 Q W 12 + x [a]") else {
            panic!()
        };
        assert!(m.contains("expected COUNT"), "{m}");
        let Err(LineError::Malformed(m)) = parse("8,0 3 1 zero 697 Q W 12 + 8 [a]") else {
            panic!()
        };
        assert!(m.contains("expected SECONDS"), "{m}");
    }

    #[test]
    fn writes_the_default_layout() {
        let mut w = Writer::default();
        let mut out = Vec::new();
        let rec = TraceRecord {
            time_ns: 1_000_000_002,
            op: TraceOp::Write,
            offset: 223490 * 512,
            size: 4096,
            device: 8 << 20,
            placement: None,
        };
        w.write(&mut out, &rec).unwrap();
        w.write(
            &mut out,
            &TraceRecord {
                op: TraceOp::Flush,
                offset: 0,
                size: 0,
                ..rec
            },
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "  8,0    0        1     1.000000002     0  Q   W 223490 + 8 [zombiesim]\n  \
             8,0    0        2     1.000000002     0  Q FWS [zombiesim]\n"
        );
    }
}
