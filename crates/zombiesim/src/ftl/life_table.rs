//! What the request stream says of each valid page (`gc.zombie_weight = "lifetime"`,
//! with [`ZombieLifetimes`]): the chance that it dies within the GC horizon H, given
//! how long its logical page lived last time and how old it is now — a life table
//! learnt from the pages themselves, so nothing of the future is read.
//!
//! ```text
//!   host writes L at t   ──► class[L] = the interval since its last write, against H:
//!                            below H/4, H, 4H, 16H, longer or none (5 classes);
//!                            written_at[L] = t; if L had a copy, it died: if the open
//!                            note counted L a horizon or less ago, a death in its cell
//!   host trims L         ──► a death too
//!   every H host writes, a note: the last one (a horizon old) closes: its deaths and
//!            pages at risk join the table (older notes weigh about a third, ¾⁴);
//!            then every mapped page is counted at risk in its cell (class, age bucket
//!            ⌊log2(t − written_at + 1)⌋)
//!   q[c][k] = (died + 64·q̄[k]) / (at risk + 64)     q̄[k] = all classes' deaths at age k
//!                                                  / (their pages at risk + 1024)
//!   a sealed block's predicted deaths, at each note and when it is sealed:
//!            trust · Σ of its valid pages' q · (v − z) / v
//!            (z: its known zombies, which their own chance counts)
//!   trust: the least-squares slope, across the blocks sealed at a note and not erased
//!            a horizon later, of the pages each lost on the pages it was predicted to
//!            lose (clamped to 0..1; older notes weigh 0.77, about four horizons)
//! ```
//!
//! A page's last interval says how hot its logical page is (SepBIT's signal), its age
//! how long it has outlived that; a cell with few pages at risk leans on its age's
//! pooled share, and that, while few pages are seen, on nothing. The hot blocks greedy
//! takes too early, whose pages die soon after, are full of pages of high `q`: z-greedy
//! and z-cost-benefit count them as about to die and postpone the block, as the victim
//! oracle, told every death, does. A page is followed by its logical page, so GC
//! copying it between notes neither hides its death nor counts one.
//!
//! The trust is the fallback to the base policy: where the blocks' deaths do not follow
//! their predictions (a database whose checkpoints make one horizon unlike the next) it
//! falls towards 0 and the predictions count for little; where they do, fully. It
//! starts at 0: nothing counts before a horizon has shown how predictions come out.
//!
//! Cost: O(1) per host write and trim; O(logical pages) per note (one pass over the
//! mapping table) every H host writes; O(pages per block) per sealed block. 10 bytes a
//! logical page (the time, the class, the note's tag), allocated on the first host
//! write; 28 a block (the note's 16 bytes, the prediction and its sum).
//!
//! [`ZombieLifetimes`]: super::ZombieLifetimes

use crate::flash::{BlockStatus, FlashState, NONE};

/// Lifetime and age buckets, here and in [`ZombieLifetimes`]: `⌊log2(x + 1)⌋` host page
/// writes.
///
/// [`ZombieLifetimes`]: super::ZombieLifetimes
pub(super) const BUCKETS: usize = 48;

/// The bucket of a lifetime or age (host page writes).
#[inline]
pub(super) fn bucket(x: u64) -> usize {
    (63 - (x.saturating_add(1)).leading_zeros() as usize).min(BUCKETS - 1)
}

/// Classes of a page by its logical page's last interval between host writes, against
/// the horizon H: below H/4, H, 4H, 16H, and longer or none yet.
pub(super) const CLASSES: usize = 5;
/// Each older note weighs this much less in the table (¾ per quarter horizon).
const NOTE_DECAY: f64 = 0.75 * 0.75 * 0.75 * 0.75;
/// Each older note weighs this much less in the trust (about four horizons: a
/// database's checkpoint cycle is longer than one).
const FIT_DECAY: f64 = 0.9375 * 0.9375 * 0.9375 * 0.9375;
/// Pages at risk at which an age's pooled share is trusted half (else: no deaths), and
/// at which a cell's own share is trusted half (else: its age's): the defaults of
/// `gc.lifetime_page_prior` and `gc.lifetime_class_prior`.
#[cfg(test)]
use crate::config::{LIFETIME_CLASS_PRIOR as CLASS_PRIOR, LIFETIME_PAGE_PRIOR as PAGE_PRIOR};
/// Not written yet.
const NEVER: u64 = u64::MAX;
/// No tag: not at risk in the open note.
const UNTAGGED: u8 = u8::MAX;

