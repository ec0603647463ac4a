//! fio I/O logs, as written by `write_iolog=` and replayed by `read_iolog=`.
//!
//! The first line names the version; every other line is one action on one file:
//!
//! ```text
//! fio version 2 iolog                      fio version 3 iolog
//! /dev/sdb add                             34 /data/fio.bin add
//! /dev/sdb open                            287 /data/fio.bin open
//! /dev/sdb write 210542592 4096            294 /data/fio.bin write 210542592 4096
//! /dev/sdb sync 0 0                        14999818 /data/fio.bin sync 87048192 0
//! /dev/sdb close                           15184306 /data/fio.bin close
//! ```
//!
//! - Version 3 starts each line with a timestamp in microseconds. Version 2 has none;
//!   its clock only moves with `wait` actions (`FILE wait USEC 0`), so most v2 logs read
//!   as all requests at time 0.
//! - Actions: `add`, `open`, `close` (file management, no record), `read`, `write`,
//!   `trim` (need `OFFSET LENGTH`, in bytes), `sync`, `datasync` (a [`TraceOp::Flush`];
//!   their offset and length, if any, are ignored) and `wait` (v2 clock, see above).
//! - Each distinct file becomes a device number in first-seen order (0, 1, 2, ...).
//!   A file named exactly `dev<N>` — what the writer produces — keeps the number `N`
//!   (unless an earlier file already took it), so a written log reads back with its
//!   device numbers intact; other names take the lowest numbers not yet taken.
//!
//! The writer produces version 3: the header, then for each device the first time it
//! appears `T devN add` and `T devN open`, one line per record (`sync 0 0` for a flush),
//! and at the end `T devN close` for every device (T = the latest time written).
//! Times are truncated to microseconds; lengths must fit fio's 32-bit field.

use super::codec::WriteError;
use super::codec::{LineError, LineResult, RawRecord};
use super::record::{TraceOp, TraceRecord};
use super::text::{parse_u64, split_n};
use std::collections::{HashMap, HashSet};
use std::io::Write;

/// The header line of each version.
pub const HEADER_V2: &str = "fio version 2 iolog";
pub const HEADER_V3: &str = "fio version 3 iolog";

/// Line parser: the version (from the header) and the file → device table.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    version: Option<u8>,
    files: HashMap<String, u32>,
    taken: HashSet<u32>,
    next_free: u32,
    last_name: String,
    last_device: Option<u32>,
    clock_us: u64,
}

impl Parser {
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let Some(version) = self.version else {
            let header = line.split_ascii_whitespace().collect::<Vec<_>>().join(" ");
            self.version = Some(match header.as_str() {
                HEADER_V2 => 2,
                HEADER_V3 => 3,
                _ => {
                    return Err(LineError::Fatal(format!(
                        "expected the header `{HEADER_V2}` or `{HEADER_V3}` on the first line, found `{line}`"
                    )))
                }
            });
            return Ok(None);
        };
        let (f, n) = split_n::<6>(line.split_ascii_whitespace());
        let (time, rest, n) = if version == 3 {
            if n != 3 && n != 5 {
                return Err(LineError::Malformed(format!(
                    "expected `TIMESTAMP_US FILENAME ACTION [OFFSET LENGTH]` (3 or 5 whitespace-separated fields, fio iolog v3), found {n}"
                )));
            }
            let us = parse_u64(f[0], "TIMESTAMP_US (microseconds)")?;
            (Some(us), &f[1..], n - 1)
        } else {
            if n != 2 && n != 4 {
                return Err(LineError::Malformed(format!(
                    "expected `FILENAME ACTION [OFFSET LENGTH]` (2 or 4 whitespace-separated fields, fio iolog v2), found {n}"
                )));
            }
            (None, &f[..], n)
        };
        let (file, action) = (rest[0], rest[1]);
        let range = |what: &str| -> Result<(u64, u64), LineError> {
            if n < 4 {
                return Err(LineError::Malformed(format!(
                    "expected `{what} OFFSET LENGTH`, found no offset and length"
                )));
            }
            Ok((
                parse_u64(rest[2], "OFFSET (bytes)")?,
                parse_u64(rest[3], "LENGTH (bytes)")?,
            ))
        };
        let (op, (offset, size)) = match action {
            "add" | "open" | "close" => {
                self.device(file);
                return Ok(None);
            }
            "wait" => {
                if time.is_none() {
                    self.clock_us = self.clock_us.saturating_add(range("wait")?.0);
                }
                return Ok(None);
            }
            "read" => (TraceOp::Read, range("read")?),
            "write" => (TraceOp::Write, range("write")?),
            "trim" => (TraceOp::Trim, range("trim")?),
            "sync" | "datasync" => (TraceOp::Flush, (0, 0)),
            other => {
                return Err(LineError::Malformed(format!(
                    "expected an action (add, open, close, read, write, trim, sync, datasync, wait), found `{other}`"
                )))
            }
        };
        let us = time.unwrap_or(self.clock_us);
        Ok(Some(RawRecord {
            time_ns: u128::from(us) * 1_000,
            op,
            offset,
            size,
            device: self.device(file),
            placement: None,
        }))
    }

    /// The device number of `name`, assigning one the first time it is seen.
    fn device(&mut self, name: &str) -> u32 {
        if let Some(d) = self.last_device {
            if self.last_name == name {
                return d;
            }
        }
        let d = match self.files.get(name) {
            Some(&d) => d,
            None => {
                let d = match dev_number(name) {
                    Some(d) if !self.taken.contains(&d) => d,
                    _ => {
                        while self.taken.contains(&self.next_free) {
                            self.next_free += 1;
                        }
                        self.next_free
                    }
                };
                self.taken.insert(d);
                self.files.insert(name.to_owned(), d);
                d
            }
        };
        self.last_name.clear();
        self.last_name.push_str(name);
        self.last_device = Some(d);
        d
    }
}

