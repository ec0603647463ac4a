//! How an FTL lays itself out on the NAND: GC units (`gc.scope`), write streams
//! (hot/cold regions, a separate GC frontier, the zombie block) and the spare blocks
//! the GC watermarks need. The NAND's own shape is [`Geometry`]; this is the FTL's
//! side of it, checked with the configuration so that a layout that cannot work is
//! refused naming the key.

use super::{Config, FdpLayout, FtlKind, GcFrontier, GcScope, Geometry};
use crate::error::{Error, Result};

/// A contiguous range of planes served by one garbage collector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitRange {
    pub first_plane: u32,
    pub planes: u32,
}

/// GC units and write streams of a page-allocating FTL.
#[derive(Clone, Debug, PartialEq)]
pub struct FtlLayout {
    /// GC units, by `gc.scope`.
    pub units: Vec<UnitRange>,
    /// Open write frontiers per plane: host regions, GC regions when GC has its own
    /// frontier, and the zombie block when `gc.zombie_block` is on.
    pub streams: u32,
    /// Host streams `0 .. regions`: the hot/cold regions of `ftl.regions`, or as many
    /// as the placement policy asks for.
    pub regions: u32,
    /// GC copies of region `r` use stream `gc_first_stream + r`.
    pub gc_first_stream: u32,
    /// The stream GC copies zombie pages to.
    pub zombie_stream: Option<u32>,
    /// GC streams `gc_first_stream .. gc_first_stream + gc_streams` (one per region,
    /// unless the placement policy asks for its own number).
    pub gc_streams: u32,
    /// DFTL: the stream of the translation pages, for their writes and for GC's copies
    /// of them, so that they fill translation blocks apart from the data blocks (as
    /// DFTL keeps them). A victim holds translation pages only or data pages only, so
    /// GC of one still writes to one stream (plus the zombie block).
    pub translation_stream: Option<u32>,
    /// FDP (`fdp.enabled`): reclaim groups are the GC units, each with its handles'
    /// streams `rg · streams_per_rg ..`, and blocks are taken and reclaimed a reclaim
    /// unit at a time.
    pub fdp: Option<FdpLayout>,
}

impl FtlLayout {
    /// Resolve and check the layout on `geo`; errors name the config key to change.
    pub fn new(cfg: &Config, geo: &Geometry) -> Result<FtlLayout> {
        let f = &cfg.flash;
        let planes = geo.planes;
        let fdp = cfg.fdp.layout(cfg, geo)?;
        if let Some(fdp) = fdp {
            return Self::fdp(cfg, geo, fdp);
        }
        let per_unit = match cfg.gc.scope {
            GcScope::Device => planes,
            GcScope::Bank => f.dies_per_chip * f.planes_per_die,
            GcScope::Die => f.planes_per_die,
            GcScope::Plane => 1,
        };
        let units: Vec<UnitRange> = (0..planes / per_unit)
            .map(|u| UnitRange {
                first_plane: u * per_unit,
                planes: per_unit,
            })
            .collect();
        if cfg.gc.low_watermark < 2 && per_unit > 1 {
            return Err(Error::config(
                "gc.low_watermark",
                format!(
                    "must be at least 2 when a GC unit spans {per_unit} planes (GC may need a fresh \
                     block on the victim's plane); 1 is allowed only with one plane per GC unit \
                     and ftl.gc_frontier = \"shared\""
                ),
            ));
        }
        // The placement policy may want its own numbers of host and GC streams.
        let wanted = cfg
            .ftl
            .placement
            .streams(cfg.ftl.regions.max(1))
            .map_err(|(key, why)| Error::config(&key, why))?;
        let regions = wanted.host.unwrap_or(cfg.ftl.regions.max(1));
        let gc_own = wanted.gc;
        let gc_first = match cfg.ftl.gc_frontier {
            GcFrontier::Separate => regions,
            GcFrontier::Shared if gc_own.is_some() => {
                return Err(Error::config(
                    "ftl.gc_frontier",
                    format!(
                        "`ftl.placement = \"{}\"` gives GC streams of its own; use \"separate\"",
                        cfg.ftl.placement
                    ),
                ))
            }
            GcFrontier::Shared => 0,
        };
        let gc_data_streams = gc_own.unwrap_or(regions);
        let data_streams = gc_first + gc_data_streams;
        // GC copies one victim into up to this many open blocks of its plane, each of
        // which may need a fresh block. A victim frees one block, and all its copies
        // but the first stream's fit in blocks the other streams already hold open,
        // except when those fill: over a burst of GC every extra stream's frontier on
        // every plane of the unit may cross into a fresh block, so the free count may
        // dip by one block per extra stream and plane below where GC began.
        let gc_streams = gc_data_streams + u32::from(cfg.gc.zombie_block);
        let needed = per_unit * (gc_streams - 1) + 2;
        if gc_streams > 1 && cfg.gc.low_watermark < needed {
            return Err(Error::config(
                "gc.low_watermark",
                format!(
                    "{} is too low: GC writes to {gc_streams} streams per plane (ftl.regions = {regions}, ftl.placement = {}{}) \
                     on the {per_unit} planes of a GC unit, and each extra stream's open block on each \
                     plane may need a fresh block during one burst of GC; use at least {needed}",
                    cfg.gc.low_watermark,
                    cfg.ftl.placement,
                    if cfg.gc.zombie_block { " and the zombie block" } else { "" },
                ),
            ));
        }
        let zombie_stream = cfg.gc.zombie_block.then_some(data_streams);
        let mut streams = data_streams + u32::from(cfg.gc.zombie_block);
        let translation_stream = (cfg.ftl.kind == FtlKind::Dftl).then_some(streams);
        streams += u32::from(translation_stream.is_some());
        // Spare blocks each GC unit needs: its watermark, its open frontiers, one to work with.
        let ppb = geo.pages_per_block as u64;
        let spare_blocks =
            (geo.blocks - geo.reserved_blocks) as u64 - geo.logical_pages.div_ceil(ppb);
        let per_unit_spare = spare_blocks / units.len() as u64;
        let watermark = cfg.gc.reserve_watermark();
        let needed = watermark as u64 + (per_unit * streams) as u64 + 1;
        // The block-mapped FTLs count their own spare blocks (config::hybrid).
        if !cfg.ftl.kind.block_mapped() && per_unit_spare < needed {
            return Err(Error::config(
                "ftl.over_provisioning",
                format!(
                    "{} leaves {per_unit_spare} spare blocks per GC unit, but GC needs at least {needed} \
                     (the GC watermark + open blocks + 1); raise the over-provisioning, add blocks, \
                     or lower the watermarks",
                    cfg.ftl.over_provisioning
                ),
            ));
        }
        Ok(FtlLayout {
            units,
            streams,
            regions,
            gc_first_stream: gc_first,
            zombie_stream,
            gc_streams: gc_data_streams,
            translation_stream,
            fdp: None,
        })
    }

