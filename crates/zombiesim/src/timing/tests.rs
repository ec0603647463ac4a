use super::*;

fn timing(multi_plane: bool) -> FlashTiming {
    let mut cfg = Config::preset("default").unwrap();
    cfg.flash.planes_per_die = 2;
    cfg.timing.enabled = true;
    // Operations in issue order (the preset's timed runs use `suspend`).
    cfg.timing.scheduler = Scheduler::Fifo;
    cfg.timing.read_us = 50.0;
    cfg.timing.program_us = 500.0;
    cfg.timing.erase_us = 3000.0;
    cfg.timing.channel_mb_s = 400.0; // 4096 B -> 10.24 µs
    cfg.timing.ecc_us = 2.0;
    cfg.timing.multi_plane = multi_plane;
    let geo = Geometry::new(&cfg).unwrap();
    FlashTiming::new(&cfg, &geo)
}

#[test]
fn a_read_is_array_time_transfer_and_ecc() {
    let mut t = timing(true);
    assert_eq!(
        t.read(0, 1_000, Cause::Host),
        1_000 + 50_000 + 10_240 + 2_000
    );
}

#[test]
fn a_read_behind_an_erase_waits_for_it() {
    let mut t = timing(true);
    let erased = t.erase(0, 0, 0, Cause::Gc);
    assert_eq!(erased, 3_000_000);
    assert_eq!(
        t.read(0, 100, Cause::Host),
        3_000_000 + 50_000 + 10_240 + 2_000
    );
    // Another die on the same channel is not delayed: its transfer fits in the
    // gap before the transfer reserved behind the erase.
    assert_eq!(t.read(2, 100, Cause::Host), 100 + 50_000 + 10_240 + 2_000);
    // A transfer that does not fit in a gap goes after the busy interval.
    let late = t.read(3, 3_050_000 - 60_000, Cause::Host);
    assert_eq!(late, 3_060_240 + 10_240 + 2_000);
    assert_eq!(t.summary(3_000_000).gc_busy_s, 0.003);
}

#[test]
fn planes_share_a_die_unless_multi_plane() {
    let mut single = timing(false);
    let mut multi = timing(true);
    let a = single.program(0, 0, false, Cause::Host);
    let b = single.program(1, 0, false, Cause::Host);
    assert!(
        b >= a + 500_000,
        "plane 1 waits for plane 0 on the same die"
    );
    let a = multi.program(0, 0, false, Cause::Host);
    let b = multi.program(1, 0, false, Cause::Host);
    assert_eq!(b, a + 10_240, "only the shared channel serialises");
}

fn scheduled(scheduler: Scheduler) -> FlashTiming {
    let mut cfg = Config::preset("default").unwrap();
    cfg.timing.enabled = true;
    cfg.timing.read_us = 50.0;
    cfg.timing.program_us = 500.0;
    cfg.timing.erase_us = 3000.0;
    cfg.timing.channel_mb_s = 400.0; // 4096 B -> 10.24 µs
    cfg.timing.ecc_us = 0.0;
    cfg.timing.suspend_us = 20.0;
    cfg.timing.scheduler = scheduler;
    let geo = Geometry::new(&cfg).unwrap();
    FlashTiming::new(&cfg, &geo)
}

/// One GC copy: tR, two transfers, tPROG.
const COPY: u64 = 50_000 + 2 * 10_240 + 500_000;
const READ: u64 = 50_000 + 10_240;

#[test]
fn fifo_reads_wait_for_every_gc_operation_reserved_before_them() {
    let mut t = scheduled(Scheduler::Fifo);
    for _ in 0..10 {
        t.copy(0, 0, CopyKind::default(), Cause::Gc);
    }
    t.erase(0, 7, 0, Cause::Gc);
    t.advance(1_000);
    let done = t.read(0, 1_000, Cause::Host);
    assert_eq!(done, 10 * COPY + 3_000_000 + READ);
    let b = t.summary(done).gc_blocked;
    assert_eq!(b.reads, 1);
    assert_eq!(b.max_us, (10 * COPY + 3_000_000 - 1_000) as f64 / 1e3);
}

#[test]
fn rps_reads_wait_only_for_the_gc_operation_in_progress() {
    let mut t = scheduled(Scheduler::Rps);
    for _ in 0..10 {
        t.copy(0, 0, CopyKind::default(), Cause::Gc);
    }
    t.erase(0, 7, 0, Cause::Gc);
    // GC runs in the idle time before the read: the first copy has started.
    t.advance(1_000);
    let done = t.read(0, 1_000, Cause::Host);
    assert_eq!(
        done,
        COPY + READ,
        "the read goes right after the copy in progress"
    );
    // The rest of the GC waits in the queue and runs after the read.
    let end = 10 * COPY + 3_000_000 + READ;
    t.advance(end - 1);
    assert_eq!(t.busy_until(), end);
    // Writes do not overtake started GC: a program waits for the die.
    let w = t.program(0, done, false, Cause::Host);
    assert!(w >= done);
}

#[test]
fn suspend_lets_a_read_interrupt_a_gc_program_or_erase() {
    let mut t = scheduled(Scheduler::Suspend);
    t.erase(0, 7, 0, Cause::Gc);
    t.advance(100_000);
    // 100 µs into the erase: suspend (20 µs), read, resume (20 µs).
    let done = t.read(0, 100_000, Cause::Host);
    assert_eq!(done, 100_000 + 20_000 + READ);
    assert_eq!(t.busy_until(), 3_000_000 + 20_000 + READ + 20_000);
    let b = t.summary(done).gc_blocked;
    assert_eq!((b.reads, b.max_us), (1, 20.0));
    // In a copy's read phase there is nothing to suspend: the read waits for it.
    let mut t = scheduled(Scheduler::Suspend);
    t.copy(0, 0, CopyKind::default(), Cause::Gc);
    t.advance(10_000);
    assert_eq!(t.read(0, 10_000, Cause::Host), COPY + READ);
}

