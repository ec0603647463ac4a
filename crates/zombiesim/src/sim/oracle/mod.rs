//! The `oracle` victim policy: a perfect-knowledge notifier feeding z-greedy.
//!
//! A zombie notification tells the device that a valid flash page will die soon. The
//! oracle asks what the best possible notification could buy: it knows exactly when
//! every version of every page dies, because it has read the future of the run.
//!
//! ```text
//!  pre-pass: the same request stream again ─► LPN of every host page write and trim,
//!            in order (the measured phase only)
//!          ─► backward pass: for write k, its death d(k) = how many host page writes
//!             have been applied once the version is dead: j + 1 when write j of the
//!             same LPN overwrites it, w when a trim after w writes drops it (never: ∞)
//!  measured phase, after host page write k (t = k + 1 writes applied):
//!          list lpn under the count d(k) − H (due at once when that is ≤ t);
//!          mark every version due at t, in the order of (d − H, lpn)
//!          ─► an ideal-channel Notifier: Device::hint_zombie(lpn, true)
//! ```
//!
//! So a valid page is marked zombie from the moment its current version will die within
//! `H` host page writes, and GC scores blocks with z-greedy's `i − min(z, i/2)`. The
//! write or trim that kills the page clears its mark, as it clears a notified zombie's.
//! Nothing else changes: the same FTL, the same GC, the same requests.
//!
//! `H` is `gc.oracle_horizon`, or by default (0) three quarters of the spare pages GC
//! works with: physical − logical pages, less the blocks the GC units hold back free
//! (the high watermark) or open (the write frontiers). An invalid page waits about that
//! many host writes before GC reclaims it (Little's law), so a page marked within it is
//! one whose block GC need not take before it dies. A longer horizon marks pages that
//! outlive the wait, and z-greedy spares blocks that are still full of live data when
//! their turn comes; a shorter one tells it less. The ¾ is measured, not derived: with
//! the whole effective spare the oracle lost near-ties (by up to 0.7%) to greedy and
//! cost-benefit on uniform writes at high over-provisioning; with ¾ it lost none to
//! greedy, FIFO, random, d-choices or windowed greedy in 22,000 small random cases
//! (docs/zombie.md, "The oracle").
//!
//! What it knows is the device-level request stream, so it runs only where that stream
//! is what the device executes: synthetic request workloads and block traces without the
//! host model or a host write buffer ([`prepare`] and `Config::validate` refuse the
//! rest). A notified trace's host events are replayed but not delivered: the oracle's
//! marks replace every channel's. A synthetic workload is rebuilt from its spec and seed
//! (preconditioning draws from a copy of its own, so the measured stream is the same
//! from its first request); a trace is opened again. The measured phase checks that it
//! executes exactly the writes the pre-pass recorded (count and a fingerprint of the LPN
//! sequence).
//!
//! Memory: while it is built, 8 bytes per measured host page write (its LPN and its
//! death distance) + 16 per trimmed page + 8 per logical page; while the run goes on,
//! 8 bytes per write (its death distance, and the head of the list of versions due then)
//! and at most one listed version (8 bytes) per logical page. The run is
//! refused before the list grows past the memory limit, naming `gc.policy`.
//!
//! It is a ceiling on what marking pages by their future death can buy z-greedy, not a
//! real policy: no device knows the future.

mod due;
mod envelope;

use super::options::RunOptions;
use super::progress::{Phase, Progress, Ticker, TICK_MASK};
use crate::config::{available_memory, Config, Geometry, MemoryEstimate, PolicySpec};
use crate::device::{Command, Device, Payload};
use crate::error::{Error, Result};
use crate::host::{CommandAt, Notifier};
use crate::report::OracleReport;
use crate::workload::{Op, Workload};
use due::DueLists;
pub use envelope::envelope;

/// A death distance meaning "never dies in the measured phase" (or further away than
/// any horizon can reach).
const NEVER: u32 = u32::MAX;

