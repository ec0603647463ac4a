//! Model checking of every FTL × device write buffer against a reference map.
//!
//! Every combination of FTL kind (`ftl.kind`), device buffer (none, or each
//! `device.buffer_policy`) and buffer durability (`device.buffer_nonvolatile`) that the
//! configuration accepts runs random mixes of writes (FUA or not, single pages and runs
//! of up to a block), reads, trims, flushes, power losses, clean restarts and zombie
//! hints on a small device where GC and merges run all the time. After every step:
//!
//! - every logical page reads what the model says (the device's answer for buffered
//!   pages, the integrity oracle's truth otherwise), and `Device::verify` holds (the
//!   oracle: every mapping leads to the newest version; the FTL's invariants; the
//!   buffer's bookkeeping);
//! - the pages the device knows as zombies are exactly those the model hinted and
//!   nothing has written or trimmed since;
//! - after a power loss exactly the pages reported lost were not acknowledged durable,
//!   each reads its last durable value or a later one the buffer had evicted, every
//!   other page reads its newest value, a non-volatile buffer (or none) loses nothing,
//!   and no page is a shadow of any kind but device-shadow under a non-volatile buffer;
//! - a clean restart (a flush, then the power-off `device.restart_at` runs) loses
//!   nothing and leaves no zombie.
//!
//! Every FTL supports trim and zombie hints (`Ftl::trim`, `Ftl::set_zombie` are part of
//! the contract; only page and DFTL *use* the zombie marks in GC), so every FTL gets
//! every step. ShadowGC and BA-GC settings are further variants of the same
//! combinations (`VARIANTS`); which ones exist is asserted by
//! `the_combinations_that_exist`.
//!
//! `PROPTEST_CASES` overrides the case counts for longer runs.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::collections::{BTreeSet, HashSet};
use std::sync::OnceLock;
use zombiesim::config::{BufferPolicy, FtlKind};
use zombiesim::device::{Command, Device, PageState, Payload};
use zombiesim::ftl::FtlExt;
use zombiesim::workload::Op;
use zombiesim::{simulate, Config, Error, RunOptions, WorkloadSpec};

/// The small device: 2 planes × 16 blocks × 8 pages of 512 B (256 physical pages; a
/// DFTL translation page maps 128 logical pages), OP 30%: 196 logical pages (192 for
/// the block-mapped FTLs, 8 spare blocks).
const DEVICE: [(&str, &str); 8] = [
    ("flash.channels", "2"),
    ("flash.chips_per_channel", "1"),
    ("flash.dies_per_chip", "1"),
    ("flash.planes_per_die", "1"),
    ("flash.blocks_per_plane", "16"),
    ("flash.pages_per_block", "8"),
    ("flash.page_size", "512"),
    ("ftl.over_provisioning", "0.3"),
];

/// The buffer size the combination table is built with (pages of 512 B).
const TABLE_BUFFER_PAGES: u64 = 8;

/// Settings each FTL kind gets to make its own reclaiming frequent.
fn ftl_settings(kind: FtlKind) -> &'static [(&'static str, &'static str)] {
    match kind {
        // A cached mapping table of 8 entries: translation reads and write-backs.
        FtlKind::Dftl => &[("ftl.cmt_entries", "8")],
        // 6 superblocks of 4 logical blocks over 8 spare blocks.
        FtlKind::Superblock => &[("ftl.superblock_blocks", "4")],
        // 3 random log blocks: merges every few dozen page writes.
        FtlKind::Fast => &[("ftl.log_blocks", "3")],
        FtlKind::Page | FtlKind::Block => &[],
    }
}

/// A variant: settings on top of an FTL × buffer combination.
struct Variant {
    name: &'static str,
    settings: &'static [(&'static str, &'static str)],
}