    /// The layout of an FDP device: one GC unit per reclaim group; per group its
    /// handles' streams and its GC destinations; the zombie and translation streams
    /// after them (one reclaim group only); spare reclaim units for the watermark
    /// (counted in RUs) and every stream's open RU in each RU slot.
    fn fdp(cfg: &Config, geo: &Geometry, fdp: FdpLayout) -> Result<FtlLayout> {
        let units: Vec<UnitRange> = (0..fdp.reclaim_groups)
            .map(|g| UnitRange {
                first_plane: g * fdp.rg_planes,
                planes: fdp.rg_planes,
            })
            .collect();
        let data = fdp.reclaim_groups * fdp.streams_per_rg;
        let zombie_stream = cfg.gc.zombie_block.then_some(data);
        let mut streams = data + u32::from(cfg.gc.zombie_block);
        let translation_stream = (cfg.ftl.kind == FtlKind::Dftl).then_some(streams);
        streams += u32::from(translation_stream.is_some());
        if streams > u8::MAX as u32 {
            return Err(Error::config(
                "fdp.handles",
                format!(
                    "{} handles in {} reclaim groups need {streams} streams; at most 255",
                    fdp.handles, fdp.reclaim_groups
                ),
            ));
        }
        let ppb = geo.pages_per_block as u64;
        let spare_blocks =
            (geo.blocks - geo.reserved_blocks) as u64 - geo.logical_pages.div_ceil(ppb);
        let spare_rus = spare_blocks / fdp.reclaim_groups as u64 / fdp.ru_planes as u64;
        let watermark = cfg.gc.reserve_watermark();
        let rg_streams = streams - data + fdp.streams_per_rg;
        let needed = watermark as u64 + (rg_streams * fdp.groups_per_rg()) as u64 + 1;
        if spare_rus < needed {
            return Err(Error::config(
                "ftl.over_provisioning",
                format!(
                    "{} leaves {spare_rus} spare reclaim units per reclaim group, but FDP needs at least {needed} \
                     (the GC watermark in RUs + one open RU per stream and RU slot + 1); raise the \
                     over-provisioning, or lower fdp.handles or fdp.ru_planes",
                    cfg.ftl.over_provisioning
                ),
            ));
        }
        Ok(FtlLayout {
            units,
            streams,
            regions: 1,
            gc_first_stream: fdp.handles,
            zombie_stream,
            gc_streams: fdp.gc_streams(),
            translation_stream,
            fdp: Some(fdp),
        })
    }
}

/// The largest GC horizon, in host page writes (the oracle keeps death distances in 32
/// bits).
pub const MAX_HORIZON: u64 = u32::MAX as u64 - 1;

impl Config {
    /// The GC horizon on `geo`, in host page writes: `gc.oracle_horizon`, or (0) three
    /// quarters of the spare pages GC works with — physical − logical pages, less the
    /// blocks each GC unit holds back free (its reserve watermark) or open (one per write
    /// stream and plane). An invalid page waits about that long before GC reclaims it;
    /// the oracle marks pages dying within it, and lifetime-aware GC weighs zombies by
    /// the chance they die within it.
    pub fn gc_horizon(&self, geo: &Geometry) -> Result<u64> {
        if self.gc.oracle_horizon > 0 {
            return Ok(self.gc.oracle_horizon.min(MAX_HORIZON));
        }
        let layout = FtlLayout::new(self, geo)?;
        let watermark = self.gc.reserve_watermark() as u64;
        let held: u64 = layout
            .units
            .iter()
            .map(|u| (watermark + (u.planes * layout.streams) as u64) * geo.pages_per_block as u64)
            .sum();
        let spare = geo.physical_pages.saturating_sub(geo.logical_pages);
        Ok((spare.saturating_sub(held) * 3 / 4).clamp(1, MAX_HORIZON))
    }

    /// The horizon lifetime-aware GC predicts deaths within: `gc.lifetime_horizon`
    /// times [`Config::gc_horizon`].
    pub fn lifetime_horizon(&self, geo: &Geometry) -> Result<u64> {
        let h = self.gc_horizon(geo)? as f64 * self.gc.lifetime_horizon;
        Ok((h.round() as u64).clamp(1, MAX_HORIZON))
    }
}
