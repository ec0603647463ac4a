//! Content-aware flash end to end: the dead-value pool policies, dedup, their
//! combination, the paper's Fig. 13 example, and the integrity oracle under random
//! operations with revival and sharing.

use proptest::prelude::*;
use zombiesim::ftl::{Ftl, FtlExt, PageMappedFtl};
use zombiesim::{simulate, Config, Report, RunOptions, WorkloadSpec};

fn small(settings: &[(&str, &str)]) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.blocks_per_plane".into(), "64".into()),
        ("flash.pages_per_block".into(), "64".into()),
        ("ftl.over_provisioning".into(), "0.15".into()),
        ("precondition.random_drive_writes".into(), "0".into()),
    ];
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs).unwrap();
    cfg
}

fn run(cfg: &Config, wl: &str) -> Report {
    let opts = RunOptions {
        seed: 5,
        verify: true,
        reproducible: true,
        ..Default::default()
    };
    simulate(cfg, &WorkloadSpec::parse(wl).unwrap(), &opts, &mut |_| true).unwrap()
}

fn avoided(r: &Report) -> u64 {
    r.content.as_ref().map_or(0, |c| c.writes_avoided)
}

const SKEWED: &str = "values:zipf=1.1,unique=0.3,drive_writes=3,read=0.2";

#[test]
fn infinite_beats_mq_beats_lru_on_a_skewed_workload() {
    let entries = "600";
    let pool = |p: &str| {
        run(
            &small(&[("content.pool", p), ("content.pool_entries", entries)]),
            SKEWED,
        )
    };
    let (base, lru, mq, inf) = (
        run(&small(&[]), SKEWED),
        pool("lru"),
        pool("mq"),
        pool("infinite"),
    );
    assert!(base.content.is_none());
    let (a_lru, a_mq, a_inf) = (avoided(&lru), avoided(&mq), avoided(&inf));
    assert!(a_lru > 0, "a skewed workload revives something");
    assert!(
        a_inf >= a_mq && a_mq >= a_lru,
        "inf {a_inf} mq {a_mq} lru {a_lru}"
    );
    for r in [&lru, &mq, &inf] {
        // Every avoided write is a host program not made.
        let c = r.content.as_ref().unwrap();
        assert_eq!(
            r.flash.programs_by_cause.get(zombiesim::stats::Cause::Host) + c.writes_avoided,
            r.host.write_pages
        );
        assert_eq!(c.writes_avoided_revival, c.pool_hits);
        assert_eq!(r.host.write_pages, base.host.write_pages);
        assert!(r.flash.programs < base.flash.programs);
        let by_degree: u64 = c.pool_hits_by_degree.iter().map(|d| d.hits).sum();
        assert_eq!(by_degree, c.pool_hits);
    }
    assert!(inf.flash.erases <= base.flash.erases);
    // MQ keeps popular values: its hit rate on the most popular degree is the highest.
    let c = mq.content.as_ref().unwrap();
    assert!(c.pool_entries_peak <= 600 && c.mq_promotions > 0);
}

#[test]
fn every_scheme_equals_baseline_when_every_value_is_unique() {
    let wl = "values:unique=1,drive_writes=2,read=0.1";
    let base = run(&small(&[]), wl);
    for settings in [
        vec![("content.pool", "lru")],
        vec![("content.pool", "mq")],
        vec![("content.pool", "infinite")],
        vec![("content.pool", "lx")],
        vec![("content.dedup", "true")],
        vec![("content.dedup", "true"), ("content.pool", "mq")],
    ] {
        let r = run(&small(&settings), wl);
        assert_eq!(avoided(&r), 0, "{settings:?}");
        assert_eq!(r.flash.programs, base.flash.programs, "{settings:?}");
        assert_eq!(r.flash.erases, base.flash.erases, "{settings:?}");
    }
}

