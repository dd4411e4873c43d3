//! Preconditioning: put the drive in a stated state before the trace starts, in bulk (no
//! event simulation), so a 128 GB drive takes seconds.

use std::collections::VecDeque;

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::aging::Labels;
use super::footprint::Footprint;
use super::Ftl;
use crate::Error;

/// Drive state before the trace starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreconditionConfig {
    /// Write every logical page the trace touches before it starts (so reads hit mapped data).
    #[serde(default = "yes")]
    pub write_trace_footprint: bool,
    /// Fill the drive to this share of its logical capacity (trace footprint first, then random
    /// pages). 0 = only the footprint.
    #[serde(default)]
    pub fill_fraction: f64,
    /// Age the drive with random overwrites of the filled pages until garbage collection is in
    /// steady state (write amplification of two successive rounds within 2 %).
    #[serde(default)]
    pub age: bool,
    /// Upper bound on aging rounds; each round overwrites a tenth of the filled pages.
    #[serde(default = "default_age_rounds")]
    pub age_max_rounds: u32,
    /// Which requests' pages the footprint holds: `all` (the default) or `reads` (SSDsim's
    /// `pre_process_page`: only what the trace reads exists before it starts; with
    /// `ftl.partial_page_writes = "read_modify_write"` only the sectors read).
    #[serde(default, skip_serializing_if = "FootprintRequests::is_default")]
    pub footprint_requests: FootprintRequests,
}

fn yes() -> bool {
    true
}
fn default_age_rounds() -> u32 {
    50
}

impl Default for PreconditionConfig {
    fn default() -> Self {
        PreconditionConfig {
            write_trace_footprint: true,
            fill_fraction: 0.0,
            age: false,
            age_max_rounds: 50,
            footprint_requests: FootprintRequests::All,
        }
    }
}

/// Which requests of the trace make up the footprint written before it starts
/// (`precondition.footprint_requests`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FootprintRequests {
    /// Every page the trace touches.
    #[default]
    All,
    /// Only the pages the trace reads (SSDsim's `pre_process_page`).
    Reads,
}

impl FootprintRequests {
    pub fn is_default(&self) -> bool {
        *self == FootprintRequests::All
    }
}

/// What preconditioning did (reported in the summary).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PreconditionReport {
    /// Logical pages of the trace's footprint written before the run.
    pub footprint_pages: u64,
    /// Further logical pages written to reach `fill_fraction`.
    pub fill_pages: u64,
    /// Aging rounds run (each overwrites a tenth of the filled pages at random).
    pub age_rounds: u32,
    /// Write amplification of the last aging round (0 when not aged).
    pub age_final_waf: f64,
    /// Wall-clock seconds spent putting the drive in its start state: preconditioning it,
    /// or reading its snapshot when [`PreconditionReport::snapshot`] says it was loaded.
    pub wall_s: f64,
    /// The precondition cache's snapshot of this drive, when the run was given a cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotReport>,
}

/// `precondition.snapshot` in the summary (docs/summary.md): the snapshot a run with a
/// precondition cache loaded its drive from, or preconditioned and wrote.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SnapshotReport {
    /// Hash of everything that shapes the drive's start state, 16 hex digits.
    pub key: String,
    /// The snapshot file, in the cache directory, named by the key.
    pub file: String,
    /// True: the drive was loaded from the file; false: this run preconditioned it and wrote
    /// the file.
    pub loaded: bool,
    /// Wall-clock seconds spent writing the file (0 when it was loaded).
    pub write_wall_s: f64,
}

/// Fill the drive: the footprint first (in logical order), then pages from a seeded random
/// start up to `fill_fraction` of logical capacity; then optionally age it. A fill beyond the
/// footprint on a fresh drive is written as a formula (ftl/fill.rs), with the state writing
/// page by page leaves.
pub fn precondition(
    ftl: &mut Ftl,
    config: &PreconditionConfig,
    footprint: Option<&Footprint>,
    seed: u64,
) -> Result<PreconditionReport, Error> {
    precondition_with(ftl, config, footprint, seed, true)
}

