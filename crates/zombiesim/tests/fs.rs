//! File systems in VMs (002): journaling modes, the benchmarks, crash consistency.

use proptest::prelude::*;
use zombiesim::fs::crash::crash_and_recover;
use zombiesim::fs::{Ext3, FsIo, FsParams, JournalMode, Layout, Role};
use zombiesim::workload::IoKind;
use zombiesim::{simulate, Config, Error, Report, RunOptions, WorkloadSpec};

/// The vma-journaling preset scaled to `mib` MiB of flash, under `ftl`.
fn device(mib: u64, ftl: &str) -> Config {
    let mut cfg = Config::preset("vma-journaling").unwrap();
    let blocks = mib * 1024 * 1024 / (64 * 2048);
    cfg.set_many(&[
        ("flash.blocks_per_plane".to_string(), blocks.to_string()),
        ("ftl.kind".to_string(), ftl.to_string()),
    ])
    .unwrap();
    cfg
}

fn try_run(cfg: &Config, wl: &str) -> zombiesim::Result<Report> {
    let opts = RunOptions {
        seed: 3,
        reproducible: true,
        verify: true,
        ..Default::default()
    };
    simulate(cfg, &WorkloadSpec::parse(wl)?, &opts, &mut |_| true)
}

fn run(cfg: &Config, wl: &str) -> Report {
    try_run(cfg, wl).unwrap()
}

const UNTAR: &str = "fs:untar,vms=4,files=2000,dirs=100,memory=8MiB";

#[test]
fn every_mode_runs_and_only_the_on_disk_journals_write_the_journal_area() {
    let cfg = device(256, "page");
    let mut bytes = Vec::new();
    for mode in JournalMode::ALL {
        let r = run(&cfg, &format!("{UNTAR},journal={}", mode.name()));
        let fs = r.fs.as_ref().expect("an fs section");
        assert_eq!(fs.journal, mode);
        assert_eq!(fs.vms, 4);
        assert!(fs.operations > 2000 * 4, "{} operations", fs.operations);
        assert!(fs.transactions > 0);
        assert_eq!(fs.requests, fs.io.requests());
        let journal = fs.io.journal.write_bytes;
        if mode == JournalMode::Vma {
            assert_eq!(journal, 0, "vma keeps its journal in the VMM's memory");
            assert!(fs.vmm_journal_blocks > 0);
        } else {
            assert!(journal > 0, "{mode:?} writes its log");
        }
        // Everything the host wrote is data, metadata or journal.
        let written = fs.io.data.write_bytes + fs.io.metadata.write_bytes + journal;
        assert_eq!(written, r.host.write_pages * r.device.page_size);
        bytes.push(fs.bytes as f64);
    }
    let [writeback, ordered, journal, vma] = bytes[..] else {
        unreachable!()
    };
    // 002 Fig. 3: full data journaling writes data twice; VMA about as much as the
    // metadata-only modes.
    assert!(
        journal > 1.6 * ordered,
        "journal {journal} vs ordered {ordered}"
    );
    assert!(
        (vma / writeback - 1.0).abs() < 0.25,
        "vma {vma} vs writeback {writeback}"
    );
}

