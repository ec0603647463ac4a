//! Power-loss injection (`device.power_loss_every`, `device.restart_at`): the report's
//! `power_loss` section counts the events and what the volatile buffers lost, the
//! integrity oracle checks after every event that nothing durable was lost, zombies
//! return to live, and fast-written blocks are refreshed at power-on.

use zombiesim::{simulate, Config, Error, Report, RunOptions, WorkloadSpec};

use crate::common;
use common::{small_device, verified_run};

/// Single-page requests, a quarter of them reads, over a hot tenth of the device.
const REQUESTS: u64 = 20_000;
const WORKLOAD: &str = "hotcold:r=0.9,f=0.1,read=0.25,requests=20000";

fn buffered(settings: &[(&str, &str)]) -> Config {
    let mut pairs = vec![("device.buffer", "64KiB")];
    pairs.extend_from_slice(settings);
    small_device(&pairs)
}

fn run(cfg: &Config, wl: &str, verify: bool) -> zombiesim::Result<Report> {
    let opts = RunOptions {
        seed: 5,
        verify,
        reproducible: true,
        ..Default::default()
    };
    simulate(cfg, &WorkloadSpec::parse(wl).unwrap(), &opts, &mut |_| true)
}

#[test]
fn power_loss_every_n_requests_loses_the_volatile_buffer_and_nothing_durable() {
    let every = 1000;
    let cfg = buffered(&[("device.power_loss_every", "1000")]);
    let r = verified_run(&cfg, WORKLOAD, 5);
    assert_eq!(r.host.requests, REQUESTS);
    let p = r.power_loss.expect("power losses were asked for");
    assert_eq!(p.events, REQUESTS / every, "{p:?}");
    assert!(p.device_buffer_lost_pages > 0, "{p:?}");
    assert_eq!(p.host_buffer_lost_pages, 0);
    assert_eq!(p.zombies_revived, 0);
    assert_eq!(p.fast_blocks_refreshed, 0);
    // The oracle checked after every event: nothing durable was lost.
    assert_eq!(p.durable_pages_lost, Some(0));
    assert!(r.run.verified);
    // The buffer's own count agrees; no clock was needed (counting mode, no iops).
    assert_eq!(
        r.buffer.unwrap().counters.lost_pages,
        p.device_buffer_lost_pages
    );
    assert!(r.refresh.is_none());
    assert!(r.elapsed_s.is_none());
}

#[test]
fn a_non_volatile_buffer_loses_nothing() {
    let cfg = buffered(&[
        ("device.buffer_nonvolatile", "true"),
        ("device.power_loss_every", "1000"),
    ]);
    let r = verified_run(&cfg, WORKLOAD, 5);
    let p = r.power_loss.unwrap();
    assert_eq!(p.events, REQUESTS / 1000);
    assert_eq!(p.device_buffer_lost_pages, 0);
    assert_eq!(p.durable_pages_lost, Some(0));
    assert_eq!(r.buffer.unwrap().counters.lost_pages, 0);
}

#[test]
fn the_section_is_null_when_off_and_durable_loss_unknown_without_verify() {
    let off = run(&buffered(&[]), WORKLOAD, true).unwrap();
    assert!(off.power_loss.is_none());
    let unverified = run(
        &buffered(&[("device.power_loss_every", "3000")]),
        WORKLOAD,
        false,
    )
    .unwrap();
    let p = unverified.power_loss.unwrap();
    assert_eq!(p.events, REQUESTS / 3000);
    assert_eq!(p.durable_pages_lost, None);
}

#[test]
fn restart_times_and_power_loss_every_combine() {
    // 10,000 requests/s: the restart at 0.55 s falls between two of every-1000's events.
    let cfg = buffered(&[
        ("device.power_loss_every", "1000"),
        ("device.restart_at", "[0.55]"),
    ]);
    let r = verified_run(&cfg, &format!("{WORKLOAD},iops=10000"), 5);
    let p = r.power_loss.unwrap();
    assert_eq!(p.events, REQUESTS / 1000 + 1, "{p:?}");
    assert_eq!(r.refresh.unwrap().restarts, p.events);
    // A restart time alone: one event.
    let cfg = buffered(&[("device.restart_at", "[0.55]")]);
    let r = verified_run(&cfg, &format!("{WORKLOAD},iops=10000"), 5);
    assert_eq!(r.power_loss.unwrap().events, 1);
}

