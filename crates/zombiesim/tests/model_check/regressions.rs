//! Regressions the model check found, and a known host-buffer fault it tolerates.

use super::combos::named;
use super::ftls::CONTENT;
use super::run::{run, Outcome};
use super::steps::{shuffle, Step};
use zombiesim::device::{Command, Device, Payload};
use zombiesim::ftl::FtlExt;
use zombiesim::workload::Op;

/// Regression (found by `fast`): BPLRU evicted a logical block and inserted the new
/// page before writing the victim out, padded; with a one-page buffer the new page
/// (8) belongs to the victim's logical block, so the padding rewrote its flash copy,
/// and a FAST merge under BA-BM during that padding took the new page's dirty copy
/// from the buffer first: the pad then landed the stale copy on top, the buffer held
/// the page clean, and its newest write was lost at the next eviction, without any
/// power loss. The victim is now written before the new page enters.
#[test]
fn bplru_padding_never_overwrites_a_page_a_merge_took_from_the_buffer() {
    let steps = [
        Step::Write(10, 1, false),
        Step::Write(8, 1, false),
        Step::Write(10, 1, false),
        Step::Write(9, 2, false),
        Step::Write(9, 1, true),
        Step::Write(8, 1, false),
        Step::Write(9, 1, false),
    ];
    for name in ["fast bplru/v ba-bm", "fast bplru/nv ba-bm"] {
        run(&named(name), &steps, false, 1).unwrap();
    }
}

/// Regression (found by `every_combination_collects_and_loses_what_it_should` on
/// `page none dedup`): a trim under content-aware flash (`trim_content`) left the
/// trimmed page's zombie mark, and its old block's zombie count, in place, so the
/// device kept counting a zombie that maps nowhere and `Device::verify` failed ("block
/// 0: zombie count 1 but 0 of its valid pages are zombies"). The trim now drops the
/// mark, as the trim without content (`trim_mapped`) always did.
#[test]
fn a_trim_under_content_aware_flash_forgets_the_zombie_mark() {
    let steps = [
        Step::Write(0, 1, false),
        Step::Zombie(0, true),
        Step::Trim(0),
    ];
    for variant in CONTENT {
        run(&named(&format!("page none {variant}")), &steps, false, 1).unwrap();
    }
}

/// Regression (found by `every_combination_collects_and_loses_what_it_should` on
/// `page lru/v dedup`): GC moved a deduplicated page's zombie count only for the
/// logical page that owns it; another logical page sharing it and known as a zombie
/// was remapped to the copy (`content_moved`) while its count stayed with the victim,
/// so the destination block counted one zombie too few ("block 8: zombie count 0 but
/// 1 of its valid pages are zombies") and the victim was erased with a count left.
/// Every zombie sharer's count now moves with the page.
#[test]
fn gc_moves_the_zombie_count_of_every_logical_page_sharing_a_deduplicated_page() {
    let cfg = named("page none dedup").config(1).unwrap();
    let mut dev = Device::new(&cfg, 7, true).unwrap();
    let write = |dev: &mut Device, l: u64, v: u64| {
        let cmd = Command {
            payload: Payload::Same(v),
            ..Command::new(Op::Write, l, 1)
        };
        dev.submit(0, &cmd).unwrap();
    };
    // Pages 0 and 1 share one flash page; 1, not its owner, is known as a zombie.
    write(&mut dev, 0, 7);
    write(&mut dev, 1, 7);
    dev.hint_zombie(1, true).unwrap();
    // Unique overwrites of other pages at random (so victims are not empty) until GC
    // has relocated the shared page.
    let shared = dev.ftl().mapped(1).unwrap();
    for k in 0..10_000 {
        if dev.ftl().mapped(1) != Some(shared) {
            break;
        }
        write(&mut dev, 2 + shuffle(k) % 160, 1000 + k);
        dev.verify().unwrap();
    }
    assert_ne!(
        dev.ftl().mapped(1),
        Some(shared),
        "GC never moved the shared page"
    );
    assert_eq!(dev.ftl().mapped(0), dev.ftl().mapped(1));
    assert!(dev.ftl().is_host_shadow(1) && dev.known_zombies() == 1);
    dev.verify().unwrap();
}

/// Known fault of the host write buffer (`HostWriteBuffer::request`), left in place
/// and tolerated by the model check (`Model::unaware`): a write of several pages
/// inserts them one by one, making room as it goes, and writes the dirty pages it
/// evicted only at its end. When one of them is a page the same write then inserts
/// again (dirty again, so the device is told: `ideal` marks it at once), the end of
/// the write sends that page's older copy to the device, whose write clears the mark
/// it just set: the device no longer knows a page the host holds dirty, and flash (or
/// the device buffer) is programmed with a copy already superseded.
///
/// `page none hb`, one-page host buffer: write 1 (value 1); write 0..=1 (values 2, 3):
/// page 0 evicts 1 (value 1), page 1 evicts 0 (value 2) and is marked, then 0 and 1
/// are written back with values 2 and 1. Expected: page 1 known as a zombie (the host
/// holds value 3 dirty), and value 1 never written again; seen: page 1 not known, and
/// the device holds value 1 for it.
#[test]
#[ignore = "known fault of the host write buffer: a write-back of a page the same write dirtied again"]
fn a_host_write_that_evicts_its_own_page_keeps_the_device_aware_of_it() {
    let steps = [Step::Write(1, 1, false), Step::Write(0, 2, false)];
    let Outcome { dev, .. } = run(&named("page none hb"), &steps, false, 1).unwrap();
    assert_eq!(
        dev.content_of(1),
        None,
        "the superseded copy reached the device"
    );
    assert!(dev.ftl().is_host_shadow(1), "the device forgot page 1");
}
