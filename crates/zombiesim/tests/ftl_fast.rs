//! The FAST FTL with BA-BM and BA-VBS: 004's Figs. 1 and 3 as scenarios, random
//! write / trim / read sequences against a map (with and without a write buffer the
//! merges take pages from), runs through the device with a power loss, and the
//! write amplification of uniform random writes against page and block mapping.

use proptest::prelude::*;
use std::collections::HashMap;
use zombiesim::ftl::{
    BlockMappedFtl, BufferView, FastFtl, Ftl, FtlExt, NoBuffer, PageMappedFtl, PageWrite,
};
use zombiesim::stats::Cause;
use zombiesim::Config;

use crate::common;

/// A device of one plane, `blocks` blocks of `ppb` pages, FAST with `settings`.
fn tiny(blocks: u32, ppb: u32, op: f64, settings: &[(&str, &str)]) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.channels".into(), "1".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.planes_per_die".into(), "1".into()),
        ("flash.blocks_per_plane".into(), blocks.to_string()),
        ("flash.pages_per_block".into(), ppb.to_string()),
        ("ftl.over_provisioning".into(), op.to_string()),
        ("ftl.kind".into(), "fast".into()),
        ("precondition.random_drive_writes".into(), "0".into()),
    ];
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs).unwrap();
    cfg
}

/// The device write buffer as an FTL sees it: per buffered page its content value,
/// whether it is dirty, and its update probability.
#[derive(Default)]
struct TestBuffer {
    pages: HashMap<u64, (u64, bool, f64)>,
    takes: u64,
}

impl TestBuffer {
    fn dirty(&mut self, lpn: u64, value: u64, p: f64) {
        self.pages.insert(lpn, (value, true, p));
    }
    fn is_dirty_page(&self, lpn: u64) -> bool {
        self.pages.get(&lpn).is_some_and(|e| e.1)
    }
}

impl BufferView for TestBuffer {
    fn any_dirty(&self) -> bool {
        self.pages.values().any(|e| e.1)
    }
    fn is_dirty(&self, lpn: u64) -> bool {
        self.is_dirty_page(lpn)
    }
    fn take(&mut self, lpn: u64) -> Option<u64> {
        let e = self.pages.get_mut(&lpn)?;
        assert!(e.1, "took a clean page {lpn}");
        e.1 = false;
        self.takes += 1;
        Some(e.0)
    }
    fn update_probability(&self, lpn: u64) -> f64 {
        self.pages.get(&lpn).map_or(0.0, |e| e.2)
    }
}

/// 004 Fig. 1: ppb = 4, data blocks B0 {p0..p3} and B1 {p4..p7}, the log block L0
/// holding updates of p1, p6 and p7 (FAST puts the update of p0, an offset-0 page,
/// in the sequential log block; p7 is updated twice to fill L0), p2 and p4 dirty in
/// the buffer. L0 is full; the next update needs a log block, so L0 is merged with
/// B0 and B1.
fn fig1(buffer_aware: bool) -> (FastFtl, TestBuffer, zombiesim::stats::Counters) {
    let bam = if buffer_aware { "true" } else { "false" };
    let cfg = tiny(
        7,
        4,
        2.0,
        &[
            ("ftl.log_blocks", "1"),
            ("device.buffer", "16KiB"),
            ("ftl.buffer_aware_merge", bam),
        ],
    );
    let mut ftl = FastFtl::new(&cfg, true).unwrap();
    assert_eq!(ftl.logical_pages(), 8);
    for l in 0..8 {
        ftl.write_value(l, 100 + l).unwrap();
    }
    for l in [1, 0, 6, 7, 7] {
        ftl.write_value(l, 200 + l).unwrap();
    }
    let l0 = ftl.log_blocks();
    assert_eq!(l0.len(), 1);
    assert_eq!(ftl.sequential_log_block().map(|s| s.1), Some(0));
    let mut buf = TestBuffer::default();
    buf.dirty(2, 302, 0.0);
    buf.dirty(4, 304, 0.0);
    let before = ftl.counters();
    ftl.write_page(PageWrite::new(3, Some(203), Cause::Host), &mut buf)
        .unwrap();
    assert_ne!(ftl.log_blocks(), l0, "L0 was merged");
    ftl.verify().unwrap();
    (ftl, buf, before)
}

