//! ShadowGC (003): the five page states walked through 003 Fig. 5, GC that takes
//! device-shadow pages from the buffer, fast-write relocation, refresh and restarts,
//! the skip policy caught by the integrity oracle, and the schemes ordered as the
//! paper finds them.

use zombiesim::device::{Command, Device, PageState, Payload};
use zombiesim::workload::Op;
use zombiesim::{simulate, Config, Report, RunOptions, WorkloadSpec};

use crate::common;
use common::{small_device, verified_run};

/// The common small device (4 planes × 32 blocks × 16 pages of 4 KiB) with GC
/// watermarks room for the dedicated stream (4 planes × 1 + 2).
fn small(settings: &[(&str, &str)]) -> Config {
    let mut pairs = vec![("gc.low_watermark", "6"), ("gc.high_watermark", "6")];
    pairs.extend_from_slice(settings);
    small_device(&pairs)
}

fn write(dev: &mut Device, lpn: u64, value: u64) {
    let cmd = Command {
        payload: Payload::Same(value),
        ..Command::new(Op::Write, lpn, 1)
    };
    dev.submit(0, &cmd).unwrap();
}

fn flush(dev: &mut Device) {
    dev.submit(0, &Command::new(Op::Flush, 0, 0)).unwrap();
}

#[test]
fn one_logical_page_walks_every_transition_of_fig_5() {
    // A device buffer of 4 pages; the host buffer exists only in the device's view
    // (its notifications and its writes).
    let cfg = small(&[
        ("device.buffer", "16KiB"),
        ("device.discard_twins", "true"),
        ("host.buffer", "64KiB"),
    ]);
    let mut dev = Device::new(&cfg, 1, true).unwrap();
    let l = 7;
    write(&mut dev, l, 1);
    flush(&mut dev);
    let first = dev.ftl().mapped(l).expect("L is on flash");
    assert_eq!(dev.page_state(l, first), PageState::Live);
    // The host dirties L and tells the device: host-shadow.
    dev.hint_zombie(l, true).unwrap();
    assert_eq!(dev.page_state(l, first), PageState::HostShadow);
    // The host evicts L: its write lands in the device buffer: device-shadow.
    write(&mut dev, l, 2);
    assert_eq!(dev.page_state(l, first), PageState::DeviceShadow);
    // An update arrives in the host buffer again: twin-shadow.
    dev.hint_zombie(l, true).unwrap();
    assert_eq!(dev.page_state(l, first), PageState::TwinShadow);
    // The device buffer evicts L (four other pages push it out): a twin-shadow page is
    // discarded, not written; the flash copy is host-shadow again.
    let programs = dev.counters().programs.total();
    for other in 100..104 {
        write(&mut dev, other, other);
    }
    let b = dev.buffer_report().unwrap().counters;
    assert_eq!(b.twin_discards, 1);
    assert_eq!(dev.ftl().mapped(l), Some(first), "nothing of L was written");
    assert_eq!(dev.page_state(l, first), PageState::HostShadow);
    assert_eq!(
        dev.counters().programs.total(),
        programs,
        "the evictions were clean or L's"
    );
    // Restart: every shadow returns to live.
    dev.power_loss().unwrap();
    assert_eq!(dev.page_state(l, first), PageState::Live);
    // The host writes L and it reaches flash: the first copy is dead, the new one live.
    write(&mut dev, l, 3);
    flush(&mut dev);
    let second = dev.ftl().mapped(l).unwrap();
    assert_ne!(second, first);
    assert_eq!(dev.page_state(l, first), PageState::Dead);
    assert_eq!(dev.page_state(l, second), PageState::Live);
    dev.verify().unwrap();
    assert_eq!(dev.content_of(l), Some(3));
}

