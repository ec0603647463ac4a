//! Request latency histograms (HDR, 3 significant digits) and throughput.

use crate::steady::Checkpoints;
use hdrhistogram::Histogram;
use serde::Serialize;

/// Latency percentiles of one kind of request, in microseconds.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// The distribution as `[quantile, µs]` points at `CDF_QUANTILES` (empty without
    /// requests): enough to draw the latency CDF without the histogram.
    pub cdf: Vec<[f64; 2]>,
}

/// The quantiles `LatencySummary::cdf` is sampled at: the body in tenths, the tail in
/// decades of nines, and the extremes.
pub const CDF_QUANTILES: [f64; 18] = [
    0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999,
    1.0,
];

/// Latencies by request kind (reads, writes; trims are counted with writes), and of
/// all requests together.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LatencyReport {
    pub read: LatencySummary,
    pub write: LatencySummary,
    /// Reads and writes together (one histogram: its percentiles are exact, not a mix
    /// of the two kinds' percentiles).
    pub all: LatencySummary,
    /// Device latency only: host flash reads that waited for GC on their die.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc_blocked: Option<crate::timing::GcBlocked>,
}

/// Requests and bytes per simulated second.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Throughput {
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    /// Host bytes read and written per simulated second, in MB/s (10^6 bytes).
    pub mb_s: f64,
}

/// Collects request latencies (ns) for reads and writes.
pub struct LatencyRecorder {
    read: Histogram<u64>,
    write: Histogram<u64>,
    bytes: u64,
    /// Summed write latency (ns) against writes recorded, for the steady-state check.
    write_sum_ns: u64,
    write_progress: Checkpoints,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        // 1 ns to one simulated hour, 3 significant digits (longer latencies saturate).
        let h = || {
            Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
                .expect("bounds and precision are valid")
        };
        LatencyRecorder {
            read: h(),
            write: h(),
            bytes: 0,
            write_sum_ns: 0,
            write_progress: Checkpoints::default(),
        }
    }
}

fn summary(h: &Histogram<u64>) -> LatencySummary {
    let us = |ns: u64| ns as f64 / 1000.0;
    if h.is_empty() {
        return LatencySummary::default();
    }
    LatencySummary {
        count: h.len(),
        mean_us: h.mean() / 1000.0,
        p50_us: us(h.value_at_quantile(0.5)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
        cdf: CDF_QUANTILES
            .iter()
            .map(|&q| [q, us(h.value_at_quantile(q))])
            .collect(),
    }
}

impl LatencyRecorder {
    /// Record one request's latency; `read` picks the histogram.
    #[inline]
    pub fn record(&mut self, read: bool, latency_ns: u64, bytes: u64) {
        if read {
            self.read.saturating_record(latency_ns.max(1));
        } else {
            self.write.saturating_record(latency_ns.max(1));
            self.write_sum_ns = self.write_sum_ns.saturating_add(latency_ns);
            let sum = self.write_sum_ns;
            self.write_progress.observe(self.write.len(), || sum);
        }
        self.bytes += bytes;
    }

    /// The mean write latency (µs) over the quarter of the writes before the last and
    /// over the last quarter; `None` with too few writes to split.
    pub fn write_quarters_us(&self) -> Option<(f64, f64)> {
        let (a, b) = self
            .write_progress
            .quarters(self.write.len(), self.write_sum_ns)?;
        Some((a / 1000.0, b / 1000.0))
    }

    /// Requests recorded.
    pub fn count(&self) -> u64 {
        self.read.len() + self.write.len()
    }

    /// Mean latency of every request recorded, ns (0 without any).
    pub fn mean_ns(&self) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        (self.read.mean() * self.read.len() as f64 + self.write.mean() * self.write.len() as f64)
            / n as f64
    }

    pub fn report(&self) -> LatencyReport {
        let mut all = self.read.clone();
        all.add(&self.write)
            .expect("both histograms have the same bounds");
        LatencyReport {
            read: summary(&self.read),
            write: summary(&self.write),
            all: summary(&all),
            gc_blocked: None,
        }
    }

    /// Throughput over `elapsed_ns` of simulated time.
    pub fn throughput(&self, elapsed_ns: u64) -> Throughput {
        let secs = elapsed_ns as f64 / 1e9;
        let per_s = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
        Throughput {
            iops: per_s((self.read.len() + self.write.len()) as f64),
            read_iops: per_s(self.read.len() as f64),
            write_iops: per_s(self.write.len() as f64),
            mb_s: per_s(self.bytes as f64) / 1e6,
        }
    }
}
