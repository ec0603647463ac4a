//! The timing model seen from whole runs: GC delays what queues behind it, and less
//! over-provisioning (more GC) means higher tail latency.

use zombiesim::ftl::{Ftl, FtlExt, PageMappedFtl};
use zombiesim::{simulate, Config, RunOptions, WorkloadSpec};

use crate::common;

const ERASE_US: f64 = 3000.0;

/// One plane, 4-page blocks, so every block and GC lands on the same die.
fn one_plane() -> Config {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.channels".into(), "1".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.blocks_per_plane".into(), "16".into()),
        ("flash.pages_per_block".into(), "4".into()),
        ("ftl.over_provisioning".into(), "1.0".into()),
        ("timing.enabled".into(), "true".into()),
        ("timing.erase_us".into(), ERASE_US.to_string()),
    ])
    .unwrap();
    cfg
}

/// Write pages until the next write would trigger GC; returns the FTL.
fn nearly_full(cfg: &Config) -> PageMappedFtl {
    let mut ftl = PageMappedFtl::new(cfg, 1, true).unwrap();
    ftl.set_timing(false);
    // Fill block by block; rewrite lpn 0..4 so one block holds only dead pages.
    for lpn in 0..4 {
        ftl.write(lpn).unwrap();
    }
    for lpn in 0..4 {
        ftl.write(lpn).unwrap();
    }
    ftl
}

fn read_latency_after_writes(gc: bool) -> u64 {
    let cfg = one_plane();
    let mut ftl = nearly_full(&cfg);
    let lpn_on_plane = 0;
    // Keep writing fresh pages until GC has run once (or, without GC, only a few).
    let before = ftl.counters().gc_victims;
    let mut next = 4u64;
    ftl.set_timing(true);
    let t0 = 1_000_000;
    loop {
        ftl.begin(t0);
        ftl.write(4 + next % (ftl.logical_pages() - 4)).unwrap();
        next += 1;
        if gc && ftl.counters().gc_victims > before {
            break;
        }
        if !gc && next == 8 {
            break;
        }
    }
    ftl.begin(t0);
    ftl.read(lpn_on_plane).unwrap();
    ftl.verify().unwrap();
    ftl.finish() - t0
}

#[test]
fn a_gc_on_a_die_delays_a_read_queued_on_it_by_the_erase_time() {
    let with_gc = read_latency_after_writes(true);
    let without = read_latency_after_writes(false);
    let erase_ns = (ERASE_US * 1000.0) as u64;
    assert!(
        with_gc >= without + erase_ns,
        "read behind GC took {with_gc} ns, without GC {without} ns; erase is {erase_ns} ns"
    );
}

fn p99(op: f64, scheduler: &str) -> (f64, f64) {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.blocks_per_plane".into(), "96".into()),
        ("flash.pages_per_block".into(), "64".into()),
        ("ftl.over_provisioning".into(), op.to_string()),
        ("timing.enabled".into(), "true".into()),
        ("timing.scheduler".into(), scheduler.into()),
        ("interface.queue_depth".into(), "8".into()),
        ("precondition.random_drive_writes".into(), "1".into()),
    ])
    .unwrap();
    let wl = WorkloadSpec::parse("uniform:drive_writes=1,read=0.3").unwrap();
    let opts = RunOptions {
        seed: 3,
        verify: true,
        reproducible: true,
        ..Default::default()
    };
    let r = simulate(&cfg, &wl, &opts, &mut |_| true).unwrap();
    let lat = r.latency.expect("timing on");
    assert!(r.elapsed_s.unwrap() > 0.0);
    assert!(r.throughput.unwrap().iops > 0.0);
    assert!(r.timing.unwrap().gc_busy_s > 0.0);
    (lat.read.p99_us, lat.write.p99_us)
}

