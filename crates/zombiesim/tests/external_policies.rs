//! Policies decided outside the simulator (`RunOptions::external`): a victim chooser
//! (`gc::Chooser`) that ranks as greedy or cost-benefit does reproduces the built-in
//! policy's report exactly; a ranking serves several selections; a bad answer stops
//! the run with a message; combinations that would silently not run the chooser are
//! refused naming the key. A placer (`placement::Placer`) that answers write-count's
//! classes places exactly as `ftl.placement = "write-count:2"`.

use crate::common::{small_device, verified_opts};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use zombiesim::ftl::ExternalPolicies;
use zombiesim::gc::{Candidates, Chooser};
use zombiesim::placement::{PlacedWrites, Placer};
use zombiesim::{simulate, Config, Error, Report, RunOptions, WorkloadSpec};

/// How a test chooser ranks.
#[derive(Clone, Copy)]
enum Rank {
    /// Fewest valid pages, ties to the lowest block (greedy).
    Greedy,
    /// LFS cost-benefit `i·a/(2v)` with LFS's age, a block with no valid page first.
    CostBenefit,
    /// Greedy's ranking of every candidate, handed over whole.
    GreedyRanking,
    /// A block that is no candidate.
    Bad,
}

struct TestChooser {
    rank: Rank,
    calls: AtomicU64,
}

impl TestChooser {
    fn new(rank: Rank) -> Arc<Self> {
        Arc::new(TestChooser {
            rank,
            calls: AtomicU64::new(0),
        })
    }
}

impl Chooser for TestChooser {
    fn name(&self) -> String {
        "test".into()
    }

    fn choose(&self, c: Candidates) -> Option<Vec<u32>> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let by_valid = |i: &usize| (c.valid[*i], c.block[*i]);
        let mut order: Vec<usize> = (0..c.len()).collect();
        Some(match self.rank {
            Rank::Greedy => vec![c.block[order.into_iter().min_by_key(by_valid)?]],
            Rank::GreedyRanking => {
                order.sort_by_key(by_valid);
                order.into_iter().map(|i| c.block[i]).collect()
            }
            Rank::CostBenefit => {
                let score = |i: usize| {
                    if c.valid[i] == 0 {
                        return f64::INFINITY;
                    }
                    let pages = (c.valid[i] + c.invalid[i]) as f64;
                    (pages - c.valid[i] as f64) * c.age[i] as f64 / (2.0 * c.valid[i] as f64)
                };
                // Highest score; ties to the lowest block (candidates come sorted).
                let best = order
                    .into_iter()
                    .reduce(|b, i| if score(i) > score(b) { i } else { b })?;
                vec![c.block[best]]
            }
            Rank::Bad => vec![u32::MAX - 1],
        })
    }
}

fn device(settings: &[(&str, &str)]) -> Config {
    small_device(
        &[
            &[("gc.low_watermark", "2"), ("gc.high_watermark", "3")],
            settings,
        ]
        .concat(),
    )
}

fn run(cfg: &Config, wl: &str, chooser: Option<Arc<TestChooser>>) -> zombiesim::Result<Report> {
    let opts = RunOptions {
        reproducible: true,
        external: ExternalPolicies {
            victim: chooser.map(|c| c as Arc<dyn Chooser>),
            placer: None,
        },
        ..verified_opts(7)
    };
    simulate(cfg, &WorkloadSpec::parse(wl).unwrap(), &opts, &mut |_| true)
}

/// The report without the line naming the external policy.
fn json(mut r: Report) -> String {
    r.run.victim_policy = None;
    r.to_json()
}

const WORKLOAD: &str = "hotcold:r=0.8,f=0.2,drive_writes=3";

#[test]
fn a_greedy_chooser_reproduces_greedy_exactly() {
    let cfg = device(&[]);
    let chooser = TestChooser::new(Rank::Greedy);
    let external = run(&cfg, WORKLOAD, Some(chooser.clone())).unwrap();
    assert_eq!(external.run.victim_policy.as_deref(), Some("test"));
    assert!(external.gc.victims > 100, "{}", external.gc.victims);
    // One crossing per selection.
    assert!(chooser.calls.load(Ordering::Relaxed) >= external.gc.victims);
    assert_eq!(json(external), json(run(&cfg, WORKLOAD, None).unwrap()));
}

#[test]
fn a_cost_benefit_chooser_reproduces_cost_benefit_exactly() {
    let chooser = TestChooser::new(Rank::CostBenefit);
    let external = run(&device(&[]), WORKLOAD, Some(chooser)).unwrap();
    let mut builtin = device(&[]);
    builtin.set("gc.policy", "cost-benefit").unwrap();
    let mut expected = run(&builtin, WORKLOAD, None).unwrap();
    // The configurations differ in gc.policy alone.
    expected.run.config = external.run.config.clone();
    assert_eq!(json(external), json(expected));
}

