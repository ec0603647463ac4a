//! Placement policies (`ftl.placement`): the default (`dac`) keeps today's streams;
//! `gc-age:K` sends GC copies to K streams by the age of their block; settings a
//! policy cannot work with are refused naming the key.

use std::collections::BTreeSet;
use zombiesim::ftl::{Ftl, FtlExt, PageMappedFtl};
use zombiesim::{Config, Error};

use crate::common;
use common::verified_run;

/// One plane of 64 blocks × 16 pages, OP 25%, greedy GC.
fn small(settings: &[(&str, &str)]) -> zombiesim::Result<Config> {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.channels".into(), "1".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.dies_per_chip".into(), "1".into()),
        ("flash.planes_per_die".into(), "1".into()),
        ("flash.blocks_per_plane".into(), "64".into()),
        ("flash.pages_per_block".into(), "16".into()),
        ("ftl.over_provisioning".into(), "0.25".into()),
        ("gc.low_watermark".into(), "4".into()),
        ("gc.high_watermark".into(), "5".into()),
    ];
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs)?;
    Ok(cfg)
}

/// Streams of the blocks that hold data after a skewed run (90% of writes to 10% of
/// the pages), checked by the oracle.
fn streams_after_a_skewed_run(cfg: &Config) -> (BTreeSet<u8>, u64) {
    let mut ftl = PageMappedFtl::new(cfg, 1, true).unwrap();
    let n = ftl.logical_pages();
    let mut x = 12345u64;
    for lpn in 0..n {
        ftl.write(lpn).unwrap();
    }
    for _ in 0..(8 * n) {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = x >> 33;
        let lpn = if r % 10 < 9 { r % (n / 10) } else { r % n };
        ftl.write(lpn).unwrap();
    }
    ftl.verify().unwrap();
    let flash = ftl.flash();
    let streams = (0..flash.blocks())
        .filter(|&b| flash.valid_count[b as usize] > 0)
        .map(|b| flash.stream[b as usize])
        .collect();
    (streams, ftl.counters().gc_pages_copied)
}

#[test]
fn the_default_places_host_writes_and_gc_copies_in_one_stream_each() {
    let (streams, copied) = streams_after_a_skewed_run(&small(&[]).unwrap());
    assert!(copied > 0, "GC ran");
    assert_eq!(streams, BTreeSet::from([0, 1]));
}

#[test]
fn gc_age_sends_gc_copies_to_its_age_classes() {
    let cfg = small(&[
        ("ftl.placement", "gc-age:3"),
        ("gc.low_watermark", "6"),
        ("gc.high_watermark", "7"),
    ])
    .unwrap();
    assert_eq!(cfg.ftl.placement.to_string(), "gc-age:3");
    let (streams, copied) = streams_after_a_skewed_run(&cfg);
    assert!(copied > 0, "GC ran");
    // Host stream 0; GC streams 1, 2, 3 (young, older, oldest): cold pages copied
    // again and again reach the oldest class.
    assert!(streams.contains(&0) && streams.contains(&3), "{streams:?}");
    assert!(streams.iter().all(|&s| s <= 3), "{streams:?}");
}

fn refused_key(settings: &[(&str, &str)]) -> String {
    let err = small(settings).and_then(|cfg| {
        zombiesim::ftl::build(&cfg, 1, false)?;
        Ok(())
    });
    match err {
        Err(Error::Config { key, .. }) => key,
        other => panic!("{settings:?} was not refused: {other:?}"),
    }
}

