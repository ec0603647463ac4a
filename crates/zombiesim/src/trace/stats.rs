//! [`TraceStats`]: what a trace does, in one pass — counts and bytes per operation,
//! duration, footprint, request sizes, inter-arrival times and how skewed the writes are.
//!
//! - Footprint: the distinct pages of `page_size` bytes that reads, writes and trims
//!   touch (a request touches every page it overlaps), and of those the ones written.
//!   Pages are kept as runs of consecutive pages with equal write counts
//!   ([`PageRuns`]): memory grows with the number of distinct runs (at most about two
//!   per record), never with the pages one record claims to span.
//! - Request sizes: a histogram over power-of-two buckets; the bucket `le_bytes = 2^k`
//!   counts sizes in (2^(k-1), 2^k] (`le_bytes = 0` counts zero-length reads, writes and
//!   trims). Flushes are not counted.
//! - Inter-arrival times: between consecutive records in file order (a record earlier than
//!   the previous one counts as 0). The mean is exact; the median and 99th percentile come
//!   from a log-linear histogram with 16 sub-buckets per power of two — exact below 32 ns,
//!   otherwise the bucket's midpoint, within 1/32 (3.2 %) of the true value — in constant
//!   memory.
//! - Write skew: the number of page writes each written page received (a 16 KiB write is
//!   one write to each of four 4 KiB pages). `hottest_1pct` is the share of all page
//!   writes that went to the hottest 1 % of written pages (at least one page), and so on
//!   for 10, 20 and 50 %: points on the Lorenz curve. `gini` is the Gini coefficient of
//!   the per-page write counts: 0 when every written page is written equally often,
//!   towards 1 when a few pages take nearly all writes.
//! - Placement identifiers (native version 3): how many writes carry one and the distinct
//!   identifiers ([`PlacementStats`]); absent when no write carries one.

use super::footprint::PageRuns;
use super::host_events::{HostEventCounter, HostEventStats};
use super::placement::{PlacementCounter, PlacementStats};
use super::record::{TraceOp, TraceRecord};
use crate::error::{Error, Result};
use serde::Serialize;

/// Count and bytes of one kind of request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpStats {
    pub count: u64,
    pub bytes: u64,
}

/// One request-size bucket: sizes in (`le_bytes` / 2, `le_bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    pub le_bytes: u64,
    pub count: u64,
}

/// Inter-arrival times, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct InterArrival {
    /// Gaps measured (records − 1).
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// How unevenly writes fall on the written pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct WriteSkew {
    /// Page writes in total (each page of each write counts once).
    pub page_writes: u64,
    pub hottest_1pct: f64,
    pub hottest_10pct: f64,
    pub hottest_20pct: f64,
    pub hottest_50pct: f64,
    pub gini: f64,
}

/// A summary of one trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceStats {
    pub records: u64,
    pub page_size: u64,
    pub reads: OpStats,
    pub writes: OpStats,
    pub trims: OpStats,
    pub flushes: u64,
    /// Latest record time minus earliest, in seconds.
    pub duration_s: f64,
    /// Distinct pages read, written or trimmed.
    pub unique_pages: u64,
    /// `unique_pages × page_size`.
    pub footprint_bytes: u64,
    /// Distinct pages written.
    pub written_pages: u64,
    /// `written_pages × page_size`.
    pub written_footprint_bytes: u64,
    /// Non-empty power-of-two request-size buckets, smallest first.
    pub size_histogram: Vec<SizeBucket>,
    pub interarrival: InterArrival,
    pub write_skew: WriteSkew,
    /// Host events of a notified trace (dirty, clean): zombie lifetimes and the
    /// awareness an ideal channel reaches. Absent for plain block traces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_events: Option<HostEventStats>,
    /// The NVMe placement identifiers writes carry (native version 3). Absent when no
    /// write carries one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementStats>,
}

/// Sub-buckets per power of two in the inter-arrival histogram (2^4).
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
const LOG_BUCKETS: usize = ((64 - SUB_BITS as usize) * SUB as usize) + 2 * SUB as usize;

/// Bucket of `v` in the log-linear histogram.
fn log_bucket(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - SUB_BITS;
    (shift as usize) * SUB as usize + (v >> shift) as usize
}

/// Midpoint of bucket `i` (exact for the first 32).
fn log_bucket_value(i: usize) -> u64 {
    if i < 2 * SUB as usize {
        return i as u64;
    }
    let shift = (i / SUB as usize - 1) as u32;
    let m = (i % SUB as usize) as u64 + SUB;
    let low = m << shift;
    low + ((1u64 << shift) - 1) / 2
}