#[test]
fn a_whole_ranking_serves_several_selections() {
    let (once, ranking) = (
        TestChooser::new(Rank::Greedy),
        TestChooser::new(Rank::GreedyRanking),
    );
    let a = run(&device(&[]), WORKLOAD, Some(once.clone())).unwrap();
    let b = run(&device(&[]), WORKLOAD, Some(ranking.clone())).unwrap();
    let (calls_once, calls_ranking) = (
        once.calls.load(Ordering::Relaxed),
        ranking.calls.load(Ordering::Relaxed),
    );
    assert!(
        calls_ranking * 2 < calls_once,
        "{calls_ranking} vs {calls_once}"
    );
    // A stale ranking costs: its later victims were chosen on old counts (2.63 against
    // 3.21 here).
    let (wa, wb) = (a.waf.unwrap(), b.waf.unwrap());
    assert!(wa < wb && wb < 1.5 * wa, "{wa} vs {wb}");
}

#[test]
fn a_chooser_runs_behind_midas_s_chain_under_dftl_and_per_plane() {
    let midas = [
        ("ftl.placement", "midas"),
        ("flash.blocks_per_plane", "128"),
        ("gc.low_watermark", "26"),
        ("gc.high_watermark", "27"),
    ];
    for settings in [
        &midas[..],
        &[("ftl.kind", "dftl")][..],
        &[("gc.scope", "plane")][..],
    ] {
        let cfg = device(settings);
        let mut builtin = run(&cfg, WORKLOAD, None).unwrap();
        let external = run(&cfg, WORKLOAD, Some(TestChooser::new(Rank::Greedy))).unwrap();
        builtin.run.config = external.run.config.clone();
        assert_eq!(json(external), json(builtin), "{settings:?}");
    }
}

#[test]
fn a_block_that_is_no_candidate_stops_the_run() {
    let err = run(&device(&[]), WORKLOAD, Some(TestChooser::new(Rank::Bad))).unwrap_err();
    let Error::Config { key, reason, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(key, "victim");
    assert!(reason.contains("not one of the"), "{reason}");
}

#[test]
fn combinations_that_would_not_run_the_chooser_are_refused() {
    let refused = |cfg: Config, want: &str| {
        let settings = (cfg.gc.policy, cfg.ftl.kind);
        let err = run(&cfg, WORKLOAD, Some(TestChooser::new(Rank::Greedy))).unwrap_err();
        assert!(
            matches!(&err, Error::Config { key, .. } if key == want),
            "{settings:?}: {err}"
        );
    };
    refused(device(&[("gc.policy", "cost-benefit")]), "gc.policy");
    refused(small_device(&[("ftl.kind", "fast")]), "ftl.kind");
}

/// `write-count:2` restated: each page's next write goes to the class of its count then.
struct WriteCount {
    counts: Mutex<Vec<u8>>,
}

impl Placer for WriteCount {
    fn name(&self) -> String {
        "write-count".into()
    }

    fn batch(&self) -> usize {
        1
    }

    fn place(&self, writes: PlacedWrites) -> Option<Vec<u32>> {
        let mut counts = self.counts.lock().unwrap();
        let answer = writes
            .lpn
            .iter()
            .map(|&lpn| {
                let c = &mut counts[lpn as usize];
                *c = c.saturating_add(1);
                let next = u32::from(c.saturating_add(1));
                (31 - next.leading_zeros()).min(1)
            })
            .collect();
        Some(answer)
    }

    fn refuse(&self, why: String) {
        panic!("{why}")
    }
}

#[test]
fn a_placer_answering_write_count_s_classes_places_as_write_count() {
    let settings = [
        ("flash.blocks_per_plane", "64"),
        ("gc.low_watermark", "6"),
        ("gc.high_watermark", "6"),
        ("ftl.over_provisioning", "0.3"),
    ];
    let cfg =
        |placement: &str| small_device(&[&settings[..], &[("ftl.placement", placement)]].concat());
    let placer = Arc::new(WriteCount {
        counts: Mutex::new(vec![0; 1 << 16]),
    });
    let opts = RunOptions {
        reproducible: true,
        external: ExternalPolicies {
            victim: None,
            placer: Some(placer as Arc<dyn Placer>),
        },
        ..verified_opts(7)
    };
    let spec = WorkloadSpec::parse(WORKLOAD).unwrap();
    let mut ours = simulate(&cfg("python:2"), &spec, &opts, &mut |_| true).unwrap();
    assert_eq!(ours.run.placement.as_deref(), Some("write-count"));
    let builtin = run(&cfg("write-count:2"), WORKLOAD, None).unwrap();
    ours.run.placement = None;
    ours.run.config = builtin.run.config.clone();
    assert_eq!(ours.to_json(), builtin.to_json());
}

#[test]
fn python_k_without_a_placer_is_refused() {
    let settings = [("gc.low_watermark", "6"), ("gc.high_watermark", "6")];
    let err = run(
        &small_device(&[&settings[..], &[("ftl.placement", "python:2")]].concat()),
        WORKLOAD,
        None,
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::Config { key, reason, .. } if key == "ftl.placement" && reason.contains("none was given")),
        "{err}"
    );
}
