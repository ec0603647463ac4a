//! `fs:BENCH,key=value,...`: the file-system workload's keys (the model is the `fs` module).

use super::WorkloadSpec;
use crate::error::{Error, Result};
use serde::Serialize;

/// Which blocks go through the journal, and where the journal lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JournalMode {
    /// Metadata journaled; data written whenever the flusher decides.
    Writeback,
    /// Metadata journaled; a transaction's data written before its commit.
    Ordered,
    /// Data and metadata journaled, then written again at home.
    Journal,
    /// Data and metadata journaled in the VMM's memory; only home writes reach the device.
    Vma,
}

impl JournalMode {
    pub const ALL: [JournalMode; 4] = [
        JournalMode::Writeback,
        JournalMode::Ordered,
        JournalMode::Journal,
        JournalMode::Vma,
    ];

    pub fn name(self) -> &'static str {
        match self {
            JournalMode::Writeback => "writeback",
            JournalMode::Ordered => "ordered",
            JournalMode::Journal => "journal",
            JournalMode::Vma => "vma",
        }
    }

    pub fn parse(s: &str) -> Option<JournalMode> {
        JournalMode::ALL.into_iter().find(|m| m.name() == s)
    }

    /// Whether file data is journaled too.
    pub fn journals_data(self) -> bool {
        matches!(self, JournalMode::Journal | JournalMode::Vma)
    }
}

/// The benchmarks of 002 §IV and their parameters (sizes in bytes).
#[derive(Clone, Debug, PartialEq)]
pub enum Bench {
    /// Create one file and append `append` bytes at a time until it holds `size`.
    SeqWrite { size: u64, append: u64 },
    /// `io`-byte random overwrites of a `file`-byte file until `total` bytes are written.
    RndWrite { file: u64, io: u64, total: u64 },
    /// PostMark: `files` files of `min..=max` bytes in `dirs` directories, then
    /// `transactions` of (create or delete) + (read or append), then delete all.
    Postmark {
        files: u64,
        transactions: u64,
        min: u64,
        max: u64,
        dirs: u64,
    },
    /// Extract a source tree: `files` files in `dirs` directories, log-normal sizes
    /// (`median` bytes, `sigma`), written in 10 KiB records, `cpu_us_per_kib` of
    /// decompression per KiB.
    Untar {
        files: u64,
        dirs: u64,
        median: u64,
        sigma: f64,
        cpu_us_per_kib: f64,
    },
    /// Build from an existing tree of `objects` sources and `headers` headers: read a
    /// source and 20 headers, compute `compile_ms`, write the object and its `.cmd`;
    /// link each directory's objects and the image at the end.
    KernelCompile {
        objects: u64,
        headers: u64,
        compile_ms: f64,
    },
}

impl Bench {
    pub const NAMES: [&'static str; 5] = [
        "seq_write",
        "rnd_write",
        "postmark",
        "untar",
        "kernel_compile",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Bench::SeqWrite { .. } => "seq_write",
            Bench::RndWrite { .. } => "rnd_write",
            Bench::Postmark { .. } => "postmark",
            Bench::Untar { .. } => "untar",
            Bench::KernelCompile { .. } => "kernel_compile",
        }
    }
}

/// Every key of an `fs:` workload.
#[derive(Clone, Debug, PartialEq)]
pub struct FsParams {
    pub bench: Bench,
    pub vms: u32,
    pub mode: JournalMode,
    /// Bytes per VM partition (0 = the logical space split evenly).
    pub partition: u64,
    pub block: u64,
    /// Journal bytes (0 = mke2fs's default for the partition).
    pub journal_size: u64,
    pub commit_s: f64,
    /// Page cache per VM (guest memory for buffers), bytes; `None` = not given.
    pub memory: Option<u64>,
    /// `vma`: (address, block) entries the VMM keeps (0 = the journal's blocks).
    pub vma_area: u64,
    pub sync: bool,
    /// fsync the file written every this many operations (0 = never).
    pub fsync: u64,
}

/// Per-VM page cache when `memory` is not given: most of 002's 128 MB guests.
pub const DEFAULT_MEMORY: u64 = 96 << 20;

const MIB: u64 = 1 << 20;

