//! Replaying a real block trace through the simulator, counting and timed.

use std::path::PathBuf;

use crate::common::sample;
use zombiesim::trace::{ReadOptions, RemapMode, TraceFormat};
use zombiesim::workload::TraceSpec;
use zombiesim::{simulate_trace, Config, Error, RunOptions};

fn msr_sample() -> PathBuf {
    sample("msr-src1_0-excerpt.csv")
}

fn spec(path: PathBuf, remap: RemapMode) -> TraceSpec {
    TraceSpec {
        path,
        format: TraceFormat::Msr,
        options: ReadOptions::default(),
        remap,
        limit: None,
    }
}

fn device(timing: bool) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.blocks_per_plane".into(), "64".into()),
        ("timing.enabled".into(), timing.to_string()),
        ("precondition.random_drive_writes".into(), "0.5".into()),
    ])
    .unwrap();
    cfg
}

fn opts() -> RunOptions {
    RunOptions {
        seed: 1,
        verify: true,
        reproducible: true,
        ..Default::default()
    }
}

#[test]
fn the_msr_sample_replays_timed_in_open_loop() {
    let path = msr_sample();
    let r = simulate_trace(
        &device(true),
        &spec(path, RemapMode::Modulo),
        &opts(),
        &mut |_| true,
    )
    .unwrap();
    let info = r.trace.as_ref().unwrap();
    assert_eq!(info.records, 10_001);
    assert_eq!(r.host.requests, 10_001 - info.flushes);
    let lat = r.latency.as_ref().unwrap();
    assert_eq!(lat.read.count + lat.write.count, r.host.requests);
    assert!(lat.read.count > 7000 && lat.write.count > 2000);
    assert!(lat.read.p50_us > 0.0 && lat.write.p99_us >= lat.write.p50_us);
    // The sample spans minutes of wall-clock time; open-loop replay keeps its pace.
    assert!(r.elapsed_s.unwrap() > 60.0, "elapsed {:?}", r.elapsed_s);
    assert!(info.remapped.remapped_requests > 0);
}

#[test]
fn compact_remapping_packs_the_footprint_and_counting_matches_timing() {
    let path = msr_sample();
    let counted = simulate_trace(
        &device(false),
        &spec(path.clone(), RemapMode::Compact),
        &opts(),
        &mut |_| true,
    )
    .unwrap();
    let timed = simulate_trace(
        &device(true),
        &spec(path, RemapMode::Compact),
        &opts(),
        &mut |_| true,
    )
    .unwrap();
    assert_eq!(counted.host, timed.host);
    assert!(counted.latency.is_none());
    let info = counted.trace.unwrap();
    assert!(info.remapped.distinct_pages > 0);
}

#[test]
fn a_trace_beyond_the_device_is_an_error_without_remapping() {
    let path = msr_sample();
    match simulate_trace(
        &device(false),
        &spec(path, RemapMode::None),
        &opts(),
        &mut |_| true,
    ) {
        Err(Error::Workload { reason, .. }) => assert!(reason.contains("remap"), "{reason}"),
        other => panic!("expected a remap error, got {:?}", other.map(|r| r.waf)),
    }
}

#[test]
fn precondition_pattern_workload_replays_the_trace_s_own_writes() {
    let path = msr_sample();
    let mut cfg = device(false);
    cfg.set("precondition.pattern", "workload").unwrap();
    let own = simulate_trace(
        &cfg,
        &spec(path.clone(), RemapMode::Modulo),
        &opts(),
        &mut |_| true,
    )
    .unwrap();
    cfg.set("precondition.pattern", "uniform").unwrap();
    let uniform =
        simulate_trace(&cfg, &spec(path, RemapMode::Modulo), &opts(), &mut |_| true).unwrap();
    // The same amount of preconditioning, written where the trace writes (read again
    // from its start as often as needed), not uniformly.
    assert_eq!(
        own.precondition.host_write_pages,
        uniform.precondition.host_write_pages
    );
    assert_ne!(
        own.precondition.flash_programs,
        uniform.precondition.flash_programs
    );
}

#[test]
fn background_gc_works_in_idle_gaps_and_relieves_foreground_gc() {
    let path = msr_sample();
    let mut cfg = device(true);
    cfg.set_many(&[
        ("flash.blocks_per_plane".into(), "32".into()),
        ("ftl.over_provisioning".into(), "0.2".into()),
    ])
    .unwrap();
    let plain = simulate_trace(
        &cfg,
        &spec(path.clone(), RemapMode::Modulo),
        &opts(),
        &mut |_| true,
    )
    .unwrap();
    cfg.set_many(&[
        ("gc.background".into(), "true".into()),
        ("gc.background_watermark".into(), "8".into()),
    ])
    .unwrap();
    let bg = simulate_trace(&cfg, &spec(path, RemapMode::Modulo), &opts(), &mut |_| true).unwrap();
    assert_eq!(plain.gc.background_victims, 0);
    assert!(bg.gc.background_victims > 0, "{:?}", bg.gc);
    assert!(
        bg.gc.invocations < plain.gc.invocations,
        "foreground GC invocations: {} with background GC, {} without",
        bg.gc.invocations,
        plain.gc.invocations
    );
    assert_eq!(bg.host, plain.host);
}

/// Times the simulated clock cannot hold are refused, naming what to change: a record
/// centuries after the first (nanoseconds read as milliseconds) names its file and
/// line, and an `interface.speed` that would issue a request that late names the key.
/// Both used to be clamped, and the timed run then overflowed its channel timelines.
#[test]
fn times_beyond_the_clock_are_refused_not_clamped() {
    let path = std::env::temp_dir().join(format!("zs-late-{}.disksim", std::process::id()));
    std::fs::write(
        &path,
        "0 0 0 8 0\n5000000 0 8 8 0\n25000000000000 0 16 8 1\n",
    )
    .unwrap();
    let disksim = |time_scale: f64| TraceSpec {
        path: path.clone(),
        format: TraceFormat::Disksim,
        options: ReadOptions {
            time_scale,
            ..ReadOptions::default()
        },
        remap: RemapMode::Modulo,
        limit: None,
    };
    let cfg = device(true);
    let run = |cfg: &Config, spec: &TraceSpec| simulate_trace(cfg, spec, &opts(), &mut |_| true);
    match run(&cfg, &disksim(1.0)) {
        Err(Error::Input { line, reason, .. }) => {
            assert_eq!(line, 3);
            assert!(reason.contains("--time-scale"), "{reason}");
        }
        other => panic!("expected an input error, got {:?}", other.map(|r| r.waf)),
    }
    // As nanoseconds the trace spans 25,000 s: fine at full speed.
    assert!(run(&cfg, &disksim(1e-6)).is_ok());
    // Slowed down a billion times, its last request would issue 800 years on.
    let mut slow = cfg.clone();
    slow.set_many(&[("interface.speed".into(), "1e-9".into())])
        .unwrap();
    match run(&slow, &disksim(1e-6)) {
        Err(Error::Config { key, reason, .. }) => {
            assert_eq!(key, "interface.speed");
            assert!(reason.contains("2^62 ns"), "{reason}");
        }
        other => panic!("expected a config error, got {:?}", other.map(|r| r.waf)),
    }
    std::fs::remove_file(&path).ok();
}