/// The ShadowGC device of tests/shadow.rs: 4 planes × 128 blocks × 32 pages, both
/// buffers, the `scheme`'s settings, then `settings`.
fn shadow(scheme: &str, settings: &[(&str, &str)]) -> Config {
    let mut cfg = small_device(&[
        ("gc.low_watermark", "6"),
        ("gc.high_watermark", "6"),
        ("flash.blocks_per_plane", "128"),
        ("flash.pages_per_block", "32"),
        ("device.buffer", "256KiB"),
        ("host.buffer", "256KiB"),
    ]);
    let mut pairs = zombiesim::config::scheme_settings(scheme).unwrap();
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs).unwrap();
    cfg
}

const HOT: &str = "hotcold:r=0.9,f=0.1,drive_writes=2,read=0.2,iops=100000";

#[test]
fn known_zombies_return_to_live_and_the_host_buffer_is_lost() {
    // The host buffer tells the device what it holds dirty (piggyback): those pages'
    // flash copies are zombies until a power loss takes the host's copies.
    let cfg = shadow("zgc", &[("device.power_loss_every", "5000")]);
    let r = verified_run(&cfg, HOT, 3);
    let p = r.power_loss.unwrap();
    assert!(p.events > 0);
    assert!(p.zombies_revived > 0, "{p:?}");
    assert!(p.host_buffer_lost_pages > 0, "{p:?}");
    assert_eq!(
        r.host_buffer.unwrap().counters.lost_pages,
        p.host_buffer_lost_pages
    );
    assert_eq!(p.durable_pages_lost, Some(0));
}

#[test]
fn a_power_loss_refreshes_fast_written_blocks() {
    // Fast blocks are due a week after they open: within this run only power losses
    // refresh them.
    let cfg = shadow("sgc", &[("device.power_loss_every", "20000")]);
    let r = verified_run(&cfg, HOT, 3);
    let p = r.power_loss.unwrap();
    let refresh = r.refresh.expect("gc.fast_write keeps a clock");
    assert!(p.events > 0);
    assert!(refresh.fast_blocks > 0, "{refresh:?}");
    assert_eq!(p.fast_blocks_refreshed, refresh.fast_blocks, "{p:?}");
    assert_eq!(refresh.restarts, p.events);
    assert_eq!(p.durable_pages_lost, Some(0));
}

#[test]
fn a_durable_page_lost_at_a_power_loss_is_an_integrity_error() {
    // The skip policy with a volatile buffer drops flash copies whose only newer copy
    // is buffered: a power loss then loses them, and the check right after it says so.
    let cfg = buffered(&[
        ("ftl.over_provisioning", "0.1"),
        ("gc.skip_shadows", "true"),
        ("device.power_loss_every", "2000"),
    ]);
    let opts = RunOptions {
        seed: 5,
        verify: true,
        reproducible: true,
        force_unsafe: true,
        ..Default::default()
    };
    let spec = WorkloadSpec::parse("hotcold:r=0.9,f=0.05,drive_writes=3").unwrap();
    let err = simulate(&cfg, &spec, &opts, &mut |_| true).unwrap_err();
    assert!(matches!(err, Error::Integrity { .. }), "{err}");
    assert!(err.to_string().contains("lost"), "{err}");
    // Without the power losses the same run passes its checks, skips and all.
    let mut safe = cfg.clone();
    safe.set("device.power_loss_every", "0").unwrap();
    let r = simulate(&safe, &spec, &opts, &mut |_| true).unwrap();
    assert!(r.gc.skipped > 0);
    assert!(r.power_loss.is_none());
}

#[test]
fn power_loss_every_is_refused_where_restarts_are() {
    // The host model (host.cache, host.threads).
    let mut cfg = Config::preset("default").unwrap();
    let err = cfg
        .set_many(&[
            ("timing.enabled".into(), "true".into()),
            ("host.cache".into(), "64MiB".into()),
            ("device.power_loss_every".into(), "100".into()),
        ])
        .unwrap_err();
    assert!(err.to_string().contains("device.power_loss_every"), "{err}");
    // The oracle policy: a power loss forgets its zombie marks.
    let err = cfg
        .set_many(&[
            ("gc.policy".into(), "oracle".into()),
            ("device.power_loss_every".into(), "100".into()),
        ])
        .unwrap_err();
    assert!(err.to_string().contains("device.power_loss_every"), "{err}");
    // Not a whole number of requests.
    for bad in ["-1", "0.5", "\"x\""] {
        let err = cfg
            .set_many(&[("device.power_loss_every".into(), bad.into())])
            .unwrap_err();
        assert!(
            err.to_string().contains("device.power_loss_every"),
            "{bad}: {err}"
        );
    }
}
