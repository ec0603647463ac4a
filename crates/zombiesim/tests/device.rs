//! The device layer: the write buffer (hits, eviction, flush, FUA), power loss with a
//! volatile and a non-volatile buffer checked against a model and the integrity
//! oracle, and the buffer's report through a whole run.

use proptest::prelude::*;
use std::collections::HashSet;
use zombiesim::device::{Command, Device, Payload};
use zombiesim::workload::Op;

use crate::common;
use common::{small_device as small, verified_run};

fn write(dev: &mut Device, lpn: u64, value: u64, fua: bool) {
    let cmd = Command {
        payload: Payload::Same(value),
        fua,
        ..Command::new(Op::Write, lpn, 1)
    };
    dev.submit(0, &cmd).unwrap();
}

#[test]
fn a_buffer_larger_than_the_working_set_serves_every_read_and_programs_only_on_flush() {
    // 64 pages of buffer; the working set is 40 pages.
    let cfg = small(&[("device.buffer", "256KiB")]);
    let mut dev = Device::new(&cfg, 1, true).unwrap();
    for round in 0..5u64 {
        for lpn in 0..40 {
            write(&mut dev, lpn, round * 100 + lpn, false);
        }
        for lpn in 0..40 {
            dev.submit(0, &Command::new(Op::Read, lpn, 1)).unwrap();
        }
    }
    let c = dev.counters();
    assert_eq!(
        c.programs.total(),
        0,
        "nothing reaches flash before a flush"
    );
    let b = dev.buffer_report().unwrap().counters;
    assert_eq!((b.read_hits, b.read_misses), (200, 0), "read hit ratio 1");
    assert_eq!(b.write_hits, 160, "rewrites are absorbed");
    assert_eq!(dev.buffer_report().unwrap().dirty_pages_end, 40);
    dev.submit(0, &Command::new(Op::Flush, 0, 0)).unwrap();
    let c = dev.counters();
    assert_eq!(c.host_write_pages, 200);
    assert_eq!(c.programs.get(zombiesim::stats::Cause::Buffer), 40);
    assert_eq!(c.programs.total(), 40, "one program per page, at the flush");
    assert_eq!(dev.buffer_report().unwrap().dirty_pages_end, 0);
    dev.verify().unwrap();
    for lpn in 0..40 {
        assert_eq!(dev.content_of(lpn), Some(400 + lpn));
    }
}

#[test]
fn a_full_buffer_evicts_and_a_fua_write_goes_through() {
    let cfg = small(&[("device.buffer", "16KiB")]); // 4 pages
    let mut dev = Device::new(&cfg, 1, true).unwrap();
    for lpn in 0..10 {
        write(&mut dev, lpn, lpn, false);
    }
    let b = dev.buffer_report().unwrap().counters;
    assert_eq!((b.evictions, b.dirty_evictions), (6, 6));
    assert_eq!(dev.counters().programs.total(), 6);
    write(&mut dev, 9, 99, true);
    let c = dev.counters();
    assert_eq!(c.programs.get(zombiesim::stats::Cause::Host), 1);
    assert_eq!(
        dev.buffer_report().unwrap().dirty_pages_end,
        3,
        "the FUA write dropped the buffered copy"
    );
    assert_eq!(dev.content_of(9), Some(99));
    dev.verify().unwrap();
}

#[test]
fn cflru_evicts_clean_pages_first() {
    let cfg = small(&[
        ("device.buffer", "16KiB"),
        ("device.buffer_policy", "cflru"),
        ("device.cflru_window", "1.0"),
    ]);
    let mut dev = Device::new(&cfg, 1, true).unwrap();
    for lpn in 0..4 {
        write(&mut dev, lpn, lpn, false);
    }
    dev.submit(0, &Command::new(Op::Flush, 0, 0)).unwrap();
    write(&mut dev, 0, 10, false); // page 0 dirty again, pages 1-3 clean
    let before = dev.counters().programs.total();
    for lpn in 4..7 {
        write(&mut dev, lpn, lpn, false);
    }
    assert_eq!(
        dev.counters().programs.total(),
        before,
        "three clean pages went first, without a program"
    );
    assert_eq!(dev.content_of(0), Some(10));
}

#[derive(Clone, Debug)]
enum Step {
    Write(u64, bool),
    Read(u64),
    Trim(u64),
    Flush,
    PowerLoss,
}

