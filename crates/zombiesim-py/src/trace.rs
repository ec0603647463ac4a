//! Trace functions of `zombiesim._core`: replay, statistics, conversion.

use crate::config::PyConfig;
use crate::detached;
use crate::errors::IntoPy;
use crate::warm::PyPreconditionCache;
use pyo3::prelude::*;
use std::io::Write;
use zombiesim::trace::TraceRecord;
use zombiesim::trace::{
    NativeHeader, OnError, ReadOptions, RemapMode, TraceCache, TraceFormat, TraceReader,
    TraceStats, TraceWriter,
};
use zombiesim::workload::TraceSpec;
use zombiesim::{Phase, Progress, RunOptions};

/// Records from a reader, reporting progress (records read) every ~100 ms through
/// `tick`; stops early when `tick` says so (Ctrl-C or the callback).
struct Ticking<'a, I> {
    inner: I,
    tick: &'a mut dyn FnMut(&Progress) -> bool,
    records: u64,
    /// When progress was last reported (`None`: not yet; the first report comes at
    /// record 4096 whatever the time, so a callback always hears at least once).
    last: Option<std::time::Instant>,
    stopped: bool,
}

impl<'a, I> Ticking<'a, I> {
    fn new(inner: I, tick: &'a mut dyn FnMut(&Progress) -> bool) -> Self {
        Ticking {
            inner,
            tick,
            records: 0,
            last: None,
            stopped: false,
        }
    }
}

impl<I: Iterator<Item = zombiesim::Result<TraceRecord>>> Iterator for Ticking<'_, I> {
    type Item = zombiesim::Result<TraceRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stopped {
            return None;
        }
        self.records += 1;
        let due = self.last.is_none_or(|t| t.elapsed().as_millis() >= 100);
        if self.records.is_multiple_of(4096) && due {
            self.last = Some(std::time::Instant::now());
            let p = Progress {
                phase: Phase::Measure,
                fraction: None,
                write_pages: self.records,
            };
            if !(self.tick)(&p) {
                self.stopped = true;
                return None;
            }
        }
        self.inner.next()
    }
}

/// The run stopped before the end of the trace: raise `KeyboardInterrupt`.
fn interrupted<T>(value: (T, bool)) -> PyResult<T> {
    match value {
        (_, true) => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "interrupted",
        )),
        (v, false) => Ok(v),
    }
}

fn options(
    device: Option<u32>,
    on_error: &str,
    time_scale: f64,
    time_offset_s: f64,
) -> PyResult<ReadOptions> {
    if !time_offset_s.is_finite() {
        return Err(crate::errors::to_py(zombiesim::Error::config(
            "time_offset",
            "must be a finite number of seconds",
        )));
    }
    let opts = ReadOptions {
        device,
        on_error: on_error.parse::<OnError>().py()?,
        time_scale,
        time_offset_ns: (time_offset_s * 1e9).round() as i64,
        ..ReadOptions::default()
    };
    opts.validate().py()?;
    Ok(opts)
}

fn format(name: &str) -> PyResult<TraceFormat> {
    name.parse::<TraceFormat>().py()
}

/// Replay a block trace; returns the report as JSON.
#[pyfunction]
#[pyo3(signature = (config, path, format_name, seed = 0, verify = false, reproducible = false,
    device = None, on_error = "stop", remap = "none", limit = None, time_scale = 1.0,
    time_offset_s = 0.0, max_memory = None, force_unsafe = false, inline_trace = false,
    trace_cache = None, precondition_cache = None, progress = None, victim = None,
    placement = None, placement_batch = 4096))]
#[allow(clippy::too_many_arguments)]
pub fn simulate_trace(
    py: Python<'_>,
    config: &PyConfig,
    path: &str,
    format_name: &str,
    seed: u64,
    verify: bool,
    reproducible: bool,
    device: Option<u32>,
    on_error: &str,
    remap: &str,
    limit: Option<u64>,
    time_scale: f64,
    time_offset_s: f64,
    max_memory: Option<u64>,
    force_unsafe: bool,
    inline_trace: bool,
    trace_cache: Option<&str>,
    precondition_cache: Option<PyRef<'_, PyPreconditionCache>>,
    progress: Option<Py<PyAny>>,
    victim: Option<Py<PyAny>>,
    placement: Option<Py<PyAny>>,
    placement_batch: usize,
) -> PyResult<String> {
    let spec = TraceSpec {
        path: path.into(),
        format: format(format_name)?,
        options: options(device, on_error, time_scale, time_offset_s)?,
        remap: remap.parse::<RemapMode>().py()?,
        limit,
    };
    let cfg = config.inner.clone();
    let mut opts = RunOptions {
        seed,
        verify,
        reproducible,
        max_memory,
        force_unsafe,
        inline_trace,
        trace_cache: TraceCache::from_setting(trace_cache).py()?,
        precondition_cache: precondition_cache.map(|c| c.inner.clone()),
        external: Default::default(),
    };
    let policies =
        crate::external::PyPolicies::attach(py, &mut opts, victim, placement, placement_batch)?;
    let report = crate::detached_with(py, &progress, Some(&policies), |p| {
        zombiesim::simulate_trace(&cfg, &spec, &opts, p)
    })?;
    Ok(report.to_json())
}

