//! DFTL: the page-mapped FTL with its mapping table in translation pages on flash and
//! a cached mapping table (CMT) in SRAM.
//!
//! Random write / trim / read sequences against a plain map with tiny CMTs (directly
//! and through the device with a write buffer and a power loss), the write
//! amplification of a CMT that covers every page (as page mapping) and of a small
//! one (translation traffic), and verified runs of every capability DFTL offers.

use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::HashMap;
use zombiesim::device::{Command, Device};
use zombiesim::ftl::{DftlFtl, Ftl, FtlExt, PageMappedFtl};
use zombiesim::stats::{Cause, Counters};
use zombiesim::workload::Op;
use zombiesim::Config;

use crate::common;
use common::{small_device, verified_run};

#[derive(Clone, Debug)]
enum HostOp {
    Write(u64),
    Trim(u64),
    Read(u64),
}

/// 2 channels × 2 planes × 16 blocks × 8 pages of 512 B (128 mappings per
/// translation page: a few translation pages), DFTL with a CMT of `entries`.
fn small_dftl(entries: u64, policy: &str) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.channels".into(), "2".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.planes_per_die".into(), "2".into()),
        ("flash.blocks_per_plane".into(), "16".into()),
        ("flash.pages_per_block".into(), "8".into()),
        ("flash.page_size".into(), "512".into()),
        ("ftl.over_provisioning".into(), "0.8".into()),
        ("gc.policy".into(), policy.into()),
        ("ftl.kind".into(), "dftl".into()),
        ("ftl.cmt_entries".into(), entries.to_string()),
    ])
    .unwrap();
    cfg.validate().unwrap();
    cfg
}

fn ops(logical: u64) -> impl Strategy<Value = Vec<HostOp>> {
    // Skew towards a hot subset so GC sees blocks with varied valid counts.
    let lpn = prop_oneof![3 => 0..16u64, 1 => 0..logical];
    let op = prop_oneof![
        8 => lpn.clone().prop_map(HostOp::Write),
        1 => lpn.clone().prop_map(HostOp::Trim),
        2 => lpn.prop_map(HostOp::Read),
    ];
    prop::collection::vec(op, 1..2500)
}

fn fail(e: zombiesim::Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

fn check_ftl(cfg: &Config, seq: &[HostOp]) -> Result<(), TestCaseError> {
    let mut ftl = DftlFtl::new(cfg, 42, true).unwrap();
    prop_assert!(ftl.translation_pages() >= 2);
    let mut reference: HashMap<u64, ()> = HashMap::new();
    for op in seq {
        match *op {
            HostOp::Write(l) => {
                ftl.write(l).map_err(fail)?;
                reference.insert(l, ());
            }
            HostOp::Trim(l) => {
                ftl.trim(l).map_err(fail)?;
                reference.remove(&l);
            }
            // The oracle inside the FTL checks that the read finds the newest version.
            HostOp::Read(l) => ftl.read(l).map_err(fail)?,
        }
        prop_assert!(ftl.cmt_len() as u64 <= cfg.ftl.cmt_entries);
    }
    ftl.verify().map_err(fail)?;
    for l in 0..ftl.logical_pages() {
        prop_assert_eq!(
            ftl.lookup(l).is_some(),
            reference.contains_key(&l),
            "page {}",
            l
        );
    }
    let c = ftl.counters();
    prop_assert_eq!(
        c.cmt_hits + c.cmt_misses,
        c.host_write_pages + c.host_read_pages + c.host_trim_pages,
        "every host page operation looks its mapping up once"
    );
    prop_assert_eq!(
        c.programs.total(),
        c.host_write_pages + c.gc_pages_copied + c.programs.get(Cause::Translation)
    );
    Ok(())
}

/// The same through the device, with a write buffer of 8 pages and a power loss
/// half-way (the buffer's dirty pages are lost; flash keeps the older copies).
fn check_device(cfg: &Config, seq: &[HostOp]) -> Result<(), TestCaseError> {
    let mut cfg = cfg.clone();
    cfg.set("device.buffer", "4KiB").unwrap();
    let mut dev = Device::new(&cfg, 42, true).unwrap();
    for (i, op) in seq.iter().enumerate() {
        if i == seq.len() / 2 {
            dev.power_loss().map_err(fail)?;
            dev.verify().map_err(fail)?;
        }
        let cmd = match *op {
            HostOp::Write(l) => Command::new(Op::Write, l, 1),
            HostOp::Trim(l) => Command::new(Op::Trim, l, 1),
            HostOp::Read(l) => Command::new(Op::Read, l, 1),
        };
        dev.submit(0, &cmd).map_err(fail)?;
    }
    dev.submit(0, &Command::new(Op::Flush, 0, 0))
        .map_err(fail)?;
    dev.verify().map_err(fail)?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn tiny_cmts_match_the_reference(seq in ops(280)) {
        for entries in [1, 4, 64] {
            for policy in ["greedy", "cost-benefit"] {
                check_ftl(&small_dftl(entries, policy), &seq)?;
            }
        }
    }

    #[test]
    fn tiny_cmts_survive_a_buffer_and_a_power_loss(seq in ops(280)) {
        for entries in [1, 4, 64] {
            check_device(&small_dftl(entries, "greedy"), &seq)?;
        }
    }
}

/// 4 planes × 64 blocks × 64 pages of 4 KiB, OP 25%, greedy GC.
fn medium(kind: &str, entries: Option<u64>) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.blocks_per_plane".into(), "64".into()),
        ("flash.pages_per_block".into(), "64".into()),
        ("ftl.over_provisioning".into(), "0.25".into()),
        ("gc.policy".into(), "greedy".into()),
        ("ftl.kind".into(), kind.into()),
    ];
    if let Some(n) = entries {
        pairs.push(("ftl.cmt_entries".into(), n.to_string()));
    }
    cfg.set_many(&pairs).unwrap();
    cfg.validate().unwrap();
    cfg
}

