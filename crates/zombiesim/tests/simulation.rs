//! Whole-run properties: counters, determinism, policies ranked as theory says,
//! TRIM, interruption, bad input.

use zombiesim::{simulate, Config, Error, RunOptions, WorkloadSpec};

fn small(policy: &str) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.blocks_per_plane".into(), "128".into()),
        ("flash.pages_per_block".into(), "64".into()),
        ("gc.policy".into(), policy.into()),
    ])
    .unwrap();
    cfg
}

fn run(cfg: &Config, wl: &str, seed: u64) -> zombiesim::Report {
    let opts = RunOptions {
        seed,
        verify: true,
        reproducible: true,
        ..Default::default()
    };
    simulate(cfg, &WorkloadSpec::parse(wl).unwrap(), &opts, &mut |_| true).unwrap()
}

#[test]
fn counters_are_consistent() {
    let r = run(
        &small("greedy"),
        "uniform:drive_writes=2,read=0.3,trim=0.05",
        3,
    );
    let f = &r.flash;
    assert_eq!(f.programs, f.programs_by_cause.total());
    assert_eq!(
        f.programs_by_cause.get(zombiesim::stats::Cause::Host),
        r.host.write_pages
    );
    assert_eq!(
        f.programs_by_cause.get(zombiesim::stats::Cause::Gc),
        r.gc.pages_copied
    );
    assert_eq!(f.erases, r.gc.victims);
    assert!((r.waf.unwrap() - f.programs as f64 / r.host.write_pages as f64).abs() < 1e-12);
    assert!(
        r.waf.unwrap() > 1.5,
        "uniform at OP 7% must amplify: {}",
        r.waf.unwrap()
    );
    assert!(r.host.read_pages > 0 && r.host.trim_pages > 0);
    assert!(r.precondition.host_write_pages >= r.device.logical_pages);
    assert!(!r.series.is_empty());
    let last = r.series.last().unwrap();
    assert!(last.host_write_pages <= r.host.write_pages);
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let cfg = small("d-choices:4");
    let a = run(&cfg, "hotcold:r=0.8,f=0.2,drive_writes=1", 9).to_json();
    let b = run(&cfg, "hotcold:r=0.8,f=0.2,drive_writes=1", 9).to_json();
    let c = run(&cfg, "hotcold:r=0.8,f=0.2,drive_writes=1", 10).to_json();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn policies_rank_as_theory_says_on_uniform_traffic() {
    let wl = "uniform:drive_writes=3";
    let greedy = run(&small("greedy"), wl, 1).waf.unwrap();
    let fifo = run(&small("fifo"), wl, 1).waf.unwrap();
    let random = run(&small("random"), wl, 1).waf.unwrap();
    let d10 = run(&small("d-choices:10"), wl, 1).waf.unwrap();
    assert!(
        greedy < d10 && d10 < fifo && fifo < random,
        "{greedy} {d10} {fifo} {random}"
    );
}

#[test]
fn cost_benefit_beats_greedy_on_skewed_traffic() {
    let mut g = small("greedy");
    let mut cb = small("cost-benefit");
    for c in [&mut g, &mut cb] {
        c.set_many(&[
            ("precondition.pattern".into(), "workload".into()),
            ("precondition.random_drive_writes".into(), "4".into()),
        ])
        .unwrap();
    }
    let wl = "hotcold:r=0.95,f=0.05,drive_writes=4";
    let (wg, wcb) = (run(&g, wl, 2).waf.unwrap(), run(&cb, wl, 2).waf.unwrap());
    assert!(wcb < wg, "cost-benefit {wcb} vs greedy {wg}");
}

#[test]
fn all_policies_agree_on_the_host_stream() {
    let wl = "zipf:theta=0.9,drive_writes=1,read=0.2";
    let host: Vec<_> = ["greedy", "fifo", "cost-benefit", "windowed-greedy:8"]
        .iter()
        .map(|p| {
            let r = run(&small(p), wl, 5);
            (r.host.write_pages, r.host.read_pages, r.host.requests)
        })
        .collect();
    assert!(host.windows(2).all(|w| w[0] == w[1]), "{host:?}");
}

#[test]
fn trim_lowers_write_amplification() {
    let cfg = small("greedy");
    let plain = run(&cfg, "uniform:requests=60000", 4).waf.unwrap();
    let trimmed = run(&cfg, "uniform:requests=60000,trim=0.2", 4).waf.unwrap();
    assert!(trimmed < plain, "trim {trimmed} vs none {plain}");
}

#[test]
fn unwritten_pages_are_counted_not_errors() {
    let mut cfg = small("greedy");
    cfg.set_many(&[
        ("precondition.fill".into(), "false".into()),
        ("precondition.random_drive_writes".into(), "0".into()),
    ])
    .unwrap();
    let r = run(&cfg, "uniform:requests=1000,read=1", 1);
    assert_eq!(r.host.read_pages, 1000);
    assert_eq!(r.host.read_unmapped_pages, 1000);
    assert_eq!(r.flash.reads, 0);
}

#[test]
fn every_gc_scope_and_multi_page_request_runs_clean() {
    for scope in ["device", "die", "plane"] {
        let mut cfg = small("greedy");
        cfg.set_many(&[
            ("flash.planes_per_die".into(), "2".into()),
            ("gc.scope".into(), scope.into()),
        ])
        .unwrap();
        let r = run(&cfg, "locality:x=10,size=16KiB,read=0.5,drive_writes=1", 6);
        assert!(r.waf.unwrap() >= 1.0);
        assert_eq!(
            r.device.gc_units,
            match scope {
                "device" => 1,
                "die" => 4,
                _ => 8,
            }
        );
    }
}

#[test]
fn a_progress_callback_can_stop_a_run() {
    let cfg = small("greedy");
    let mut calls = 0;
    let opts = RunOptions {
        seed: 1,
        verify: false,
        reproducible: true,
        ..Default::default()
    };
    let wl = WorkloadSpec::parse("uniform:drive_writes=50").unwrap();
    let r = simulate(&cfg, &wl, &opts, &mut |p| {
        calls += 1;
        p.phase == zombiesim::Phase::Precondition
    })
    .unwrap();
    assert!(calls >= 2);
    assert!(r.run.interrupted);
    assert!(r.run.progress < 1.0);
}

/// A preconditioning stopped half-way is not the device its settings name: it is not
/// kept for other runs, and the next run ages its own.
#[test]
fn a_stopped_preconditioning_is_not_kept() {
    let cfg = small("greedy");
    let cache = std::sync::Arc::new(zombiesim::PreconditionCache::new(1 << 30));
    let opts = RunOptions {
        seed: 1,
        reproducible: true,
        precondition_cache: Some(cache.clone()),
        ..Default::default()
    };
    let wl = WorkloadSpec::parse("uniform:drive_writes=0.2").unwrap();
    // Stopped at its first progress report: the start of the preconditioning.
    let r = simulate(&cfg, &wl, &opts, &mut |p| {
        assert_eq!(p.phase, zombiesim::Phase::Precondition);
        false
    })
    .unwrap();
    assert!(r.run.interrupted);
    assert_eq!(cache.stats().devices, 0);
    let whole = simulate(&cfg, &wl, &opts, &mut |_| true).unwrap();
    assert!(!whole.run.interrupted);
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.devices), (0, 2, 1));
}

