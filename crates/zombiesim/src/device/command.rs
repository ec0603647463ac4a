//! What enters the device: one [`Command`], with the content its pages hold
//! ([`Payload`]) and what the writer says about where they should go ([`WriteHint`]).
//!
//! Every command, whatever issues it (the device-level run loop, the host model, the
//! host write buffer, the oracle, preconditioning), enters through
//! [`Device::submit`](super::Device::submit). A trace request that remapping split
//! into several runs is one command per run, the runs after the first marked
//! [`Command::continued`]; preconditioning's writes are marked
//! [`Command::precondition`].

pub use crate::placement::WriteHint;
use crate::workload::Op;

/// The content of the pages a write carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload<'a> {
    /// Unknown content (most workloads and traces).
    Unknown,
    /// Every page holds this fingerprint.
    Same(u64),
    /// One fingerprint per page, in page order; [`NO_VALUE`] marks a page whose
    /// content is unknown.
    PerPage(&'a [u64]),
}

pub use crate::ftl::NO_VALUE;

impl Payload<'_> {
    /// The fingerprint of the `i`-th page, when known.
    #[inline]
    pub fn value(&self, i: usize) -> Option<u64> {
        match self {
            Payload::Unknown => None,
            Payload::Same(v) => Some(*v),
            Payload::PerPage(v) => Some(v[i]).filter(|&v| v != NO_VALUE),
        }
    }
}

/// One command to the device.
#[derive(Clone, Copy, Debug)]
pub struct Command<'a> {
    pub op: Op,
    /// First logical page.
    pub lpn: u64,
    /// Consecutive logical pages.
    pub pages: u32,
    /// What a write carries.
    pub payload: Payload<'a>,
    /// The writer's placement and lifetime hint for every page a write carries (NVMe
    /// placement identifier, lifetime); [`WriteHint::NONE`] by default. It reaches the
    /// FTL with each page, written directly or destaged later by the write buffer.
    pub hint: WriteHint,
    /// Zombie hints piggybacked on this command: logical pages the host says hold a
    /// dirty newer copy above the device, or, with [`WITHDRAWN`] set, pages whose dirty
    /// copy the host dropped without writing it (their device copy is live again).
    pub zombies: &'a [u64],
    /// Forced unit access: a write goes through the buffer to flash.
    pub fua: bool,
    /// A further run of the command submitted last (a trace request remapping split):
    /// it is not issued, counted or given hints again, and its completion time is the
    /// whole command's so far.
    pub continued: bool,
    /// A preconditioning write: straight to flash past the write buffer, with no
    /// timing, and not counted as a host request (its pages are host page writes).
    pub precondition: bool,
}

/// The bit of a zombie hint ([`Command::zombies`]) that withdraws an earlier hint: the
/// host dropped its dirty copy of the page without writing it (a deleted file's page,
/// a revoked journal block), so the device's copy is not a zombie any more.
pub const WITHDRAWN: u64 = 1 << 63;

impl<'a> Command<'a> {
    /// A command with no payload and no hints.
    pub fn new(op: Op, lpn: u64, pages: u32) -> Self {
        Command {
            op,
            lpn,
            pages,
            payload: Payload::Unknown,
            hint: WriteHint::NONE,
            zombies: &[],
            fua: false,
            continued: false,
            precondition: false,
        }
    }
}
