//! Which FTL × buffer × variant combinations exist, and why the others are refused.

use super::combos::{combinations, key, Combo, TABLE_BUFFER_PAGES, VARIANTS};
use zombiesim::config::{BufferPolicy, FtlKind};
use zombiesim::Error;

// The table: 18 variants × 5 FTLs × (no buffer + 5 policies) × volatile / non-volatile
// = 1080 combinations; 281 exist: 43 plain (page and DFTL 5 each, superblock, fast and
// block 11 each), 43 with each of the three host buffers (hb, hb-pb, hb-cmd: as
// plain), 19 with each of the two twin discards (every volatile buffer), 4 sgc-twins
// (page and DFTL above LRU and CFLRU, volatile), 5 with each of the five content
// variants (page only) and 42 in the other variants. The refused ones, and the key the
// refusal names:
//
// | combination                                  | key                          | why |
// |----------------------------------------------|------------------------------|-----|
// | any FTL and variant, no buffer, non-volatile | device.buffer_nonvolatile    | no effect without a write buffer |
// | page, dftl × fab, bplru, 3-region            | device.buffer_policy         | whole-block eviction helps only a block-mapped FTL |
// | superblock, fast, block × zgc, dedup-zgc     | gc.policy                    | no zombie-aware victim scores |
// | superblock, fast, block × sgc, sgc-twins     | gc.zombie_block              | no separate write streams |
// | superblock, fast, block × skip               | gc.skip_shadows              | no ShadowGC |
// | superblock, fast, block × bg                 | gc.background                | no background GC |
// | page, dftl × sgc, sgc-twins, bg, skip without a buffer | gc.shadow_reads, gc.skip_shadows | works on the device write buffer |
// | page, dftl × skip above a volatile buffer    | gc.skip_shadows              | accepted by the configuration; `simulate` refuses it as unsafe (a power loss loses the pages GC dropped) |
// | page, dftl, superblock, block × ba-bm, ba-gc | ftl.buffer_aware_merge, ftl.log_victim | read only by FAST |
// | fast × ba-bm without a buffer                | device.buffer_max_dirty_age  | no effect without a write buffer |
// | fast × ba-gc but above the 3-region buffer   | ftl.log_victim               | BA-VBS weighs pages by the 3-region buffer's P(U) |
// | any FTL × twins, twins-pb without a buffer   | device.discard_twins         | works on the device write buffer |
// | any FTL × twins, twins-pb, sgc-twins above a non-volatile buffer | device.discard_twins | a discard would break the buffer's durability |
// | dftl, superblock, fast, block × dedup, dedup-mq (and dftl × dedup-zgc) | content.dedup | no content-aware mapping |
// | dftl, superblock, fast, block × pool, lx     | content.pool                 | no content-aware mapping |
//
// The host buffer takes only LRU and CFLRU (`host.buffer_policy`), and the content
// layer no ShadowGC key (`gc.shadow_reads`, `gc.skip_shadows`, `device.discard_twins`:
// not modelled with content-aware flash), so no variant asks for them.
//
// `cargo test --test model_check the_combinations_that_exist -- --nocapture` prints
// every refusal with its message.
#[test]
fn the_combinations_that_exist() {
    let (exist, refused) = combinations();
    let mut names: Vec<String> = exist.iter().map(Combo::name).collect();
    let table: String = refused
        .iter()
        .map(|(c, e)| format!("  {:<40} {e}\n", c.name()))
        .collect();
    eprintln!("refused combinations ({}):\n{table}", refused.len());
    let mut want: Vec<String> = Vec::new();
    let v_nv = |p: &str| [format!("{p}/v"), format!("{p}/nv")];
    for ftl in ["page", "dftl", "superblock", "fast", "block"] {
        let mut buffers = vec!["none".to_string()];
        buffers.extend(v_nv("lru"));
        buffers.extend(v_nv("cflru"));
        if !matches!(ftl, "page" | "dftl") {
            for p in ["fab", "bplru", "3-region"] {
                buffers.extend(v_nv(p));
            }
        }
        want.extend(buffers.iter().map(|b| format!("{ftl} {b}")));
    }
    let volatile = |ftl: &str| -> Vec<String> {
        let mut policies = vec!["lru", "cflru"];
        if !matches!(ftl, "page" | "dftl") {
            policies.extend(["fab", "bplru", "3-region"]);
        }
        policies.iter().map(|p| format!("{p}/v")).collect()
    };
    let plain = want.clone();
    for variant in ["hb", "hb-pb", "hb-cmd"] {
        want.extend(plain.iter().map(|c| format!("{c} {variant}")));
    }
    for ftl in ["page", "dftl", "superblock", "fast", "block"] {
        for variant in ["twins", "twins-pb"] {
            want.extend(volatile(ftl).iter().map(|b| format!("{ftl} {b} {variant}")));
        }
    }
    for variant in ["dedup", "pool", "lx", "dedup-mq", "dedup-zgc"] {
        want.extend(
            ["none", "lru/v", "lru/nv", "cflru/v", "cflru/nv"]
                .iter()
                .map(|b| format!("page {b} {variant}")),
        );
    }
    for (variant, ftls, buffers) in [
        (
            "sgc-twins",
            &["page", "dftl"][..],
            &["lru/v", "cflru/v"][..],
        ),
        (
            "zgc",
            &["page", "dftl"][..],
            &["none", "lru/v", "lru/nv", "cflru/v", "cflru/nv"][..],
        ),
        (
            "sgc",
            &["page", "dftl"],
            &["lru/v", "lru/nv", "cflru/v", "cflru/nv"],
        ),
        ("skip", &["page", "dftl"], &["lru/nv", "cflru/nv"]),
        (
            "bg",
            &["page", "dftl"],
            &["lru/v", "lru/nv", "cflru/v", "cflru/nv"],
        ),
        (
            "ba-bm",
            &["fast"],
            &[
                "lru/v",
                "lru/nv",
                "cflru/v",
                "cflru/nv",
                "fab/v",
                "fab/nv",
                "bplru/v",
                "bplru/nv",
                "3-region/v",
                "3-region/nv",
            ],
        ),
        ("ba-gc", &["fast"], &["3-region/v", "3-region/nv"]),
    ] {
        for ftl in ftls {
            want.extend(buffers.iter().map(|b| format!("{ftl} {b} {variant}")));
        }
    }
    names.sort();
    want.sort();
    assert_eq!(
        names, want,
        "the combinations that exist changed; refused ones:\n{table}"
    );
    // Every refusal names a key, and the plain ones name the keys above.
    for (c, e) in refused {
        assert!(matches!(e, Error::Config { .. }), "{}: {e}", c.name());
        if VARIANTS[c.variant].name == "plain" {
            let want = if c.buffer.is_none() {
                "device.buffer_nonvolatile"
            } else {
                "device.buffer_policy"
            };
            assert_eq!(key(e), want, "{}: {e}", c.name());
        }
    }
    // The content layer needs the page-mapped FTL's content-aware mapping, twin
    // discards a volatile device buffer.
    for (c, e) in refused {
        let variant = VARIANTS[c.variant].name;
        let volatile = c.buffer.is_some() && !c.nonvolatile;
        if ["dedup", "pool", "lx", "dedup-mq"].contains(&variant) && c.ftl != FtlKind::Page {
            assert!(key(e).starts_with("content."), "{}: {e}", c.name());
        }
        if variant.starts_with("twins") && !volatile && key(e) != "device.buffer_nonvolatile" {
            assert_eq!(key(e), "device.discard_twins", "{}: {e}", c.name());
        }
    }
    assert_eq!((exist.len(), refused.len()), (281, 799));
    // The skip policy above a volatile buffer: accepted by the configuration, refused
    // by the run as unsafe.
    for (c, e) in refused {
        if VARIANTS[c.variant].name == "skip"
            && matches!(c.buffer, Some(BufferPolicy::Lru | BufferPolicy::Cflru))
            && !c.nonvolatile
            && matches!(c.ftl, FtlKind::Page | FtlKind::Dftl)
        {
            assert!(c.config(TABLE_BUFFER_PAGES).is_ok(), "{}", c.name());
            assert_eq!(key(e), "gc.skip_shadows", "{}: {e}", c.name());
            assert!(e.to_string().contains("volatile"), "{}: {e}", c.name());
        }
    }
}