#[test]
fn reports_are_deterministic() {
    let cfg = device(256, "fast");
    let wl = "fs:untar,vms=2,files=400,dirs=30,memory=4MiB,journal=journal";
    let a = serde_json::to_string(&run(&cfg, wl)).unwrap();
    let b = serde_json::to_string(&run(&cfg, wl)).unwrap();
    let strip = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        v["run"] = serde_json::Value::Null;
        v.to_string()
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn every_benchmark_runs_on_every_ftl_of_002() {
    for (ftl, wl) in [
        (
            "fast",
            "fs:seq_write,vms=2,size=4MiB,memory=2MiB,journal=journal",
        ),
        (
            "superblock",
            "fs:rnd_write,vms=2,file=8MiB,total=2MiB,memory=2MiB,journal=vma",
        ),
        (
            "dftl",
            "fs:kernel_compile,vms=2,objects=60,headers=50,memory=4MiB",
        ),
        (
            "fast",
            "fs:postmark,vms=2,files=50,transactions=200,memory=2MiB,journal=writeback",
        ),
        ("superblock", "fs:untar,vms=2,files=200,dirs=20,memory=2MiB"),
    ] {
        let r = run(&device(128, ftl), wl);
        let fs = r.fs.as_ref().unwrap();
        assert!(fs.operations > 0 && r.host.write_pages > 0, "{ftl} {wl}");
        assert_eq!(r.ftl.kind, ftl);
    }
}

#[test]
fn with_upkeep_off_the_clock_every_ftl_sees_the_same_io_stream() {
    // 002 recorded its traces on disks and replayed them on each FTL. With
    // `timing.upkeep_time = false` GC, merges and translation pages take no device time,
    // so the hosts' requests do not depend on the FTL; with them timed they do.
    // One partition size for all three (their logical spaces differ).
    let wl = "fs:untar,vms=2,files=600,dirs=30,memory=2MiB,journal=ordered,partition=24MiB";
    let streams = |upkeep: &str| {
        ["fast", "superblock", "dftl"].map(|ftl| {
            let mut cfg = device(64, ftl);
            cfg.set_many(&[("timing.upkeep_time".to_string(), upkeep.to_string())])
                .unwrap();
            let r = run(&cfg, wl);
            let fs = r.fs.as_ref().unwrap();
            assert!(r.flash.erases > 0, "{ftl}: the run collects");
            (fs.requests, fs.bytes, fs.transactions)
        })
    };
    let untimed = streams("false");
    assert!(untimed.iter().all(|s| *s == untimed[0]), "{untimed:?}");
    let timed = streams("true");
    assert!(timed.iter().any(|s| *s != timed[0]), "{timed:?}");
}

#[test]
fn seq_write_writes_its_file_once_and_metadata_a_little() {
    // 8 MiB appended in 8 KiB pieces, synced at the end: the data reaches the device
    // once (writeback mode), metadata is a few per cent of it.
    let r = run(
        &device(128, "page"),
        "fs:seq_write,vms=1,size=8MiB,memory=64MiB,journal=writeback",
    );
    let fs = r.fs.unwrap();
    assert_eq!(fs.ops.write, 1024);
    assert_eq!(fs.io.data.write_bytes, 8 << 20);
    let meta = fs.io.metadata.write_bytes as f64;
    assert!(meta > 0.0 && meta < 0.05 * (8 << 20) as f64, "{meta}");
}

#[test]
fn journal_mode_journals_the_data_too() {
    let r = run(
        &device(128, "page"),
        "fs:seq_write,vms=1,size=8MiB,memory=64MiB,journal=journal",
    );
    let fs = r.fs.unwrap();
    assert_eq!(fs.io.data.write_bytes, 8 << 20);
    assert!(fs.io.journal.write_bytes >= 8 << 20, "{:?}", fs.io.journal);
}

fn error_of(cfg: &Config, wl: &str) -> Error {
    match WorkloadSpec::parse(wl) {
        Err(e) => e,
        Ok(_) => try_run(cfg, wl).expect_err(wl),
    }
}

#[test]
fn bad_input_names_the_key() {
    let cfg = device(128, "page");
    for (wl, needle) in [
        ("fs:postmark,colour=red", "unknown key `colour`"),
        ("fs:tar", "unknown file-system benchmark `tar`"),
        ("fs:postmark,journal=full", "journal = full"),
        ("fs:postmark,vms=0", "vms"),
        (
            "fs:postmark,vms=4,partition=64MiB",
            "partition layout does not fit",
        ),
        ("fs:postmark,vms=2,journal_size=60MiB", "journal_size"),
        ("fs:postmark,block=3KiB", "block"),
        ("fs:postmark,min=9KiB,max=1KiB", "min"),
        ("fs:seq_write,size=1GiB,vms=2", "file system is full"),
    ] {
        let e = error_of(&cfg, wl);
        assert_eq!(e.exit_code(), 2, "{wl}: {e}");
        assert!(e.to_string().contains(needle), "{wl}: {e}");
    }
    let mut untimed = cfg.clone();
    untimed.set("timing.enabled", "false").unwrap();
    let e = error_of(&untimed, "fs:postmark");
    assert!(e.to_string().contains("timing.enabled"), "{e}");
    let mut cached = cfg.clone();
    cached.set("host.cache", "64MiB").unwrap();
    let e = error_of(&cached, "fs:postmark,memory=8MiB");
    assert!(e.to_string().contains("memory"), "{e}");
}

/// A small partition whose journal wraps and checkpoints often.
fn crash_params(mode: JournalMode) -> (FsParams, Layout) {
    let spec = WorkloadSpec::parse(&format!(
        "fs:postmark,vms=1,files=60,transactions=600,max=24KiB,dirs=4,journal={},commit=0.05,memory=1MiB",
        mode.name()
    ))
    .unwrap();
    let p = FsParams::parse(&spec).unwrap();
    let layout = Layout::new(8192, 4096, 128).unwrap();
    (p, layout)
}

fn crash(mode: JournalMode, seed: u64, at: u64, flush: f64) -> zombiesim::fs::crash::Verdict {
    let (p, layout) = crash_params(mode);
    crash_and_recover(&p, layout, seed, at, flush).unwrap()
}

fn assert_consistent(v: &zombiesim::fs::crash::Verdict) {
    assert!(
        v.inconsistent.is_empty(),
        "{:?}",
        &v.inconsistent[..v.inconsistent.len().min(3)]
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        ..ProptestConfig::default()
    })]

    /// At any crash point, with the flusher writing any dirty blocks in any order,
    /// recovery restores the last durable transaction exactly (ordered, journal, vma),
    /// and ordered mode never leaves stale data behind committed metadata.
    #[test]
    fn recovery_restores_a_consistent_state(
        seed in 0u64..1_000_000,
        at in 1u64..6_000,
        flush in 0.0f64..0.9,
        mode in prop::sample::select(vec![JournalMode::Ordered, JournalMode::Journal, JournalMode::Vma, JournalMode::Writeback]),
    ) {
        let v = crash(mode, seed, at, flush);
        prop_assert!(v.inconsistent.is_empty(), "{mode:?}: {:?}", &v.inconsistent[..v.inconsistent.len().min(3)]);
        if mode != JournalMode::Writeback {
            prop_assert!(v.stale_data.is_empty(), "{mode:?}: {:?}", &v.stale_data[..v.stale_data.len().min(3)]);
        }
        prop_assert!(v.recovered_tid <= v.committed);
    }
}