#[test]
fn suspensions_per_operation_are_bounded() {
    let mut t = scheduled(Scheduler::Suspend);
    t.erase(0, 7, 0, Cause::Gc);
    let mut at = 100_000;
    let mut suspended = 0;
    for _ in 0..8 {
        t.advance(at);
        let done = t.read(0, at, Cause::Host);
        if done == at + 20_000 + READ {
            suspended += 1;
        }
        at = done + 50_000;
    }
    assert_eq!(suspended, 4, "timing.max_suspensions (4 by default)");
}

#[test]
fn a_block_whose_erase_is_queued_cannot_be_written_before_it() {
    let mut t = scheduled(Scheduler::Rps);
    for _ in 0..3 {
        t.copy(0, 0, CopyKind::default(), Cause::Gc);
    }
    t.erase(0, 7, 0, Cause::Gc);
    t.copy(0, 0, CopyKind::default(), Cause::Gc);
    // Nothing ran yet (no time passed); opening block 7 runs the queue up to its erase.
    t.need_erased(0, 7);
    assert_eq!(t.busy_until(), 3 * COPY + 3_000_000);
    let w = t.program(0, 0, false, Cause::Host);
    assert!(w > 3 * COPY + 3_000_000);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// With `rps` or `suspend`, a host read on a die that has only GC work waits for
    /// at most one GC operation (the one in progress, or the rest of it once its
    /// suspensions are spent), however much GC is queued or planned.
    #[test]
    fn a_read_waits_for_at_most_one_gc_operation(
        gc in proptest::collection::vec((0u64..20_000_000, proptest::bool::ANY), 1..60),
        reads in proptest::collection::vec(0u64..40_000_000, 1..40),
        suspend in proptest::bool::ANY,
    ) {
        let mut t = scheduled(if suspend { Scheduler::Suspend } else { Scheduler::Rps });
        let mut gc = gc;
        gc.sort();
        let mut reads = reads;
        reads.sort();
        let mut next_gc = gc.iter().peekable();
        let mut work = 0u64;
        let mut last_read = 0;
        for (i, &at) in reads.iter().enumerate() {
            // GC decided before this read (in issue order) is queued first.
            while let Some(&&(issue, erase)) = next_gc.peek() {
                if issue > at {
                    break;
                }
                if erase {
                    t.erase(0, 1_000 + i as u32, issue, Cause::Gc);
                    work += 3_000_000;
                } else {
                    t.copy(0, issue, CopyKind::default(), Cause::Gc);
                    work += COPY;
                }
                next_gc.next();
            }
            let at = at.max(last_read);
            t.advance(at);
            let done = t.read(0, at, Cause::Host);
            let bound = 3_000_000 + 2 * 20_000 + READ;
            proptest::prop_assert!(done >= at + READ);
            proptest::prop_assert!(done - at <= bound, "read at {} done at {}", at, done);
            last_read = done;
        }
        // Every queued GC operation still runs, after the reads.
        t.advance(u64::MAX / 2);
        proptest::prop_assert!(t.unit_busy[0] >= work, "busy {} work {}", t.unit_busy[0], work);
    }
}

#[test]
fn fast_programs_are_faster() {
    let mut t = timing(true);
    let normal = t.program(0, 0, false, Cause::Host);
    let fast = t.program(2, 0, true, Cause::Host);
    assert!(fast < normal);
}

/// A run of copies is placed as the same copies one by one would be, under every
/// scheduler, with other dies' transfers on the channel in the way.
#[test]
fn a_run_of_copies_is_the_copies_one_by_one() {
    for scheduler in [Scheduler::Fifo, Scheduler::Rps, Scheduler::Suspend] {
        for kind in [
            CopyKind::default(),
            CopyKind {
                from_buffer: true,
                fast: false,
            },
            CopyKind {
                from_buffer: false,
                fast: true,
            },
        ] {
            let mut one = scheduled(scheduler);
            let mut run = scheduled(scheduler);
            for t in [&mut one, &mut run] {
                // Another die of the channel is busy with host work meanwhile.
                for i in 0..40 {
                    t.read(2, i * 37_000, Cause::Host);
                    t.program(2, i * 61_000, false, Cause::Host);
                }
            }
            for _ in 0..25 {
                one.copy(0, 5_000, kind, Cause::Gc);
            }
            run.copies(0, 5_000, kind, Cause::Gc, 25);
            for t in [&mut one, &mut run] {
                t.erase(0, 3, 5_000, Cause::Gc);
                t.advance(u64::MAX / 2);
            }
            assert_eq!(one.unit_free, run.unit_free, "{scheduler:?} {kind:?}");
            assert_eq!(one.unit_busy, run.unit_busy);
            assert_eq!(one.gc_until, run.gc_until);
            assert_eq!(one.gc_busy, run.gc_busy);
            let transfers = |t: &FlashTiming| -> Vec<Vec<(u64, u64)>> {
                t.channels[0].dies.iter().map(|d| d.to_vec()).collect()
            };
            assert_eq!(transfers(&one), transfers(&run));
        }
    }
}