#[test]
fn fig1_buffer_aware_merge_takes_the_dirty_pages_from_the_buffer() {
    let (ftl, buf, before) = fig1(true);
    let d = ftl.counters().since(&before);
    assert_eq!(d.merges, [0, 0, 2], "B0 and B1 are full-merged");
    assert_eq!(d.programs.get(Cause::MergeFull), 8, "8 pages programmed");
    assert_eq!(d.reads.get(Cause::MergeFull), 6, "p2 and p4 are not read");
    assert_eq!(d.gc_buffer_reads, 2);
    assert_eq!(buf.takes, 2);
    // B0, B1, L0 and the emptied sequential log block are erased.
    assert_eq!(d.erases.get(Cause::MergeFull), 4);
    assert_eq!((d.gc_invocations, d.gc_victims), (1, 2));
    assert!(ftl.sequential_log_block().is_none());
    // The buffer holds p2 and p4 clean: their eviction writes nothing.
    assert!(!buf.is_dirty_page(2) && !buf.is_dirty_page(4));
    assert!(buf.pages.contains_key(&2) && buf.pages.contains_key(&4));
    // Flash holds the buffered contents now, in place in the new data blocks.
    let o = ftl.oracle().unwrap();
    let want = [200, 201, 302, 203, 304, 105, 206, 207];
    for (l, &v) in want.iter().enumerate() {
        assert_eq!(o.content_of(l), Some(v), "page {l}");
    }
    let b0 = ftl.data_block(0).unwrap();
    assert_eq!(ftl.mapped(2), Some(b0 * 4 + 2));
}

#[test]
fn fig1_buffer_unaware_merge_copies_from_flash_and_leaves_the_buffer_dirty() {
    let (ftl, buf, before) = fig1(false);
    let d = ftl.counters().since(&before);
    assert_eq!(d.merges, [0, 0, 2]);
    assert_eq!(d.programs.get(Cause::MergeFull), 8);
    assert_eq!(d.reads.get(Cause::MergeFull), 8);
    assert_eq!(d.gc_buffer_reads, 0);
    assert_eq!(buf.takes, 0);
    assert!(buf.is_dirty_page(2) && buf.is_dirty_page(4));
    let o = ftl.oracle().unwrap();
    assert_eq!(o.content_of(2), Some(102));
    assert_eq!(o.content_of(4), Some(104));
}

/// 004 Fig. 3: p1–p3 hot and p6, p7 cold, dirty in the buffer; the log block L0
/// (older) holds updates of B0's pages, L1 of B1's. Merging L0 moves p0 from flash
/// and p1–p3 from the buffer; merging L1 moves p4, p5 from flash and p6, p7 from the
/// buffer. Returns the FTL after the merge, the buffer, and (L0, L1, Δ(L0), Δ(L1)).
fn fig3(victim: &str) -> (FastFtl, TestBuffer, [u32; 2], [f64; 2]) {
    let cfg = tiny(
        7,
        4,
        2.0,
        &[
            ("ftl.log_blocks", "2"),
            ("device.buffer", "16KiB"),
            ("device.buffer_policy", "3-region"),
            ("ftl.buffer_aware_merge", "true"),
            ("ftl.log_victim", victim),
            ("timing.read_us", "25"),
            ("timing.program_us", "200"),
            ("timing.erase_us", "2000"),
        ],
    );
    let mut ftl = FastFtl::new(&cfg, true).unwrap();
    assert_eq!(ftl.logical_pages(), 8);
    for l in 0..8 {
        ftl.write(l).unwrap();
    }
    for l in [1, 2, 3, 1, 5, 6, 7, 5] {
        ftl.write(l).unwrap();
    }
    let logs = ftl.log_blocks();
    assert_eq!(logs.len(), 2);
    let mut buf = TestBuffer::default();
    for l in [1, 2, 3] {
        buf.dirty(l, 300 + l, 1.0);
    }
    for l in [6, 7] {
        buf.dirty(l, 300 + l, 0.0);
    }
    let deltas = [
        ftl.log_block_delta(logs[0], &buf),
        ftl.log_block_delta(logs[1], &buf),
    ];
    // The trigger: an update that needs a log block when both are full.
    ftl.write_page(PageWrite::new(5, None, Cause::Host), &mut buf)
        .unwrap();
    ftl.verify().unwrap();
    (ftl, buf, [logs[0], logs[1]], deltas)
}

