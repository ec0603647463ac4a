use super::*;
use crate::flash::FlashState;
use rand::SeedableRng;

fn flash_with_counts(counts: &[u32], ppb: u32) -> FlashState {
    let mut cfg = crate::Config::preset("default").unwrap();
    cfg.flash.channels = 1;
    cfg.flash.chips_per_channel = 1;
    cfg.flash.blocks_per_plane = counts.len() as u32 + 8;
    cfg.flash.pages_per_block = ppb;
    cfg.ftl.over_provisioning = 3.0;
    cfg.gc.low_watermark = 1;
    cfg.gc.high_watermark = 1;
    cfg.ftl.gc_frontier = crate::config::GcFrontier::Shared;
    let geo = crate::flash::Geometry::new(&cfg).unwrap();
    let mut f = FlashState::new(&geo);
    for (b, &c) in counts.iter().enumerate() {
        f.open(b as u32, 0);
        for p in 0..ppb {
            let (ppn, _) = f.program(b as u32, p, 0);
            if p >= c {
                f.invalidate(ppn, 0);
            }
        }
    }
    f
}

#[test]
fn bucket_index_finds_lowest_block_of_lowest_key() {
    let mut ix = BucketIndex::new(100, 5000, 10);
    for b in [4200u32, 130, 4999, 100] {
        ix.insert(b, 5);
    }
    ix.insert(2000, 3);
    ix.insert(3000, 3);
    assert_eq!(ix.peek_min(), Some((3, 2000)));
    ix.update(2000, 7);
    assert_eq!(ix.pop_min(), Some(3000));
    assert_eq!(ix.pop_min(), Some(100));
    assert_eq!(ix.pop_min(), Some(130));
    ix.update(4999, 0);
    assert_eq!(ix.pop_min(), Some(4999));
    assert_eq!(ix.pop_min(), Some(4200));
    assert_eq!(ix.pop_min(), Some(2000));
    assert_eq!(ix.pop_min(), None);
    assert!(ix.is_empty());
}

fn pick(policy: &mut dyn VictimPolicy, flash: &FlashState, now: u64) -> Option<u32> {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    policy.select(&mut SelectCtx {
        flash,
        now,
        rng: &mut rng,
        chain: &[],
    })
}

#[test]
fn greedy_picks_fewest_valid_ties_to_lowest_block() {
    let flash = flash_with_counts(&[6, 3, 8, 3], 8);
    let mut g = build(PolicySpec::Greedy, CbAge::SinceModified, 0, 4, 8);
    for b in 0..4 {
        g.insert(&BlockStats::of(b, &flash));
    }
    assert_eq!(pick(g.as_mut(), &flash, 0), Some(1));
    assert_eq!(pick(g.as_mut(), &flash, 0), Some(3));
    assert_eq!(pick(g.as_mut(), &flash, 0), Some(0));
}

#[test]
fn cost_benefit_weighs_age_and_prefers_empty_blocks() {
    let mut flash = flash_with_counts(&[2, 4, 0, 4], 8);
    flash.last_modified = vec![90, 10, 95, 10];
    let mut cb = build(PolicySpec::CostBenefit, CbAge::SinceModified, 0, 4, 8);
    for b in 0..4 {
        cb.insert(&BlockStats::of(b, &flash));
    }
    // Block 2 has no valid page: it wins outright.
    assert_eq!(pick(cb.as_mut(), &flash, 100), Some(2));
    // Block 0: 6*10/4 = 15; block 1: 4*90/8 = 45; block 3 ties block 1 -> lowest number.
    assert_eq!(pick(cb.as_mut(), &flash, 100), Some(1));
    assert_eq!(pick(cb.as_mut(), &flash, 100), Some(3));
}