#[test]
fn settings_a_placement_cannot_work_with_are_refused_naming_the_key() {
    // Age classes replace regions; GC needs streams of its own.
    assert_eq!(
        refused_key(&[("ftl.placement", "gc-age:3"), ("ftl.regions", "2")]),
        "ftl.regions"
    );
    assert_eq!(
        refused_key(&[("ftl.placement", "gc-age:3"), ("ftl.gc_frontier", "shared")]),
        "ftl.gc_frontier"
    );
    // Three GC streams per plane need a higher watermark than the default's.
    assert_eq!(
        refused_key(&[("ftl.placement", "gc-age:3"), ("gc.low_watermark", "3")]),
        "gc.low_watermark"
    );
    // Bad values name the key and list the policies.
    for bad in ["gc-age", "gc-age:1", "gc-age:x", "nope"] {
        let err = small(&[("ftl.placement", bad)]).unwrap_err().to_string();
        assert!(err.contains("ftl.placement"), "{bad}: {err}");
    }
    // The block-mapped FTLs place pages by their mapping.
    let mut cfg = Config::preset("default").unwrap();
    let err = cfg
        .set_many(&[
            ("ftl.kind".into(), "fast".into()),
            ("ftl.placement".into(), "gc-age:2".into()),
        ])
        .unwrap_err();
    assert!(
        matches!(&err, Error::Config { key, .. } if key == "ftl.placement"),
        "{err}"
    );
}

/// Room for six streams per plane: 128 blocks, watermarks of 6.
const SIX_STREAMS: &[(&str, &str)] = &[
    ("flash.blocks_per_plane", "128"),
    ("gc.low_watermark", "6"),
    ("gc.high_watermark", "7"),
];

#[test]
fn sepbit_and_write_count_use_their_classes() {
    let mut settings = SIX_STREAMS.to_vec();
    settings.push(("ftl.placement", "sepbit"));
    let (streams, copied) = streams_after_a_skewed_run(&small(&settings).unwrap());
    assert!(copied > 0, "GC ran");
    // Classes 1-2 (host streams 0, 1) and 3-6 (GC streams 2..5): both host classes,
    // and GC copies beyond class 3 once ℓ is learnt.
    assert!(streams.contains(&0) && streams.contains(&1), "{streams:?}");
    assert!(streams.iter().any(|&s| s >= 3), "{streams:?}");
    assert!(streams.iter().all(|&s| s <= 5), "{streams:?}");

    settings.pop();
    settings.push(("ftl.placement", "write-count:3"));
    let (streams, _) = streams_after_a_skewed_run(&small(&settings).unwrap());
    // Hot pages (written 4+ times) in host class 2, copies in GC classes 3..5.
    assert!(streams.contains(&2), "{streams:?}");
    assert!(streams.iter().all(|&s| s <= 5), "{streams:?}");
}

/// A verified run on the six-stream device, preconditioned with the workload itself.
fn report(settings: &[(&str, &str)], workload: &str) -> zombiesim::Report {
    let mut pairs = SIX_STREAMS.to_vec();
    pairs.extend_from_slice(&[
        ("precondition.random_drive_writes", "1"),
        ("precondition.pattern", "workload"),
    ]);
    pairs.extend_from_slice(settings);
    let rep = verified_run(&small(&pairs).unwrap(), workload, 7);
    assert!(rep.run.verified);
    rep
}

fn waf(settings: &[(&str, &str)], workload: &str) -> f64 {
    report(settings, workload).waf.expect("pages were written")
}

#[test]
fn the_placement_oracle_groups_pages_by_their_death_and_beats_the_guesses() {
    let w = "hotcold:r=0.9,f=0.1,drive_writes=4";
    let dac = waf(&[], w);
    let sepbit = waf(&[("ftl.placement", "sepbit")], w);
    let oracle = waf(&[("ftl.placement", "oracle:4")], w);
    assert!(
        oracle < 0.8 * dac && oracle < sepbit,
        "oracle {oracle}, sepbit {sepbit}, dac {dac}"
    );
    // It knows the device-level stream only: a host write buffer is refused.
    let err = small(&[("ftl.placement", "oracle:4"), ("host.buffer", "1MiB")]).unwrap_err();
    assert!(
        matches!(&err, Error::Config { key, .. } if key == "ftl.placement"),
        "{err}"
    );
}

