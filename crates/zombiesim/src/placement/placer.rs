//! What decides a placement outside the simulator ([`Placer`]) and what it is shown
//! ([`PlacedWrites`]): `ftl.placement = "python:K"` ([`super::ExternalPlacement`]).

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