#[test]
fn cost_benefit_with_the_modified_time_as_age_favours_recent_blocks() {
    // 000's text read literally: `a` is the block's last modification time itself.
    let mut flash = flash_with_counts(&[2, 4, 0, 4, 4], 8);
    flash.last_modified = vec![90, 10, 95, 60, 10];
    let mut cb = build(PolicySpec::CostBenefit, CbAge::ModifiedTime, 0, 5, 8);
    for b in 0..5 {
        cb.insert(&BlockStats::of(b, &flash));
    }
    assert_eq!(pick(cb.as_mut(), &flash, 100), Some(2));
    // Block 0: 6*91/4 = 136.5; block 1: 4*11/8 = 5.5; block 3: 4*61/8 = 30.5.
    assert_eq!(pick(cb.as_mut(), &flash, 100), Some(0));
    assert_eq!(pick(cb.as_mut(), &flash, 100), Some(3));
    // z-cost-benefit reads the same age.
    let mut zcb = build(PolicySpec::ZCostBenefit, CbAge::ModifiedTime, 0, 5, 8);
    for b in [1, 3] {
        zcb.insert(&BlockStats::of(b, &flash));
    }
    assert_eq!(pick(zcb.as_mut(), &flash, 100), Some(3));
}

#[test]
fn fifo_and_windowed_greedy_follow_closing_order() {
    let flash = flash_with_counts(&[5, 1, 2, 0], 8);
    let mut fifo = build(PolicySpec::Fifo, CbAge::SinceModified, 0, 4, 8);
    let mut win = build(PolicySpec::WindowedGreedy(2), CbAge::SinceModified, 0, 4, 8);
    for b in [2, 0, 1, 3] {
        fifo.insert(&BlockStats::of(b, &flash));
        win.insert(&BlockStats::of(b, &flash));
    }
    assert_eq!(pick(fifo.as_mut(), &flash, 0), Some(2));
    assert_eq!(pick(fifo.as_mut(), &flash, 0), Some(0));
    // Window over [2, 0]: block 2 has 2 valid, block 0 has 5.
    assert_eq!(pick(win.as_mut(), &flash, 0), Some(2));
    // Window over [0, 1]: block 1.
    assert_eq!(pick(win.as_mut(), &flash, 0), Some(1));
}

#[test]
fn d_choices_with_many_samples_is_greedy() {
    let flash = flash_with_counts(&[5, 1, 2, 7], 8);
    let mut dc = build(PolicySpec::DChoices(64), CbAge::SinceModified, 0, 4, 8);
    let mut rnd = build(PolicySpec::Random, CbAge::SinceModified, 0, 4, 8);
    for b in 0..4 {
        dc.insert(&BlockStats::of(b, &flash));
        rnd.insert(&BlockStats::of(b, &flash));
    }
    assert_eq!(pick(dc.as_mut(), &flash, 0), Some(1));
    let mut seen = Vec::new();
    while let Some(b) = pick(rnd.as_mut(), &flash, 0) {
        seen.push(b);
    }
    seen.sort();
    assert_eq!(seen, vec![0, 1, 2, 3]);
}

#[test]
fn greedy_delay_skips_zombie_rich_blocks_while_others_exist() {
    // Blocks 0..3 with 2, 5, 3 valid pages of 8.
    let mut flash = flash_with_counts(&[2, 5, 3], 8);
    let mut p = GreedyDelay::new(0, 16, 8, 50);
    for b in 0..3 {
        p.insert(&BlockStats::of(b, &flash));
    }
    // The event carries the block's statistics as they stand.
    let set = |flash: &mut FlashState, p: &mut GreedyDelay, b: u32, valid: u32, zombies: u32| {
        flash.zombies[b as usize] = zombies;
        p.changed(&BlockStats::new(b, valid, flash, &[]));
    };
    // Block 0: 2 of its 2 valid pages are zombies (100% > 50%): delayed.
    set(&mut flash, &mut p, 0, 2, 2);
    // Block 2: 1 of 3 (33%): not delayed.
    set(&mut flash, &mut p, 2, 3, 1);
    assert_eq!(pick(&mut p, &flash, 0), Some(2));
    // Block 1 becomes zombie-rich too: both left are delayed, plain greedy decides.
    set(&mut flash, &mut p, 1, 5, 4);
    assert_eq!(pick(&mut p, &flash, 0), Some(0));
    // A page of block 1 dies: 4 zombies of 4 valid, still delayed, still the last.
    set(&mut flash, &mut p, 1, 4, 4);
    assert_eq!(pick(&mut p, &flash, 0), Some(1));
    assert_eq!(pick(&mut p, &flash, 0), None);
}
