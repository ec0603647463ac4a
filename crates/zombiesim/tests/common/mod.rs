//! Helpers the integration tests share.

use zombiesim::{simulate, Config, Report, RunOptions, WorkloadSpec};

/// A verified, reproducible run of workload `wl` with `seed`.
#[allow(dead_code)] // not every test file uses it
pub fn verified_run(cfg: &Config, wl: &str, seed: u64) -> Report {
    let opts = RunOptions {
        seed,
        verify: true,
        reproducible: true,
        ..Default::default()
    };
    simulate(cfg, &WorkloadSpec::parse(wl).unwrap(), &opts, &mut |_| true).unwrap()
}

/// A small device for device-layer tests: the default preset's 4 planes × 32 blocks ×
/// 16 pages, OP 25%, filled but not randomly preconditioned; `settings` on top.
#[allow(dead_code)] // not every test file uses it
pub fn small_device(settings: &[(&str, &str)]) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.blocks_per_plane".into(), "32".into()),
        ("flash.pages_per_block".into(), "16".into()),
        ("ftl.over_provisioning".into(), "0.25".into()),
        ("precondition.random_drive_writes".into(), "0".into()),
    ];
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs).unwrap();
    cfg
}