impl TraceStats {
    /// Reads every record (the first error stops it) and summarizes them.
    pub fn compute<I>(records: I, page_size: u64) -> Result<TraceStats>
    where
        I: IntoIterator<Item = Result<TraceRecord>>,
    {
        if page_size == 0 {
            return Err(Error::config("page_size", "must be at least 1 byte"));
        }
        let mut s = TraceStats {
            records: 0,
            page_size,
            reads: OpStats::default(),
            writes: OpStats::default(),
            trims: OpStats::default(),
            flushes: 0,
            duration_s: 0.0,
            unique_pages: 0,
            footprint_bytes: 0,
            written_pages: 0,
            written_footprint_bytes: 0,
            size_histogram: Vec::new(),
            interarrival: InterArrival::default(),
            write_skew: WriteSkew::default(),
            host_events: None,
            placement: None,
        };
        let mut pages = PageRuns::new();
        let mut sizes = [0u64; 66];
        let mut gaps = vec![0u64; LOG_BUCKETS];
        let mut gap_sum: u128 = 0;
        let (mut t_min, mut t_max) = (u64::MAX, 0u64);
        let mut prev: Option<u64> = None;
        let mut events = HostEventCounter::new();
        let mut placement = PlacementCounter::new();
        for rec in records {
            let rec = rec?;
            s.records += 1;
            t_min = t_min.min(rec.time_ns);
            t_max = t_max.max(rec.time_ns);
            if let Some(p) = prev {
                let gap = rec.time_ns.saturating_sub(p);
                gaps[log_bucket(gap)] += 1;
                gap_sum += u128::from(gap);
                s.interarrival.count += 1;
                s.interarrival.max_ns = s.interarrival.max_ns.max(gap);
            }
            prev = Some(rec.time_ns);
            if rec.op != TraceOp::Flush {
                let (first, count) = rec.pages(page_size);
                events.record(&rec, first, count);
            }
            let op = match rec.op {
                TraceOp::Read => &mut s.reads,
                TraceOp::Write => &mut s.writes,
                TraceOp::Trim => &mut s.trims,
                TraceOp::Flush => {
                    s.flushes += 1;
                    continue;
                }
                // Counted in `host_events`.
                TraceOp::Dirty | TraceOp::Clean => continue,
            };
            op.count += 1;
            op.bytes = op.bytes.saturating_add(rec.size);
            placement.record(rec.placement);
            let bucket = match rec.size {
                0 => 0,
                n => 1 + n.next_power_of_two().trailing_zeros() as usize,
            };
            sizes[bucket.min(65)] += 1;
            let (first, count) = rec.pages(page_size);
            pages.touch(first, count, rec.op == TraceOp::Write);
        }
        s.host_events = events.finish();
        s.placement = placement.stats();
        if s.records > 0 {
            s.duration_s = (t_max - t_min) as f64 / 1e9;
        }
        s.size_histogram = sizes
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &count)| SizeBucket {
                le_bytes: if i == 0 { 0 } else { 1u64 << (i - 1).min(63) },
                count,
            })
            .collect();
        let ia = &mut s.interarrival;
        if ia.count > 0 {
            ia.mean_ns = gap_sum as f64 / ia.count as f64;
            let quantile = |q: f64| {
                let rank = ((q * ia.count as f64).ceil() as u64).max(1);
                let mut seen = 0;
                for (i, &n) in gaps.iter().enumerate() {
                    seen += n;
                    if seen >= rank {
                        return log_bucket_value(i).min(ia.max_ns);
                    }
                }
                ia.max_ns
            };
            ia.p50_ns = quantile(0.50);
            ia.p99_ns = quantile(0.99);
        }
        s.unique_pages = pages.pages();
        s.footprint_bytes = s.unique_pages.saturating_mul(page_size);
        let mut written = pages.written();
        s.written_pages = written.iter().map(|&(_, n)| n).sum();
        s.written_footprint_bytes = s.written_pages.saturating_mul(page_size);
        s.write_skew = skew(&mut written);
        Ok(s)
    }
}

