//! Golden reports: every preset with the schemes that make sense for it, counting and
//! timed, on short synthetic workloads, plus one trace replay. Each case's whole report
//! (reproducible mode, so no wall-clock times) is pinned in
//! `tests/golden/<case>.json`; the test fails if any report differs, naming the case
//! and the first differing JSON paths with both values.
//!
//! The goldens guard refactors: a commit that only moves code must leave every report
//! byte-identical. A deliberate behaviour change re-blesses them, in a commit of its
//! own that explains the change in figures:
//!
//! ```text
//! ZOMBIESIM_BLESS=1 cargo test -p zombiesim --release --test integration golden::   # or: make goldens
//! ```
//!
//! What is compared: the report exactly as `Report::to_json` writes it (schema key
//! order, every section, the time series and the full resolved configuration), with
//! two fields normalized first: `run.version` (a version bump changes no figure) and,
//! for the trace case, the trace's directory in `trace.path` and `run.workload`. The
//! presets are shrunk with overrides so the whole test runs in seconds;
//! `stats.series_points` is lowered to keep the fixtures small (the series is still
//! compared). Every run uses seed 1 with the integrity oracle on (`verify`), and every
//! report must show garbage collection at work (`gc.pages_copied` > 0 in the measured
//! phase).
//!
//! Some figures go through the platform's floating-point library (the Zipf samplers'
//! powers and logarithms), so a golden blessed on one platform may differ in a last
//! bit on another; bless and compare on the same kind of machine.
//!
//! Combinations the configuration check refuses are pinned too: their fixture holds
//! `{"refused": "<message>"}` instead of a report. The host model of the
//! `zombie-chasing` schemes runs on simulated time, so their counting-mode cases are
//! such refusals.
//!
//! The trace case replays `traces/samples/msr-src1_0-excerpt.csv` (shipped with the
//! checkout; a missing one fails the test).

use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use zombiesim::config::scheme_settings;
use zombiesim::trace::{ReadOptions, RemapMode, TraceFormat};
use zombiesim::workload::TraceSpec;
use zombiesim::{
    simulate, simulate_trace, Config, PreconditionCache, Report, RunOptions, WorkloadSpec,
};

/// Differing paths shown per failing case.
const MAX_DIFFS: usize = 8;
/// Fewer time-series points than the default 100 keep each fixture small.
const SERIES_POINTS: &str = "12";
const TRACE: &str = "msr-src1_0-excerpt.csv";

// ---------------------------------------------------------------- the cases

