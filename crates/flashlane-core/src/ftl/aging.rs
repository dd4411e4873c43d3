//! Aging plane by plane, on a plane-major numbering of the logical pages.
//!
//! Aging (ftl/precondition.rs) is a chain of random overwrites, each with the garbage
//! collection it causes; on a 384 GiB drive it waited on memory at every step (the forward map
//! entry, the block record, the reverse entry, the map entries of the pages GC moves). Under
//! static placement the planes do not interact: a write and the GC it causes touch only its
//! plane, and the aging picks do not depend on the drive's state. So a round's picks can be
//! drawn first, grouped by plane (keeping their order within a plane), and written one plane
//! after another: each plane ends as it would have, the counters are sums, and the round's
//! write amplification is the same. For that to help, a plane's data must sit together: its
//! block records and reverse maps do, its forward map entries are spread over the whole
//! table (one in every `planes` entries). So while aging runs the logical pages are numbered
//! plane-major, local page `l` of the plane of residue `r` (ftl/fill.rs) being `r * span + l`:
//! the forward map, the reverse maps and the static map follow that numbering, and a plane's
//! entries are one contiguous run that stays in cache while the plane is aged. Every fill
//! page gets its plane-major entry when aging starts (no formula look-ups while aging), and a
//! plane's writes go through a kernel of their own ([`Ftl::age_planes`]), the planes shared
//! among up to [`AGING_THREADS`] threads as each round's work falls (`on_threads`). The picks
//! do not depend on the drive either, so each round's are drawn, in the seeded order, while
//! the round before is written (the first while the plane-major map is built). When aging
//! ends the numbering is turned back: the reverse maps entry by entry, then the forward map
//! gathered a level of the plane-major map at a time (its chunk `l` of every residue, which
//! share 2 MiB pages), both shared between the threads, the plane-major map released a level
//! at a time (so the two never both hold the whole map).
//!
//! Used after a fill written as a formula (so the forward map has no entry yet), without the
//! integrity shadow (indexed by logical page), under static allocation and on drives of at
//! least [`PLANE_MAJOR_FROM_PAGES`] logical pages; otherwise aging writes in the order of the
//! picks, as before. Either way aging costs a random overwrite per pick plus the GC moves it
//! causes (on `venice-perf`, 8.4 M overwrites and 20-30 M moves a round, about 0.45 s of CPU
//! a round in the kernel, plus 0.11 s for the round's draws): it is the one part of
//! preconditioning that still grows with the pages written.

use super::fill::FillMap;
use super::mapping::{ChunkedTable, PageMap, CHUNK};
use super::plane::{Plane, INVALID};
use super::{Ftl, FtlCounters};
use crate::geometry::StaticMap;
use crate::Error;
use std::sync::{Mutex, PoisonError};

/// Logical pages from which aging runs plane-major. A smaller drive's map stays in cache
/// anyway, and the renumbering costs more than it saves (`sos-4x4`, 3.8 M logical pages,
/// filled to 0.9 and aged: 0.69 -> 0.71 s CPU, 43 -> 50 MiB; `venice-perf`, 93.6 M: 23.7
/// -> 16.3 s).
#[cfg(not(test))]
const PLANE_MAJOR_FROM_PAGES: u64 = 1 << 24;
/// Unit tests compare plane-major aging with page-by-page writing on small drives.
#[cfg(test)]
const PLANE_MAJOR_FROM_PAGES: u64 = 1;

/// The drive's own numbering, set aside while aging runs plane-major.
pub(super) struct PlaneMajor {
    /// The drive's map: its fill, with the chunks it counts.
    map: PageMap,
    /// That fill (the drive's numbering of each plane's pages).
    fill: FillMap,
    static_map: StaticMap,
    labels: Labels,
}

/// The plane-major numbering itself (see the module's comment), apart from the drive's
/// state: aging's picks are labelled with it while the plane-major map is still being built.
#[derive(Clone, Copy)]
pub(super) struct Labels {
    /// Logical pages numbered per plane (a whole number of map chunks).
    span: u64,
    /// The drive's stripe unit and period (pages, planes).
    unit: u32,
    period: u32,
}

impl Labels {
    /// Plane-major number of logical page `lpn` (see the module's comment): for every
    /// page aging overwrites, so with shifts when the unit and period are powers of two (as
    /// on the presets) rather than divisions. Logical page `(k * period + r) * unit + j` is
    /// local `k * unit + j` of residue `r` (as `FillMap::local_of`).
    #[inline]
    pub(super) fn label(&self, lpn: u64) -> u32 {
        self.residue_and_label(lpn).1
    }

    /// [`Labels::label`] of `lpn` and the residue whose labels it is among (`label / span`,
    /// known here without that division).
    #[inline]
    pub(super) fn residue_and_label(&self, lpn: u64) -> (u32, u32) {
        let (lpn, unit, period) = (lpn as u32, self.unit, self.period);
        let (unit_index, within) = if unit.is_power_of_two() {
            (lpn >> unit.trailing_zeros(), lpn & (unit - 1))
        } else {
            (lpn / unit, lpn % unit)
        };
        let (round, residue) = if period.is_power_of_two() {
            (
                unit_index >> period.trailing_zeros(),
                unit_index & (period - 1),
            )
        } else {
            (unit_index / period, unit_index % period)
        };
        let label = u64::from(residue) * self.span + u64::from(round * unit + within);
        (residue, label as u32)
    }

