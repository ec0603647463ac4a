//! How much memory a run's state will take, known from the configuration alone, so a
//! device too large for the machine is refused before anything is allocated.
//!
//! ```text
//!  flash state   physical pages × 4⅛ B (owner, valid bit) + blocks × 42 B
//!  mapping       logical pages × 4 B (+1 B region, +⅛ B zombie bit)
//!  host cache    cache pages × 9 B + logical pages × 4 B (slot index)
//!  write buffer  buffer pages × 45 B (slots, recency list, hash map)
//!  DFTL's CMT    min(ftl.cmt_entries, logical pages) × 56 B (slots, links, hash map)
//!  FAST's logs   logical pages × 4 B (where each page's log copy is)
//!  content       physical pages × 40 B + pool entries × 64 B
//!                (+ logical pages × 8 B: cached pages' values, with the host model)
//!  oracle        (logical + physical) pages × 8 B        (--verify only)
//! ```
//!
//! The figures are the sizes of the arrays the simulator allocates, rounded up; the
//! estimate is an upper bound of `device.state_bytes` within a factor of two (a test
//! holds it to that). Memory that grows with the input (a `compact` remap of a sparse
//! trace, statistics of distinct pages) is not included.

use super::Config;
use super::Geometry;
use crate::error::{Error, Result};

/// One part of the estimate, with the config key that sizes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryPart {
    pub what: &'static str,
    pub key: &'static str,
    pub bytes: u64,
}

/// The estimated state of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryEstimate {
    pub parts: Vec<MemoryPart>,
}

impl MemoryEstimate {
    /// Estimate the state a run of `cfg` holds (`verify`: with the integrity oracle).
    /// The geometry must be valid (`Config::validate` first).
    pub fn new(cfg: &Config, verify: bool) -> Result<MemoryEstimate> {
        let geo = Geometry::new(cfg)?;
        let physical = geo.physical_pages as f64;
        let logical = geo.logical_pages as f64;
        let blocks = geo.blocks as f64;
        let mut parts = vec![MemoryPart {
            what: "flash state and mapping",
            key: "flash.blocks_per_plane",
            bytes: (physical * 4.125
                + blocks * 42.0
                + logical * (4.0 + f64::from(u8::from(cfg.ftl.regions > 1)) + 0.125))
                .ceil() as u64,
        }];
        // The kind's own state (its registry entry's).
        parts.extend((cfg.ftl.kind.spec().memory)(cfg, &geo));
        if cfg.host.enabled() {
            let cache_pages = cfg.host.cache.bytes() as f64 / geo.page_size as f64;
            parts.push(MemoryPart {
                what: "host page cache",
                key: "host.cache",
                bytes: (cache_pages * 9.0 + logical * 4.0).ceil() as u64,
            });
        }
        let buffer_pages = cfg.device.buffer_pages(geo.page_size);
        if buffer_pages > 0 {
            parts.push(MemoryPart {
                what: "device write buffer",
                key: "device.buffer",
                bytes: buffer_pages * 45,
            });
        }
        if cfg.content.enabled() {
            if cfg.host.enabled() {
                // The value of every cached page the host writes back.
                parts.push(MemoryPart {
                    what: "host page values",
                    key: "host.cache",
                    bytes: (logical * 8.0).ceil() as u64,
                });
            }
            parts.push(MemoryPart {
                what: "content layer",
                key: "content.pool_entries",
                bytes: (physical * 40.0 + cfg.content.pool_entries as f64 * 64.0).ceil() as u64,
            });
        }
        if verify {
            parts.push(MemoryPart {
                what: "integrity oracle",
                key: "--verify",
                bytes: ((logical + physical) * 8.0).ceil() as u64,
            });
        }
        Ok(MemoryEstimate { parts })
    }

    /// Bytes in all.
    pub fn total(&self) -> u64 {
        self.parts.iter().map(|p| p.bytes).sum()
    }

    /// The largest part (what to shrink first).
    pub fn largest(&self) -> &MemoryPart {
        self.parts
            .iter()
            .max_by_key(|p| p.bytes)
            .expect("the flash state is always there")
    }

    /// Refuse the run when the estimate exceeds `limit` bytes, naming the key of the
    /// largest part. `limit_source` says where the limit came from.
    pub fn check(&self, limit: u64, limit_source: &str) -> Result<()> {
        let total = self.total();
        if total <= limit {
            return Ok(());
        }
        let big = self.largest();
        let parts = self
            .parts
            .iter()
            .map(|p| format!("{} {}", p.what, gib(p.bytes)))
            .collect::<Vec<_>>()
            .join(", ");
        Err(Error::config(
            big.key,
            format!(
                "this run needs about {} of memory ({parts}), more than {} ({limit_source}); \
                 make the {} smaller (`{}`) or raise the limit with --max-memory",
                gib(total),
                gib(limit),
                big.what,
                big.key
            ),
        ))
    }
}

/// `1.50 GiB`, `320.0 MiB`.
pub fn gib(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.2} GiB", b / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    }
}

/// Memory the operating system says is available for new allocations (Linux
/// `MemAvailable`), `None` where it cannot be read.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_device_is_refused_naming_the_key() {
        let mut cfg = Config::default();
        cfg.flash.blocks_per_plane = 1_000_000;
        let est = MemoryEstimate::new(&cfg, false);
        let err = match est {
            Ok(e) => e.check(1 << 30, "test limit").unwrap_err(),
            Err(e) => e,
        };
        assert!(
            matches!(err, Error::Config { ref key, .. } if key == "flash.blocks_per_plane"),
            "{err}"
        );
    }

    #[test]
    fn the_default_device_fits() {
        let est = MemoryEstimate::new(&Config::default(), true).unwrap();
        assert!(est.total() < 64 << 20, "{}", gib(est.total()));
        est.check(1 << 30, "test").unwrap();
        assert_eq!(est.parts.len(), 2);
    }
}
