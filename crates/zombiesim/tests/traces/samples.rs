//! The real samples and the synthetic fixtures read exactly; device filter, time options.

use super::support::{defaults, fixture, read_all, rec};
use crate::common::sample;
use zombiesim::trace::{ReadOptions, TraceFormat, TraceOp, TraceReader};

#[test]
fn msr_sample_reads_exactly() {
    let path = sample("msr-src1_0-excerpt.csv");
    let recs = read_all(&path, TraceFormat::Msr, &defaults());
    assert_eq!(recs.len(), 10_001, "the excerpt holds 10 001 lines");
    // 128166373321652068,src1,0,Write,3173167104,36864,3126
    assert_eq!(recs[0], rec(0, TraceOp::Write, 3173167104, 36864, 0));
    // 128166373321653856,src1,0,Write,3154128896,4096,1337: 1788 ticks later.
    assert_eq!(recs[1], rec(178_800, TraceOp::Write, 3154128896, 4096, 0));
    // 128166373371652876,src1,0,Write,3744964608,4096,1998
    assert_eq!(
        recs[3],
        rec(
            (128166373371652876 - 128166373321652068) * 100,
            TraceOp::Write,
            3744964608,
            4096,
            0
        )
    );
    // 128166453872075858,src1,0,Read,3261448192,4096,1309
    let last = recs.last().unwrap();
    assert_eq!(
        *last,
        rec(
            (128166453872075858 - 128166373321652068) * 100,
            TraceOp::Read,
            3261448192,
            4096,
            0
        )
    );
    let reads = recs.iter().filter(|r| r.op == TraceOp::Read).count();
    assert_eq!((reads, recs.len() - reads), (7362, 2639));
}

#[test]
fn fio_v3_excerpt_reads_exactly() {
    let path = sample("captures/fio-pareto/fio_pareto_iolog_v3_excerpt.txt");
    let recs = read_all(&path, TraceFormat::Fio, &defaults());
    // 294 <capture>/data.bin write 210542592 4096
    assert_eq!(recs[0], rec(0, TraceOp::Write, 210542592, 4096, 0));
    // 433 <capture>/data.bin write 87875584 4096
    assert_eq!(recs[1], rec(139_000, TraceOp::Write, 87875584, 4096, 0));
    // Line 69: 1183 <capture>/data.bin sync 19795968 0
    let first_sync = recs.iter().find(|r| r.op == TraceOp::Flush).unwrap();
    assert_eq!(*first_sync, rec(889_000, TraceOp::Flush, 0, 0, 0));
    let flushes = recs.iter().filter(|r| r.op == TraceOp::Flush).count();
    assert_eq!((recs.len(), flushes), (319, 25));
}

#[test]
fn fio_full_gz_log_streams() {
    let path = sample("captures/fio-pareto/fio_pareto_iolog_full_15s.txt.gz");
    let mut reader = TraceReader::open(&path, TraceFormat::Fio, &defaults()).unwrap();
    let (mut writes, mut flushes, mut last) = (0u64, 0u64, 0u64);
    for r in &mut reader {
        let r = r.unwrap();
        assert_eq!(r.device, 0);
        match r.op {
            TraceOp::Write => writes += 1,
            TraceOp::Flush => flushes += 1,
            op => panic!("unexpected {op}"),
        }
        assert!(r.time_ns >= last, "fio v3 times do not go backwards");
        last = r.time_ns;
    }
    assert_eq!((writes, flushes), (223_168, 3_487));
    assert_eq!(reader.line(), 226_659);
    // 14999818 (last sync) - 294 (first write), in ns.
    assert_eq!(last, (14_999_818 - 294) * 1_000);
}

