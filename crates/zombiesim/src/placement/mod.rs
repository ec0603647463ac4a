//! Where a page is written: the placement policy of a page-allocating FTL.
//!
//! A page-allocating FTL keeps one open block per `(plane, stream)`: its write
//! frontiers. Which stream a page goes to is the placement policy's decision, made
//! for every host (or buffer) write and every GC or refresh copy:
//!
//! ```text
//!   device::Command ── WriteHint ──► PageWrite ──► Placement::host_stream(HostWrite) ─┐
//!                                                                                    ├─► stream s
//!   GC / refresh copy of a valid page ──────────► Placement::gc_stream(GcCopy) ───────┘
//!                                                    │
//!   the FTL programs the page into the open block of (plane, s), opening one if needed
//! ```
//!
//! The streams a policy may use are laid out once, from the configuration
//! ([`StreamPlan`]): host streams `0 .. host_streams`, GC streams
//! `gc_first .. gc_first + gc_streams` (the host's own when `ftl.gc_frontier =
//! "shared"`), and the zombie stream when `gc.zombie_block` is on.
//!
//! Policies are listed in [`REGISTRY`]; `ftl.placement` names one as `name` or
//! `name:param`. Adding a policy is a module of this folder and one line there.

mod dac;
mod external;
mod fdp;
mod gc_age;
mod midas;
mod midas_model;
mod oracle;
mod placer;
mod registry;
mod sepbit;
mod write_count;

pub use dac::Dac;
pub use external::ExternalPlacement;
pub use fdp::{FdpLayout, FdpPlacement, Isolation};
pub use gc_age::GcAge;
pub use midas::Midas;
pub use oracle::{DeathOracle, ENVELOPE_CLASSES};
pub use placer::{PlacedWrites, Placer};
pub use registry::{PlacementSpec, REGISTRY};
pub use sepbit::SepBit;
pub use write_count::WriteCount;

/// What the writer says about a page it writes: a placement handle (a stream, an
/// NVMe placement identifier) and an expected lifetime. Neither binds the FTL: a
/// policy reads what it understands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct WriteHint {
    /// The writer's placement handle (`None`: no preference).
    pub stream: Option<u16>,
    /// The writer's estimate of when the page will be overwritten or trimmed, in
    /// host page writes from now (`None`: unknown).
    pub lifetime: Option<u64>,
}

impl WriteHint {
    /// No hint.
    pub const NONE: WriteHint = WriteHint {
        stream: None,
        lifetime: None,
    };
}

/// A host or buffer write to place.
#[derive(Clone, Copy, Debug)]
pub struct HostWrite {
    /// The logical page (an index into the FTL's stored pages).
    pub lpn: usize,
    /// Whether the page had a flash copy (this write overwrites it).
    pub overwrite: bool,
    /// What the writer said.
    pub hint: WriteHint,
    /// Logical time now (host page writes so far).
    pub now: u64,
}

/// A valid page GC (or retention refresh) copies out of a block.
#[derive(Clone, Copy, Debug)]
pub struct GcCopy {
    /// The logical page.
    pub lpn: usize,
    /// The device knows the page as host-shadow (a zombie), and this is GC (refresh
    /// moves every page as it is).
    pub zombie: bool,
    /// Logical time when the block being emptied was last modified (a page written
    /// or invalidated): the page is at least `now - block_modified` old.
    pub block_modified: u64,
    /// Logical time now.
    pub now: u64,
    /// The stream the block being emptied was written for.
    pub from_stream: u32,
}

/// A block GC has emptied and erased (non-FDP devices).
#[derive(Clone, Copy, Debug)]
pub struct Reclaimed {
    /// The stream the block was written for.
    pub stream: u32,
    /// Logical time when the block was opened.
    pub opened: u64,
    /// Logical time now.
    pub now: u64,
}