/// The largest `gc.oracle_horizon` (death distances are kept in 32 bits).
pub use crate::config::MAX_HORIZON;

/// Bytes of the future list per measured host page write, while it is built.
const BUILD_BYTES_PER_WRITE: u64 = 8;
/// Bytes per trimmed page, while it is built (its time and LPN).
const BUILD_BYTES_PER_TRIM: u64 = 16;
/// Bytes per logical page: the next-event table while it is built, the due lists'
/// entries after.
const BYTES_PER_LOGICAL: u64 = 16;

/// Runs every member of the envelope with `run` and returns the report of the one with
/// the lowest WAF (ties: the first), its `oracle` section naming it and listing every
/// member's WAF, `run.config` the configuration asked for (`oracle`, `best`), and its
/// wall times the whole envelope's (the measured one: every member's measured phase).
pub fn best_of(
    asked: &Config,
    members: Vec<(String, Config)>,
    mut run: impl FnMut(&Config) -> Result<crate::report::Report>,
) -> Result<crate::report::Report> {
    let started = std::time::Instant::now();
    let mut best: Option<(String, crate::report::Report)> = None;
    let mut candidates = Vec::new();
    // The wall time of every member's measured phase (none in reproducible mode).
    let mut measured_wall_s: Option<f64> = None;
    let key = |r: &crate::report::Report| r.waf.unwrap_or(f64::INFINITY);
    for (label, cfg) in members {
        let r = run(&cfg)?;
        if let Some(m) = r.run.measured_wall_s {
            *measured_wall_s.get_or_insert(0.0) += m;
        }
        candidates.push(crate::report::OracleCandidate {
            schedule: label.clone(),
            waf: r.waf,
        });
        if r.run.interrupted {
            return Ok(r);
        }
        if best.as_ref().is_none_or(|(_, b)| key(&r) < key(b)) {
            best = Some((label, r));
        }
    }
    let (label, mut r) = best.ok_or_else(|| Error::integrity("the oracle's envelope is empty"))?;
    let o = r.oracle.get_or_insert(OracleReport {
        horizon: 0,
        future_writes: 0,
        future_trims: 0,
        hints: 0,
        memory_bytes: 0,
        chosen: None,
        candidates: Vec::new(),
    });
    o.chosen = Some(label);
    o.candidates = candidates;
    r.run.config = serde_json::to_value(asked).expect("configs serialize");
    // The run took the whole envelope's time, not the chosen member's.
    if r.run.wall_s.is_some() {
        r.run.wall_s = Some(started.elapsed().as_secs_f64());
        r.run.measured_wall_s = measured_wall_s;
    }
    Ok(r)
}

/// The future of the measured phase: for each host page write, how many writes later
/// the version it writes is dead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FutureList {
    /// `distance[k]`: write `k` (0-based) writes a version that is dead once `d(k)`
    /// host page writes have been applied: `j + 1` when write `j` of the same LPN
    /// overwrites it, `w` when a trim after `w` writes drops it. `distance[k]` is
    /// `d(k) − k`; [`NEVER`] when it lives to the end.
    distance: Vec<u32>,
    /// For each logical page, when the version it holds as the measured phase starts
    /// dies (host page writes applied; [`NEVER`]): what a placement that reads the
    /// future is told first.
    initial: Vec<u32>,
    /// Trimmed pages of the measured phase.
    trims: u64,
    /// [`fold`] of the written LPNs, in order.
    fingerprint: u64,
}

/// A fingerprint of an LPN sequence (FNV-1a over 64-bit words).
#[inline]
fn fold(h: u64, lpn: u64) -> u64 {
    (h ^ lpn).wrapping_mul(0x0000_0100_0000_01b3)
}

const FOLD_START: u64 = 0xcbf2_9ce4_8422_2325;

/// What the pre-pass recorded, before the backward pass: written LPNs in order, and each
/// trimmed page with the number of writes before it.
#[derive(Default)]
struct Events {
    writes: Vec<u32>,
    trims: Vec<(u64, u32)>,
}