#[test]
fn fig3_ba_vbs_weighs_the_update_probability_and_picks_l1() {
    let (ftl, buf, [l0, l1], [d0, d1]) = fig3("ba-vbs");
    let (cp, cr, ce, cb) = (200.0, 25.0, 2000.0, 20.0 / 1000.0);
    let alpha = (cp + cr) / cp;
    assert!((alpha - 1.125f64).abs() < 1e-12);
    // Δ(L0) = 1 f→f + 3 b→f + 2 erases − 0 (the hot pages will be dirty again).
    let want0 = (cr + cp) + 3.0 * (cb + cp) + 2.0 * ce;
    // Δ(L1) = 2 f→f + 2 b→f + 2 erases − 2·C_p·(1 + α).
    let want1 = 2.0 * (cr + cp) + 2.0 * (cb + cp) + 2.0 * ce - 2.0 * cp * (1.0 + alpha);
    assert!((d0 - want0).abs() < 1e-9, "Δ(L0) = {d0}, want {want0}");
    assert!((d1 - want1).abs() < 1e-9, "Δ(L1) = {d1}, want {want1}");
    assert!(d1 < d0);
    let logs = ftl.log_blocks();
    assert!(logs.contains(&l0) && !logs.contains(&l1), "L1 was merged");
    assert_eq!(buf.takes, 2);
    assert!(!buf.is_dirty_page(6) && !buf.is_dirty_page(7));
    assert!((1..=3).all(|l| buf.is_dirty_page(l)));
}

#[test]
fn fig3_round_robin_merges_the_older_l0() {
    let (ftl, buf, [l0, l1], _) = fig3("round-robin");
    let logs = ftl.log_blocks();
    assert!(!logs.contains(&l0) && logs.contains(&l1), "L0 was merged");
    assert_eq!(buf.takes, 3);
    assert!((1..=3).all(|l| !buf.is_dirty_page(l)));
    assert!(buf.is_dirty_page(6) && buf.is_dirty_page(7));
}

/// A small FAST device for the random runs: 2 planes × 16 blocks × 8 pages.
fn small(settings: &[(&str, &str)]) -> Config {
    let mut cfg = tiny(16, 8, 0.5, &[("flash.planes_per_die", "2")]);
    let pairs: Vec<(String, String)> = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    cfg.set_many(&pairs).unwrap();
    cfg
}

#[derive(Clone, Debug)]
enum Op {
    /// A host write straight to flash (any buffered copy is dropped first).
    Write(u64),
    /// Consecutive host writes from a logical page (sequential runs: switch and
    /// partial merges).
    Run(u64, u64),
    Trim(u64),
    Read(u64),
    /// The host writes into the buffer (dirty), with this update probability.
    Buffer(u64, f64),
    /// The buffer evicts the page: a dirty copy is written back.
    Evict(u64),
}

