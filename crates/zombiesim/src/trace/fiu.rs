//! FIU IODedup block traces (Koller and Rangaswami, FAST'10: `homes`, `web-vm`,
//! `mail`), which carry an MD5 of the content of every request.
//!
//! One request per line, space-separated:
//!
//! ```text
//! ts pid process lba size R/W major minor md5
//! 89154209161713 4050 nfsd 183558232 8 W 6 0 ef3a5e1c8b0e9e4f5d20c5f1a9b5c2d3
//! ```
//!
//! - `ts`: nanoseconds. `pid`, `process`: ignored.
//! - `lba`: start in 512-byte sectors; `size`: length in 512-byte sectors.
//! - `R`/`W` (also `Read`/`Write`): the operation.
//! - `major`, `minor`: the device, kept as `major << 20 | minor`.
//! - `md5`: 32 hexadecimal digits, folded to 64 bits (high half xor low half).
//!
//! Each line's hash covers its whole request, which is one 4 KiB chunk (`size` 8) in
//! the `web-vm` and `mail` traces and one 512-byte sector (`size` 1) in `homes`.
//! Sector lines are gathered: consecutive writes of the sectors of one 4 KiB page become
//! one write whose fingerprint combines the sector hashes in order (a page written only
//! in part gets the combination of the sectors written). A write line of another size
//! is an error, since one hash cannot say what each page holds. Because a page is only
//! known to be complete when the next line arrives, every record is returned one line
//! late and the last at the end of the file.
//!
//! Read only: zombiesim does not write this format.

use super::codec::{LineError, LineResult, RawRecord};
use super::record::TraceOp;
use super::text::{parse_hex, parse_u32, parse_u64};
use crate::fingerprint::{combine, fold128};

const SECTOR: u64 = 512;
const SECTORS_PER_PAGE: u64 = 8;
const FIELDS: &str = "ts pid process lba size R/W major minor md5";

#[derive(Debug, Clone, Copy)]
struct Pending {
    raw: RawRecord,
    value: Option<u64>,
    /// Next sector that would extend a gathered 512-byte write.
    next_sector: Option<u64>,
}

/// Line parser: the record under construction and the values of the record returned.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    pending: Option<Pending>,
    pub(crate) values: Vec<u64>,
}

