//! The envelopes the ceilings are the best of: the victim oracle's schedules
//! (`gc.policy = "oracle"`, `gc.oracle_score = "best"`) and the placement oracle's
//! placements (`ftl.placement = "oracle"`, no K). Each member is a configuration run on
//! its own; [`super::best_of`] keeps the one with the lowest WAF.
//!
//! ```text
//!   victim oracle:    greedy, cost-benefit ×2 ages          (real: the policies the marks extend)
//!                     lifetime z-greedy, z-cost-benefit      (real: LZGC-GD, LZGC-CB)
//!                     notified: z-greedy, z-cost-benefit ×2, (real: fed by the trace's own
//!                       × 3 channels × zombie block on/off     notifications: ZGC-GD, ZGC-CB)
//!                     z-greedy, z-cost-benefit ×2 told the future
//!                       × 7 horizons × zombie block on/off   (what the oracle adds)
//!   placement oracle: oracle:K by each page's death, K = 2, 3, 4, 6   (what it adds)
//!                     none, none with a shared GC frontier (NoSep), sepbit, midas,
//!                     write-count:4                                    (real)
//! ```
//!
//! The real members make each ceiling never worse than the schemes a study runs, by
//! construction; the future-aware ones are what it adds.

use crate::config::{
    CbAge, Config, GcFrontier, Geometry, NotifyMode, OracleScore, PolicySpec, MAX_HORIZON,
};
use crate::error::Result;
use crate::placement::ENVELOPE_CLASSES;

/// The oracle's envelope (`gc.oracle_score = "best"`): the schedules it is the best of,
/// as `(label, config)`. `None` for any other policy or score.
///
/// - The zero-horizon members, greedy and cost-benefit with both ages (the policies the
///   marks extend): 3 runs.
/// - The lifetime-aware schedules (`gc.zombie_weight = "lifetime"`, z-greedy and
///   z-cost-benefit with the configured age, the zombie block on: LZGC-GD and LZGC-CB),
///   fed by the configured channel: 2 runs.
/// - On a notified trace, z-greedy and z-cost-benefit (both ages) fed by the trace's own
///   notifications through each channel, with the configured `gc.zombie_block` and with
///   it flipped: 18 runs.
/// - z-greedy and z-cost-benefit (both ages) told the future at a ladder of horizons from
///   1/8 to 8 times the one [`Config::gc_horizon`] resolves to (only at it when
///   `gc.oracle_horizon` is set), each with the configured `gc.zombie_block` and with it
///   flipped: 42 runs.
///
/// The real schedules among them (the zero-horizon, lifetime and channel members) make
/// the oracle never worse than GC-GD, GC-CB, ZGC-GD, ZGC-CB, LZGC-GD and LZGC-CB on the
/// same trace and device, by construction: what the host reported is knowledge the
/// oracle has as well. The future-aware members are what it adds (`oracle.chosen` says
/// which won). A flipped zombie block, or a lifetime member, that the device refuses
/// (no zombie stream, FDP's reclaim units) is left out. One z-greedy key cannot bound
/// cost-benefit (its cap keeps it from blocks more than half full: tests/oracle.rs), and
/// no one horizon is best everywhere, hence the envelope; it costs one run per member.
pub fn envelope(
    cfg: &Config,
    geo: &Geometry,
    notified: bool,
) -> Result<Option<Vec<(String, Config)>>> {
    if cfg.ftl.placement.is_envelope() {
        return Ok(Some(placements(cfg)));
    }
    if cfg.gc.policy != PolicySpec::Oracle || cfg.gc.oracle_score != OracleScore::Best {
        return Ok(None);
    }
    let h = cfg.gc_horizon(geo)?;
    let horizons = if cfg.gc.oracle_horizon > 0 {
        vec![h]
    } else {
        // A ladder of horizons around the resolved one: 1/8 to 8 times it.
        let mut v: Vec<u64> = [(1, 8), (1, 4), (1, 2), (1, 1), (2, 1), (4, 1), (8, 1)]
            .iter()
            .map(|&(a, b)| (h.saturating_mul(a) / b).clamp(1, MAX_HORIZON))
            .collect();
        v.dedup();
        v
    };
    let ages = [CbAge::SinceModified, CbAge::ModifiedTime];
    let with = |f: &dyn Fn(&mut Config)| {
        let mut c = cfg.clone();
        f(&mut c);
        if c.gc.policy != PolicySpec::Oracle {
            // The oracle's own keys are refused with any other policy.
            c.gc.oracle_horizon = 0;
            c.gc.oracle_score = OracleScore::Best;
        }
        c
    };
    let mut out: Vec<(String, Config)> = Vec::new();
    // A member as configured, and with the zombie block flipped where the device has
    // a zombie stream to flip it to.
    let both_blocks = |out: &mut Vec<(String, Config)>, name: String, quals: &[&str], c: Config| {
        let mut flipped = c.clone();
        flipped.gc.zombie_block = !c.gc.zombie_block;
        let block = if flipped.gc.zombie_block {
            "zombie block"
        } else {
            "no zombie block"
        };
        out.push((label(&name, quals), c));
        if flipped.validate().is_ok() {
            let mut q = quals.to_vec();
            q.push(block);
            out.push((label(&name, &q), flipped));
        }
    };
    out.push((
        "greedy".to_string(),
        with(&|c| c.gc.policy = PolicySpec::Greedy),
    ));
    for age in ages {
        out.push((
            label("cost-benefit", &[age_name(age)]),
            with(&|c| {
                c.gc.policy = PolicySpec::CostBenefit;
                c.gc.cb_age = age;
            }),
        ));
    }
    // The lifetime-aware schemes as a study runs them.
    let channel = format!("{:?} channel", cfg.notify.mode).to_lowercase();
    for policy in [PolicySpec::ZGreedy, PolicySpec::ZCostBenefit] {
        let c = with(&|c| {
            c.gc.policy = policy;
            c.gc.zombie_weight = crate::config::ZombieWeight::Lifetime;
            c.gc.zombie_block = true;
        });
        if c.validate().is_ok() {
            let mut quals = vec![];
            if notified {
                quals.push(channel.as_str());
            }
            if policy == PolicySpec::ZCostBenefit {
                quals.push(age_name(cfg.gc.cb_age));
            }
            quals.push("zombie block");
            out.push((label(&format!("lifetime {policy}"), &quals), c));
        }
    }
    // A notified trace's own notifications, through every channel: what the host told
    // is also known to the oracle, so no real scheme on the trace is better than it.
    if notified {
        for mode in [
            NotifyMode::Ideal,
            NotifyMode::Piggyback,
            NotifyMode::Command,
        ] {
            let channel = format!("{mode:?} channel").to_lowercase();
            for (name, policy, age) in SCORINGS {
                let quals: Vec<&str> = [Some(channel.as_str()), age.map(age_name)]
                    .into_iter()
                    .flatten()
                    .collect();
                both_blocks(
                    &mut out,
                    name.into(),
                    &quals,
                    with(&|c| {
                        c.gc.policy = policy;
                        c.gc.cb_age = age.unwrap_or(cfg.gc.cb_age);
                        c.notify.mode = mode;
                    }),
                );
            }
        }
    }
    for hz in horizons {
        for (name, policy, age) in SCORINGS {
            let score = match policy {
                PolicySpec::ZGreedy => OracleScore::ZGreedy,
                _ => OracleScore::ZCostBenefit,
            };
            both_blocks(
                &mut out,
                format!("{name}@{hz}"),
                &age.map(age_name).into_iter().collect::<Vec<_>>(),
                with(&|c| {
                    c.gc.oracle_score = score;
                    c.gc.oracle_horizon = hz;
                    c.gc.cb_age = age.unwrap_or(cfg.gc.cb_age);
                }),
            );
        }
    }
    Ok(Some(out))
}

