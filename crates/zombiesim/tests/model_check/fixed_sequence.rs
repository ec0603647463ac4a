//! The fixed sequence on every combination, and the unsafe ones the check catches.

use super::combos::{combinations, key, named, Combo, VARIANTS};
use super::run::{run, run_config, Outcome};
use super::steps::fixed_steps;
use zombiesim::config::{BufferPolicy, FtlKind};
use zombiesim::ftl::FtlExt;
use zombiesim::units::ByteSize;

/// The fixed sequence on every existing combination: the device is small enough that
/// each one collects (GC, merges) and a volatile buffer loses pages at its power
/// losses, and each variant does what it is there for (so the proptests exercise it).
#[test]
fn every_combination_collects_and_loses_what_it_should() {
    let steps = fixed_steps();
    let mut fast_programs = 0;
    for c in &combinations().0 {
        let Outcome {
            dev,
            host,
            lost,
            host_lost,
        } = run(c, &steps, true, 8).unwrap();
        let k = dev.counters();
        let name = c.name();
        let variant = VARIANTS[c.variant].name;
        let b = dev.buffer().map(|b| b.counters).unwrap_or_default();
        let notify = host.as_ref().map(|h| h.notify_report().counters);
        let content = dev.ftl().content_stats().map(|(c, _)| c);
        let about = format!(
            "{name}: victims {}, merges {:?}, lost {lost}, buffer reads {}, skipped {}, \
             zombie copies {}, refreshed blocks {}, padding reads {}, host lost {host_lost}, \
             twin discards {}, notify {notify:?}, deduplicated {:?}, revived {:?}",
            k.gc_victims,
            k.merges,
            k.gc_buffer_reads,
            k.gc_skipped,
            k.gc_zombie_pages_copied,
            k.refresh_blocks,
            k.reads.get(zombiesim::stats::Cause::Buffer),
            b.twin_discards,
            content.map(|c| c.deduplicated),
            content.map(|c| c.revived),
        );
        eprintln!("{about}");
        assert!(k.gc_victims > 0, "{about}");
        assert_eq!(
            lost > 0,
            c.buffer.is_some() && !c.nonvolatile,
            "only a volatile buffer loses pages: {about}"
        );
        if c.buffer == Some(BufferPolicy::Bplru) {
            assert!(k.reads.get(zombiesim::stats::Cause::Buffer) > 0, "{about}");
        }
        match c.ftl {
            FtlKind::Fast => assert!(k.merges[1] > 0 && k.merges[2] > 0, "{about}"),
            FtlKind::Page | FtlKind::Dftl if variant == "plain" => {
                assert!(k.gc_zombie_pages_copied > 0, "GC met zombies: {about}")
            }
            _ => {}
        }
        // The host buffer loses pages at power losses, and tells the device of some.
        assert_eq!(host_lost > 0, host.is_some(), "{about}");
        if let Some(n) = notify {
            assert!(n.delivered_pages > 0, "{about}");
        }
        match variant {
            "sgc" => {
                assert!(k.gc_buffer_reads > 0 && k.refresh_blocks > 0, "{about}");
                fast_programs += k.gc_fast_programs;
            }
            "skip" => assert!(k.gc_skipped > 0, "{about}"),
            "bg" => assert!(
                k.gc_background_victims > 0 && k.gc_buffer_reads > 0,
                "{about}"
            ),
            "ba-bm" | "ba-gc" => assert!(k.gc_buffer_reads > 0, "{about}"),
            "hb-pb" | "twins-pb" => assert!(notify.unwrap().stale_pages > 0, "{about}"),
            "hb-cmd" => assert!(notify.unwrap().commands > 0, "{about}"),
            _ => {}
        }
        if variant.starts_with("twins") || variant == "sgc-twins" {
            assert!(b.twin_discards > 0, "{about}");
        }
        if variant == "sgc-twins" {
            assert!(k.gc_fast_programs > 0 && k.refresh_blocks > 0, "{about}");
        }
        if let Some(cc) = content {
            if variant.starts_with("dedup") {
                assert!(cc.deduplicated > 0, "{about}");
            }
            if variant != "dedup" {
                assert!(cc.revived > 0, "{about}");
            }
        }
    }
    assert!(fast_programs > 0, "ShadowGC never fast-wrote a zombie page");
}

/// The check is sharp enough to see what the configuration refuses as unsafe: the skip
/// policy above a volatile buffer (forced past `simulate`'s refusal by building the
/// device directly) loses pages at a power loss, and the model check says so.
#[test]
fn the_model_check_catches_the_skip_policy_above_a_volatile_buffer() {
    let unsafe_skip = Combo {
        ftl: FtlKind::Page,
        buffer: Some(BufferPolicy::Lru),
        nonvolatile: false,
        variant: VARIANTS.iter().position(|v| v.name == "skip").unwrap(),
    };
    assert!(combinations()
        .1
        .iter()
        .any(|(c, _)| c.name() == unsafe_skip.name()));
    let Err(err) = run(&unsafe_skip, &fixed_steps(), true, 8) else {
        panic!("the skip policy above a volatile buffer lost nothing");
    };
    assert!(
        err.to_string().contains("lost") && err.to_string().contains("gc.skip_shadows"),
        "{err}"
    );
}

/// The check is sharp enough to see why twin discards need a host buffer: forced past
/// the configuration's refusal (the same device without the host buffer), the steps'
/// own zombie hints claim newer copies nobody holds, the device buffer drops the
/// newest copy of such a page when it evicts it, and the model check sees the page
/// read an older value, without any power loss.
#[test]
fn the_model_check_catches_twin_discards_without_a_host_buffer() {
    let mut cfg = named("page lru/v twins").config(8).unwrap();
    cfg.host.buffer = ByteSize(0);
    let refused = cfg.validate().unwrap_err();
    assert_eq!(key(&refused), "device.discard_twins", "{refused}");
    let Err(err) = run_config("page lru/v twins without", &cfg, &fixed_steps(), true) else {
        panic!("twin discards without a host buffer lost nothing");
    };
    assert!(err.to_string().contains("the model"), "{err}");
}

/// The check is sharp enough to see why the content layer refuses GC reads from the
/// buffer: forced past the refusal, GC relocates a deduplicated page with one sharer's
/// newer buffered copy, every other sharer is remapped to it and reads a value it
/// never had, and the model check (by value) says so.
#[test]
fn the_model_check_catches_gc_reading_the_buffer_under_dedup() {
    let mut cfg = named("page lru/nv dedup").config(8).unwrap();
    cfg.gc.shadow_reads = true;
    let refused = cfg.validate().unwrap_err();
    assert_eq!(key(&refused), "gc.shadow_reads", "{refused}");
    let Err(err) = run_config("page lru/nv dedup shadow", &cfg, &fixed_steps(), true) else {
        panic!("GC reading the buffer under dedup went unnoticed");
    };
    assert!(err.to_string().contains("logical page"), "{err}");
}
