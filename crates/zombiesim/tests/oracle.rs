//! The `oracle` victim policy (z-greedy told, from the run's future, every page that
//! dies within `gc.oracle_horizon` host page writes).
//!
//! The property: on small synthetic workloads (uniform, hot/cold with random r and f,
//! Zipf; random seeds, over-provisioning 5–25%, block sizes, with and without trims),
//! the oracle's WAF is never above that of a real policy on the same workload, seed and
//! device: greedy, FIFO, random, d-choices and windowed greedy.
//!
//! Cost-benefit is not in it, under either age, and the two pinned counterexamples below
//! say why: with LFS's age (`since-modified`) it beats the oracle by a wide margin under
//! strong skew, which z-greedy's scoring cannot match whatever it is told; with 000's
//! age (`modified-time`) it comes within the noise of the oracle on some small devices,
//! and then beats it on some seeds. The default run uses a fixed seed; widen it with
//! `PROPTEST_CASES=2000 PROPTEST_RNG_SEED=N cargo test -p zombiesim --release --test integration oracle::`.

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::io::Write as _;
use std::sync::Arc;
use zombiesim::trace::{ReadOptions, RemapMode, TraceFormat};
use zombiesim::workload::TraceSpec;
use zombiesim::{
    simulate, simulate_trace, Config, Error, PreconditionCache, Report, RunOptions, WorkloadSpec,
};

use crate::common;

/// An MSR trace at `path`, remapped modulo the device.
fn msr_spec(path: &std::path::Path) -> TraceSpec {
    TraceSpec {
        path: path.to_path_buf(),
        format: TraceFormat::Msr,
        options: ReadOptions::default(),
        remap: RemapMode::Modulo,
        limit: None,
    }
}

/// The real policies the oracle must never do worse than (label, settings).
const REAL: &[(&str, &[(&str, &str)])] = &[
    ("greedy", &[("gc.policy", "greedy")]),
    ("fifo", &[("gc.policy", "fifo")]),
    ("random", &[("gc.policy", "random")]),
    ("d-choices:4", &[("gc.policy", "d-choices:4")]),
    ("windowed-greedy:8", &[("gc.policy", "windowed-greedy:8")]),
];

/// One plane of `blocks` blocks of `ppb` pages, over-provisioned `op`, filled and
/// preconditioned with one drive-write of the workload's own writes.
fn device(blocks: u32, ppb: u32, op: f64, settings: &[(&str, &str)]) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.channels".into(), "1".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.blocks_per_plane".into(), blocks.to_string()),
        ("flash.pages_per_block".into(), ppb.to_string()),
        ("ftl.over_provisioning".into(), op.to_string()),
        ("precondition.random_drive_writes".into(), "1".into()),
        ("precondition.pattern".into(), "workload".into()),
        ("stats.series_points".into(), "0".into()),
    ];
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs).unwrap();
    cfg
}

fn run(cfg: &Config, workload: &str, seed: u64, verify: bool) -> Report {
    let opts = RunOptions {
        seed,
        verify,
        reproducible: true,
        ..Default::default()
    };
    let spec = WorkloadSpec::parse(workload).unwrap();
    simulate(cfg, &spec, &opts, &mut |_| true).unwrap_or_else(|e| panic!("{workload}: {e}"))
}

fn workload() -> impl Strategy<Value = String> {
    let trim = prop_oneof![Just(""), Just(",trim=0.05")];
    let model = prop_oneof![
        Just("uniform:".to_string()),
        (0.5f64..0.99, 0.01f64..0.5).prop_map(|(r, f)| format!("hotcold:r={r:.2},f={f:.2},")),
        (0.5f64..1.2).prop_map(|t| format!("zipf:theta={t:.2},")),
    ];
    (model, trim).prop_map(|(m, t)| format!("{m}drive_writes=2{t}"))
}

