//! The SuperBlock FTL: random write / trim / read sequences against a plain map, on
//! its own and under a device write buffer with power loss; its write amplification
//! between page mapping's and block mapping's; a busy superblock staying within its
//! own blocks.

use proptest::prelude::*;
use std::collections::{HashMap, HashSet};
use zombiesim::device::{Command, Device, Payload};
use zombiesim::ftl::{Ftl, FtlExt, PageMappedFtl, SuperblockFtl};
use zombiesim::stats::Cause;
use zombiesim::workload::Op;
use zombiesim::Config;

use crate::common;
use common::{small_device, verified_run};

/// 2 planes × 16 blocks × 8 pages, OP 60%, superblocks of 2 logical blocks: 10
/// superblocks of 16 pages, 12 spare blocks (one extra block each, two for the first).
fn tiny(settings: &[(&str, &str)]) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.channels".into(), "2".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.planes_per_die".into(), "1".into()),
        ("flash.blocks_per_plane".into(), "16".into()),
        ("flash.pages_per_block".into(), "8".into()),
        ("ftl.over_provisioning".into(), "0.6".into()),
        ("ftl.kind".into(), "superblock".into()),
        ("ftl.superblock_blocks".into(), "2".into()),
        ("precondition.random_drive_writes".into(), "0".into()),
    ];
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs).unwrap();
    cfg.validate().unwrap();
    cfg
}

/// A small xorshift generator (the tests need no statistical quality, only spread).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn the_tiny_geometry_shares_the_spare_blocks_out_floor_first() {
    let ftl = SuperblockFtl::new(&tiny(&[]), true).unwrap();
    assert_eq!(ftl.logical_pages(), 160);
    assert_eq!(ftl.superblocks(), 10);
    // 12 spare blocks, one held back: 11 over 10 superblocks.
    assert_eq!(ftl.cap(0), 2 + 2);
    for s in 1..10 {
        assert_eq!(ftl.cap(s), 2 + 1, "superblock {s}");
    }
    assert_eq!(ftl.free_blocks(), 32);
    assert_eq!(ftl.held_back_pages(), 32 * 8);
    ftl.verify().unwrap();
}

#[derive(Clone, Debug)]
enum FtlOp {
    Write(u64),
    Trim(u64),
    Read(u64),
}

fn ftl_ops(logical: u64) -> impl Strategy<Value = Vec<FtlOp>> {
    // Skew towards a hot subset so collections see blocks with varied valid counts.
    let lpn = prop_oneof![3 => 0..40u64, 1 => 0..logical];
    let op = prop_oneof![
        8 => lpn.clone().prop_map(FtlOp::Write),
        1 => lpn.clone().prop_map(FtlOp::Trim),
        2 => lpn.prop_map(FtlOp::Read),
    ];
    prop::collection::vec(op, 600..2500)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The FTL agrees with a map of what was last written: every read resolves to
    /// the newest version (the oracle checks it), trimmed pages are unmapped, and
    /// every invariant holds at the end, after collections.
    #[test]
    fn random_writes_trims_and_reads_match_a_map(seq in ftl_ops(160)) {
        let mut ftl = SuperblockFtl::new(&tiny(&[]), true).unwrap();
        let mut model: HashMap<u64, u64> = HashMap::new();
        let mut next = 1u64;
        // Fill every superblock to its cap first, so the sequence collects.
        for lpn in 0..160 {
            ftl.write_value(lpn, next).unwrap();
            model.insert(lpn, next);
            next += 1;
        }
        for op in &seq {
            match *op {
                FtlOp::Write(l) => {
                    ftl.write_value(l, next).unwrap();
                    model.insert(l, next);
                    next += 1;
                }
                FtlOp::Trim(l) => {
                    ftl.trim(l).unwrap();
                    model.remove(&l);
                }
                FtlOp::Read(l) => {
                    ftl.read(l).unwrap();
                    prop_assert_eq!(ftl.mapped(l).is_some(), model.contains_key(&l));
                    prop_assert_eq!(
                        ftl.oracle().unwrap().content_of(l as usize),
                        model.get(&l).copied()
                    );
                }
            }
            for s in 0..ftl.superblocks() {
                prop_assert!(ftl.owned(s) <= ftl.cap(s));
            }
        }
        ftl.verify().unwrap();
        prop_assert_eq!(ftl.valid_pages(), model.len() as u64);
        for l in 0..160 {
            prop_assert_eq!(ftl.mapped(l).is_some(), model.contains_key(&l));
        }
        let c = ftl.counters();
        prop_assert!(c.gc_invocations > 0, "no collection ran");
        prop_assert_eq!(c.gc_invocations, c.gc_victims);
        prop_assert_eq!(c.programs.get(Cause::Gc), c.gc_pages_copied);
        prop_assert_eq!(c.erases.total(), c.erases.get(Cause::Gc));
        prop_assert_eq!(c.erases.total(), c.gc_victims);
    }
}

