use super::*;
use crate::trace::OnError;
use crate::trace::ReadAhead;
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh directory under the system's temporary one, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "zombiesim-cache-test-{}-{what}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        fs::write(&path, text).unwrap();
        path
    }

    /// A cache of at most `max_bytes` in a directory of its own here.
    fn cache(&self, max_bytes: u64) -> TraceCache {
        TraceCache::new(self.0.join("c"), max_bytes)
    }
}

/// Read options that skip malformed lines (`MSR` below has two).
fn skip_malformed() -> ReadOptions {
    ReadOptions {
        on_error: OnError::Skip,
        ..ReadOptions::default()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Everything a replay sees of a reader, record by record: the record, its values, the
/// skipped count and the examples as of it; and at the end, what ended it.
#[derive(Debug, PartialEq)]
struct Seen {
    steps: Vec<(TraceRecord, Vec<u64>, u64, Vec<SkippedLine>)>,
    end: (Option<String>, u64, Vec<SkippedLine>),
}

/// Everything a replay sees, read through a [`ReadAhead`] (inline or on a thread).
fn drain(mut r: ReadAhead) -> Seen {
    let mut steps = Vec::new();
    loop {
        match r.next() {
            Some(Ok(rec)) => steps.push((
                rec,
                r.values().to_vec(),
                r.skipped(),
                r.skipped_examples().to_vec(),
            )),
            end => {
                let error = end.map(|e| e.unwrap_err().to_string());
                return Seen {
                    steps,
                    end: (error, r.skipped(), r.skipped_examples().to_vec()),
                };
            }
        }
    }
}

fn drain_reader(r: TraceReader) -> Seen {
    drain(ReadAhead::new(r, false).unwrap())
}

fn drain_cached(c: CachedTrace) -> Seen {
    drain(ReadAhead::cached(c, false).unwrap())
}

/// `path` opened as `format` with `opts`, teed into a recorder of `cache`.
fn recording(
    cache: &TraceCache,
    path: &Path,
    format: TraceFormat,
    opts: &ReadOptions,
) -> TraceReader {
    let mut r = TraceReader::open(path, format, opts).unwrap();
    r.tee(Box::new(cache.recorder(path, format, opts).unwrap()));
    r
}

fn entries(cache: &TraceCache) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(&cache.dir)
        .map(|l| {
            l.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Read `path` directly, then through a recorder (which must see the same and write an
/// entry), then from the entry: all three alike.
fn round_trip(path: &Path, format: TraceFormat, opts: &ReadOptions) -> Seen {
    let scratch = Scratch::new("cache");
    let cache = scratch.cache(DEFAULT_MAX_BYTES);
    let direct = drain_reader(TraceReader::open(path, format, opts).unwrap());
    assert!(direct.end.0.is_none(), "{:?}", direct.end);
    assert!(cache.lookup(path, format, opts).is_none());
    assert_eq!(drain_reader(recording(&cache, path, format, opts)), direct);
    let names = entries(&cache);
    assert_eq!(names.len(), 2, "{names:?}");
    let cached = cache.lookup(path, format, opts).expect("an entry");
    assert_eq!(cached.name(), path.display().to_string());
    assert_eq!(cached.format(), format);
    let threaded = cache.lookup(path, format, opts).expect("an entry");
    // A device number beyond 16 bits is cached as 0 (it was only for the filter).
    let mut expected = drain_reader(TraceReader::open(path, format, opts).unwrap());
    for step in &mut expected.steps {
        if step.0.device > u32::from(u16::MAX) {
            step.0.device = 0;
        }
    }
    assert_eq!(drain_cached(cached), expected);
    assert_eq!(drain(ReadAhead::cached(threaded, true).unwrap()), expected);
    direct
}

const MSR: &str = "\
128166372003061629,src1,0,Write,3173167104,36864,3126
128166372003061629,src1,1,Read,4096,4096,10
this line is not a record
128166372016382155,src1,0,Read,3173167104,4096,2000
128166372016382155,src1,0,Flush,0,0,2000
also not a record
128166372026382155,src1,0,Write,8192,8192,2000
";

#[test]
fn text_traces_replay_alike_from_the_cache() {
    let scratch = Scratch::new("formats");
    let msr = scratch.file("t.csv", MSR);
    let skip = skip_malformed();
    let seen = round_trip(&msr, TraceFormat::Msr, &skip);
    // MSR has no flush: that line is malformed too.
    assert_eq!(seen.steps.len(), 4);
    assert_eq!(seen.end.1, 3, "the three malformed lines skipped");
    assert_eq!(seen.steps[0].2, 0);
    assert_eq!(
        seen.steps[2].2, 1,
        "the first malformed line came before record 3"
    );
    assert_eq!(seen.steps[3].2, 3);
    // The device filter, a time offset and a scale.
    let shaped = ReadOptions {
        device: Some(0),
        time_offset_ns: 5_000,
        time_scale: 0.5,
        ..skip.clone()
    };
    let seen = round_trip(&msr, TraceFormat::Msr, &shaped);
    assert_eq!(seen.steps.len(), 3);
    assert_eq!(seen.steps[0].0.time_ns, 5_000);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let default = ReadOptions::default();
    round_trip(&data.join("spc_synthetic.spc"), TraceFormat::Spc, &default);
    round_trip(
        &data.join("disksim_synthetic.trace"),
        TraceFormat::Disksim,
        &default,
    );
    // Device numbers beyond 16 bits (major << 20 | minor), filtered before caching.
    let seen = round_trip(
        &data.join("blkparse_synthetic.txt"),
        TraceFormat::Blkparse,
        &default,
    );
    assert!(!seen.steps.is_empty());
    // A hashed format: every write carries its content values.
    let fiu = scratch.file(
        "t.fiu",
        "1000 1 p 8 8 W 8 0 0123456789abcdef0123456789abcdef\n\
         2000 1 p 16 8 W 8 0 fedcba9876543210fedcba9876543210\n\
         3000 1 p 8 8 R 8 0 0123456789abcdef0123456789abcdef\n",
    );
    let seen = round_trip(&fiu, TraceFormat::Fiu, &default);
    assert_eq!(seen.steps[0].1.len(), 1);
}

#[test]
fn only_a_trace_read_to_its_end_is_cached() {
    let scratch = Scratch::new("end");
    let cache = scratch.cache(DEFAULT_MAX_BYTES);
    let msr = scratch.file("t.csv", MSR);
    let skip = skip_malformed();
    // Dropped after two records: nothing is left behind.
    let mut r = recording(&cache, &msr, TraceFormat::Msr, &skip);
    r.next().unwrap().unwrap();
    r.next().unwrap().unwrap();
    drop(r);
    assert!(entries(&cache).is_empty(), "{:?}", entries(&cache));
    // Stopped by a malformed line: nothing either.
    let stop = ReadOptions::default();
    let mut r = recording(&cache, &msr, TraceFormat::Msr, &stop);
    assert!(r.any(|x| x.is_err()));
    assert!(entries(&cache).is_empty(), "{:?}", entries(&cache));
    // Native traces are not cached, nor what is not a regular file.
    assert!(cache.recorder(&msr, TraceFormat::Native, &stop).is_none());
    assert!(cache
        .recorder(&scratch.0, TraceFormat::Msr, &stop)
        .is_none());
    #[cfg(unix)]
    assert!(cache
        .recorder(Path::new("/dev/null"), TraceFormat::Msr, &stop)
        .is_none());
}

#[test]
fn an_entry_serves_only_its_file_as_it_was_and_its_options() {
    let scratch = Scratch::new("key");
    let cache = scratch.cache(DEFAULT_MAX_BYTES);
    let msr = scratch.file("t.csv", MSR);
    let skip = skip_malformed();
    let record =
        |opts: &ReadOptions| recording(&cache, &msr, TraceFormat::Msr, opts).for_each(drop);
    record(&skip);
    assert!(cache.lookup(&msr, TraceFormat::Msr, &skip).is_some());
    let other = ReadOptions {
        device: Some(1),
        ..skip.clone()
    };
    assert!(cache.lookup(&msr, TraceFormat::Msr, &other).is_none());
    assert!(cache.lookup(&msr, TraceFormat::Disksim, &skip).is_none());
    // The file changes (another length): a miss, and the next recording replaces it.
    fs::write(&msr, MSR.replace("36864", "4096")).unwrap();
    assert!(cache.lookup(&msr, TraceFormat::Msr, &skip).is_none());
    record(&skip);
    let seen = drain_cached(cache.lookup(&msr, TraceFormat::Msr, &skip).unwrap());
    assert_eq!(seen.steps[0].0.size, 4096);
    // A damaged entry (its records cut short) is a miss, not an error.
    let (_, hash) = TraceCache::key(&msr, TraceFormat::Msr, &skip).unwrap();
    let (path, _) = cache.paths(&hash);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    assert!(cache.lookup(&msr, TraceFormat::Msr, &skip).is_none());
}

#[test]
fn the_least_recently_used_entries_go_first() {
    let scratch = Scratch::new("evict");
    let a = scratch.file("a.csv", MSR);
    let b = scratch.file("b.csv", MSR);
    let skip = skip_malformed();
    // Room for one entry of the four records (16 + 4 × 24 bytes, and the .json).
    let cache = scratch.cache(1200);
    for path in [&a, &b] {
        recording(&cache, path, TraceFormat::Msr, &skip).for_each(drop);
        // The first entry was used a minute ago.
        for name in entries(&cache).iter().filter(|n| n.ends_with(".json")) {
            let f = File::options()
                .append(true)
                .open(cache.dir.join(name))
                .unwrap();
            f.set_modified(SystemTime::now() - Duration::from_secs(60))
                .unwrap();
        }
    }
    assert!(cache.lookup(&a, TraceFormat::Msr, &skip).is_none());
    assert!(cache.lookup(&b, TraceFormat::Msr, &skip).is_some());
    assert_eq!(entries(&cache).len(), 2);
}