/// Host page writes from `at` to `now` (`NEVER` if never written).
#[inline]
fn since(at: u64, now: u64) -> u64 {
    if at == NEVER {
        NEVER
    } else {
        now.saturating_sub(at)
    }
}

/// The class of a page whose logical page was last rewritten after `interval` host
/// page writes (`NEVER`: first written).
#[inline]
fn class_of(interval: u64, horizon: u64) -> u8 {
    if interval == NEVER {
        return (CLASSES - 1) as u8;
    }
    let mut c = 0;
    let mut limit = horizon / 4;
    while c < CLASSES - 1 && interval >= limit {
        c += 1;
        limit = limit.saturating_mul(4);
    }
    c as u8
}

/// The open note, taken every horizon and closed as the next is taken (one pass over the
/// mapping table each; notes a quarter horizon apart, four open at once, predicted no
/// better on the corpus and cost four passes): when it was taken; per cell (class · BUCKETS + age bucket) the pages at
/// risk then and those dead since, within the horizon; per block, if sealed then, its
/// predicted deaths before [`LifeTable::trust`] scaled them, its valid pages and its
/// erase count.
#[derive(Clone, Debug)]
struct Note {
    at: u64,
    at_risk: Vec<u32>,
    died: Vec<u32>,
    blocks: Vec<Option<NotedBlock>>,
}

#[derive(Clone, Copy, Debug)]
struct NotedBlock {
    predicted: f32,
    valid: u32,
    erases: u32,
}

/// The chance that a valid page dies within the horizon, by its class and age.
#[derive(Clone, Debug)]
pub struct LifeTable {
    /// `gc.lifetime_page_prior`, `gc.lifetime_class_prior`.
    page_prior: f64,
    class_prior: f64,
    horizon: u64,
    logical: usize,
    /// Per logical page (allocated on the first host write): its last host write, its
    /// class, and its cell in the open note.
    written_at: Vec<u64>,
    class: Vec<u8>,
    tags: Vec<u8>,
    note: Option<Note>,
    last_note: u64,
    /// Decayed sums of closed notes, per cell, and the chances they give.
    at_risk: Vec<f64>,
    died: Vec<f64>,
    chance: Vec<f64>,
    /// Decayed sums over the blocks sealed at a note and a horizon later (n, Σp, Σa,
    /// Σp², Σpa: p predicted, a actual deaths), and the slope of a on p (0 to 1) that
    /// scales every prediction.
    fit: [f64; 5],
    trust: f64,
    /// Each block's predicted deaths among its valid non-zombie pages, as last noted
    /// or at its sealing.
    predicted: Vec<u32>,
    scratch: Vec<f64>,
}

impl LifeTable {
    /// For `logical` pages on `blocks` blocks and a horizon of `horizon` host page
    /// writes, an age's pooled share trusted half at `page_prior` pages at risk and a
    /// cell's own at `class_prior`.
    pub fn new(
        logical: usize,
        blocks: usize,
        horizon: u64,
        page_prior: f64,
        class_prior: f64,
    ) -> Self {
        let cells = CLASSES * BUCKETS;
        LifeTable {
            page_prior,
            class_prior,
            horizon: horizon.max(1),
            logical,
            written_at: Vec::new(),
            class: Vec::new(),
            tags: Vec::new(),
            note: None,
            last_note: 0,
            at_risk: vec![0.0; cells],
            died: vec![0.0; cells],
            chance: vec![0.0; cells],
            fit: [0.0; 5],
            trust: 0.0,
            predicted: vec![0; blocks],
            scratch: vec![0.0; blocks],
        }
    }

    fn allocate(&mut self) {
        if self.written_at.is_empty() {
            self.written_at = vec![NEVER; self.logical];
            self.class = vec![(CLASSES - 1) as u8; self.logical];
            self.tags = vec![UNTAGGED; self.logical];
        }
    }

    /// The host wrote logical page `l` at `now`; `had_copy`: its last copy dies.
    #[inline]
    pub fn written(&mut self, l: usize, now: u64, had_copy: bool) {
        self.allocate();
        if l >= self.logical {
            return;
        }
        if had_copy {
            self.died_at(l, now);
        }
        let at = std::mem::replace(&mut self.written_at[l], now);
        self.class[l] = class_of(since(at, now), self.horizon);
    }

    /// The host trimmed logical page `l` (mapped) at `now`: its copy died.
    #[inline]
    pub fn trimmed(&mut self, l: usize, now: u64) {
        if l < self.tags.len() {
            self.died_at(l, now);
        }
    }