/// [`precondition`] writing every page one by one (the reference the formula is tested on).
#[cfg(test)]
pub(super) fn precondition_page_by_page(
    ftl: &mut Ftl,
    config: &PreconditionConfig,
    footprint: Option<&Footprint>,
    seed: u64,
) -> Result<PreconditionReport, Error> {
    precondition_with(ftl, config, footprint, seed, false)
}

fn precondition_with(
    ftl: &mut Ftl,
    config: &PreconditionConfig,
    footprint: Option<&Footprint>,
    seed: u64,
    formula: bool,
) -> Result<PreconditionReport, Error> {
    let started = std::time::Instant::now();
    let mut report = PreconditionReport::default();
    let logical = ftl.logical_pages();
    let chips = ftl.geometry.chips() as usize;
    let no_load = vec![0u32; chips];
    let mut gc_ops = Vec::new();
    let footprint = footprint.filter(|_| config.write_trace_footprint);
    let target = (config.fill_fraction * logical as f64) as u64;
    let footprint_pages = footprint.map_or(0, Footprint::pages);
    // The rest of the fill goes to the logical pages after a seeded random start, in address
    // order (wrapping): static striping still spreads it evenly over the planes, and the
    // mapping table grows only with the pages filled.
    let sweep_start = (footprint_pages < target).then(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5052_4543_4f4e_4431);
        rng.random_range(0..logical)
    });
    let in_order = sweep_start.filter(|_| formula).and_then(|start| {
        let (swept, fill_pages) =
            super::fill::sweep_extent(footprint, start, logical, target - footprint_pages);
        ftl.fill_in_order(footprint, start, swept)
            .then_some(fill_pages)
    });
    let written = match in_order {
        Some(fill_pages) => {
            report.footprint_pages = footprint_pages;
            report.fill_pages = fill_pages;
            match ftl.map.fill() {
                Some(fill) if config.age => fill.written(),
                _ => Footprint::new(0),
            }
        }
        None => {
            let order = WriteOrder {
                in_order: formula,
                keep_written: config.age,
            };
            fill_page_by_page(ftl, footprint, sweep_start, target, order, &mut report)?
        }
    };
    if config.age && written.pages() > 0 {
        let round_writes = (written.pages() / 10).max(1);
        let mut picks = AgingPicks::new(&written, logical, seed);
        if in_order.is_some() {
            picks.filled_fill = ftl.map.fill().map(super::fill::FillMap::filled);
        }
        let mut last_waf = 0.0;
        // Plane by plane when it applies (ftl/aging.rs), else in the order of the picks.
        let mut by_plane = ByPlane::default();
        let planes = ftl.planes.len();
        // The first round drawn while the plane-major map is built.
        let plane_major = if formula {
            ftl.begin_plane_major(|labels| {
                by_plane.draw_ahead(planes, labels, &mut picks, round_writes);
            })
        } else {
            None
        };
        for round in 0..config.age_max_rounds {
            let before = ftl.counters();
            if let Some(numbering) = &plane_major {
                let more = round + 1 < config.age_max_rounds;
                let written =
                    by_plane.write_round(ftl, numbering.labels(), &mut picks, round_writes, more);
                if let Err(error) = written {
                    if let Some(numbering) = plane_major {
                        ftl.end_plane_major(numbering);
                    }
                    return Err(error);
                }
            } else {
                for _ in 0..round_writes {
                    let lpn = picks.next(ftl);
                    ftl.write(lpn, &no_load, &mut gc_ops)?;
                    gc_ops.clear();
                }
            }
            let after = ftl.counters();
            let host = (after.host_page_writes - before.host_page_writes) as f64;
            let moved = (after.gc_pages_moved - before.gc_pages_moved) as f64;
            let waf = (host + moved) / host;
            report.age_rounds = round + 1;
            report.age_final_waf = waf;
            // Steady state: GC is running and write amplification has stopped moving.
            if moved > 0.0 && (waf - last_waf).abs() <= 0.02 * waf {
                break;
            }
            last_waf = waf;
        }
        // The round's buffers go before the numbering is turned back (its peak of memory).
        drop(by_plane);
        if let Some(numbering) = plane_major {
            ftl.end_plane_major(numbering);
        }
    }
    ftl.reset_counters();
    report.wall_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The footprint, then the sweep from `sweep_start` up to `target` pages, one write a page