/// The dedicated (zombie) stream and background GC need more free blocks (a higher
/// watermark, more open blocks) and so a larger device: 2 planes × 32 blocks, OP 50%.
const VARIANTS: [Variant; 7] = [
    Variant {
        name: "plain",
        settings: &[],
    },
    // 000's zombie-aware GC: z-greedy and the zombie block.
    Variant {
        name: "zgc",
        settings: &[
            ("flash.blocks_per_plane", "32"),
            ("ftl.over_provisioning", "0.5"),
            ("gc.policy", "z-greedy"),
            ("gc.zombie_block", "true"),
            ("gc.low_watermark", "4"),
            ("gc.high_watermark", "4"),
        ],
    },
    // 003's ShadowGC without twin discards (which need a host buffer): GC takes
    // device-shadow pages from the buffer, host-shadow pages go to fast-written
    // dedicated blocks, refreshed every second and at every restart, normal blocks
    // every nine seconds.
    Variant {
        name: "sgc",
        settings: &[
            ("flash.blocks_per_plane", "32"),
            ("ftl.over_provisioning", "0.5"),
            ("gc.zombie_block", "true"),
            ("gc.fast_write", "true"),
            ("gc.shadow_reads", "true"),
            ("ftl.fast_retention_s", "2"),
            ("ftl.retention_s", "10"),
            ("ftl.power_off_s", "1"),
            ("gc.low_watermark", "4"),
            ("gc.high_watermark", "4"),
        ],
    },
    // Timing on: background GC in the idle time between steps (20 ms) and bounded
    // foreground GC (one victim per trigger), both taking device-shadow pages from the
    // buffer.
    Variant {
        name: "bg",
        settings: &[
            ("flash.blocks_per_plane", "32"),
            ("ftl.over_provisioning", "0.5"),
            ("timing.enabled", "true"),
            ("gc.background", "true"),
            ("gc.background_watermark", "5"),
            ("gc.low_watermark", "3"),
            ("gc.high_watermark", "3"),
            ("gc.max_victims_per_trigger", "1"),
            ("gc.shadow_reads", "true"),
        ],
    },
    // The skip policy: GC drops device-shadow pages (safe only above a non-volatile
    // buffer: `simulate` refuses it otherwise).
    Variant {
        name: "skip",
        settings: &[("gc.skip_shadows", "true")],
    },
    // 004's buffer-aware merge alone (FAST takes dirty pages from the buffer), with
    // compulsory flushes of pages dirty for more than a second.
    Variant {
        name: "ba-bm",
        settings: &[
            ("ftl.buffer_aware_merge", "true"),
            ("device.buffer_max_dirty_age", "1"),
        ],
    },
    // 004's BA-GC: BA-BM and BA-VBS's log victim (needs the 3-region buffer).
    Variant {
        name: "ba-gc",
        settings: &[
            ("ftl.buffer_aware_merge", "true"),
            ("ftl.log_victim", "ba-vbs"),
        ],
    },
];

/// One FTL × buffer × durability × variant combination.
#[derive(Clone, Copy, Debug)]
struct Combo {
    ftl: FtlKind,
    buffer: Option<BufferPolicy>,
    nonvolatile: bool,
    variant: usize,
}

impl Combo {
    fn name(&self) -> String {
        let durability = if self.nonvolatile { "nv" } else { "v" };
        let buffer = match self.buffer {
            None if self.nonvolatile => "none/nv".to_string(),
            None => "none".to_string(),
            Some(p) => format!("{}/{durability}", p.name()),
        };
        match VARIANTS[self.variant].name {
            "plain" => format!("{} {buffer}", self.ftl.name()),
            v => format!("{} {buffer} {v}", self.ftl.name()),
        }
    }

    /// The configuration, with a buffer of `buffer_pages` pages.
    fn config(&self, buffer_pages: u64) -> zombiesim::Result<Config> {
        let mut pairs: Vec<(String, String)> = DEVICE
            .iter()
            .chain(ftl_settings(self.ftl))
            .chain(VARIANTS[self.variant].settings)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        pairs.push(("ftl.kind".into(), self.ftl.name().into()));
        pairs.push(("precondition.random_drive_writes".into(), "0".into()));
        if let Some(p) = self.buffer {
            pairs.push(("device.buffer".into(), format!("{}", buffer_pages * 512)));
            pairs.push(("device.buffer_policy".into(), p.name().into()));
        }
        if self.nonvolatile {
            pairs.push(("device.buffer_nonvolatile".into(), "true".into()));
        }
        let mut cfg = Config::preset("default")?;
        cfg.set_many(&pairs)?;
        Ok(cfg)
    }
}

