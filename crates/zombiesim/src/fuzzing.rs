//! Fuzz harness: one entry point per input parser, for the cargo-fuzz targets in `fuzz/`
//! and for the corpus replay test (`tests/fuzz_corpus.rs`). Not part of the API.
//!
//! Each function takes arbitrary bytes, drives one parser over them to the end and
//! ignores the errors it returns; a panic, a hang or an allocation out of proportion to
//! the input is a bug in the parser (fix it there, not here). Inputs longer than
//! [`MAX_INPUT`] bytes are ignored, so that work stays bounded by the input.
//!
//! | target | what the bytes are |
//! |---|---|
//! | `trace_<format>` | a trace file of that format (`native`: version 1 or 2) |
//! | `import_capture` | `uptime_start.txt`, `extents.txt`, `inodes.txt`, `pagecache_dirty.csv`, `device_writes_hashed.csv`, separated by NUL bytes |
//! | `import_wal` | pg_waldump text, `extents.txt`, the writes' native trace, separated by NUL bytes |
//! | `import_sqlite` | the event log, then (after a NUL byte, if any) the shim log |
//! | `import_extents` | `extents.txt` |
//! | `config_toml` | a configuration file (TOML) |
//! | `config_set` | `key=value` overrides, one a line |
//! | `workload_spec` | a workload specification (`NAME:key=value,...`) |
//!
//! In debug builds the harness also checks the error convention: an error from a trace
//! reader or an importer names its file and a line (`file:N: reason`, an I/O error
//! `reading line N`), a configuration error names the file or the key.

use crate::config::Config;
use crate::error::Error;
use crate::import::{self, Extents, ImportReport};
use crate::trace::{OnError, ReadOptions, TraceFormat, TraceReader};
use crate::workload::WorkloadSpec;
use std::io::Cursor;

/// Inputs longer than this are ignored (libFuzzer is run with `-max_len` equal to it).
pub const MAX_INPUT: usize = 64 * 1024;

/// The name files read from memory have in errors.
const NAME: &str = "fuzz-input";

/// A harness function.
pub type Target = fn(&[u8]);

/// Every target: its name (the cargo-fuzz binary and the corpus folder) and its function.
pub const TARGETS: &[(&str, Target)] = &[
    ("trace_msr", trace_msr),
    ("trace_spc", trace_spc),
    ("trace_disksim", trace_disksim),
    ("trace_fio", trace_fio),
    ("trace_blkparse", trace_blkparse),
    ("trace_native", trace_native),
    ("trace_fiu", trace_fiu),
    ("trace_pgbench", trace_pgbench),
    ("trace_nbdkit", trace_nbdkit),
    ("import_capture", import_capture),
    ("import_wal", import_wal),
    ("import_sqlite", import_sqlite),
    ("import_extents", import_extents),
    ("config_toml", config_toml),
    ("config_set", config_set),
    ("workload_spec", workload_spec),
];

/// MSR Cambridge CSV.
pub fn trace_msr(data: &[u8]) {
    trace(TraceFormat::Msr, data);
}

/// UMass / SPC CSV.
pub fn trace_spc(data: &[u8]) {
    trace(TraceFormat::Spc, data);
}

/// DiskSim ASCII.
pub fn trace_disksim(data: &[u8]) {
    trace(TraceFormat::Disksim, data);
}

/// fio iolog v2 / v3.
pub fn trace_fio(data: &[u8]) {
    trace(TraceFormat::Fio, data);
}

/// blkparse text.
pub fn trace_blkparse(data: &[u8]) {
    trace(TraceFormat::Blkparse, data);
}

/// The native binary format, versions 1 and 2 (host events, content values).
pub fn trace_native(data: &[u8]) {
    trace(TraceFormat::Native, data);
}

/// FIU IODedup (MD5 per request).
pub fn trace_fiu(data: &[u8]) {
    trace(TraceFormat::Fiu, data);
}

/// Hashed device-write CSV (pgbench captures).
pub fn trace_pgbench(data: &[u8]) {
    trace(TraceFormat::PgbenchHashed, data);
}

/// nbdkit hash log.
pub fn trace_nbdkit(data: &[u8]) {
    trace(TraceFormat::NbdkitHashlog, data);
}