/// (the footprint in one pass where `order` and the drive allow: ftl/fill.rs). Returns the
/// pages written, as a set (empty when neither a sweep nor `order.keep_written` needs it).
fn fill_page_by_page(
    ftl: &mut Ftl,
    footprint: Option<&Footprint>,
    sweep_start: Option<u64>,
    target: u64,
    order: WriteOrder,
    report: &mut PreconditionReport,
) -> Result<Footprint, Error> {
    let logical = ftl.logical_pages();
    let no_load = vec![0u32; ftl.geometry.chips() as usize];
    let mut gc_ops = Vec::new();
    let mut written = Footprint::new(logical);
    if let Some(footprint) = footprint {
        if order.in_order && ftl.write_footprint_in_order(footprint) {
            // Every page of it was written (none past the end). The set is needed only by a
            // sweep or by aging: a copy of it would cost a bit per logical page more memory.
            if order.keep_written || sweep_start.is_some() {
                footprint.iter().for_each(|lpn| _ = written.insert(lpn));
            }
            report.footprint_pages = footprint.pages();
        } else {
            for lpn in footprint.iter() {
                ftl.write(lpn, &no_load, &mut gc_ops)?;
                gc_ops.clear();
                written.insert(lpn);
            }
            report.footprint_pages = written.pages();
        }
    }
    if let Some(start) = sweep_start {
        for i in 0..logical {
            if written.pages() >= target {
                break;
            }
            let lpn = (start + i) % logical;
            if !written.contains(lpn) {
                ftl.write(lpn, &no_load, &mut gc_ops)?;
                gc_ops.clear();
                written.insert(lpn);
                report.fill_pages += 1;
            }
        }
    }
    Ok(written)
}

/// How [`fill_page_by_page`] may write the footprint.
#[derive(Clone, Copy)]
struct WriteOrder {
    /// In one pass where the drive allows (ftl/fill.rs); false: one write a page, the
    /// reference the tests compare with.
    in_order: bool,
    /// The set of pages written is wanted afterwards (aging draws from it).
    keep_written: bool,
}

/// Aging rounds written plane by plane (ftl/aging.rs), with their buffers kept between
/// rounds. The picks do not depend on the drive, so the next round's are drawn while this
/// round's planes are written (on the thread that would otherwise wait for them); when the
/// round turns out to be the last, those draws are simply not used.
#[derive(Default)]
struct ByPlane {
    /// The round being written: each residue's picks (plane-major labels), in the order
    /// drawn. Drawn straight into these (no buffer in drawn order, no grouping pass).
    current: Vec<Vec<u32>>,
    /// The next round's, when drawn.
    next: Vec<Vec<u32>>,
    next_drawn: bool,
    /// The draws' state where each of those rounds starts: a failing write's place in the
    /// order of the picks is found by drawing its round again.
    current_start: Option<DrawState>,
    next_start: Option<DrawState>,
}

/// Empty `groups`, one per residue, with room for a round of `writes` picks: a residue's
/// expected share and four standard deviations more (a group that still outgrows it
/// reallocates).
fn make_room(groups: &mut Vec<Vec<u32>>, residues: usize, writes: u64) {
    groups.resize_with(residues, Vec::new);
    let expected = writes / residues.max(1) as u64;
    let room = (expected + 4 * expected.isqrt() + 16) as usize;
    for group in groups.iter_mut() {
        group.clear();
        group.reserve(room);
    }
}

