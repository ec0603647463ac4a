//! Tests of the oracle: the future list, the due lists, the envelope.

use super::*;

fn future(writes: &[u32], trims: &[(u64, u32)], logical: u64) -> FutureList {
    FutureList::from_events(
        Events {
            writes: writes.to_vec(),
            trims: trims.to_vec(),
        },
        logical,
    )
}

#[test]
fn the_backward_pass_gives_each_write_its_next_write_or_trim() {
    // writes:     0  1  2  3  4  5  6
    // LPN:        5  7  5  9  7  5  9
    // trim of 9 after 4 writes (between write 3 and write 4), trim of 7 after 7.
    let f = future(&[5, 7, 5, 9, 7, 5, 9], &[(4, 9), (7, 7)], 16);
    // 5@0 is overwritten by write 2: dead once 3 writes are applied; 7@1 by write 4
    // (5); 5@2 by write 5 (6); 9@3 trimmed after 4 writes (4); 7@4 trimmed after 7
    // (7); 5@5 and 9@6 never die.
    let deaths: Vec<Option<u64>> = f
        .distance
        .iter()
        .enumerate()
        .map(|(k, &d)| (d != NEVER).then_some(k as u64 + d as u64))
        .collect();
    assert_eq!(
        deaths,
        vec![Some(3), Some(5), Some(6), Some(4), Some(7), None, None]
    );
    assert_eq!(f.writes(), 7);
    assert_eq!(f.trims, 2);
    // The versions at the start: 5 dies at write 0 (1 applied), 7 at write 1 (2),
    // 9 at write 3 (4); the others never.
    let initial: Vec<Option<u64>> = (0..10).map(|l| f.initial(l)).collect();
    let mut want = vec![None; 10];
    want[5] = Some(1);
    want[7] = Some(2);
    want[9] = Some(4);
    assert_eq!(initial, want);
    // A trim before the first write kills the version at the start then.
    let f = future(&[1], &[(0, 3)], 4);
    assert_eq!(f.initial(3), Some(0));
    // A trim before any measured write kills nothing measured; a trim after write
    // k comes before write k + 1.
    let f = future(&[3, 3], &[(0, 3), (1, 3)], 4);
    assert_eq!(f.distance, vec![1, NEVER]);
    let f = future(&[3, 3], &[], 4);
    assert_eq!(f.distance, vec![2, NEVER]);
}

#[test]
fn the_notifier_marks_each_version_horizon_writes_before_it_dies() {
    let writes = [5, 7, 5, 9, 7, 5, 9, 1, 1];
    // (writes applied, LPN) of every mark, under horizon `h`.
    let run = |h: u64| {
        let mut n = FutureNotifier::new(future(&writes, &[(4, 9)], 16), h, true, false);
        let mut marks: Vec<(u64, u64)> = Vec::new();
        for &lpn in &writes {
            let t = n.written + 1;
            n.after_write(lpn as u64, |l| {
                marks.push((t, l));
                Ok(())
            })
            .unwrap();
        }
        (marks, n.finish(true).unwrap())
    };
    // Deaths (writes applied once dead): 5@0 3, 7@1 5, 5@2 6, 9@3 4 (the trim),
    // 1@7 9; 7@4, 5@5, 9@6 and 1@8 never die.
    // Horizon 2: marked once 1, 3, 4, 2 and 7 writes are applied, or at once when
    // that has passed: 9@3 right after it is written, before the trim.
    let (marks, r) = run(2);
    assert_eq!(marks, vec![(1, 5), (3, 7), (4, 9), (4, 5), (8, 1)]);
    assert_eq!(
        (r.horizon, r.future_writes, r.future_trims, r.hints),
        (2, 9, 1, 5)
    );
    // Horizon 1: one write before the death; an overwritten page is marked just
    // before the write that kills it (which clears the mark before GC can run).
    let (marks, _) = run(1);
    assert_eq!(marks, vec![(2, 5), (4, 9), (4, 7), (5, 5), (8, 1)]);
    // A horizon past every death marks each dying version as it is written.
    let (marks, r) = run(100);
    assert_eq!(marks, vec![(1, 5), (2, 7), (3, 5), (4, 9), (8, 1)]);
    assert_eq!(r.hints, 5);
}