/// Every combination: FTL kinds × (no buffer, each buffer policy) × volatile /
/// non-volatile × variants.
fn every_combination() -> Vec<Combo> {
    let mut all = Vec::new();
    for variant in 0..VARIANTS.len() {
        for ftl in FtlKind::ALL {
            let buffers = std::iter::once(None).chain(BufferPolicy::ALL.map(Some));
            for buffer in buffers {
                for nonvolatile in [false, true] {
                    all.push(Combo {
                        ftl,
                        buffer,
                        nonvolatile,
                        variant,
                    });
                }
            }
        }
    }
    all
}

/// Whether a run of `combo` is accepted: by the configuration, and by `simulate`
/// (which also refuses what is unsafe, such as the skip policy above a volatile
/// buffer). A short verified run, so what exists also runs.
fn refusal(combo: &Combo) -> Option<Error> {
    let cfg = match combo.config(TABLE_BUFFER_PAGES) {
        Ok(cfg) => cfg,
        Err(e) => return Some(e),
    };
    let opts = RunOptions {
        seed: 1,
        verify: true,
        reproducible: true,
        ..Default::default()
    };
    // `iops` gives the requests arrival times: the clock of retention refresh and
    // compulsory flushes.
    let wl = WorkloadSpec::parse("uniform:drive_writes=0.5,read=0.2,iops=1000").unwrap();
    match simulate(&cfg, &wl, &opts, &mut |_| true) {
        Ok(_) => None,
        Err(e @ Error::Config { .. }) => Some(e),
        Err(e) => panic!("{}: the run failed: {e}", combo.name()),
    }
}

/// The combinations that exist, and those refused with why.
type Combinations = (Vec<Combo>, Vec<(Combo, Error)>);

/// The combinations that exist, and those refused with why (computed once).
fn combinations() -> &'static Combinations {
    static ALL: OnceLock<Combinations> = OnceLock::new();
    ALL.get_or_init(|| {
        let (mut exist, mut refused) = (Vec::new(), Vec::new());
        for c in every_combination() {
            match refusal(&c) {
                None => exist.push(c),
                Some(e) => refused.push((c, e)),
            }
        }
        (exist, refused)
    })
}

/// The existing combinations of `ftl` in the variants named.
fn existing(ftl: FtlKind, variants: &[&str]) -> Vec<Combo> {
    combinations()
        .0
        .iter()
        .filter(|c| c.ftl == ftl && variants.contains(&VARIANTS[c.variant].name))
        .copied()
        .collect()
}

/// The key a refusal names.
fn key(e: &Error) -> &str {
    match e {
        Error::Config { key, .. } => key,
        _ => "?",
    }
}

