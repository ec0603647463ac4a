//! The reference model, and the checks of the device against it and at a power loss.

use proptest::test_runner::TestCaseError;
use std::collections::{BTreeSet, HashSet};
use zombiesim::device::{Device, PageState};
use zombiesim::ftl::FtlExt;
use zombiesim::host::HostWriteBuffer;

/// What the host knows of each logical page.
pub struct Model {
    /// The newest value written (None: never written, or trimmed).
    pub latest: Vec<Option<u64>>,
    /// Whether `latest` was acknowledged durable (flushed, FUA, a non-volatile buffer
    /// or none, a trim).
    pub durable: Vec<bool>,
    /// The last durable value, and the values written since (what flash may hold
    /// after a power loss: the buffer may have evicted any of them).
    pub last_durable: Vec<Option<u64>>,
    pub since: Vec<Vec<u64>>,
    /// Pages hinted as zombies and not written or trimmed since.
    pub zombies: BTreeSet<u64>,
    /// Pages the host buffer holds dirty whose zombie mark the device lost to a stale
    /// copy the same host write wrote back (`a_host_write_that_evicts_its_own_page_*`):
    /// until the host writes them back, even `ideal` leaves the device unaware of them.
    pub unaware: BTreeSet<u64>,
}

impl Model {
    pub fn new(n: usize) -> Self {
        Model {
            latest: vec![None; n],
            durable: vec![true; n],
            last_durable: vec![None; n],
            since: vec![Vec::new(); n],
            zombies: BTreeSet::new(),
            unaware: BTreeSet::new(),
        }
    }

    pub fn set(&mut self, l: u64, v: Option<u64>, durable: bool) {
        let i = l as usize;
        self.latest[i] = v;
        self.durable[i] = durable;
        if durable {
            self.last_durable[i] = v;
            self.since[i].clear();
        } else {
            self.since[i].extend(v);
        }
        self.zombies.remove(&l);
    }

    pub fn all_durable(&mut self) {
        for i in 0..self.latest.len() {
            self.durable[i] = true;
            self.last_durable[i] = self.latest[i];
            self.since[i].clear();
        }
    }

    /// Whether page `l` may read `v` after a power loss: its last durable value or
    /// one written since.
    fn may_survive(&self, l: usize, v: Option<u64>) -> bool {
        v == self.last_durable[l] || v.is_some_and(|v| self.since[l].contains(&v))
    }

    /// Whether `v`, written to page `l` since its last durable value, is also an older
    /// value of it (the last durable one, or written twice since): only with content
    /// values, which repeat.
    fn repeated(&self, l: usize, v: Option<u64>) -> bool {
        v == self.last_durable[l]
            || v.is_some_and(|v| self.since[l].iter().filter(|&&w| w == v).count() > 1)
    }
}

/// Every page reads what the model says, and the device knows the model's zombies.
/// Above a host write buffer: the pages that do not are exactly those the host holds
/// dirty, and the zombies the device knows are among them (all of them, `ideal`).
pub fn agrees(
    name: &str,
    i: usize,
    dev: &Device,
    host: Option<&HostWriteBuffer>,
    ideal: bool,
    m: &Model,
) -> Result<(), TestCaseError> {
    let mut above = BTreeSet::new();
    for (l, &want) in m.latest.iter().enumerate() {
        let got = dev.content_of(l as u64);
        if got != want {
            check!(
                host.is_some(),
                "{name}, step {i}: page {l} reads {got:?}, the model {want:?} (durable: {})",
                m.durable[l]
            );
            above.insert(l as u64);
        }
    }
    let Some(h) = host else {
        check!(
            dev.known_zombies() == m.zombies.len() as u64,
            "{name}, step {i}: the device knows {} zombies, the model {:?}",
            dev.known_zombies(),
            m.zombies
        );
        for &l in &m.zombies {
            check!(
                dev.ftl().is_host_shadow(l),
                "{name}, step {i}: page {l} is not known as a zombie"
            );
        }
        return Ok(());
    };
    let dirty = h.report().dirty_pages_end;
    check!(
        dirty == above.len() as u64,
        "{name}, step {i}: the host buffer holds {dirty} dirty pages; the device lacks the \
         newest value of {above:?}"
    );
    let known: BTreeSet<u64> = (0..dev.logical_pages())
        .filter(|&l| dev.ftl().is_host_shadow(l))
        .collect();
    check!(
        known.len() as u64 == dev.known_zombies(),
        "{name}, step {i}: the device counts {} zombies, marks {known:?}",
        dev.known_zombies()
    );
    check!(
        known.is_subset(&above),
        "{name}, step {i}: the device knows {:?} as zombies, which the host does not hold dirty",
        known.difference(&above).collect::<Vec<_>>()
    );
    let told: BTreeSet<u64> = above.difference(&m.unaware).copied().collect();
    check!(
        !ideal || known == told,
        "{name}, step {i}: told at once, the device does not know {:?} as zombies \
         (the host holds them dirty), or knows {:?} it could not have been told",
        told.difference(&known).collect::<Vec<_>>(),
        known.difference(&told).collect::<Vec<_>>()
    );
    Ok(())
}