#[test]
fn crashes_recover_committed_transactions_and_writeback_can_expose_stale_data() {
    // The oracle is not vacuous: crashes land after many commits, and writeback mode
    // (no ordering of data before the commit) does leave stale data somewhere.
    let mut stale = 0;
    let mut recovered = 0;
    for seed in 0..40 {
        let v = crash(JournalMode::Writeback, seed, 500 + seed * 97, 0.05);
        assert!(v.inconsistent.is_empty(), "{:?}", v.inconsistent);
        stale += v.stale_data.len();
        recovered += v.recovered_tid;
        let o = crash(JournalMode::Ordered, seed, 500 + seed * 97, 0.05);
        assert!(
            o.stale_data.is_empty() && o.inconsistent.is_empty(),
            "seed {seed}: {:?} {:?}",
            &o.stale_data[..o.stale_data.len().min(3)],
            &o.inconsistent[..o.inconsistent.len().min(3)]
        );
    }
    assert!(
        recovered > 40,
        "crashes recovered {recovered} transactions in all"
    );
    assert!(
        stale > 0,
        "writeback mode never exposed stale data: the check cannot fail"
    );
}

#[test]
fn a_run_to_its_end_recovers_its_last_transaction_exactly() {
    // Run to the end with no flusher: every home write comes from checkpoints and the
    // final sync, and the state is exactly the last transaction's.
    let v = crash(JournalMode::Journal, 7, u64::MAX, 0.0);
    assert!(v.steps > 1000);
    assert_eq!(v.recovered_tid, v.committed);
    assert!(v.inconsistent.is_empty(), "{:?}", v.inconsistent);
}

#[test]
fn vma_keeps_a_deleted_files_page_until_its_checkpoint_has_written_it() {
    // A regression case: a file was deleted while the checkpoint of an older
    // transaction that held one of its blocks was queued; the page was dropped, the
    // checkpoint wrote nothing and the VMM released the only copy.
    assert_consistent(&crash(JournalMode::Vma, 437164, 1562, 0.0));
}

