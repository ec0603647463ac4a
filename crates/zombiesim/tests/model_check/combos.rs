//! The small device, the variants, and which FTL × buffer × variant combinations exist.

use std::sync::OnceLock;
use zombiesim::config::{BufferPolicy, FtlKind};
use zombiesim::{simulate, Config, Error, RunOptions, WorkloadSpec};

/// The small device: 2 planes × 16 blocks × 8 pages of 512 B (256 physical pages; a
/// DFTL translation page maps 128 logical pages), OP 30%: 196 logical pages (192 for
/// the block-mapped FTLs, 8 spare blocks; DFTL raises the OP, see `ftl_settings`).
pub const DEVICE: [(&str, &str); 8] = [
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
pub const TABLE_BUFFER_PAGES: u64 = 8;

/// Settings each FTL kind gets to make its own reclaiming frequent.
fn ftl_settings(kind: FtlKind) -> &'static [(&'static str, &'static str)] {
    match kind {
        // A cached mapping table of 8 entries: translation reads and write-backs; OP
        // 50% (170 logical pages) for the translation blocks' open block on each plane.
        FtlKind::Dftl => &[("ftl.cmt_entries", "8"), ("ftl.over_provisioning", "0.5")],
        // 6 superblocks of 4 logical blocks over 8 spare blocks.
        FtlKind::Superblock => &[("ftl.superblock_blocks", "4")],
        // 3 random log blocks: merges every few dozen page writes.
        FtlKind::Fast => &[("ftl.log_blocks", "3")],
        FtlKind::Page | FtlKind::Block => &[],
    }
}

/// Configuration settings: `(key, value)` pairs.
pub type Settings = &'static [(&'static str, &'static str)];

/// A variant: settings on top of an FTL × buffer combination.
pub struct Variant {
    pub name: &'static str,
    settings: Settings,
    /// A host write buffer above the device (as many pages as the case's buffer
    /// size), with these settings (how it tells the device what it holds dirty, what
    /// the device does with that).
    host: Option<Settings>,
    /// Content-aware flash settings (`run_config` then writes values from a small
    /// alphabet).
    content: Settings,
}

/// Nothing on top (the base of the variants' struct updates).
const NO_VARIANT: Variant = Variant {
    name: "",
    settings: &[],
    host: None,
    content: &[],
};

/// 000's zombie-aware GC: z-greedy and the zombie block.
const ZGC: Settings = &[
    ("flash.blocks_per_plane", "32"),
    ("ftl.over_provisioning", "0.5"),
    ("gc.policy", "z-greedy"),
    ("gc.zombie_block", "true"),
    ("gc.low_watermark", "4"),
    ("gc.high_watermark", "4"),
];

/// 003's ShadowGC: GC takes device-shadow pages from the buffer, host-shadow pages go
/// to fast-written dedicated blocks, refreshed every second and at every restart,
/// normal blocks every nine seconds.
const SGC: Settings = &[
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
];

