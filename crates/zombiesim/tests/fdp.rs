//! NVMe Flexible Data Placement (`fdp.*`): writes go to the reclaim-unit handle their
//! placement identifier names; reclaim units (a superblock across the planes by
//! default) are filled, collected and erased whole; initially isolated handles share
//! a GC destination, persistently isolated ones keep their data apart. Every run is
//! checked by the integrity oracle and the invariants (RU sums against their blocks).

use std::collections::{BTreeMap, BTreeSet};
use zombiesim::ftl::{Ftl, FtlExt, NoBuffer, PageMappedFtl, PageWrite, WriteHint};
use zombiesim::{Config, Error};

/// Two dies of two planes (4 planes), 64 blocks of 16 pages each, OP 30%, FDP on.
fn device(settings: &[(&str, &str)]) -> zombiesim::Result<Config> {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.channels".into(), "1".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.dies_per_chip".into(), "2".into()),
        ("flash.planes_per_die".into(), "2".into()),
        ("flash.blocks_per_plane".into(), "64".into()),
        ("flash.pages_per_block".into(), "16".into()),
        ("ftl.over_provisioning".into(), "0.3".into()),
        ("fdp.enabled".into(), "true".into()),
        ("fdp.handles".into(), "2".into()),
        ("gc.low_watermark".into(), "2".into()),
        ("gc.high_watermark".into(), "2".into()),
    ];
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs)?;
    Ok(cfg)
}

fn write(ftl: &mut PageMappedFtl, lpn: u64, pid: Option<u16>) {
    let write = PageWrite {
        hint: WriteHint {
            stream: pid,
            lifetime: None,
        },
        ..PageWrite::host(lpn)
    };
    ftl.write_page(write, &mut NoBuffer).unwrap();
}

/// The block holding `lpn`'s copy.
fn block_of(ftl: &PageMappedFtl, lpn: u64) -> u32 {
    ftl.flash().block_of(ftl.lookup(lpn).expect("mapped"))
}

/// The handle a page of this test belongs to: the lower half of the logical space is
/// handle 0's, the upper half handle 1's.
fn handle_of(ftl: &PageMappedFtl, lpn: u64) -> u16 {
    u16::from(lpn >= ftl.logical_pages() / 2)
}

/// Fill, then skewed overwrites: handle 0's half hot (90% of the writes), handle 1's
/// cold; each write names its handle.
fn run(cfg: &Config) -> PageMappedFtl {
    let mut ftl = PageMappedFtl::new(cfg, 1, true).unwrap();
    let n = ftl.logical_pages();
    for lpn in 0..n {
        let h = handle_of(&ftl, lpn);
        write(&mut ftl, lpn, Some(h));
    }
    let mut x = 7u64;
    for _ in 0..(6 * n) {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = x >> 33;
        let lpn = if r % 10 < 9 {
            r % (n / 2)
        } else {
            n / 2 + r % (n / 2)
        };
        let h = handle_of(&ftl, lpn);
        write(&mut ftl, lpn, Some(h));
    }
    ftl.verify().unwrap();
    assert!(ftl.counters().gc_pages_copied > 0, "GC ran");
    ftl
}

/// For each block holding valid data, the handles whose pages it holds.
fn handles_per_block(ftl: &PageMappedFtl) -> BTreeMap<u32, BTreeSet<u16>> {
    let mut out: BTreeMap<u32, BTreeSet<u16>> = BTreeMap::new();
    for lpn in 0..ftl.logical_pages() {
        out.entry(block_of(ftl, lpn))
            .or_default()
            .insert(handle_of(ftl, lpn));
    }
    out
}

