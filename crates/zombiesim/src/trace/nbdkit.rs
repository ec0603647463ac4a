//! nbdkit hash logs: every request a user-space block device (nbdkit with a logging
//! filter) served, with a 64-bit hash (BLAKE2b-64) of each 4 KiB written.
//!
//! One request per line, space-separated, times in microseconds:
//!
//! ```text
//! W t_us offset len fua hash,hash,...   write: one 16-hex-digit hash per 4 KiB of len
//! R t_us offset len                     read
//! T t_us offset len                     trim
//! Z t_us offset len ...                 write zeroes (every 4 KiB holds the zero page)
//! F t_us [flush]                        flush
//! W 1795322798804841 268435456 4096 0 260e8f33dcadd062
//! ```
//!
//! - `offset`, `len`: bytes. A write must carry `ceil(len / 4096)` hashes.
//! - Trailing fields of `R`, `T`, `Z` and `F` lines are ignored.
//!
//! Read only: zombiesim does not write this format.

use super::codec::{LineError, LineResult, RawRecord};
use super::record::TraceOp;
use super::text::{parse_hex, parse_u64};
use crate::fingerprint::fold128;

/// Bytes each hash covers.
pub const CHUNK: u64 = 4096;

/// The fingerprint zombiesim gives a 4 KiB page of zeroes (`Z` requests).
pub const ZERO_PAGE: u64 = 0x2e72_6f5a_6567_6150;

/// The longest `Z` (write zeroes) request read: NBD's 32-bit length.
const MAX_ZERO_BYTES: u64 = u32::MAX as u64;

/// Line parser; keeps the hashes of the last record.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    pub(crate) values: Vec<u64>,
}

impl Parser {
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        self.values.clear();
        let mut f = line.split_ascii_whitespace();
        let kind = f.next().unwrap_or("");
        let time_us = parse_u64(f.next().unwrap_or(""), "t_us (microseconds)")?;
        let time_ns = u128::from(time_us) * 1000;
        if kind == "F" {
            return Ok(Some(RawRecord {
                time_ns,
                op: TraceOp::Flush,
                offset: 0,
                size: 0,
                device: 0,
                placement: None,
            }));
        }
        let op = match kind {
            "W" | "Z" => TraceOp::Write,
            "R" => TraceOp::Read,
            "T" => TraceOp::Trim,
            other => {
                return Err(LineError::Malformed(format!(
                    "expected a request kind W, R, T, Z or F, found `{other}`"
                )))
            }
        };
        let offset = parse_u64(f.next().unwrap_or(""), "offset (bytes)")?;
        let size = parse_u64(f.next().unwrap_or(""), "len (bytes)")?;
        let chunks = size.div_ceil(CHUNK) as usize;
        if kind == "Z" {
            // One value per 4 KiB is kept: bound what a single number can ask for.
            if size > MAX_ZERO_BYTES {
                return Err(LineError::Malformed(format!(
                    "expected len below 2^32 (NBD's 32-bit request length) for Z, found {size}"
                )));
            }
            self.values.resize(chunks, ZERO_PAGE);
        } else if kind == "W" {
            parse_u64(f.next().unwrap_or(""), "fua (0 or 1)")?;
            let hashes = f.next().unwrap_or("");
            for h in hashes.split(',') {
                self.values.push(fold128(parse_hex(h, "a hash")?));
            }
            if self.values.len() != chunks {
                return Err(LineError::Malformed(format!(
                    "expected {chunks} comma-separated hashes for len {size} (one per 4 KiB), found {}",
                    self.values.len()
                )));
            }
        }
        Ok(Some(RawRecord {
            time_ns,
            op,
            offset,
            size,
            device: 0,
            placement: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let mut p = Parser::default();
        let r = p
            .parse("W 10 8192 8192 0 00000000000000aa,bb")
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.op, r.offset, r.size, r.time_ns),
            (TraceOp::Write, 8192, 8192, 10_000)
        );
        assert_eq!(p.values, vec![0xaa, 0xbb]);
        let r = p.parse("F 11 flush").unwrap().unwrap();
        assert_eq!(r.op, TraceOp::Flush);
        assert!(p.values.is_empty());
        p.parse("Z 12 0 12288").unwrap();
        assert_eq!(p.values, vec![ZERO_PAGE; 3]);
        assert_eq!(p.parse("T 13 0 4096").unwrap().unwrap().op, TraceOp::Trim);
        let mut e = |l: &str| match p.parse(l) {
            Err(LineError::Malformed(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(e("W 1 0 8192 0 aa").contains("expected 2 comma-separated hashes"));
        assert!(e("W 1 0 4096 0 xyz").contains("hexadecimal"));
        assert!(e("Q 1").contains("request kind"));
        assert!(e("W x").contains("t_us"));
        // A zero request's values come from its length alone: bounded, not allocated.
        assert!(e("Z 1 0 18446744073709551615").contains("below 2^32"));
        assert!(e("Z 1 0 4294967296").contains("below 2^32"));
        assert!(p.parse("Z 1 0 4294967295").is_ok());
    }
}