/// One round's picks drawn into `groups` ([`make_room`]), each residue's (labels
/// `r * span ..`) in the order drawn.
fn draw_round(groups: &mut [Vec<u32>], labels: &Labels, picks: &mut AgingPicks, writes: u64) {
    for _ in 0..writes {
        let (residue, label) = labels.residue_and_label(picks.draw());
        if let Some(group) = groups.get_mut(residue as usize) {
            group.push(label);
        }
    }
}

impl ByPlane {
    /// The next round's picks, drawn now.
    fn draw_ahead(&mut self, groups: usize, labels: &Labels, picks: &mut AgingPicks, writes: u64) {
        self.next_start = Some(picks.save());
        make_room(&mut self.next, groups, writes);
        draw_round(&mut self.next, labels, picks, writes);
        self.next_drawn = true;
    }

    fn write_round(
        &mut self,
        ftl: &mut Ftl,
        labels: &Labels,
        picks: &mut AgingPicks,
        writes: u64,
        more: bool,
    ) -> Result<(), Error> {
        let span = labels.span();
        let groups = ftl.planes.len();
        if !self.next_drawn {
            self.draw_ahead(groups, labels, picks, writes);
        }
        std::mem::swap(&mut self.current, &mut self.next);
        self.current_start = self.next_start.take();
        self.next_drawn = false;
        if more {
            make_room(&mut self.next, groups, writes);
        }
        let no_load = vec![0u32; ftl.geometry.chips() as usize];
        let mut gc_ops = Vec::new();
        // For each plane, the index of its failing pick and the error, if one failed.
        let failed: Vec<Option<(usize, Error)>> = if ftl.ages_by_plane_kernel() {
            let ByPlane {
                current,
                next,
                next_drawn,
                next_start,
                ..
            } = self;
            let jobs: Vec<(u32, u64, &[u32])> = current
                .iter()
                .enumerate()
                .map(|(g, group)| {
                    (
                        ftl.static_map.plane_of(g as u64 * span),
                        g as u64 * span,
                        &group[..],
                    )
                })
                .collect();
            *next_drawn = more;
            ftl.age_planes(&jobs, || {
                if more {
                    *next_start = Some(picks.save());
                    draw_round(next, labels, picks, writes);
                }
            })
        } else {
            self.current
                .iter()
                .map(|group| write_in_order(ftl, group, &no_load, &mut gc_ops).err())
                .collect()
        };
        // A plane that fails stops; the error is the one the first failing write in the
        // order of the picks gives.
        let mut first_error: Option<(usize, Error)> = None;
        if failed.iter().any(Option::is_some) {
            // The round's picks in drawn order again, from the state it started in.
            let resume = picks.save();
            let mut drawn = Vec::new();
            if let Some(start) = self.current_start.clone() {
                picks.restore(start);
                drawn.extend((0..writes).map(|_| u64::from(labels.label(picks.draw())) / span));
                picks.restore(resume);
            }
            for (g, failed) in failed.into_iter().enumerate() {
                if let Some((n, error)) = failed {
                    // Its place in the order of the picks.
                    let index = (0..drawn.len())
                        .filter(|&i| drawn[i] as usize == g)
                        .nth(n)
                        .unwrap_or(usize::MAX);
                    if first_error.as_ref().is_none_or(|(at, _)| index < *at) {
                        first_error = Some((index, error));
                    }
                }
            }
        }
        match first_error {
            Some((_, error)) => Err(error),
            None => Ok(()),
        }
    }
}

/// Write `labels` one [`Ftl::write`] each, with the prefetch stages of [`AgingPicks::next`]:
/// map entry, old block's record, what the invalidation touches, each a few writes ahead. On
/// error, the index of the failing label.
fn write_in_order(
    ftl: &mut Ftl,
    labels: &[u32],
    no_load: &[u32],
    gc_ops: &mut Vec<super::GcOp>,
) -> Result<(), (usize, Error)> {
    let mut old_pages: [Option<OldPage>; PICKS_AHEAD] = [None; PICKS_AHEAD];
    for (n, &label) in labels.iter().enumerate() {
        if let Some(&ahead) = labels.get(n + PICKS_AHEAD) {
            ftl.prefetch(u64::from(ahead));
        }
        if let Some(&ahead) = labels.get(n + BLOCK_AT) {
            old_pages[(n + BLOCK_AT) % PICKS_AHEAD] = ftl.prefetch_overwritten(u64::from(ahead));
        }
        if let Some(old) = old_pages[(n + REVERSE_AT) % PICKS_AHEAD] {
            ftl.prefetch_invalidation(old);
        }
        ftl.write(u64::from(label), no_load, gc_ops)
            .map_err(|error| (n, error))?;
        gc_ops.clear();
    }
    Ok(())
}