#[test]
fn dedup_and_dvp_combine() {
    let wl = "values:zipf=1.2,unique=0.2,drive_writes=2";
    let dedup = run(&small(&[("content.dedup", "true")]), wl);
    let both = run(
        &small(&[("content.dedup", "true"), ("content.pool", "infinite")]),
        wl,
    );
    let d = dedup.content.as_ref().unwrap();
    let b = both.content.as_ref().unwrap();
    assert!(d.writes_avoided_dedup > 0 && d.writes_avoided_revival == 0);
    assert!(d.dedup_shared_pages > 0);
    assert!(
        b.writes_avoided_revival > 0,
        "the pool catches writes dedup misses"
    );
    assert!(both.flash.programs <= dedup.flash.programs);
}

#[test]
fn hashing_costs_time_on_the_write_path() {
    let wl = "values:unique=1,requests=3000";
    let timed = |hash: &str| {
        let cfg = small(&[
            ("timing.enabled", "true"),
            ("interface.queue_depth", "1"),
            ("content.pool", "lru"),
            ("content.hash_us", hash),
        ]);
        run(&cfg, wl).latency.unwrap().write.mean_us
    };
    let (free, costly) = (timed("0"), timed("100"));
    assert!(costly >= free + 99.0, "hash 100 µs: {free} → {costly}");
}

#[test]
fn same_seed_same_report() {
    let cfg = small(&[("content.pool", "mq"), ("content.dedup", "true")]);
    assert_eq!(run(&cfg, SKEWED).to_json(), run(&cfg, SKEWED).to_json());
}

/// 001 Fig. 13: W1 writes D; W2 and W3 write D again while it is live (dedup absorbs
/// them); every logical page holding D is overwritten, so D dies; W4 writes D once more,
/// which only the dead-value pool can absorb.
#[test]
fn fig13_dedup_while_live_pool_after_death() {
    const D: u64 = 0xD;
    let run = |settings: &[(&str, &str)]| {
        let cfg = small(settings);
        let mut f = PageMappedFtl::new(&cfg, 1, true).unwrap();
        f.write_value(0, D).unwrap(); // W1 at t0
        let p0 = f.counters().programs.total();
        f.write_value(1, D).unwrap(); // W2
        f.write_value(2, D).unwrap(); // W3
        let w23 = f.counters().programs.total() - p0;
        for (i, lpn) in [0u64, 1, 2].into_iter().enumerate() {
            f.write_value(lpn, 100 + i as u64).unwrap(); // D dies at t3
        }
        let p3 = f.counters().programs.total();
        f.write_value(3, D).unwrap(); // W4 at t4
        let w4 = f.counters().programs.total() - p3;
        f.read(3).unwrap();
        f.verify().unwrap();
        (w23, w4)
    };
    assert_eq!(run(&[]), (2, 1), "baseline programs W2, W3 and W4");
    assert_eq!(
        run(&[("content.dedup", "true")]),
        (0, 1),
        "dedup: W2, W3 only"
    );
    assert_eq!(run(&[("content.pool", "mq")]), (2, 0), "pool: W4 only");
    assert_eq!(
        run(&[("content.dedup", "true"), ("content.pool", "mq")]),
        (0, 0),
        "both"
    );
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64, u64),
    Read(u64),
    Trim(u64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        6 => (0u64..400, 0u64..24).prop_map(|(l, v)| Op::Write(l, v)),
        2 => (0u64..400).prop_map(Op::Read),
        1 => (0u64..400).prop_map(Op::Trim),
    ];
    prop::collection::vec(op, 1..4000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random writes of few values, reads and trims on a tiny device with every
    /// content scheme and popularity-aware GC: the oracle and the invariants hold.
    #[test]
    fn oracle_holds_with_dedup_and_revival(ops in ops(), scheme in 0usize..6) {
        let schemes: [&[(&str, &str)]; 6] = [
            &[("content.pool", "lru"), ("content.pool_entries", "8")],
            &[("content.pool", "mq"), ("content.pool_entries", "8")],
            &[("content.pool", "infinite")],
            &[("content.pool", "lx"), ("content.pool_entries", "16")],
            &[("content.dedup", "true")],
            &[("content.dedup", "true"), ("content.pool", "mq"), ("gc.policy", "popularity")],
        ];
        let mut cfg = Config::preset("default").unwrap();
        let mut pairs: Vec<(String, String)> = vec![
            ("flash.blocks_per_plane".into(), "8".into()),
            ("flash.pages_per_block".into(), "16".into()),
            ("ftl.over_provisioning".into(), "0.6".into()),
        ];
        pairs.extend(schemes[scheme].iter().map(|(k, v)| (k.to_string(), v.to_string())));
        cfg.set_many(&pairs).unwrap();
        let mut f = PageMappedFtl::new(&cfg, 1, true).unwrap();
        let n = f.logical_pages();
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Write(l, 0) => f.write(l % n).unwrap(),
                Op::Write(l, v) => f.write_value(l % n, v).unwrap(),
                Op::Read(l) => f.read(l % n).unwrap(),
                Op::Trim(l) => f.trim(l % n).unwrap(),
            }
            if i % 500 == 0 {
                f.verify().unwrap();
            }
        }
        f.verify().unwrap();
    }
}

