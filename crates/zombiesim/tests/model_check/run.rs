//! Running steps through the host buffer and the device, checked after every step.

use super::combos::{existing, Combo};
use super::model::{agrees, power_lost, Loss, Model};
use super::steps::{content_value, placement, Step, STEP_NS};
use proptest::test_runner::TestCaseError;
use zombiesim::config::{FtlKind, NotifyMode};
use zombiesim::device::{Command, Device, Payload};
use zombiesim::ftl::FtlExt;
use zombiesim::host::HostWriteBuffer;
use zombiesim::workload::Op;
use zombiesim::{Config, Error};

/// What a run leaves: the device, the host write buffer (if any), and the pages power
/// losses lost from the device buffer and from the host buffer.
pub struct Outcome {
    pub dev: Device,
    pub host: Option<HostWriteBuffer>,
    pub lost: u64,
    pub host_lost: u64,
}

/// Issue `cmd` at `now`: to the host write buffer when there is one (which has no FUA),
/// else to the device.
fn issue(
    host: &mut Option<HostWriteBuffer>,
    dev: &mut Device,
    now: u64,
    cmd: &Command,
) -> zombiesim::Result<()> {
    match host {
        Some(h) => h.request(dev, now, cmd.op, cmd.lpn, cmd.pages, cmd.payload),
        None => dev.submit(now, cmd),
    }
    .map(drop)
}

/// Power is lost and restored: the host buffer loses its dirty pages (how many is
/// returned second), then the device (the pages its buffer lost, first), as
/// `device.restart_at` runs them.
fn lose_power(
    host: &mut Option<HostWriteBuffer>,
    dev: &mut Device,
) -> zombiesim::Result<(Vec<u64>, u64)> {
    let host_lost = match host {
        Some(h) => {
            let before = h.report().counters.lost_pages;
            h.restart();
            h.report().counters.lost_pages - before
        }
        None => 0,
    };
    Ok((dev.power_loss()?, host_lost))
}

/// What every logical page reads on the device now.
fn contents(dev: &Device) -> Vec<Option<u64>> {
    (0..dev.logical_pages())
        .map(|l| dev.content_of(l))
        .collect()
}

/// Run `steps` on `combo` against the model; the error names the combination and step.
pub fn run(
    combo: &Combo,
    steps: &[Step],
    fill: bool,
    buffer_pages: u64,
) -> Result<Outcome, TestCaseError> {
    let name = combo.name();
    let cfg = combo
        .config(buffer_pages)
        .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
    run_config(&name, &cfg, steps, fill)
}