fn ops(logical: u64) -> impl Strategy<Value = Vec<Op>> {
    let lpn = prop_oneof![3 => 0..32u64, 1 => 0..logical];
    let op = prop_oneof![
        6 => lpn.clone().prop_map(Op::Write),
        1 => (0..logical / 8, 1..=16u64).prop_map(|(b, n)| Op::Run(b * 8, n)),
        1 => lpn.clone().prop_map(Op::Trim),
        2 => lpn.clone().prop_map(Op::Read),
        3 => (lpn.clone(), 0.0..=1.0f64).prop_map(|(l, p)| Op::Buffer(l, p)),
        2 => lpn.prop_map(Op::Evict),
    ];
    prop::collection::vec(op, 1..1500)
}

/// Run `seq` on a fresh FAST FTL with `settings`, against a map of what the host
/// last wrote (buffered or on flash).
fn check(settings: &[(&str, &str)], seq: &[Op]) -> Result<FastFtl, TestCaseError> {
    let cfg = small(settings);
    let mut ftl = FastFtl::new(&cfg, true).unwrap();
    let n = ftl.logical_pages();
    let mut buf = TestBuffer::default();
    let mut reference: HashMap<u64, u64> = HashMap::new();
    let fail = |e: zombiesim::Error| TestCaseError::fail(e.to_string());
    for (i, op) in seq.iter().enumerate() {
        let v = i as u64 + 1;
        match *op {
            Op::Write(l) => {
                buf.pages.remove(&l);
                ftl.write_page(PageWrite::new(l, Some(v), Cause::Host), &mut buf)
                    .map_err(fail)?;
                reference.insert(l, v);
            }
            Op::Run(first, len) => {
                for l in first..(first + len).min(n) {
                    buf.pages.remove(&l);
                    ftl.write_page(PageWrite::new(l, Some(v), Cause::Host), &mut buf)
                        .map_err(fail)?;
                    reference.insert(l, v);
                }
            }
            Op::Trim(l) => {
                buf.pages.remove(&l);
                ftl.trim(l).map_err(fail)?;
                reference.remove(&l);
            }
            Op::Read(l) => {
                if !buf.pages.contains_key(&l) {
                    ftl.read(l).map_err(fail)?;
                }
            }
            Op::Buffer(l, p) => {
                buf.dirty(l, v, p);
                reference.insert(l, v);
            }
            Op::Evict(l) => {
                if let Some((value, dirty, _)) = buf.pages.remove(&l) {
                    if dirty {
                        ftl.write_page(PageWrite::new(l, Some(value), Cause::Buffer), &mut buf)
                            .map_err(fail)?;
                    }
                }
            }
        }
    }
    ftl.verify().map_err(fail)?;
    // Flush: every dirty page is written back; flash then holds everything.
    let mut dirty: Vec<(u64, u64)> = buf
        .pages
        .iter()
        .filter(|e| e.1 .1)
        .map(|(&l, e)| (l, e.0))
        .collect();
    dirty.sort_unstable();
    for (l, value) in dirty {
        if buf.is_dirty_page(l) {
            buf.pages.get_mut(&l).unwrap().1 = false;
            ftl.write_page(PageWrite::new(l, Some(value), Cause::Buffer), &mut buf)
                .map_err(fail)?;
        }
    }
    ftl.verify().map_err(fail)?;
    let oracle = ftl.oracle().unwrap();
    for l in 0..n {
        prop_assert_eq!(
            ftl.mapped(l).is_some(),
            reference.contains_key(&l),
            "page {}",
            l
        );
        prop_assert_eq!(
            oracle.content_of(l as usize),
            reference.get(&l).copied(),
            "page {}",
            l
        );
    }
    let c = ftl.counters();
    prop_assert_eq!(
        c.programs.total(),
        c.host_write_pages + c.gc_pages_copied + writebacks(&c)
    );
    prop_assert_eq!(
        c.reads.get(Cause::Host) + c.host_read_unmapped,
        c.host_read_pages
    );
    Ok(ftl)
}