#[derive(Clone, Debug)]
enum Step {
    Write(u64),
    Read(u64),
    Trim(u64),
    Flush,
    PowerLoss,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let lpn = prop_oneof![3 => 0..40u64, 1 => 0..160u64];
    let step = prop_oneof![
        10 => lpn.clone().prop_map(Step::Write),
        3 => lpn.clone().prop_map(Step::Read),
        1 => lpn.prop_map(Step::Trim),
        1 => Just(Step::Flush),
    ];
    (
        prop::collection::vec(step.clone(), 300..1200),
        prop::collection::vec(step, 300..1200),
    )
        .prop_map(|(mut a, b)| {
            a.push(Step::PowerLoss);
            a.extend(b);
            a
        })
}

fn submit(dev: &mut Device, op: Op, lpn: u64, value: u64) {
    let mut cmd = Command::new(op, lpn, u32::from(op != Op::Flush));
    if op == Op::Write {
        cmd.payload = Payload::Same(value);
    }
    dev.submit(0, &cmd).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Under an LRU device buffer (write-backs are `Cause::Buffer` writes), with a
    /// power loss mid-run: reads return the newest write, exactly the pages the
    /// buffer held dirty are lost and read back an older version, and the FTL's
    /// invariants and the oracle hold.
    #[test]
    fn a_buffered_device_with_power_loss_keeps_every_acknowledged_page(
        seq in steps(),
        buffer_pages in prop::sample::select(vec![4u64, 16, 32]),
    ) {
        let cfg = tiny(&[
            ("device.buffer", &format!("{}KiB", buffer_pages * 4)),
            ("device.buffer_policy", "lru"),
        ]);
        let mut dev = Device::new(&cfg, 3, true).unwrap();
        let n = 160usize;
        let mut latest: Vec<Option<u64>> = vec![None; n];
        for l in 0..n as u64 {
            submit(&mut dev, Op::Write, l, 1_000_000 + l);
            latest[l as usize] = Some(1_000_000 + l);
        }
        let mut next = 1u64;
        let mut losses = 0;
        for s in seq {
            match s {
                Step::Write(l) => {
                    submit(&mut dev, Op::Write, l, next);
                    latest[l as usize] = Some(next);
                    next += 1;
                }
                Step::Read(l) => {
                    submit(&mut dev, Op::Read, l, 0);
                    prop_assert_eq!(dev.content_of(l), latest[l as usize]);
                }
                Step::Trim(l) => {
                    submit(&mut dev, Op::Trim, l, 0);
                    latest[l as usize] = None;
                }
                Step::Flush => submit(&mut dev, Op::Flush, 0, 0),
                Step::PowerLoss => {
                    losses += 1;
                    let lost: HashSet<u64> = dev.power_loss().unwrap().into_iter().collect();
                    for (i, want) in latest.iter_mut().enumerate() {
                        let got = dev.content_of(i as u64);
                        if lost.contains(&(i as u64)) {
                            prop_assert_ne!(got, *want, "page {} was lost but reads its newest write", i);
                            *want = got;
                        } else {
                            prop_assert_eq!(got, *want, "page {} was not lost", i);
                        }
                    }
                    dev.verify().unwrap();
                }
            }
        }
        prop_assert_eq!(losses, 1);
        submit(&mut dev, Op::Flush, 0, 0);
        dev.verify().unwrap();
        for (i, want) in latest.iter().enumerate() {
            prop_assert_eq!(dev.content_of(i as u64), *want);
        }
        let c = dev.counters();
        prop_assert!(c.gc_invocations > 0, "no collection ran");
        prop_assert!(c.programs.get(Cause::Buffer) > 0);
    }
}