#[test]
fn spc_fixture_reads_exactly() {
    let recs = read_all(&fixture("spc_synthetic.spc"), TraceFormat::Spc, &defaults());
    assert_eq!(recs.len(), 6);
    assert_eq!(recs[0], rec(0, TraceOp::Write, 20941264 * 512, 8192, 0));
    assert_eq!(
        recs[2],
        rec(5_588_000, TraceOp::Read, 3436288 * 512, 15872, 1)
    );
    assert_eq!(
        recs[3],
        rec(8_294_000, TraceOp::Write, 20939856 * 512, 4096, 0)
    );
    assert_eq!(
        recs[5],
        rec(448_294_000, TraceOp::Write, 3436320 * 512, 4096, 1)
    );
}

#[test]
fn disksim_fixture_reads_exactly() {
    let recs = read_all(
        &fixture("disksim_synthetic.trace"),
        TraceFormat::Disksim,
        &defaults(),
    );
    assert_eq!(
        recs,
        vec![
            rec(0, TraceOp::Write, 2048 * 512, 4096, 0),
            rec(250_000, TraceOp::Read, 4096 * 512, 8192, 0),
            rec(1_500_000, TraceOp::Write, 0, 4096, 1),
            rec(2_000_001, TraceOp::Write, 2048 * 512, 4096, 0),
            rec(3_250_000, TraceOp::Read, 64 * 512, 4096, 1),
        ]
    );
}

#[test]
fn blkparse_fixture_keeps_one_action() {
    let path = fixture("blkparse_synthetic.txt");
    let sda = 8 << 20;
    let sdb = (8 << 20) | 16;
    assert_eq!(
        read_all(&path, TraceFormat::Blkparse, &defaults()),
        vec![
            rec(0, TraceOp::Write, 223490 * 512, 4096, sda),
            rec(9_000, TraceOp::Write, 223498 * 512, 4096, sda),
            rec(1_499_000, TraceOp::Read, 1048576 * 512, 16384, sda),
            rec(2_999_000, TraceOp::Flush, 0, 0, sda),
            rec(3_999_000, TraceOp::Trim, 4096 * 512, 1 << 20, sdb),
            rec(5_999_000, TraceOp::Write, 223506 * 512, 4096, sda),
        ]
    );
    let issued = ReadOptions {
        blkparse_action: 'D',
        ..defaults()
    };
    assert_eq!(
        read_all(&path, TraceFormat::Blkparse, &issued),
        vec![
            rec(0, TraceOp::Write, 223490 * 512, 8192, sda),
            rec(1_481_000, TraceOp::Read, 1048576 * 512, 16384, sda),
        ]
    );
}

#[test]
fn device_filter_keeps_one_device() {
    let only = |d| ReadOptions {
        device: Some(d),
        ..defaults()
    };
    let recs = read_all(&fixture("spc_synthetic.spc"), TraceFormat::Spc, &only(1));
    assert_eq!(recs.len(), 2);
    assert!(recs.iter().all(|r| r.device == 1));
    assert_eq!(recs[0].time_ns, 0, "a filtered trace starts at 0");
    assert_eq!(recs[1].time_ns, 1_000_000_000 - 557_294_000);

    let sdb = (8 << 20) | 16;
    let recs = read_all(
        &fixture("blkparse_synthetic.txt"),
        TraceFormat::Blkparse,
        &only(sdb),
    );
    assert_eq!(recs, vec![rec(0, TraceOp::Trim, 4096 * 512, 1 << 20, sdb)]);

    let path = sample("msr-src1_0-excerpt.csv");
    assert_eq!(read_all(&path, TraceFormat::Msr, &only(0)).len(), 10_001);
    assert!(read_all(&path, TraceFormat::Msr, &only(1)).is_empty());
}

#[test]
fn time_offset_and_scale() {
    let opts = ReadOptions {
        time_scale: 0.5,
        time_offset_ns: 10,
        ..defaults()
    };
    let recs = read_all(
        &fixture("disksim_synthetic.trace"),
        TraceFormat::Disksim,
        &opts,
    );
    let times: Vec<u64> = recs.iter().map(|r| r.time_ns).collect();
    assert_eq!(times, vec![10, 125_010, 750_010, 1_000_011, 1_625_010]);
}
