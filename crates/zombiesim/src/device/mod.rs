//! The device: everything between the host interface and the flash translation layer.
//!
//! ```text
//!  run loop (HostInterface) ─┐
//!                            ├─► Device::submit(issue, Command) ─┬─► idle time before
//!  host model (HostSim) ─────┘     one dispatch for both          │   `issue`: background GC
//!                                                                 ├─► hints the command carries
//!                                                                 │   (piggybacked zombies)
//!                                                                 └─► per page: Ftl::write /
//!                                                                     read / trim, with the
//!                                                                     page's content value
//!                                  ◄── completion time (the latest flash operation it waited for)
//! ```
//!
//! Both the device-level run loop and the host model issue through [`Device::submit`]
//! (or, for a trace request split into several runs, [`Device::start`] /
//! [`Device::apply`] / [`Device::end`]), so a command is dispatched the same way
//! whatever sits above the device, and a write's content value travels with it all
//! the way down.

use crate::config::Config;
use crate::error::Result;
use crate::ftl::{self, Ftl};
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

/// The fingerprint that stands for "content unknown" in a [`Payload::PerPage`] list.
pub const NO_VALUE: u64 = u64::MAX;

impl Payload<'_> {
    /// The fingerprint of the `i`-th page, when known.
    #[inline]
    fn value(&self, i: usize) -> Option<u64> {
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
    /// Logical pages the host says, piggybacked on this command, hold a dirty newer
    /// copy above the device (zombie hints).
    pub zombies: &'a [u64],
}

impl<'a> Command<'a> {
    /// A command with no payload and no hints.
    pub fn new(op: Op, lpn: u64, pages: u32) -> Self {
        Command {
            op,
            lpn,
            pages,
            payload: Payload::Unknown,
            zombies: &[],
        }
    }
}

/// The simulated device.
pub struct Device {
    ftl: Box<dyn Ftl>,
    /// Background GC may run in idle time (timing on and `gc.background`).
    background_gc: bool,
    /// The latest completion so far (ns).
    last_done: u64,
}

impl Device {
    /// A freshly erased device as `cfg` describes it. `seed` drives the randomised
    /// GC policies; `verify` keeps the integrity oracle.
    pub fn new(cfg: &Config, seed: u64, verify: bool) -> Result<Device> {
        Ok(Device {
            ftl: ftl::build(cfg, seed, verify)?,
            background_gc: cfg.timing.enabled && cfg.gc.background,
            last_done: 0,
        })
    }

    /// The flash translation layer (counters, checks, state summaries).
    pub fn ftl(&self) -> &dyn Ftl {
        self.ftl.as_ref()
    }

    /// The flash translation layer, for writes that bypass the interface
    /// (preconditioning) and for checks.
    pub fn ftl_mut(&mut self) -> &mut dyn Ftl {
        self.ftl.as_mut()
    }

    /// Pages the host can address.
    pub fn logical_pages(&self) -> u64 {
        self.ftl.logical_pages()
    }

    /// Turn the timing model on or off (off while preconditioning); the measured
    /// phase starts at time 0.
    pub fn set_timing(&mut self, on: bool) {
        self.ftl.set_timing(on);
        self.last_done = 0;
    }

    /// The latest completion so far (ns).
    pub fn last_done(&self) -> u64 {
        self.last_done
    }

    /// A command is issued at `issue`: GC may use the idle time before it, and the
    /// command is counted. Its pages follow with [`Device::apply`].
    #[inline]
    pub fn start(&mut self, issue: u64) -> Result<()> {
        if self.background_gc {
            let idle_from = self.ftl.busy_until();
            if idle_from < issue {
                self.ftl
                    .idle(idle_from.max(self.last_done.min(issue)), issue)?;
            }
        }
        self.ftl.count_request();
        self.ftl.begin(issue);
        Ok(())
    }

    /// One run of pages of the command started last.
    #[inline]
    pub fn apply(&mut self, op: Op, lpn: u64, pages: u32, payload: Payload) -> Result<()> {
        let end = lpn + pages as u64;
        match op {
            Op::Write => match payload {
                Payload::Unknown => {
                    for l in lpn..end {
                        self.ftl.write(l)?;
                    }
                }
                _ => {
                    for (i, l) in (lpn..end).enumerate() {
                        match payload.value(i) {
                            Some(v) => self.ftl.write_value(l, v)?,
                            None => self.ftl.write(l)?,
                        }
                    }
                }
            },
            Op::Read => {
                for l in lpn..end {
                    self.ftl.read(l)?;
                }
            }
            Op::Trim => {
                for l in lpn..end {
                    self.ftl.trim(l)?;
                }
            }
        }
        Ok(())
    }

    /// The command started last is complete: when (ns).
    #[inline]
    pub fn end(&mut self) -> u64 {
        let done = self.ftl.finish();
        self.last_done = self.last_done.max(done);
        done
    }

    /// Issue `cmd` at `issue`; returns when it completes.
    pub fn submit(&mut self, issue: u64, cmd: &Command) -> Result<u64> {
        self.start(issue)?;
        for &lpn in cmd.zombies {
            self.ftl.set_zombie(lpn, true)?;
        }
        self.apply(cmd.op, cmd.lpn, cmd.pages, cmd.payload)?;
        Ok(self.end().max(issue))
    }

    /// A non-queued command (a notification command) holds the interface until `done`.
    pub fn hold_until(&mut self, done: u64) {
        self.last_done = self.last_done.max(done);
    }

    /// The host says `lpn` holds a dirty newer copy above the device (`true`), or that
    /// it lost that copy and the flash copy is live again (`false`).
    pub fn hint_zombie(&mut self, lpn: u64, zombie: bool) -> Result<()> {
        self.ftl.set_zombie(lpn, zombie)
    }

    /// Logical pages the device knows as zombies.
    pub fn known_zombies(&self) -> u64 {
        self.ftl.known_zombies()
    }
}