/// What a case runs.
#[derive(Clone)]
enum Source {
    Synthetic(&'static str),
    /// A file in the shared traces folder, MSR format, remapped modulo the device.
    Trace(&'static str),
}

struct Case {
    name: String,
    preset: &'static str,
    /// A scheme from `presets/schemes.toml`, or none.
    scheme: Option<&'static str>,
    timing: bool,
    /// Overrides that shrink the preset, applied after the scheme.
    shrink: &'static [(&'static str, &'static str)],
    source: Source,
}

/// A quarter of the default preset's blocks.
const DEFAULT_SHRINK: &[(&str, &str)] = &[("flash.blocks_per_plane", "64")];

/// The zombie-chasing preset at a sixteenth of its size (blocks, reserved blocks and
/// page cache alike), preconditioned with one drive-write instead of two.
const ZOMBIE_SHRINK: &[(&str, &str)] = &[
    ("flash.blocks_per_plane", "256"),
    ("ftl.reserved_blocks", "13"),
    ("host.cache", "256MiB"),
    ("precondition.random_drive_writes", "1"),
];

/// 000's micro-benchmark at x = 4 rather than its default 6: on the shrunken device
/// greedy-delay:50 never finds a block more than half zombie at x = 6, so its report
/// would equal gc-gd's and pin nothing of its own.
const ZOMBIE_WORKLOAD: &str = "zc-micro:x=4,rw=0.5,drive_writes=0.1";

/// The dead-value-pool preset on the small geometry of its reproduction (2 x 2 chips,
/// two planes each), with its 200 K-entry pool scaled to the device like the
/// reproduction does (entries x physical pages / 2^28: 98 entries for 131 072 pages).
const DVP_SHRINK: &[(&str, &str)] = &[
    ("flash.channels", "2"),
    ("flash.chips_per_channel", "2"),
    ("flash.dies_per_chip", "1"),
    ("flash.planes_per_die", "2"),
    ("flash.blocks_per_plane", "64"),
    ("content.pool_entries", "98"),
    ("precondition.random_drive_writes", "1"),
];

/// 64 parallel units of 32 blocks (512 pages of 16 KiB each): 16 GiB instead of 1 TiB,
/// about the fewest blocks that leave device-wide GC a free block per open block. The
/// open blocks of 64 planes then hold most of the 7% spare, hence a high WAF.
const SHADOWGC_SHRINK: &[(&str, &str)] = &[
    ("flash.blocks_per_plane", "32"),
    ("precondition.random_drive_writes", "1"),
];

/// Four planes of 128 blocks (4 GiB, the tiny reproduction's shape) with 8 MiB host
/// and device write buffers, as 003's experiments have them: GC meets zombies and
/// pages dirty in the device buffer among the pages it copies (ZGC's zombie block,
/// HGC's buffer reads and fast programs, SGC's skips).
const SHADOWGC_BUFFERS_SHRINK: &[(&str, &str)] = &[
    ("flash.channels", "2"),
    ("flash.chips_per_channel", "2"),
    ("gc.low_watermark", "8"),
    ("gc.high_watermark", "8"),
    ("flash.blocks_per_plane", "128"),
    ("precondition.random_drive_writes", "1"),
    ("host.buffer", "8MiB"),
    ("device.buffer", "8MiB"),
];

/// 1024 blocks of 64 x 2 KiB pages: 128 MiB instead of 32 GiB.
const VMA_SHRINK: &[(&str, &str)] = &[
    ("flash.blocks_per_plane", "1024"),
    ("precondition.random_drive_writes", "1"),
];

/// 1024 blocks of 64 x 2 KiB pages: 128 MiB instead of 1 GiB.
const BAGC_SHRINK: &[(&str, &str)] = &[
    ("flash.blocks_per_plane", "1024"),
    ("precondition.random_drive_writes", "1"),
];

/// The default preset at a quarter of its blocks, preconditioned with half a drive-write.
const TRACE_SHRINK: &[(&str, &str)] = &[
    ("flash.blocks_per_plane", "64"),
    ("precondition.random_drive_writes", "0.5"),
];

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut add = |preset: &'static str,
                   schemes: &[&'static str],
                   shrink: &'static [(&'static str, &'static str)],
                   workload: &'static str| {
        for &scheme in schemes {
            for timing in [true, false] {
                out.push(Case {
                    name: case_name(preset, scheme, timing),
                    preset,
                    scheme: Some(scheme),
                    timing,
                    shrink,
                    source: Source::Synthetic(workload),
                });
            }
        }
    };
    add(
        "default",
        &["baseline", "greedy", "cost-benefit", "fifo"],
        DEFAULT_SHRINK,
        "hotcold:r=0.8,f=0.2,read=0.3,trim=0.02,drive_writes=1",
    );
    add(
        "zombie-chasing",
        &[
            "gc-gd",
            "gc-cb",
            "zgc-gd",
            "zgc-cb",
            "zgc-gd-nz",
            "zgc-cb-nz",
            "greedy-delay",
        ],
        ZOMBIE_SHRINK,
        ZOMBIE_WORKLOAD,
    );
    add(
        "dead-value-pool",
        &[
            "baseline",
            "dvp:lru",
            "dvp:mq",
            "dvp:infinite",
            "dvp:lx",
            "dedup",
            "dedup+dvp",
        ],
        DVP_SHRINK,
        "values:zipf=1.1,unique=0.42,read=0.23,drive_writes=1",
    );
    add(
        "shadowgc-1tb",
        &["baseline"],
        SHADOWGC_SHRINK,
        "uniform:read=0.3,drive_writes=1",
    );
    add(
        "shadowgc-1tb",
        &["zgc", "hgc", "sgc"],
        SHADOWGC_BUFFERS_SHRINK,
        "footprint:growth=0.02,window=64MiB,read=0.3,drive_writes=0.5,iops=20000",
    );
    add(
        "vma-journaling",
        &["baseline"],
        VMA_SHRINK,
        "zipf:theta=0.9,read=0.3,drive_writes=1",
    );
    add(
        "ba-gc",
        &["baseline"],
        BAGC_SHRINK,
        "locality:x=10,read=0.3,size=8KiB,drive_writes=1",
    );
    out.push(Case {
        name: "default__trace-msr-src1_0__timing".into(),
        preset: "default",
        scheme: None,
        timing: true,
        shrink: TRACE_SHRINK,
        source: Source::Trace(TRACE),
    });
    out
}

/// `preset__scheme__timing|counting`, with the scheme's `:` and `+` made file-name safe.
fn case_name(preset: &str, scheme: &str, timing: bool) -> String {
    let scheme = scheme.replace([':', '+'], "-");
    let mode = if timing { "timing" } else { "counting" };
    format!("{preset}__{scheme}__{mode}")
}

// ---------------------------------------------------------------- running

fn traces_dir() -> PathBuf {
    crate::common::samples_dir()
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Every case run a second time from a copy of the device its first run preconditioned
/// (`RunOptions::precondition_cache`) gives its golden report, byte for byte: a cached
/// device is the same state a fresh preconditioning gives, under every preset, scheme
/// and FTL the goldens cover.
#[test]
fn a_device_from_the_precondition_cache_gives_the_golden_report() {
    if std::env::var_os("ZOMBIESIM_BLESS").is_some_and(|v| v == "1") {
        return;
    }
    let cache = Arc::new(PreconditionCache::new(1 << 30));
    let opts = RunOptions {
        precondition_cache: Some(cache.clone()),
        ..case_opts()
    };
    let mut failures = Vec::new();
    let mut ran = 0u64;
    for case in &cases() {
        let Outcome::Report(first) = run_case(case, &opts) else {
            continue;
        };
        // A preconditioning that replays the workload's own writes is never kept.
        let pre = &first.run.config["precondition"];
        let own = pre["pattern"] == "workload" && pre["random_drive_writes"].as_f64() > Some(0.0);
        let hits = cache.stats().hits;
        let again = match run_case(case, &opts) {
            Outcome::Report(r) => normalized(*r),
            _ => panic!("{}: the second run did not report", case.name),
        };
        let hit = cache.stats().hits - hits;
        // (One whose workload writes nothing to replay, an application's, is kept.)
        assert!(
            hit == 1 || own,
            "{}: its second run preconditioned again",
            case.name
        );
        ran += hit;
        let path = golden_dir().join(format!("{}.json", case.name));
        let golden = std::fs::read_to_string(&path).unwrap_or_default();
        if let Some(why) = mismatch(&golden, &again) {
            failures.push(format!("{} from the cache: {why}", case.name));
        }
        assert_eq!(normalized(*first), again, "{}", case.name);
    }
    let stats = cache.stats();
    assert!(ran > 20, "{ran} cases started from the cache");
    // Each of their two runs started from the cache or filled it (a first run may find
    // the device of another case whose settings differ only on the host side).
    assert_eq!(stats.hits + stats.misses, 2 * ran);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What a case produced: a report, or the message of the check that refused it.
enum Outcome {
    Report(Box<Report>),
    Refused(String),
}

/// The options of every case: seed 1, the integrity oracle on, reproducible.
fn case_opts() -> RunOptions {
    RunOptions {
        seed: 1,
        verify: true,
        reproducible: true,
        ..Default::default()
    }
}

fn run_case(case: &Case, opts: &RunOptions) -> Outcome {
    let mut sets: Vec<(String, String)> = match case.scheme {
        Some(s) => scheme_settings(s).expect("a known scheme"),
        None => Vec::new(),
    };
    sets.extend(
        case.shrink
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    sets.push(("timing.enabled".into(), case.timing.to_string()));
    sets.push(("stats.series_points".into(), SERIES_POINTS.into()));
    let mut cfg = Config::preset(case.preset).expect("a known preset");
    if let Err(e) = cfg.set_many(&sets) {
        return Outcome::Refused(e.to_string());
    }
    let result = match &case.source {
        Source::Synthetic(w) => {
            let spec = WorkloadSpec::parse(w).expect("a valid workload");
            simulate(&cfg, &spec, opts, &mut |_| true)
        }
        Source::Trace(file) => {
            let path = crate::common::sample(file);
            let spec = TraceSpec {
                path,
                format: TraceFormat::Msr,
                options: ReadOptions::default(),
                remap: RemapMode::Modulo,
                limit: None,
            };
            simulate_trace(&cfg, &spec, opts, &mut |_| true)
        }
    };
    match result {
        Ok(r) => Outcome::Report(Box::new(r)),
        Err(e) => Outcome::Refused(e.to_string()),
    }
}

/// The fixture text of a report: the fields a version bump or the checkout's location
/// changes are normalized.
fn normalized(mut report: Report) -> String {
    report.run.version = "<version>".into();
    if let Some(trace) = report.trace.as_mut() {
        let dir = traces_dir().display().to_string();
        trace.path = trace.path.replace(&dir, "<traces>");
        report.run.workload = report.run.workload.replace(&dir, "<traces>");
    }
    let mut text = report.to_json();
    text.push('\n');
    text
}

fn refusal(message: &str) -> String {
    let mut text = serde_json::to_string_pretty(&serde_json::json!({ "refused": message }))
        .expect("a string serializes");
    text.push('\n');
    text
}

// ---------------------------------------------------------------- comparing

/// Differences found between a golden and a new report: the first few, and how many.
#[derive(Default)]
struct Diffs {
    shown: Vec<String>,
    total: usize,
}

impl Diffs {
    fn add(&mut self, path: &str, golden: &str, now: &str) {
        self.total += 1;
        if self.shown.len() < MAX_DIFFS {
            let path = if path.is_empty() { "(root)" } else { path };
            self.shown
                .push(format!("{path}: golden {golden}, now {now}"));
        }
    }
}

/// A JSON value in one short line.
fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(80).collect::<String>())
    } else {
        s
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Walk two JSON documents and record every leaf that differs, by path.
fn json_diffs(golden: &Value, now: &Value, path: &str, diffs: &mut Diffs) {
    match (golden, now) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                match b.get(k) {
                    Some(vb) => json_diffs(va, vb, &child(path, k), diffs),
                    None => diffs.add(&child(path, k), &show(va), "(absent)"),
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    diffs.add(&child(path, k), "(absent)", &show(vb));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                diffs.add(
                    &format!("{path}.len()"),
                    &a.len().to_string(),
                    &b.len().to_string(),
                );
            }
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                json_diffs(va, vb, &format!("{path}[{i}]"), diffs);
            }
        }
        (a, b) if a != b => diffs.add(path, &show(a), &show(b)),
        _ => {}
    }
}