    /// `l`'s copy died at `now`: a death in its cell if the open note counted it at
    /// risk a horizon or less before.
    #[inline]
    fn died_at(&mut self, l: usize, now: u64) {
        let cell = std::mem::replace(&mut self.tags[l], UNTAGGED);
        if cell == UNTAGGED {
            return;
        }
        if let Some(note) = self.note.as_mut() {
            if now.saturating_sub(note.at) <= self.horizon {
                note.died[cell as usize] += 1;
            }
        }
    }

    /// Logical page `l`'s cell at `now`.
    #[inline]
    fn cell(&self, l: usize, now: u64) -> usize {
        self.class[l] as usize * BUCKETS + bucket(since(self.written_at[l], now))
    }

    /// Block `block`'s predicted deaths among its valid non-zombie pages.
    #[inline]
    pub fn predicted(&self, block: u32) -> u32 {
        self.predicted[block as usize]
    }

    /// The slope of the blocks' actual deaths on their predicted ones, measured a
    /// horizon after each note (0 to 1): how much a prediction counts.
    pub fn trust(&self) -> f64 {
        self.trust
    }

    /// Block `block`'s predicted deaths before `trust` scales them, from `dying`, the
    /// sum of its valid pages' chances: only its non-zombie share counts.
    fn others(flash: &FlashState, block: usize, dying: f64) -> f64 {
        let v = flash.valid_count[block];
        if v == 0 {
            return 0.0;
        }
        dying * f64::from(v.saturating_sub(flash.zombies[block])) / f64::from(v)
    }

    /// Block `block` was sealed at `now`: its predicted deaths from its valid pages'
    /// chances (until the next note renews them).
    pub fn sealed(&mut self, block: u32, flash: &FlashState, now: u64) {
        let b = block as usize;
        if self.written_at.is_empty() {
            self.predicted[b] = 0;
            return;
        }
        let dying: f64 = flash
            .valid_pages(block)
            .map(|ppn| flash.owner[ppn as usize] as usize)
            .filter(|&l| l < self.logical)
            .map(|l| self.chance[self.cell(l, now)])
            .sum();
        self.predicted[b] = (Self::others(flash, b, dying) * self.trust).round() as u32;
    }

    /// Whether a note is due at `now` (a horizon since the last).
    pub fn note_due(&self, now: u64) -> bool {
        now.saturating_sub(self.last_note) >= self.horizon
    }

    /// A note at `now`, if one is due: the open note, a horizon old, closes (into the
    /// table and the trust), every mapped page (`l2p`) is counted at risk in its cell,
    /// and every sealed block's predicted deaths are renewed.
    pub fn note(&mut self, now: u64, flash: &FlashState, l2p: &[u32]) {
        if !self.note_due(now) {
            return;
        }
        self.last_note = now;
        self.allocate();
        if self.note.is_some() {
            self.close(flash);
        }
        let cells = CLASSES * BUCKETS;
        let note = self.note.get_or_insert_with(|| Note {
            at: now,
            at_risk: vec![0; cells],
            died: vec![0; cells],
            blocks: Vec::new(),
        });
        // One pass over the logical pages, in step (no lookups by index but the cell's
        // and the block's).
        self.scratch.fill(0.0);
        let at_risk = &mut note.at_risk[..];
        let (chance, scratch) = (&self.chance[..], &mut self.scratch[..]);
        let pages = l2p
            .iter()
            .zip(&self.written_at)
            .zip(&self.class)
            .zip(self.tags.iter_mut());
        for (((&ppn, &at), &class), tag) in pages {
            if ppn == NONE {
                *tag = UNTAGGED;
                continue;
            }
            let cell = class as usize * BUCKETS + bucket(since(at, now));
            *tag = cell as u8;
            at_risk[cell] += 1;
            scratch[flash.block_of(ppn) as usize] += chance[cell];
        }
        let mut blocks = vec![None; self.predicted.len()];
        for (b, noted) in blocks.iter_mut().enumerate() {
            self.predicted[b] = 0;
            if flash.status[b] != BlockStatus::Closed {
                continue;
            }
            let raw = Self::others(flash, b, self.scratch[b]);
            self.predicted[b] = (raw * self.trust).round() as u32;
            *noted = Some(NotedBlock {
                predicted: raw as f32,
                valid: flash.valid_count[b],
                erases: flash.erase_count[b],
            });
        }
        let note = self.note.as_mut().expect("the note just taken");
        note.at = now;
        note.blocks = blocks;
    }

