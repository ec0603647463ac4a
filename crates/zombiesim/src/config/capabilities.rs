//! What an FTL kind can do beyond the contract every FTL implements (`ftl::Ftl`); each
//! kind's registry entry says what it can (`FtlKindSpec::capabilities`). A
//! configuration that asks an FTL for a capability it lacks is refused before the run,
//! naming the key ([`Config::validate`] checks it first).

use super::Config;
use crate::error::Result;

/// What an FTL can do beyond the contract every FTL implements. A configuration that
/// asks an FTL for a capability it lacks is refused before the run, naming the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Victim policies that score zombie pages (`gc.policy` z-greedy, ...).
    pub zombie_scores: bool,
    /// Separate write streams: hot/cold regions and the zombie block.
    pub streams: bool,
    /// Content-aware mapping: the dead-value pool and dedup.
    pub content: bool,
    /// Garbage collection in idle time.
    pub background_gc: bool,
    /// Garbage collection in bounded steps.
    pub bounded_gc: bool,
    /// ShadowGC: relocation from the write buffer, fast-write relocation with
    /// retention refresh, the skip policy.
    pub shadow_gc: bool,
}

impl Capabilities {
    /// Every capability.
    pub const ALL: Capabilities = Capabilities {
        zombie_scores: true,
        streams: true,
        content: true,
        background_gc: true,
        bounded_gc: true,
        shadow_gc: true,
    };

    /// Of none of them.
    pub const NONE: Capabilities = Capabilities {
        zombie_scores: false,
        streams: false,
        content: false,
        background_gc: false,
        bounded_gc: false,
        shadow_gc: false,
    };

    /// Refuse `cfg` if it asks for something this FTL (`name`) cannot do.
    pub fn check(&self, cfg: &Config, name: &str) -> Result<()> {
        let lacks = |key: &str, what: &str| {
            Err(crate::Error::config(
                key,
                format!(
                    "the `{name}` FTL has no {what}; use ftl.kind = \"page\" or leave {key} unset"
                ),
            ))
        };
        if cfg.gc.policy.zombie_aware() && !self.zombie_scores {
            return lacks("gc.policy", "zombie-aware victim scores");
        }
        if cfg.gc.zombie_block && !self.streams {
            return lacks("gc.zombie_block", "separate write streams");
        }
        if cfg.ftl.regions > 1 && !self.streams {
            return lacks("ftl.regions", "separate write streams");
        }
        if cfg.content.dedup && !self.content {
            return lacks("content.dedup", "content-aware mapping");
        }
        if cfg.content.enabled() && !self.content {
            return lacks("content.pool", "content-aware mapping");
        }
        if cfg.gc.background && !self.background_gc {
            return lacks("gc.background", "background garbage collection");
        }
        if cfg.gc.max_victims_per_trigger > 0 && !self.bounded_gc {
            return lacks("gc.max_victims_per_trigger", "bounded garbage collection");
        }
        if cfg.gc.invalid_share_trigger > 0.0 && !self.bounded_gc {
            return lacks("gc.invalid_share_trigger", "GC by garbage proportion");
        }
        if cfg.gc.postpone_below_invalid > 0.0 && !self.bounded_gc {
            return lacks("gc.postpone_below_invalid", "lazy garbage collection");
        }
        for (key, on) in [
            ("gc.shadow_reads", cfg.gc.shadow_reads),
            ("gc.fast_write", cfg.gc.fast_write),
            ("gc.skip_shadows", cfg.gc.skip_shadows),
            ("ftl.retention_s", cfg.ftl.retention_s > 0.0),
        ] {
            if on && !self.shadow_gc {
                return lacks(key, "ShadowGC relocation or retention refresh");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn a_config_asking_for_a_missing_capability_is_refused_naming_the_key() {
        let mut cfg = Config::preset("default").unwrap();
        // Room for the extra GC streams some of the cases ask for.
        cfg.set_many(&[
            ("gc.low_watermark".into(), "6".into()),
            ("gc.high_watermark".into(), "6".into()),
            ("gc.background_watermark".into(), "8".into()),
        ])
        .unwrap();
        let plain = Capabilities::NONE;
        assert!(plain.check(&cfg, "plain").is_ok());
        cfg.set("gc.high_watermark", "7").unwrap();
        let cases: [(&str, &str); 7] = [
            ("gc.policy", "z-greedy"),
            ("gc.zombie_block", "true"),
            ("ftl.regions", "2"),
            ("content.dedup", "true"),
            ("gc.background", "true"),
            ("gc.max_victims_per_trigger", "1"),
            ("gc.postpone_below_invalid", "0.125"),
        ];
        for (key, value) in cases {
            let mut c = cfg.clone();
            c.set(key, value).unwrap_or_else(|e| panic!("{key}: {e}"));
            let err = plain.check(&c, "plain").unwrap_err().to_string();
            assert!(err.contains(key), "{key}: {err}");
            assert!(Capabilities::ALL.check(&c, "page").is_ok());
        }
        cfg.set("content.pool", "lru").unwrap();
        assert!(plain
            .check(&cfg, "plain")
            .unwrap_err()
            .to_string()
            .contains("content.pool"));
    }
}