fn env(key: &str) -> Option<u64> {
    std::env::var(key).ok().and_then(|v| v.parse().ok())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: env("PROPTEST_CASES").unwrap_or(128) as u32,
        rng_seed: RngSeed::Fixed(env("PROPTEST_RNG_SEED").unwrap_or(1)),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_oracle_is_never_worse_than_a_real_policy(
        workload in workload(),
        seed in 0u64..1_000_000,
        op in 0.05f64..0.25,
        ppb in prop_oneof![Just(8u32), Just(16), Just(32)],
        blocks in 160u32..256,
    ) {
        let oracle = run(&device(blocks, ppb, op, &[("gc.policy", "oracle")]), &workload, seed, false);
        let o = oracle.waf.unwrap();
        let section = oracle.oracle.as_ref().unwrap();
        prop_assert_eq!(section.future_writes, oracle.host.write_pages);
        for (label, settings) in REAL {
            let r = run(&device(blocks, ppb, op, settings), &workload, seed, false);
            prop_assert_eq!(r.host.write_pages, oracle.host.write_pages);
            let w = r.waf.unwrap();
            prop_assert!(
                o <= w,
                "{}: oracle WAF {:.4} above {} {:.4} (op {:.3}, {} blocks of {}, seed {})",
                workload, o, label, w, op, blocks, ppb, seed
            );
        }
    }
}

/// The counterexample that keeps LFS cost-benefit out of the property. z-greedy's key is
/// `2v + min(2z, i)`: a block with `v` valid pages scores at best `2v`, the block with
/// the fewest valid pages `v_min` at worst `2·v_min + i = n + v_min`, so whatever the
/// marks, the oracle never takes a block holding more than `(n + v_min) / 2` valid
/// pages. Cost-benefit's age lets it clean cold blocks far fuller than that, which is
/// where it wins under strong skew: here 2.39 against the oracle's 3.88 at its default
/// horizon (141 pages); the best of horizons from 1/20 to 1000 times the spare pages
/// (268) was 3.77, and 3.15 with the zombie block.
#[test]
fn lfs_cost_benefit_beats_the_oracle_under_strong_skew() {
    let workload = "hotcold:r=0.95,f=0.05,drive_writes=2";
    let wm = [("gc.low_watermark", "3"), ("gc.high_watermark", "3")];
    let with = |policy: &str| {
        let mut s = wm.to_vec();
        s.push(("gc.policy", policy));
        if policy == "oracle" {
            // One schedule (z-greedy's key), not the envelope.
            s.push(("gc.oracle_score", "z-greedy"));
        }
        run(&device(256, 16, 0.07, &s), workload, 1, false)
            .waf
            .unwrap()
    };
    let (cb, oracle, greedy) = (with("cost-benefit"), with("oracle"), with("greedy"));
    assert!(
        cb < 0.8 * oracle,
        "cost-benefit {cb:.3}, oracle {oracle:.3}"
    );
    assert!(oracle < greedy, "oracle {oracle:.3}, greedy {greedy:.3}");
    // Which is why the oracle is, by default, the best of an envelope that holds
    // cost-benefit itself and z-cost-benefit told the future.
    let mut s = wm.to_vec();
    s.push(("gc.policy", "oracle"));
    let best = run(&device(256, 16, 0.07, &s), workload, 1, false);
    let o = best.oracle.as_ref().unwrap();
    assert!(
        best.waf.unwrap() <= cb,
        "envelope {:?} vs cost-benefit {cb:.3}",
        best.waf
    );
    // 3 zero-horizon, 2 lifetime-aware, 7 horizons × 3 scorings × the zombie block off and on.
    assert_eq!(o.candidates.len(), 47, "{o:?}");
    assert!(o.chosen.is_some());
}

/// The counterexample that keeps cost-benefit with 000's age out of the property: on
/// this small device (199 blocks of 8 pages, 5.9% spare) it is 12% better than greedy
/// and within the noise of the oracle, whose WAF moves by ±1.5% from one horizon to the
/// next (4.29, 4.26, 4.34, 4.33, 4.23 at 45, 48, 51, 54, 57 pages): at the default
/// horizon (42) it loses by 1.8%. Uniform writes at high over-provisioning on 32-page
/// blocks give the same near-ties the other way round: the whole effective spare as the
/// horizon (instead of ¾) lost to both this policy and greedy there, by up to 0.7%.
#[test]
fn modified_time_cost_benefit_can_beat_the_oracle_within_its_noise() {
    let workload = "hotcold:r=0.94,f=0.42,drive_writes=2,trim=0.05";
    let op = 0.058664439488600645;
    let with = |settings: &[(&str, &str)]| {
        run(&device(199, 8, op, settings), workload, 52756, false)
            .waf
            .unwrap()
    };
    let oracle = with(&[("gc.policy", "oracle"), ("gc.oracle_score", "z-greedy")]);
    let cb = with(&[
        ("gc.policy", "cost-benefit"),
        ("gc.cb_age", "modified-time"),
    ]);
    let greedy = with(&[("gc.policy", "greedy")]);
    assert!(
        oracle > cb && oracle < 1.03 * cb,
        "oracle {oracle:.4}, cost-benefit {cb:.4}"
    );
    assert!(
        oracle < 0.95 * greedy,
        "oracle {oracle:.4}, greedy {greedy:.4}"
    );
    let longer = with(&[
        ("gc.policy", "oracle"),
        ("gc.oracle_score", "z-greedy"),
        ("gc.oracle_horizon", "57"),
    ]);
    assert!(
        longer < cb,
        "oracle at 57 {longer:.4}, cost-benefit {cb:.4}"
    );
}