/// Run `steps` on the device (and host write buffer) `cfg` describes.
pub fn run_config(
    name: &str,
    cfg: &Config,
    steps: &[Step],
    fill: bool,
) -> Result<Outcome, TestCaseError> {
    let mut dev = Device::new(cfg, 7, true).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut host = HostWriteBuffer::new(cfg);
    let volatile = dev.buffer().is_some() && !cfg.device.buffer_nonvolatile;
    let ideal = cfg.notify.mode == NotifyMode::Ideal;
    let value = |k: u64| {
        if cfg.content.enabled() {
            content_value(k)
        } else {
            k
        }
    };
    let n = dev.logical_pages();
    let mut m = Model::new(n as usize);
    let mut next = 0u64;
    let mut now = 0u64;
    let (mut lost_pages, mut host_lost_pages) = (0u64, 0u64);
    let fail = |i: usize, s: Option<&Step>, e: Error| {
        TestCaseError::fail(format!("{name}, step {i} {s:?}: {e}"))
    };
    if fill {
        // Straight to the device, past any host buffer (preconditioning).
        for l in 0..n {
            next += 1;
            let cmd = Command {
                payload: Payload::Same(next),
                ..Command::new(Op::Write, l, 1)
            };
            dev.submit(now, &cmd).map_err(|e| fail(0, None, e))?;
            m.set(l, Some(next), !volatile);
        }
        dev.submit(now, &Command::new(Op::Flush, 0, 0))
            .map_err(|e| fail(0, None, e))?;
        m.all_durable();
    }
    // As the measured phase of a run: timing (background GC in idle time) from here.
    dev.set_timing(cfg.timing.enabled);
    for (i, s) in steps.iter().enumerate() {
        let i = i + 1;
        now += STEP_NS;
        dev.tick(now).map_err(|e| fail(i, Some(s), e))?;
        let at = |e| fail(i, Some(s), e);
        match *s {
            Step::Write(l, pages, fua) => {
                let l = l % n;
                let pages = pages.min((n - l) as u32);
                let values: Vec<u64> = (next + 1..=next + pages as u64).map(value).collect();
                next += pages as u64;
                let cmd = Command {
                    payload: Payload::PerPage(&values),
                    fua,
                    hint: placement(l),
                    ..Command::new(Op::Write, l, pages)
                };
                let range = l..l + pages as u64;
                let before: Vec<Option<u64>> = range.clone().map(|p| dev.content_of(p)).collect();
                issue(&mut host, &mut dev, now, &cmd).map_err(at)?;
                let durable = host.is_none() && (fua || !volatile);
                for (k, &v) in values.iter().enumerate() {
                    m.set(l + k as u64, Some(v), durable);
                }
                // A page of the write that the write itself evicted reached the device
                // as its older copy after the host had noted it dirty again: the
                // write-back cleared the device's mark (a known fault of the host
                // buffer). A twin discard also changes what the device reads, but
                // leaves the mark.
                for (p, was) in range.zip(before) {
                    let got = dev.content_of(p);
                    if host.is_some()
                        && got != was
                        && got != m.latest[p as usize]
                        && !dev.ftl().is_host_shadow(p)
                    {
                        m.unaware.insert(p);
                    }
                }
            }
            Step::Read(l) => read(name, i, &mut host, &mut dev, now, &m, l % n, 1)?,
            // Above a host buffer the hints are its own: a read of a run of pages.
            Step::Zombie(l, _) if host.is_some() => {
                let (l, pages) = (l % n, 1 + l % 8);
                read(name, i, &mut host, &mut dev, now, &m, l, pages.min(n - l))?
            }
            Step::Trim(l) => {
                let l = l % n;
                issue(&mut host, &mut dev, now, &Command::new(Op::Trim, l, 1)).map_err(at)?;
                m.set(l, None, true);
            }
            Step::Flush => {
                issue(&mut host, &mut dev, now, &Command::new(Op::Flush, 0, 0)).map_err(at)?;
                m.all_durable();
            }
            Step::PowerLoss => {
                let before = dev.buffer().map(|b| b.counters.lost_pages);
                let pre = contents(&dev);
                let (lost, host_lost) = lose_power(&mut host, &mut dev).map_err(at)?;
                lost_pages += lost.len() as u64;
                host_lost_pages += host_lost;
                let loss = Loss {
                    pre: &pre,
                    lost: &lost,
                    host_lost,
                    volatile,
                };
                power_lost(name, i, &dev, host.as_ref(), &mut m, &loss)?;
                if let (Some(before), Some(b)) = (before, dev.buffer()) {
                    check!(
                        b.counters.lost_pages == before + lost.len() as u64,
                        "{name}, step {i}: the buffer counted {} lost pages, {} reported",
                        b.counters.lost_pages - before,
                        lost.len()
                    );
                }
            }
            Step::Restart => {
                issue(&mut host, &mut dev, now, &Command::new(Op::Flush, 0, 0)).map_err(at)?;
                m.all_durable();
                let pre = contents(&dev);
                let (lost, host_lost) = lose_power(&mut host, &mut dev).map_err(at)?;
                check!(
                    lost.is_empty() && host_lost == 0,
                    "{name}, step {i}: a restart after a flush lost {lost:?} (and {host_lost} \
                     pages of the host buffer)"
                );
                let loss = Loss {
                    pre: &pre,
                    lost: &lost,
                    host_lost,
                    volatile,
                };
                power_lost(name, i, &dev, host.as_ref(), &mut m, &loss)?;
            }
            Step::Zombie(l, zombie) => {
                let l = l % n;
                dev.hint_zombie(l, zombie).map_err(at)?;
                if zombie {
                    m.zombies.insert(l);
                } else {
                    m.zombies.remove(&l);
                }
            }
        }
        dev.verify().map_err(at)?;
        if let Some(h) = &host {
            h.check().map_err(at)?;
        }
        m.unaware
            .retain(|&p| dev.content_of(p) != m.latest[p as usize]);
        agrees(name, i, &dev, host.as_ref(), ideal, &m)?;
    }
    Ok(Outcome {
        dev,
        host,
        lost: lost_pages,
        host_lost: host_lost_pages,
    })
}

/// A read of `pages` pages from `l`. Through a host write buffer, every page the
/// device does not hold the newest value of must be served by the host (the device's
/// reads the oracle checks).
#[allow(clippy::too_many_arguments)]
fn read(
    name: &str,
    i: usize,
    host: &mut Option<HostWriteBuffer>,
    dev: &mut Device,
    now: u64,
    m: &Model,
    l: u64,
    pages: u64,
) -> Result<(), TestCaseError> {
    let hits =
        |h: &Option<HostWriteBuffer>| h.as_ref().map_or(0, |h| h.report().counters.read_hits);
    let before = hits(host);
    issue(host, dev, now, &Command::new(Op::Read, l, pages as u32))
        .map_err(|e| TestCaseError::fail(format!("{name}, step {i}: {e}")))?;
    let above: Vec<u64> = (l..l + pages)
        .filter(|&p| dev.content_of(p) != m.latest[p as usize])
        .collect();
    let served = hits(host) - before;
    check!(
        served >= above.len() as u64,
        "{name}, step {i}: a read of {pages} pages from {l}: the host served {served}, \
         but the device lacks the newest value of {above:?}"
    );
    Ok(())
}

/// Run `steps` on every existing combination of `ftl` in `variants`.
pub fn run_all(
    ftl: FtlKind,
    variants: &[&str],
    (steps, fill, buffer_pages): &(Vec<Step>, bool, u64),
) -> Result<(), TestCaseError> {
    let combos = existing(ftl, variants);
    assert!(!combos.is_empty(), "{}: no combination", ftl.name());
    for c in &combos {
        run(c, steps, *fill, *buffer_pages)?;
    }
    Ok(())
}