#[test]
fn the_specs_example_two_handles_fill_two_reclaim_units_of_their_own() {
    // Two handles, one RU each: interleaved writes land in separate RUs, a superblock
    // of one block on each of the 4 planes (block offset k on every plane).
    let cfg = device(&[]).unwrap();
    let mut ftl = PageMappedFtl::new(&cfg, 1, true).unwrap();
    let ru_pages = 4 * 16;
    for i in 0..ru_pages as u64 {
        write(&mut ftl, i, Some(0));
        write(&mut ftl, 1000 + i, Some(1));
    }
    ftl.verify().unwrap();
    let bpp = 64;
    let ru = |lpn: u64| block_of(&ftl, lpn) % bpp;
    let planes = |range: std::ops::Range<u64>| -> BTreeSet<u32> {
        range.map(|l| block_of(&ftl, l) / bpp).collect()
    };
    let r0: BTreeSet<u32> = (0..ru_pages as u64).map(ru).collect();
    let r1: BTreeSet<u32> = (1000..1000 + ru_pages as u64).map(ru).collect();
    assert_eq!(r0.len(), 1, "handle 0 filled one RU: {r0:?}");
    assert_eq!(r1.len(), 1, "handle 1 filled one RU: {r1:?}");
    assert_ne!(r0, r1);
    // Each RU spans every plane, filled evenly.
    assert_eq!(planes(0..ru_pages as u64).len(), 4);
    assert_eq!(planes(1000..1000 + ru_pages as u64).len(), 4);
    let counts = ftl.summary().fdp.expect("fdp on");
    assert_eq!(counts.streams[0].host_pages, ru_pages as u64);
    assert_eq!(counts.streams[1].host_pages, ru_pages as u64);
}

#[test]
fn persistently_isolated_handles_never_share_a_block_even_after_gc() {
    let ftl = run(&device(&[
        ("fdp.isolation", "persistent"),
        ("gc.low_watermark", "3"),
        ("gc.high_watermark", "3"),
    ])
    .unwrap());
    for (block, handles) in handles_per_block(&ftl) {
        assert_eq!(handles.len(), 1, "block {block} holds handles {handles:?}");
    }
    // GC moved both handles' data, each into its own GC stream (2 + handle).
    let counts = ftl.summary().fdp.unwrap();
    assert!(counts.streams[0].relocated_pages > 0);
    assert!(counts.streams[2].gc_pages > 0 || counts.streams[3].gc_pages > 0);
}

#[test]
fn initially_isolated_handles_mix_only_in_the_gc_pool() {
    let ftl = run(&device(&[]).unwrap());
    let flash = ftl.flash();
    let mut pool_mixes = false;
    for (block, handles) in handles_per_block(&ftl) {
        let stream = flash.stream[block as usize];
        if stream < 2 {
            // A host RU of handle `stream` holds only that handle's pages.
            assert_eq!(handles, BTreeSet::from([stream as u16]), "block {block}");
        } else {
            assert_eq!(stream, 2, "one GC pool");
            pool_mixes |= handles.len() > 1;
        }
    }
    assert!(pool_mixes, "the GC pool holds both handles' copies");
}

#[test]
fn isolation_lowers_waf_on_a_hot_and_cold_split_and_streams_work_with_blocks_as_the_unit() {
    // 256 blocks a plane: the open RUs of the extra streams hold back little of the
    // over-provisioning (on the 64-block device they cost more than separation gains).
    let waf = |settings: &[(&str, &str)]| {
        let mut all = vec![("flash.blocks_per_plane", "256")];
        all.extend_from_slice(settings);
        run(&device(&all).unwrap()).counters().waf()
    };
    let one = waf(&[("fdp.handles", "1")]);
    let ii = waf(&[]);
    let pi = waf(&[
        ("fdp.isolation", "persistent"),
        ("gc.low_watermark", "3"),
        ("gc.high_watermark", "3"),
    ]);
    // Multi-stream: one erase block per RU, copies kept in the stream; each of the 2
    // GC streams may need a fresh block on each of the 4 planes during a burst of GC.
    let streams = waf(&[
        ("fdp.ru_planes", "1"),
        ("fdp.isolation", "persistent"),
        ("gc.low_watermark", "9"),
        ("gc.high_watermark", "9"),
    ]);
    eprintln!("one handle {one:.3}, initial {ii:.3}, persistent {pi:.3}, streams {streams:.3}");
    assert!(ii < one, "separating hot from cold: {ii} vs {one}");
    assert!(pi < one, "separating hot from cold: {pi} vs {one}");
    assert!(streams < one, "streams: {streams} vs {one}");
}

