//! Remapping the MSR sample onto a smaller device: none, compact and modulo.

use super::support::{defaults, read_all};
use crate::common::sample;
use zombiesim::trace::{RemapMode, Remapper, TraceFormat, TraceStats};

#[test]
fn remap_modes_on_the_msr_sample() {
    let path = sample("msr-src1_0-excerpt.csv");
    let recs = read_all(&path, TraceFormat::Msr, &defaults());
    let page = 4096;
    let stats = TraceStats::compute(recs.iter().copied().map(Ok), page).unwrap();
    let gib = 1u64 << 30;

    // The volume is addressed well past 1 GiB: `none` refuses the first such request.
    let mut none = Remapper::new(RemapMode::None, gib, page).unwrap();
    let err = recs
        .iter()
        .enumerate()
        .find_map(|(i, r)| none.map(i as u64 + 1, r).err())
        .unwrap();
    assert!(
        err.to_string().contains("record 1 (write of 36864 bytes"),
        "{err}"
    );
    assert!(err
        .to_string()
        .contains("use remap=modulo or remap=compact"));

    // `compact` makes the footprint dense from page 0.
    let mut compact = Remapper::new(RemapMode::Compact, gib, page).unwrap();
    let mut max_page = 0;
    for (i, r) in recs.iter().enumerate() {
        for run in compact.map(i as u64 + 1, r).unwrap() {
            max_page = max_page.max(run.page + run.count - 1);
        }
    }
    let s = compact.stats();
    assert_eq!(s.distinct_pages, stats.unique_pages);
    assert_eq!(max_page + 1, stats.unique_pages);
    assert_eq!(s.requests, 10_001);
    assert!(s.remapped_pages > 0 && s.remapped_pages <= s.pages);

    // ... and refuses a device smaller than the footprint.
    let small = (stats.unique_pages - 1) * page;
    let mut tight = Remapper::new(RemapMode::Compact, small, page).unwrap();
    let err = recs
        .iter()
        .enumerate()
        .find_map(|(i, r)| tight.map(i as u64 + 1, r).err())
        .unwrap();
    assert!(
        err.to_string().contains("were taken (compact remap)"),
        "{err}"
    );

    // `modulo` keeps every page inside the device and the page count unchanged.
    let mut modulo = Remapper::new(RemapMode::Modulo, gib, page).unwrap();
    let mut pages = 0;
    for (i, r) in recs.iter().enumerate() {
        for run in modulo.map(i as u64 + 1, r).unwrap() {
            assert!(run.page + run.count <= gib / page);
            pages += run.count;
        }
    }
    assert_eq!(pages, modulo.stats().pages);
    let beyond = recs.iter().filter(|r| r.offset + r.size > gib).count() as u64;
    assert_eq!(modulo.stats().remapped_requests, beyond);
}