impl FutureList {
    /// The future of the written `writes` (LPNs in order) and `trims` (`(writes before
    /// it, lpn)`, in order): the backward pass over `logical` pages.
    fn from_events(events: Events, logical: u64) -> FutureList {
        let Events { writes, trims } = events;
        let mut next = vec![u64::MAX; logical as usize];
        let mut distance = vec![NEVER; writes.len()];
        let mut t = trims.len();
        for k in (0..writes.len()).rev() {
            // Trims after write k (k + 1 or more writes before them), latest first.
            while t > 0 && trims[t - 1].0 > k as u64 {
                t -= 1;
                next[trims[t].1 as usize] = trims[t].0;
            }
            let lpn = writes[k] as usize;
            let death = next[lpn];
            distance[k] = if death == u64::MAX {
                NEVER
            } else {
                (death - k as u64).min(NEVER as u64) as u32
            };
            // The version before it is dead once this write is applied.
            next[lpn] = k as u64 + 1;
        }
        // Trims before the first write.
        while t > 0 {
            t -= 1;
            next[trims[t].1 as usize] = trims[t].0;
        }
        let initial = next.iter().map(|&d| d.min(NEVER as u64) as u32).collect();
        let fingerprint = writes
            .iter()
            .fold(FOLD_START, |h, &lpn| fold(h, lpn as u64));
        FutureList {
            distance,
            initial,
            trims: trims.len() as u64,
            fingerprint,
        }
    }

    /// Host page writes of the measured phase.
    pub fn writes(&self) -> u64 {
        self.distance.len() as u64
    }

    /// Bytes it holds.
    pub fn memory_bytes(&self) -> u64 {
        (self.distance.capacity() + self.initial.capacity()) as u64 * 4
    }

    /// When `lpn`'s version at the start of the measured phase dies: host page writes
    /// from then (`None`: never).
    pub fn initial(&self, lpn: u64) -> Option<u64> {
        match self.initial.get(lpn as usize) {
            Some(&d) if d != NEVER => Some(d as u64),
            _ => None,
        }
    }
}

/// Bytes the oracle needs for `writes` measured host page writes on `logical` pages
/// (its peak, while the list is built, with no trim).
pub fn estimate_bytes(writes: u64, logical: u64) -> u64 {
    writes * BUILD_BYTES_PER_WRITE + logical * BYTES_PER_LOGICAL
}

