//! `zombiesim validate`: simulated write amplification against the analytic models.
//!
//! Each case simulates uniform random single-page writes on a one-plane device of
//! thousands of blocks: fill, warm up to steady state, then measure. The analytic
//! value is computed at the *effective* over-provisioning the simulation measured
//! (physical pages minus the mean number held back in free blocks and open
//! frontiers, see [`crate::analytic`]), and the case passes when the two agree
//! within the tolerance (2%).

use crate::analytic;
use crate::config::{Config, GcFrontier, GcScope, PolicySpec};
use crate::error::Result;
use crate::sim::{simulate, Progress, RunOptions};
use crate::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// Relative tolerance between simulated and analytic write amplification.
pub const TOLERANCE: f64 = 0.02;

/// One validation case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Case {
    pub policy: String,
    pub over_provisioning: f64,
    pub pages_per_block: u32,
    pub blocks: u32,
    pub warmup_drive_writes: f64,
    pub measure_drive_writes: f64,
}

/// The outcome of one case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub case: Case,
    pub simulated_waf: f64,
    /// The model at the effective over-provisioning the run measured.
    pub analytic_waf: f64,
    /// The model at the nominal over-provisioning (the ANALYTIC.md table).
    pub analytic_waf_nominal: f64,
    pub effective_over_provisioning: f64,
    /// (simulated − analytic) / analytic.
    pub error: f64,
    pub ok: bool,
    /// The run was stopped before the end (its numbers are partial).
    pub interrupted: bool,
    pub wall_s: f64,
}

const POLICIES: [&str; 5] = ["fifo", "greedy", "random", "d-choices:2", "d-choices:10"];
const OPS: [f64; 3] = [0.07, 0.125, 0.28];
const PPBS: [u32; 2] = [64, 256];

/// The cases to run: the full table (every policy × OP × block size, ~1 M pages
/// each) or the quick subset `make test` runs.
pub fn cases(full: bool) -> Vec<Case> {
    if full {
        let mut out = Vec::new();
        for policy in POLICIES {
            for op in OPS {
                for ppb in PPBS {
                    out.push(Case {
                        policy: policy.to_string(),
                        over_provisioning: op,
                        pages_per_block: ppb,
                        blocks: (1u32 << 20) / ppb,
                        warmup_drive_writes: 4.0,
                        measure_drive_writes: 4.0,
                    });
                }
            }
        }
        out
    } else {
        [
            ("greedy", 0.125),
            ("fifo", 0.28),
            ("d-choices:2", 0.28),
            ("random", 0.28),
        ]
        .into_iter()
        .map(|(policy, op)| Case {
            policy: policy.to_string(),
            over_provisioning: op,
            pages_per_block: 64,
            blocks: 4096,
            warmup_drive_writes: 3.0,
            measure_drive_writes: 3.0,
        })
        .collect()
    }
}

/// The device configuration of a case.
pub fn case_config(case: &Case) -> Result<Config> {
    let mut cfg = Config {
        description: format!(
            "validation: {} at OP {}",
            case.policy, case.over_provisioning
        ),
        ..Config::default()
    };
    cfg.flash.channels = 1;
    cfg.flash.chips_per_channel = 1;
    cfg.flash.dies_per_chip = 1;
    cfg.flash.planes_per_die = 1;
    cfg.flash.blocks_per_plane = case.blocks;
    cfg.flash.pages_per_block = case.pages_per_block;
    cfg.ftl.over_provisioning = case.over_provisioning;
    cfg.ftl.gc_frontier = GcFrontier::Separate;
    cfg.gc.policy = case
        .policy
        .parse::<PolicySpec>()
        .map_err(|e| crate::Error::config("gc.policy", e))?;
    cfg.gc.scope = GcScope::Device;
    cfg.gc.low_watermark = 2;
    cfg.gc.high_watermark = 2;
    cfg.precondition.fill = true;
    cfg.precondition.random_drive_writes = case.warmup_drive_writes;
    cfg.precondition.steady_tolerance = 0.0;
    cfg.stats.series_points = 0;
    cfg.validate()?;
    Ok(cfg)
}

/// Run one case.
pub fn run_case(
    case: &Case,
    seed: u64,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Row> {
    let cfg = case_config(case)?;
    let spec = WorkloadSpec::parse(&format!(
        "uniform:drive_writes={}",
        case.measure_drive_writes
    ))?;
    let opts = RunOptions {
        seed,
        verify: false,
        reproducible: false,
        ..Default::default()
    };
    let report = simulate(&cfg, &spec, &opts, progress)?;
    let b = case.pages_per_block;
    let effective_op = report
        .device
        .effective_over_provisioning
        .unwrap_or(f64::NAN);
    let alpha_eff = 1.0 + effective_op;
    let model = |alpha: f64| analytic::wa_for_policy(&case.policy, alpha, b).unwrap_or(f64::NAN);
    let analytic_waf = model(alpha_eff);
    let error = (report.waf.unwrap_or(f64::NAN) - analytic_waf) / analytic_waf;
    Ok(Row {
        case: case.clone(),
        simulated_waf: report.waf.unwrap_or(f64::NAN),
        analytic_waf,
        analytic_waf_nominal: model(1.0 + case.over_provisioning),
        effective_over_provisioning: effective_op,
        error,
        ok: error.abs() <= TOLERANCE && !report.run.interrupted,
        interrupted: report.run.interrupted,
        wall_s: report.run.wall_s.unwrap_or(0.0),
    })
}