#[test]
fn an_unknown_placement_identifier_goes_to_the_default_handle_and_is_counted() {
    let cfg = device(&[]).unwrap();
    let mut ftl = PageMappedFtl::new(&cfg, 1, true).unwrap();
    write(&mut ftl, 5, Some(9));
    write(&mut ftl, 6, None);
    ftl.verify().unwrap();
    let counts = ftl.summary().fdp.unwrap();
    assert_eq!(counts.invalid_placement_ids, 1);
    assert_eq!(counts.streams[0].host_pages, 2);
}

#[test]
fn every_handle_count_and_every_isolation_keeps_the_oracle_happy_with_two_groups() {
    for handles in 1..=8u16 {
        for isolation in ["initial", "persistent", "initial-last-handle"] {
            let h = handles.to_string();
            // One GC destination, or one per handle, each may need a fresh RU.
            let low = if isolation == "persistent" {
                handles + 1
            } else {
                2
            }
            .to_string();
            let cfg = device(&[
                ("fdp.handles", h.as_str()),
                ("fdp.isolation", isolation),
                ("fdp.reclaim_groups", "2"),
                ("ftl.over_provisioning", "1.0"),
                ("gc.low_watermark", low.as_str()),
                ("gc.high_watermark", low.as_str()),
            ])
            .unwrap();
            let mut ftl = PageMappedFtl::new(&cfg, 3, true).unwrap();
            let n = ftl.logical_pages();
            let mut x = handles as u64;
            for _ in 0..(4 * n) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let lpn = (x >> 33) % n;
                let pid = ((x >> 20) % (2 * handles as u64)) as u16;
                write(&mut ftl, lpn, Some(pid));
                if (x >> 40).is_multiple_of(7) {
                    ftl.trim((x >> 13) % n).unwrap();
                }
            }
            ftl.verify()
                .unwrap_or_else(|e| panic!("{handles} handles, {isolation}: {e}"));
            assert_eq!(ftl.summary().fdp.unwrap().invalid_placement_ids, 0);
        }
    }
}

fn refused(settings: &[(&str, &str)]) -> String {
    let err = device(settings)
        .and_then(|cfg| cfg.validate().map(|_| cfg))
        .and_then(|cfg| zombiesim::ftl::build(&cfg, 1, false).map(|_| ()));
    match err {
        Err(Error::Config { key, .. }) => key,
        other => panic!("{settings:?}: not refused by key: {:?}", other.err()),
    }
}

#[test]
fn combinations_fdp_cannot_run_with_are_refused_naming_the_key() {
    assert_eq!(refused(&[("ftl.kind", "fast")]), "fdp.enabled");
    assert_eq!(refused(&[("ftl.kind", "block")]), "fdp.enabled");
    assert_eq!(refused(&[("gc.scope", "die")]), "gc.scope");
    assert_eq!(refused(&[("ftl.regions", "2")]), "ftl.regions");
    assert_eq!(refused(&[("ftl.placement", "gc-age:2")]), "ftl.placement");
    assert_eq!(refused(&[("content.pool", "lru")]), "fdp.enabled");
    assert_eq!(
        refused(&[("fdp.reclaim_groups", "3")]),
        "fdp.reclaim_groups"
    );
    assert_eq!(refused(&[("fdp.ru_planes", "3")]), "fdp.ru_planes");
    assert_eq!(refused(&[("fdp.handles", "0")]), "fdp.handles");
    assert_eq!(refused(&[("fdp.ru_planes", "1")]), "gc.low_watermark");
    assert_eq!(
        refused(&[
            ("fdp.enabled", "false"),
            ("fdp.handles", "8"),
            ("fdp.isolation", "persistent")
        ]),
        "fdp.isolation"
    );
}