#[test]
fn the_report_gives_the_horizon_and_the_hints_and_the_integrity_checks_hold() {
    let zg = ("gc.oracle_score", "z-greedy");
    let cfg = device(160, 16, 0.1, &[("gc.policy", "oracle"), zg]);
    let r = run(
        &cfg,
        "hotcold:r=0.8,f=0.2,drive_writes=1,trim=0.05",
        3,
        true,
    );
    let o = r.oracle.as_ref().unwrap();
    // 0 = ¾ of the spare pages less the blocks GC holds back: the high watermark (2)
    // and the host's and GC's open blocks (one plane), of 16 pages each.
    let spare = r.device.physical_pages - r.device.logical_pages;
    assert_eq!(o.horizon, (spare - (2 + 2) * 16) * 3 / 4);
    assert!(o.hints > 0 && o.hints <= o.future_writes + o.future_trims);
    assert!(o.future_trims > 0);
    assert!(r.gc.zombie_pages_copied > 0, "GC copied no marked page");
    assert_eq!(r.run.config["gc"]["policy"], "oracle");
    // A horizon of its own; other policies have no oracle section.
    let cfg = device(
        160,
        16,
        0.1,
        &[("gc.policy", "oracle"), zg, ("gc.oracle_horizon", "7")],
    );
    assert_eq!(
        run(&cfg, "uniform:drive_writes=0.5", 3, false)
            .oracle
            .unwrap()
            .horizon,
        7
    );
    let cfg = device(160, 16, 0.1, &[]);
    assert!(run(&cfg, "uniform:drive_writes=0.5", 3, false)
        .oracle
        .is_none());
}

#[test]
fn an_oracle_with_no_horizon_to_speak_of_is_greedy() {
    // Horizon 1: a page is marked only right before its own rewrite, which clears the
    // mark at once, so GC never sees one (but trims: none here).
    let w = "zipf:theta=0.9,drive_writes=1";
    let oracle = device(
        160,
        16,
        0.1,
        &[
            ("gc.policy", "oracle"),
            ("gc.oracle_score", "z-greedy"),
            ("gc.oracle_horizon", "1"),
        ],
    );
    let greedy = device(160, 16, 0.1, &[("gc.policy", "greedy")]);
    let (o, g) = (run(&oracle, w, 5, true), run(&greedy, w, 5, false));
    assert_eq!(o.gc.pages_copied, g.gc.pages_copied);
    assert_eq!(o.gc.zombie_pages_copied, 0);
}