/// The memory the oracle may use: the run's limit less the device's state, and where
/// the limit came from (`None`: no limit known).
pub type Budget = Option<(u64, u64, &'static str)>;

fn too_big(needed: u64, writes: Option<u64>, budget: (u64, u64, &str)) -> Error {
    let (limit, device, source) = budget;
    let gib = crate::config::gib;
    let what = match writes {
        Some(w) => format!("the {w} host page writes of the measured phase"),
        None => "the measured phase (it is still being read)".to_string(),
    };
    Error::config(
        "gc.policy",
        format!(
            "`oracle` keeps the future of every host page write: {what} need at least {} \
             beside the device's {}, more than {} ({source}); use a shorter workload or \
             trace, a real policy, or raise the limit with --max-memory",
            gib(needed),
            gib(device),
            gib(limit)
        ),
    )
}

/// The memory the oracle may use beside the device's state (`check_memory`'s limit).
fn budget(cfg: &Config, opts: &RunOptions) -> Result<Budget> {
    let device = MemoryEstimate::new(cfg, opts.verify)?.total();
    Ok(match opts.max_memory {
        Some(limit) => Some((limit, device, "the limit given by --max-memory")),
        None => {
            available_memory().map(|free| (free, device, "the memory available on this machine"))
        }
    })
}

/// The future of one envelope's measured phase, read by the first member that reads
/// the future and lent (a copy) to the others: the members replay the same requests
/// on the same geometry, and the future is the requests' alone. Empty outside an
/// envelope.
#[derive(Default)]
pub struct FutureShare(Option<FutureList>);

/// With `gc.policy = "oracle"`: the future of the measured phase, read from `replay` (a
/// fresh copy of its request stream), or a copy of the one `share` holds; `None` with
/// any other policy. The pre-pass reports its progress (phase `Oracle`) through
/// `ticker`; stopped there (Ctrl-C), it keeps what it read, and the run, which shares
/// the ticker, stops at its first report (a future read whole is left in `share`).
pub fn prepare<W: Workload>(
    cfg: &Config,
    geo: &Geometry,
    opts: &RunOptions,
    replay: impl FnOnce() -> Result<W>,
    ticker: &mut Ticker,
    share: &mut FutureShare,
) -> Result<Option<FutureList>> {
    let Some((key, what)) = reads_future(cfg) else {
        return Ok(None);
    };
    let h = &cfg.host;
    if h.enabled() {
        return Err(Error::config(
            key,
            format!(
                "{what} knows the future of the requests the device executes, which runs \
                 only at the device level; host.cache = {} and host.threads = {} run the host \
                 model, whose page cache decides what reaches the device: set both to 0 (or, \
                 for a trace, host.trace = \"below\"), or use a policy that does not read \
                 the future",
                h.cache, h.threads
            ),
        ));
    }
    if let Some(future) = &share.0 {
        return Ok(Some(future.clone()));
    }
    let budget = budget(cfg, opts)?;
    let mut w = replay()?;
    let expected = w.expected_write_pages();
    let report = |written: u64| Progress {
        phase: Phase::Oracle,
        fraction: expected.map(|e| (written as f64 / e.max(1) as f64).min(1.0)),
        write_pages: written,
    };
    ticker.force(report(0));
    let mut tick = |written: u64| ticker.tick(|| report(written));
    let future = record_with(&mut w, geo.logical_pages, budget, &mut tick)?;
    if !ticker.stopped {
        share.0 = Some(future.clone());
    }
    Ok(Some(future))
}

/// What reads the run's future, if anything: `gc.policy = "oracle"` (its zombie marks)
/// or a placement that reads it (`ftl.placement = "oracle:K"`), as the key and a name.
pub fn reads_future(cfg: &Config) -> Option<(&'static str, String)> {
    if cfg.gc.policy == PolicySpec::Oracle {
        Some(("gc.policy", "`oracle`".into()))
    } else if cfg.ftl.placement.reads_future() {
        Some(("ftl.placement", format!("`{}`", cfg.ftl.placement)))
    } else {
        None
    }
}

/// Application and file-system workloads run the host model: the oracles are refused.
pub fn refuse_app(cfg: &Config) -> Result<()> {
    let Some((key, what)) = reads_future(cfg) else {
        return Ok(());
    };
    Err(Error::config(
        key,
        format!(
            "{what} knows the future of the requests the device executes, which runs only at \
             the device level; an application or file-system workload (oltp, fs:) runs the \
             host model (host.cache, host.threads), whose page cache decides what reaches the \
             device: use a synthetic request workload or a block trace"
        ),
    ))
}

/// Read `workload` (a fresh copy of the measured phase's request stream) to its end and
/// build its future on `logical` pages, refusing before the list outgrows `budget`.
#[cfg(test)]
fn record(workload: &mut dyn Workload, logical: u64, budget: Budget) -> Result<FutureList> {
    record_with(workload, logical, budget, &mut |_| true)
}

/// `record`, calling `tick(host page writes so far)` every few thousand requests; it
/// stops reading (the list then holds what was read) when `tick` returns false.
fn record_with(
    workload: &mut dyn Workload,
    logical: u64,
    budget: Budget,
    tick: &mut dyn FnMut(u64) -> bool,
) -> Result<FutureList> {
    // What the oracle may hold beside the device, in bytes.
    let room = budget.map(|(limit, device, _)| limit.saturating_sub(device));
    if let (Some(room), Some(w)) = (room, workload.expected_write_pages()) {
        let needed = estimate_bytes(w, logical);
        if needed > room {
            return Err(too_big(needed, Some(w), budget.expect("a budget")));
        }
    }
    let fixed = logical * BYTES_PER_LOGICAL;
    // Bytes held with room for `writes` written and `trims` trimmed pages.
    let bytes = |writes: usize, trims: usize| {
        fixed + writes as u64 * BUILD_BYTES_PER_WRITE + trims as u64 * BUILD_BYTES_PER_TRIM
    };
    let fits = |b: u64| room.is_none_or(|room| b <= room);
    let mut events = Events::default();
    if let Some(w) = workload.expected_write_pages() {
        events.writes.reserve_exact(w.min(u32::MAX as u64) as usize);
    }
    let mut requests = 0u64;
    while let Some(req) = workload.next_request()? {
        requests += 1;
        if requests & TICK_MASK == 0 && !tick(events.writes.len() as u64) {
            break;
        }
        let pages = req.pages as usize;
        match req.op {
            Op::Write => {
                let need = events.writes.len() + pages;
                if need > events.writes.capacity() {
                    // Grow by hand, so nothing past the budget is ever allocated.
                    let want = need.max(2 * events.writes.capacity()).max(1 << 16);
                    let trims = events.trims.len();
                    let cap = if fits(bytes(want, trims)) {
                        want
                    } else if fits(bytes(need, trims)) {
                        need
                    } else {
                        let b = budget.expect("a limit refused it");
                        return Err(too_big(bytes(need, trims), None, b));
                    };
                    events.writes.reserve_exact(cap - events.writes.len());
                }
                for lpn in req.lpn..req.lpn + pages as u64 {
                    events.writes.push(lpn as u32);
                }
            }
            Op::Trim => {
                let need = bytes(events.writes.capacity(), events.trims.len() + pages);
                if !fits(need) {
                    return Err(too_big(need, None, budget.expect("a limit refused it")));
                }
                let now = events.writes.len() as u64;
                for lpn in req.lpn..req.lpn + pages as u64 {
                    events.trims.push((now, lpn as u32));
                }
            }
            _ => {}
        }
    }
    Ok(FutureList::from_events(events, logical))
}

/// The oracle at work in the measured phase: hears every host page write and, before
/// each, marks the pages whose version dies within the horizon.
pub struct FutureNotifier {
    future: FutureList,
    /// It marks zombies (`gc.policy = "oracle"`), and it gives each host write its
    /// lifetime (a placement that reads the future).
    marking: bool,
    lifetimes: bool,
    horizon: u64,
    /// Every written version not marked yet that dies, by when it comes due.
    due: DueLists,
    /// Host page writes applied so far in the measured phase.
    written: u64,
    fingerprint: u64,
    hints: u64,
    /// The channel its marks go through (ideal: delivered at once), and the reused
    /// list of the marks one write makes due.
    notifier: Notifier,
    marks: Vec<u64>,
}

impl FutureNotifier {
    pub fn new(future: FutureList, horizon: u64, marking: bool, lifetimes: bool) -> FutureNotifier {
        let due = DueLists::new(if marking { future.writes() } else { 0 });
        FutureNotifier {
            future,
            marking,
            lifetimes,
            horizon: horizon.clamp(1, MAX_HORIZON),
            due,
            written: 0,
            fingerprint: FOLD_START,
            hints: 0,
            notifier: Notifier::ideal(),
            marks: Vec::new(),
        }
    }

    /// A host page write of `lpn` was applied: remember when its version is due, then
    /// `mark` every page whose version is now dead within the horizon (at most `H` more
    /// writes). Marks are given only here: between two writes nothing comes due, and a
    /// version trimmed right after its write is marked before that trim.
    #[inline]
    fn after_write(&mut self, lpn: u64, mut mark: impl FnMut(u64) -> Result<()>) -> Result<()> {
        let k = self.written;
        self.written += 1;
        self.fingerprint = fold(self.fingerprint, lpn);
        // A version comes due once `d(k) − H` writes are applied, and at the earliest
        // after its own write.
        const AHEAD: u64 = 16;
        if let Some(t) = self.due_at(k + AHEAD) {
            self.due.prefetch(t);
        }
        let now = self.written;
        let own = match self.due_at(k) {
            Some(t) if t > now => {
                self.due.push(t, lpn as u32);
                None
            }
            due => due.map(|t| (t, lpn as u32)),
        };
        for &z in self.due.due_now(now, own) {
            mark(u64::from(z))?;
            self.hints += 1;
        }
        Ok(())
    }

    /// [`Device::submit`], a write page by page (one command, its pages after the
    /// first [`Command::continued`]) with the marks that come due after each; returns
    /// when the command completes.
    pub fn submit(&mut self, device: &mut Device, issue: u64, cmd: &Command) -> Result<u64> {
        if cmd.op != Op::Write || cmd.pages == 0 {
            return device.submit(issue, cmd);
        }
        let mut done = issue;
        for i in 0..cmd.pages {
            let l = cmd.lpn + i as u64;
            let payload = match cmd.payload {
                Payload::PerPage(v) => Payload::PerPage(&v[i as usize..i as usize + 1]),
                p => p,
            };
            let mut one = Command {
                lpn: l,
                pages: 1,
                payload,
                continued: cmd.continued || i > 0,
                ..*cmd
            };
            if self.lifetimes {
                one.hint.lifetime = self.lifetime(self.written);
            }
            done = done.max(device.submit(issue, &one)?);
            let mut marks = std::mem::take(&mut self.marks);
            marks.clear();
            self.after_write(l, |z| {
                marks.push(z);
                Ok(())
            })?;
            for &z in &marks {
                let at = CommandAt::Issue(issue);
                self.notifier.dirtied(device, z, |_| true, at)?;
            }
            self.marks = marks;
        }
        Ok(done)
    }

    /// When write `k`'s version comes due for a mark: once `d(k) − H` host page writes
    /// are applied (`None`: it never dies, or this oracle marks nothing).
    #[inline]
    fn due_at(&self, k: u64) -> Option<u64> {
        let d = *self.future.distance.get(k as usize)?;
        (self.marking && d != NEVER).then(|| (k + u64::from(d)).saturating_sub(self.horizon))
    }

    /// Host page writes after write `k` until its version dies (`None`: never).
    fn lifetime(&self, k: u64) -> Option<u64> {
        match self.future.distance.get(k as usize) {
            Some(&d) if d != NEVER => Some(d as u64),
            _ => None,
        }
    }

    /// Tell `device` when every page's current version dies, as the measured phase
    /// starts (a placement that reads the future places what preconditioning wrote).
    pub fn tell_lifetimes(&self, device: &mut Device) -> Result<()> {
        if !self.lifetimes {
            return Ok(());
        }
        for lpn in 0..device.logical_pages() {
            device.tell_lifetime(lpn, self.future.initial(lpn))?;
        }
        Ok(())
    }

    /// The measured phase is over (`complete`: it was not interrupted): check it wrote
    /// what the pre-pass read, and report.
    pub fn finish(&self, complete: bool) -> Result<OracleReport> {
        if complete
            && (self.written != self.future.writes() || self.fingerprint != self.future.fingerprint)
        {
            return Err(Error::integrity(format!(
                "gc.policy = \"oracle\": the measured phase wrote {} pages but the pre-pass \
                 read {} (or other pages): the request stream was not the same twice",
                self.written,
                self.future.writes()
            )));
        }
        Ok(OracleReport {
            horizon: self.horizon,
            future_writes: self.future.writes(),
            future_trims: self.future.trims,
            hints: self.hints,
            memory_bytes: self.future.memory_bytes() + self.due.memory_bytes(),
            chosen: None,
            candidates: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests;