    /// Logical pages numbered per plane: labels `r * span ..` belong to residue `r`.
    pub(super) fn span(&self) -> u64 {
        self.span
    }
}

impl PlaneMajor {
    pub(super) fn labels(&self) -> &Labels {
        &self.labels
    }
}

impl Ftl {
    /// Number the logical pages plane-major for aging, when it applies (see the module's
    /// comment), running `side` with the numbering on this thread while the other builds the
    /// plane-major map (aging's first draws); `None` leaves the drive as it is (and `side`
    /// not run).
    pub(super) fn begin_plane_major(&mut self, side: impl FnOnce(&Labels)) -> Option<PlaneMajor> {
        if self.dynamic
            || self.shadow.is_some()
            || !self.map.no_entry_written()
            || self.logical_pages() < PLANE_MAJOR_FROM_PAGES
        {
            return None;
        }
        let fill = self.map.fill()?;
        let own_fill = fill.clone();
        let planes = self.planes.len();
        let span = plane_major_span(fill, planes)?;
        let plane_major = fill.plane_major(span);
        for (p, plane) in self.planes.iter_mut().enumerate() {
            let base = fill.plane_residue(p).0 * span;
            for reverse in plane.blocks.iter_mut().filter_map(|b| b.reverse.as_mut()) {
                for lpn in reverse.iter_mut().filter(|l| **l != INVALID) {
                    *lpn = (base + fill.local_of(u64::from(*lpn)).1) as u32;
                }
            }
        }
        let mut plane_major_map = PageMap::releasable_with_fill(span * planes as u64, plane_major);
        // Every fill page its entry, in stream order (one sequential run a plane): aging then
        // reads each overwritten page's place with one table access, not by the formula (its
        // rank search and divisions, twice an overwrite). The fill's pages are the ones the
        // drive's map counts anyway, and aging writes most of their entries regardless.
        let ppb = u64::from(self.geometry.pages_per_block);
        let (table, _) = plane_major_map.table_and_fill();
        // Chunk j of every residue next to each other, 8 to a 2 MiB block of huge pages (the
        // kernel's random accesses then miss the TLB less, and the map faults in 2 MiB at a
        // time): turning the numbering back uses up the residues' chunks j together, so
        // each block is freed whole as it goes.
        let per_residue = (span / CHUNK as u64) as usize;
        allocate_level_major(table, planes, span);
        table.advise_huge_pages_where(|c| {
            let (r, j) = ((c / per_residue) as u64, (c % per_residue) as u64);
            let first = j * CHUNK as u64;
            fill.sweeps_locals(r, first..first + CHUNK as u64)
        });
        let mut forward = plane_chunks(table, planes, span);
        let mut jobs: Vec<(usize, Vec<&mut [u32]>)> = (0..planes)
            .map(|p| {
                (
                    p,
                    std::mem::take(&mut forward[fill.plane_residue(p).0 as usize]),
                )
            })
            .collect();
        let pages_per_plane = self.pages_per_plane;
        let (unit, period) = own_fill.unit_and_period();
        let labels = Labels {
            span,
            unit: unit as u32,
            period: period as u32,
        };
        // No allocation in these jobs: the planes may go to either thread.
        on_threads(
            &mut jobs,
            || side(&labels),
            |(p, entries)| {
                let ppn_base = *p as u64 * pages_per_plane + u64::from(fill.first_block) * ppb;
                fill.stream_runs(*p, |k, local, len| {
                    // A run at a time: consecutive entries, each one more (vectorised).
                    let (mut k, mut local, mut len) = (k, local as usize, len as usize);
                    while len > 0 {
                        let at = local % CHUNK;
                        let n = (CHUNK - at).min(len);
                        let first = (ppn_base + k) as u32 + 1;
                        for (i, entry) in entries[local / CHUNK][at..at + n].iter_mut().enumerate()
                        {
                            *entry = first + i as u32;
                        }
                        (k, local, len) = (k + n as u64, local + n, len - n);
                    }
                });
            },
        );
        drop(jobs);
        let map = std::mem::replace(&mut self.map, plane_major_map);
        let plane_major_static =
            StaticMap::new(&self.geometry, self.static_map.order()).with_stripe_unit_pages(span);
        let static_map = std::mem::replace(&mut self.static_map, plane_major_static);
        Some(PlaneMajor {
            map,
            fill: own_fill,
            static_map,
            labels,
        })
    }