/// `ftl.placement = "oracle"` is the best of an envelope: death-ordered members and the
/// real placements the schemes run, each giving inside it the WAF it gives alone, so no
/// real placement beats it. With the victim oracle's envelope it is refused.
#[test]
fn the_placement_oracle_is_the_best_of_its_envelope_and_no_real_placement_beats_it() {
    let w = "hotcold:r=0.9,f=0.1,drive_writes=3";
    let wide = [("gc.low_watermark", "8"), ("gc.high_watermark", "9")];
    let with = |extra: &[(&str, &str)]| {
        let mut s = wide.to_vec();
        s.extend_from_slice(extra);
        report(&s, w)
    };
    let best = with(&[("ftl.placement", "oracle")]);
    let o = best
        .oracle
        .as_ref()
        .expect("the envelope's members are reported");
    let names: Vec<&str> = o.candidates.iter().map(|c| c.schedule.as_str()).collect();
    assert_eq!(
        names,
        [
            "oracle:2",
            "oracle:3",
            "oracle:4",
            "oracle:6",
            "none",
            "none (shared GC frontier)",
            "sepbit",
            "midas",
            "write-count:4"
        ]
    );
    let lowest = o
        .candidates
        .iter()
        .filter_map(|c| c.waf)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(best.waf, Some(lowest));
    for (placement, frontier, name) in [
        ("sepbit", "separate", "sepbit"),
        ("write-count:4", "separate", "write-count:4"),
        ("dac", "shared", "none (shared GC frontier)"),
        ("oracle:3", "separate", "oracle:3"),
    ] {
        let alone = with(&[("ftl.placement", placement), ("ftl.gc_frontier", frontier)]);
        let member = o.candidates.iter().find(|c| c.schedule == name).unwrap();
        assert_eq!(alone.waf, member.waf, "{name}");
        assert!(best.waf.unwrap() <= alone.waf.unwrap(), "{name}");
    }
    let err = small(&[("ftl.placement", "oracle"), ("gc.policy", "oracle")]).unwrap_err();
    assert!(
        matches!(&err, Error::Config { key, .. } if key == "ftl.placement"),
        "{err}"
    );
}

/// The WAF of a run and the report's `placement_model`.
fn midas_run(workload: &str) -> (f64, zombiesim::placement::PlacementModel) {
    let rep = report(&[("ftl.placement", "midas:4")], workload);
    (
        rep.waf.unwrap(),
        rep.placement_model.expect("midas reports its model"),
    )
}

#[test]
fn midas_builds_a_chain_on_skewed_writes_and_keeps_to_greedy_on_uniform_ones() {
    // 90% of writes to 10% of the pages: a chain of FIFO groups, well under greedy,
    // near what its model predicted.
    let w = "hotcold:r=0.9,f=0.1,drive_writes=8";
    let greedy = waf(&[], w);
    let (midas, model) = midas_run(w);
    assert!(!model.sizes.is_empty() && model.modelled > 0, "{model:?}");
    assert!(midas < 0.85 * greedy, "midas {midas}, greedy {greedy}");
    assert!(
        (midas / model.predicted_waf - 1.0).abs() < 0.25,
        "midas {midas}, predicted {model:?}"
    );
    // Uniform writes: no chain pays, and MiDAS is the tail's greedy.
    let w = "uniform:drive_writes=6";
    let greedy = waf(&[], w);
    let (midas, model) = midas_run(w);
    assert!(model.sizes.is_empty(), "{model:?}");
    assert!(
        (midas / greedy - 1.0).abs() < 0.02,
        "midas {midas}, greedy {greedy}"
    );
}

#[test]
fn midas_takes_the_pages_the_writes_leave_alone_out_of_its_last_group() {
    // Every write to half the pages: the other half is written by the fill alone, and
    // the model counts it static (greedy never copies it), within a tenth.
    let rep = report(
        &[("ftl.placement", "midas:4")],
        "hotcold:r=1.0,f=0.5,drive_writes=6",
    );
    let model = rep.placement_model.expect("midas reports its model");
    let half = rep.device.logical_pages as f64 / 2.0;
    assert!(model.modelled > 0, "{model:?}");
    assert!(
        (model.static_pages as f64 / half - 1.0).abs() < 0.1,
        "{model:?}, half the pages {half}"
    );
    // Uniform writes leave nothing alone.
    let (_, model) = midas_run("uniform:drive_writes=6");
    assert!(
        (model.static_pages as f64) < 0.05 * half,
        "{model:?}, half the pages {half}"
    );
}