/// Fill the device sequentially, warm it with one drive of uniform random 4 KiB
/// writes, then measure two more drives of them.
fn uniform_random(cfg: &Config) -> (Counters, Box<dyn Ftl>) {
    let mut ftl = zombiesim::ftl::build(cfg, 7, true).unwrap();
    let logical = ftl.logical_pages();
    for l in 0..logical {
        ftl.write(l).unwrap();
    }
    let mut rng = Pcg64Mcg::seed_from_u64(11);
    for _ in 0..logical {
        ftl.write(rng.random_range(0..logical)).unwrap();
    }
    let before = ftl.counters();
    for _ in 0..2 * logical {
        ftl.write(rng.random_range(0..logical)).unwrap();
    }
    ftl.verify().unwrap();
    (ftl.counters().since(&before), ftl)
}

#[test]
fn uniform_random_writes_cost_translation_traffic_only_with_a_small_cmt() {
    let (page, _) = uniform_random(&medium("page", None));
    let logical = zombiesim::ftl::build(&medium("page", None), 1, false)
        .unwrap()
        .logical_pages();
    let (full, _) = uniform_random(&medium("dftl", Some(logical)));
    let (small, _) = uniform_random(&medium("dftl", Some(logical / 100)));
    let (wp, wf, ws) = (page.waf(), full.waf(), small.waf());
    eprintln!("WAF: page {wp:.4}, DFTL full CMT {wf:.4}, DFTL 1% CMT {ws:.4}");
    eprintln!(
        "1% CMT: {} translation programs, {} translation reads, {} hits, {} misses; full: {} translation programs",
        small.programs.get(Cause::Translation),
        small.reads.get(Cause::Translation),
        small.cmt_hits,
        small.cmt_misses,
        full.programs.get(Cause::Translation),
    );
    // A CMT holding every mapping never evicts: page mapping's write amplification.
    assert!(
        (wf - wp).abs() <= 0.02 * wp,
        "page {wp}, DFTL full CMT {wf}"
    );
    assert_eq!(full.cmt_misses, 0, "every mapping is cached once warm");
    assert_eq!(full.cmt_hits, full.host_write_pages);
    assert_eq!(full.programs.get(Cause::Translation), 0);
    // A small CMT misses nearly always and writes translation pages back.
    assert_eq!(small.cmt_hits + small.cmt_misses, small.host_write_pages);
    assert!(small.cmt_misses as f64 > 0.9 * small.host_write_pages as f64);
    assert!(small.programs.get(Cause::Translation) > 0);
    assert!(small.reads.get(Cause::Translation) > 0);
    assert!(ws > 1.1 * wp, "page {wp}, DFTL 1% CMT {ws}");
}

#[test]
fn memory_includes_the_cmt_reported_apart() {
    let cfg = medium("dftl", Some(1000));
    let dftl = DftlFtl::new(&cfg, 1, false).unwrap();
    let page = PageMappedFtl::new(&medium("page", None), 1, false).unwrap();
    let cmt = dftl.cmt_bytes();
    assert!((1000 * 20..=1000 * 64).contains(&cmt), "{cmt} B");
    assert!(dftl.memory_bytes() >= page.memory_bytes() + cmt);
}