// The table: 7 variants × 5 FTLs × (no buffer + 5 policies) × volatile / non-volatile
// = 420 combinations; 85 exist (43 plain: page and DFTL 5 each, superblock, fast and
// block 11 each). The refused ones, and the key the refusal names:
//
// | combination                                  | key                          | why |
// |----------------------------------------------|------------------------------|-----|
// | any FTL and variant, no buffer, non-volatile | device.buffer_nonvolatile    | no effect without a write buffer |
// | page, dftl × fab, bplru, 3-region            | device.buffer_policy         | whole-block eviction helps only a block-mapped FTL |
// | superblock, fast, block × zgc                | gc.policy                    | no zombie-aware victim scores |
// | superblock, fast, block × sgc                | gc.zombie_block              | no separate write streams |
// | superblock, fast, block × skip               | gc.skip_shadows              | no ShadowGC |
// | superblock, fast, block × bg                 | gc.background                | no background GC |
// | page, dftl × sgc, bg, skip without a buffer  | gc.shadow_reads, gc.skip_shadows | works on the device write buffer |
// | page, dftl × skip above a volatile buffer    | gc.skip_shadows              | accepted by the configuration; `simulate` refuses it as unsafe (a power loss loses the pages GC dropped) |
// | page, dftl, superblock, block × ba-bm, ba-gc | ftl.buffer_aware_merge, ftl.log_victim | read only by FAST |
// | fast × ba-bm without a buffer                | device.buffer_max_dirty_age  | no effect without a write buffer |
// | fast × ba-gc but above the 3-region buffer   | ftl.log_victim               | BA-VBS weighs pages by the 3-region buffer's P(U) |
//
// `cargo test --test model_check the_combinations_that_exist -- --nocapture` prints
// every refusal with its message.
#[test]
fn the_combinations_that_exist() {
    let (exist, refused) = combinations();
    let mut names: Vec<String> = exist.iter().map(Combo::name).collect();
    let table: String = refused
        .iter()
        .map(|(c, e)| format!("  {:<40} {e}\n", c.name()))
        .collect();
    eprintln!("refused combinations ({}):\n{table}", refused.len());
    let mut want: Vec<String> = Vec::new();
    let v_nv = |p: &str| [format!("{p}/v"), format!("{p}/nv")];
    for ftl in ["page", "dftl", "superblock", "fast", "block"] {
        let mut buffers = vec!["none".to_string()];
        buffers.extend(v_nv("lru"));
        buffers.extend(v_nv("cflru"));
        if !matches!(ftl, "page" | "dftl") {
            for p in ["fab", "bplru", "3-region"] {
                buffers.extend(v_nv(p));
            }
        }
        want.extend(buffers.iter().map(|b| format!("{ftl} {b}")));
    }
    for (variant, ftls, buffers) in [
        (
            "zgc",
            &["page", "dftl"][..],
            &["none", "lru/v", "lru/nv", "cflru/v", "cflru/nv"][..],
        ),
        (
            "sgc",
            &["page", "dftl"],
            &["lru/v", "lru/nv", "cflru/v", "cflru/nv"],
        ),
        ("skip", &["page", "dftl"], &["lru/nv", "cflru/nv"]),
        (
            "bg",
            &["page", "dftl"],
            &["lru/v", "lru/nv", "cflru/v", "cflru/nv"],
        ),
        (
            "ba-bm",
            &["fast"],
            &[
                "lru/v",
                "lru/nv",
                "cflru/v",
                "cflru/nv",
                "fab/v",
                "fab/nv",
                "bplru/v",
                "bplru/nv",
                "3-region/v",
                "3-region/nv",
            ],
        ),
        ("ba-gc", &["fast"], &["3-region/v", "3-region/nv"]),
    ] {
        for ftl in ftls {
            want.extend(buffers.iter().map(|b| format!("{ftl} {b} {variant}")));
        }
    }
    names.sort();
    want.sort();
    assert_eq!(
        names, want,
        "the combinations that exist changed; refused ones:\n{table}"
    );
    // Every refusal names a key, and the plain ones name the keys above.
    for (c, e) in refused {
        assert!(matches!(e, Error::Config { .. }), "{}: {e}", c.name());
        if VARIANTS[c.variant].name == "plain" {
            let want = if c.buffer.is_none() {
                "device.buffer_nonvolatile"
            } else {
                "device.buffer_policy"
            };
            assert_eq!(key(e), want, "{}: {e}", c.name());
        }
    }
    // The skip policy above a volatile buffer: accepted by the configuration, refused
    // by the run as unsafe.
    for (c, e) in refused {
        if VARIANTS[c.variant].name == "skip"
            && matches!(c.buffer, Some(BufferPolicy::Lru | BufferPolicy::Cflru))
            && !c.nonvolatile
            && matches!(c.ftl, FtlKind::Page | FtlKind::Dftl)
        {
            assert!(c.config(TABLE_BUFFER_PAGES).is_ok(), "{}", c.name());
            assert_eq!(key(e), "gc.skip_shadows", "{}: {e}", c.name());
            assert!(e.to_string().contains("volatile"), "{}: {e}", c.name());
        }
    }
}

/// A logical page: `hot` ones (three in four) fall in the first 24 pages, so blocks
/// mix hot and cold pages; the rest anywhere (taken modulo the logical pages).
fn lpn() -> impl Strategy<Value = u64> {
    prop_oneof![3 => 0u64..24, 1 => 0u64..1024]
}

#[derive(Clone, Debug)]
enum Step {
    /// Write `pages` pages from `lpn` (FUA: through the buffer to flash).
    Write(u64, u32, bool),
    Read(u64),
    Trim(u64),
    Flush,
    /// `Device::power_loss`: a volatile buffer loses its dirty pages.
    PowerLoss,
    /// A clean restart: a flush, then the power-off (what `device.restart_at` runs).
    Restart,
    /// The host says the page has a dirty newer copy above the device (`true`), or that
    /// it lost it (`false`).
    Zombie(u64, bool),
}