/// Reads `data` as a trace of `format` to the end, once stopping at the first error and
/// once skipping malformed lines.
fn trace(format: TraceFormat, data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    for on_error in [OnError::Stop, OnError::Skip] {
        let opts = ReadOptions {
            on_error,
            ..ReadOptions::default()
        };
        let input = Box::new(Cursor::new(data.to_vec()));
        let mut reader = TraceReader::from_reader(NAME, input, format, &opts)
            .expect("the default read options are valid");
        if let Err(e) = reader.native_header() {
            check_trace_error(format, &e);
        }
        let mut records = 0u64;
        while let Some(item) = reader.next() {
            match item {
                Ok(rec) => {
                    records += 1;
                    assert!(
                        rec.offset.checked_add(rec.size).is_some(),
                        "a record ending beyond 2^64 bytes passed: {rec}"
                    );
                    let _ = reader.values();
                }
                Err(e) => {
                    check_trace_error(format, &e);
                    if on_error == OnError::Stop {
                        assert!(reader.next().is_none(), "the reader goes on after an error");
                    }
                }
            }
        }
        assert_eq!(reader.records(), records);
        let _ = reader.skipped_summary();
    }
}

/// A trace reader's error names the input and a line (a record, for the native format,
/// whose header is line 0).
fn check_trace_error(format: TraceFormat, e: &Error) {
    if !cfg!(debug_assertions) {
        return;
    }
    match e {
        Error::Input { file, line, .. } => {
            assert_eq!(file, NAME, "{e}");
            assert!(format.is_binary() || *line >= 1, "no line in `{e}`");
            assert!(
                e.to_string().starts_with(&format!("{NAME}:{line}: ")),
                "{e}"
            );
        }
        other => panic!("a trace reader failed with something else than a line: {other}"),
    }
}

/// Splits `data` at NUL bytes into `N` inputs (missing ones empty; the last one keeps any
/// further NUL bytes, e.g. a binary trace).
fn sections<const N: usize>(data: &[u8]) -> ([&[u8]; N], usize) {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut n = 0;
    for (i, part) in data.splitn(N, |&b| b == 0).enumerate() {
        out[i] = part;
        n += 1;
    }
    (out, n)
}

/// The capture importer (`zombiesim trace import-capture`): clock reference, extents,
/// inode list, page-cache dirty log, hashed device writes and trims, separated by NUL
/// bytes (an empty inode list or trim log stands for none).
pub fn import_capture(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let ([clock, extents, inodes, dirty, writes, trims], _) = sections::<6>(data);
    let inodes = (!inodes.is_empty()).then_some(inodes);
    let trims = (!trims.is_empty()).then_some(trims);
    // Placed by file, so that the identifiers' path is fuzzed too.
    let result = import::import_capture_in_memory(
        clock,
        extents,
        inodes,
        dirty,
        writes,
        trims,
        None,
        import::CapturePlacement::File { ids: 8 },
    );
    check_import(
        result,
        &[
            "uptime_start.txt",
            "extents.txt",
            "inodes.txt",
            "pagecache_dirty.csv",
            "device_writes_hashed.csv",
            "device_trims.csv",
        ],
    );
}

/// The WAL importer (`zombiesim trace import-wal`): pg_waldump text, extents and the
/// writes' native trace, separated by NUL bytes.
pub fn import_wal(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let ([waldump, extents, writes], _) = sections::<3>(data);
    let result = import::import_wal_in_memory(waldump, writes, extents);
    check_import(result, &["waldump.txt", "extents.txt", "writes.bin"]);
}

/// The SQLite importer (`zombiesim trace import-sqlite`): the WAL event log, then the
/// shim log after a NUL byte (no NUL byte: no shim log).
pub fn import_sqlite(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let ([events, shim], n) = sections::<2>(data);
    let shim = (n == 2).then_some(shim);
    let result = import::import_sqlite_in_memory(events, shim);
    check_import(result, &["sqlite_wal_events.csv", "sqlite_hashwrite.log"]);
}

