//! Conversion: every writable format round-trips what it holds, and the samples convert.

use super::support::{defaults, read_all, read_str, rec, write_all};
use crate::common::sample;
use proptest::prelude::*;
use zombiesim::trace::{TraceFormat, TraceOp, TraceRecord, TraceWriter};

/// What `format` can hold, as (ops, offset alignment, size alignment, max size, max device).
fn capabilities(format: TraceFormat) -> (&'static [TraceOp], u64, u64, u64, u32) {
    use TraceOp::*;
    const RW: &[TraceOp] = &[Read, Write];
    const ALL: &[TraceOp] = &[Read, Write, Trim, Flush];
    match format {
        TraceFormat::Msr => (RW, 1, 1, u64::MAX >> 8, u32::MAX),
        TraceFormat::Spc => (RW, 512, 1, u64::MAX >> 8, u32::MAX),
        TraceFormat::Disksim => (RW, 512, 512, u64::MAX >> 8, u32::MAX),
        TraceFormat::Fio => (ALL, 1, 1, u64::from(u32::MAX), u32::MAX),
        TraceFormat::Blkparse => (ALL, 512, 512, u64::from(u32::MAX) * 512, u32::MAX),
        TraceFormat::Native => (ALL, 1, 1, u64::from(u32::MAX), u32::from(u16::MAX)),
        f => unreachable!("{f} is read only"),
    }
}

/// The formats zombiesim writes (the hashed formats are read only).
fn writable() -> Vec<TraceFormat> {
    TraceFormat::ALL
        .iter()
        .copied()
        .filter(|f| f.is_writable())
        .collect()
}

/// Bends an arbitrary record into one `format` can hold.
fn fit(format: TraceFormat, r: (u64, usize, u64, u64, u32)) -> TraceRecord {
    let (ops, oalign, salign, max_size, max_dev) = capabilities(format);
    let op = ops[r.1 % ops.len()];
    let device = r.4.min(max_dev);
    if op == TraceOp::Flush {
        return rec(r.0, op, 0, 0, device);
    }
    let offset = (r.2 >> 8) / oalign * oalign;
    let size = (r.3 % (max_size + 1)) / salign * salign;
    rec(r.0, op, offset, size, device)
}

/// The record a round trip through `format` should give back.
fn expected_after(format: TraceFormat, r: &TraceRecord) -> TraceRecord {
    let res = format.time_resolution_ns();
    TraceRecord {
        time_ns: r.time_ns / res * res,
        ..*r
    }
}

fn round_trip(format: TraceFormat, recs: &[TraceRecord]) -> Vec<TraceRecord> {
    let bytes = write_all(format, recs);
    read_str(format, &bytes, &defaults())
        .collect::<zombiesim::Result<Vec<_>>>()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_format_round_trips(
        format in prop::sample::select(writable()),
        raw in prop::collection::vec(
            (0u64..1 << 52, 0usize..4, any::<u64>(), any::<u64>(), any::<u32>()),
            1..40,
        ),
    ) {
        let mut recs: Vec<TraceRecord> = raw.into_iter().map(|r| fit(format, r)).collect();
        // Times are relative to the first record: make it the earliest, at 0.
        recs[0].time_ns = 0;
        let back = round_trip(format, &recs);
        let expected: Vec<TraceRecord> = recs.iter().map(|r| expected_after(format, r)).collect();
        prop_assert_eq!(back, expected);
    }

    #[test]
    fn conversion_between_formats_round_trips(
        from in prop::sample::select(writable()),
        to in prop::sample::select(writable()),
        raw in prop::collection::vec(
            (0u64..1 << 40, 0usize..4, any::<u64>(), any::<u64>(), any::<u32>()),
            1..20,
        ),
    ) {
        // Records both formats hold: fit to one, then to the other, and keep the ops
        // both have.
        let (to_ops, ..) = capabilities(to);
        let mut recs: Vec<TraceRecord> = raw
            .into_iter()
            .map(|r| fit(to, r))
            .map(|r| fit(from, (r.time_ns, r.op as usize, r.offset << 8, r.size, r.device)))
            .filter(|r| to_ops.contains(&r.op))
            .collect();
        prop_assume!(!recs.is_empty());
        recs[0].time_ns = 0;
        let in_a = round_trip(from, &recs);
        let in_b = round_trip(to, &in_a);
        let expected: Vec<TraceRecord> = recs
            .iter()
            .map(|r| expected_after(to, &expected_after(from, r)))
            .collect();
        prop_assert_eq!(in_b, expected);
    }
}

#[test]
fn op_index_matches_fit() {
    // `fit` indexes ops by `TraceOp as usize`; keep that in line with the declaration order.
    assert_eq!(TraceOp::Read as usize, 0);
    assert_eq!(TraceOp::Flush as usize, 3);
}

#[test]
fn msr_sample_converts_to_every_format_and_back() {
    let path = sample("msr-src1_0-excerpt.csv");
    let original = read_all(&path, TraceFormat::Msr, &defaults());
    for format in writable() {
        let back = round_trip(format, &original);
        let expected: Vec<TraceRecord> =
            original.iter().map(|r| expected_after(format, r)).collect();
        assert_eq!(back, expected, "msr -> {format} -> records");
    }
    // msr -> msr rewrites every line with hostname `zombiesim`, response time 0 and
    // timestamps relative to the first.
    let text = String::from_utf8(write_all(TraceFormat::Msr, &original)).unwrap();
    assert_eq!(
        text.lines().nth(1).unwrap(),
        "1788,zombiesim,0,Write,3154128896,4096,0"
    );
}

#[test]
fn fio_sample_converts_to_blkparse_and_native() {
    let path = sample("captures/fio-pareto/fio_pareto_iolog_v3_excerpt.txt");
    let original = read_all(&path, TraceFormat::Fio, &defaults());
    for format in [TraceFormat::Fio, TraceFormat::Blkparse, TraceFormat::Native] {
        assert_eq!(round_trip(format, &original), original, "fio -> {format}");
    }
    // msr has no flush: the first sync is refused, naming the record.
    let mut w = TraceWriter::new(TraceFormat::Msr, Vec::new()).named("out.csv");
    let err = original.iter().find_map(|r| w.write(r).err()).unwrap();
    let nth = original
        .iter()
        .position(|r| r.op == TraceOp::Flush)
        .unwrap()
        + 1;
    assert!(
        err.to_string().starts_with(&format!(
            "out.csv:{nth}: cannot write record {nth} (flush of 0 bytes"
        )),
        "{err}"
    );
    assert!(err
        .to_string()
        .ends_with("msr has no flush (Type is Read or Write)"));
}