#[test]
fn less_over_provisioning_means_higher_tail_latency() {
    // In issue order (fifo) reads wait behind GC, so both tails grow as OP shrinks.
    let (read_lo, write_lo) = p99(0.07, "fifo");
    let (read_hi, write_hi) = p99(0.5, "fifo");
    assert!(
        read_lo > read_hi && write_lo > write_hi,
        "fifo p99 at OP 7%: read {read_lo} write {write_lo}; at OP 50%: read {read_hi} write {write_hi}"
    );
    // With reads that overtake and suspend GC (the default preset's timed runs), the
    // read tail no longer depends on how much GC there is; the write tail still does.
    let (read_lo, write_lo) = p99(0.07, "suspend");
    let (read_hi, write_hi) = p99(0.5, "suspend");
    assert!(
        write_lo > 2.0 * write_hi && read_lo <= 1.1 * read_hi,
        "suspend p99 at OP 7%: read {read_lo} write {write_lo}; at OP 50%: read {read_hi} write {write_hi}"
    );
}

#[test]
fn timed_runs_are_deterministic_and_count_like_untimed_ones() {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.blocks_per_plane".into(), "64".into()),
        ("ftl.allocation".into(), "stripe".into()),
    ])
    .unwrap();
    let wl = WorkloadSpec::parse("hotcold:drive_writes=1,read=0.2").unwrap();
    let opts = RunOptions {
        seed: 1,
        verify: false,
        reproducible: true,
        ..Default::default()
    };
    let untimed = simulate(&cfg, &wl, &opts, &mut |_| true).unwrap();
    cfg.set("timing.enabled", "true").unwrap();
    let a = simulate(&cfg, &wl, &opts, &mut |_| true).unwrap();
    let b = simulate(&cfg, &wl, &opts, &mut |_| true).unwrap();
    assert_eq!(a.to_json(), b.to_json());
    // With striped allocation, timing changes when things happen, not what happens.
    assert_eq!(a.flash, untimed.flash);
    assert!(untimed.latency.is_none() && a.latency.is_some());
}

#[test]
fn every_preset_runs_timed_when_scaled_down() {
    for name in zombiesim::config::preset_names() {
        let mut cfg = Config::preset(name).unwrap();
        // Enough spare blocks per GC unit for the preset's watermarks and streams.
        let blocks = if cfg.gc.low_watermark > 2 || cfg.fdp.enabled {
            "512"
        } else {
            "128"
        };
        let mut sets: Vec<(String, String)> = vec![
            ("flash.blocks_per_plane".into(), blocks.into()),
            ("ftl.reserved_blocks".into(), "0".into()),
            ("timing.enabled".into(), "true".into()),
            ("precondition.random_drive_writes".into(), "0.25".into()),
            // The device's own timing: no host cache in front of it.
            ("host.cache".into(), "0".into()),
            ("host.threads".into(), "0".into()),
        ];
        // A preset's buffer and FAST log blocks are for its full size.
        if cfg.device.buffer.bytes() > 0 {
            sets.push(("device.buffer".into(), "256KiB".into()));
        }
        if cfg.ftl.log_blocks > 0 {
            sets.push(("ftl.log_blocks".into(), "0".into()));
        }
        cfg.set_many(&sets)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let wl = WorkloadSpec::parse("uniform:requests=20000,read=0.3").unwrap();
        let opts = RunOptions {
            seed: 1,
            verify: true,
            reproducible: true,
            ..Default::default()
        };
        let r = simulate(&cfg, &wl, &opts, &mut |_| true).unwrap_or_else(|e| panic!("{name}: {e}"));
        let lat = r.latency.unwrap();
        assert!(lat.read.p50_us > 0.0 && lat.write.p50_us > 0.0, "{name}");
        // A read takes at least the array read time of the preset's NAND.
        assert!(
            lat.read.p50_us >= cfg.timing.read_us,
            "{name}: {}",
            lat.read.p50_us
        );
    }
}

