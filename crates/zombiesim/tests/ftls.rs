//! Every FTL behind the device layer: random writes, reads, trims, flushes and power
//! losses through each write-buffer policy it may run under, checked against a model of
//! what a read must return and by the integrity oracle and invariants at the end.

use proptest::prelude::*;
use std::collections::HashMap;
use zombiesim::device::{Command, Device, Payload};
use zombiesim::workload::Op;

use crate::common;
use common::small_device;

const KINDS: [&str; 5] = ["page", "dftl", "superblock", "fast", "block"];

/// The buffer policies `kind` may run under (`None`: no buffer).
fn policies(kind: &str) -> Vec<Option<&'static str>> {
    let mut p = vec![None, Some("lru"), Some("cflru")];
    if matches!(kind, "superblock" | "fast" | "block") {
        p.extend([Some("fab"), Some("bplru"), Some("3-region")]);
    }
    p
}

fn config(kind: &str, policy: Option<&str>, nonvolatile: bool) -> zombiesim::Config {
    let mut sets: Vec<(&str, &str)> = vec![("ftl.kind", kind)];
    match kind {
        "superblock" => sets.push(("ftl.superblock_blocks", "8")),
        "dftl" => sets.push(("ftl.cmt_entries", "16")),
        "fast" => sets.push(("ftl.log_blocks", "6")),
        _ => {}
    }
    if let Some(p) = policy {
        sets.push(("device.buffer", "64KiB")); // 16 pages: evictions all the time
        sets.push(("device.buffer_policy", p));
        if nonvolatile {
            sets.push(("device.buffer_nonvolatile", "true"));
        }
        if p == "3-region" && kind == "fast" {
            sets.push(("ftl.log_victim", "ba-vbs"));
            sets.push(("ftl.buffer_aware_merge", "true"));
        }
    }
    let cfg = small_device(&sets);
    cfg.validate()
        .unwrap_or_else(|e| panic!("{kind}/{policy:?}: {e}"));
    cfg
}

#[derive(Clone, Debug)]
enum Step {
    Write(u64, u32),
    Read(u64),
    Trim(u64),
    Flush,
    PowerLoss,
}

fn steps(logical: u64) -> impl Strategy<Value = Vec<Step>> {
    // Skewed towards a hot range so blocks mix hot and cold pages; runs of up to a
    // block so sequential writes (switch merges) happen too.
    let lpn = prop_oneof![3 => 0..logical.min(48), 1 => 0..logical];
    let step = prop_oneof![
        12 => (lpn.clone(), 1u32..=16).prop_map(|(l, n)| Step::Write(l, n)),
        3 => lpn.clone().prop_map(Step::Read),
        1 => lpn.prop_map(Step::Trim),
        1 => Just(Step::Flush),
        1 => Just(Step::PowerLoss),
    ];
    proptest::collection::vec(step, 50..400)
}

/// Run `steps` on `kind` under `policy`; the model knows what each page must hold: the
/// last value written, except that a volatile buffer's power loss takes back what it
/// had not written.
fn check(kind: &str, policy: Option<&str>, nonvolatile: bool, steps: &[Step]) {
    let cfg = config(kind, policy, nonvolatile);
    let mut dev = Device::new(&cfg, 3, true).unwrap();
    let logical = dev.logical_pages();
    // What flash holds (durable) and what a read returns now.
    let mut model: HashMap<u64, Option<u64>> = HashMap::new();
    let mut value = 0u64;
    for (i, step) in steps.iter().enumerate() {
        let now = i as u64 * 1_000;
        match *step {
            Step::Write(lpn, n) => {
                let lpn = lpn % logical;
                let n = n.min((logical - lpn) as u32);
                value += 1;
                let cmd = Command {
                    payload: Payload::Same(value),
                    ..Command::new(Op::Write, lpn, n)
                };
                dev.submit(now, &cmd).unwrap();
                for l in lpn..lpn + n as u64 {
                    model.insert(l, Some(value));
                }
            }
            Step::Read(lpn) => {
                let lpn = lpn % logical;
                dev.submit(now, &Command::new(Op::Read, lpn, 1)).unwrap();
            }
            Step::Trim(lpn) => {
                let lpn = lpn % logical;
                dev.submit(now, &Command::new(Op::Trim, lpn, 1)).unwrap();
                model.insert(lpn, None);
            }
            Step::Flush => {
                dev.submit(now, &Command::new(Op::Flush, 0, 0)).unwrap();
            }
            Step::PowerLoss => {
                let lost = dev.power_loss().unwrap();
                assert!(
                    nonvolatile || policy.is_some() || lost.is_empty(),
                    "{kind}: nothing to lose without a buffer"
                );
                // Pages the buffer lost read back their older flash copy: the oracle
                // knows which; the model forgets them (any durable value is fine).
                for l in lost {
                    model.remove(&l);
                }
            }
        }
    }
    dev.verify()
        .unwrap_or_else(|e| panic!("{kind}/{policy:?}: {e}"));
    for (&lpn, &want) in &model {
        assert_eq!(
            dev.content_of(lpn),
            want,
            "{kind}/{policy:?}: page {lpn} reads back the wrong content"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn every_ftl_under_every_buffer_policy_keeps_what_was_written(
        ops in steps(512),
        nonvolatile in any::<bool>(),
    ) {
        for kind in KINDS {
            for policy in policies(kind) {
                check(kind, policy, nonvolatile && policy.is_some(), &ops);
            }
        }
    }
}

/// Whole-block sequential writes, runs from offset 0 and random single pages on FAST
/// under `policy`; verified at the end. Returns the device's counters.
fn deterministic_mix(policy: &str) -> zombiesim::stats::Counters {
    let cfg = config("fast", Some(policy), false);
    let mut dev = Device::new(&cfg, 5, true).unwrap();
    let logical = dev.logical_pages();
    let ppb = cfg.flash.pages_per_block as u64;
    let mut x = 12345u64;
    for i in 0..4000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = x >> 33;
        let (lpn, n) = match i % 3 {
            0 => ((r % (logical / ppb)) * ppb, ppb as u32),
            1 => ((r % (logical / ppb)) * ppb, (1 + r % ppb) as u32),
            _ => (r % logical, 1),
        };
        let cmd = Command {
            payload: Payload::Same(i),
            ..Command::new(Op::Write, lpn, n.min((logical - lpn) as u32))
        };
        dev.submit(i * 1000, &cmd).unwrap();
    }
    dev.verify().unwrap();
    dev.counters()
}

#[test]
fn a_long_deterministic_mix_exercises_every_merge_kind_and_stays_consistent() {
    let c = deterministic_mix("lru");
    assert!(c.merges[2] > 0, "full merges: {:?}", c.merges);
    assert!(
        c.merges[0] > 0 && c.merges[1] > 0,
        "switch and partial: {:?}",
        c.merges
    );
    // BPLRU pads every victim block to a whole one written in order: switch merges
    // only, the missing pages read from flash.
    let c = deterministic_mix("bplru");
    assert!(c.merges[0] > 0, "switch merges: {:?}", c.merges);
    assert!(
        c.reads.get(zombiesim::stats::Cause::Buffer) > 0,
        "padding reads"
    );
}
