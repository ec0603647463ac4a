//! [`Remapper`]: fits the byte addresses of a trace onto a device's logical space.
//!
//! Real traces address volumes larger than a simulated device, and often touch only a
//! sparse few gigabytes of them. Requests are cut into pages of `page_size` bytes (a
//! request touches every page it overlaps) and mapped, by mode:
//!
//! - `none`: pages are used as they are; a request reaching beyond the device's
//!   `logical_bytes / page_size` pages is an error naming the record.
//! - `modulo`: page numbers wrap around the logical space (the byte offset modulo the
//!   logical space, aligned down to a page). A request that runs past the end continues
//!   at page 0, so it comes back as two runs. A request longer than the whole device is
//!   an error.
//! - `compact`: every distinct page gets the next free logical page in first-seen order
//!   (first seen by a read or write: a host event's or a trim's pages that no request has
//!   touched yet are skipped, so the mapping is the same with or without a trace's host
//!   events, and a trim, which frees, never takes a page),
//!   so a sparse trace becomes dense from page 0, and contiguity is kept where the
//!   first touches were contiguous. Running out of logical pages is an error. Memory is
//!   proportional to the distinct pages.
//!
//! [`Remapper::map`] returns the request's runs of consecutive logical pages; a flush
//! (or any zero-length request) has none. [`RemapStats`] counts what moved.

use super::record::{TraceOp, TraceRecord};
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// How trace addresses are fitted onto the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RemapMode {
    /// Keep addresses; beyond the device is an error.
    #[default]
    None,
    /// Wrap page numbers modulo the logical space.
    Modulo,
    /// Renumber distinct pages densely in first-seen order.
    Compact,
}

impl RemapMode {
    pub const ALL: [RemapMode; 3] = [RemapMode::None, RemapMode::Modulo, RemapMode::Compact];

    pub fn name(self) -> &'static str {
        match self {
            RemapMode::None => "none",
            RemapMode::Modulo => "modulo",
            RemapMode::Compact => "compact",
        }
    }
}

impl fmt::Display for RemapMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RemapMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(RemapMode::None),
            "modulo" | "mod" => Ok(RemapMode::Modulo),
            "compact" => Ok(RemapMode::Compact),
            _ => Err(Error::config(
                "remap",
                format!("expected none, modulo or compact, found `{s}`"),
            )),
        }
    }
}

/// `count` consecutive logical pages from `page`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PageRun {
    pub page: u64,
    pub count: u64,
}

/// What the remapper did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RemapStats {
    /// Requests mapped (flushes included).
    pub requests: u64,
    /// Requests with at least one page whose number changed.
    pub remapped_requests: u64,
    /// Pages mapped (a page touched twice counts twice).
    pub pages: u64,
    /// Pages whose number changed.
    pub remapped_pages: u64,
    /// Distinct pages seen (`compact` only; 0 in the other modes).
    pub distinct_pages: u64,
    /// Host-event pages skipped by `compact` because no request had touched them yet
    /// (they have no flash copy to be a zombie, and must not take a logical page the
    /// requests would otherwise get: the remapping depends on the requests alone).
    #[serde(skip_serializing_if = "is_zero")]
    pub unmapped_event_pages: u64,
    /// Trimmed pages skipped by `compact` because no request had written or read them:
    /// they hold nothing to free, and a trim takes no logical page (an `fstrim` trims
    /// every free block of the file system, most of which the trace never touched).
    #[serde(skip_serializing_if = "is_zero")]
    pub unmapped_trim_pages: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Maps trace requests onto `logical_bytes / page_size` logical pages.
#[derive(Debug)]
pub struct Remapper {
    mode: RemapMode,
    page_size: u64,
    /// `page_size`'s power of two, when it is one (pages then found by shifting).
    page_shift: Option<u32>,
    logical_pages: u64,
    table: HashMap<u64, u64>,
    runs: Vec<PageRun>,
    stats: RemapStats,
}