/// WAF of `pages` uniform random page writes over the first `logical` pages, after
/// a sequential fill of them.
fn random_waf(ftl: &mut dyn Ftl, logical: u64, pages: u64, seed: u64) -> f64 {
    for lpn in 0..logical {
        ftl.write(lpn).unwrap();
    }
    let before = ftl.counters();
    let mut rng = Rng(seed);
    for _ in 0..pages {
        ftl.write(rng.below(logical)).unwrap();
    }
    ftl.verify().unwrap();
    let after = ftl.counters();
    let host = after.host_write_pages - before.host_write_pages;
    let programs = after.programs.total() - before.programs.total();
    programs as f64 / host as f64
}

#[test]
fn uniform_random_writes_cost_more_than_page_mapping_and_far_less_than_block_mapping() {
    // 4 planes × 128 blocks × 16 pages, OP 26%: 406 logical blocks in 102 superblocks
    // of 4 (the last of 2), each with one extra block (two for the first few).
    let geometry = [
        ("flash.blocks_per_plane", "128"),
        ("ftl.over_provisioning", "0.26"),
    ];
    let page_cfg = small_device(&geometry);
    let sb_cfg = small_device(&[
        geometry[0],
        geometry[1],
        ("ftl.kind", "superblock"),
        ("ftl.superblock_blocks", "4"),
    ]);
    let mut page = PageMappedFtl::new(&page_cfg, 1, true).unwrap();
    let mut sb = SuperblockFtl::new(&sb_cfg, true).unwrap();
    // SuperBlock's logical space is rounded down to whole blocks; page mapping writes
    // the same range, so both hold the same valid data in the same flash.
    let logical = sb.logical_pages();
    assert!(logical <= page.logical_pages());
    let pages = 20 * logical;
    let seed = 0x9e37_79b9_7f4a_7c15;
    let page_waf = random_waf(&mut page, logical, pages, seed);
    let sb_waf = random_waf(&mut sb, logical, pages, seed);
    eprintln!("uniform random 4 KiB writes: WAF page {page_waf:.3}, superblock {sb_waf:.3}");
    // Page mapping collects over the whole device; a superblock only among its own
    // N + E blocks, whose spare space it cannot share.
    assert!(
        sb_waf > page_waf * 1.05,
        "superblock {sb_waf:.3} vs page {page_waf:.3}"
    );
    // Block mapping rewrites a whole block for every random page (WAF ≈ ppb = 16).
    assert!(sb_waf < 16.0 / 2.0, "superblock {sb_waf:.3}");
    let c = sb.counters();
    assert_eq!(c.gc_invocations, c.gc_victims);
    assert_eq!(c.programs.get(Cause::Gc), c.gc_pages_copied);
}