/// Lorenz points and Gini coefficient of per-page write counts, given as
/// `(writes, pages)` runs (every page of a run has that many writes).
fn skew(runs: &mut [(u32, u64)]) -> WriteSkew {
    let n: u64 = runs.iter().map(|&(_, len)| len).sum();
    let total: u128 = runs
        .iter()
        .map(|&(c, len)| u128::from(c) * u128::from(len))
        .sum();
    if n == 0 || total == 0 {
        return WriteSkew::default();
    }
    runs.sort_unstable_by_key(|r| std::cmp::Reverse(r.0));
    // The writes of the `k` hottest pages.
    let top = |k: u64| {
        let (mut left, mut sum) = (k, 0u128);
        for &(c, len) in runs.iter() {
            let take = len.min(left);
            sum += u128::from(c) * u128::from(take);
            left -= take;
            if left == 0 {
                break;
            }
        }
        sum
    };
    let share = |fraction: f64| {
        let k = ((fraction * n as f64).ceil() as u64).clamp(1, n);
        top(k) as f64 / total as f64
    };
    // Gini with counts ascending (x_1 <= ... <= x_n): sum (2i - n - 1) x_i / (n * total);
    // here they are descending, so the page at rank r from the top (0-based) weighs
    // n - 2r - 1, and a run of `len` pages from rank r weighs len * (n - 2r - len).
    let (mut weighted, mut rank) = (0.0f64, 0u64);
    for &(c, len) in runs.iter() {
        weighted += f64::from(c) * len as f64 * (n as f64 - 2.0 * rank as f64 - len as f64);
        rank += len;
    }
    WriteSkew {
        page_writes: u64::try_from(total).unwrap_or(u64::MAX),
        hottest_1pct: share(0.01),
        hottest_10pct: share(0.10),
        hottest_20pct: share(0.20),
        hottest_50pct: share(0.50),
        gini: weighted / (n as f64 * total as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time_ns: u64, op: TraceOp, offset: u64, size: u64) -> Result<TraceRecord> {
        Ok(TraceRecord {
            time_ns,
            op,
            offset,
            size,
            device: 0,
            placement: None,
        })
    }

    #[test]
    fn log_buckets_cover_and_bound() {
        for v in (0..5000).chain([u64::MAX, u64::MAX / 3, 1 << 40, (1 << 40) - 1]) {
            let i = log_bucket(v);
            assert!(i < LOG_BUCKETS);
            let mid = log_bucket_value(i);
            let err = (mid as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(err <= 1.0 / 32.0, "{v} -> bucket {i} mid {mid}");
            if v < 32 {
                assert_eq!(mid, v);
            }
        }
    }

    #[test]
    fn small_trace() {
        let recs = vec![
            rec(0, TraceOp::Write, 0, 16384),
            rec(100, TraceOp::Write, 0, 4096),
            rec(200, TraceOp::Read, 1 << 20, 4096),
            rec(300, TraceOp::Trim, 8192, 4096),
            rec(1_000_000_300, TraceOp::Flush, 0, 0),
        ];
        let s = TraceStats::compute(recs, 4096).unwrap();
        assert_eq!(s.records, 5);
        assert_eq!(
            s.writes,
            OpStats {
                count: 2,
                bytes: 20480
            }
        );
        assert_eq!((s.reads.count, s.trims.count, s.flushes), (1, 1, 1));
        assert_eq!(s.duration_s, 1.0000003);
        assert_eq!((s.unique_pages, s.written_pages), (5, 4));
        assert_eq!(s.footprint_bytes, 5 * 4096);
        assert_eq!(
            s.size_histogram,
            vec![
                SizeBucket {
                    le_bytes: 4096,
                    count: 3
                },
                SizeBucket {
                    le_bytes: 16384,
                    count: 1
                }
            ]
        );
        assert_eq!(s.interarrival.count, 4);
        // 100 ns falls in the bucket [100, 103]: the midpoint is within 1/32.
        assert_eq!(s.interarrival.p50_ns, 101);
        assert_eq!(s.interarrival.mean_ns, 250_000_075.0);
        assert_eq!(s.interarrival.max_ns, 1_000_000_000);
        // Page 0 written twice, pages 1..3 once: 5 page writes.
        let w = s.write_skew;
        assert_eq!(w.page_writes, 5);
        assert_eq!(w.hottest_1pct, 0.4);
        assert_eq!(w.hottest_50pct, 0.6);
        assert!((w.gini - 0.15).abs() < 1e-12, "{}", w.gini);
    }

    #[test]
    fn gini_extremes() {
        assert_eq!(skew(&mut [(3, 4)]).gini, 0.0);
        assert_eq!(skew(&mut [(3, 1), (3, 1), (3, 2)]).gini, 0.0);
        assert!(skew(&mut [(1, 99), (1_000_000, 1)]).gini > 0.98);
        assert_eq!(skew(&mut []).gini, 0.0);
    }

    #[test]
    fn an_absurd_record_costs_one_run() {
        let recs = vec![
            rec(0, TraceOp::Write, 4096, 1_000_000_000_000_000_000),
            rec(1, TraceOp::Read, 0, 4096),
        ];
        let s = TraceStats::compute(recs, 4096).unwrap();
        assert!(s.written_pages >= 1_000_000_000_000_000_000 / 4096);
        assert_eq!(s.unique_pages, s.written_pages + 1);
        assert_eq!(s.write_skew.gini, 0.0);
    }
}