/// Statistics of a trace as JSON (footprint, mix, sizes, inter-arrival, write skew),
/// with the count of skipped malformed lines.
#[pyfunction]
#[pyo3(signature = (path, format_name, page_size = 4096, device = None, on_error = "stop",
    time_scale = 1.0, time_offset_s = 0.0, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn trace_stats(
    py: Python<'_>,
    path: &str,
    format_name: &str,
    page_size: u64,
    device: Option<u32>,
    on_error: &str,
    time_scale: f64,
    time_offset_s: f64,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let fmt = format(format_name)?;
    let opts = options(device, on_error, time_scale, time_offset_s)?;
    interrupted(detached(py, &progress, |tick| {
        let mut reader = TraceReader::open(path, fmt, &opts)?;
        let mut records = Ticking::new(&mut reader, tick);
        let stats = TraceStats::compute(&mut records, page_size)?;
        let stopped = records.stopped;
        let mut value = serde_json::to_value(&stats).expect("stats serialize");
        value["skipped_lines"] = reader.skipped().into();
        value["skipped_examples"] = reader
            .skipped_examples()
            .iter()
            .map(|s| format!("{}: {}", s.line, s.reason))
            .collect::<Vec<_>>()
            .into();
        value["path"] = path.into();
        value["format"] = fmt.name().into();
        Ok((value.to_string(), stopped))
    })?)
}

/// Convert a trace between formats; `output = None` writes to standard output.
/// Returns the number of records written and, as JSON, what a lossy conversion left
/// out (`lossy`: what the output format cannot hold is dropped and counted, not refused).
#[pyfunction]
#[pyo3(signature = (input, from_format, output, to_format, device = None, on_error = "stop",
    time_scale = 1.0, time_offset_s = 0.0, progress = None, lossy = false))]
#[allow(clippy::too_many_arguments)]
pub fn trace_convert(
    py: Python<'_>,
    input: &str,
    from_format: &str,
    output: Option<&str>,
    to_format: &str,
    device: Option<u32>,
    on_error: &str,
    time_scale: f64,
    time_offset_s: f64,
    progress: Option<Py<PyAny>>,
    lossy: bool,
) -> PyResult<(u64, String)> {
    let (from, to) = (format(from_format)?, format(to_format)?);
    // Native holds everything: nothing is ever left out.
    let lossy = lossy && to != TraceFormat::Native;
    let opts = options(device, on_error, time_scale, time_offset_s)?;
    interrupted(detached(py, &progress, |tick| {
        let mut reader = TraceReader::open(input, from, &opts)?;
        // What the output's header declares: the input's host events, values and
        // placement identifiers.
        let header = match reader.native_header()? {
            Some(h) => NativeHeader::new(h.host_events, h.values).with_placement(h.placement),
            None => NativeHeader::new(false, from.has_values()),
        };
        fn declare<W: Write>(
            w: TraceWriter<W>,
            to: TraceFormat,
            header: NativeHeader,
        ) -> zombiesim::Result<TraceWriter<W>> {
            if to == TraceFormat::Native {
                w.declare(header)
            } else {
                Ok(w)
            }
        }
        match output {
            Some(path) => {
                let mut w = declare(TraceWriter::create(path, to)?, to, header)?;
                let (stopped, dropped) = copy_records(&mut reader, &mut w, tick, lossy)?;
                let n = w.records();
                w.close()?;
                Ok(((n, dropped.json()), stopped))
            }
            None => {
                let out = std::io::BufWriter::new(std::io::stdout().lock());
                let mut w = declare(TraceWriter::new(to, out).named("<stdout>"), to, header)?;
                let (stopped, dropped) = copy_records(&mut reader, &mut w, tick, lossy)?;
                let n = w.records();
                let mut out = w.finish()?;
                out.flush().map_err(|e| zombiesim::Error::Io {
                    path: "<stdout>".into(),
                    reason: e.to_string(),
                })?;
                Ok(((n, dropped.json()), stopped))
            }
        }
    })?)
}

/// What a lossy conversion left out.
#[derive(Default)]
struct Dropped {
    host_events: u64,
    values: u64,
    placement_ids: u64,
    /// Records the output format cannot hold at all (a trim into msr, ...).
    records: u64,
}

impl Dropped {
    fn json(&self) -> String {
        serde_json::json!({
            "host_events": self.host_events,
            "values": self.values,
            "placement_ids": self.placement_ids,
            "records": self.records,
        })
        .to_string()
    }
}