/// Draws ahead of the write that is placed: the filled-page bit of a candidate is tested
/// [`CANDIDATES_AHEAD`] draws after it was prefetched.
const CANDIDATES_AHEAD: usize = 8;
/// Picks ahead of the write that is placed. A pick's map entry is prefetched when it joins
/// the queue, its old block's record at [`BLOCK_AT`] and, at [`REVERSE_AT`], what the
/// invalidation touches next (the reverse entry, the block's list neighbours): each load has
/// had a few writes' time to arrive by the next stage. Longer distances measured slower.
const PICKS_AHEAD: usize = 16;
const BLOCK_AT: usize = 8;
const REVERSE_AT: usize = 3;

/// (plane, block, page in block) of the data a write overwrites.
type OldPage = (u32, u32, u32);

/// A uniform draw from `0..n` (`n > 0`), the one `rng.random_range(0..n)` gives (rand 0.9's
/// biased Canon method for `u64`: the high word of a 64 x 64-bit product, corrected by a
/// second draw in the rare case its low word is within `n` of overflowing), inlined in the
/// loop that draws aging's picks (the library's is a call a draw, 5 % of an aged drive's
/// preconditioning).
#[inline]
fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    let product = u128::from(rng.next_u64()) * u128::from(n);
    let (mut result, low) = ((product >> 64) as u64, product as u64);
    if low > n.wrapping_neg() {
        let high = ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64;
        result += u64::from(low.checked_add(high).is_none());
    }
    result
}

/// Where [`AgingPicks`] stands in its stream: drawing from a saved state again gives the
/// same picks.
#[derive(Clone)]
struct DrawState {
    rng: ChaCha8Rng,
    candidates: VecDeque<u64>,
}

/// The random filled pages aging overwrites, in the order the seeded stream gives them, drawn
/// ahead of the writes so that each write's cache misses (the filled-page test, its map
/// entry, the record, reverse entry and list neighbours of the block holding its data) are
/// prefetched a few writes before it is placed: aging is a chain of independent random overwrites that
/// otherwise waits on memory at every step. The picks do not depend on the drive's state, so
/// drawing them early changes nothing but time; the hints may go stale (an earlier write or
/// GC moves the page) without effect on results.
struct AgingPicks<'a> {
    rng: ChaCha8Rng,
    written: &'a Footprint,
    /// Below a quarter of the logical pages filled, picks index this list of them; above, a
    /// random logical page is drawn until it is a filled one (no extra memory).
    filled: Vec<u32>,
    dense: bool,
    /// The same set as `written`, when a fill wrote it, tested by arithmetic (dense only).
    filled_fill: Option<super::fill::Filled>,
    logical: u64,
    /// Draws not yet tested (dense) or resolved (list), oldest first.
    candidates: VecDeque<u64>,
    /// Picks not yet written, oldest first, with their old page once looked up.
    ahead: VecDeque<(u64, Option<OldPage>)>,
}