impl FsParams {
    /// The parameters of `spec` (its `bench` key is the positional benchmark name).
    pub fn parse(spec: &WorkloadSpec) -> Result<FsParams> {
        let mut keys = spec.keys();
        let bench_name = keys.take("bench").ok_or_else(|| {
            Error::workload(
                spec.as_str(),
                format!(
                    "name the benchmark: fs:BENCH,... with BENCH one of {}",
                    Bench::NAMES.join(", ")
                ),
            )
        })?;
        let bench = match bench_name.as_str() {
            "seq_write" => Bench::SeqWrite {
                size: keys.bytes("size", 600 * MIB)?,
                append: keys.bytes("append", 8 << 10)?,
            },
            "rnd_write" => Bench::RndWrite {
                file: keys.bytes("file", 512 * MIB)?,
                io: keys.bytes("io", 4 << 10)?,
                total: keys.bytes("total", 128 * MIB)?,
            },
            "postmark" => Bench::Postmark {
                files: keys.integer("files", 2000)?,
                transactions: keys.integer("transactions", 20_000)?,
                min: keys.bytes("min", 512)?,
                max: keys.bytes("max", 16 << 10)?,
                dirs: keys.integer("dirs", 10)?,
            },
            "untar" => Bench::Untar {
                files: keys.integer("files", 25_000)?,
                dirs: keys.integer("dirs", 1_500)?,
                median: keys.bytes("median", 3584)?,
                sigma: keys.number("sigma", 1.4)?,
                cpu_us_per_kib: keys.number("cpu", 50.0)?,
            },
            "kernel_compile" => Bench::KernelCompile {
                objects: keys.integer("objects", 1_500)?,
                headers: keys.integer("headers", 2_000)?,
                compile_ms: keys.number("compile_ms", 40.0)?,
            },
            other => {
                return Err(Error::workload(
                    spec.as_str(),
                    format!(
                        "unknown file-system benchmark `{other}` (known: {})",
                        Bench::NAMES.join(", ")
                    ),
                ))
            }
        };
        let mode_text = keys.take("journal").unwrap_or_else(|| "ordered".into());
        let mode = JournalMode::parse(&mode_text)
            .ok_or_else(|| keys.bad("journal", &mode_text, "writeback, ordered, journal or vma"))?;
        let vms = keys.integer("vms", 8)?;
        let p = FsParams {
            bench,
            vms: vms.clamp(0, 4096) as u32,
            mode,
            partition: keys.bytes("partition", 0)?,
            block: keys.bytes("block", 4096)?,
            journal_size: keys.bytes("journal_size", 0)?,
            commit_s: keys.number("commit", 5.0)?,
            memory: match keys.take("memory") {
                None => None,
                Some(v) => Some(
                    crate::units::parse_bytes(&v)
                        .map_err(|e| keys.bad("memory", &v, &format!("a size ({e})")))?,
                ),
            },
            vma_area: keys.integer("vma_area", 0)?,
            sync: keys.boolean("sync", true)?,
            fsync: keys.integer("fsync", 0)?,
        };
        keys.finish()?;
        p.check(spec)?;
        if !(1..=4096).contains(&vms) {
            return Err(Error::workload(
                spec.as_str(),
                format!("vms = {vms}: expected 1 to 4096"),
            ));
        }
        Ok(p)
    }

    fn check(&self, spec: &WorkloadSpec) -> Result<()> {
        let bad =
            |key: &str, why: String| Err(Error::workload(spec.as_str(), format!("{key}: {why}")));
        if !self.block.is_power_of_two() || !(1024..=65_536).contains(&self.block) {
            return bad(
                "block",
                format!(
                    "{} B is not a power of two from 1 KiB to 64 KiB",
                    self.block
                ),
            );
        }
        if !(self.commit_s.is_finite() && self.commit_s > 0.0) {
            return bad(
                "commit",
                format!("{} s: expected a positive interval", self.commit_s),
            );
        }
        let positive = |key: &str, v: u64| -> Result<()> {
            if v == 0 {
                return Err(Error::workload(
                    spec.as_str(),
                    format!("{key}: must be positive"),
                ));
            }
            Ok(())
        };
        match &self.bench {
            Bench::SeqWrite { size, append } => {
                positive("size", *size)?;
                positive("append", *append)?;
            }
            Bench::RndWrite { file, io, total } => {
                positive("file", *file)?;
                positive("io", *io)?;
                positive("total", *total)?;
                if io > file {
                    return bad("io", format!("{io} B is larger than the file ({file} B)"));
                }
            }
            Bench::Postmark {
                min,
                max,
                dirs,
                files,
                ..
            } => {
                positive("files", *files)?;
                positive("dirs", *dirs)?;
                positive("min", *min)?;
                if min > max {
                    return bad("min", format!("{min} B is above max ({max} B)"));
                }
            }
            Bench::Untar {
                files,
                dirs,
                sigma,
                cpu_us_per_kib,
                median,
            } => {
                positive("files", *files)?;
                positive("dirs", *dirs)?;
                positive("median", *median)?;
                if !(sigma.is_finite() && *sigma >= 0.0 && *sigma <= 4.0) {
                    return bad("sigma", format!("{sigma}: expected 0 to 4"));
                }
                if !(cpu_us_per_kib.is_finite() && *cpu_us_per_kib >= 0.0) {
                    return bad(
                        "cpu",
                        format!("{cpu_us_per_kib}: expected µs per KiB, 0 or more"),
                    );
                }
            }
            Bench::KernelCompile {
                objects,
                headers,
                compile_ms,
            } => {
                positive("objects", *objects)?;
                positive("headers", *headers)?;
                if !(compile_ms.is_finite() && *compile_ms >= 0.0) {
                    return bad(
                        "compile_ms",
                        format!("{compile_ms}: expected ms, 0 or more"),
                    );
                }
            }
        }
        Ok(())
    }
}
