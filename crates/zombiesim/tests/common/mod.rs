//! Helpers the integration tests share.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use zombiesim::device::{Command, Device, Payload};
use zombiesim::trace::{ReadOptions, RemapMode, TraceFormat};
use zombiesim::workload::{Op, TraceSpec};
use zombiesim::{simulate, Config, Report, RunOptions, WorkloadSpec};

/// Options of a verified, reproducible run with `seed`.
#[allow(dead_code)] // not every test file uses it
pub fn verified_opts(seed: u64) -> RunOptions {
    RunOptions {
        seed,
        verify: true,
        reproducible: true,
        ..Default::default()
    }
}

/// A verified, reproducible run of workload `wl` with `seed`.
#[allow(dead_code)] // not every test file uses it
pub fn verified_run(cfg: &Config, wl: &str, seed: u64) -> Report {
    let spec = WorkloadSpec::parse(wl).unwrap();
    simulate(cfg, &spec, &verified_opts(seed), &mut |_| true).unwrap()
}

/// A native trace at `path`, replayed as it is (no remapping, no limit).
#[allow(dead_code)] // not every test file uses it
pub fn native_trace(path: &Path) -> TraceSpec {
    TraceSpec {
        path: path.to_path_buf(),
        format: TraceFormat::Native,
        options: ReadOptions::default(),
        remap: RemapMode::None,
        limit: None,
    }
}

/// The default preset with `blocks` blocks of `pages` pages per plane and `op`
/// over-provisioning, filled but not randomly preconditioned; `extra` on top.
fn default_device(blocks: u32, pages: u32, op: f64, extra: &[(&str, &str)]) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.blocks_per_plane".into(), blocks.to_string()),
        ("flash.pages_per_block".into(), pages.to_string()),
        ("ftl.over_provisioning".into(), op.to_string()),
        ("precondition.random_drive_writes".into(), "0".into()),
    ];
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs).unwrap();
    cfg
}

/// A small device for device-layer tests: the default preset's 4 planes × 32 blocks ×
/// 16 pages, OP 25%, filled but not randomly preconditioned; `settings` on top.
#[allow(dead_code)] // not every test file uses it
pub fn small_device(settings: &[(&str, &str)]) -> Config {
    default_device(32, 16, 0.25, settings)
}

/// The device notified traces replay on: 64 MiB (16 384 pages of 4 KiB), 12% spare
/// (14 628 logical pages), filled but not randomly preconditioned; `extra` on top.
#[allow(dead_code)] // not every test file uses it
pub fn notified_device(extra: &[(&str, &str)]) -> Config {
    default_device(64, 64, 0.12, extra)
}

/// `steps` random single-page writes, reads, trims and flushes through a device built
/// from `cfg` (three in four on the first `hot` pages), with a power loss half-way:
/// every read returns what the host last wrote (or, for a page the loss took, what
/// flash held), the integrity oracle and the invariants hold after the loss and at
/// the end. Returns the device's counters.
#[allow(dead_code)] // not every test file uses it
pub fn power_loss_run(
    cfg: &Config,
    seed: u64,
    steps: usize,
    hot: u64,
) -> zombiesim::stats::Counters {
    let mut dev = Device::new(cfg, 1, true).unwrap();
    let n = dev.logical_pages();
    let mut latest: Vec<Option<u64>> = vec![None; n as usize];
    let mut x = seed;
    for i in 0..steps {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = x >> 33;
        let lpn = if r.is_multiple_of(4) {
            r / 4 % n
        } else {
            r / 4 % hot
        };
        match r % 13 {
            0 => {
                dev.submit(0, &Command::new(Op::Trim, lpn, 1)).unwrap();
                latest[lpn as usize] = None;
            }
            1 | 2 => {
                dev.submit(0, &Command::new(Op::Read, lpn, 1)).unwrap();
                assert_eq!(dev.content_of(lpn), latest[lpn as usize], "page {lpn}");
            }
            3 => {
                dev.submit(0, &Command::new(Op::Flush, 0, 0)).unwrap();
            }
            _ => {
                let cmd = Command {
                    payload: Payload::Same(i as u64 + 1),
                    ..Command::new(Op::Write, lpn, 1)
                };
                dev.submit(0, &cmd).unwrap();
                latest[lpn as usize] = Some(i as u64 + 1);
            }
        }
        if i == steps / 2 {
            let lost: HashSet<u64> = dev.power_loss().unwrap().into_iter().collect();
            for l in 0..n {
                let got = dev.content_of(l);
                if !lost.contains(&l) {
                    assert_eq!(got, latest[l as usize], "page {l} was not lost");
                }
                latest[l as usize] = got;
            }
            dev.verify().unwrap();
        }
    }
    dev.verify().unwrap();
    for l in 0..n {
        assert_eq!(dev.content_of(l), latest[l as usize], "page {l}");
    }
    dev.counters()
}

/// A sample trace the project ships (`traces/samples/`, relative to it). A missing one
/// fails the test that asked for it: the samples are part of the checkout.
#[allow(dead_code)] // not every test file uses it
pub fn sample(rel: &str) -> PathBuf {
    let path = samples_dir().join(rel);
    assert!(
        path.exists(),
        "the shipped sample trace {} is missing (restore it: git checkout -- traces/samples)",
        path.display()
    );
    path
}

/// The checkout's folder of sample traces.
#[allow(dead_code)] // not every test file uses it
pub fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/samples")
}