fn step() -> impl Strategy<Value = Step> {
    let lpn = 0u64..120;
    prop_oneof![
        8 => (lpn.clone(), prop::bool::weighted(0.1)).prop_map(|(l, f)| Step::Write(l, f)),
        3 => lpn.clone().prop_map(Step::Read),
        1 => lpn.prop_map(Step::Trim),
        1 => Just(Step::Flush),
        1 => Just(Step::PowerLoss),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every write acknowledged as durable (flushed, FUA, or any write with a
    /// non-volatile buffer) survives power loss, and exactly the pages dirty in a
    /// volatile buffer are reported lost; the integrity oracle and the buffer's
    /// bookkeeping hold after every step.
    #[test]
    fn acknowledged_durable_writes_survive_power_loss(
        steps in prop::collection::vec(step(), 1..400),
        nonvolatile in any::<bool>(),
        buffer_pages in prop::sample::select(vec![1u64, 4, 16, 64]),
        policy in prop::sample::select(vec!["lru", "cflru"]),
    ) {
        let cfg = small(&[
            ("device.buffer", &format!("{}KiB", buffer_pages * 4)),
            ("device.buffer_policy", policy),
            ("device.buffer_nonvolatile", if nonvolatile { "true" } else { "false" }),
        ]);
        let mut dev = Device::new(&cfg, 7, true).unwrap();
        let n = 120usize;
        // The model: what the host last wrote, and whether that is durable yet.
        let mut latest: Vec<Option<u64>> = vec![None; n];
        let mut durable: Vec<bool> = vec![true; n];
        // Values written since the page was last durable (what flash may hold).
        let mut since: Vec<Vec<u64>> = vec![Vec::new(); n];
        let mut last_durable: Vec<Option<u64>> = vec![None; n];
        let mut next = 1u64;
        for s in steps {
            match s {
                Step::Write(l, fua) => {
                    let v = next;
                    next += 1;
                    write(&mut dev, l, v, fua);
                    let i = l as usize;
                    latest[i] = Some(v);
                    if fua || nonvolatile {
                        durable[i] = true;
                        since[i].clear();
                        last_durable[i] = Some(v);
                    } else {
                        durable[i] = false;
                        since[i].push(v);
                    }
                }
                Step::Read(l) => {
                    dev.submit(0, &Command::new(Op::Read, l, 1)).unwrap();
                    prop_assert_eq!(dev.content_of(l), latest[l as usize]);
                }
                Step::Trim(l) => {
                    dev.submit(0, &Command::new(Op::Trim, l, 1)).unwrap();
                    let i = l as usize;
                    latest[i] = None;
                    durable[i] = true;
                    since[i].clear();
                    last_durable[i] = None;
                }
                Step::Flush => {
                    dev.submit(0, &Command::new(Op::Flush, 0, 0)).unwrap();
                    for i in 0..n {
                        durable[i] = true;
                        since[i].clear();
                        last_durable[i] = latest[i];
                    }
                }
                Step::PowerLoss => {
                    let lost: HashSet<u64> = dev.power_loss().unwrap().into_iter().collect();
                    if nonvolatile {
                        prop_assert!(lost.is_empty());
                    }
                    for i in 0..n {
                        let got = dev.content_of(i as u64);
                        if lost.contains(&(i as u64)) {
                            prop_assert!(!durable[i], "page {} was durable but reported lost", i);
                            prop_assert_ne!(got, latest[i], "page {} reported lost still reads its newest write", i);
                            // Flash holds the last durable copy, or a later write the
                            // buffer evicted before the loss.
                            prop_assert!(
                                got == last_durable[i] || got.is_some_and(|v| since[i].contains(&v)),
                                "page {} reads {:?} after the loss", i, got
                            );
                        } else {
                            prop_assert_eq!(got, latest[i], "page {} not reported lost", i);
                        }
                        latest[i] = got;
                        durable[i] = true;
                        since[i].clear();
                        last_durable[i] = got;
                    }
                }
            }
            dev.verify().unwrap();
        }
    }
}

#[test]
fn the_report_has_a_buffer_section_and_buffer_programs() {
    let cfg = small(&[("device.buffer", "64KiB"), ("timing.enabled", "true")]);
    let wl = "hotcold:r=0.9,f=0.05,drive_writes=1,read=0.3";
    let r = verified_run(&cfg, wl, 3);
    let report = r.buffer.as_ref().expect("a buffer section");
    let b = &report.counters;
    assert_eq!(report.capacity_pages, 16);
    assert!(b.write_hits > 0 && b.read_hits > 0);
    assert_eq!(
        b.write_hits + b.write_misses,
        r.host.write_pages,
        "every host page write went through the buffer"
    );
    assert_eq!(
        r.flash.programs_by_cause.get(zombiesim::stats::Cause::Host),
        0
    );
    assert_eq!(
        r.flash
            .programs_by_cause
            .get(zombiesim::stats::Cause::Buffer),
        b.dirty_evictions + b.flushed_pages
    );
    // Absorbed rewrites never reach flash: fewer programs than without the buffer.
    let plain = verified_run(&small(&[("timing.enabled", "true")]), wl, 3);
    assert!(r.flash.programs < plain.flash.programs);
}