/// Copies every record (with its content values and placement identifier) from
/// `reader` to `w`, reporting progress; true when stopped early. With `lossy`, what
/// `w`'s format cannot hold is left out and counted instead of refused: host events,
/// content values, placement identifiers, records of an operation it has no word for.
fn copy_records<W: Write>(
    reader: &mut TraceReader,
    w: &mut TraceWriter<W>,
    tick: &mut dyn FnMut(&Progress) -> bool,
    lossy: bool,
) -> zombiesim::Result<(bool, Dropped)> {
    let mut dropped = Dropped::default();
    let mut records = Ticking::new(reader, tick);
    while let Some(rec) = records.next() {
        let mut rec = rec?;
        if !lossy {
            w.write_values(&rec, records.inner.values())?;
            continue;
        }
        if rec.op.is_host_event() {
            dropped.host_events += 1;
            continue;
        }
        dropped.values += u64::from(!records.inner.values().is_empty());
        dropped.placement_ids += u64::from(rec.placement.take().is_some());
        match w.write(&rec) {
            Ok(()) => {}
            // Refused by the format (an I/O failure is an `Io` error and stops).
            Err(zombiesim::Error::Input { .. }) => dropped.records += 1,
            Err(e) => return Err(e),
        }
    }
    Ok((records.stopped, dropped))
}

/// Import a capture folder (pgbench-ext4 layout) into a notified native trace at
/// `output`, its writes placed by `placement` (`none`, `file`, `file:N`, `hint`);
/// returns the import report as JSON.
#[pyfunction]
#[pyo3(signature = (folder, output, placement = "none"))]
pub fn trace_import_capture(
    py: Python<'_>,
    folder: &str,
    output: &str,
    placement: &str,
) -> PyResult<String> {
    let placement: zombiesim::import::CapturePlacement = placement.parse().py()?;
    py.detach(|| {
        zombiesim::import::import_capture_placed(folder.as_ref(), output.as_ref(), placement)
    })
    .map(|r| serde_json::to_string(&r).expect("reports serialize"))
    .py()
}

/// Check a capture placement (`none`, `file`, `file:N`, `hint`) before a capture runs.
#[pyfunction]
pub fn trace_check_capture_placement(placement: &str) -> PyResult<()> {
    placement
        .parse::<zombiesim::import::CapturePlacement>()
        .map(|_| ())
        .py()
}

/// Join a pg_waldump dump to a notified trace of the same capture; returns the import
/// report as JSON.
#[pyfunction]
#[pyo3(signature = (waldump, writes, output, extents = None))]
pub fn trace_import_wal(
    py: Python<'_>,
    waldump: &str,
    writes: &str,
    output: &str,
    extents: Option<&str>,
) -> PyResult<String> {
    py.detach(|| {
        zombiesim::import::import_wal(
            waldump.as_ref(),
            writes.as_ref(),
            output.as_ref(),
            extents.map(std::path::Path::new),
        )
    })
    .map(|r| serde_json::to_string(&r).expect("reports serialize"))
    .py()
}

/// Write a synthetic notified trace (`spec_json`: the fields of `NotifiedSpec`) to
/// `output`; returns the records written.
#[pyfunction]
pub fn trace_generate_notified(py: Python<'_>, output: &str, spec_json: &str) -> PyResult<u64> {
    let spec: zombiesim::trace::NotifiedSpec = serde_json::from_str(spec_json)
        .map_err(|e| zombiesim::Error::config("notified", format!("bad generator settings: {e}")))
        .py()?;
    py.detach(|| {
        let w = TraceWriter::create(output, TraceFormat::Native)?;
        let (n, out) = zombiesim::trace::generate_notified(&spec, w)?;
        out.finish().map_err(|e| zombiesim::Error::Io {
            path: output.to_string(),
            reason: e.to_string(),
        })?;
        Ok(n)
    })
    .py()
}

/// Import a SQLite WAL capture folder (WAL frame log, optionally the hashing shim's log)
/// into a notified native trace at `output`; returns the import report as JSON.
#[pyfunction]
pub fn trace_import_sqlite(py: Python<'_>, folder: &str, output: &str) -> PyResult<String> {
    py.detach(|| zombiesim::import::import_sqlite(folder.as_ref(), output.as_ref()))
        .map(|r| serde_json::to_string(&r).expect("reports serialize"))
        .py()
}

/// `(name, description)` of every trace format.
#[pyfunction]
pub fn trace_formats() -> Vec<(&'static str, &'static str)> {
    TraceFormat::ALL
        .iter()
        .map(|f| (f.name(), f.description()))
        .collect()
}

/// The names of the formats `trace_convert` can write.
#[pyfunction]
pub fn writable_trace_formats() -> Vec<&'static str> {
    TraceFormat::ALL
        .iter()
        .filter(|f| f.is_writable())
        .map(|f| f.name())
        .collect()
}

/// Register the trace functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_trace, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    m.add_function(wrap_pyfunction!(trace_import_capture, m)?)?;
    m.add_function(wrap_pyfunction!(trace_check_capture_placement, m)?)?;
    m.add_function(wrap_pyfunction!(trace_import_wal, m)?)?;
    m.add_function(wrap_pyfunction!(trace_import_sqlite, m)?)?;
    m.add_function(wrap_pyfunction!(trace_generate_notified, m)?)?;
    m.add_function(wrap_pyfunction!(trace_formats, m)?)?;
    m.add_function(wrap_pyfunction!(writable_trace_formats, m)?)?;
    Ok(())
}