fn step() -> impl Strategy<Value = Step> {
    let pages = prop_oneof![4 => Just(1u32), 1 => 2u32..=8];
    // Zombie hints fall anywhere (mostly on cold pages, which keep them until a
    // power loss: GC then meets them); a power loss or restart every 25 steps or so.
    prop_oneof![
        40 => (lpn(), pages, prop::bool::weighted(0.1)).prop_map(|(l, n, f)| Step::Write(l, n, f)),
        12 => lpn().prop_map(Step::Read),
        4 => lpn().prop_map(Step::Trim),
        4 => Just(Step::Flush),
        2 => Just(Step::PowerLoss),
        1 => Just(Step::Restart),
        12 => (0u64..1024, prop::bool::weighted(0.8)).prop_map(|(l, z)| Step::Zombie(l, z)),
    ]
}

/// One case: the steps, whether the device is filled (and flushed) first so that GC
/// runs from the start, and the buffer's size in pages.
fn case() -> impl Strategy<Value = (Vec<Step>, bool, u64)> {
    (
        prop::collection::vec(step(), 1..300),
        prop::bool::weighted(0.75),
        prop::sample::select(vec![1u64, 3, 8, 24]),
    )
}

/// Nanoseconds between steps on the device's clock (retention refresh, compulsory
/// flushes): 20 ms.
const STEP_NS: u64 = 20_000_000;

/// What the host knows of each logical page.
struct Model {
    /// The newest value written (None: never written, or trimmed).
    latest: Vec<Option<u64>>,
    /// Whether `latest` was acknowledged durable (flushed, FUA, a non-volatile buffer
    /// or none, a trim).
    durable: Vec<bool>,
    /// The last durable value, and the values written since (what flash may hold
    /// after a power loss: the buffer may have evicted any of them).
    last_durable: Vec<Option<u64>>,
    since: Vec<Vec<u64>>,
    /// Pages hinted as zombies and not written or trimmed since.
    zombies: BTreeSet<u64>,
}

impl Model {
    fn new(n: usize) -> Self {
        Model {
            latest: vec![None; n],
            durable: vec![true; n],
            last_durable: vec![None; n],
            since: vec![Vec::new(); n],
            zombies: BTreeSet::new(),
        }
    }

    fn set(&mut self, l: u64, v: Option<u64>, durable: bool) {
        let i = l as usize;
        self.latest[i] = v;
        self.durable[i] = durable;
        if durable {
            self.last_durable[i] = v;
            self.since[i].clear();
        } else {
            self.since[i].extend(v);
        }
        self.zombies.remove(&l);
    }

    fn all_durable(&mut self) {
        for i in 0..self.latest.len() {
            self.durable[i] = true;
            self.last_durable[i] = self.latest[i];
            self.since[i].clear();
        }
    }
}

macro_rules! check {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(TestCaseError::fail(format!($($fmt)*)));
        }
    };
}