/// Buffer write-backs (programs for `Cause::Buffer`).
fn writebacks(c: &zombiesim::stats::Counters) -> u64 {
    c.programs.get(Cause::Buffer)
}

const SETTINGS: [&[(&str, &str)]; 4] = [
    &[("ftl.log_blocks", "3")],
    &[],
    &[
        ("ftl.log_blocks", "3"),
        ("device.buffer", "64KiB"),
        ("ftl.buffer_aware_merge", "true"),
    ],
    &[
        ("ftl.log_blocks", "4"),
        ("device.buffer", "64KiB"),
        ("device.buffer_policy", "3-region"),
        ("ftl.buffer_aware_merge", "true"),
        ("ftl.log_victim", "ba-vbs"),
    ],
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn fast_agrees_with_a_map(seq in ops(128), which in 0..SETTINGS.len()) {
        check(SETTINGS[which], &seq)?;
    }

    #[test]
    fn fast_with_ba_vbs_without_ba_bm_agrees_with_a_map(seq in ops(128)) {
        check(&[
            ("ftl.log_blocks", "2"),
            ("device.buffer", "64KiB"),
            ("device.buffer_policy", "3-region"),
            ("ftl.log_victim", "ba-vbs"),
        ], &seq)?;
    }
}

/// A deterministic mixed run: every kind of merge happens.
#[test]
fn every_merge_kind_occurs() {
    let mut seq = Vec::new();
    let mut x = 12345u64;
    for i in 0..4000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = x >> 33;
        seq.push(match r % 10 {
            0 => Op::Run(r / 10 % 16 * 8, 8),
            1 => Op::Run(r / 10 % 16 * 8, 1 + r / 160 % 7),
            2 => Op::Trim(r / 10 % 128),
            3 => Op::Read(r / 10 % 128),
            4 => Op::Buffer(r / 10 % 128, (i % 3) as f64 / 2.0),
            5 => Op::Evict(r / 10 % 128),
            _ => Op::Write(r / 10 % 128),
        });
    }
    for settings in SETTINGS {
        let ftl = check(settings, &seq).unwrap();
        let c = ftl.counters();
        assert!(
            c.merges.iter().all(|&m| m > 0),
            "{settings:?}: merges {:?}",
            c.merges
        );
        assert!(c.gc_invocations > 0 && c.gc_victims >= c.gc_invocations / 2);
        let bam = settings.iter().any(|s| s.0 == "ftl.buffer_aware_merge");
        assert_eq!(c.gc_buffer_reads > 0, bam, "{settings:?}");
    }
}

#[test]
fn a_sequential_rewrite_of_a_block_is_a_switch_merge() {
    let cfg = small(&[("ftl.log_blocks", "3")]);
    let mut ftl = FastFtl::new(&cfg, true).unwrap();
    for l in 0..16 {
        ftl.write(l).unwrap();
    }
    assert_eq!(
        ftl.counters().merges,
        [0, 0, 0],
        "a sequential fill goes in place"
    );
    for l in 0..8 {
        ftl.write(l).unwrap();
    }
    let before = ftl.counters();
    let old = ftl.data_block(0).unwrap();
    let (sw, owner) = ftl.sequential_log_block().unwrap();
    assert_eq!(owner, 0);
    ftl.write(8).unwrap(); // offset 0 of block 1: the sequential log block is reclaimed
    let d = ftl.counters().since(&before);
    assert_eq!(d.merges, [1, 0, 0]);
    assert_eq!(d.programs.total(), 1, "a switch copies nothing");
    assert_eq!(d.erases.get(Cause::MergeSwitch), 1);
    assert_eq!(ftl.data_block(0), Some(sw));
    assert_ne!(ftl.data_block(0), Some(old));
    // A partial merge: 4 pages in order, the other 4 copied in.
    for l in 9..12 {
        ftl.write(l).unwrap();
    }
    let before = ftl.counters();
    ftl.write(0).unwrap();
    let d = ftl.counters().since(&before);
    assert_eq!(d.merges, [0, 1, 0]);
    assert_eq!(d.programs.get(Cause::MergePartial), 4);
    ftl.verify().unwrap();
}

