//! A block trace as a workload: records streamed through the remapper into requests.
//!
//! Each record becomes one host request. When remapping splits it into several runs
//! of logical pages, the runs after the first are marked `continued`, so the
//! request is counted, issued and timed once. Flush records become flush requests
//! (no pages; the device writes its buffer back) and are counted apart. Arrival
//! times are the trace's, for open-loop replay.
//!
//! Hashed formats carry one content fingerprint per 4 KiB written: their writes become
//! one-page requests (all but the first `continued`), each with its page's value. A
//! page whose 4 KiB chunk is not aligned to it, or a write whose length is not whole
//! chunks, gets a value derived from the request's hashes and the page's position —
//! different from anything else written, as the page's real content would be.
//!
//! A native trace's writes may carry an NVMe placement identifier (version 3): every
//! request of such a write carries it as its hint's stream ([`WriteHint::stream`]), and
//! the workload [`places`](Workload::places). An FDP device (`fdp.enabled`) places the
//! pages by it, and an identifier it does not have (≥ `fdp.reclaim_groups ×
//! fdp.handles`) is an input error naming the record; any other device carries the
//! identifiers unused.

use super::trace_info::{NotifiedInfo, TraceInfo};
use super::{Op, Request, Workload, WriteHint};
use crate::error::{Error, Result};
use crate::fingerprint::combine;
use crate::trace::cache::Found;
use crate::trace::{
    HostBuffer, MemoryTrace, NativeHeader, PageRun, PlacementCounter, ReadAhead, ReadOptions,
    RemapMode, Remapper, TraceCache, TraceFormat, TraceOp, TraceReader,
};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

/// Where a trace comes from and how to read it.
#[derive(Clone, Debug)]
pub struct TraceSpec {
    pub path: PathBuf,
    pub format: TraceFormat,
    pub options: ReadOptions,
    pub remap: RemapMode,
    /// Stop after this many records (None = the whole trace).
    pub limit: Option<u64>,
}

impl TraceSpec {
    /// A short label for reports: `msr:path`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.format, self.path.display())
    }
}

/// A trace replayed as a workload.
pub struct TraceWorkload {
    spec: TraceSpec,
    /// The trace, read and parsed on a thread of its own (text formats, unless
    /// `read_ahead` is off).
    reader: ReadAhead,
    read_ahead: bool,
    cache: Option<TraceCache>,
    remapper: Remapper,
    pending: VecDeque<Request>,
    records: u64,
    flushes: u64,
    done: bool,
    page_size: u64,
    logical_pages: u64,
    notified: Option<NotifiedInfo>,
    /// The native header (native traces only).
    header: Option<NativeHeader>,
    /// The placement identifiers the device has (`None`: not checked).
    placement_ids: Option<u32>,
    /// The placement identifiers replayed so far.
    placement: PlacementCounter,
    /// The trace held in memory, when it is replayed from there.
    loaded: Option<LoadedTrace>,
}

/// A trace decoded once and held in memory ([`MemoryTrace`]) with its native header:
/// [`TraceWorkload::loaded`] replays it as [`TraceWorkload::open`] replays the file.
#[derive(Clone)]
pub struct LoadedTrace {
    trace: Arc<MemoryTrace>,
    header: Option<NativeHeader>,
}

impl LoadedTrace {
    /// Read the trace `spec` names (through `cache` as a replay would) into memory, up to
    /// its record limit; `None` when it holds more than `max_bytes` or ends in an error.
    pub fn read(
        spec: &TraceSpec,
        page_size: u64,
        cache: Option<&TraceCache>,
        max_bytes: u64,
    ) -> Result<Option<LoadedTrace>> {
        check_page_size(spec, page_size)?;
        let (reader, header) = open_reader(spec, false, cache)?;
        Ok(
            MemoryTrace::read(reader, spec.limit, max_bytes).map(|t| LoadedTrace {
                trace: Arc::new(t),
                header,
            }),
        )
    }
}

/// A hashed format's values are per 4 KiB: only 4 KiB pages take them.
fn check_page_size(spec: &TraceSpec, page_size: u64) -> Result<()> {
    if spec.format.has_values() && page_size != 4096 {
        return Err(Error::config(
            "flash.page_size",
            format!(
                "{page_size}: {} traces carry one content hash per 4 KiB; use 4KiB pages",
                spec.format
            ),
        ));
    }
    Ok(())
}

/// The trace's reader (from the trace cache when it has the records; a miss tees them
/// into it) and its native header.
fn open_reader(
    spec: &TraceSpec,
    read_ahead: bool,
    cache: Option<&TraceCache>,
) -> Result<(ReadAhead, Option<NativeHeader>)> {
    let found = cache.map(|c| c.find(&spec.path, spec.format, &spec.options));
    Ok(match found {
        Some(Found::Hit(trace)) => (ReadAhead::cached(trace, read_ahead)?, None),
        found => {
            let mut reader = TraceReader::open(&spec.path, spec.format, &spec.options)?;
            let header = reader.native_header()?;
            if let Some(Found::Miss(Some(recorder))) = found {
                reader.tee(Box::new(recorder));
            }
            (ReadAhead::new(reader, read_ahead)?, header)
        }
    })
}