#[test]
fn a_hot_superblock_never_takes_more_than_its_own_blocks() {
    let mut ftl = SuperblockFtl::new(&tiny(&[]), true).unwrap();
    let caps: Vec<u32> = (0..ftl.superblocks()).map(|s| ftl.cap(s)).collect();
    let others: u32 = caps[1..].iter().sum();
    let hot = 16..32u64; // superblock 1 (cap N + 1 = 3)
    assert_eq!(ftl.superblock_of(hot.start), 1);
    let mut rng = Rng(7);
    for i in 0..5_000 {
        let lpn = if i < 16 {
            hot.start + i
        } else {
            hot.start + rng.below(16)
        };
        ftl.write(lpn).unwrap();
        assert!(
            ftl.owned(1) <= caps[1],
            "write {i}: {} blocks",
            ftl.owned(1)
        );
        // What every other superblock was promised stays in the pool.
        assert!(ftl.free_blocks() > others);
    }
    assert_eq!(ftl.owned(1), caps[1]);
    assert!(ftl.counters().gc_invocations > 1000);
    ftl.verify().unwrap();
    // Every other superblock still gets its cap of blocks.
    for lpn in 0..ftl.logical_pages() {
        for _ in 0..3 {
            ftl.write(lpn).unwrap();
        }
    }
    for (s, &cap) in caps.iter().enumerate() {
        assert_eq!(ftl.owned(s), cap, "superblock {s}");
    }
    assert_eq!(ftl.free_blocks(), 1);
    ftl.verify().unwrap();
}

#[test]
fn padding_rewrites_a_mapped_page_with_its_content_and_skips_an_unwritten_one() {
    let mut ftl = SuperblockFtl::new(&tiny(&[]), true).unwrap();
    ftl.write_value(3, 42).unwrap();
    let before = ftl.mapped(3).unwrap();
    ftl.pad(3, &mut zombiesim::ftl::NoBuffer).unwrap();
    ftl.pad(4, &mut zombiesim::ftl::NoBuffer).unwrap();
    assert_ne!(ftl.mapped(3).unwrap(), before);
    assert_eq!(ftl.mapped(4), None);
    assert_eq!(ftl.oracle().unwrap().content_of(3), Some(42));
    let c = ftl.counters();
    assert_eq!(c.host_write_pages, 1);
    assert_eq!(c.programs.get(Cause::Buffer), 1);
    assert_eq!(c.reads.get(Cause::Buffer), 1);
    ftl.verify().unwrap();
}

#[test]
fn the_mapping_costs_at_most_twelve_bytes_per_physical_page() {
    let cfg = small_device(&[("ftl.kind", "superblock"), ("ftl.superblock_blocks", "8")]);
    let mut ftl = SuperblockFtl::new(&cfg, false).unwrap();
    for lpn in 0..ftl.logical_pages() {
        ftl.write(lpn).unwrap();
    }
    let physical = 4 * 32 * 16;
    let per_page = ftl.memory_bytes() as f64 / physical as f64;
    eprintln!("memory: {per_page:.2} bytes per physical page");
    assert!(per_page <= 12.0, "{per_page:.2} bytes per physical page");
}

#[test]
fn a_config_without_a_spare_block_per_superblock_is_refused() {
    let mut cfg = tiny(&[]);
    // 20 superblocks of one block, 12 spare blocks.
    let err = cfg
        .set("ftl.superblock_blocks", "1")
        .unwrap_err()
        .to_string();
    assert!(err.contains("ftl.superblock_blocks"), "{err}");
    cfg.ftl.superblock_blocks = 1;
    let err = SuperblockFtl::new(&cfg, false).err().unwrap().to_string();
    assert!(err.contains("ftl.superblock_blocks"), "{err}");
}

#[test]
fn a_whole_timed_run_with_preconditioning_and_a_buffer_verifies() {
    let cfg = small_device(&[
        ("ftl.kind", "superblock"),
        ("ftl.superblock_blocks", "8"),
        ("precondition.random_drive_writes", "1"),
        ("device.buffer", "64KiB"),
        ("timing.enabled", "true"),
    ]);
    let r = verified_run(&cfg, "uniform:drive_writes=1,read=0.3", 5);
    let waf = r.waf.expect("a WAF");
    eprintln!("whole run: WAF {waf:.3}, {} victims", r.gc.victims);
    assert!(waf > 1.5 && waf < 8.0, "WAF {waf}");
    assert!(r.gc.invocations > 0);
    assert_eq!(r.gc.invocations, r.gc.victims);
    assert!(r.timing.is_some());
}
