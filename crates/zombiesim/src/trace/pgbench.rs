//! Hashed device-write logs (CSV): every 4 KiB block written to a device, with the
//! XXH3-64 hash of its content, as captured under a PostgreSQL pgbench run.
//!
//! ```text
//! t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write
//! 1795323069.081822,WS,120832,pg_wal/00000001000000000000007C,0,2a134b24ccc5d94b,1795323069.035233
//! ```
//!
//! - `t_wall`: epoch seconds (decimal) when the block request was issued.
//! - `rwbs`: block-layer flags; a `W` makes it a write, a `D` a discard, an `R` a read
//!   (`S` sync, `F` flush, `M` metadata are ignored).
//! - `fsblk`: the file-system block number, in 4 KiB units on the device (offset =
//!   fsblk × 4096, size 4096).
//! - `file`, `file_page`, `t_app_write`: provenance, ignored by the replay.
//! - `content_xxh3`: 16 hexadecimal digits, the page's fingerprint.
//!
//! The header line is skipped. Read only: zombiesim does not write this format.

use super::codec::{LineError, LineResult, RawRecord};
use super::record::TraceOp;
use super::text::{parse_hex, parse_time, parse_u64, split_byte, split_n};
use crate::fingerprint::fold128;

/// Bytes per file-system block.
pub const BLOCK: u64 = 4096;

const FIELDS: &str = "t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write";

/// The operation block-layer flags name: `D` a discard, else `W` a write, else `R` a
/// read (`S` sync, `F` flush, `M` metadata are ignored).
pub(crate) fn rwbs_op(rwbs: &str) -> Result<TraceOp, String> {
    if rwbs.contains('D') {
        Ok(TraceOp::Trim)
    } else if rwbs.contains('W') {
        Ok(TraceOp::Write)
    } else if rwbs.contains('R') {
        Ok(TraceOp::Read)
    } else {
        Err(format!(
            "expected rwbs flags with W, R or D, found `{rwbs}`"
        ))
    }
}

/// Line parser; keeps the hash of the last record.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    pub(crate) values: Vec<u64>,
}

impl Parser {
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        self.values.clear();
        let (f, n) = split_n::<7>(split_byte(line, b','));
        if f[0] == "t_wall" {
            return Ok(None);
        }
        if n != 7 {
            return Err(LineError::Malformed(format!(
                "expected 7 comma-separated fields ({FIELDS}), found {n}"
            )));
        }
        let time_ns = parse_time(f[0], 9, "t_wall (epoch seconds)")?;
        let op = rwbs_op(f[1]).map_err(LineError::Malformed)?;
        let block = parse_u64(f[2], "fsblk (4 KiB blocks)")?;
        let offset = block.checked_mul(BLOCK).ok_or_else(|| {
            LineError::Malformed(format!("expected fsblk below 2^52, found {block}"))
        })?;
        if op == TraceOp::Write {
            self.values.push(fold128(parse_hex(f[5], "content_xxh3")?));
        }
        Ok(Some(RawRecord {
            time_ns,
            op,
            offset,
            size: BLOCK,
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
        assert_eq!(p.parse(FIELDS).unwrap(), None);
        let r = p
            .parse("1.5,WS,3,pg_wal/x,0,2a134b24ccc5d94b,1.4")
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.time_ns, r.offset, r.size),
            (1_500_000_000, 3 * 4096, 4096)
        );
        assert_eq!(p.values, vec![0x2a13_4b24_ccc5_d94b]);
        let mut bad = |l: &str| match p.parse(l) {
            Err(LineError::Malformed(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(bad("1.5,WS,3,f,0,zz,1").contains("content_xxh3"));
        assert!(bad("1.5,WS,3").contains("expected 7"));
        assert!(bad("1.5,S,3,f,0,aa,1").contains("rwbs"));
    }
}