    /// Map every logical page a valid reverse entry holds to that physical page (a snapshot's
    /// load, `rebuild_map`), by way of the plane-major numbering: each plane's entries go
    /// into its own run of a plane-major map (a plane's run stays in cache; entry by entry
    /// into the drive's map, 84 M random stores on `venice-perf` aged were half of a load),
    /// the planes shared between the threads, then the drive's map is gathered from it as
    /// when aging ends. Where that numbering applies (as [`Ftl::begin_plane_major`]; a map
    /// with no entry yet), the reverse entries are many (a quarter of the logical pages or
    /// more: the route costs a pass over the whole map, 0.2 s and 240 MB for a full
    /// `ssdsim-platform` drive, whose blocks are all held by the fill's formula) and every
    /// one lies on its own plane, as static allocation keeps them; false, the map left as it
    /// was, otherwise.
    pub(super) fn rebuild_map_by_planes(&mut self) -> bool {
        if self.dynamic
            || !self.map.no_entry_written()
            || self.logical_pages() < PLANE_MAJOR_FROM_PAGES
        {
            return false;
        }
        let entries: u64 = self
            .planes
            .iter()
            .flat_map(|plane| plane.blocks.iter())
            .filter(|block| block.reverse.is_some())
            .map(|block| u64::from(block.valid_pages))
            .sum();
        if entries * 4 < self.logical_pages() {
            return false;
        }
        let Some(fill) = self.map.fill() else {
            return false;
        };
        let planes = self.planes.len();
        let Some(span) = plane_major_span(fill, planes) else {
            return false;
        };
        let (unit, period) = fill.unit_and_period();
        let labels = Labels {
            span,
            unit: unit as u32,
            period: period as u32,
        };
        let residues: Vec<u64> = (0..planes).map(|p| fill.plane_residue(p).0).collect();
        let mut plane_major = ChunkedTable::releasable(span * planes as u64);
        allocate_level_major(&mut plane_major, planes, span);
        let mut forward = plane_chunks(&mut plane_major, planes, span);
        let (pages_per_plane, ppb) = (
            self.pages_per_plane,
            u64::from(self.geometry.pages_per_block),
        );
        let mut jobs: Vec<(usize, &Plane, Vec<&mut [u32]>, bool)> = self
            .planes
            .iter()
            .enumerate()
            .map(|(p, plane)| {
                let entries = forward
                    .get_mut(residues[p] as usize)
                    .map(std::mem::take)
                    .unwrap_or_default();
                (p, plane, entries, true)
            })
            .collect();
        on_threads(
            &mut jobs,
            || {},
            |(p, plane, entries, on_own_plane)| {
                let residue = residues[*p];
                for (b, block) in plane.blocks.iter().enumerate() {
                    let Some(reverse) = &block.reverse else {
                        continue;
                    };
                    let first = *p as u64 * pages_per_plane + b as u64 * ppb;
                    for (page, &lpn) in reverse.iter().enumerate() {
                        if lpn == INVALID {
                            continue;
                        }
                        let (r, label) = labels.residue_and_label(u64::from(lpn));
                        let local = (u64::from(label) - u64::from(r) * span) as usize;
                        let entry = entries
                            .get_mut(local / CHUNK)
                            .and_then(|chunk| chunk.get_mut(local % CHUNK));
                        match entry {
                            Some(entry) if u64::from(r) == residue => {
                                *entry = (first + page as u64 + 1) as u32;
                            }
                            _ => {
                                *on_own_plane = false;
                                return;
                            }
                        }
                    }
                }
            },
        );
        if jobs.iter().any(|(_, _, _, on_own_plane)| !on_own_plane) {
            return false;
        }
        drop(jobs);
        gather_fill_chunks(&mut self.map, &mut plane_major, (unit, period), span);
        true
    }

    /// Number the logical pages as before [`Ftl::begin_plane_major`] again.
    pub(super) fn end_plane_major(&mut self, numbering: PlaneMajor) {
        let PlaneMajor {
            map,
            fill,
            static_map,
            labels,
        } = numbering;
        let span = labels.span;
        let mut plane_major = std::mem::replace(&mut self.map, map);
        self.static_map = static_map;
        if self.map.fill().is_none() {
            return;
        }
        let unit = self.static_map.stripe_unit_pages();
        let period = self.static_map.period();
        // The reverse maps first, the planes shared among the threads (nothing allocated).
        let mut planes: Vec<(usize, &mut Plane)> = self.planes.iter_mut().enumerate().collect();
        on_threads(
            &mut planes,
            || {},
            |(p, plane)| {
                let (residue, _) = fill.plane_residue(*p);
                let base = residue * span;
                for reverse in plane.blocks.iter_mut().filter_map(|b| b.reverse.as_mut()) {
                    if unit == 1 {
                        relabel_striped(reverse, base as u32, period as u32, residue as u32);
                    } else {
                        for lpn in reverse.iter_mut().filter(|l| **l != INVALID) {
                            *lpn = fill.lpn_of(residue, u64::from(*lpn) - base) as u32;
                        }
                    }
                }
            },
        );
        gather_fill_chunks(&mut self.map, &mut plane_major.table, (unit, period), span);
    }
}

/// Logical pages numbered per plane in the plane-major numbering of `fill`'s `planes`: the
/// most any plane holds, a whole number of map chunks; `None` when the labels would not fit in
/// 32 bits.
fn plane_major_span(fill: &FillMap, planes: usize) -> Option<u64> {
    let span = (0..planes)
        .map(|p| fill.plane_residue(p).1)
        .max()?
        .next_multiple_of(CHUNK as u64);
    (span * (planes as u64) < u64::from(INVALID)).then_some(span)
}

