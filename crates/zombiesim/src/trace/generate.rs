//! A synthetic notified trace: a hot/cold write stream behind a write-back buffer, with
//! the buffer's dirty events, for tests, benchmarks and examples of notified replay.
//!
//! ```text
//!   step k: pick a page (hot set with probability `hot_share`, else cold), uniform in it
//!           ├─ clean? dirty(page) now; its write-back is due at step k + delay
//!           └─ dirty already? absorbed (no event: the buffer holds it dirty)
//!           then every write-back due by step k is written, oldest first
//!   step k is at time k × step_ns; a read of a random page every `read_every` steps
//! ```
//!
//! Each page's flash copy is a zombie from its dirty event until its write: `delay`
//! steps, so an ideal channel knows every overwrite in advance. `unannounced` is the
//! share of writes that come with no dirty event at all (direct I/O, a buffer the host
//! did not report). With `placement`, each write carries an NVMe placement identifier
//! saying which set its page is in (hot 1, cold 0: a host that separates lifetimes
//! perfectly; a version-3 trace). The stream is generated and written record by record,
//! in time order (memory: the pages waiting for write-back, at most `delay`).

use super::native::NativeHeader;
use super::record::{HostBuffer, TraceOp, TraceRecord};
use super::writer::TraceWriter;
use crate::error::{Error, Result};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::Write;

/// What [`generate_notified`] writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifiedSpec {
    /// Logical pages addressed (4 KiB each).
    pub pages: u64,
    /// Records to write (dirty events, writes and reads together).
    pub records: u64,
    /// Share of the pages that are hot.
    pub hot_pages: f64,
    /// Share of the picks that go to the hot pages.
    pub hot_share: f64,
    /// Steps between a page's dirty event and its write-back.
    pub delay: u64,
    /// Share of writes with no dirty event before them.
    pub unannounced: f64,
    /// A read every this many steps (0: none).
    pub read_every: u64,
    /// Nanoseconds per step.
    pub step_ns: u64,
    pub seed: u64,
    /// Writes carry a placement identifier: 1 for a hot page, 0 for a cold one.
    pub placement: bool,
}

impl Default for NotifiedSpec {
    fn default() -> Self {
        NotifiedSpec {
            pages: 16_384,
            records: 100_000,
            hot_pages: 0.2,
            hot_share: 0.8,
            delay: 256,
            unannounced: 0.0,
            read_every: 0,
            step_ns: 10_000,
            seed: 1,
            placement: false,
        }
    }
}

impl NotifiedSpec {
    fn validate(&self) -> Result<()> {
        let bad = |key: &str, why: &str| Err(Error::config(key, why.to_string()));
        if self.pages == 0 {
            return bad("pages", "must be at least 1");
        }
        for (key, v) in [
            ("hot_pages", self.hot_pages),
            ("hot_share", self.hot_share),
            ("unannounced", self.unannounced),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return bad(key, "must be between 0 and 1");
            }
        }
        if self.step_ns == 0 {
            return bad("step_ns", "must be at least 1");
        }
        Ok(())
    }
}