/// The real placements of the placement oracle's envelope, as their schemes run them:
/// `(ftl.placement, ftl.gc_frontier, label)`.
const REAL_PLACEMENTS: [(&str, GcFrontier, &str); 5] = [
    ("dac", GcFrontier::Separate, "none"),
    ("dac", GcFrontier::Shared, "none (shared GC frontier)"),
    ("sepbit", GcFrontier::Separate, "sepbit"),
    ("midas", GcFrontier::Separate, "midas"),
    ("write-count:4", GcFrontier::Separate, "write-count:4"),
];

/// The placement oracle's envelope (`ftl.placement = "oracle"`): `oracle:K` for each K
/// of [`ENVELOPE_CLASSES`] (the configured GC frontier), and the real placements the
/// project's schemes run ([`REAL_PLACEMENTS`]; one the device refuses, say for want
/// of a free block per stream, is left out), each with the rest of the configuration.
fn placements(cfg: &Config) -> Vec<(String, Config)> {
    let with = |placement: &str, frontier: GcFrontier| {
        let mut c = cfg.clone();
        c.ftl.placement = placement.parse().expect("the envelope's placements parse");
        c.ftl.gc_frontier = frontier;
        c
    };
    let mut out: Vec<(String, Config)> = ENVELOPE_CLASSES
        .iter()
        .map(|k| {
            let name = format!("oracle:{k}");
            let c = with(&name, cfg.ftl.gc_frontier);
            (name, c)
        })
        .collect();
    for (placement, frontier, name) in REAL_PLACEMENTS {
        let c = with(placement, frontier);
        if c.validate().is_ok() {
            out.push((name.to_string(), c));
        }
    }
    out
}

/// The zombie-aware scorings the channel-fed and future-told members run: z-greedy, and
/// z-cost-benefit with each age.
const SCORINGS: [(&str, PolicySpec, Option<CbAge>); 3] = [
    ("z-greedy", PolicySpec::ZGreedy, None),
    (
        "z-cost-benefit",
        PolicySpec::ZCostBenefit,
        Some(CbAge::SinceModified),
    ),
    (
        "z-cost-benefit",
        PolicySpec::ZCostBenefit,
        Some(CbAge::ModifiedTime),
    ),
];

fn age_name(a: CbAge) -> &'static str {
    match a {
        CbAge::SinceModified => "since-modified",
        CbAge::ModifiedTime => "modified-time",
    }
}

/// `name`, or `name (q1, q2, ...)`.
fn label(name: &str, quals: &[&str]) -> String {
    if quals.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", quals.join(", "))
    }
}
