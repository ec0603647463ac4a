//! What a die (or, with `timing.multi_plane`, a plane) has on its timeline, as the
//! scheduler sees it: the GC operations waiting in its queue ([`GcOp`], `rps` and
//! `suspend`), the GC operations placed on it that host reads may still go before or
//! suspend ([`Planned`]), and the host program it runs ([`Running`], `suspend`); and
//! how a relocation gets its data and programs it ([`CopyKind`]).

/// How a relocation (GC or refresh) gets its data and programs it (003 §3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyKind {
    /// The up-to-date content comes from the device write buffer: no array read, no
    /// ECC decode, one DRAM read and one transfer in.
    pub from_buffer: bool,
    /// Programmed in fast-write mode (`timing.fast_program_us`).
    pub fast: bool,
}

/// A GC operation waiting for its die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GcOp {
    Copy { issue: u64, kind: CopyKind },
    Erase { issue: u64, block: u32 },
}

impl GcOp {
    pub(super) fn issue(&self) -> u64 {
        match *self {
            GcOp::Copy { issue, .. } | GcOp::Erase { issue, .. } => issue,
        }
    }
}

/// A host program a die is running, as far as suspension cares.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Running {
    /// From when it may be suspended (its program phase), and its end.
    pub(super) suspendable_from: u64,
    pub(super) end: u64,
    pub(super) suspensions: u32,
}

/// A GC operation placed on a die's timeline (`rps`, `suspend`): host reads that
/// arrive before it ends are inserted at its boundaries (or suspend it), and what
/// follows moves later.
#[derive(Clone, Copy, Debug)]
pub(super) struct Planned {
    /// When the die was free before it, its start and end.
    pub(super) ready: u64,
    pub(super) start: u64,
    pub(super) end: u64,
    /// From when it may be suspended (its program or erase phase).
    pub(super) suspendable_from: u64,
    pub(super) suspensions: u32,
}