/// Mean read and write latency (µs) and WAF of a mixed closed-loop workload (one
/// request outstanding) under a scheduler, with one GC victim per trigger.
fn mixed(scheduler: &str) -> (f64, f64, f64) {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.blocks_per_plane".into(), "64".into()),
        ("precondition.random_drive_writes".into(), "1".into()),
        ("ftl.allocation".into(), "stripe".into()),
        ("timing.enabled".into(), "true".into()),
        ("timing.scheduler".into(), scheduler.into()),
        ("gc.max_victims_per_trigger".into(), "1".into()),
        ("interface.queue_depth".into(), "1".into()),
    ])
    .unwrap();
    let r = common::verified_run(&cfg, "uniform:drive_writes=1,read=0.5", 2);
    let l = r.latency.unwrap();
    (l.read.mean_us, l.write.mean_us, r.waf.unwrap())
}

/// SPEC §10: reads overtake GC with `rps`, and also suspend it with `suspend`; the
/// writes pay at most a few percent, and no decision of the FTL changes.
#[test]
fn read_latency_orders_fifo_rps_suspend_at_little_cost_to_writes() {
    let (r_fifo, w_fifo, waf_fifo) = mixed("fifo");
    let (r_rps, w_rps, waf_rps) = mixed("rps");
    let (r_sus, w_sus, waf_sus) = mixed("suspend");
    eprintln!("read {r_fifo:.0} {r_rps:.0} {r_sus:.0} write {w_fifo:.0} {w_rps:.0} {w_sus:.0} µs");
    assert!(
        r_fifo > 3.0 * r_rps,
        "rps: reads no longer wait for whole victims"
    );
    assert!(
        r_rps > r_sus,
        "suspend: reads also interrupt programs and erases"
    );
    for w in [w_rps, w_sus] {
        assert!(
            w <= w_fifo * 1.06,
            "writes {w:.0} µs vs fifo {w_fifo:.0} µs"
        );
    }
    // Striped allocation: the scheduler changes when flash work happens, never what.
    assert_eq!(waf_fifo, waf_rps);
    assert_eq!(waf_fifo, waf_sus);
}

/// `iops=N` makes a synthetic workload open loop: requests arrive 1/N s apart, so a
/// device that keeps up (this one does about 900 IOPS flat out) finishes in about
/// requests/N seconds with latencies near the service time, while the same requests
/// back to back queue behind each other.
#[test]
fn iops_paces_a_synthetic_workload() {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.blocks_per_plane".into(), "64".into()),
        ("timing.enabled".into(), "true".into()),
        ("precondition.random_drive_writes".into(), "0.25".into()),
    ])
    .unwrap();
    let run = |spec: &str| {
        let opts = RunOptions {
            seed: 1,
            verify: false,
            reproducible: true,
            ..Default::default()
        };
        simulate(
            &cfg,
            &WorkloadSpec::parse(spec).unwrap(),
            &opts,
            &mut |_| true,
        )
        .unwrap()
    };
    let paced = run("footprint:growth=0.2,window=4MiB,read=0.3,requests=20000,iops=300");
    let flat_out = run("footprint:growth=0.2,window=4MiB,read=0.3,requests=20000");
    let elapsed = paced.elapsed_s.unwrap();
    eprintln!(
        "paced {elapsed} s, flat out {} s",
        flat_out.elapsed_s.unwrap()
    );
    assert!(
        (elapsed / (19_999.0 / 300.0) - 1.0).abs() < 0.01,
        "{elapsed} s"
    );
    assert!(flat_out.elapsed_s.unwrap() < elapsed / 2.0);
    let (p, f) = (paced.latency.unwrap(), flat_out.latency.unwrap());
    eprintln!(
        "write p50: {} us paced, {} us back to back",
        p.write.p50_us, f.write.p50_us
    );
    assert!(p.write.p50_us < f.write.p50_us && p.read.p50_us < f.read.p50_us);
}