/// Allocate a plane-major map's chunks level-major: chunk `j` of every residue side by side
/// (the gather uses them up, and releases them, a level at a time).
fn allocate_level_major(table: &mut ChunkedTable, planes: usize, span: u64) {
    let per_residue = (span / CHUNK as u64) as usize;
    table.allocate_in_order(
        (0..per_residue).flat_map(|j| (0..planes).map(move |r| r * per_residue + j)),
    );
}

/// The drive's map gathered from `plane_major` ([`gather_drive_map`]), expecting entries in
/// the chunks holding a fill page: aging overwrites only filled pages, and a snapshot of a
/// preconditioned drive holds those (the gather checks, and allocates exactly the chunks
/// holding an entry either way).
fn gather_fill_chunks(
    map: &mut PageMap,
    plane_major: &mut ChunkedTable,
    (unit, period): (u64, u64),
    span: u64,
) {
    let logical = map.logical_pages();
    let expected: Vec<bool> = (0..map.table.chunk_count())
        .map(|c| map.holds_fill_page(c))
        .collect();
    gather_drive_map(
        &mut map.table,
        &expected,
        plane_major,
        (unit, period),
        span,
        logical,
    );
}

/// A reverse map's plane-major labels (`base` + local) turned back into the logical pages
/// of page striping (local * `period` + `residue`, as `FillMap::lpn_of`), [`INVALID`] kept:
/// without a branch an entry, so that the loop runs on vectors (a branch on the entry's
/// validity, taken at random, cost 0.3 s of CPU on `venice-perf`'s 84 M entries). Logical
/// pages fit in 32 bits, as physical pages do.
fn relabel_striped(reverse: &mut [u32], base: u32, period: u32, residue: u32) {
    let keep_invalid = |lpn: &mut u32, turned: u32| {
        *lpn = if *lpn == INVALID { INVALID } else { turned };
    };
    if period.is_power_of_two() {
        // A shift (the presets' periods): SSE2 has no 32-bit vector multiply.
        let shift = period.trailing_zeros();
        for lpn in reverse.iter_mut() {
            keep_invalid(lpn, (lpn.wrapping_sub(base) << shift).wrapping_add(residue));
        }
    } else {
        for lpn in reverse.iter_mut() {
            let turned = lpn
                .wrapping_sub(base)
                .wrapping_mul(period)
                .wrapping_add(residue);
            keep_invalid(lpn, turned);
        }
    }
}

/// The drive's forward map (`table`, of `logical` pages, nothing allocated yet) from the
/// plane-major one, whose chunks are released as they are used up. Logical page
/// (k * period + r) * unit + j is local k * unit + j of residue r (`(unit, period)` of the
/// drive's static map).
///
/// The chunks `expected` to hold an entry are allocated first, in order (as writing entry by
/// entry would), so that the threads can fill them side by side: the map is built a level of
/// the plane-major map at a time (chunk `l` of every residue), that step's drive chunks split
/// between the threads, then the level's chunks are released (so the two maps are never both
/// held whole). A drive chunk is filled from each residue's locals for it, read as one run of
/// slices (no look-up per entry) and interleaved in logical order (written in order, the runs
/// read as `period` streams: both stay in cache). A chunk allocated but left without an entry
/// is unallocated again, and one not allocated that gets an entry is allocated at the end, so
/// the chunks allocated are exactly those holding an entry, whatever `expected` says.
fn gather_drive_map(
    table: &mut ChunkedTable,
    expected: &[bool],
    plane_major: &mut ChunkedTable,
    (unit, period): (u64, u64),
    span: u64,
    logical: u64,
) {
    let chunks = table.chunk_count();
    table.allocate_in_order((0..chunks).filter(|&c| expected.get(c) == Some(&true)));
    let round = unit * period;
    // Levels of the plane-major map whose locals are all copied once chunks `..=c` are.
    let levels_done = |c: usize| {
        ((((c as u64 + 1) * CHUNK as u64).min(logical) / round) * unit).min(span) / CHUNK as u64
    };
    let mut outcomes: Vec<Outcome> = Vec::new();
    {
        let mut dest = table.allocated_chunks_mut();
        let mut parts: Vec<GatherPart> = (0..GATHER_PARTS).map(|_| GatherPart::default()).collect();
        let (mut c, mut released) = (0usize, 0u64);
        while c < chunks {
            let mut end = c + 1;
            while end < chunks && levels_done(end - 1) <= released {
                end += 1;
            }
            // The step's chunks in nearly equal parts, taken by the threads one at a time.
            let count = end - c;
            let used = count.min(GATHER_PARTS);
            let mut rest: Vec<_> = dest.drain(..count).collect();
            let mut first = c;
            for (k, part) in parts[..used].iter_mut().enumerate() {
                let n = count / used + usize::from(k < count % used);
                let tail = rest.split_off(n);
                part.dest = std::mem::replace(&mut rest, tail);
                part.first = first;
                first += n;
            }
            let source = &*plane_major;
            on_threads(
                &mut parts[..used],
                || {},
                |part| {
                    part.gather(source, (unit, period), span, logical);
                },
            );
            for part in &mut parts[..used] {
                outcomes.append(&mut part.outcomes);
            }
            let done = levels_done(end - 1);
            while released < done {
                for r in 0..period {
                    plane_major.release_chunk(((r * span) / CHUNK as u64 + released) as usize);
                }
                released += 1;
            }
            c = end;
        }
    }
    for outcome in outcomes {
        match outcome {
            Outcome::Empty(c) => table.unallocate_chunk(c),
            Outcome::Unexpected(c, values) => table.chunk_values_mut(c).copy_from_slice(&values),
        }
    }
}