#[test]
fn bad_workloads_name_the_problem() {
    for (spec, want) in [
        ("nope", "unknown workload"),
        ("uniform:drive_writes=x", "drive_writes"),
        ("uniform:colour=red", "unknown key `colour`"),
        ("hotcold:f=1.5", "f = 1.5"),
        ("uniform:read=0.7,trim=0.5", "read + trim"),
        ("uniform:requests=5,bytes=1GiB", "at most one"),
        ("uniform:size=2TiB", "larger than"),
        ("uniform:read", "key=value"),
        ("uniform:iops=0", "iops = 0"),
        ("zipf:iops=abc", "iops = abc"),
        ("footprint:growth=2", "growth = 2"),
        ("footprint:window=0", "window = 0"),
        ("footprint:pause=1,phase=1MiB", "pause = 1"),
    ] {
        match WorkloadSpec::parse(spec) {
            Err(Error::Workload { reason, .. }) => {
                assert!(reason.contains(want), "{spec}: {reason}")
            }
            other => panic!("{spec}: {other:?}"),
        }
    }
}

#[test]
fn requests_beyond_the_device_are_rejected() {
    use zombiesim::ftl::{FtlExt, PageMappedFtl};
    let cfg = small("greedy");
    let mut ftl = PageMappedFtl::new(&cfg, 1, false).unwrap();
    let n = ftl.logical_pages();
    assert!(matches!(ftl.write(n), Err(Error::OutOfRange { .. })));
    assert!(ftl.write(n - 1).is_ok());
}

/// `gc.max_victims_per_trigger`: a trigger reclaims at most that many victims while the
/// unit has more than `gc.hard_watermark` free blocks (at or below it, GC goes on until
/// the unit is above it), so GC works in steps several times smaller than reclaiming up
/// to `gc.high_watermark`; the total work stays about the same.
#[test]
fn bounded_gc_works_in_smaller_steps_with_the_same_total_work() {
    let mut whole = small("greedy");
    whole
        .set_many(&[
            ("gc.low_watermark".into(), "3".into()),
            ("gc.high_watermark".into(), "8".into()),
        ])
        .unwrap();
    let mut bounded = whole.clone();
    bounded
        .set_many(&[
            ("gc.max_victims_per_trigger".into(), "1".into()),
            ("gc.hard_watermark".into(), "1".into()),
        ])
        .unwrap();
    let wl = "hotcold:r=0.9,f=0.1,drive_writes=2";
    let (w, b) = (run(&whole, wl, 4), run(&bounded, wl, 4));
    let per = |r: &zombiesim::Report| r.gc.victims as f64 / r.gc.invocations as f64;
    eprintln!(
        "victims per trigger: whole {:.2}, bounded {:.2}",
        per(&w),
        per(&b)
    );
    assert!(per(&w) > 3.0, "whole: {} victims per trigger", per(&w));
    assert!(
        per(&b) * 4.0 < per(&w),
        "bounded: {} victims per trigger",
        per(&b)
    );
    assert!(b.gc.invocations > 4 * w.gc.invocations);
    let (ww, wb) = (w.waf.unwrap(), b.waf.unwrap());
    assert!(
        (wb / ww - 1.0).abs() < 0.03,
        "WAF {ww} whole vs {wb} bounded"
    );
}