#[test]
fn a_trace_is_read_twice_and_replayed_with_its_future() {
    let dir = std::env::temp_dir().join(format!("zombiesim-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("hotcold.csv");
    let mut f = std::fs::File::create(&path).unwrap();
    let mut x = 7u64;
    for i in 0..20_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = x >> 33;
        let page = if r % 10 < 8 {
            r / 10 % 400
        } else {
            r / 10 % 2000
        };
        let kind = if r.is_multiple_of(7) { "Read" } else { "Write" };
        writeln!(
            f,
            "{},h,0,{kind},{},4096,10",
            128166373321652068 + i * 1000,
            page * 4096
        )
        .unwrap();
    }
    drop(f);
    let spec = msr_spec(&path);
    let opts = common::verified_opts(1);
    // A trace preconditions with uniform writes (it has no synthetic pattern).
    let cfg = |policy: &str| {
        device(
            160,
            16,
            0.1,
            &[("gc.policy", policy), ("precondition.pattern", "uniform")],
        )
    };
    let oracle = simulate_trace(&cfg("oracle"), &spec, &opts, &mut |_| true).unwrap();
    let greedy = simulate_trace(&cfg("greedy"), &spec, &opts, &mut |_| true).unwrap();
    // Below the cache a trace runs without the host model, whatever host.cache says.
    let mut below = cfg("oracle");
    below
        .set_many(&[
            ("timing.enabled".into(), "true".into()),
            ("host.cache".into(), "16MiB".into()),
            ("host.trace".into(), "below".into()),
        ])
        .unwrap();
    let timed = simulate_trace(&below, &spec, &opts, &mut |_| true).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(timed.oracle.unwrap().hints > 0 && timed.app.is_none());
    let o = oracle.oracle.as_ref().unwrap();
    assert_eq!(o.future_writes, oracle.host.write_pages);
    assert!(o.hints > 0);
    assert!(oracle.waf.unwrap() <= greedy.waf.unwrap());
}

fn refused(cfg: Result<Config, Error>) -> String {
    match cfg {
        Err(Error::Config { key, reason, .. }) => format!("{key}: {reason}"),
        Err(e) => panic!("not a config error: {e}"),
        Ok(_) => panic!("accepted"),
    }
}

fn with(settings: &[(&str, &str)]) -> Result<Config, Error> {
    let mut cfg = Config::preset("default").unwrap();
    let pairs: Vec<(String, String)> = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    cfg.set_many(&pairs).map(|_| cfg)
}

#[test]
fn where_the_future_is_not_the_device_s_the_oracle_is_refused() {
    let o = ("gc.policy", "oracle");
    let t = ("timing.enabled", "true");
    for (settings, names) in [
        (vec![o, ("host.buffer", "1MiB")], "host.buffer"),
        (
            vec![
                o,
                ("device.restart_at", "[1.0]"),
                ("timing.enabled", "true"),
            ],
            "device.restart_at",
        ),
    ] {
        let e = refused(with(&settings));
        assert!(e.starts_with("gc.policy: ") && e.contains(names), "{e}");
    }
    for kind in ["superblock", "fast", "block"] {
        let e = refused(with(&[o, ("ftl.kind", kind)]));
        assert!(e.starts_with("gc.policy: ") && e.contains(kind), "{e}");
    }
    assert!(with(&[o, ("ftl.kind", "dftl")]).is_ok());
    // The horizon is read only by the oracle, and fits 32 bits.
    let e = refused(with(&[("gc.oracle_horizon", "100")]));
    assert!(e.starts_with("gc.oracle_horizon: "), "{e}");
    let e = refused(with(&[o, ("gc.oracle_horizon", "4294967295")]));
    assert!(e.starts_with("gc.oracle_horizon: "), "{e}");
    assert!(with(&[o, ("gc.oracle_horizon", "4294967294")]).is_ok());
    // The host model, when a run would use it (a trace below the cache runs without).
    let opts = RunOptions::default();
    let uniform = WorkloadSpec::parse("uniform:drive_writes=0.1").unwrap();
    for (key, value) in [("host.cache", "16MiB"), ("host.threads", "4")] {
        let cfg = with(&[o, t, (key, value)]).unwrap();
        let e = simulate(&cfg, &uniform, &opts, &mut |_| true).unwrap_err();
        assert!(
            matches!(&e, Error::Config { key: k, reason, .. } if k == "gc.policy" && reason.contains(key)),
            "{e}"
        );
    }
    // A file-system workload runs the host model (with a cache of its own); so does
    // oltp, which needs host.cache, refused above.
    let cfg = with(&[o, t]).unwrap();
    let spec = WorkloadSpec::parse("fs:seq_write,vms=1").unwrap();
    let e = simulate(&cfg, &spec, &opts, &mut |_| true).unwrap_err();
    assert!(
        matches!(&e, Error::Config { key, reason, .. } if key == "gc.policy" && reason.contains("host model")),
        "{e}"
    );
}

#[test]
fn a_future_too_big_for_the_memory_limit_is_refused_naming_the_policy() {
    let cfg = device(160, 16, 0.1, &[("gc.policy", "oracle")]);
    let device_only = zombiesim::config::MemoryEstimate::new(&cfg, false)
        .unwrap()
        .total();
    let opts = RunOptions {
        max_memory: Some(device_only + 1000),
        ..Default::default()
    };
    let spec = WorkloadSpec::parse("uniform:drive_writes=100").unwrap();
    let e = simulate(&cfg, &spec, &opts, &mut |_| true).unwrap_err();
    assert!(
        matches!(&e, Error::Config { key, reason, .. } if key == "gc.policy" && reason.contains("--max-memory")),
        "{e}"
    );
}

/// The envelope's members at each horizon differ only in what the measured phase is told:
/// with a cache of preconditioned devices the oracle ages one device per scoring (greedy,
/// cost-benefit twice, the two lifetime-aware ones, z-greedy and z-cost-benefit twice
/// each without and with the zombie block: 11 of its 47 runs) and reports the same, byte
/// for byte.
#[test]
fn the_oracle_ages_one_device_per_scoring_and_reports_the_same() {
    let mut cfg = device(
        160,
        16,
        0.1,
        &[
            ("gc.policy", "oracle"),
            ("gc.low_watermark", "3"),
            ("gc.high_watermark", "3"),
        ],
    );
    cfg.set_many(&[("precondition.pattern".to_string(), "uniform".to_string())])
        .unwrap();
    let wl = WorkloadSpec::parse("hotcold:r=0.8,f=0.2,drive_writes=2").unwrap();
    let alone = RunOptions {
        seed: 5,
        verify: true,
        reproducible: true,
        ..Default::default()
    };
    let cache = Arc::new(PreconditionCache::new(1 << 30));
    let shared = RunOptions {
        precondition_cache: Some(cache.clone()),
        ..alone.clone()
    };
    let a = simulate(&cfg, &wl, &alone, &mut |_| true).unwrap();
    let b = simulate(&cfg, &wl, &shared, &mut |_| true).unwrap();
    assert_eq!(a.to_json(), b.to_json());
    let s = cache.stats();
    assert_eq!((s.misses, s.hits, s.devices), (11, 36, 11));
}

/// The envelope reads the measured phase's future once and lends it to each member that
/// reads it: every member's WAF in the envelope is the WAF that member gives run on its
/// own (reading its own future), on a trace and on a synthetic workload.
#[test]
fn each_member_of_the_envelope_gives_what_it_gives_alone() {
    let cfg = device(
        96,
        16,
        0.1,
        &[
            ("gc.policy", "oracle"),
            ("precondition.pattern", "uniform"),
            ("gc.low_watermark", "3"),
            ("gc.high_watermark", "3"),
        ],
    );
    let opts = RunOptions {
        seed: 3,
        reproducible: true,
        ..Default::default()
    };
    let wl = WorkloadSpec::parse("hotcold:r=0.8,f=0.2,trim=0.02,drive_writes=2").unwrap();
    let dir = std::env::temp_dir().join(format!("zombiesim-envelope-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("hotcold.csv");
    {
        let mut f = std::fs::File::create(&path).unwrap();
        let pages = (96 * 16) as f64 * 0.9;
        let mut x = 17u64;
        for i in 0..6000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Hot/cold: four writes in five to the first fifth of the pages.
            let span = if (x >> 60) < 13 { pages * 0.2 } else { pages };
            let lpn = ((x >> 20) % span as u64) * 4096;
            writeln!(
                f,
                "{},h,0,Write,{lpn},4096,10",
                128_000_000_000u64 + i * 1000
            )
            .unwrap();
        }
    }
    let spec = msr_spec(&path);
    let runs: [&dyn Fn(&Config) -> Report; 2] =
        [&|c| simulate(c, &wl, &opts, &mut |_| true).unwrap(), &|c| {
            simulate_trace(c, &spec, &opts, &mut |_| true).unwrap()
        }];
    for run in runs {
        let envelope = run(&cfg);
        let o = envelope.oracle.as_ref().expect("an oracle section");
        let mut checked = 0;
        for cand in &o.candidates {
            // The future-reading members: "z-greedy@H" and "z-cost-benefit@H (AGE)",
            // each also with ", zombie block" among what is in brackets.
            let Some((score, rest)) = cand.schedule.split_once('@') else {
                continue;
            };
            let (horizon, quals) = match rest.split_once(" (") {
                Some((h, q)) => (h, q.trim_end_matches(')').split(", ").collect()),
                None => (rest, vec![]),
            };
            let mut c = cfg.clone();
            let mut set = vec![
                ("gc.oracle_score".to_string(), score.to_string()),
                ("gc.oracle_horizon".to_string(), horizon.to_string()),
            ];
            for q in quals {
                match q {
                    "zombie block" => set.push(("gc.zombie_block".into(), "true".into())),
                    age => set.push(("gc.cb_age".into(), age.to_string())),
                }
            }
            c.set_many(&set).unwrap();
            let alone = run(&c);
            assert_eq!(alone.waf, cand.waf, "{}", cand.schedule);
            checked += 1;
        }
        assert_eq!(checked, 42, "{:?}", o.candidates);
    }
    std::fs::remove_dir_all(&dir).ok();
}