/// Writes through the device with a write buffer, a power loss in the middle: every
/// page reads what the host last wrote (or, for a page the loss took, an older
/// write), and every invariant holds.
fn device_run(settings: &[(&str, &str)], seed: u64, steps: usize) -> zombiesim::stats::Counters {
    common::power_loss_run(&small(settings), seed, steps, 24)
}

#[test]
fn through_the_device_with_a_buffer_and_a_power_loss() {
    for extra in [
        &[][..],
        &[("ftl.buffer_aware_merge", "true")],
        &[
            ("device.buffer_policy", "3-region"),
            ("ftl.buffer_aware_merge", "true"),
            ("ftl.log_victim", "ba-vbs"),
        ],
    ] {
        let mut settings = vec![
            ("ftl.log_blocks", "3"),
            ("device.buffer", "48KiB"),
            ("device.buffer_policy", "lru"),
        ];
        settings.extend_from_slice(extra);
        for seed in 1..4 {
            let c = device_run(&settings, seed, 3000);
            assert!(c.merges[2] > 0);
            let bam = extra.iter().any(|s| s.0 == "ftl.buffer_aware_merge");
            assert_eq!(c.gc_buffer_reads > 0, bam, "{settings:?}");
        }
    }
}

/// Uniform random single-page writes after a sequential fill: block mapping
/// rewrites a block per write, FAST merges several blocks per log block, and both
/// amplify far more than page mapping.
#[test]
fn uniform_random_writes_amplify_block_over_fast_over_page() {
    // 2 planes × 64 blocks × 16 pages, OP 25%.
    let page_cfg = tiny(
        64,
        16,
        0.25,
        &[("flash.planes_per_die", "2"), ("ftl.kind", "page")],
    );
    let fast_cfg = {
        let mut c = page_cfg.clone();
        // 8 random log blocks (6% of the blocks; 004 runs 128 of 8192).
        c.set_many(&[
            ("ftl.kind".into(), "fast".into()),
            ("ftl.log_blocks".into(), "8".into()),
        ])
        .unwrap();
        c
    };
    let block_cfg = {
        let mut c = page_cfg.clone();
        c.set("ftl.kind", "block").unwrap();
        c
    };
    let mut page = PageMappedFtl::new(&page_cfg, 1, false).unwrap();
    let mut fast = FastFtl::new(&fast_cfg, false).unwrap();
    let mut block = BlockMappedFtl::new(&block_cfg, false).unwrap();
    let ftls: [&mut dyn Ftl; 3] = [&mut page, &mut fast, &mut block];
    let mut waf = [0.0; 3];
    for (i, ftl) in ftls.into_iter().enumerate() {
        let n = ftl.logical_pages();
        for l in 0..n {
            ftl.write(l).unwrap();
        }
        let start = ftl.counters();
        let mut x = 99u64;
        for _ in 0..20 * n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ftl.write_page(
                PageWrite::new((x >> 33) % n, None, Cause::Host),
                &mut NoBuffer,
            )
            .unwrap();
        }
        waf[i] = ftl.counters().since(&start).waf();
    }
    let [page, fast, block] = waf;
    eprintln!("WAF: page {page:.2}, FAST {fast:.2}, block {block:.2}");
    assert!(fast > 2.0 * page, "FAST {fast} vs page {page}");
    assert!(block > 2.0 * page, "block {block} vs page {page}");
    assert!(block >= fast, "block {block} vs FAST {fast}");
}