#[test]
fn translation_pages_that_do_not_fit_are_refused_naming_the_over_provisioning() {
    // Without translation pages the spare blocks just suffice.
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.channels".into(), "1".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.planes_per_die".into(), "1".into()),
        ("flash.blocks_per_plane".into(), "64".into()),
        ("flash.pages_per_block".into(), "8".into()),
        ("flash.page_size".into(), "512".into()),
        ("gc.low_watermark".into(), "1".into()),
        ("gc.high_watermark".into(), "1".into()),
        ("ftl.gc_frontier".into(), "shared".into()),
        ("ftl.reserved_blocks".into(), "0".into()),
    ])
    .unwrap();
    // 480 logical pages fill 60 of the 64 blocks, leaving the 4 spare blocks DFTL's GC
    // needs (watermark 1 + 2 open blocks: data and translation + 1); the 4 translation
    // pages need a 61st block.
    let op = 512.0 / 480.5 - 1.0;
    cfg.set("ftl.over_provisioning", &op.to_string()).unwrap();
    cfg.validate().unwrap();
    assert!(PageMappedFtl::new(&cfg, 1, false).is_ok());
    cfg.set("ftl.kind", "dftl").unwrap();
    let err = DftlFtl::new(&cfg, 1, false)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("ftl.over_provisioning") && err.contains("translation pages"),
        "{err}"
    );
}

/// The small device of the device tests with DFTL and a CMT of 64 entries, a device
/// buffer and a host buffer, GC watermarks with room for extra streams.
fn dftl_device(settings: &[(&str, &str)]) -> Config {
    let mut pairs = vec![
        ("ftl.kind", "dftl"),
        ("ftl.cmt_entries", "64"),
        ("flash.blocks_per_plane", "64"),
        ("gc.low_watermark", "6"),
        ("gc.high_watermark", "6"),
    ];
    pairs.extend_from_slice(settings);
    small_device(&pairs)
}

const HOT: &str = "hotcold:r=0.9,f=0.1,drive_writes=2,read=0.2,iops=100000";
/// The same at a rate that leaves the device idle between requests (and lasts long
/// enough for refreshes and a restart).
const IDLE: &str = "hotcold:r=0.9,f=0.1,drive_writes=2,read=0.2,iops=5000";

/// What a case runs, whether DFTL declares it, the settings it takes.
type Case = (&'static str, bool, Vec<(&'static str, &'static str)>);

/// Each capability DFTL declares runs verified (integrity oracle, invariants, the
/// lost-update check of the CMT) with translation traffic.
#[test]
fn every_declared_capability_runs_verified() {
    let caps = zombiesim::ftl::Capabilities::of(zombiesim::config::FtlKind::Dftl);
    assert!(!caps.content);
    let buffers = [("device.buffer", "64KiB"), ("host.buffer", "256KiB")];
    let cases: Vec<Case> = vec![
        (
            "zombie scores and the zombie block",
            caps.zombie_scores && caps.streams,
            vec![("gc.policy", "z-greedy"), ("gc.zombie_block", "true")],
        ),
        (
            "hot/cold regions",
            caps.streams,
            vec![("ftl.regions", "2"), ("gc.policy", "cost-benefit")],
        ),
        (
            "bounded GC",
            caps.bounded_gc,
            vec![
                ("gc.max_victims_per_trigger", "1"),
                ("gc.hard_watermark", "2"),
            ],
        ),
        (
            "background GC",
            caps.background_gc,
            vec![
                ("timing.enabled", "true"),
                ("gc.background", "true"),
                ("gc.background_watermark", "10"),
            ],
        ),
        (
            "ShadowGC with the skip policy",
            caps.shadow_gc,
            vec![
                ("gc.zombie_block", "true"),
                ("gc.fast_write", "true"),
                ("gc.shadow_reads", "true"),
                ("gc.skip_shadows", "true"),
                ("device.buffer_nonvolatile", "true"),
                ("ftl.fast_retention_s", "0.3"),
                ("ftl.power_off_s", "0.1"),
                ("device.restart_at", "[1.0]"),
            ],
        ),
    ];
    for (what, declared, settings) in cases {
        assert!(declared, "{what} is declared");
        let mut all = buffers.to_vec();
        all.extend(settings);
        let cfg = dftl_device(&all);
        let wl = if cfg.gc.background || cfg.gc.fast_write {
            IDLE
        } else {
            HOT
        };
        let r = verified_run(&cfg, wl, 3);
        let translation = r.flash.programs_by_cause.get(Cause::Translation);
        eprintln!(
            "{what}: WAF {:?}, {translation} translation programs",
            r.waf
        );
        assert!(translation > 0, "{what}: no translation traffic");
        if cfg.gc.fast_write {
            let refresh = r.refresh.expect("a clock is kept");
            assert_eq!(refresh.restarts, 1);
            assert!(refresh.fast_blocks > 0, "{what}: {refresh:?}");
        }
    }
}