impl Remapper {
    /// A remapper for a device of `logical_bytes` in pages of `page_size` bytes.
    pub fn new(mode: RemapMode, logical_bytes: u64, page_size: u64) -> Result<Remapper> {
        if page_size == 0 {
            return Err(Error::config("page_size", "must be at least 1 byte"));
        }
        let logical_pages = logical_bytes / page_size;
        if logical_pages == 0 {
            return Err(Error::config(
                "logical_bytes",
                format!("{logical_bytes} bytes hold no page of {page_size} bytes"),
            ));
        }
        Ok(Remapper {
            mode,
            page_size,
            page_shift: page_size
                .is_power_of_two()
                .then(|| page_size.trailing_zeros()),
            logical_pages,
            table: HashMap::new(),
            runs: Vec::with_capacity(4),
            stats: RemapStats::default(),
        })
    }

    pub fn mode(&self) -> RemapMode {
        self.mode
    }

    pub fn page_size(&self) -> u64 {
        self.page_size
    }

    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    pub fn stats(&self) -> RemapStats {
        self.stats
    }

    fn error(&self, record_no: u64, rec: &TraceRecord, why: String) -> Error {
        Error::workload(
            format!("remap={}", self.mode),
            format!("record {record_no} ({rec}) {why}"),
        )
    }