proptest::proptest! {
    /// The due lists mark what a heap of `(d(k) − H, LPN)` marks, in its order: after
    /// each write, every version due by then, smallest `(due, LPN)` first.
    #[test]
    fn the_due_lists_mark_in_a_heaps_order(
        writes in proptest::collection::vec(0u32..24, 1..300),
        trims in proptest::collection::vec((0u64..300, 0u32..24), 0..20),
        h in 1u64..40,
    ) {
        use std::cmp::Reverse;
        let mut trims = trims;
        trims.sort_unstable();
        let f = future(&writes, &trims, 32);
        let distance = f.distance.clone();
        let mut n = FutureNotifier::new(f, h, true, false);
        let mut heap = std::collections::BinaryHeap::new();
        for (k, &lpn) in writes.iter().enumerate() {
            let mut got = Vec::new();
            n.after_write(u64::from(lpn), |l| {
                got.push(l);
                Ok(())
            })
            .unwrap();
            if distance[k] != NEVER {
                heap.push(Reverse(((k as u64 + u64::from(distance[k])).saturating_sub(h), lpn)));
            }
            let mut want = Vec::new();
            while let Some(&Reverse((key, l))) = heap.peek() {
                if key > k as u64 + 1 {
                    break;
                }
                heap.pop();
                want.push(u64::from(l));
            }
            proptest::prop_assert_eq!(got, want, "after write {}", k);
        }
    }
}

#[test]
fn the_envelopes_report_takes_the_wall_time_of_every_member() {
    let mut cfg = Config::preset("default").unwrap();
    let small = [
        ("flash.blocks_per_plane", "64"),
        ("flash.pages_per_block", "16"),
    ];
    cfg.set_many(&small.map(|(k, v)| (k.to_string(), v.to_string())))
        .unwrap();
    let spec = crate::workload::WorkloadSpec::parse("uniform:drive_writes=0.2").unwrap();
    for reproducible in [false, true] {
        let opts = RunOptions {
            reproducible,
            ..Default::default()
        };
        let one = crate::sim::simulate(&cfg, &spec, &opts, &mut |_| true).unwrap();
        let members = ["a", "b", "c"]
            .map(|l| (l.to_string(), cfg.clone()))
            .to_vec();
        let mut n = 0.0;
        let r = best_of(&cfg, members, |_| {
            n += 1.0;
            let mut r = one.clone();
            r.waf = Some(10.0 - n);
            r.run.measured_wall_s = r.run.measured_wall_s.map(|_| n);
            Ok(r)
        })
        .unwrap();
        assert_eq!(r.oracle.unwrap().chosen.as_deref(), Some("c"));
        if reproducible {
            assert_eq!((r.run.wall_s, r.run.measured_wall_s), (None, None));
        } else {
            assert_eq!(r.run.measured_wall_s, Some(6.0));
            assert!(r.run.wall_s.is_some());
        }
    }
}

#[test]
fn a_different_stream_is_an_integrity_error() {
    let f = future(&[1, 2, 3], &[], 4);
    let mut n = FutureNotifier::new(f, 1, true, false);
    for lpn in [1, 3, 2] {
        n.after_write(lpn, |_| Ok(())).unwrap();
    }
    assert!(n.finish(true).is_err());
    // An interrupted run is not checked.
    assert!(n.finish(false).is_ok());
}

#[test]
fn recording_refuses_past_the_memory_budget_naming_the_key() {
    let spec = crate::workload::WorkloadSpec::parse("uniform:drive_writes=4").unwrap();
    let mut w = spec.build(1000, 4096, 1).unwrap();
    let err = record(&mut w, 1000, Some((20_000, 0, "a test limit"))).unwrap_err();
    assert!(
        matches!(&err, Error::Config { key, .. } if key == "gc.policy"),
        "{err}"
    );
    let mut w = spec.build(1000, 4096, 1).unwrap();
    let f = record(&mut w, 1000, Some((1 << 20, 0, "a test limit"))).unwrap();
    assert_eq!(f.writes(), 4000);
}