#[test]
fn a_twin_shadow_page_written_back_from_the_buffer_stays_host_shadow_on_flash() {
    // Without discarding, the device buffer writes the twin-shadow page back; the
    // host still holds a newer copy, so the new flash copy is host-shadow.
    let cfg = small(&[("device.buffer", "16KiB"), ("host.buffer", "64KiB")]);
    let mut dev = Device::new(&cfg, 1, true).unwrap();
    let l = 7;
    write(&mut dev, l, 1);
    dev.hint_zombie(l, true).unwrap();
    assert_eq!(dev.known_zombies(), 1);
    for other in 100..104 {
        write(&mut dev, other, other);
    }
    let copy = dev.ftl().mapped(l).expect("written back");
    assert_eq!(dev.page_state(l, copy), PageState::HostShadow);
    assert_eq!(dev.known_zombies(), 1);
    dev.verify().unwrap();
}

#[test]
fn a_non_volatile_buffer_keeps_twin_shadow_pages_and_discarding_is_refused() {
    let mut cfg = small(&[("device.buffer", "16KiB"), ("host.buffer", "64KiB")]);
    let err = cfg
        .set_many(&[
            ("device.buffer_nonvolatile".into(), "true".into()),
            ("device.discard_twins".into(), "true".into()),
        ])
        .unwrap_err()
        .to_string();
    assert!(err.contains("device.discard_twins"), "{err}");
}

/// A device that relocates with ShadowGC's policies, and a workload that keeps its
/// buffers busy: a hot tenth of the pages gets nine writes in ten.
fn shadow_run(scheme: &str, settings: &[(&str, &str)], wl: &str) -> Report {
    // 4 planes × 128 blocks × 32 pages (64 MiB): a dedicated stream's open blocks are
    // a small share of the spare space, as on a real device.
    let mut cfg = small(&[
        ("flash.blocks_per_plane", "128"),
        ("flash.pages_per_block", "32"),
        ("device.buffer", "256KiB"),
        ("host.buffer", "256KiB"),
    ]);
    let mut pairs = zombiesim::config::scheme_settings(scheme).unwrap();
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs).unwrap();
    verified_run(&cfg, wl, 3)
}

const HOT: &str = "hotcold:r=0.9,f=0.1,drive_writes=6,read=0.2,iops=100000";

#[test]
fn sgc_beats_hgc_and_dgc_which_beat_ggc_in_write_amplification() {
    let waf = |s: &str| shadow_run(s, &[], HOT).waf.unwrap();
    let (ggc, hgc, dgc, sgc) = (waf("ggc"), waf("hgc"), waf("dgc"), waf("sgc"));
    assert!(
        sgc <= hgc.min(dgc) && hgc.min(dgc) <= ggc,
        "SGC {sgc} <= min(HGC {hgc}, DGC {dgc}) <= GGC {ggc}"
    );
    assert!(sgc < ggc * 0.99, "SGC gains at least 1%: {sgc} vs {ggc}");
}

#[test]
fn gc_latency_falls_with_buffer_reads_and_fast_writes() {
    let ggc = shadow_run("ggc", &[], HOT);
    let hgc = shadow_run("hgc", &[], HOT);
    let dgc = shadow_run("dgc", &[], HOT);
    let sgc = shadow_run("sgc", &[], HOT);
    // Per relocated page: fast programs shorten HGC's, buffer reads DGC's.
    let per_copy = |r: &Report| r.gc.latency_s / (r.gc.pages_copied + r.gc.victims) as f64;
    assert!(hgc.gc.fast_programs > 0 && per_copy(&hgc) < per_copy(&ggc));
    assert!(dgc.gc.buffer_reads > 0 && per_copy(&dgc) < per_copy(&ggc));
    assert!(
        sgc.gc.latency_s < ggc.gc.latency_s,
        "{} vs {}",
        sgc.gc.latency_s,
        ggc.gc.latency_s
    );
    // Every buffer read is a page the buffer gave up; no flash read for them.
    let b = dgc.buffer.as_ref().unwrap();
    assert_eq!(b.counters.gc_takes, dgc.gc.buffer_reads);
    assert_eq!(
        dgc.flash.reads_by_cause.get(zombiesim::stats::Cause::Gc),
        dgc.gc.pages_copied - dgc.gc.buffer_reads
    );
    // The states of relocated pages add up, and GGC's states are seen but unused.
    for r in [&ggc, &hgc, &dgc, &sgc] {
        let s = r.gc.copied_by_state;
        assert_eq!(
            s.live + s.host_shadow + s.device_shadow + s.twin_shadow,
            r.gc.pages_copied
        );
    }
    assert!(
        sgc.gc.copied_by_state.twin_shadow > 0,
        "{:?}",
        sgc.gc.copied_by_state
    );
    assert_eq!(ggc.gc.buffer_reads + ggc.gc.fast_programs, 0);
}