/// Parts a step of [`gather_drive_map`] is cut into, taken by the threads one at a time: with
/// two halves one thread waited for the other through much of each step (the phase took
/// 0.4 s with 1.3 threads busy on `venice-perf`; 0.25 s in 8 parts), and a part's buffers
/// are only a chunk's worth.
const GATHER_PARTS: usize = 8;

/// A drive chunk the gather did not find as `expected` said.
enum Outcome {
    /// Allocated, holds no entry.
    Empty(usize),
    /// Not allocated, holds these entries.
    Unexpected(usize, Vec<u32>),
}

/// One thread's share of a step of [`gather_drive_map`]: drive chunks `first..` (`dest`: each
/// one's values if allocated), with its buffers.
#[derive(Default)]
struct GatherPart<'a> {
    first: usize,
    dest: Vec<Option<&'a mut [u32]>>,
    runs: Vec<u32>,
    spare: Vec<u32>,
    outcomes: Vec<Outcome>,
}

impl GatherPart<'_> {
    fn gather(
        &mut self,
        plane_major: &ChunkedTable,
        (unit, period): (u64, u64),
        span: u64,
        logical: u64,
    ) {
        let round = unit * period;
        let runs = &mut self.runs;
        for (c, dest) in (self.first..).zip(self.dest.iter_mut()) {
            let first = c as u64 * CHUNK as u64;
            let end = (first + CHUNK as u64).min(logical);
            let (first_round, end_round) = (first / round, end.div_ceil(round));
            let locals = ((end_round - first_round) * unit) as usize;
            runs.resize(locals * period as usize, 0);
            for (r, run) in (0..period).zip(runs.chunks_mut(locals)) {
                plane_major.read_run(r * span + first_round * unit, run);
            }
            let gathered: &mut [u32] = match dest {
                Some(values) => values,
                None => {
                    self.spare.resize(CHUNK, 0);
                    &mut self.spare
                }
            };
            let mut any = false;
            if unit == 1 && first.is_multiple_of(round) {
                // Page striping from a round's start (every chunk but a short last one): lpn
                // `first + i * period + r` is local `i` of the run of residue `r`.
                let period = period as usize;
                for (i, out) in gathered[..(end - first) as usize]
                    .chunks_mut(period)
                    .enumerate()
                {
                    for (r, value) in out.iter_mut().enumerate() {
                        *value = runs[r * locals + i];
                        any |= *value != 0;
                    }
                }
            } else {
                for (i, k) in (first_round..end_round).enumerate() {
                    for r in 0..period {
                        let unit_start = (k * period + r) * unit;
                        let (lo, hi) = (unit_start.max(first), (unit_start + unit).min(end));
                        if lo >= hi {
                            continue;
                        }
                        let from =
                            r as usize * locals + i * unit as usize + (lo - unit_start) as usize;
                        let values = &runs[from..from + (hi - lo) as usize];
                        gathered[(lo - first) as usize..(hi - first) as usize]
                            .copy_from_slice(values);
                        any |= values.iter().any(|&v| v != 0);
                    }
                }
            }
            match (dest.is_some(), any) {
                (true, false) => self.outcomes.push(Outcome::Empty(c)),
                (false, true) => {
                    self.spare[(end - first) as usize..].fill(0);
                    self.outcomes
                        .push(Outcome::Unexpected(c, std::mem::take(&mut self.spare)));
                }
                _ => {}
            }
        }
    }
}

/// Picks ahead of the overwrite being placed at which a plane's aging ([`Ftl::age_planes`]) starts loading what
/// it touches (as `AgingPicks` does): the map entry, then the old block's record, then the
/// reverse entry and list neighbours.
const ENTRY_AHEAD: usize = 16;
const BLOCK_AHEAD: usize = 8;
const REVERSE_AHEAD: usize = 3;
/// GC moves ahead of the one being placed at which its map entry is asked for.
const MOVE_AHEAD: usize = 16;

impl Ftl {
    /// Whether [`Ftl::age_planes`] writes as [`Ftl::write`] would on this drive: no per-block
    /// program times to count, GC by free blocks into the host's open block, victims erased
    /// at once (as during all preconditioning).
    pub(super) fn ages_by_plane_kernel(&self) -> bool {
        self.variation.is_none()
            && self.gc_threshold_pages.is_none()
            && !self.gc_separate_write_block
            && !self.defer_release
            && !self.dynamic
            && self.shadow.is_none()
    }