/// The streams a policy places into, laid out from the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamPlan {
    /// Host streams `0 .. host_streams`.
    pub host_streams: u32,
    /// The first GC stream.
    pub gc_first: u32,
    /// GC streams `gc_first .. gc_first + gc_streams`.
    pub gc_streams: u32,
    /// The zombie stream (`gc.zombie_block`).
    pub zombie: Option<u32>,
    /// Logical pages the host addresses (the scale of logical time: one drive write).
    pub logical_pages: u64,
    /// Logical pages the FTL stores (the host's, and DFTL's translation pages).
    pub stored_pages: usize,
    /// The device's usable blocks; those data cannot rest in (GC's free reserve, its
    /// high watermark over every unit, and the open blocks, half full on average, of
    /// every stream and plane); pages per block.
    pub blocks: u32,
    pub reserve: u32,
    pub pages_per_block: u32,
}

dyn_clone::clone_trait_object!(Placement);

/// A placement policy: which stream each page goes to.
pub trait Placement: Send + dyn_clone::DynClone {
    /// The stream of a host or buffer write (one of the host streams).
    fn host_stream(&mut self, write: &HostWrite) -> u32;
    /// The stream of a GC or refresh copy (a GC stream or the zombie stream).
    fn gc_stream(&mut self, copy: &GcCopy) -> u32;
    /// Whether the policy hears of every block GC erases ([`Placement::reclaimed`]);
    /// the FTL then keeps each block's opening time.
    fn observes_reclaims(&self) -> bool {
        false
    }
    /// GC erased a block (asked only when [`Placement::observes_reclaims`]).
    fn reclaimed(&mut self, _block: &Reclaimed) {}
    /// The run's future says `lpn`'s current version dies `left` host page writes
    /// after `now` (`None`: never); only a policy whose entry reads the future
    /// ([`PlacementEntry::future`]) is told.
    fn told_lifetime(&mut self, _lpn: usize, _left: Option<u64>, _now: u64) {}
    /// Whether the policy keeps a chain of FIFO groups ([`Placement::chain`]); asked
    /// once, when the FTL is built: its GC units then select through the chain
    /// (`gc::Chained`).
    fn chained(&self) -> bool {
        false
    }
    /// The chain of FIFO groups GC drains first, in order (MiDAS): each group's stream
    /// and its quota; every other block is left to `gc.policy`.
    fn chain(&self) -> &[ChainGroup] {
        &[]
    }
    /// What a policy that fits itself to the workload fitted (`None`: it fits nothing).
    fn model(&self) -> Option<PlacementModel> {
        None
    }
    /// Bytes of the policy's own state.
    fn memory_bytes(&self) -> usize {
        0
    }
    /// Host writes whose hint named no stream the policy has (FDP: an invalid
    /// placement identifier), placed as it says instead.
    fn rejected_hints(&self) -> u64 {
        0
    }
    /// The streams of a policy that places by the kind of write alone: every host
    /// write to one stream, every GC copy to one stream (known zombies to another).
    /// The FTL then places without asking, the common case's fast path; the answer
    /// must be what `host_stream` and `gc_stream` would say.
    fn fixed(&self) -> Option<FixedStreams> {
        None
    }
    /// The stream every GC copy of a victim written for `from_stream` goes to, known
    /// zombies' aside, when nothing else about the page decides it (FDP: the victim's
    /// handle and the isolation). The FTL then copies such a victim's pages without
    /// asking page by page; the answer must be what `gc_stream` would say.
    fn victim_gc_stream(&self, _from_stream: u32) -> Option<u32> {
        None
    }
    /// Whether the policy places by a [`Placer`] given to the run (`python:K`); it is
    /// then [`Placement::attach`]ed as the FTL is built.
    fn takes_placer(&self) -> bool {
        false
    }
    /// Ask `placer` from now on (only a policy that [`Placement::takes_placer`]).
    fn attach(&mut self, _placer: std::sync::Arc<dyn Placer>) {}
}

