//! The FTL of each `ftl.kind`: the registry's build functions (`config::ftl_kind_registry!`),
//! and those of the two page-mapped kinds.

use crate::config::{ftl_kind_registry, Config, FtlKind};
use crate::error::Result;
use crate::ftl::{DftlFtl, ExternalPolicies, Ftl, PageMappedFtl};

/// `build`, from the registry lines.
macro_rules! build_kind {
    ($(($variant:ident, $name:literal, $spec:ident, $($build:ident)::+),)*) => {
        /// Build the FTL a configuration names, after refusing what the kind cannot do
        /// (its [`Capabilities`](crate::config::Capabilities)), asking `external` the
        /// decisions it takes. `verify` keeps the integrity oracle.
        pub fn build_with(
            cfg: &Config,
            seed: u64,
            verify: bool,
            external: &ExternalPolicies,
        ) -> Result<Box<dyn Ftl>> {
            let kind = cfg.ftl.kind;
            kind.spec().capabilities.check(cfg, kind.name())?;
            if !external.is_empty() && kind.block_mapped() {
                return Err(crate::Error::config(
                    "ftl.kind",
                    format!(
                        "the `{}` FTL reclaims by merging blocks and writes each page in its \
                         logical block, with no victim policy or placement to replace: a \
                         policy given to the run (victim=, placement=) needs ftl.kind = \
                         \"page\" or \"dftl\"",
                        kind.name()
                    ),
                ));
            }
            match kind {
                $(FtlKind::$variant => super::$($build)::+(cfg, seed, verify, external),)*
            }
        }
    };
}
ftl_kind_registry!(build_kind);

/// [`build_with`], asking nothing outside.
pub fn build(cfg: &Config, seed: u64, verify: bool) -> Result<Box<dyn Ftl>> {
    build_with(cfg, seed, verify, &ExternalPolicies::default())
}

/// `ftl.kind = "page"`.
pub(super) fn page(
    cfg: &Config,
    seed: u64,
    verify: bool,
    external: &ExternalPolicies,
) -> Result<Box<dyn Ftl>> {
    Ok(Box::new(PageMappedFtl::with_policies(
        cfg, seed, verify, external,
    )?))
}

/// `ftl.kind = "dftl"`.
pub(super) fn dftl(
    cfg: &Config,
    seed: u64,
    verify: bool,
    external: &ExternalPolicies,
) -> Result<Box<dyn Ftl>> {
    Ok(Box::new(DftlFtl::with_policies(
        cfg, seed, verify, external,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of the registry: its name sets `ftl.kind` and reads back, the
    /// configuration validates through its entry, and `build` makes its FTL, whose
    /// logical capacity follows the entry's mapping (whole blocks when block-mapped).
    #[test]
    fn every_registered_kind_builds_from_its_name() {
        for kind in FtlKind::ALL {
            let mut cfg = Config::default();
            cfg.set("ftl.kind", kind.name())
                .unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
            assert_eq!(cfg.ftl.kind, kind);
            assert_eq!(cfg.get("ftl.kind").unwrap(), format!("\"{}\"", kind.name()));
            let ftl = build(&cfg, 1, true).unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
            let geo = &ftl.base().geo;
            let whole_blocks = geo.logical_pages.is_multiple_of(geo.pages_per_block as u64);
            assert!(!kind.block_mapped() || whole_blocks, "{}", kind.name());
            ftl.verify().unwrap();
        }
    }

    /// What an entry says the kind cannot do is refused, naming the key.
    #[test]
    fn a_kind_without_zombie_scores_refuses_a_zombie_aware_policy() {
        for kind in FtlKind::ALL {
            let mut cfg = Config::default();
            cfg.set("ftl.kind", kind.name()).unwrap();
            let refused = cfg.set("gc.policy", "z-greedy");
            if kind.spec().capabilities.zombie_scores {
                refused.unwrap();
            } else {
                let err = refused.unwrap_err().to_string();
                assert!(err.contains("gc.policy"), "{}: {err}", kind.name());
            }
        }
    }
}