    /// Overwrite each group's labels (plane, first label of the plane, its plane-major
    /// numbered logical pages in order) with the garbage collection they cause: the drive
    /// ends as that many [`Ftl::write`]s leave it (see [`Ftl::ages_by_plane_kernel`] for
    /// when). Planes do not interact, so the groups are shared among threads (the counters
    /// are sums), `side` running on this thread first (the next round's draws) while the
    /// other thread takes groups, then this thread takes groups too until none is left. For
    /// each group, the index of its failing label and the error, if any.
    pub(super) fn age_planes(
        &mut self,
        groups: &[(u32, u64, &[u32])],
        side: impl FnOnce(),
    ) -> Vec<Option<(usize, Error)>> {
        let shape = KernelShape {
            ppb: self.geometry.pages_per_block,
            pages_per_plane: self.pages_per_plane,
            gc_threshold_blocks: self.gc_threshold_blocks,
        };
        let span = self.map.logical_pages() / self.planes.len() as u64;
        let (table, fill) = self.map.table_and_fill();
        let mut forward = plane_chunks(table, self.planes.len(), span);
        let mut planes: Vec<Option<&mut Plane>> = self.planes.iter_mut().map(Some).collect();
        let mut jobs: Vec<Job> = Vec::with_capacity(groups.len());
        for (group, &(plane, label_base, labels)) in groups.iter().enumerate() {
            let residue = (label_base / span) as usize;
            let (Some(target), Some(entries)) = (
                planes.get_mut(plane as usize).and_then(Option::take),
                forward.get_mut(residue).map(std::mem::take),
            ) else {
                continue;
            };
            jobs.push(Job {
                group,
                plane,
                target,
                forward: entries
                    .into_iter()
                    .map(|chunk| chunk.try_into().expect("map chunks are whole"))
                    .collect(),
                label_base,
                labels,
                counters: FtlCounters::default(),
                failed: None,
            });
        }
        on_threads(&mut jobs, side, |job| job.run(fill, shape));
        let mut failed: Vec<Option<(usize, Error)>> = groups.iter().map(|_| None).collect();
        for job in jobs {
            let c = &mut self.counters;
            c.host_page_writes += job.counters.host_page_writes;
            c.gc_runs += job.counters.gc_runs;
            c.gc_pages_moved += job.counters.gc_pages_moved;
            c.erases += job.counters.erases;
            failed[job.group] = job.failed;
        }
        failed
    }
}

/// Threads aging shares its planes among (at most; fewer on fewer cores).
const AGING_THREADS: usize = 2;