/// The same hot/cold writes on a device built with `scheme`; with `flush_each`, every
/// write is flushed at once, so no page is ever buffered while its flash copy lives.
fn device_counters(scheme: &str, flush_each: bool) -> zombiesim::stats::Counters {
    let mut cfg = small(&[("device.buffer", "64KiB"), ("host.buffer", "64KiB")]);
    cfg.set_many(&zombiesim::config::scheme_settings(scheme).unwrap())
        .unwrap();
    let mut dev = Device::new(&cfg, 1, true).unwrap();
    let logical = dev.logical_pages();
    let mut x = 7u64;
    for i in 0..logical * 4 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let hot = x >> 60 < 14;
        let lpn = (x >> 20) % if hot { logical / 10 } else { logical };
        write(&mut dev, lpn, i);
        if flush_each {
            flush(&mut dev);
        }
    }
    dev.verify().unwrap();
    dev.counters()
}

#[test]
fn sgc_equals_ggc_exactly_when_nothing_is_buffered_twice() {
    // Flushed at once, no page has a newer copy in a buffer while GC runs: every
    // relocated page is live, and ShadowGC does exactly what greedy GC does.
    let (ggc, sgc) = (device_counters("ggc", true), device_counters("sgc", true));
    assert!(ggc.gc_pages_copied > 0, "GC ran");
    assert_eq!(
        ggc.gc_copied_by_state[0], ggc.gc_pages_copied,
        "only live pages"
    );
    assert_eq!(ggc, sgc);
    // Left in the buffer, pages are device-shadow when GC meets them, and SGC differs.
    let (ggc, sgc) = (device_counters("ggc", false), device_counters("sgc", false));
    assert!(
        ggc.gc_copied_by_state[2] > 0,
        "{:?}",
        ggc.gc_copied_by_state
    );
    assert!(sgc.gc_buffer_reads > 0);
    assert!(sgc.programs.total() < ggc.programs.total());
}

#[test]
fn fast_blocks_are_refreshed_on_time_and_at_restart_under_their_own_cause() {
    // Fast blocks are due 2 s after they open (T − D = 3 − 1); 100k requests/s over a
    // run of a few seconds; one restart in the middle.
    let r = shadow_run(
        "sgc",
        &[
            ("ftl.fast_retention_s", "3"),
            ("ftl.power_off_s", "1"),
            ("device.restart_at", "[1.0]"),
            // The host buffer holds the whole hot set: host-shadow pages GC moves to
            // fast blocks stay valid until the restart drops the host's copies.
            ("host.buffer", "1MiB"),
        ],
        "hotcold:r=0.9,f=0.1,drive_writes=12,read=0.2,iops=10000",
    );
    let refresh = r.refresh.expect("a clock is kept");
    assert_eq!(refresh.restarts, 1);
    assert!(refresh.fast_blocks > 0, "{refresh:?}");
    use zombiesim::stats::Cause;
    assert_eq!(r.flash.programs_by_cause.get(Cause::Refresh), refresh.pages);
    assert_eq!(r.flash.reads_by_cause.get(Cause::Refresh), refresh.pages);
    assert!(refresh.program_share < 0.2, "{refresh:?}");
    // Without the restart, fast blocks whose pages stay valid are refreshed when due.
    let r = shadow_run(
        "sgc",
        &[
            ("ftl.fast_retention_s", "0.3"),
            ("ftl.power_off_s", "0.1"),
            ("host.buffer", "1MiB"),
        ],
        "hotcold:r=0.9,f=0.1,drive_writes=12,read=0.2,iops=10000",
    );
    let refresh = r.refresh.unwrap();
    assert_eq!(refresh.restarts, 0);
    assert!(refresh.fast_blocks > 0, "{refresh:?}");
}