#[test]
fn a_handle_whose_unit_was_recycled_for_another_stream_opens_a_fresh_one() {
    // Regression: handle 2 filled an RU and then wrote nothing for a while; GC reclaimed
    // that RU and the GC pool took it. Handle 2's pointer to it was stale, so its next
    // write saw room that was not its own and found no plane to write to.
    let mut cfg = Config::preset("fdp").unwrap();
    cfg.set_many(
        &[
            ("flash.blocks_per_plane", "256"),
            ("flash.pages_per_block", "64"),
            ("ftl.over_provisioning", "0.05"),
            ("fdp.handles", "3"),
            ("gc.low_watermark", "4"),
            ("gc.high_watermark", "4"),
            ("precondition.random_drive_writes", "0"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    )
    .unwrap();
    let wl = zombiesim::WorkloadSpec::parse("streams:drive_writes=5").unwrap();
    let opts = zombiesim::RunOptions {
        seed: 1,
        verify: true,
        ..Default::default()
    };
    let rep = zombiesim::simulate(&cfg, &wl, &opts, &mut |_| true).unwrap();
    assert!(rep.fdp.unwrap().handles[2].host_pages > 0);
}

// ------------------------------------------------------- trace replay (native v3)

/// A native version-3 trace: `(lpn, pages, placement id)` writes of 4 KiB pages, one
/// every microsecond.
fn placed_trace(name: &str, writes: &[(u64, u64, Option<u16>)]) -> std::path::PathBuf {
    use zombiesim::trace::{NativeHeader, TraceFormat, TraceOp, TraceRecord, TraceWriter};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fdp");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let mut w = TraceWriter::create(&path, TraceFormat::Native)
        .unwrap()
        .declare(NativeHeader::new(false, false).with_placement(true))
        .unwrap();
    for (i, &(lpn, pages, placement)) in writes.iter().enumerate() {
        w.write(&TraceRecord {
            time_ns: i as u64 * 1000,
            op: TraceOp::Write,
            offset: lpn * 4096,
            size: pages * 4096,
            device: 0,
            placement,
        })
        .unwrap();
    }
    w.close().unwrap();
    path
}

/// Replays `path` on `cfg`, without preconditioning's random writes.
fn replay(path: &std::path::Path, mut cfg: Config) -> zombiesim::Result<zombiesim::Report> {
    use zombiesim::trace::{ReadOptions, RemapMode, TraceFormat};
    cfg.set_many(&[("precondition.random_drive_writes".into(), "0".into())])?;
    let spec = zombiesim::workload::TraceSpec {
        path: path.to_path_buf(),
        format: TraceFormat::Native,
        options: ReadOptions::default(),
        remap: RemapMode::None,
        limit: None,
    };
    let opts = zombiesim::RunOptions {
        seed: 1,
        verify: true,
        reproducible: true,
        ..Default::default()
    };
    zombiesim::simulate_trace(&cfg, &spec, &opts, &mut |_| true)
}

#[test]
fn a_traces_placement_identifiers_place_its_writes_on_their_handles() {
    // Handle 0: 120 one-page writes; handle 1: 40 two-page writes, interleaved.
    let mut writes = Vec::new();
    for i in 0..120u64 {
        writes.push((i, 1, Some(0)));
        if i % 3 == 0 {
            writes.push((1000 + 2 * (i / 3), 2, Some(1)));
        }
    }
    let path = placed_trace("two-ids.zst", &writes);
    let report = replay(&path, device(&[]).unwrap()).unwrap();
    let fdp = report.fdp.as_ref().expect("fdp on");
    let host: Vec<u64> = fdp.handles.iter().map(|h| h.host_pages).collect();
    assert_eq!(host, vec![120, 80]);
    assert_eq!(fdp.events.invalid_placement_identifier, 0);
    let placement = report.trace.as_ref().unwrap().placement.clone().unwrap();
    assert_eq!((placement.writes, placement.ids), (160, vec![0, 1]));

    // Without FDP the identifiers are carried, counted and unused.
    let mut cfg = device(&[]).unwrap();
    cfg.fdp = Default::default();
    let plain = replay(&path, cfg).unwrap();
    assert!(plain.fdp.is_none());
    assert_eq!(
        plain.trace.as_ref().unwrap().placement,
        report.trace.unwrap().placement
    );
    // A host cache above the device would drop them unless it keeps the writer's:
    // refused naming host.placement; with host.placement = writer they pass through.
    let cached = |placement: &str| {
        device(&[
            ("timing.enabled", "true"),
            ("ftl.allocation", "stripe"),
            ("host.cache", "1MiB"),
            ("host.placement", placement),
        ])
        .unwrap()
    };
    let err = replay(&path, cached("none")).unwrap_err();
    assert!(
        matches!(&err, Error::Config { key, .. } if key == "host.placement"),
        "{err}"
    );
    let through = replay(&path, cached("writer")).unwrap();
    let fdp = through.fdp.as_ref().expect("fdp on");
    assert_eq!(fdp.events.invalid_placement_identifier, 0);
    let written: u64 = fdp.handles.iter().map(|h| h.host_pages).sum();
    assert_eq!(written, through.host.write_pages);
}

#[test]
fn a_placement_identifier_the_device_does_not_have_is_an_input_error_naming_the_record() {
    let path = placed_trace(
        "out-of-range.bin",
        &[(0, 1, Some(1)), (1, 1, None), (2, 1, Some(2))],
    );
    let err = replay(&path, device(&[]).unwrap()).unwrap_err();
    match &err {
        Error::Input { file, line, reason } => {
            assert_eq!((file.as_str(), *line), (path.to_str().unwrap(), 3), "{err}");
            assert!(
                reason.contains("placement identifier 2 names no reclaim-unit handle")
                    && reason.contains("= 2 (identifiers 0 to 1)"),
                "{err}"
            );
        }
        other => panic!("{other}"),
    }
    assert_eq!(err.exit_code(), 2);
    // Two reclaim groups have four (no fill: unhinted writes would all go to group 0).
    let four = device(&[("fdp.reclaim_groups", "2"), ("precondition.fill", "false")]).unwrap();
    let report = replay(&path, four).unwrap();
    let host: Vec<u64> = report
        .fdp
        .unwrap()
        .handles
        .iter()
        .map(|h| h.host_pages)
        .collect();
    assert_eq!(host, vec![1, 1, 1, 0]);
}

/// GC copies a victim's plain pages (no known zombie, nothing dirty in a buffer) in
/// stretches striped over its reclaim group's planes; the integrity oracle turns that
/// off (it follows every copy), so the same run with and without it must leave the
/// same report: every count, time, WAF and per-handle figure of the page-by-page copy.
#[test]
fn gc_copies_striped_over_the_planes_give_what_page_by_page_copies_give() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("fdp.isolation", "initial")],
            "kvcache:soc=0.2,drive_writes=3",
        ),
        (
            &[
                ("fdp.isolation", "persistent"),
                ("fdp.handles", "3"),
                ("gc.low_watermark", "4"),
                ("gc.high_watermark", "4"),
            ],
            "streams:drive_writes=3",
        ),
        (
            &[
                ("fdp.isolation", "initial-last-handle"),
                ("fdp.handles", "3"),
            ],
            "streams:drive_writes=3",
        ),
        (
            &[
                ("fdp.reclaim_groups", "2"),
                ("ftl.over_provisioning", "0.5"),
            ],
            "uniform:drive_writes=3,read=0.2",
        ),
        (
            &[
                ("fdp.ru_planes", "2"),
                ("gc.low_watermark", "4"),
                ("gc.high_watermark", "4"),
            ],
            "kvcache:soc=0.1,drive_writes=3",
        ),
        (
            &[
                ("timing.enabled", "true"),
                ("ftl.allocation", "stripe"),
                ("gc.policy", "z-greedy"),
            ],
            "kvcache:soc=0.2,drive_writes=2,read=0.3,iops=5000",
        ),
    ];
    for (settings, wl) in cases {
        let cfg = device(settings).unwrap();
        let spec = zombiesim::WorkloadSpec::parse(wl).unwrap();
        let report = |verify: bool| {
            let opts = zombiesim::RunOptions {
                seed: 5,
                verify,
                reproducible: true,
                ..Default::default()
            };
            let rep = zombiesim::simulate(&cfg, &spec, &opts, &mut |_| true).unwrap();
            let mut json = serde_json::to_value(&rep).unwrap();
            let run = json.as_object_mut().unwrap();
            run.remove("run");
            run.remove("memory");
            json
        };
        let (striped, page_by_page) = (report(false), report(true));
        assert!(
            striped["gc"]["pages_copied"].as_u64().unwrap() > 1000,
            "{wl}: GC ran"
        );
        assert_eq!(striped, page_by_page, "{settings:?} {wl}");
    }
}