/// Run `work` on every item, shared among up to [`AGING_THREADS`] threads (planes do not
/// interact, so which thread runs one does not matter), and `side` on this thread before it
/// takes any: this thread takes items from the front and the others from the back, one at a
/// time until they meet, so the side work is balanced. A plane may so go to the other thread
/// from one round to the next, and its block maps between the threads' allocator arenas: that
/// cost 30-180 MiB of peak memory while every block opened had a new map, so aging then kept
/// each plane with one thread after its first round; now a plane's block maps are mostly
/// recycled within the plane (`Plane::spare_reverse`) and the split follows each round's work
/// at no cost in memory (`venice-perf` aged: 837 MiB either way). `side` runs here so that
/// what it allocates comes from this thread's arena.
fn on_threads<T: Send>(items: &mut [T], side: impl FnOnce(), work: impl Fn(&mut T) + Sync) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, AGING_THREADS);
    if threads == 1 {
        side();
        items.iter_mut().for_each(work);
        return;
    }
    // The items not taken yet: this thread's from the front, the others' from the back.
    let left = Mutex::new(0..items.len());
    let take = |front: bool| -> Option<usize> {
        let mut left = left.lock().unwrap_or_else(PoisonError::into_inner);
        if front {
            left.next()
        } else {
            left.next_back()
        }
    };
    // A lock an item (never contended: each index is taken once).
    let queue: Vec<Mutex<&mut T>> = items.iter_mut().map(Mutex::new).collect();
    let run = |i: usize| work(&mut queue[i].lock().unwrap_or_else(PoisonError::into_inner));
    let (take, run) = (&take, &run);
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads)
            .map(|_| {
                scope.spawn(move || {
                    while let Some(i) = take(false) {
                        run(i);
                    }
                })
            })
            .collect();
        side();
        while let Some(i) = take(true) {
            run(i);
        }
        // Joined, not just waited for: the scope's end returns once the threads' work is
        // done, possibly before a thread has handed its allocator arena back; the next
        // round's thread then got another arena (+90 MiB peak in one run of three).
        for other in others {
            if let Err(panic) = other.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{
        gather_drive_map, on_threads, relabel_striped, ChunkedTable, DivU32, CHUNK, INVALID,
    };
    use std::sync::atomic::{AtomicBool, Ordering};

    /// [`DivU32`] gives the quotient and remainder of `/` and `%`, at the edges and at random.
    #[test]
    fn div_u32_is_division() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for d in [
            1u32,
            2,
            3,
            7,
            64,
            768,
            1000,
            4096,
            65_535,
            u32::MAX / 3,
            u32::MAX,
        ] {
            let div = DivU32::new(d);
            let edges = [0, 1, d - 1, d, d.saturating_add(1), u32::MAX - 1, u32::MAX];
            for x in edges
                .into_iter()
                .chain((0..20_000).map(|_| rng.random::<u32>()))
            {
                assert_eq!(div.div_rem(x), (x / d, x % d), "{x} / {d}");
            }
        }
    }

    /// The branch-free turning back of a reverse map gives, entry by entry, local * period +
    /// residue for a valid label (`FillMap::lpn_of` under page striping) and keeps invalid
    /// entries, up to the largest labels and logical pages.
    #[test]
    fn striped_relabel_is_lpn_of() {
        for (period, span, residue) in [
            (128u64, 786_432u64, 0u64),
            (128, 786_432, 127),
            (6, 65_536, 5),
        ] {
            let base = residue * span;
            let labels: Vec<u32> = (0..3000u64)
                .map(|i| match i % 7 {
                    0 => INVALID,
                    1 => (base + span - 1) as u32,
                    _ => (base + (i * 7919) % span) as u32,
                })
                .collect();
            let mut turned = labels.clone();
            relabel_striped(&mut turned, base as u32, period as u32, residue as u32);
            for (&label, &lpn) in labels.iter().zip(&turned) {
                let expected = if label == INVALID {
                    INVALID
                } else {
                    ((u64::from(label) - base) * period + residue) as u32
                };
                assert_eq!(lpn, expected, "{residue} {label}");
            }
        }
    }

    /// The drive map gathered side by side, a level at a time, is the one read entry by entry
    /// from the plane-major map, with exactly the chunks holding an entry allocated, whether
    /// the chunks expected to hold one are right or not (some expected ones are empty, some
    /// unexpected ones are not), for page striping and for a wider stripe unit.
    #[test]
    fn gathered_drive_map_is_the_entry_by_entry_one() {
        let chunk = CHUNK as u64;
        for (unit, period, logical) in [(1u64, 8u64, 6 * chunk + 77), (4, 3, 5 * chunk + 5)] {
            let round = unit * period;
            let locals = logical.div_ceil(round) * unit;
            let span = locals.next_multiple_of(chunk);
            let lpn_of = |r: u64, local: u64| ((local / unit) * period + r) * unit + local % unit;
            // Drive chunk 2 holds nothing, every fifth page elsewhere neither.
            let value = |lpn: u64| {
                let held = (lpn / chunk) % 4 != 2 && !lpn.is_multiple_of(5);
                if held {
                    lpn as u32 * 7 + 1
                } else {
                    0
                }
            };
            let mut plane_major = ChunkedTable::releasable(span * period);
            for r in 0..period {
                for local in 0..span {
                    let lpn = lpn_of(r, local);
                    if lpn < logical {
                        plane_major.set(r * span + local, value(lpn));
                    }
                }
            }
            let chunks = logical.div_ceil(chunk) as usize;
            // Chunk 2 expected but empty, chunk 1 not expected but holding entries.
            let expected: Vec<bool> = (0..chunks).map(|c| c != 1).collect();
            let mut table = ChunkedTable::new(logical);
            gather_drive_map(
                &mut table,
                &expected,
                &mut plane_major,
                (unit, period),
                span,
                logical,
            );
            for lpn in 0..logical {
                assert_eq!(table.get(lpn), value(lpn), "{unit} {period}: lpn {lpn}");
            }
            let holding = (0..chunks as u64)
                .filter(|c| (c * chunk..((c + 1) * chunk).min(logical)).any(|l| value(l) != 0))
                .count() as u64;
            assert_eq!(
                table.allocated_bytes(),
                holding * chunk * 4,
                "{unit} {period}"
            );
        }
    }

    /// Every item runs once, with the side work done on the calling thread.
    #[test]
    fn on_threads_runs_every_item_once() {
        for items in [0usize, 1, 2, 7, 128] {
            let mut runs = vec![0u32; items];
            let side_done = AtomicBool::new(false);
            on_threads(
                &mut runs,
                || side_done.store(true, Ordering::SeqCst),
                |n| *n += 1,
            );
            assert!(runs.iter().all(|&n| n == 1), "{items}: {runs:?}");
            assert!(side_done.load(Ordering::SeqCst));
        }
    }
}

/// Division by a fixed `u32` as a multiplication (a divide takes 20-odd cycles; the kernel
/// turns two physical pages a write into block and page): with `m` = ceil(2^64 / d), the
/// quotient of any 32-bit `x` is the high 64 bits of `m * x` (Lemire, Kaser and Kurz, "Faster
/// remainder by direct computation", 2019).
#[derive(Clone, Copy)]
struct DivU32 {
    d: u32,
    m: u64,
}

impl DivU32 {
    fn new(d: u32) -> Self {
        assert!(d > 0, "division by zero");
        DivU32 {
            d,
            m: (u64::MAX / u64::from(d)).wrapping_add(1),
        }
    }

    /// `(x / d, x % d)`.
    #[inline]
    fn div_rem(self, x: u32) -> (u32, u32) {
        let q = ((u128::from(self.m) * u128::from(x)) >> 64) as u32;
        // d = 1: m wrapped to 0, and x / 1 is x.
        let q = if self.d == 1 { x } else { q };
        (q, x - q * self.d)
    }
}

