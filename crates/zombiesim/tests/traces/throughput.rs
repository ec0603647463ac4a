//! Read throughput (ignored: run by hand); readers and writers cross threads.

use super::support::{defaults, read_str};
use crate::common::sample;
use std::io::Write;
use std::path::Path;
use std::time::Instant;
use zombiesim::trace::{RemapMode, Remapper, TraceFormat, TraceReader, TraceWriter};

/// Read throughput, release build: `cargo test --release --test integration -- --ignored
/// --nocapture throughput`. Generates a 1M-line MSR file in the system temp directory.
#[test]
#[ignore]
fn throughput() {
    let path = std::env::temp_dir().join("zombiesim-msr-1m.csv");
    if !path.exists() {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..1_000_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let kind = if x.is_multiple_of(3) { "Read" } else { "Write" };
            writeln!(
                w,
                "{},src1,{},{},{},{},{}",
                128166373321652068 + i * 1733,
                x % 4,
                kind,
                (x >> 20) % (1 << 26) * 4096,
                4096 * (1 + x % 16),
                x % 5000
            )
            .unwrap();
        }
    }
    let measure = |label: &str, path: &Path, format: TraceFormat| {
        let start = Instant::now();
        let mut n = 0u64;
        for r in TraceReader::open(path, format, &defaults()).unwrap() {
            std::hint::black_box(r.unwrap());
            n += 1;
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{label}: {n} records in {:.3} s = {:.2} M records/s",
            secs,
            n as f64 / secs / 1e6
        );
    };
    measure("msr 1M lines", &path, TraceFormat::Msr);
    let native = std::env::temp_dir().join("zombiesim-msr-1m.native");
    let mut w = TraceWriter::create(&native, TraceFormat::Native).unwrap();
    for r in TraceReader::open(&path, TraceFormat::Msr, &defaults()).unwrap() {
        let mut r = r.unwrap();
        r.device %= 4;
        w.write(&r).unwrap();
    }
    w.close().unwrap();
    measure("native 1M records", &native, TraceFormat::Native);
    let gz = sample("captures/fio-pareto/fio_pareto_iolog_full_15s.txt.gz");
    measure("fio 1.8 MB gz", &gz, TraceFormat::Fio);
}

#[test]
fn readers_and_writers_can_move_between_threads() {
    fn send<T: Send>(_: &T) {}
    let reader = read_str(TraceFormat::Msr, b"", &defaults());
    send(&reader);
    let out: Box<dyn Write + Send> = Box::new(Vec::new());
    let writer = TraceWriter::new(TraceFormat::Fio, out);
    send(&writer);
    writer.finish().unwrap();
    send(&Remapper::new(RemapMode::Compact, 1 << 20, 4096).unwrap());
}
