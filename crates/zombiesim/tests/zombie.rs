//! Zombie Chasing end to end: the host model, the notification channel and
//! zombie-aware GC on the `zombie-chasing` preset, scaled to a quarter.

use zombiesim::{simulate, Config, Report, RunOptions, WorkloadSpec};

fn quarter(scheme_sets: &[(&str, &str)]) -> Config {
    let mut cfg = Config::preset("zombie-chasing").unwrap();
    let mut sets: Vec<(String, String)> = vec![
        ("flash.blocks_per_plane".into(), "1024".into()),
        ("ftl.reserved_blocks".into(), "53".into()),
        ("host.cache".into(), "1GiB".into()),
    ];
    sets.extend(
        scheme_sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    cfg.set_many(&sets).unwrap();
    cfg
}

fn run(cfg: &Config, workload: &str, verify: bool) -> Report {
    let opts = RunOptions {
        seed: 1,
        verify,
        reproducible: true,
        ..Default::default()
    };
    let wl = WorkloadSpec::parse(workload).unwrap();
    simulate(cfg, &wl, &opts, &mut |_| true).unwrap()
}

fn zgc_gd() -> [(&'static str, &'static str); 2] {
    [("gc.policy", "z-greedy"), ("gc.zombie_block", "true")]
}

#[test]
fn without_notifications_zombie_policies_equal_their_baselines() {
    for (zombie, base) in [("z-greedy", "greedy"), ("z-cost-benefit", "cost-benefit")] {
        let z = run(
            &quarter(&[
                ("gc.policy", zombie),
                ("gc.zombie_block", "true"),
                ("notify.mode", "none"),
            ]),
            "zc-micro:x=6,rw=0.5,drive_writes=0.1",
            false,
        );
        let b = run(
            &quarter(&[("gc.policy", base), ("notify.mode", "none")]),
            "zc-micro:x=6,rw=0.5,drive_writes=0.1",
            false,
        );
        assert_eq!(z.flash, b.flash, "{zombie} vs {base}");
        assert_eq!(z.gc, b.gc);
        assert_eq!(z.app, b.app);
        assert_eq!(z.notify.as_ref().unwrap().awareness_mean, 0.0);
    }
}

#[test]
fn awareness_orders_ideal_over_piggyback_over_none() {
    let aware = |mode: &str| {
        let r = run(
            &quarter(&[("notify.mode", mode)]),
            "zc-micro:x=6,rw=0.5,drive_writes=0.1",
            false,
        );
        r.notify.unwrap().awareness_mean
    };
    let (ideal, piggyback, none) = (aware("ideal"), aware("piggyback"), aware("none"));
    assert!(
        (ideal - 1.0).abs() < 1e-9,
        "ideal knows every dirty page: {ideal}"
    );
    assert!(
        piggyback < ideal && piggyback > 0.3,
        "piggyback {piggyback}"
    );
    assert_eq!(none, 0.0);
    // More reads per write carry more notifications (000 Table 3).
    let more_reads = run(&quarter(&[]), "zc-micro:x=6,rw=2,drive_writes=0.1", false)
        .notify
        .unwrap()
        .awareness_mean;
    let no_reads = run(&quarter(&[]), "zc-micro:x=6,rw=0,drive_writes=0.1", false)
        .notify
        .unwrap()
        .awareness_mean;
    assert!(more_reads > no_reads, "{more_reads} vs {no_reads}");
}

#[test]
fn z_greedy_cuts_write_amplification_and_the_gain_shrinks_with_locality() {
    let gain = |x: u32| {
        let w = format!("zc-micro:x={x},rw=0.5");
        let base = run(&quarter(&[]), &w, false);
        let z = run(&quarter(&zgc_gd()), &w, false);
        assert!(z.gc.zombie_pages_copied > 0);
        1.0 - z.waf.unwrap() / base.waf.unwrap()
    };
    let (g6, g20) = (gain(6), gain(20));
    assert!(g6 > 0.2, "ZGC-GD vs GC-GD at x = 6: {g6}");
    assert!(g20 < g6 && g20 > 0.0, "x = 20: {g20} vs x = 6: {g6}");
}

#[test]
fn the_zombie_bookkeeping_holds_under_verification() {
    let r = run(
        &quarter(&[
            ("gc.policy", "z-cost-benefit"),
            ("gc.zombie_block", "true"),
            ("notify.mode", "ideal"),
            ("host.cache", "256MiB"),
        ]),
        "zc-micro:x=10,rw=1,drive_writes=0.2",
        true,
    );
    assert!(r.run.verified);
    let cache = r.cache.unwrap();
    assert!(cache.writeback_pages.background + cache.writeback_pages.expire > 0);
    assert!(r.app.unwrap().elapsed_s > 0.0);
}

#[test]
fn oltp_runs_transactions_through_the_database_buffer() {
    let cfg = quarter(&[
        ("host.file_size", "16KiB"),
        ("gc.policy", "z-greedy"),
        ("gc.zombie_block", "true"),
    ]);
    let r = run(&cfg, "oltp:transactions=20000", true);
    let app = r.app.unwrap();
    assert_eq!(app.transactions, 20000);
    assert!(app.tps > 0.0 && app.sync_write_pages == 20000);
    assert!(r.notify.unwrap().awareness_mean > 0.0);
    let no_cache = {
        let mut c = cfg.clone();
        c.set("host.cache", "0").unwrap();
        c
    };
    let opts = RunOptions::default();
    let wl = WorkloadSpec::parse("oltp").unwrap();
    let err = simulate(&no_cache, &wl, &opts, &mut |_| true).unwrap_err();
    assert!(err.to_string().contains("host.cache"), "{err}");
}

#[test]
fn the_host_model_needs_timing() {
    let mut cfg = Config::preset("default").unwrap();
    let err = cfg.set("host.cache", "64MiB").unwrap_err();
    assert!(err.to_string().contains("timing.enabled"), "{err}");
}

#[test]
fn host_runs_are_deterministic() {
    let cfg = quarter(&zgc_gd());
    let a = run(&cfg, "zc-micro:x=6,rw=0.5,drive_writes=0.05", false);
    let b = run(&cfg, "zc-micro:x=6,rw=0.5,drive_writes=0.05", false);
    assert_eq!(a.to_json(), b.to_json());
}

/// Postmark deletes most files while their pages are still dirty: the host drops
/// those pages unwritten and withdraws their hints through the channel. In every
/// channel mode the device never counts more known zombies than the host holds
/// dirty pages (a mark whose withdrawal is still queued is stale, not known).
#[test]
fn dropped_dirty_pages_withdraw_their_hints_and_awareness_stays_at_most_one() {
    for mode in ["ideal", "piggyback", "command"] {
        let mut cfg = Config::preset("vma-journaling").unwrap();
        cfg.set_many(&[
            ("notify.mode".to_string(), mode.to_string()),
            ("flash.blocks_per_plane".to_string(), "4096".to_string()),
        ])
        .unwrap();
        let r = run(
            &cfg,
            "fs:postmark,vms=1,files=1000,transactions=8000",
            false,
        );
        let n = r.notify.unwrap();
        let c = n.counters;
        assert!(c.dropped_pages > 10_000, "{mode}: {c:?}");
        assert!(c.withdrawn_pages > 0, "{mode}: {c:?}");
        assert!(n.series.len() > 10, "{mode}");
        for p in &n.series {
            assert!(
                p.known_zombies <= p.dirty_pages && p.awareness <= 1.0,
                "{mode}: {p:?}"
            );
        }
        assert!(n.awareness_mean <= 1.0, "{mode}: {}", n.awareness_mean);
        match mode {
            // Un-marked at once: nothing stale, and every dirty page known.
            "ideal" => {
                assert_eq!(c.withdrawn_pages, c.dropped_pages);
                assert_eq!(n.stale_marks_mean, 0.0);
                assert_eq!(n.awareness_mean, 1.0);
            }
            // Withdrawals wait in the queue behind the marks: stale marks are seen.
            "piggyback" => assert!(n.stale_marks_mean > 0.0, "{n:?}"),
            _ => {}
        }
    }
}