/// The dedicated (zombie) stream and background GC need more free blocks (a higher
/// watermark, more open blocks) and so a larger device: 2 planes × 32 blocks, OP 50%.
pub const VARIANTS: [Variant; 18] = [
    Variant {
        name: "plain",
        ..NO_VARIANT
    },
    Variant {
        name: "zgc",
        settings: ZGC,
        ..NO_VARIANT
    },
    // ShadowGC without twin discards (which need a host buffer: `sgc-twins`).
    Variant {
        name: "sgc",
        settings: SGC,
        ..NO_VARIANT
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
        ..NO_VARIANT
    },
    // The skip policy: GC drops device-shadow pages (safe only above a non-volatile
    // buffer: `simulate` refuses it otherwise).
    Variant {
        name: "skip",
        settings: &[("gc.skip_shadows", "true")],
        ..NO_VARIANT
    },
    // 004's buffer-aware merge alone (FAST takes dirty pages from the buffer), with
    // compulsory flushes of pages dirty for more than a second.
    Variant {
        name: "ba-bm",
        settings: &[
            ("ftl.buffer_aware_merge", "true"),
            ("device.buffer_max_dirty_age", "1"),
        ],
        ..NO_VARIANT
    },
    // 004's BA-GC: BA-BM and BA-VBS's log victim (needs the 3-region buffer).
    Variant {
        name: "ba-gc",
        settings: &[
            ("ftl.buffer_aware_merge", "true"),
            ("ftl.log_victim", "ba-vbs"),
        ],
        ..NO_VARIANT
    },
    // The host write buffer (LRU), telling the device at once of every page it dirties.
    Variant {
        name: "hb",
        host: Some(&[("notify.mode", "ideal")]),
        ..NO_VARIANT
    },
    // ... CFLRU, its hints piggybacked on reads and writes: one extent of at most four
    // pages per command (the device learns late, or never).
    Variant {
        name: "hb-pb",
        host: Some(&[
            ("notify.mode", "piggyback"),
            ("notify.extent_sectors", "4"),
            ("host.buffer_policy", "cflru"),
        ]),
        ..NO_VARIANT
    },
    // ... LRU, its hints in notification commands of two extents that hold the
    // interface (timing on).
    Variant {
        name: "hb-cmd",
        settings: &[("timing.enabled", "true")],
        host: Some(&[("notify.mode", "command"), ("notify.extents", "2")]),
        ..NO_VARIANT
    },
    // 003's twin discards under the host buffer, told at once and piggybacked.
    Variant {
        name: "twins",
        host: Some(&[("notify.mode", "ideal"), ("device.discard_twins", "true")]),
        ..NO_VARIANT
    },
    Variant {
        name: "twins-pb",
        host: Some(&[
            ("notify.mode", "piggyback"),
            ("device.discard_twins", "true"),
        ]),
        ..NO_VARIANT
    },
    // 003's ShadowGC whole: the host buffer, twin discards, fast-write relocation of
    // the host-shadow pages it tells the device of.
    Variant {
        name: "sgc-twins",
        settings: SGC,
        host: Some(&[("notify.mode", "ideal"), ("device.discard_twins", "true")]),
        ..NO_VARIANT
    },
    // 001's content-aware flash: deduplication alone ...
    Variant {
        name: "dedup",
        content: &[("content.dedup", "true")],
        ..NO_VARIANT
    },
    // ... a dead-value pool alone: LRU by value, and LX-SSD's by logical page (16
    // entries: they are evicted too) ...
    Variant {
        name: "pool",
        content: &[("content.pool", "lru"), ("content.pool_entries", "16")],
        ..NO_VARIANT
    },
    Variant {
        name: "lx",
        content: &[("content.pool", "lx"), ("content.pool_entries", "16")],
        ..NO_VARIANT
    },
    // ... both, with the multi-queue pool and the popularity-aware victim policy ...
    Variant {
        name: "dedup-mq",
        content: &[
            ("content.dedup", "true"),
            ("content.pool", "mq"),
            ("content.pool_entries", "16"),
            ("content.mq_queues", "2"),
            ("gc.policy", "popularity"),
        ],
        ..NO_VARIANT
    },
    // ... and both (the unbounded pool) under zombie-aware GC with the zombie block.
    Variant {
        name: "dedup-zgc",
        settings: ZGC,
        content: &[("content.dedup", "true"), ("content.pool", "infinite")],
        ..NO_VARIANT
    },
];

/// One FTL × buffer × durability × variant combination.
#[derive(Clone, Copy, Debug)]
pub struct Combo {
    pub ftl: FtlKind,
    pub buffer: Option<BufferPolicy>,
    pub nonvolatile: bool,
    pub variant: usize,
}

impl Combo {
    pub fn name(&self) -> String {
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
    pub fn config(&self, buffer_pages: u64) -> zombiesim::Result<Config> {
        let variant = &VARIANTS[self.variant];
        let mut pairs: Vec<(String, String)> = DEVICE
            .iter()
            .chain(ftl_settings(self.ftl))
            .chain(variant.settings)
            .chain(variant.host.unwrap_or_default())
            .chain(variant.content)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        pairs.push(("ftl.kind".into(), self.ftl.name().into()));
        pairs.push(("precondition.random_drive_writes".into(), "0".into()));
        if let Some(p) = self.buffer {
            pairs.push(("device.buffer".into(), format!("{}", buffer_pages * 512)));
            pairs.push(("device.buffer_policy".into(), p.name().into()));
        }
        if variant.host.is_some() {
            pairs.push(("host.buffer".into(), format!("{}", buffer_pages * 512)));
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
pub fn combinations() -> &'static Combinations {
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
pub fn existing(ftl: FtlKind, variants: &[&str]) -> Vec<Combo> {
    combinations()
        .0
        .iter()
        .filter(|c| c.ftl == ftl && variants.contains(&VARIANTS[c.variant].name))
        .copied()
        .collect()
}

/// The key a refusal names.
pub fn key(e: &Error) -> &str {
    match e {
        Error::Config { key, .. } => key,
        _ => "?",
    }
}

/// The existing combination named `name`.
pub fn named(name: &str) -> Combo {
    *combinations()
        .0
        .iter()
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("no combination {name}"))
}
