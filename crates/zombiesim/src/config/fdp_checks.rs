//! The checks of `[fdp]` against the rest of the configuration, and its resolved
//! layout ([`FdpLayout`]): every combination FDP cannot run with is refused naming the
//! key.

use super::{Config, FdpConfig, FtlKind, GcFrontier, GcScope, Geometry};
use crate::error::{Error, Result};
use crate::placement::FdpLayout;

impl FdpConfig {
    /// The resolved layout on `geo`, or `None` when FDP is off.
    pub fn layout(&self, cfg: &Config, geo: &Geometry) -> Result<Option<FdpLayout>> {
        if !self.enabled {
            return Ok(None);
        }
        let f = &cfg.flash;
        let rgs = self.reclaim_groups;
        let dies = geo.planes / f.planes_per_die;
        if rgs == 0 || !dies.is_multiple_of(rgs) {
            return Err(Error::config(
                "fdp.reclaim_groups",
                format!(
                    "{rgs}: must divide the {dies} dies evenly (a reclaim group is whole dies)"
                ),
            ));
        }
        let rg_planes = geo.planes / rgs;
        let ru_planes = if self.ru_planes == 0 {
            rg_planes
        } else {
            self.ru_planes
        };
        if !rg_planes.is_multiple_of(ru_planes) {
            return Err(Error::config(
                "fdp.ru_planes",
                format!(
                    "{ru_planes}: must divide the {rg_planes} planes of a reclaim group (0 = all of them)"
                ),
            ));
        }
        if !(1..=64).contains(&self.handles) {
            return Err(Error::config(
                "fdp.handles",
                format!("{}: must be between 1 and 64", self.handles),
            ));
        }
        let gc = self.isolation.gc_streams(self.handles);
        Ok(Some(FdpLayout {
            handles: self.handles,
            reclaim_groups: rgs,
            rg_planes,
            ru_planes,
            isolation: self.isolation,
            streams_per_rg: self.handles + gc,
        }))
    }

    /// The combinations FDP cannot run with, refused naming the key; then the layout.
    pub fn validate(cfg: &Config, geo: &Geometry) -> Result<()> {
        let d = &cfg.fdp;
        if !d.enabled {
            if *d != FdpConfig::default() {
                let key = if d.handles != 8 {
                    "fdp.handles"
                } else if d.reclaim_groups != 1 {
                    "fdp.reclaim_groups"
                } else if d.ru_planes != 0 {
                    "fdp.ru_planes"
                } else {
                    "fdp.isolation"
                };
                return Err(Error::unread(key, "is read only with fdp.enabled = true"));
            }
            return Ok(());
        }
        let refuse = |key: &str, why: &str| Err(Error::config(key, why.to_string()));
        if !matches!(cfg.ftl.kind, FtlKind::Page | FtlKind::Dftl) {
            return refuse(
                "fdp.enabled",
                &format!(
                    "the `{}` FTL maps whole blocks and cannot place pages by handle; use ftl.kind = \"page\" or \"dftl\"",
                    cfg.ftl.kind.name()
                ),
            );
        }
        if !cfg.ftl.placement.is_default() {
            return refuse(
                "ftl.placement",
                "FDP places by the writer's placement identifier; leave ftl.placement unset with fdp.enabled",
            );
        }
        if cfg.gc.zombie_weight != crate::config::ZombieWeight::All {
            return refuse(
                "gc.zombie_weight",
                "zombie weights are kept per block, and FDP's victims are reclaim units; use `all` with fdp.enabled",
            );
        }
        if cfg.ftl.regions != 1 {
            return refuse(
                "ftl.regions",
                "hot/cold regions are a placement of their own; use fdp.handles with fdp.enabled",
            );
        }
        if cfg.ftl.gc_frontier != GcFrontier::Separate {
            return refuse(
                "ftl.gc_frontier",
                "with fdp.enabled GC copies go where fdp.isolation says; use \"separate\"",
            );
        }
        if cfg.gc.scope != GcScope::Device {
            return refuse(
                "gc.scope",
                "with fdp.enabled each reclaim group has its own garbage collector (fdp.reclaim_groups); use \"device\"",
            );
        }
        if cfg.ftl.allocation == super::Allocation::Dynamic && cfg.timing.enabled {
            return refuse(
                "ftl.allocation",
                "with fdp.enabled a handle fills its reclaim unit's planes in turn; use \"stripe\"",
            );
        }
        if cfg.content.enabled() {
            return refuse(
                "fdp.enabled",
                "the content layer (content.*) keeps per-block weights that reclaim units do not aggregate; turn one of them off",
            );
        }
        if cfg.gc.fast_write || cfg.ftl.retention_s > 0.0 {
            let key = if cfg.gc.fast_write {
                "gc.fast_write"
            } else {
                "ftl.retention_s"
            };
            return refuse(
                key,
                "retention refresh moves single blocks, and reclaim units are erased whole; turn it off with fdp.enabled",
            );
        }
        let layout = d.layout(cfg, geo)?.expect("enabled");
        if layout.reclaim_groups > 1 {
            if cfg.gc.zombie_block {
                return refuse(
                    "gc.zombie_block",
                    "the zombie block is one stream of the device; use it with fdp.reclaim_groups = 1",
                );
            }
            if cfg.ftl.kind == FtlKind::Dftl {
                return refuse(
                    "fdp.reclaim_groups",
                    "DFTL's translation pages are one stream of the device; use 1 reclaim group with ftl.kind = \"dftl\"",
                );
            }
        }
        // Over a burst of GC, each GC destination (one, or one per handle; the zombie
        // and translation streams too) may open a fresh RU in each RU slot of its
        // reclaim group before the victims it copies from are erased.
        let destinations = layout.gc_streams()
            + u32::from(cfg.gc.zombie_block)
            + u32::from(cfg.ftl.kind == FtlKind::Dftl);
        let needed = layout.groups_per_rg() * destinations + 1;
        if cfg.gc.low_watermark < needed {
            return refuse(
                "gc.low_watermark",
                &format!(
                    "{} is too low with fdp.enabled: counted in reclaim units, GC writes to {destinations} \
                     destination stream(s) (fdp.isolation = \"{}\"{}), each of which may open a fresh RU in \
                     each of the {} RU slot(s) of a reclaim group before its victims are erased; use at least {needed}",
                    cfg.gc.low_watermark,
                    layout.isolation.name(),
                    if cfg.gc.zombie_block { ", and the zombie block" } else { "" },
                    layout.groups_per_rg(),
                ),
            );
        }
        Ok(())
    }
}