/// `N` if `name` is exactly `dev<N>` as the writer spells it (no sign, no leading zeros).
fn dev_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("dev")?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'));
    if canonical {
        digits.parse().ok()
    } else {
        None
    }
}

/// Writer state: which devices were added, and the latest time (for the close lines).
#[derive(Debug, Default)]
pub(crate) struct Writer {
    open: Vec<u32>,
    open_set: HashSet<u32>,
    last_us: u64,
}

impl Writer {
    pub(crate) fn header(&mut self, w: &mut impl Write) -> Result<(), WriteError> {
        writeln!(w, "{HEADER_V3}")?;
        Ok(())
    }

    pub(crate) fn write(
        &mut self,
        w: &mut impl Write,
        rec: &TraceRecord,
    ) -> Result<(), WriteError> {
        if rec.size > u64::from(u32::MAX) {
            return Err(WriteError::Unsupported(format!(
                "fio lengths are 32-bit and {} bytes is larger",
                rec.size
            )));
        }
        let us = rec.time_ns / 1_000;
        self.last_us = self.last_us.max(us);
        let d = rec.device;
        if self.open_set.insert(d) {
            self.open.push(d);
            writeln!(w, "{us} dev{d} add\n{us} dev{d} open")?;
        }
        let action = match rec.op {
            TraceOp::Read => "read",
            TraceOp::Write => "write",
            TraceOp::Trim => "trim",
            TraceOp::Flush => {
                writeln!(w, "{us} dev{d} sync 0 0")?;
                return Ok(());
            }
            TraceOp::Dirty | TraceOp::Clean => {
                return Err(WriteError::Unsupported(format!(
                    "fio holds no host events ({})",
                    rec.op
                )))
            }
        };
        writeln!(w, "{us} dev{d} {action} {} {}", rec.offset, rec.size)?;
        Ok(())
    }

    pub(crate) fn finish(&mut self, w: &mut impl Write) -> Result<(), WriteError> {
        for d in &self.open {
            writeln!(w, "{} dev{d} close", self.last_us)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser(version: u8) -> Parser {
        let mut p = Parser::default();
        let header = if version == 2 { HEADER_V2 } else { HEADER_V3 };
        assert!(p.parse(header).unwrap().is_none());
        p
    }

    #[test]
    fn reads_v3_lines() {
        let mut p = parser(3);
        assert!(p.parse("34 /tmp/a add").unwrap().is_none());
        let r = p.parse("294 /tmp/a write 210542592 4096").unwrap().unwrap();
        assert_eq!(r.time_ns, 294_000);
        assert_eq!(
            (r.op, r.offset, r.size, r.device),
            (TraceOp::Write, 210542592, 4096, 0)
        );
        let r = p.parse("300 /tmp/b read 0 512").unwrap().unwrap();
        assert_eq!((r.op, r.device), (TraceOp::Read, 1));
        let r = p.parse("301 /tmp/a sync 87048192 0").unwrap().unwrap();
        assert_eq!(
            (r.op, r.offset, r.size, r.device),
            (TraceOp::Flush, 0, 0, 0)
        );
        let r = p.parse("302 /tmp/b trim 4096 8192").unwrap().unwrap();
        assert_eq!(
            (r.op, r.offset, r.size, r.device),
            (TraceOp::Trim, 4096, 8192, 1)
        );
    }

    #[test]
    fn reads_v2_lines_with_waits() {
        let mut p = parser(2);
        let r = p.parse("/dev/sdb write 0 4096").unwrap().unwrap();
        assert_eq!(r.time_ns, 0);
        assert!(p.parse("/dev/sdb wait 1500 0").unwrap().is_none());
        let r = p.parse("/dev/sdb datasync").unwrap().unwrap();
        assert_eq!((r.op, r.time_ns), (TraceOp::Flush, 1_500_000));
    }

    #[test]
    fn header_is_required() {
        let mut p = Parser::default();
        assert!(matches!(p.parse("1 a write 0 1"), Err(LineError::Fatal(_))));
    }

    #[test]
    fn says_what_it_expected() {
        let mut p = parser(3);
        let Err(LineError::Malformed(m)) = p.parse("1 a write 0") else {
            panic!()
        };
        assert!(
            m.contains("expected `TIMESTAMP_US FILENAME ACTION [OFFSET LENGTH]`"),
            "{m}"
        );
        let Err(LineError::Malformed(m)) = p.parse("1 a write") else {
            panic!()
        };
        assert!(m.contains("expected `write OFFSET LENGTH`"), "{m}");
        let Err(LineError::Malformed(m)) = p.parse("1 a frob 0 0") else {
            panic!()
        };
        assert!(m.contains("expected an action"), "{m}");
    }

    #[test]
    fn dev_names_keep_their_numbers() {
        let mut p = parser(3);
        p.parse("0 dev7 add").unwrap();
        p.parse("0 data.bin add").unwrap();
        p.parse("0 dev0 add").unwrap();
        p.parse("0 dev7x add").unwrap();
        let dev = |p: &mut Parser, f: &str| {
            p.parse(&format!("1 {f} write 0 1"))
                .unwrap()
                .unwrap()
                .device
        };
        assert_eq!(dev(&mut p, "dev7"), 7);
        assert_eq!(dev(&mut p, "data.bin"), 0);
        assert_eq!(dev(&mut p, "dev0"), 1, "dev0 was taken by data.bin");
        assert_eq!(dev(&mut p, "dev7x"), 2);
        assert_eq!(dev_number("dev007"), None);
    }
}