/// Writes the trace `spec` describes to `w` (a native writer); returns the records
/// written.
pub fn generate_notified<W: Write>(spec: &NotifiedSpec, w: TraceWriter<W>) -> Result<(u64, W)> {
    spec.validate()?;
    let header = NativeHeader::new(true, false).with_placement(spec.placement);
    let mut w = w.declare(header)?;
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    let hot = ((spec.pages as f64 * spec.hot_pages) as u64).clamp(1, spec.pages);
    let mut dirty = vec![false; spec.pages as usize];
    let mut due: VecDeque<(u64, u64)> = VecDeque::new();
    let rec = |t: u64, op: TraceOp, page: u64| TraceRecord {
        time_ns: t,
        op,
        offset: page * 4096,
        size: 4096,
        device: HostBuffer::PageCache.id(),
        placement: None,
    };
    let mut n = 0u64;
    let mut step = 0u64;
    while n < spec.records {
        let t = step * spec.step_ns;
        let page = if hot == spec.pages || rng.random::<f64>() < spec.hot_share {
            rng.random_range(0..hot)
        } else {
            rng.random_range(hot..spec.pages)
        };
        if !dirty[page as usize] {
            dirty[page as usize] = true;
            if rng.random::<f64>() >= spec.unannounced {
                w.write(&rec(t, TraceOp::Dirty, page))?;
                n += 1;
            }
            due.push_back((step + spec.delay, page));
        }
        while n < spec.records && due.front().is_some_and(|&(s, _)| s <= step) {
            let (_, p) = due.pop_front().expect("a due page");
            dirty[p as usize] = false;
            w.write(&TraceRecord {
                device: 0,
                placement: spec.placement.then_some(u16::from(p < hot)),
                ..rec(t, TraceOp::Write, p)
            })?;
            n += 1;
        }
        if spec.read_every > 0 && step.is_multiple_of(spec.read_every) && n < spec.records {
            let p = rng.random_range(0..spec.pages);
            w.write(&TraceRecord {
                device: 0,
                ..rec(t, TraceOp::Read, p)
            })?;
            n += 1;
        }
        step += 1;
    }
    let out = w.finish()?;
    Ok((n, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{ReadOptions, TraceFormat, TraceReader};

    #[test]
    fn every_write_is_announced_delay_steps_before() {
        let spec = NotifiedSpec {
            pages: 64,
            records: 2_000,
            delay: 5,
            ..NotifiedSpec::default()
        };
        let (n, bytes) =
            generate_notified(&spec, TraceWriter::new(TraceFormat::Native, Vec::new())).unwrap();
        assert_eq!(n, 2_000);
        let input = Box::new(std::io::Cursor::new(bytes));
        let mut r =
            TraceReader::from_reader("mem", input, TraceFormat::Native, &ReadOptions::default())
                .unwrap();
        assert!(r.native_header().unwrap().unwrap().host_events);
        let mut dirty_at = std::collections::HashMap::new();
        let (mut writes, mut events) = (0, 0);
        for rec in r {
            let rec = rec.unwrap();
            let page = rec.offset / 4096;
            match rec.op {
                TraceOp::Dirty => {
                    events += 1;
                    assert!(dirty_at.insert(page, rec.time_ns).is_none());
                }
                TraceOp::Write => {
                    writes += 1;
                    let t = dirty_at.remove(&page).expect("announced");
                    assert_eq!(rec.time_ns - t, 5 * spec.step_ns);
                }
                op => panic!("{op}"),
            }
        }
        assert!(writes > 900 && events > 900, "{writes} {events}");
    }

    #[test]
    fn with_placement_each_write_names_its_pages_set() {
        let spec = NotifiedSpec {
            pages: 100,
            records: 3_000,
            hot_pages: 0.2,
            placement: true,
            ..NotifiedSpec::default()
        };
        let (_, bytes) =
            generate_notified(&spec, TraceWriter::new(TraceFormat::Native, Vec::new())).unwrap();
        let input = Box::new(std::io::Cursor::new(bytes));
        let r =
            TraceReader::from_reader("mem", input, TraceFormat::Native, &ReadOptions::default())
                .unwrap();
        let (mut hot, mut cold) = (0, 0);
        for rec in r {
            let rec = rec.unwrap();
            let page = rec.offset / 4096;
            match rec.op {
                TraceOp::Write => {
                    let id = rec.placement.expect("every write names its set");
                    assert_eq!(id, u16::from(page < 20), "page {page}");
                    hot += usize::from(id == 1);
                    cold += usize::from(id == 0);
                }
                _ => assert_eq!(rec.placement, None),
            }
        }
        // Both sets are written (the buffer absorbs most hot picks, so the counts say
        // nothing more).
        assert!(hot > 0 && cold > 0, "{hot} {cold}");
    }
}
