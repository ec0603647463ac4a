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

use super::placer::{PlacedWrites, Placer};
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

/// Log `write`, placed in `stream`, into `batch`.
fn log(batch: &mut PlacedWrites, write: &HostWrite, stream: u32) {
    batch.lpn.push(write.lpn as u64);
    batch.overwrite.push(write.overwrite);
    batch.lifetime.push(write.hint.lifetime.unwrap_or(u64::MAX));
    batch.time.push(write.now);
    batch.stream.push(stream);
}

/// `ftl.placement = "python:K"`: streams from a per-page table a [`Placer`] fills.
#[derive(Clone)]
pub struct ExternalPlacement {
    /// Who is asked (none before [`Placement::attach`], and none once it failed).
    placer: Option<Arc<dyn Placer>>,
    /// Host writes per batch (the placer's, asked once).
    batch: usize,
    streams: u32,
    gc_first: u32,
    zombie: Option<u32>,
    table: Vec<u8>,
    log: PlacedWrites,
}

impl ExternalPlacement {
    /// `streams` host streams over `plan`, asking no one until [`Placement::attach`].
    pub fn new(streams: u32, plan: &StreamPlan) -> Self {
        ExternalPlacement {
            placer: None,
            batch: 0,
            streams,
            gc_first: plan.gc_first,
            zombie: plan.zombie,
            table: vec![0; plan.stored_pages],
            log: PlacedWrites::default(),
        }
    }

    /// Hand the logged batch over and take the answer into the table; a placer that
    /// fails is asked nothing more.
    fn ask(&mut self, now: u64) {
        let Some(placer) = self.placer.take() else {
            return;
        };
        let mut batch = std::mem::take(&mut self.log);
        batch.now = now;
        let lpns = batch.lpn.clone();
        let Some(answer) = placer.place(batch) else {
            return;
        };
        if answer.len() != lpns.len() {
            placer.refuse(format!(
                "placement {} answered {} streams for a batch of {} writes",
                placer.name(),
                answer.len(),
                lpns.len()
            ));
            return;
        }
        if let Some(&bad) = answer.iter().find(|&&s| s >= self.streams) {
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
        self.placer = Some(placer);
    }
}

impl Placement for ExternalPlacement {
    fn host_stream(&mut self, write: &HostWrite) -> u32 {
        let stream = u32::from(self.table[write.lpn]);
        if self.placer.is_some() {
            log(&mut self.log, write, stream);
            if self.log.len() >= self.batch {
                self.ask(write.now);
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

    fn takes_placer(&self) -> bool {
        true
    }

    fn attach(&mut self, placer: Arc<dyn Placer>) {
        self.batch = placer.batch();
        self.placer = Some(placer);
    }
}