/// BPLRU padding: the buffer writes a victim block whole and in order, reading the
/// pages it lacks; in FAST the block lands in the sequential log block and is
/// switched in, and an unwritten page is not padded.
#[test]
fn padding_a_block_in_order_makes_a_switch_merge() {
    let cfg = small(&[("ftl.log_blocks", "3")]);
    let mut ftl = FastFtl::new(&cfg, true).unwrap();
    for l in 0..14 {
        ftl.write_value(l, l).unwrap();
    }
    let before = ftl.counters();
    for l in 0..3 {
        ftl.write_page(
            PageWrite::new(l, Some(100 + l), Cause::Buffer),
            &mut NoBuffer,
        )
        .unwrap();
    }
    for l in 3..8 {
        ftl.pad(l, &mut NoBuffer).unwrap();
    }
    let d = ftl.counters().since(&before);
    assert_eq!(d.reads.get(Cause::Buffer), 5);
    assert_eq!(d.programs.get(Cause::Buffer), 8);
    assert_eq!(ftl.sequential_log_block().map(|s| s.1), Some(0));
    // The next sequential block: block 0 is switched in.
    ftl.write_page(PageWrite::new(8, Some(108), Cause::Buffer), &mut NoBuffer)
        .unwrap();
    for l in 9..16 {
        ftl.pad(l, &mut NoBuffer).unwrap();
    }
    let d = ftl.counters().since(&before);
    assert_eq!(d.merges, [1, 0, 0]);
    assert_eq!(
        d.reads.get(Cause::Buffer),
        5 + 5,
        "pages 14 and 15 were never written"
    );
    let o = ftl.oracle().unwrap();
    assert_eq!(o.content_of(2), Some(102));
    assert_eq!(o.content_of(5), Some(5));
    assert_eq!(ftl.mapped(15), None);
    ftl.verify().unwrap();
}

#[test]
fn fast_state_stays_within_twelve_bytes_per_physical_page() {
    let cfg = small(&[]);
    let mut ftl = FastFtl::new(&cfg, false).unwrap();
    let n = ftl.logical_pages();
    for l in 0..n {
        ftl.write((l * 7) % n).unwrap();
    }
    let physical = 2 * 16 * 8;
    assert!(
        ftl.memory_bytes() <= 12 * physical,
        "{} bytes",
        ftl.memory_bytes()
    );
}

/// Whole verified runs (preconditioning, timing, a write buffer) with FAST and
/// block mapping.
#[test]
fn whole_runs_with_fast_and_block_mapping_verify() {
    let opts = zombiesim::RunOptions {
        seed: 3,
        verify: true,
        reproducible: true,
        ..Default::default()
    };
    let wl = zombiesim::WorkloadSpec::parse("uniform:drive_writes=2,read=0.3").unwrap();
    for settings in [
        &[("ftl.kind", "block")][..],
        &[("ftl.log_blocks", "3"), ("timing.enabled", "true")],
        &[
            ("timing.enabled", "true"),
            ("device.buffer", "64KiB"),
            ("device.buffer_policy", "3-region"),
            ("ftl.buffer_aware_merge", "true"),
            ("ftl.log_victim", "ba-vbs"),
        ],
    ] {
        let cfg = small(settings);
        let r = zombiesim::simulate(&cfg, &wl, &opts, &mut |_| true).unwrap();
        assert!(r.run.verified, "{settings:?}");
        // Random updates after the fill merge blocks: well above 1.
        assert!(r.waf.unwrap() > 1.5, "{settings:?}: WAF {:?}", r.waf);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random request streams through the device (BA-BM and BA-VBS above a buffer).
    #[test]
    fn random_runs_through_the_device_verify(seed in any::<u64>(), ba in any::<bool>()) {
        let mut settings = vec![
            ("ftl.log_blocks", "2"),
            ("device.buffer", "32KiB"),
            ("device.buffer_policy", "3-region"),
        ];
        if ba {
            settings.extend([("ftl.buffer_aware_merge", "true"), ("ftl.log_victim", "ba-vbs")]);
        }
        device_run(&settings, seed, 2000);
    }
}