mod traces {
    use super::*;
    use crate::common::sample;
    use std::path::PathBuf;
    use zombiesim::simulate_trace;
    use zombiesim::trace::{ReadOptions, RemapMode, TraceFormat};
    use zombiesim::workload::TraceSpec;
    use zombiesim::Error;

    fn spec(path: PathBuf, format: TraceFormat) -> TraceSpec {
        TraceSpec {
            path,
            format,
            options: ReadOptions::default(),
            remap: RemapMode::Compact,
            limit: None,
        }
    }

    fn replay(settings: &[(&str, &str)], spec: &TraceSpec) -> zombiesim::Result<Report> {
        let mut cfg = small(settings);
        // Room for the larger capture's footprint (90 K pages) after compact remapping.
        let blocks = if spec.format == TraceFormat::PgbenchHashed {
            "448"
        } else {
            "192"
        };
        cfg.set("flash.blocks_per_plane", blocks).unwrap();
        let opts = RunOptions {
            seed: 1,
            verify: true,
            reproducible: true,
            ..Default::default()
        };
        simulate_trace(&cfg, spec, &opts, &mut |_| true)
    }

    fn fixture(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("zombiesim-content-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn fiu_fixture_replays_with_revival_and_bad_lines_name_file_and_line() {
        let mut text = String::new();
        // Page 0 written with A, B, A, B, ...; page 1 always with A (4 KiB lines), then a
        // 512-byte-sector page (homes style) written twice with the same sectors.
        for i in 0..40u64 {
            let h = if i % 2 == 0 { "a" } else { "b" };
            text += &format!("{} 1 p 0 8 W 8 0 {h:0>32}\n", 1000 + i);
            text += &format!("{} 1 p 8 8 W 8 0 {:0>32}\n", 1000 + i, "a");
        }
        for round in 0..2 {
            for s in 0..8 {
                text += &format!(
                    "{} 1 p {} 1 W 8 0 {:032x}\n",
                    2000 + round * 10 + s,
                    16 + s,
                    s
                );
            }
        }
        text += "3000 1 p 0 8 R 8 0 0\n";
        let path = fixture("fiu.txt", &text);
        let s = spec(path, TraceFormat::Fiu);
        let base = replay(&[], &s).unwrap();
        let both = replay(&[("content.dedup", "true"), ("content.pool", "mq")], &s).unwrap();
        assert_eq!(base.host.write_pages, 82);
        let c = both.content.as_ref().unwrap();
        assert_eq!(c.valued_write_pages, 82);
        // Page 0 alternates between two values: from the third write on, each is a
        // revival or a dedup hit (page 1 holds A); page 1 rewrites A over itself.
        assert!(c.writes_avoided >= 75, "{c:?}");
        assert!(both.flash.programs < base.flash.programs);

        let bad = fixture("bad.txt", "1 1 p 0 8 W 8 0 aa\n2 1 p 0 16 W 8 0 aa\n");
        let err = replay(&[], &spec(bad.clone(), TraceFormat::Fiu)).unwrap_err();
        assert!(
            matches!(&err, Error::Input { file, line: 2, reason }
                if file.ends_with("bad.txt") && reason.contains("8 sectors")),
            "{err}"
        );
    }

    #[test]
    fn the_sqlite_capture_runs_end_to_end() {
        let path = sample("captures/sqlite-wal/nbdkit_hashlog_full_sqlite15s.log.gz");
        let s = spec(path, TraceFormat::NbdkitHashlog);
        let base = replay(&[], &s).unwrap();
        let dvp = replay(&[("content.pool", "mq")], &s).unwrap();
        let both = replay(&[("content.dedup", "true"), ("content.pool", "mq")], &s).unwrap();
        assert!(base.host.write_pages > 40_000);
        assert_eq!(base.trace.as_ref().unwrap().flushes, 389);
        let (d, b) = (dvp.content.unwrap(), both.content.unwrap());
        assert_eq!(d.valued_write_pages, base.host.write_pages);
        assert!(d.writes_avoided_revival > 0 && b.writes_avoided >= d.writes_avoided);
        assert!(both.flash.programs < base.flash.programs);
    }

    #[test]
    fn the_pgbench_capture_runs_end_to_end() {
        let path = sample("captures/pgbench-ext4/device_writes_hashed.csv.gz");
        let s = spec(path, TraceFormat::PgbenchHashed);
        let base = replay(&[], &s).unwrap();
        let both = replay(
            &[("content.dedup", "true"), ("content.pool", "infinite")],
            &s,
        )
        .unwrap();
        assert_eq!(base.host.write_pages, 152_036);
        let b = both.content.unwrap();
        // Half the WAL device writes rewrite identical content.
        assert!(b.writes_avoided_fraction > 0.2, "{b:?}");
        assert!(both.flash.programs < base.flash.programs);
    }

    #[test]
    fn hashed_traces_need_4kib_pages_and_are_read_only() {
        let path = fixture("one.log", "W 1 0 4096 0 aa\n");
        let mut cfg = small(&[]);
        cfg.set("flash.page_size", "8KiB").unwrap();
        let err = simulate_trace(
            &cfg,
            &spec(path, TraceFormat::NbdkitHashlog),
            &RunOptions::default(),
            &mut |_| true,
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::Config { key, .. } if key == "flash.page_size"),
            "{err}"
        );
        let mut w = zombiesim::trace::TraceWriter::new(TraceFormat::Fiu, Vec::new());
        let rec = zombiesim::trace::TraceRecord {
            time_ns: 0,
            op: zombiesim::trace::TraceOp::Write,
            offset: 0,
            size: 4096,
            device: 0,
            placement: None,
        };
        assert!(w.write(&rec).unwrap_err().to_string().contains("read only"));
    }
}