/// Run `steps` on `combo` against the model; the error names the combination and step.
/// Returns the device and the pages its power losses lost.
fn run(
    combo: &Combo,
    steps: &[Step],
    fill: bool,
    buffer_pages: u64,
) -> Result<(Device, u64), TestCaseError> {
    let name = combo.name();
    let cfg = combo
        .config(buffer_pages)
        .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
    let mut dev = Device::new(&cfg, 7, true).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let buffered = combo.buffer.is_some();
    let volatile = buffered && !combo.nonvolatile;
    let n = dev.logical_pages();
    let mut m = Model::new(n as usize);
    let mut next = 0u64;
    let mut now = 0u64;
    let mut lost_pages = 0u64;
    let fail = |i: usize, s: Option<&Step>, e: Error| {
        TestCaseError::fail(format!("{name}, step {i} {s:?}: {e}"))
    };
    if fill {
        for l in 0..n {
            next += 1;
            let cmd = Command {
                payload: Payload::Same(next),
                ..Command::new(Op::Write, l, 1)
            };
            dev.submit(now, &cmd).map_err(|e| fail(0, None, e))?;
            m.set(l, Some(next), !volatile);
        }
        dev.submit(now, &Command::new(Op::Flush, 0, 0))
            .map_err(|e| fail(0, None, e))?;
        m.all_durable();
    }
    // As the measured phase of a run: timing (background GC in idle time) from here.
    dev.set_timing(cfg.timing.enabled);
    for (i, s) in steps.iter().enumerate() {
        let i = i + 1;
        now += STEP_NS;
        dev.tick(now).map_err(|e| fail(i, Some(s), e))?;
        let at = |e| fail(i, Some(s), e);
        match *s {
            Step::Write(l, pages, fua) => {
                let l = l % n;
                let pages = pages.min((n - l) as u32);
                let values: Vec<u64> = (next + 1..=next + pages as u64).collect();
                next += pages as u64;
                let cmd = Command {
                    payload: Payload::PerPage(&values),
                    fua,
                    ..Command::new(Op::Write, l, pages)
                };
                dev.submit(now, &cmd).map_err(at)?;
                for (k, &v) in values.iter().enumerate() {
                    m.set(l + k as u64, Some(v), fua || !volatile);
                }
            }
            Step::Read(l) => {
                let l = l % n;
                // The oracle checks the read the FTL resolves.
                dev.submit(now, &Command::new(Op::Read, l, 1)).map_err(at)?;
            }
            Step::Trim(l) => {
                let l = l % n;
                dev.submit(now, &Command::new(Op::Trim, l, 1)).map_err(at)?;
                m.set(l, None, true);
            }
            Step::Flush => {
                dev.submit(now, &Command::new(Op::Flush, 0, 0))
                    .map_err(at)?;
                m.all_durable();
            }
            Step::PowerLoss => {
                let before = dev.buffer().map(|b| b.counters.lost_pages);
                let lost = dev.power_loss().map_err(at)?;
                lost_pages += lost.len() as u64;
                power_lost(&name, i, &dev, &mut m, &lost, volatile)?;
                if let (Some(before), Some(b)) = (before, dev.buffer()) {
                    check!(
                        b.counters.lost_pages == before + lost.len() as u64,
                        "{name}, step {i}: the buffer counted {} lost pages, {} reported",
                        b.counters.lost_pages - before,
                        lost.len()
                    );
                }
            }
            Step::Restart => {
                dev.submit(now, &Command::new(Op::Flush, 0, 0))
                    .map_err(at)?;
                m.all_durable();
                let lost = dev.power_loss().map_err(at)?;
                check!(
                    lost.is_empty(),
                    "{name}, step {i}: a restart after a flush lost {lost:?}"
                );
                power_lost(&name, i, &dev, &mut m, &lost, volatile)?;
            }
            Step::Zombie(l, zombie) => {
                let l = l % n;
                dev.hint_zombie(l, zombie).map_err(at)?;
                if zombie {
                    m.zombies.insert(l);
                } else {
                    m.zombies.remove(&l);
                }
            }
        }
        dev.verify().map_err(at)?;
        agrees(&name, i, &dev, &m)?;
    }
    Ok((dev, lost_pages))
}

/// Every page reads what the model says, and the device knows the model's zombies.
fn agrees(name: &str, i: usize, dev: &Device, m: &Model) -> Result<(), TestCaseError> {
    for (l, &want) in m.latest.iter().enumerate() {
        let got = dev.content_of(l as u64);
        check!(
            got == want,
            "{name}, step {i}: page {l} reads {got:?}, the model {want:?} (durable: {})",
            m.durable[l]
        );
    }
    check!(
        dev.known_zombies() == m.zombies.len() as u64,
        "{name}, step {i}: the device knows {} zombies, the model {:?}",
        dev.known_zombies(),
        m.zombies
    );
    for &l in &m.zombies {
        check!(
            dev.ftl().is_host_shadow(l),
            "{name}, step {i}: page {l} is not known as a zombie"
        );
    }
    Ok(())
}