    /// The open note, a horizon old: its pages at risk and deaths join the table (older
    /// ones weigh less), and its blocks' predictions, against what they lost since
    /// (blocks erased in between left out), the trust. It is emptied for the next.
    fn close(&mut self, flash: &FlashState) {
        let Some(note) = self.note.as_mut() else {
            return;
        };
        for i in 0..note.at_risk.len() {
            self.at_risk[i] = self.at_risk[i] * NOTE_DECAY + f64::from(note.at_risk[i]);
            self.died[i] = self.died[i] * NOTE_DECAY + f64::from(note.died[i]);
        }
        note.at_risk.fill(0);
        note.died.fill(0);
        self.fit.iter_mut().for_each(|x| *x *= FIT_DECAY);
        for (b, noted) in note.blocks.iter().enumerate() {
            let Some(n) = noted else { continue };
            if n.erases != flash.erase_count[b] || flash.status[b] != BlockStatus::Closed {
                continue;
            }
            let (p, a) = (
                f64::from(n.predicted),
                f64::from(n.valid) - f64::from(flash.valid_count[b]),
            );
            for (sum, x) in self.fit.iter_mut().zip([1.0, p, a, p * p, p * a]) {
                *sum += x;
            }
        }
        let [n, sp, sa, spp, spa] = self.fit;
        let var = spp - sp * sp / n.max(1.0);
        self.trust = if var > 0.0 {
            ((spa - sp * sa / n) / var).clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.renew_chances();
    }

    fn renew_chances(&mut self) {
        for k in 0..BUCKETS {
            let (at_risk, died) = (0..CLASSES)
                .map(|c| (self.at_risk[c * BUCKETS + k], self.died[c * BUCKETS + k]))
                .fold((0.0, 0.0), |(a, d), (x, y)| (a + x, d + y));
            let pooled = died / (at_risk + self.page_prior);
            for c in 0..CLASSES {
                let i = c * BUCKETS + k;
                self.chance[i] = ((self.died[i] + self.class_prior * pooled)
                    / (self.at_risk[i] + self.class_prior))
                    .clamp(0.0, 1.0);
            }
        }
    }

    /// The chance to die within the horizon per class, by age bucket, up to the last
    /// age where any class has one.
    pub fn by_class_and_age(&self) -> Vec<Vec<f64>> {
        let used = self
            .chance
            .chunks(BUCKETS)
            .filter_map(|c| c.iter().rposition(|&q| q > 0.0))
            .max()
            .map_or(0, |i| i + 1);
        self.chance
            .chunks(BUCKETS)
            .map(|c| c[..used].to_vec())
            .collect()
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.written_at.len() * (8 + 1 + 1)
            + self.predicted.len() * (4 + 8)
            + self.note.as_ref().map_or(0, |n| {
                CLASSES * BUCKETS * 8 + n.blocks.len() * std::mem::size_of::<Option<NotedBlock>>()
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Geometry};

    fn flash() -> FlashState {
        let mut cfg = Config::preset("default").unwrap();
        cfg.set("ftl.over_provisioning", "0.25").unwrap();
        cfg.set("flash.channels", "1").unwrap();
        cfg.set("flash.chips_per_channel", "1").unwrap();
        cfg.set("flash.blocks_per_plane", "64").unwrap();
        cfg.set("flash.pages_per_block", "8").unwrap();
        FlashState::new(&Geometry::new(&cfg).unwrap())
    }

    #[test]
    fn a_page_is_classed_by_its_last_interval_against_the_horizon() {
        let h = 400;
        assert_eq!(class_of(NEVER, h), 4);
        assert_eq!(class_of(0, h), 0);
        assert_eq!(class_of(99, h), 0);
        assert_eq!(class_of(100, h), 1);
        assert_eq!(class_of(399, h), 1);
        assert_eq!(class_of(400, h), 2);
        assert_eq!(class_of(1_599, h), 2);
        assert_eq!(class_of(1_600, h), 3);
        assert_eq!(class_of(6_400, h), 4);
    }

    /// The host writes `l` at `t` into the open `block` (opened if free): the table
    /// hears of it, the old copy dies, the mapping follows.
    fn write(t: &mut LifeTable, f: &mut FlashState, l2p: &mut [u32], l: u32, now: u64, block: u32) {
        let old = l2p[l as usize];
        t.written(l as usize, now, old != NONE);
        if old != NONE {
            f.invalidate(old, now);
        }
        if f.status[block as usize] == BlockStatus::Free {
            f.open(block, 0);
        }
        l2p[l as usize] = f.program(block, l, now).0;
    }

    #[test]
    fn a_page_dies_in_the_cell_it_was_at_risk_in() {
        // Horizon 400: a note every 400 host writes, closed when the next is taken.
        let (mut t, mut f) = (
            LifeTable::new(16, 64, 400, PAGE_PRIOR, CLASS_PRIOR),
            flash(),
        );
        let mut l2p = vec![NONE; 16];
        // Pages 0-7 written twice 8 writes apart (class 0, below H/4), into block 1;
        // pages 8-15 once (class 4), into block 2.
        for l in 0..8 {
            write(&mut t, &mut f, &mut l2p, l, 1 + u64::from(l), 0);
        }
        for l in 0..8 {
            write(&mut t, &mut f, &mut l2p, l, 9 + u64::from(l), 1);
        }
        for l in 8..16 {
            write(&mut t, &mut f, &mut l2p, l, 9 + u64::from(l), 2);
        }
        assert!(!t.note_due(399));
        t.note(400, &f, &l2p);
        // At 400 pages 0-7 are 384-391 writes old, pages 8-15 376-383: age bucket 8.
        let (hot, cold) = (8, 4 * BUCKETS + 8);
        let note = |t: &LifeTable| t.note.clone().expect("a note");
        assert_eq!((note(&t).at_risk[hot], note(&t).at_risk[cold]), (8, 8));
        // Four of the hot pages die 50 writes after the note, into block 3.
        for l in 0..4 {
            write(&mut t, &mut f, &mut l2p, l, 450 + u64::from(l), 3);
        }
        assert_eq!(note(&t).died[hot], 4);
        assert!(
            t.by_class_and_age().iter().all(|c| c.is_empty()),
            "nothing closed yet"
        );
        // A death more than a horizon after the note is not its.
        write(&mut t, &mut f, &mut l2p, 4, 801, 3);
        t.note(801, &f, &l2p);
        // The note closed: at age bucket 8, 4 of 16 pages died (pooled, shrunk by 1024
        // pages), and of class 0's 8 pages 4.
        let pooled = 4.0 / (16.0 + PAGE_PRIOR);
        let hot_chance = (4.0 + CLASS_PRIOR * pooled) / (8.0 + CLASS_PRIOR);
        let cold_chance = CLASS_PRIOR * pooled / (8.0 + CLASS_PRIOR);
        let table = t.by_class_and_age();
        assert!((table[0][8] - hot_chance).abs() < 1e-12, "{table:?}");
        assert!((table[4][8] - cold_chance).abs() < 1e-12, "{table:?}");
        assert!(
            (table[1][8] - pooled).abs() < 1e-12,
            "no class 1 page was at risk at that age: the pooled share"
        );
    }

    /// Trust after one closed note whose sealed blocks 1-4 were predicted to lose `p`
    /// pages and lost `a`.
    fn trust(p: [f32; 4], a: [u32; 4]) -> f64 {
        let (mut t, mut f) = (
            LifeTable::new(16, 64, 400, PAGE_PRIOR, CLASS_PRIOR),
            flash(),
        );
        let cells = CLASSES * BUCKETS;
        let mut blocks = vec![None; 64];
        for b in 1..5 {
            f.status[b] = BlockStatus::Closed;
            f.valid_count[b] = 100 - a[b - 1];
            blocks[b] = Some(NotedBlock {
                predicted: p[b - 1],
                valid: 100,
                erases: 0,
            });
        }
        t.note = Some(Note {
            at: 0,
            at_risk: vec![0; cells],
            died: vec![0; cells],
            blocks,
        });
        t.close(&f);
        t.trust()
    }

    #[test]
    fn predictions_count_by_how_well_they_came_out() {
        assert_eq!(trust([0.0, 2.0, 4.0, 6.0], [0, 2, 4, 6]), 1.0, "exact");
        assert_eq!(
            trust([0.0, 2.0, 4.0, 6.0], [1, 2, 3, 4]),
            0.5,
            "half the spread"
        );
        assert_eq!(
            trust([0.0, 2.0, 4.0, 6.0], [0, 4, 8, 12]),
            1.0,
            "at most whole"
        );
        assert_eq!(trust([0.0, 2.0, 4.0, 6.0], [3, 3, 3, 3]), 0.0, "no skill");
        assert_eq!(
            trust([0.0, 2.0, 4.0, 6.0], [6, 4, 2, 0]),
            0.0,
            "wrong way round"
        );
        assert_eq!(trust([2.0; 4], [0, 2, 4, 6]), 0.0, "no spread predicted");
    }
}