/// The map chunks of each residue's plane-major labels (`span` a residue, a whole number of
/// chunks), allocated, to index directly.
fn plane_chunks(table: &mut ChunkedTable, residues: usize, span: u64) -> Vec<Vec<&mut [u32]>> {
    let per_residue = (span / CHUNK as u64) as usize;
    let mut chunks = table.chunks_mut(0, residues * per_residue).into_iter();
    (0..residues)
        .map(|_| chunks.by_ref().take(per_residue).collect())
        .collect()
}

/// What a plane's aging needs of the drive's shape.
#[derive(Clone, Copy)]
struct KernelShape {
    ppb: u32,
    pages_per_plane: u64,
    gc_threshold_blocks: u32,
}

/// One plane's aging writes ([`Ftl::age_planes`]): the plane, its map entries (the chunks of
/// its plane-major labels), its picks, and what the writes did.
struct Job<'a> {
    group: usize,
    plane: u32,
    target: &'a mut Plane,
    /// Whole chunks, so an entry's place in its chunk needs no bounds check.
    forward: Vec<&'a mut [u32; CHUNK]>,
    label_base: u64,
    labels: &'a [u32],
    counters: FtlCounters,
    failed: Option<(usize, Error)>,
}

impl Job<'_> {
    fn run(&mut self, fill: Option<&FillMap>, shape: KernelShape) {
        if let Err(failed) = self.write(fill, shape) {
            self.failed = Some(failed);
        }
    }

    /// The plane's writes, leaner than the general write, which they must match: the map
    /// entries are indexed directly (every fill page has its entry,
    /// [`Ftl::begin_plane_major`]); a GC victim's valid pages are placed a block's worth at a
    /// time, each map entry written without being read first (the old page is the victim's,
    /// its reverse entry says so); a physical page's block and page by a multiplication.
    fn write(&mut self, fill: Option<&FillMap>, shape: KernelShape) -> Result<(), (usize, Error)> {
        let KernelShape {
            ppb,
            pages_per_plane,
            gc_threshold_blocks,
        } = shape;
        let plane = self.plane;
        let p = plane as usize;
        let base = (u64::from(plane) * pages_per_plane) as u32;
        let chunk_bits = CHUNK.trailing_zeros();
        let label_base = self.label_base;
        let forward = &mut self.forward;
        let planes = &mut *self.target;
        let counters = &mut self.counters;
        let labels = self.labels;
        let local = |label: u32| (u64::from(label) - label_base) as usize;
        let mask = CHUNK - 1;
        let per_block = DivU32::new(ppb);
        macro_rules! entry {
            ($label:expr) => {{
                let l = local($label);
                &mut forward[l >> chunk_bits][l & mask]
            }};
        }
        let mut scratch = Vec::with_capacity(ppb as usize);
        let mut old_pages = [None; ENTRY_AHEAD];
        for (n, &label) in labels.iter().enumerate() {
            if let Some(&ahead) = labels.get(n + ENTRY_AHEAD) {
                super::slot_index::prefetch(entry!(ahead));
            }
            if let Some(&ahead) = labels.get(n + BLOCK_AHEAD) {
                let value = *entry!(ahead);
                old_pages[(n + BLOCK_AHEAD) % ENTRY_AHEAD] = (value != 0).then(|| {
                    let (block, page) = per_block.div_rem(value - 1 - base);
                    if let Some(record) = planes.blocks.get(block as usize) {
                        super::slot_index::prefetch(record);
                    }
                    (block, page)
                });
            }
            if let Some((block, page)) = old_pages[(n + REVERSE_AHEAD) % ENTRY_AHEAD] {
                planes.prefetch_invalidation(block, page);
            }
            let value = *entry!(label);
            if value != 0 {
                let (block, page) = per_block.div_rem(value - 1 - base);
                if !planes.invalidate(block, page) {
                    // A block still held by the fill's formula: its reverse map first.
                    planes.materialise(block, |lpns| {
                        if let Some(fill) = fill {
                            fill.block_lpns(p, block, lpns);
                        }
                    });
                    planes.invalidate(block, page);
                }
            }
            let Some((block, page)) = planes.allocate_page(label) else {
                return Err((n, super::no_free_page(plane)));
            };
            *entry!(label) = base + block * ppb + page + 1;
            counters.host_page_writes += 1;
            while planes.free_blocks() < gc_threshold_blocks {
                let Some(victim) = planes.greedy_victim() else {
                    break;
                };
                counters.gc_runs += 1;
                planes.begin_moving(victim);
                let moves = planes.drain_moving(victim, &mut scratch);
                // Each moved page's map entry is a random store in the plane's entries:
                // asked for a few moves ahead.
                for &ahead in moves.iter().take(MOVE_AHEAD) {
                    super::slot_index::prefetch(entry!(ahead));
                }
                let mut at = 0;
                let placed = planes.append_run(moves, |moved, block, page| {
                    if let Some(&ahead) = moves.get(at + MOVE_AHEAD) {
                        super::slot_index::prefetch(entry!(ahead));
                    }
                    at += 1;
                    *entry!(moved) = base + block * ppb + page + 1;
                });
                if !placed {
                    return Err((n, super::no_free_page(plane)));
                }
                counters.gc_pages_moved += moves.len() as u64;
                planes.erase(victim);
                counters.erases += 1;
            }
        }
        Ok(())
    }
}