/// Why `now` does not match `golden`, or `None` when they are byte-identical.
fn mismatch(golden: &str, now: &str) -> Option<String> {
    if golden == now {
        return None;
    }
    let mut msg = String::new();
    match (
        serde_json::from_str::<Value>(golden),
        serde_json::from_str::<Value>(now),
    ) {
        (Ok(g), Ok(n)) => {
            let mut diffs = Diffs::default();
            json_diffs(&g, &n, "", &mut diffs);
            for d in &diffs.shown {
                let _ = writeln!(msg, "    {d}");
            }
            if diffs.total > diffs.shown.len() {
                let _ = writeln!(msg, "    … and {} more", diffs.total - diffs.shown.len());
            }
        }
        (Err(e), _) => {
            let _ = writeln!(msg, "    the fixture is not JSON: {e}");
        }
        (_, Err(e)) => {
            let _ = writeln!(msg, "    the new report is not JSON: {e}");
        }
    }
    if msg.is_empty() {
        // Same values, different bytes (key order, number formatting, whitespace).
        let (line, (g, n)) = golden
            .lines()
            .zip(now.lines())
            .enumerate()
            .find(|(_, (g, n))| g != n)
            .unwrap_or((golden.lines().count().min(now.lines().count()), ("", "")));
        let _ = writeln!(
            msg,
            "    same values, different text; line {}: golden `{}`, now `{}`",
            line + 1,
            g.trim(),
            n.trim()
        );
    }
    Some(msg)
}