impl Parser {
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let mut f = line.split_ascii_whitespace();
        let mut field = |what: &str| {
            f.next().ok_or_else(|| {
                LineError::Malformed(format!(
                    "expected 9 space-separated fields ({FIELDS}), missing {what}"
                ))
            })
        };
        let ts = parse_u64(field("ts")?, "ts (nanoseconds)")?;
        field("pid")?;
        field("process")?;
        let lba = parse_u64(field("lba")?, "lba (512-byte sectors)")?;
        let size = parse_u64(field("size")?, "size (512-byte sectors)")?;
        let op = match field("R/W")? {
            "W" | "w" | "Write" | "write" => TraceOp::Write,
            "R" | "r" | "Read" | "read" => TraceOp::Read,
            other => {
                return Err(LineError::Malformed(format!(
                    "expected R or W, found `{other}`"
                )))
            }
        };
        let major = parse_u32(field("major")?, "major")?;
        let minor = parse_u32(field("minor")?, "minor")?;
        let md5 = fold128(parse_hex(field("md5")?, "md5")?);
        if op == TraceOp::Write && size != 1 && size != SECTORS_PER_PAGE {
            return Err(LineError::Malformed(format!(
                "expected a write of 8 sectors (one hash per 4 KiB) or 1 sector (one per 512 B), found size {size}"
            )));
        }
        let offset = lba
            .checked_mul(SECTOR)
            .ok_or_else(|| LineError::Malformed(format!("expected lba below 2^55, found {lba}")))?;
        let bytes = size.checked_mul(SECTOR).ok_or_else(|| {
            LineError::Malformed(format!("expected size below 2^55, found {size}"))
        })?;
        let raw = RawRecord {
            time_ns: u128::from(ts),
            op,
            offset,
            size: bytes,
            device: major << 20 | minor,
            placement: None,
        };
        // A sector write extending the gathered page?
        if let Some(p) = &mut self.pending {
            if op == TraceOp::Write
                && size == 1
                && p.next_sector == Some(lba)
                && p.raw.device == raw.device
            {
                p.raw.size += SECTOR;
                p.value = p.value.map(|v| combine(v, md5));
                p.next_sector = ((lba + 1) % SECTORS_PER_PAGE != 0).then_some(lba + 1);
                return Ok(None);
            }
        }
        let sector_write = op == TraceOp::Write && size == 1;
        let new = Pending {
            raw,
            value: (op == TraceOp::Write).then(|| {
                if sector_write {
                    combine(lba % 8, md5)
                } else {
                    md5
                }
            }),
            next_sector: (sector_write && (lba + 1) % SECTORS_PER_PAGE != 0).then_some(lba + 1),
        };
        Ok(self.emit(Some(new)))
    }

    /// The record under construction, at the end of the file.
    pub(crate) fn finish(&mut self) -> Option<RawRecord> {
        self.emit(None)
    }

    fn emit(&mut self, next: Option<Pending>) -> Option<RawRecord> {
        let out = std::mem::replace(&mut self.pending, next)?;
        self.values.clear();
        self.values.extend(out.value);
        Some(out.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_kib_lines_come_one_line_late() {
        let mut p = Parser::default();
        let h = "000000000000000100000000000000ff";
        assert_eq!(p.parse(&format!("10 1 nfsd 16 8 W 6 0 {h}")).unwrap(), None);
        let r = p
            .parse(&format!("20 1 nfsd 32 8 R 6 0 {h}"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.op, r.offset, r.size, r.device),
            (TraceOp::Write, 8192, 4096, 6 << 20)
        );
        assert_eq!(p.values, vec![0xfe]);
        let r = p.finish().unwrap();
        assert_eq!(r.op, TraceOp::Read);
        assert!(p.values.is_empty());
        assert_eq!(p.finish(), None);
    }

    #[test]
    fn sector_lines_gather_into_pages() {
        let mut p = Parser::default();
        for s in 0..8u64 {
            let line = format!("{s} 1 x {} 1 W 8 1 {:032x}", 64 + s, s + 1);
            assert!(p.parse(&line).unwrap().is_none());
        }
        let full = p.parse("9 1 x 200 1 W 8 1 aa").unwrap().unwrap();
        assert_eq!((full.offset, full.size), (64 * 512, 4096));
        assert_eq!(p.values.len(), 1);
        // A partial page: two sectors, then another request.
        assert!(p.parse("10 1 x 201 1 W 8 1 bb").unwrap().is_none());
        let partial = p.parse("11 1 x 300 8 W 8 1 cc").unwrap().unwrap();
        assert_eq!((partial.offset, partial.size), (200 * 512, 1024));
        assert_eq!(p.finish().unwrap().offset, 300 * 512);
    }

    #[test]
    fn bad_lines_say_what_was_expected() {
        let mut p = Parser::default();
        let e = |p: &mut Parser, l: &str| match p.parse(l) {
            Err(LineError::Malformed(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(e(&mut p, "1 2 x 3 16 W 8 0 aa").contains("8 sectors"));
        assert!(e(&mut p, "1 2 x 3 8 W 8 0").contains("missing md5"));
        assert!(e(&mut p, "1 2 x 3 8 Q 8 0 aa").contains("R or W"));
        assert!(e(&mut p, "1 2 x 3 8 W 8 0 qq").contains("md5"));
        // A read's size in sectors is not limited to one page, but must fit in bytes.
        assert!(e(&mut p, "1 2 x 3 36028797018963968 R 8 0 aa").contains("size below 2^55"));
        assert!(p.parse("1 2 x 3 36028797018963967 R 8 0 aa").is_ok());
    }
}
