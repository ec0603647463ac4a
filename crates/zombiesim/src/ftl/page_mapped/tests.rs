use super::*;
use crate::ftl::FtlExt;

fn ftl() -> PageMappedFtl {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.blocks_per_plane".into(), "16".into()),
        ("flash.pages_per_block".into(), "8".into()),
        ("ftl.over_provisioning".into(), "0.5".into()),
    ])
    .unwrap();
    let mut f = PageMappedFtl::new(&cfg, 1, true).unwrap();
    for round in 0..6 {
        for lpn in 0..f.logical_pages() {
            if (lpn + round) % 3 != 0 {
                f.write(lpn).unwrap();
            }
        }
    }
    f.verify().unwrap();
    f
}

#[test]
fn the_oracle_catches_a_stale_mapping() {
    let mut f = ftl();
    // Point page 0 at the physical page page 1 holds, and page 1 at page 0's.
    let (a, b) = (f.l2p[0], f.l2p[1]);
    f.l2p.swap(0, 1);
    f.base.flash.owner.swap(a as usize, b as usize);
    let err = f.verify().unwrap_err().to_string();
    assert!(err.contains("newest version"), "{err}");
    assert!(f.read(0).is_err());
}

#[test]
fn the_invariants_catch_a_wrong_valid_count() {
    let mut f = ftl();
    let b = f.base.flash.block_of(f.l2p[0]) as usize;
    f.base.flash.valid_count[b] += 1;
    let err = f.verify().unwrap_err().to_string();
    assert!(err.contains("valid count"), "{err}");
}

#[test]
fn the_invariants_catch_a_lost_free_block() {
    let mut f = ftl();
    // Taken from the free list without being opened: its status still says free.
    f.blocks.take_free(0).unwrap();
    assert!(f.verify().unwrap_err().to_string().contains("free blocks"));
}