/// The streams of a policy that places by the kind of write alone ([`Placement::fixed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedStreams {
    /// Every host or buffer write.
    pub host: u32,
    /// Every GC or refresh copy, but known zombies'.
    pub gc: u32,
    /// A GC copy of a known zombie.
    pub zombie: u32,
}

impl FixedStreams {
    /// The stream of a GC copy.
    #[inline]
    pub fn gc_stream(&self, zombie: bool) -> u32 {
        if zombie {
            self.zombie
        } else {
            self.gc
        }
    }
}

/// One FIFO group of a chain: its stream and its share of the device's blocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainGroup {
    /// The stream its blocks were written for.
    pub stream: u32,
    /// Its quota, as a share of the device's blocks.
    pub share: f64,
}

/// What a placement that fits itself to the workload fitted (MiDAS: the groups in
/// force at the end of the run); the report's `placement_model`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PlacementModel {
    /// Sizes of the FIFO groups in blocks, in chain order (the last group holds the
    /// rest).
    pub sizes: Vec<u32>,
    /// The WAF the model predicted for them (0 before the first model).
    pub predicted_waf: f64,
    /// Epochs closed, and those modelled.
    pub epochs: u64,
    pub modelled: u64,
    /// Times a chain did worse than the tail's policy alone had done, and was set
    /// aside.
    pub set_aside: u64,
    /// The WAF measured over the last epoch run without a chain (0: none yet).
    pub tail_waf: f64,
    /// Live pages the last model found the writes leave alone (beyond those the write
    /// stream keeps valid): room in the last group that greedy never copies from.
    pub static_pages: u64,
}

/// Why a setting is refused: the config key to change, and the reason.
pub type Refusal = (String, String);

/// The streams a policy asks for (`None`: what the configuration lays out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamsWanted {
    /// Host streams of its own (`None`: one per `ftl.regions`).
    pub host: Option<u32>,
    /// GC streams of its own (`None`: one per host stream).
    pub gc: Option<u32>,
}

/// One placement policy of the registry.
pub struct PlacementEntry {
    /// Its name in `ftl.placement`.
    pub name: &'static str,
    /// The syntax and a line on what it does.
    pub about: &'static str,
    /// It reads the run's future (a ceiling, not a real policy): the simulation reads
    /// the measured phase twice, and gives each host write its lifetime.
    pub future: bool,
    /// The streams it needs for `param` with `regions` hot/cold regions configured,
    /// or why `param` (or a setting it cannot work with) is refused, naming the key.
    pub streams: fn(param: Option<u32>, regions: u32) -> Result<StreamsWanted, Refusal>,
    /// Build it over a stream plan.
    pub build: fn(param: Option<u32>, plan: &StreamPlan) -> Box<dyn Placement>,
}

/// The `K` of a policy named `name:K` (`what`: what K counts), refused naming
/// `ftl.placement` when missing or outside `lo..=hi`, and naming `ftl.regions` with more
/// than one region (the policy places by its own classes).
pub(crate) fn classes(
    name: &str,
    what: &str,
    param: Option<u32>,
    regions: u32,
    (lo, hi): (u32, u32),
) -> Result<u32, Refusal> {
    match param {
        Some(k) if (lo..=hi).contains(&k) => {
            one_region(&format!("{name}:{k}"), regions)?;
            Ok(k)
        }
        Some(k) => Err((
            "ftl.placement".into(),
            format!("`{name}:{k}`: K must be at least {lo} and at most {hi}"),
        )),
        None => Err((
            "ftl.placement".into(),
            format!("`{name}` needs the number of {what}: `{name}:K` (K {lo}-{hi})"),
        )),
    }
}

/// A policy that takes `ftl.regions` as given refuses more than one region when it
/// places by something else.
pub(crate) fn one_region(name: &str, regions: u32) -> Result<(), Refusal> {
    if regions > 1 {
        return Err((
            "ftl.regions".into(),
            format!("`{name}` places by its own rule, not by hot/cold region; use ftl.regions = 1"),
        ));
    }
    Ok(())
}
