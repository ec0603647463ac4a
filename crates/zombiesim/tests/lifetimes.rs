//! Lifetime-aware zombie GC (`gc.zombie_weight = "lifetime"`, schemes `lzgc-gd` and
//! `lzgc-cb`) reads no future: replacing a notified trace after time t leaves every
//! decision before t as it was (a property over generated traces and cut points). The victim oracle, which reads the whole run first, is
//! the control: its decisions before t change with what comes after.

use std::path::{Path, PathBuf};
use zombiesim::simulate_trace;
use zombiesim::trace::{
    generate_notified, NativeHeader, NotifiedSpec, ReadOptions, TraceFormat, TraceOp, TraceReader,
    TraceRecord, TraceWriter,
};

use crate::common;
use common::{native_trace, notified_device, verified_opts};

/// Pages the trace addresses.
const PAGES: u64 = 14_000;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zs-lifetimes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The records of a generated notified trace.
fn records(seed: u64) -> Vec<TraceRecord> {
    let spec = NotifiedSpec {
        pages: PAGES,
        records: 120_000,
        hot_pages: 0.1,
        hot_share: 0.9,
        delay: 2_000,
        seed,
        ..NotifiedSpec::default()
    };
    let path = tmp(&format!("gen-{seed}.zst"));
    let w = TraceWriter::create(&path, TraceFormat::Native).unwrap();
    let (_, out) = generate_notified(&spec, w).unwrap();
    out.finish().unwrap();
    TraceReader::open(&path, TraceFormat::Native, &ReadOptions::default())
        .unwrap()
        .collect::<zombiesim::Result<Vec<_>>>()
        .unwrap()
}

fn write(path: &Path, recs: &[TraceRecord]) {
    let mut w = TraceWriter::create(path, TraceFormat::Native)
        .unwrap()
        .declare(NativeHeader::new(true, false))
        .unwrap();
    for r in recs {
        w.write(r).unwrap();
    }
    w.finish().unwrap().finish().unwrap();
}

/// The same trace to record `cut`, then other pages: every page of the rest moved by
/// half the space (writes and host events alike).
fn replaced_after(recs: &[TraceRecord], cut: usize) -> Vec<TraceRecord> {
    let page = 4096;
    recs.iter()
        .enumerate()
        .map(|(i, r)| {
            if i < cut || r.op == TraceOp::Flush {
                return *r;
            }
            let lpn = (r.offset / page + PAGES / 2) % PAGES;
            let pages = r.size.div_ceil(page);
            let lpn = if lpn + pages > PAGES { 0 } else { lpn };
            TraceRecord {
                offset: lpn * page,
                ..*r
            }
        })
        .collect()
}

fn series(path: &Path, settings: &[(&str, &str)]) -> Vec<(u64, u64, u64)> {
    let mut keys = vec![("stats.series_every", "1000"), ("notify.mode", "ideal")];
    keys.extend_from_slice(settings);
    let (cfg, spec) = (notified_device(&keys), native_trace(path));
    let rep = simulate_trace(&cfg, &spec, &verified_opts(1), &mut |_| true).unwrap();
    rep.series
        .iter()
        .map(|p| (p.host_write_pages, p.flash_erases, p.gc_pages_copied))
        .collect()
}

/// The two lifetime-aware settings.
const LZGC: [(&str, &[(&str, &str)]); 2] = [
    (
        "lzgc-gd",
        &[
            ("gc.policy", "z-greedy"),
            ("gc.zombie_weight", "lifetime"),
            ("gc.zombie_block", "true"),
            ("gc.low_watermark", "6"),
            ("gc.high_watermark", "6"),
        ],
    ),
    (
        "lzgc-cb",
        &[
            ("gc.policy", "z-cost-benefit"),
            ("gc.zombie_weight", "lifetime"),
        ],
    ),
];

/// Trace `seed`, and the same replaced after record `cut` (a share of the records), as
/// files; the host page writes before the cut.
fn cut_pair(seed: u64, cut_share: f64, tag: &str) -> (PathBuf, PathBuf, u64) {
    let recs = records(seed);
    let cut = (recs.len() as f64 * cut_share) as usize;
    let (a, b) = (tmp(&format!("a-{tag}.zst")), tmp(&format!("b-{tag}.zst")));
    write(&a, &recs);
    write(&b, &replaced_after(&recs, cut));
    let before = recs[..cut]
        .iter()
        .filter(|r| r.op == TraceOp::Write)
        .map(|r| r.size.div_ceil(4096))
        .sum();
    (a, b, before)
}

fn prefix(s: &[(u64, u64, u64)], before: u64) -> Vec<(u64, u64, u64)> {
    s.iter().copied().filter(|p| p.0 <= before).collect()
}

proptest::proptest! {
    // A fixed seed (`PROPTEST_RNG_SEED=N` for others), so every run tries the same cuts.
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 6,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(
            std::env::var("PROPTEST_RNG_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1),
        ),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Any cut, any trace: every decision before the cut is the same whatever follows.
    #[test]
    fn lifetime_aware_gc_decides_nothing_from_the_future(
        seed in 1u64..1_000,
        cut_share in 0.2f64..0.8,
    ) {
        let (a, b, before) = cut_pair(seed, cut_share, &format!("{seed}-{cut_share}"));
        for (name, settings) in LZGC {
            let (sa, sb) = (series(&a, settings), series(&b, settings));
            proptest::prop_assert!(prefix(&sa, before).len() > 10, "{}: points before the cut", name);
            proptest::prop_assert_eq!(
                prefix(&sa, before),
                prefix(&sb, before),
                "{}: a decision before the cut changed",
                name
            );
            proptest::prop_assert_ne!(sa, sb, "{}: the rest of the trace mattered", name);
        }
    }
}

#[test]
fn the_oracle_as_control_decides_from_the_future() {
    // The oracle reads the future, and its choices before the cut change.
    let (a, b, before) = cut_pair(7, 0.5, "control");
    let oracle = [("gc.policy", "oracle"), ("gc.oracle_score", "z-greedy")];
    let (sa, sb) = (series(&a, &oracle), series(&b, &oracle));
    assert_ne!(
        prefix(&sa, before),
        prefix(&sb, before),
        "the oracle's past depends on its future"
    );
}
