//! Trace statistics of the MSR sample.

use super::support::defaults;
use crate::common::sample;
use zombiesim::trace::{TraceFormat, TraceReader, TraceStats};

#[test]
fn stats_on_the_msr_sample() {
    let path = sample("msr-src1_0-excerpt.csv");
    let reader = TraceReader::open(&path, TraceFormat::Msr, &defaults()).unwrap();
    let s = TraceStats::compute(reader, 4096).unwrap();
    assert_eq!(s.records, 10_001);
    assert_eq!(
        (s.reads.count, s.writes.count, s.trims.count, s.flushes),
        (7362, 2639, 0, 0)
    );
    let duration = (128166453872075858u64 - 128166373321652068) as f64 * 100e-9;
    assert!((s.duration_s - duration).abs() < 1e-9);
    assert!(s.unique_pages > 0 && s.written_pages <= s.unique_pages);
    assert_eq!(s.footprint_bytes, s.unique_pages * 4096);
    let histogram_total: u64 = s.size_histogram.iter().map(|b| b.count).sum();
    assert_eq!(histogram_total, s.records);
    assert!(s
        .size_histogram
        .windows(2)
        .all(|w| w[0].le_bytes < w[1].le_bytes));
    let ia = s.interarrival;
    assert_eq!(ia.count, 10_000);
    assert!((ia.mean_ns - duration * 1e9 / 10_000.0).abs() < 1.0);
    assert!(ia.p50_ns <= ia.p99_ns && ia.p99_ns <= ia.max_ns);
    let w = s.write_skew;
    assert!(w.page_writes >= s.written_pages);
    assert!(w.hottest_1pct >= 0.01 && w.hottest_1pct <= w.hottest_10pct);
    assert!(w.hottest_10pct <= w.hottest_20pct && w.hottest_20pct <= w.hottest_50pct);
    assert!(w.hottest_50pct <= 1.0 && (0.0..1.0).contains(&w.gini));
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["writes"]["count"], 2639);
    assert!(json["write_skew"]["gini"].is_number());
    println!(
        "msr sample stats: {}",
        serde_json::to_string_pretty(&s).unwrap()
    );
}