impl TraceWorkload {
    /// Open the trace for a device of `logical_pages` pages of `page_size` bytes.
    /// `placement_ids`: how many placement identifiers the device has (an FDP device's
    /// `reclaim_groups × handles`); a write carrying another is an input error. `None`
    /// carries them unchecked. `read_ahead`: a text trace is parsed on a thread of its
    /// own ([`ReadAhead`]); off, on the caller's. `cache`: a text trace's records come
    /// from this trace cache when it has them, and are written into it when it does
    /// not (and the trace is read to its end); the replay is the same either way.
    pub fn open(
        spec: &TraceSpec,
        logical_pages: u64,
        page_size: u64,
        placement_ids: Option<u32>,
        read_ahead: bool,
        cache: Option<&TraceCache>,
    ) -> Result<Self> {
        check_page_size(spec, page_size)?;
        let (reader, header) = open_reader(spec, read_ahead, cache)?;
        Self::of(
            spec,
            reader,
            header,
            logical_pages,
            page_size,
            placement_ids,
            read_ahead,
            cache,
            None,
        )
    }

    /// Replay `loaded`, the trace `spec` names held in memory, for a device of
    /// `logical_pages` pages of `page_size` bytes: the replay [`TraceWorkload::open`]
    /// gives, without reading the file.
    pub fn loaded(
        spec: &TraceSpec,
        loaded: &LoadedTrace,
        logical_pages: u64,
        page_size: u64,
        placement_ids: Option<u32>,
    ) -> Result<Self> {
        check_page_size(spec, page_size)?;
        let reader = ReadAhead::memory(loaded.trace.clone());
        Self::of(
            spec,
            reader,
            loaded.header,
            logical_pages,
            page_size,
            placement_ids,
            false,
            None,
            Some(loaded.clone()),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn of(
        spec: &TraceSpec,
        reader: ReadAhead,
        header: Option<NativeHeader>,
        logical_pages: u64,
        page_size: u64,
        placement_ids: Option<u32>,
        read_ahead: bool,
        cache: Option<&TraceCache>,
        loaded: Option<LoadedTrace>,
    ) -> Result<Self> {
        Ok(TraceWorkload {
            header,
            reader,
            read_ahead,
            cache: cache.cloned(),
            remapper: Remapper::new(spec.remap, logical_pages * page_size, page_size)?,
            spec: spec.clone(),
            pending: VecDeque::new(),
            records: 0,
            flushes: 0,
            done: false,
            page_size,
            logical_pages,
            notified: None,
            placement_ids,
            placement: PlacementCounter::new(),
            loaded,
        })
    }

    /// The same trace opened again from its start, for the same device.
    fn reopen(&self) -> Result<Self> {
        if let Some(loaded) = &self.loaded {
            return TraceWorkload::loaded(
                &self.spec,
                loaded,
                self.logical_pages,
                self.page_size,
                self.placement_ids,
            );
        }
        TraceWorkload::open(
            &self.spec,
            self.logical_pages,
            self.page_size,
            self.placement_ids,
            self.read_ahead,
            self.cache.as_ref(),
        )
    }

    /// Whether the trace's header declares host events (a notified trace).
    pub fn is_notified(&self) -> bool {
        self.header.is_some_and(|h| h.host_events)
    }

    /// Whether the trace's header declares content values.
    pub fn has_values(&self) -> bool {
        self.spec.format.has_values() || self.header.is_some_and(|h| h.values)
    }

    /// Whether the trace's header declares placement identifiers (native version 3).
    pub fn places(&self) -> bool {
        self.header.is_some_and(|h| h.placement)
    }

    /// What the replay did so far.
    pub fn info(&self) -> TraceInfo {
        TraceInfo {
            path: self.spec.path.display().to_string(),
            format: self.spec.format.to_string(),
            records: self.records,
            flushes: self.flushes,
            skipped_lines: self.reader.skipped(),
            skipped_examples: self
                .reader
                .skipped_examples()
                .iter()
                .map(|s| format!("{}: {}", s.line, s.reason))
                .collect(),
            remap: self.spec.remap.to_string(),
            remapped: self.remapper.stats(),
            device: self.spec.options.device,
            limit: self.spec.limit,
            notified: self.notified,
            placement: self.placement.stats(),
        }
    }

    /// The hint of a write's requests: its placement identifier, checked against the
    /// device's when it has some.
    fn hint(&mut self, placement: Option<u16>) -> Result<WriteHint> {
        let Some(id) = placement else {
            return Ok(WriteHint::NONE);
        };
        if let Some(n) = self.placement_ids.filter(|&n| u32::from(id) >= n) {
            return Err(Error::Input {
                file: self.reader.name().to_string(),
                line: self.reader.line(),
                reason: format!(
                    "placement identifier {id} names no reclaim-unit handle of the device: it \
                     has fdp.reclaim_groups × fdp.handles = {n} (identifiers 0 to {})",
                    n.saturating_sub(1)
                ),
            });
        }
        self.placement.record(placement);
        Ok(WriteHint {
            stream: Some(id),
            lifetime: None,
        })
    }
}

impl Workload for TraceWorkload {
    fn next_request(&mut self) -> Result<Option<Request>> {
        while self.pending.is_empty() && !self.done {
            if self.spec.limit.is_some_and(|n| self.records >= n) {
                self.done = true;
                break;
            }
            let Some(rec) = self.reader.next().transpose()? else {
                self.done = true;
                break;
            };
            self.records += 1;
            let op = match rec.op {
                TraceOp::Flush => {
                    self.flushes += 1;
                    return Ok(Some(Request {
                        op: Op::Flush,
                        lpn: 0,
                        pages: 0,
                        arrival_ns: Some(rec.time_ns),
                        continued: false,
                        value: None,
                        hint: WriteHint::NONE,
                    }));
                }
                TraceOp::Read => Op::Read,
                TraceOp::Write => Op::Write,
                TraceOp::Trim => Op::Trim,
                TraceOp::Dirty | TraceOp::Clean => {
                    let buffer = HostBuffer::from_id(rec.device).ok_or_else(|| Error::Input {
                        file: self.reader.name().to_string(),
                        line: self.reader.line(),
                        reason: format!("host buffer {} is not 0 or 1", rec.device),
                    })?;
                    let n = self.notified.get_or_insert_with(NotifiedInfo::default);
                    if rec.op == TraceOp::Dirty {
                        n.dirty_events += 1;
                        Op::Dirty(buffer)
                    } else {
                        n.clean_events += 1;
                        Op::Clean(buffer)
                    }
                }
            };
            let hint = if op == Op::Write {
                self.hint(rec.placement)?
            } else {
                WriteHint::NONE
            };
            let runs = self.remapper.map(self.records, &rec)?;
            let values = self.reader.values();
            if op == Op::Write && !values.is_empty() && self.page_size == 4096 {
                let aligned = rec.offset % 4096 == 0 && rec.size == values.len() as u64 * 4096;
                let all = values.iter().fold(rec.offset, |a, &v| combine(a, v));
                let mut k = 0usize;
                for run in runs.iter() {
                    for lpn in run.page..run.page + run.count {
                        let value = match values.get(k) {
                            Some(&v) if aligned => v,
                            _ => combine(all, k as u64),
                        };
                        self.pending.push_back(Request {
                            op,
                            lpn,
                            pages: 1,
                            arrival_ns: Some(rec.time_ns),
                            continued: k > 0,
                            value: Some(value),
                            hint,
                        });
                        k += 1;
                    }
                }
                continue;
            }
            let request = |run: &PageRun, continued: bool| Request {
                op,
                lpn: run.page,
                pages: run.count as u32,
                arrival_ns: Some(rec.time_ns),
                continued,
                value: None,
                hint,
            };
            // One run (most records): the request goes out at once, not through the queue.
            if let [run] = runs {
                return Ok(Some(request(run, false)));
            }
            for (i, run) in runs.iter().enumerate() {
                self.pending.push_back(request(run, i > 0));
            }
        }
        Ok(self.pending.pop_front())
    }

    fn progress(&self) -> Option<f64> {
        self.spec.limit.map(|n| {
            if n == 0 {
                1.0
            } else {
                self.records as f64 / n as f64
            }
        })
    }

    fn expected_write_pages(&self) -> Option<u64> {
        None
    }

    fn trace_info(&self) -> Option<TraceInfo> {
        Some(self.info())
    }

    fn is_notified(&self) -> bool {
        self.is_notified()
    }

    fn places(&self) -> bool {
        self.places()
    }

    fn own_writes(&self) -> Result<Option<Box<dyn Workload>>> {
        Ok(Some(Box::new(TraceWrites {
            inner: self.reopen()?,
            since_open: 0,
        })))
    }
}

/// A trace's writes, read again from the start whenever it ends: the writes of
/// `precondition.pattern = "workload"` for a trace (its other records are skipped).
struct TraceWrites {
    inner: TraceWorkload,
    /// Writes since the trace was last opened.
    since_open: u64,
}

impl Workload for TraceWrites {
    fn next_request(&mut self) -> Result<Option<Request>> {
        loop {
            match self.inner.next_request()? {
                Some(r) if r.op == Op::Write => {
                    self.since_open += 1;
                    return Ok(Some(Request {
                        continued: false,
                        ..r
                    }));
                }
                Some(_) => {}
                // The end: again from the start, unless a whole pass wrote nothing.
                None if self.since_open == 0 => return Ok(None),
                None => {
                    self.inner = self.inner.reopen()?;
                    self.since_open = 0;
                }
            }
        }
    }

    fn progress(&self) -> Option<f64> {
        None
    }

    fn expected_write_pages(&self) -> Option<u64> {
        None
    }

    fn places(&self) -> bool {
        self.inner.places()
    }
}
