//! The checks every FTL kind gets from its registry entry: the keys only another kind
//! reads, the ranges of every kind's keys, a block-granularity buffer policy above a
//! page-mapped FTL, and a block-mapped kind's spare blocks and the page-mapped GC keys
//! it would not read.

use super::Mapping;
use crate::config::{Config, FtlKind, Geometry, PolicySpec};
use crate::error::{Error, Result};

/// Refuse a value of a kind's key that no kind takes, and a change to a key only
/// another kind reads (kinds in registry order, keys in their entry's order).
pub fn validate_keys(cfg: &Config) -> Result<()> {
    let kind = cfg.ftl.kind;
    for owner in FtlKind::ALL {
        for k in owner.spec().keys {
            if let Some(why) = (k.refused)(cfg) {
                return Err(Error::config(k.key, why));
            }
            if owner != kind && (k.changed)(cfg) {
                return Err(Error::unread(
                    k.key,
                    format!(
                        "is read only by the `{}` FTL (ftl.kind is `{}`)",
                        owner.name(),
                        kind.name()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A block-granularity policy of the device write buffer evicts whole logical blocks:
/// refused above a page-mapped FTL.
pub fn validate_block_granular_buffer(cfg: &Config) -> Result<()> {
    let kind = cfg.ftl.kind;
    let policy = cfg.device.buffer_policy;
    if policy.block_granular() && !kind.block_mapped() {
        return Err(Error::config(
            "device.buffer_policy",
            format!(
                "`{}` evicts whole logical blocks, which helps only a block-mapped FTL \
                 (ftl.kind = {}); with ftl.kind = `{}` use lru or cflru",
                policy.name(),
                or_list(&FtlKind::names_where(FtlKind::block_mapped)),
                kind.name()
            ),
        ));
    }
    Ok(())
}

/// The checks of the kind that runs: its entry's own, then, for a block-mapped kind,
/// the page-mapped GC keys it would not read and its spare blocks.
pub fn validate_kind(cfg: &Config, geo: &Geometry) -> Result<()> {
    let kind = cfg.ftl.kind;
    let spec = kind.spec();
    (spec.validate)(cfg, geo)?;
    let Mapping::Blocks(blocks) = &spec.mapping else {
        return Ok(());
    };
    refuse_page_gc_keys(cfg, kind, blocks.frees_space)?;
    let spare = super::spare_blocks(geo);
    let need = (blocks.spare)(cfg, geo);
    if spare < need.blocks {
        return Err(Error::config(
            need.key,
            format!(
                "the `{}` FTL needs {} spare blocks{}, and over-provisioning {} leaves {spare} \
                 (raise ftl.over_provisioning{})",
                kind.name(),
                need.blocks,
                need.detail,
                cfg.ftl.over_provisioning,
                need.hint
            ),
        ));
    }
    Ok(())
}

/// The page-mapped GC keys a block-mapped FTL would not read (`why`: how it frees
/// space instead).
fn refuse_page_gc_keys(cfg: &Config, kind: FtlKind, why: &str) -> Result<()> {
    let d = Config::default();
    let (g, f) = (&d.gc, &d.ftl);
    for (key, changed) in [
        ("gc.policy", cfg.gc.policy != PolicySpec::Greedy),
        ("gc.cb_age", cfg.gc.cb_age != g.cb_age),
        ("gc.scope", cfg.gc.scope != g.scope),
        ("gc.low_watermark", cfg.gc.low_watermark != g.low_watermark),
        (
            "gc.high_watermark",
            cfg.gc.high_watermark != g.high_watermark,
        ),
        ("ftl.gc_frontier", cfg.ftl.gc_frontier != f.gc_frontier),
        ("ftl.allocation", cfg.ftl.allocation != f.allocation),
        ("ftl.placement", cfg.ftl.placement != f.placement),
    ] {
        if changed {
            return Err(Error::unread(
                key,
                format!(
                    "is read only by the page-mapped FTLs ({}): {why}; ftl.kind is `{}`",
                    FtlKind::names_where(|k| !k.block_mapped()).join(", "),
                    kind.name()
                ),
            ));
        }
    }
    Ok(())
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind's entry drives the checks of its keys: every key is at its default in the
    /// default configuration, a value the kind takes is refused under every other kind
    /// as read only by it.
    #[test]
    fn a_kinds_keys_are_refused_under_the_other_kinds_naming_it() {
        let mut checked = 0;
        for owner in FtlKind::ALL {
            for k in owner.spec().keys {
                assert!(!(k.changed)(&Config::default()), "{}", k.key);
                assert!((k.refused)(&Config::default()).is_none(), "{}", k.key);
                // A value, with the device write buffer it may need.
                let set = |kind: FtlKind, (value, buffer): (&str, &[(&str, &str)])| {
                    let mut cfg = Config::default();
                    let mut pairs = vec![
                        ("ftl.kind".to_string(), kind.name().to_string()),
                        (k.key.to_string(), value.to_string()),
                    ];
                    pairs.extend(buffer.iter().map(|(k, v)| (k.to_string(), v.to_string())));
                    cfg.set_many(&pairs).map(|_| cfg)
                };
                let buffered: &[(&str, &str)] = &[
                    ("device.buffer", "1MiB"),
                    ("device.buffer_policy", "3-region"),
                ];
                let value = [
                    ("3", &[][..]),
                    ("64", &[]),
                    ("true", buffered),
                    ("ba-vbs", buffered),
                ]
                .into_iter()
                .find(|v| set(owner, *v).is_ok_and(|cfg| (k.changed)(&cfg)))
                .unwrap_or_else(|| panic!("no value of {} to try", k.key));
                for other in FtlKind::ALL.into_iter().filter(|o| *o != owner) {
                    let err = set(other, value).unwrap_err();
                    let Error::Config {
                        key,
                        reason,
                        unread: true,
                        ..
                    } = err
                    else {
                        panic!("{}: {err}", k.key);
                    };
                    assert_eq!(key, k.key);
                    assert!(
                        reason.contains(&format!("`{}` FTL", owner.name())),
                        "{reason}"
                    );
                }
                checked += 1;
            }
        }
        assert!(checked >= 5, "{checked} keys");
    }

    #[test]
    fn or_lists_read_as_prose() {
        assert_eq!(or_list(&["a"]), "a");
        assert_eq!(or_list(&["a", "b"]), "a or b");
        assert_eq!(or_list(&["a", "b", "c"]), "a, b or c");
    }
}