impl<'a> AgingPicks<'a> {
    fn new(written: &'a Footprint, logical: u64, seed: u64) -> Self {
        let dense = written.pages() * 4 >= logical;
        AgingPicks {
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x4147_494e_4721),
            written,
            filled: if dense {
                Vec::new()
            } else {
                written.iter().map(|l| l as u32).collect()
            },
            dense,
            filled_fill: None,
            logical,
            candidates: VecDeque::with_capacity(CANDIDATES_AHEAD + 1),
            ahead: VecDeque::with_capacity(PICKS_AHEAD + 1),
        }
    }

    fn save(&self) -> DrawState {
        DrawState {
            rng: self.rng.clone(),
            candidates: self.candidates.clone(),
        }
    }

    fn restore(&mut self, state: DrawState) {
        self.rng = state.rng;
        self.candidates = state.candidates;
    }

    /// The next filled page, in the order of the seeded stream. The drive filled as a
    /// formula (aging's usual case) is tested inline, millions of times a round.
    #[inline(always)]
    fn draw(&mut self) -> u64 {
        if let (true, Some(filled), true) =
            (self.dense, &self.filled_fill, self.candidates.is_empty())
        {
            // Tested by arithmetic: nothing to load, so nothing to draw ahead.
            loop {
                let lpn = below(&mut self.rng, self.logical);
                if filled.contains(lpn) {
                    return lpn;
                }
            }
        }
        self.draw_loaded()
    }

    /// [`AgingPicks::draw`] where the test loads memory: candidates drawn ahead, prefetched.
    #[inline(never)]
    fn draw_loaded(&mut self) -> u64 {
        loop {
            while self.candidates.len() < CANDIDATES_AHEAD {
                let candidate = if self.dense {
                    let lpn = self.rng.random_range(0..self.logical);
                    self.written.prefetch(lpn);
                    lpn
                } else {
                    let index = self.rng.random_range(0..self.filled.len());
                    super::slot_index::prefetch(&self.filled[index]);
                    index as u64
                };
                self.candidates.push_back(candidate);
            }
            let candidate = self.candidates.pop_front().unwrap_or_default();
            if !self.dense {
                return u64::from(self.filled[candidate as usize]);
            }
            if self.written.contains(candidate) {
                return candidate;
            }
        }
    }

    /// The page the next aging write overwrites.
    fn next(&mut self, ftl: &Ftl) -> u64 {
        while self.ahead.len() < PICKS_AHEAD {
            let lpn = self.draw();
            ftl.prefetch(lpn);
            self.ahead.push_back((lpn, None));
        }
        if let Some((lpn, old)) = self.ahead.get_mut(BLOCK_AT) {
            *old = ftl.prefetch_overwritten(*lpn);
        }
        if let Some((_, Some(old))) = self.ahead.get(REVERSE_AT) {
            ftl.prefetch_invalidation(*old);
        }
        self.ahead.pop_front().map_or(0, |(lpn, _)| lpn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`below`] is `random_range(0..n)`, the second draw of its rare case included (a range
    /// near 2^63 takes it on about half the draws).
    #[test]
    fn below_is_random_range() {
        for n in [1u64, 7, 93_585_408, (1 << 63) + 12_345, u64::MAX] {
            let mut a = ChaCha8Rng::seed_from_u64(n);
            let mut b = a.clone();
            for _ in 0..10_000 {
                assert_eq!(below(&mut a, n), b.random_range(0..n));
            }
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    /// Drawing ahead gives the very sequence of drawing one pick at a time: by rejection on
    /// the bitset (dense) and from the list of filled pages (sparse).
    #[test]
    fn picks_drawn_ahead_are_the_plain_sequence() {
        let logical = 10_000u64;
        for (every, dense) in [(2u64, true), (9, false)] {
            let mut written = Footprint::new(logical);
            for lpn in (0..logical).filter(|l| l % every == 1) {
                written.insert(lpn);
            }
            let seed = 7;
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x4147_494e_4721);
            let filled: Vec<u64> = written.iter().collect();
            let mut plain = || loop {
                if !dense {
                    break filled[rng.random_range(0..filled.len())];
                }
                let lpn = rng.random_range(0..logical);
                if written.contains(lpn) {
                    break lpn;
                }
            };
            let mut picks = AgingPicks::new(&written, logical, seed);
            assert_eq!(picks.dense, dense);
            for _ in 0..5_000 {
                assert_eq!(picks.draw(), plain());
            }
        }
    }
}
