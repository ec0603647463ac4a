//! Placement decided outside the simulator (`ftl.placement = "python:K"`): a
//! [`Placer`] (the Python binding's `placement=` function) sees the host writes in
//! batches and answers, for each write of a batch, the stream its page's next write
//! goes to.
//!
//! ```text
//!   host write of L ──► stream = table[L] (0 until told) ──► logged (lpn, overwrite,
//!                       lifetime hint, time, stream)
//!                        │ every `batch` writes
//!                        ▼
//!   placer.place(batch) ──► [s0, s1, ...] ──► table[lpn_i] = s_i
//!   GC copy of L    ──► GC stream gc_first + the class of the block it leaves (host
//!                       stream s or GC stream gc_first + s: s; known zombies: the zombie
//!                       stream; a page leaving the zombie stream: table[L])
//! ```
//!
//! A GC copy keeps the class the page was last written with, as `write-count:K` does:
//! a placer that answers `write-count`'s class of each page's next write, one write
//! per batch, places exactly as `write-count:K` does.
//!
//! One crossing per batch, not per write: the placer learns from what was written
//! and steers what comes, as a learned lifetime classifier would. One byte a page.
//! An answer of the wrong length or naming a stream beyond K stops the run
//! ([`Placer::refuse`]).

use super::{classes, GcCopy, HostWrite, Placement, PlacementEntry, StreamPlan, StreamsWanted};
use std::sync::Arc;

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "python",
    about: "python:K (K host streams, each page's chosen by a Python function given to the run: \
            placement=, zombiesim run --placement; K 2-16)",
    future: false,
    streams: |param, regions| {
        let k = classes("python", "streams", param, regions, (2, 16))?;
        Ok(StreamsWanted {
            host: Some(k),
            gc: None,
        })
    },
    build: |param, plan| Box::new(ExternalPlacement::new(param.unwrap_or(2), plan)),
};

/// A batch of host writes as the placer sees it, in the order they were written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlacedWrites {
    /// Logical time after the batch (host page writes so far).
    pub now: u64,
    /// The logical page of each write.
    pub lpn: Vec<u64>,
    /// Whether it overwrote a copy on flash.
    pub overwrite: Vec<bool>,
    /// The writer's lifetime hint, host page writes from then (`u64::MAX`: none).
    pub lifetime: Vec<u64>,
    /// Logical time of the write.
    pub time: Vec<u64>,
    /// The stream it went to.
    pub stream: Vec<u32>,
}

impl PlacedWrites {
    fn push(&mut self, write: &HostWrite, stream: u32) {
        self.lpn.push(write.lpn as u64);
        self.overwrite.push(write.overwrite);
        self.lifetime.push(write.hint.lifetime.unwrap_or(u64::MAX));
        self.time.push(write.now);
        self.stream.push(stream);
    }

    /// Writes in the batch.
    pub fn len(&self) -> usize {
        self.lpn.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.lpn.is_empty()
    }
}

/// What decides an external placement's streams.
pub trait Placer: Send + Sync {
    /// What the report calls the placement.
    fn name(&self) -> String;
    /// Host writes per batch.
    fn batch(&self) -> usize;
    /// For each write of `writes`, the stream (below the placement's K) its page's
    /// next write goes to; `None` when the placer failed (it keeps why; the run
    /// stops).
    fn place(&self, writes: PlacedWrites) -> Option<Vec<u32>>;
    /// The answer could not be used: keep `why` as the run's failure.
    fn refuse(&self, why: String);
}

/// `ftl.placement = "python:K"`: streams from a per-page table a [`Placer`] fills.
#[derive(Clone)]
pub struct ExternalPlacement {
    placer: Option<Arc<dyn Placer>>,
    streams: u32,
    gc_first: u32,
    zombie: Option<u32>,
    table: Vec<u8>,
    log: PlacedWrites,
    /// The placer failed: nothing more is asked of it.
    failed: bool,
}

impl ExternalPlacement {
    /// `streams` host streams over `plan`, asking no one until [`Self::attach`].
    pub fn new(streams: u32, plan: &StreamPlan) -> Self {
        ExternalPlacement {
            placer: None,
            streams,
            gc_first: plan.gc_first,
            zombie: plan.zombie,
            table: vec![0; plan.stored_pages],
            log: PlacedWrites::default(),
            failed: false,
        }
    }

    /// Ask `placer` from now on.
    pub fn attach(&mut self, placer: Arc<dyn Placer>) {
        self.placer = Some(placer);
    }

    /// Hand the logged batch over and take the answer into the table.
    fn ask(&mut self, placer: &Arc<dyn Placer>, now: u64) {
        let mut batch = std::mem::take(&mut self.log);
        batch.now = now;
        let lpns = batch.lpn.clone();
        let Some(answer) = placer.place(batch) else {
            self.failed = true;
            return;
        };
        if answer.len() != lpns.len() {
            self.failed = true;
            placer.refuse(format!(
                "placement {} answered {} streams for a batch of {} writes",
                placer.name(),
                answer.len(),
                lpns.len()
            ));
            return;
        }
        if let Some(&bad) = answer.iter().find(|&&s| s >= self.streams) {
            self.failed = true;
            placer.refuse(format!(
                "placement {} chose stream {bad}; ftl.placement = \"python:{}\" has streams 0-{}",
                placer.name(),
                self.streams,
                self.streams - 1
            ));
            return;
        }
        for (&lpn, &s) in lpns.iter().zip(&answer) {
            self.table[lpn as usize] = s as u8;
        }
        self.log.lpn.reserve(lpns.len());
    }
}

impl Placement for ExternalPlacement {
    fn host_stream(&mut self, write: &HostWrite) -> u32 {
        let stream = u32::from(self.table[write.lpn]);
        if let Some(placer) = self.placer.clone().filter(|_| !self.failed) {
            self.log.push(write, stream);
            if self.log.len() >= placer.batch() {
                self.ask(&placer, write.now);
            }
        }
        stream
    }

    fn gc_stream(&mut self, copy: &GcCopy) -> u32 {
        if copy.zombie {
            if let Some(z) = self.zombie {
                return z;
            }
        }
        let from = copy.from_stream;
        let class = if from < self.streams {
            from
        } else if (self.gc_first..self.gc_first + self.streams).contains(&from) {
            from - self.gc_first
        } else {
            u32::from(self.table[copy.lpn])
        };
        self.gc_first + class
    }

    fn memory_bytes(&self) -> usize {
        self.table.len()
    }

    fn external(&mut self) -> Option<&mut ExternalPlacement> {
        Some(self)
    }
}