// ---------------------------------------------------------------- the test

#[test]
fn reports_match_the_goldens() {
    let bless = std::env::var_os("ZOMBIESIM_BLESS").is_some_and(|v| v == "1");
    let dir = golden_dir();
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let cases = cases();
    let mut failures = Vec::new();
    let mut refused = Vec::new();
    let start = Instant::now();
    for case in &cases {
        let t = Instant::now();
        let text = match run_case(case, &case_opts()) {
            Outcome::Report(r) => {
                if r.gc.pages_copied == 0 {
                    failures.push(format!(
                        "{}: no GC copies in the measured phase; the case does not exercise GC",
                        case.name
                    ));
                }
                normalized(*r)
            }
            Outcome::Refused(msg) => {
                refused.push(format!("{}: {msg}", case.name));
                refusal(&msg)
            }
        };
        println!("{:<48} {:>6.2} s", case.name, t.elapsed().as_secs_f64());
        let path = dir.join(format!("{}.json", case.name));
        if bless {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(golden) => {
                if let Some(why) = mismatch(&golden, &text) {
                    failures.push(format!(
                        "{}: the report differs from {}\n{why}",
                        case.name,
                        path.display()
                    ));
                }
            }
            Err(e) => failures.push(format!(
                "{}: no golden at {} ({e}); bless it with `make goldens` \
                 (ZOMBIESIM_BLESS=1 cargo test -p zombiesim --release --test integration golden::)",
                case.name,
                path.display()
            )),
        }
    }
    // A fixture no case writes any more is stale.
    let names: Vec<String> = cases.iter().map(|c| format!("{}.json", c.name)).collect();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if file.ends_with(".json") && !names.contains(&file) {
                if bless {
                    std::fs::remove_file(entry.path()).unwrap();
                    println!("removed the stale golden {file}");
                } else {
                    failures.push(format!(
                        "{file}: a golden without a case; re-bless to remove it"
                    ));
                }
            }
        }
    }
    println!(
        "{} cases in {:.1} s; refused by the configuration check (pinned as refusals):",
        cases.len(),
        start.elapsed().as_secs_f64()
    );
    for r in &refused {
        println!("  {r}");
    }
    assert!(
        failures.is_empty(),
        "{} golden case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    if bless {
        println!("blessed {} goldens in {}", names.len(), dir.display());
    }
}
