//! Every FTL's proptests: plain, zombie-aware GC, ShadowGC, host buffer, content.

use super::run::run_all;
use super::steps::{case, cases};
use proptest::prelude::*;
use zombiesim::config::FtlKind;

proptest! {
    #![proptest_config(cases(256))]

    /// Page mapping: no buffer, LRU and CFLRU, volatile and non-volatile.
    #[test]
    fn page(c in case()) {
        run_all(FtlKind::Page, &["plain"], &c)?;
    }

    /// DFTL: no buffer, LRU and CFLRU, volatile and non-volatile.
    #[test]
    fn dftl(c in case()) {
        run_all(FtlKind::Dftl, &["plain"], &c)?;
    }

    /// SuperBlock: no buffer and every buffer policy, volatile and non-volatile.
    #[test]
    fn superblock(c in case()) {
        run_all(FtlKind::Superblock, &["plain"], &c)?;
    }

    /// FAST: no buffer and every buffer policy, volatile and non-volatile, with BA-BM
    /// and with BA-GC.
    #[test]
    fn fast(c in case()) {
        run_all(FtlKind::Fast, &["plain", "ba-bm", "ba-gc"], &c)?;
    }

    /// Block mapping: no buffer and every buffer policy, volatile and non-volatile.
    #[test]
    fn block(c in case()) {
        run_all(FtlKind::Block, &["plain"], &c)?;
    }

    /// Page mapping with zombie-aware GC, ShadowGC, the skip policy and background GC.
    #[test]
    fn page_shadowgc(c in case()) {
        run_all(FtlKind::Page, &["zgc", "sgc", "skip", "bg"], &c)?;
    }

    /// DFTL with zombie-aware GC, ShadowGC, the skip policy and background GC.
    #[test]
    fn dftl_shadowgc(c in case()) {
        run_all(FtlKind::Dftl, &["zgc", "sgc", "skip", "bg"], &c)?;
    }
}

/// The variants with a host write buffer above the device.
const HOST: &[&str] = &["hb", "hb-pb", "hb-cmd", "twins", "twins-pb", "sgc-twins"];

/// The variants with content-aware flash.
pub const CONTENT: &[&str] = &["dedup", "pool", "lx", "dedup-mq", "dedup-zgc"];

proptest! {
    #![proptest_config(cases(64))]

    /// Page mapping under the host write buffer (ideal, piggybacked and command
    /// notifications), with twin discards, and under ShadowGC with both.
    #[test]
    fn page_host(c in case()) {
        run_all(FtlKind::Page, HOST, &c)?;
    }

    /// DFTL under the host write buffer, with twin discards, and under ShadowGC.
    #[test]
    fn dftl_host(c in case()) {
        run_all(FtlKind::Dftl, HOST, &c)?;
    }

    /// SuperBlock under the host write buffer and with twin discards.
    #[test]
    fn superblock_host(c in case()) {
        run_all(FtlKind::Superblock, HOST, &c)?;
    }

    /// FAST under the host write buffer and with twin discards.
    #[test]
    fn fast_host(c in case()) {
        run_all(FtlKind::Fast, HOST, &c)?;
    }

    /// Block mapping under the host write buffer and with twin discards.
    #[test]
    fn block_host(c in case()) {
        run_all(FtlKind::Block, HOST, &c)?;
    }
}

proptest! {
    #![proptest_config(cases(128))]

    /// Page mapping with deduplication and each dead-value pool.
    #[test]
    fn page_content(c in case()) {
        run_all(FtlKind::Page, CONTENT, &c)?;
    }
}