/// A power loss: what the device read before it, the pages its buffer reported lost,
/// how many the host buffer lost, whether the device buffer is volatile.
pub struct Loss<'a> {
    pub pre: &'a [Option<u64>],
    pub lost: &'a [u64],
    pub host_lost: u64,
    pub volatile: bool,
}

/// Check a power loss, and bring the model in line with it.
pub fn power_lost(
    name: &str,
    i: usize,
    dev: &Device,
    host: Option<&HostWriteBuffer>,
    m: &mut Model,
    loss: &Loss,
) -> Result<(), TestCaseError> {
    let Loss {
        pre,
        lost,
        host_lost,
        volatile,
    } = *loss;
    check!(
        volatile || lost.is_empty(),
        "{name}, step {i}: nothing volatile, yet {lost:?} were lost"
    );
    check!(
        lost.windows(2).all(|w| w[0] < w[1]),
        "{name}, step {i}: lost pages not ascending: {lost:?}"
    );
    // The host held dirty exactly the pages whose newest value the device lacked.
    let above = (0..pre.len()).filter(|&l| pre[l] != m.latest[l]).count() as u64;
    check!(
        host_lost == above,
        "{name}, step {i}: the host buffer lost {host_lost} pages; it held {above} dirty"
    );
    let lost_set: HashSet<u64> = lost.iter().copied().collect();
    for (l, &was) in pre.iter().enumerate() {
        let got = dev.content_of(l as u64);
        if lost_set.contains(&(l as u64)) {
            check!(
                !m.durable[l],
                "{name}, step {i}: page {l} was acknowledged durable but reported lost"
            );
            check!(
                got != was || m.repeated(l, was),
                "{name}, step {i}: page {l} reported lost still reads the device's newest \
                 value {got:?}"
            );
            // Flash holds the last durable copy, or a later write the buffer evicted.
            check!(
                m.may_survive(l, got),
                "{name}, step {i}: lost page {l} reads {got:?}; last durable {:?}, since {:?}",
                m.last_durable[l],
                m.since[l]
            );
        } else {
            check!(
                got == was,
                "{name}, step {i}: page {l} not reported lost reads {got:?}, not {was:?}"
            );
            if was != m.latest[l] {
                // The host buffer lost its newer copy: the device's is durable or later.
                check!(
                    !m.durable[l] && m.may_survive(l, got),
                    "{name}, step {i}: the host lost page {l} (durable: {}); it reads \
                     {got:?}; last durable {:?}, since {:?}",
                    m.durable[l],
                    m.last_durable[l],
                    m.since[l]
                );
            }
        }
        m.latest[l] = got;
    }
    m.all_durable();
    m.zombies.clear();
    check!(
        dev.known_zombies() == 0,
        "{name}, step {i}: {} zombies survived the power loss",
        dev.known_zombies()
    );
    if volatile {
        let dirty = dev.buffer().map_or(0, |b| b.dirty_count());
        check!(
            dirty == 0,
            "{name}, step {i}: {dirty} dirty pages survived in a volatile buffer"
        );
    }
    if let Some(h) = host {
        let dirty = h.report().dirty_pages_end;
        check!(
            dirty == 0,
            "{name}, step {i}: {dirty} dirty pages survived in the host buffer"
        );
    }
    // Shadows return to live; only a non-volatile buffer's pages stay device-shadow.
    for l in 0..m.latest.len() as u64 {
        if let Some(ppn) = dev.ftl().mapped(l) {
            let state = dev.page_state(l, ppn);
            let ok = state == PageState::Live || (!volatile && state == PageState::DeviceShadow);
            check!(
                ok,
                "{name}, step {i}: page {l} is {state:?} after the power loss"
            );
        }
    }
    Ok(())
}