/// Check a power loss that reported `lost`, and bring the model in line with it.
fn power_lost(
    name: &str,
    i: usize,
    dev: &Device,
    m: &mut Model,
    lost: &[u64],
    volatile: bool,
) -> Result<(), TestCaseError> {
    check!(
        volatile || lost.is_empty(),
        "{name}, step {i}: nothing volatile, yet {lost:?} were lost"
    );
    check!(
        lost.windows(2).all(|w| w[0] < w[1]),
        "{name}, step {i}: lost pages not ascending: {lost:?}"
    );
    let lost_set: HashSet<u64> = lost.iter().copied().collect();
    for (l, latest) in m.latest.iter_mut().enumerate() {
        let got = dev.content_of(l as u64);
        if lost_set.contains(&(l as u64)) {
            check!(
                !m.durable[l],
                "{name}, step {i}: page {l} was acknowledged durable but reported lost"
            );
            check!(
                got != *latest,
                "{name}, step {i}: page {l} reported lost still reads its newest write"
            );
            // Flash holds the last durable copy, or a later write the buffer evicted.
            check!(
                got == m.last_durable[l] || got.is_some_and(|v| m.since[l].contains(&v)),
                "{name}, step {i}: lost page {l} reads {got:?}; last durable {:?}, since {:?}",
                m.last_durable[l],
                m.since[l]
            );
        } else {
            check!(
                got == *latest,
                "{name}, step {i}: page {l} not reported lost reads {got:?}, not {latest:?}"
            );
        }
        *latest = got;
    }
    m.all_durable();
    m.zombies.clear();
    check!(
        dev.known_zombies() == 0,
        "{name}, step {i}: {} zombies survived the power loss",
        dev.known_zombies()
    );
    if volatile {
        let dirty = dev.buffer().map_or(0, |b| b.dirty_count());
        check!(
            dirty == 0,
            "{name}, step {i}: {dirty} dirty pages survived in a volatile buffer"
        );
    }
    // Shadows return to live; only a non-volatile buffer's pages stay device-shadow.
    for l in 0..m.latest.len() as u64 {
        if let Some(ppn) = dev.ftl().mapped(l) {
            let state = dev.page_state(l, ppn);
            let ok = state == PageState::Live || (!volatile && state == PageState::DeviceShadow);
            check!(
                ok,
                "{name}, step {i}: page {l} is {state:?} after the power loss"
            );
        }
    }
    Ok(())
}

/// Run `steps` on every existing combination of `ftl` in `variants`.
fn run_all(
    ftl: FtlKind,
    variants: &[&str],
    (steps, fill, buffer_pages): &(Vec<Step>, bool, u64),
) -> Result<(), TestCaseError> {
    let combos = existing(ftl, variants);
    assert!(!combos.is_empty(), "{}: no combination", ftl.name());
    for c in &combos {
        run(c, steps, *fill, *buffer_pages)?;
    }
    Ok(())
}

/// Cases per test: `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> ProptestConfig {
    // The default configuration reads PROPTEST_CASES (and the other PROPTEST_ keys).
    let cfg = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_some() {
        cfg
    } else {
        ProptestConfig {
            cases: default,
            ..cfg
        }
    }
}

proptest! {
    #![proptest_config(cases(256))]

    /// Page mapping: no buffer, LRU and CFLRU, volatile and non-volatile.
    #[test]
    fn page(c in case()) {
        run_all(FtlKind::Page, &["plain"], &c)?;
    }

    /// DFTL: no buffer, LRU and CFLRU, volatile and non-volatile.
    #[test]
    fn dftl(c in case()) {
        run_all(FtlKind::Dftl, &["plain"], &c)?;
    }

    /// SuperBlock: no buffer and every buffer policy, volatile and non-volatile.
    #[test]
    fn superblock(c in case()) {
        run_all(FtlKind::Superblock, &["plain"], &c)?;
    }

    /// FAST: no buffer and every buffer policy, volatile and non-volatile, with BA-BM
    /// and with BA-GC.
    #[test]
    fn fast(c in case()) {
        run_all(FtlKind::Fast, &["plain", "ba-bm", "ba-gc"], &c)?;
    }

    /// Block mapping: no buffer and every buffer policy, volatile and non-volatile.
    #[test]
    fn block(c in case()) {
        run_all(FtlKind::Block, &["plain"], &c)?;
    }

    /// Page mapping with zombie-aware GC, ShadowGC, the skip policy and background GC.
    #[test]
    fn page_shadowgc(c in case()) {
        run_all(FtlKind::Page, &["zgc", "sgc", "skip", "bg"], &c)?;
    }

    /// DFTL with zombie-aware GC, ShadowGC, the skip policy and background GC.
    #[test]
    fn dftl_shadowgc(c in case()) {
        run_all(FtlKind::Dftl, &["zgc", "sgc", "skip", "bg"], &c)?;
    }
}

/// The existing combination named `name`.
fn named(name: &str) -> Combo {
    *combinations()
        .0
        .iter()
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("no combination {name}"))
}