#[test]
fn a_checkpoint_before_a_delete_commits_writes_the_deleted_copy_home() {
    // A deleted file's page is dropped at the delete even though a committed
    // transaction holds its copy (JBD cleans it: nothing writes it home). If that
    // transaction is checkpointed before the delete commits, recovery still needs the
    // copy: the checkpoint writes it home itself. Without that write this case (found
    // by `recovery_restores_a_consistent_state`) recovers a stale block.
    assert_consistent(&crash(
        JournalMode::Journal,
        418557,
        5871,
        0.10227666891690079,
    ));
}

#[test]
fn a_deleted_files_committed_data_is_dropped_at_the_delete() {
    // Full data journaling: a file's data committed, then the file deleted. JBD cleans
    // the pages at once (`journal_unmap_buffer`): the flusher must not write them home
    // in the seconds until the delete commits. A checkpoint of the copy's transaction
    // in that window writes the copy home from the journal (recovery needs it), and the
    // delete's commit drops that page again.
    let drops = |out: &std::collections::VecDeque<FsIo>| -> u64 {
        out.iter()
            .map(|io| match io {
                FsIo::Drop { count, .. } => *count as u64,
                _ => 0,
            })
            .sum()
    };
    for mode in [JournalMode::Journal, JournalMode::Vma] {
        let layout = Layout::new(8192, 4096, 128).unwrap();
        let mut fs = Ext3::new(layout, mode, 5_000_000_000, 4096).unwrap();
        let file = fs.create(fs.root(), false).unwrap();
        fs.write(file, 0, 8 * 4096).unwrap();
        fs.commit();
        fs.commit_finished();
        fs.out.clear();
        fs.delete(file);
        assert_eq!(drops(&fs.out), 8, "{mode:?}: dropped at the delete");
        fs.out.clear();
        fs.journal.checkpoint(&mut fs.out);
        let rewritten: u64 = fs
            .out
            .iter()
            .map(|io| match io {
                FsIo::Write {
                    kind: IoKind::Data,
                    count,
                    version,
                    ..
                } => {
                    assert_eq!(*version, 1, "{mode:?}: the committed copy");
                    *count as u64
                }
                _ => 0,
            })
            .sum();
        assert_eq!(
            rewritten, 8,
            "{mode:?}: the checkpoint writes the copies home"
        );
        fs.out.clear();
        fs.commit();
        assert_eq!(drops(&fs.out), 8, "{mode:?}: dropped again at the commit");
    }
}

#[test]
fn a_commit_block_that_lands_while_the_other_thread_runs_is_recovered() {
    // A regression case: the journal daemon's commit block landed, then the crash hit
    // an application step before the daemon recorded the commit.
    let v = crash(JournalMode::Journal, 267443, 4086, 0.24682665582352217);
    assert_consistent(&v);
    assert_eq!(v.recovered_tid, v.committed);
}

#[test]
fn every_benchmark_and_mode_keeps_the_allocators_books() {
    // Each benchmark in each mode, its two threads interleaved to the end (no device):
    // every file's blocks are allocated once and the free counts match the bitmap.
    for bench in [
        "seq_write,size=2MiB",
        "rnd_write,file=2MiB,total=1MiB",
        "postmark,files=60,transactions=400",
        "untar,files=120,dirs=8,cpu=1",
        "kernel_compile,objects=60,headers=80,compile_ms=1",
    ] {
        for mode in ["writeback", "ordered", "journal", "vma"] {
            let spec = WorkloadSpec::parse(&format!(
                "fs:{bench},vms=1,journal={mode},commit=0.05,memory=1MiB"
            ))
            .unwrap();
            let p = FsParams::parse(&spec).unwrap();
            let layout = Layout::new(8192, 4096, 128).unwrap();
            let mut vm = zombiesim::fs::FsVm::new(&p, layout, 0, 3, 1 << 20).unwrap();
            let (mut now, mut done, mut steps) = (0u64, [false; 2], 0u64);
            while !(done[0] && done[1]) {
                for (r, role) in [(0, Role::App), (1, Role::Journal)] {
                    if done[r] {
                        continue;
                    }
                    match vm.next_io(role, now).unwrap() {
                        None => done[r] = true,
                        Some(_) => steps += 1,
                    }
                }
                now += 100_000;
                assert!(steps < 10_000_000, "{bench} {mode}: does not finish");
            }
            if let Err(e) = vm.fs.check() {
                panic!("{bench} {mode}: {e}");
            }
        }
    }
}