#[test]
fn a_run_that_needs_a_clock_without_arrival_times_is_refused_naming_the_key() {
    let cfg = small(&[("gc.zombie_block", "true"), ("gc.fast_write", "true")]);
    let opts = RunOptions {
        seed: 1,
        ..Default::default()
    };
    let spec = WorkloadSpec::parse("uniform:drive_writes=1").unwrap();
    let err = simulate(&cfg, &spec, &opts, &mut |_| true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("gc.fast_write") && err.contains("iops"),
        "{err}"
    );
}

#[test]
fn the_skip_policy_needs_a_non_volatile_buffer_and_forced_on_a_volatile_one_loses_data() {
    let cfg = small(&[("device.buffer", "64KiB"), ("gc.skip_shadows", "true")]);
    let spec = WorkloadSpec::parse("hotcold:r=0.9,f=0.1,drive_writes=2").unwrap();
    let mut opts = RunOptions {
        seed: 1,
        verify: true,
        ..Default::default()
    };
    let err = simulate(&cfg, &spec, &opts, &mut |_| true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("gc.skip_shadows") && err.contains("buffer_nonvolatile"),
        "{err}"
    );
    opts.force_unsafe = true;
    let r = simulate(&cfg, &spec, &opts, &mut |_| true).unwrap();
    assert!(r.gc.skipped > 0, "GC skipped device-shadow pages");

    // Device by device: the same writes, then a power loss.
    let lost_after = |nonvolatile: bool| {
        let mut cfg = cfg.clone();
        cfg.set("device.buffer_nonvolatile", &nonvolatile.to_string())
            .unwrap();
        let mut dev = Device::new(&cfg, 1, true).unwrap();
        let logical = dev.logical_pages();
        let mut x = 1u64;
        let mut skipped = 0;
        for i in 0..logical * 3 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lpn = if x >> 60 < 14 {
                (x >> 20) % (logical / 10)
            } else {
                (x >> 20) % logical
            };
            write(&mut dev, lpn, i);
            skipped = dev.counters().gc_skipped;
            if skipped > 0 && i > logical {
                break;
            }
        }
        assert!(skipped > 0);
        dev.verify().unwrap();
        dev.power_loss().unwrap();
        dev.verify()
    };
    assert!(
        lost_after(true).is_ok(),
        "a non-volatile buffer keeps the newer copies"
    );
    let err = lost_after(false).unwrap_err().to_string();
    assert!(
        err.contains("lost") && err.contains("gc.skip_shadows"),
        "{err}"
    );
}

#[test]
fn shadow_keys_that_cannot_work_are_refused_naming_the_key() {
    let base = small(&[]);
    let cases: [(&[(&str, &str)], &str); 6] = [
        (&[("gc.fast_write", "true")], "gc.fast_write"),
        (&[("gc.shadow_reads", "true")], "gc.shadow_reads"),
        (
            &[("device.buffer", "64KiB"), ("device.discard_twins", "true")],
            "device.discard_twins",
        ),
        (&[("ftl.fast_retention_s", "100")], "ftl.fast_retention_s"),
        (
            &[
                ("timing.enabled", "true"),
                ("host.cache", "1MiB"),
                ("host.buffer", "1MiB"),
            ],
            "host.buffer",
        ),
        (&[("host.buffer_policy", "cflru")], "host.buffer_policy"),
    ];
    for (pairs, key) in cases {
        let mut cfg = base.clone();
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let err = cfg.set_many(&pairs).unwrap_err().to_string();
        assert!(err.contains(key), "{key}: {err}");
    }
}