/// Regression (found by `fast`): BPLRU evicted a logical block and inserted the new
/// page before writing the victim out, padded; with a one-page buffer the new page
/// (8) belongs to the victim's logical block, so the padding rewrote its flash copy,
/// and a FAST merge under BA-BM during that padding took the new page's dirty copy
/// from the buffer first: the pad then landed the stale copy on top, the buffer held
/// the page clean, and its newest write was lost at the next eviction, without any
/// power loss. The victim is now written before the new page enters.
#[test]
fn bplru_padding_never_overwrites_a_page_a_merge_took_from_the_buffer() {
    let steps = [
        Step::Write(10, 1, false),
        Step::Write(8, 1, false),
        Step::Write(10, 1, false),
        Step::Write(9, 2, false),
        Step::Write(9, 1, true),
        Step::Write(8, 1, false),
        Step::Write(9, 1, false),
    ];
    for name in ["fast bplru/v ba-bm", "fast bplru/nv ba-bm"] {
        run(&named(name), &steps, false, 1).unwrap();
    }
}

/// One long fixed sequence of steps (proptest's deterministic runner), on a filled
/// device with an 8-page buffer.
fn fixed_steps() -> Vec<Step> {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    prop::collection::vec(step(), 1500)
        .new_tree(&mut runner)
        .unwrap()
        .current()
}

/// The fixed sequence on every existing combination: the device is small enough that
/// each one collects (GC, merges) and a volatile buffer loses pages at its power
/// losses, and each variant does what it is there for (so the proptests exercise it).
#[test]
fn every_combination_collects_and_loses_what_it_should() {
    let steps = fixed_steps();
    let mut fast_programs = 0;
    for c in &combinations().0 {
        let (dev, lost) = run(c, &steps, true, 8).unwrap();
        let k = dev.counters();
        let name = c.name();
        let variant = VARIANTS[c.variant].name;
        let about = format!(
            "{name}: victims {}, merges {:?}, lost {lost}, buffer reads {}, skipped {}, \
             zombie copies {}, refreshed blocks {}, padding reads {}",
            k.gc_victims,
            k.merges,
            k.gc_buffer_reads,
            k.gc_skipped,
            k.gc_zombie_pages_copied,
            k.refresh_blocks,
            k.reads.get(zombiesim::stats::Cause::Buffer)
        );
        assert!(k.gc_victims > 0, "{about}");
        assert_eq!(
            lost > 0,
            c.buffer.is_some() && !c.nonvolatile,
            "only a volatile buffer loses pages: {about}"
        );
        if c.buffer == Some(BufferPolicy::Bplru) {
            assert!(k.reads.get(zombiesim::stats::Cause::Buffer) > 0, "{about}");
        }
        match c.ftl {
            FtlKind::Fast => assert!(k.merges[1] > 0 && k.merges[2] > 0, "{about}"),
            FtlKind::Page | FtlKind::Dftl if variant == "plain" => {
                assert!(k.gc_zombie_pages_copied > 0, "GC met zombies: {about}")
            }
            _ => {}
        }
        match variant {
            "sgc" => {
                assert!(k.gc_buffer_reads > 0 && k.refresh_blocks > 0, "{about}");
                fast_programs += k.gc_fast_programs;
            }
            "skip" => assert!(k.gc_skipped > 0, "{about}"),
            "bg" => assert!(
                k.gc_background_victims > 0 && k.gc_buffer_reads > 0,
                "{about}"
            ),
            "ba-bm" | "ba-gc" => assert!(k.gc_buffer_reads > 0, "{about}"),
            _ => {}
        }
    }
    assert!(fast_programs > 0, "ShadowGC never fast-wrote a zombie page");
}

/// The check is sharp enough to see what the configuration refuses as unsafe: the skip
/// policy above a volatile buffer (forced past `simulate`'s refusal by building the
/// device directly) loses pages at a power loss, and the model check says so.
#[test]
fn the_model_check_catches_the_skip_policy_above_a_volatile_buffer() {
    let unsafe_skip = Combo {
        ftl: FtlKind::Page,
        buffer: Some(BufferPolicy::Lru),
        nonvolatile: false,
        variant: VARIANTS.iter().position(|v| v.name == "skip").unwrap(),
    };
    assert!(combinations()
        .1
        .iter()
        .any(|(c, _)| c.name() == unsafe_skip.name()));
    let Err(err) = run(&unsafe_skip, &fixed_steps(), true, 8) else {
        panic!("the skip policy above a volatile buffer lost nothing");
    };
    assert!(
        err.to_string().contains("lost") && err.to_string().contains("gc.skip_shadows"),
        "{err}"
    );
}