/// The host model carries each write's content value down to the device: the same
/// `values` workload avoids writes with dedup whether or not it goes through the host
/// page cache (the cache absorbs rewrites, so the figures differ, but neither is 0).
#[test]
fn content_values_reach_the_device_through_the_host_cache() {
    let wl = "values:zipf=1.1,unique=0.3,drive_writes=1";
    let direct = run(
        &small(&[("content.dedup", "true"), ("timing.enabled", "true")]),
        wl,
    );
    let cached = run(
        &small(&[
            ("content.dedup", "true"),
            ("timing.enabled", "true"),
            ("host.cache", "1MiB"),
            ("host.threads", "4"),
        ]),
        wl,
    );
    assert!(cached.cache.is_some(), "the host model ran");
    let (a, b) = (avoided(&direct), avoided(&cached));
    assert!(
        a > 0 && b > 0,
        "dedup avoided {a} writes direct, {b} through the cache"
    );
    // Writes that reached the device through the cache carried their values: the
    // share of device writes dedup avoided is of the same order either way.
    let share = |r: &Report, avoided: u64| avoided as f64 / r.host.write_pages as f64;
    let (sa, sb) = (share(&direct, a), share(&cached, b));
    assert!(sb > sa / 3.0 && sb < sa * 3.0, "shares {sa:.3} and {sb:.3}");
}
