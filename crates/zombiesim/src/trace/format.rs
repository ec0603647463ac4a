//! The trace formats zombiesim reads and writes, by name.
//!
//! `msr`, `spc`, `disksim`, `fio`, `blkparse` and `native`; each has its own module with
//! the field layout and an example line. Names are parsed case-insensitively and a few
//! common aliases are accepted (`umass` for `spc`, `mqsim`/`ssdsim`/`ascii` for `disksim`,
//! `iolog` for `fio`, `blktrace` for `blkparse`, `bin` for `native`).

use crate::error::{Error, Result};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// How a trace file is compressed, as its name says: `.gz` (gzip), `.zst` (zstd), any
/// other name none. Traces are read and written through it on the fly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileCompression {
    None,
    Gzip,
    Zstd,
}

impl FileCompression {
    /// The compression `path`'s extension names (case-insensitive).
    pub fn of(path: &Path) -> FileCompression {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext.eq_ignore_ascii_case("gz") {
            FileCompression::Gzip
        } else if ext.eq_ignore_ascii_case("zst") {
            FileCompression::Zstd
        } else {
            FileCompression::None
        }
    }
}

/// A block-trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// MSR Cambridge CSV (`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`).
    Msr,
    /// UMass / SPC CSV (`ASU,LBA,Size,Opcode,Timestamp`).
    Spc,
    /// DiskSim ASCII, as MQSim and SSDSim read it (`time dev lba size flags`).
    Disksim,
    /// fio `write_iolog`, version 2 or 3 (read), version 3 (written).
    Fio,
    /// Default text output of `blkparse`.
    Blkparse,
    /// zombiesim's compact little-endian binary format (`ZSTRACE1`).
    Native,
    /// FIU IODedup (`ts pid process lba size R/W major minor md5`), with content hashes.
    Fiu,
    /// Hashed device-write CSV (`t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write`).
    PgbenchHashed,
    /// nbdkit hash log (`W t_us offset len fua hash,...`, `F`, `T`, `Z`).
    NbdkitHashlog,
}

impl TraceFormat {
    /// Every format, for listings.
    pub const ALL: &'static [TraceFormat] = &[
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Disksim,
        TraceFormat::Fio,
        TraceFormat::Blkparse,
        TraceFormat::Native,
        TraceFormat::Fiu,
        TraceFormat::PgbenchHashed,
        TraceFormat::NbdkitHashlog,
    ];

    /// The canonical name (`msr`, `spc`, ...).
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Fio => "fio",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Native => "native",
            TraceFormat::Fiu => "fiu",
            TraceFormat::PgbenchHashed => "pgbench-hashed",
            TraceFormat::NbdkitHashlog => "nbdkit-hashlog",
        }
    }

    /// A one-line description, for listings.
    pub fn description(self) -> &'static str {
        match self {
            TraceFormat::Msr => {
                "MSR Cambridge CSV: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime \
                 (100 ns FILETIME ticks, bytes)"
            }
            TraceFormat::Spc => {
                "UMass/SPC CSV: ASU,LBA,Size,Opcode,Timestamp (512-byte sectors, bytes, seconds)"
            }
            TraceFormat::Disksim => {
                "DiskSim ASCII (MQSim, SSDSim): time_ms dev lba size flags (512-byte sectors, \
                 flags bit 0 = read)"
            }
            TraceFormat::Fio => "fio write_iolog v2/v3: [usec] file action [offset length] (bytes)",
            TraceFormat::Blkparse => {
                "blkparse default text: maj,min cpu seq sec.nsec pid action RWBS sector + count"
            }
            TraceFormat::Native => {
                "zombiesim binary: magic ZSTRACE1, then 24-byte little-endian records"
            }
            TraceFormat::Fiu => {
                "FIU IODedup: ts pid process lba size R/W major minor md5 (ns, 512-byte \
                 sectors; one MD5 per 4 KiB or per 512 B; read only)"
            }
            TraceFormat::PgbenchHashed => {
                "hashed device writes CSV: t_wall,rwbs,fsblk,file,file_page,content_xxh3,\
                 t_app_write (epoch s, 4 KiB blocks; read only)"
            }
            TraceFormat::NbdkitHashlog => {
                "nbdkit hash log: W t_us offset len fua hash,... | R | T | Z | F (bytes, \
                 one hash per 4 KiB; read only)"
            }
        }
    }

    /// Whether files of this format are binary rather than lines of text.
    pub fn is_binary(self) -> bool {
        matches!(self, TraceFormat::Native)
    }

    /// The smallest time step the format stores, in nanoseconds (what a round trip
    /// through it truncates times to). fio v2 stores no times at all.
    pub fn time_resolution_ns(self) -> u64 {
        match self {
            TraceFormat::Msr => 100,
            TraceFormat::Spc => 1_000,
            TraceFormat::Disksim => 1,
            TraceFormat::Fio => 1_000,
            TraceFormat::Blkparse => 1,
            TraceFormat::Native => 1,
            TraceFormat::Fiu => 1,
            TraceFormat::PgbenchHashed => 1_000,
            TraceFormat::NbdkitHashlog => 1_000,
        }
    }

    /// Whether records carry content fingerprints (one per 4 KiB written).
    pub fn has_values(self) -> bool {
        matches!(
            self,
            TraceFormat::Fiu | TraceFormat::PgbenchHashed | TraceFormat::NbdkitHashlog
        )
    }

    /// Whether zombiesim can write this format (the hashed formats are read only).
    pub fn is_writable(self) -> bool {
        !self.has_values()
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let format = match s.trim().to_ascii_lowercase().as_str() {
            "msr" => TraceFormat::Msr,
            "spc" | "umass" => TraceFormat::Spc,
            "disksim" | "mqsim" | "ssdsim" | "ascii" => TraceFormat::Disksim,
            "fio" | "iolog" => TraceFormat::Fio,
            "blkparse" | "blktrace" => TraceFormat::Blkparse,
            "native" | "bin" => TraceFormat::Native,
            "fiu" | "iodedup" => TraceFormat::Fiu,
            "pgbench-hashed" | "hashed-csv" => TraceFormat::PgbenchHashed,
            "nbdkit-hashlog" | "nbdkit" => TraceFormat::NbdkitHashlog,
            _ => {
                let names: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
                return Err(Error::config(
                    "format",
                    format!(
                        "unknown trace format `{s}` (expected one of {})",
                        names.join(", ")
                    ),
                ));
            }
        };
        Ok(format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &f in TraceFormat::ALL {
            assert_eq!(f.to_string().parse::<TraceFormat>().unwrap(), f);
        }
        assert_eq!(
            "MQSim".parse::<TraceFormat>().unwrap(),
            TraceFormat::Disksim
        );
        let err = "csv".parse::<TraceFormat>().unwrap_err();
        assert!(
            err.to_string().contains("expected one of msr, spc"),
            "{err}"
        );
    }
}