/// An import either fails naming a file of `inputs` (or its output) and a line, or
/// writes a notified trace that reads back whole.
fn check_import(result: crate::error::Result<(ImportReport, Vec<u8>)>, inputs: &[&str]) {
    match result {
        Ok((report, bytes)) => {
            let input = Box::new(Cursor::new(bytes));
            let reader = TraceReader::from_reader(
                "<memory>",
                input,
                TraceFormat::Native,
                &ReadOptions::default(),
            )
            .expect("the default read options are valid");
            let mut records = 0;
            for rec in reader {
                if let Err(e) = rec {
                    panic!("an import wrote a trace that does not read back: {e}");
                }
                records += 1;
            }
            assert_eq!(records, report.records, "records written and read back");
        }
        Err(e) => {
            if !cfg!(debug_assertions) {
                return;
            }
            match &e {
                Error::Input { file, line, .. } => {
                    assert!(
                        inputs.contains(&file.as_str()) || file == "<memory>",
                        "an import error names an unknown file: {e}"
                    );
                    assert!(e.to_string().starts_with(&format!("{file}:{line}: ")));
                }
                Error::Io { path, reason } => {
                    assert!(inputs.contains(&path.as_str()), "{e}");
                    assert!(reason.contains("line "), "no line in `{e}`");
                }
                other => panic!("an import failed with something else than a line: {other}"),
            }
        }
    }
}

/// `extents.txt` (`filefrag -e -b4096` output), then lookups both ways.
pub fn import_extents(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    match Extents::from_lines(import::memory_lines("extents.txt", data)) {
        Ok(x) => {
            let probes = [0, 1, 4095, 1 << 20, (1 << 52) - 1, u64::MAX];
            for file in x.file_names() {
                assert!(x.has_file(file));
                for page in probes {
                    // (Overlapping extents, as shared blocks make, may map a block back
                    // to no page: `page_of` looks at the extent starting last before it.)
                    if let Some(block) = x.block_of(file, page) {
                        let _ = x.page_of(block);
                    }
                }
            }
            for block in probes {
                let _ = x.page_of(block);
            }
            let _ = (x.files(), x.unplaced());
        }
        Err(e) => {
            if cfg!(debug_assertions) {
                assert!(
                    matches!(&e, Error::Input { file, line, .. } if file == "extents.txt" && *line >= 1)
                        || matches!(&e, Error::Io { reason, .. } if reason.contains("line ")),
                    "no line in `{e}`"
                );
            }
        }
    }
}

/// A configuration file (`--config FILE`); a configuration it accepts must print as
/// TOML that reads back.
pub fn config_toml(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let text = String::from_utf8_lossy(data);
    match Config::from_toml_str(&text, "fuzz.toml") {
        Ok(cfg) => round_trip(&cfg),
        Err(e) => check_config_error(&e),
    }
}

/// `--set key=value` overrides, one a line, applied at once to the default preset.
pub fn config_set(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let text = String::from_utf8_lossy(data);
    let pairs: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect();
    let mut cfg = Config::preset("default").expect("the default preset loads");
    match cfg.set_many(&pairs) {
        Ok(_) => round_trip(&cfg),
        Err(e) => check_config_error(&e),
    }
    if let Some((key, _)) = pairs.first() {
        let _ = cfg.get(key);
    }
}

fn round_trip(cfg: &Config) {
    let text = cfg.to_toml();
    if let Err(e) = Config::from_toml_str(&text, "round-trip") {
        panic!("an accepted configuration does not read back: {e}\n{text}");
    }
}

/// A configuration error names the file (and line) or the key (as given: `""` too).
fn check_config_error(e: &Error) {
    if !cfg!(debug_assertions) {
        return;
    }
    match e {
        Error::Input { file, .. } => assert_eq!(file, "fuzz.toml", "{e}"),
        Error::Config { .. } => {}
        other => panic!("a configuration failed with something else: {other}"),
    }
}

/// A workload specification (`--workload NAME:key=value,...`).
pub fn workload_spec(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let text = String::from_utf8_lossy(data);
    match WorkloadSpec::parse(&text) {
        Ok(spec) => {
            let again = WorkloadSpec::parse(spec.as_str());
            assert!(
                again.is_ok(),
                "a parsed spec does not parse again: {again:?}"
            );
        }
        Err(e) => {
            if cfg!(debug_assertions) {
                assert!(
                    matches!(e, Error::Workload { .. }),
                    "a workload failed with something else: {e}"
                );
            }
        }
    }
}
