//! Helpers the integration tests share.

use zombiesim::{simulate, Config, Report, RunOptions, WorkloadSpec};

/// A verified, reproducible run of workload `wl` with `seed`.
pub fn verified_run(cfg: &Config, wl: &str, seed: u64) -> Report {
    let opts = RunOptions {
        seed,
        verify: true,
        reproducible: true,
        ..Default::default()
    };
    simulate(cfg, &WorkloadSpec::parse(wl).unwrap(), &opts, &mut |_| true).unwrap()
}