    /// The runs of logical pages record number `record_no` (used in errors) maps to.
    /// The slice is valid until the next call.
    pub fn map(&mut self, record_no: u64, rec: &TraceRecord) -> Result<&[PageRun]> {
        self.runs.clear();
        self.stats.requests += 1;
        let (first, count) = match self.page_shift {
            Some(shift) => rec.pages_shifted(shift),
            None => rec.pages(self.page_size),
        };
        if count == 0 {
            return Ok(&self.runs);
        }
        let lp = self.logical_pages;
        let mut moved = 0;
        match self.mode {
            RemapMode::None => {
                if first >= lp || count > lp - first {
                    let end = rec.offset.saturating_add(rec.size);
                    return Err(self.error(
                        record_no,
                        rec,
                        format!(
                            "ends at byte {end}, beyond the device's {} logical bytes \
                             ({lp} pages of {} bytes); use remap=modulo or remap=compact",
                            lp * self.page_size,
                            self.page_size
                        ),
                    ));
                }
                self.runs.push(PageRun { page: first, count });
            }
            RemapMode::Modulo => {
                if count > lp {
                    return Err(self.error(
                        record_no,
                        rec,
                        format!("spans {count} pages, more than the device's {lp} logical pages"),
                    ));
                }
                let start = first % lp;
                if start != first {
                    moved = count;
                }
                let head = count.min(lp - start);
                self.runs.push(PageRun {
                    page: start,
                    count: head,
                });
                if head < count {
                    if start == first {
                        moved = count - head;
                    }
                    self.runs.push(PageRun {
                        page: 0,
                        count: count - head,
                    });
                }
            }
            RemapMode::Compact => {
                for page in first..first + count {
                    let next = self.table.len() as u64;
                    let mapped = match self.table.get(&page) {
                        Some(&m) => m,
                        None if rec.op.is_host_event() => {
                            self.stats.unmapped_event_pages += 1;
                            continue;
                        }
                        None if rec.op == TraceOp::Trim => {
                            self.stats.unmapped_trim_pages += 1;
                            continue;
                        }
                        None => {
                            if next >= lp {
                                return Err(self.error(
                                    record_no,
                                    rec,
                                    format!(
                                        "touches a new page after all {lp} logical pages of the \
                                         device were taken (compact remap)"
                                    ),
                                ));
                            }
                            self.table.insert(page, next);
                            next
                        }
                    };
                    if mapped != page {
                        moved += 1;
                    }
                    match self.runs.last_mut() {
                        Some(run) if run.page + run.count == mapped => run.count += 1,
                        _ => self.runs.push(PageRun {
                            page: mapped,
                            count: 1,
                        }),
                    }
                }
                self.stats.distinct_pages = self.table.len() as u64;
            }
        }
        self.stats.pages += count;
        self.stats.remapped_pages += moved;
        if moved > 0 {
            self.stats.remapped_requests += 1;
        }
        Ok(&self.runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceOp;

    fn write(offset: u64, size: u64) -> TraceRecord {
        TraceRecord {
            time_ns: 0,
            op: TraceOp::Write,
            offset,
            size,
            device: 0,
            placement: None,
        }
    }

    fn run(page: u64, count: u64) -> PageRun {
        PageRun { page, count }
    }

    #[test]
    fn compact_skips_the_trimmed_pages_no_request_touched() {
        let mut r = Remapper::new(RemapMode::Compact, 4 * 4096, 4096).unwrap();
        assert_eq!(r.map(1, &write(100 * 4096, 8192)).unwrap(), &[run(0, 2)]);
        // An fstrim of a range far larger than the device: only the written pages map.
        let trim = TraceRecord {
            op: TraceOp::Trim,
            ..write(0, 1 << 30)
        };
        assert_eq!(r.map(2, &trim).unwrap(), &[run(0, 2)]);
        assert_eq!(r.stats().unmapped_trim_pages, (1 << 30) / 4096 - 2);
        // Trims took no page: the device still has room for two new ones.
        assert_eq!(r.map(3, &write(7 * 4096, 8192)).unwrap(), &[run(2, 2)]);
    }

    #[test]
    fn none_keeps_addresses_and_refuses_beyond_the_device() {
        let mut r = Remapper::new(RemapMode::None, 10 * 4096, 4096).unwrap();
        assert_eq!(r.map(1, &write(4096, 8192)).unwrap(), &[run(1, 2)]);
        assert_eq!(r.map(2, &write(9 * 4096, 4096)).unwrap(), &[run(9, 1)]);
        let err = r.map(3, &write(9 * 4096, 4097)).unwrap_err();
        assert!(
            err.to_string().contains("record 3 (write of 4097 bytes"),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("beyond the device's 40960 logical bytes"),
            "{err}"
        );
        assert_eq!(r.stats().remapped_requests, 0);
    }

    #[test]
    fn modulo_wraps() {
        let mut r = Remapper::new(RemapMode::Modulo, 10 * 4096, 4096).unwrap();
        assert_eq!(
            r.map(1, &write(12 * 4096 + 100, 4096)).unwrap(),
            &[run(2, 2)]
        );
        assert_eq!(
            r.map(2, &write(8 * 4096, 4 * 4096)).unwrap(),
            &[run(8, 2), run(0, 2)]
        );
        assert_eq!(r.map(3, &write(0, 4096)).unwrap(), &[run(0, 1)]);
        assert!(r.map(4, &write(0, 11 * 4096)).is_err());
        let s = r.stats();
        assert_eq!(
            (s.requests, s.remapped_requests, s.pages, s.remapped_pages),
            (4, 2, 7, 4)
        );
    }

    #[test]
    fn compact_renumbers_first_seen() {
        let mut r = Remapper::new(RemapMode::Compact, 4 * 4096, 4096).unwrap();
        assert_eq!(r.map(1, &write(1 << 40, 8192)).unwrap(), &[run(0, 2)]);
        assert_eq!(r.map(2, &write(5 << 30, 4096)).unwrap(), &[run(2, 1)]);
        // Pages already seen keep their numbers; a new one in the middle splits the run.
        assert_eq!(
            r.map(3, &write((1 << 40) + 4096, 8192)).unwrap(),
            &[run(1, 1), run(3, 1)]
        );
        let flush = TraceRecord {
            op: TraceOp::Flush,
            size: 0,
            offset: 0,
            ..write(0, 0)
        };
        assert!(r.map(4, &flush).unwrap().is_empty());
        let err = r.map(5, &write(0, 1)).unwrap_err();
        assert!(err.to_string().contains("record 5"), "{err}");
        assert_eq!(r.stats().distinct_pages, 4);
        assert_eq!(r.stats().requests, 5);
    }

    #[test]
    fn modes_parse() {
        for m in RemapMode::ALL {
            assert_eq!(m.to_string().parse::<RemapMode>().unwrap(), m);
        }
        assert!("sparse".parse::<RemapMode>().is_err());
    }
}
