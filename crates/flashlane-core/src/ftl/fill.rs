//! The pages preconditioning writes in order, held as a formula rather than page by page.
//!
//! On a drive fresh from the factory with static placement, the fill (the trace's footprint
//! in logical order, then the logical pages after a seeded start, wrapping; ftl/precondition.rs)
//! reaches each plane as one ordered stream: the plane's footprint pages, then its pages of
//! the swept range that are not in the footprint. Page k of a plane's stream lands on page
//! k % pages_per_block of the (k / pages_per_block)-th block after the reserved ones, since a
//! fresh plane opens its blocks in number order and no page of the fill is invalidated (so
//! no garbage collection runs). The stream is therefore a formula both ways: physical page =
//! f(logical page) for the forward map, logical page = g(block, page) for a block's reverse
//! map. [`FillMap`] holds it: the footprint's pages (4 bytes each) and the swept range,
//! nothing per page of the sweep.
//!
//! The forward map keeps only the entries written since (an overwrite or a GC move writes
//! one); an entry never written reads the formula. A full block of the fill keeps no reverse
//! map until a page of it is invalidated, when it is materialised from the formula
//! ([`Ftl::materialise_block`]). A full drive then costs its block records and the blocks
//! the run touches, not 8 bytes per page, and is ready in milliseconds. The drive's state is
//! the one page-by-page writing leaves (same blocks, pages, lists and counters), so runs give
//! the same results either way. When only the footprint is written (its pages are the ones
//! the trace reads: explicit entries keep each read at one table access) the same placement
//! is written out in one pass, two stores a page ([`Ftl::write_footprint_in_order`]). The
//! fill is written page by page instead, at about 40 ns and 8 bytes a page (a 60 M-page
//! drive: 2.5 s, 530 MiB), when the drive is not fresh, under dynamic allocation (its planes
//! follow the chips' load), or when a plane's stream overflows it (the error then comes from
//! the write that does not fit, as before).

use super::footprint::Footprint;
use super::plane::INVALID;
use super::Ftl;
use crate::geometry::StaticMap;

/// One plane's stream (see the module's comment). "Local" numbers a plane's logical pages in
/// logical order: local `l` of plane `p` is its `l`-th logical page.
#[derive(Debug, Clone, Default)]
pub(super) struct PlaneStream {
    /// The residue (stripe unit modulo the period) placed on this plane.
    residue: u64,
    /// Logical pages of the drive on this plane.
    locals: u64,
    /// First local page the sweep visits, and how many it visits (wrapping at `locals`).
    sweep_start: u64,
    swept: u64,
    /// This plane's footprint pages in `FillMap::footprint[at..at + len]`, and how many of
    /// them lie before `sweep_start`.
    footprint_at: usize,
    footprint_len: usize,
    footprint_before_sweep: usize,
    /// Pages of the stream: the footprint's, then the swept ones not in the footprint.
    pub(super) pages: u64,
}

/// What a fill's formula needs of the drive besides its static map.
#[derive(Debug, Clone, Copy)]
pub(super) struct DriveShape {
    pub pages_per_block: u32,
    pub pages_per_plane: u64,
    /// Blocks reserved ahead of the fill in every plane.
    pub first_block: u32,
    pub logical: u64,
}

/// The fill of a fresh drive as a formula (see the module's comment).
#[derive(Debug, Clone)]
pub struct FillMap {
    unit: u64,
    period: u64,
    plane_of_residue: Vec<u32>,
    pages_per_block: u32,
    pages_per_plane: u64,
    /// Blocks reserved ahead of the fill in every plane: the stream starts at this block.
    pub(super) first_block: u32,
    logical: u64,
    /// First logical page of the sweep and logical pages it visits (footprint ones included),
    /// wrapping at the end of the logical space.
    pub(super) sweep_start: u64,
    pub(super) swept: u64,
    /// Local numbers of the footprint's pages, plane after plane, increasing within a plane.
    pub(super) footprint: Vec<u32>,
    pub(super) planes: Vec<PlaneStream>,
}

impl FillMap {
    /// The fill of a footprint (its pages per plane: `counts`, `locals` their local numbers
    /// plane after plane) then of `swept` logical pages from `sweep_start`, on a drive of
    /// `shape`.
    pub(super) fn new(
        static_map: &StaticMap,
        shape: DriveShape,
        (counts, locals): (&[usize], Vec<u32>),
        (sweep_start, swept): (u64, u64),
    ) -> Self {
        let DriveShape {
            pages_per_block,
            pages_per_plane,
            first_block,
            logical,
        } = shape;
        let (footprint_counts, footprint) = (counts, locals);
        let unit = static_map.stripe_unit_pages();
        let period = static_map.period();
        let plane_of_residue: Vec<u32> =
            (0..period).map(|r| static_map.plane_of(r * unit)).collect();
        let mut residue_of_plane = vec![0u64; period as usize];
        for (r, &p) in plane_of_residue.iter().enumerate() {
            residue_of_plane[p as usize] = r as u64;
        }
        let mut map = FillMap {
            unit,
            period,
            plane_of_residue,
            pages_per_block,
            pages_per_plane,
            first_block,
            logical,
            sweep_start,
            swept,
            footprint,
            planes: Vec::with_capacity(period as usize),
        };
        let mut at = 0;
        for (p, &count) in footprint_counts.iter().enumerate() {
            let residue = residue_of_plane[p];
            let locals = map.count_below(residue, logical);
            let start = map.count_below(residue, sweep_start);
            let end = sweep_start + swept;
            let visited = if end <= logical {
                map.count_below(residue, end) - start
            } else {
                locals - start + map.count_below(residue, end - logical)
            };
            let own = &map.footprint[at..at + count];
            let rank = |l: u64| own.partition_point(|&f| u64::from(f) < l);
            let before = rank(start);
            // Footprint pages the sweep visits are not written again.
            let revisited = if start + visited <= locals {
                rank(start + visited) - before
            } else {
                count - before + rank(start + visited - locals)
            };
            map.planes.push(PlaneStream {
                residue,
                locals,
                sweep_start: start,
                swept: visited,
                footprint_at: at,
                footprint_len: count,
                footprint_before_sweep: before,
                pages: count as u64 + visited - revisited as u64,
            });
            at += count;
        }
        map
    }

    /// Logical pages below `x` placed on the plane of `residue`.
    fn count_below(&self, residue: u64, x: u64) -> u64 {
        let round = self.unit * self.period;
        (x / round) * self.unit
            + (x % round)
                .saturating_sub(residue * self.unit)
                .min(self.unit)
    }

    /// (plane, local number) of logical page `lpn`.
    #[inline]
    pub(super) fn local_of(&self, lpn: u64) -> (usize, u64) {
        // One 32-bit division in the common cases (page striping; the plane-major numbering,
        // whose unit index is the residue): this runs for every page aging moves. Logical
        // pages, units and periods fit in 32 bits, as physical pages do.
        let lpn = lpn as u32;
        let (unit, period) = (self.unit as u32, self.period as u32);
        let (unit_index, within) = if unit == 1 {
            (lpn, 0)
        } else {
            let unit_index = lpn / unit;
            (unit_index, lpn - unit_index * unit)
        };
        let (round, residue) = if unit_index < period {
            (0, unit_index)
        } else {
            (unit_index / period, unit_index % period)
        };
        let plane = self.plane_of_residue[residue as usize];
        (plane as usize, u64::from(round * unit + within))
    }

    /// The same fill on a drive whose logical pages are numbered plane-major: local `l` of
    /// the plane of residue `r` is page `r * span + l` (`span` at least every plane's local
    /// pages). Only its look-ups and blocks are used (ftl/aging.rs).
    pub(super) fn plane_major(&self, span: u64) -> FillMap {
        FillMap {
            unit: span,
            logical: span * self.period,
            ..self.clone()
        }
    }

    /// The stripe unit (pages) and period (residues) of the drive's static map.
    pub(super) fn unit_and_period(&self) -> (u64, u64) {
        (self.unit, self.period)
    }

    /// The residue placed on `plane`, and the plane's local pages.
    pub(super) fn plane_residue(&self, plane: usize) -> (u64, u64) {
        self.planes
            .get(plane)
            .map_or((0, 0), |s| (s.residue, s.locals))
    }

    /// Logical page of local number `local` of the plane of `residue`.
    pub(super) fn lpn_of(&self, residue: u64, local: u64) -> u64 {
        if self.unit == 1 {
            local * self.period + residue
        } else if local < self.unit {
            residue * self.unit + local
        } else {
            ((local / self.unit) * self.period + residue) * self.unit + local % self.unit
        }
    }

    /// Whether the sweep wrote every local page in `locals` of the plane of `residue`. Where
    /// it says no, the pages may still have been written (by the footprint): a test for
    /// laying memory out (ftl/aging.rs), not for mapping.
    pub(super) fn sweeps_locals(&self, residue: u64, locals: std::ops::Range<u64>) -> bool {
        let Some(s) = self
            .plane_of_residue
            .get(residue as usize)
            .and_then(|&p| self.planes.get(p as usize))
        else {
            return false;
        };
        if locals.is_empty() {
            return true;
        }
        if locals.end > s.locals {
            return false;
        }
        if s.swept >= s.locals {
            return true;
        }
        // Distances from the sweep's start, wrapping: the range is swept if both ends are
        // and it does not cross the unswept gap (local pages increase with the distance).
        let distance = |l: u64| (l + s.locals - s.sweep_start) % s.locals;
        let (first, last) = (distance(locals.start), distance(locals.end - 1));
        first < s.swept && last < s.swept && first <= last
    }

    fn footprint_of(&self, s: &PlaneStream) -> &[u32] {
        &self.footprint[s.footprint_at..s.footprint_at + s.footprint_len]
    }

    /// Local numbers of `plane`'s footprint pages, increasing.
    pub(super) fn plane_footprint(&self, plane: usize) -> &[u32] {
        self.planes
            .get(plane)
            .map_or(&[][..], |s| self.footprint_of(s))
    }

    /// Whether a formula read from a snapshot is one a fill makes on planes of `blocks`
    /// blocks: footprint pages increasing and on the drive, every stream within its plane.
    pub(super) fn check(&self, blocks: u32) -> Result<(), String> {
        let capacity =
            u64::from(blocks.saturating_sub(self.first_block)) * u64::from(self.pages_per_block);
        for (p, s) in self.planes.iter().enumerate() {
            let own = self.footprint_of(s);
            if own.windows(2).any(|w| w[0] >= w[1])
                || own.last().is_some_and(|&l| u64::from(l) >= s.locals)
            {
                return Err(format!("plane {p}: fill footprint out of order or range"));
            }
            if s.pages > capacity {
                return Err(format!("plane {p}: a fill of {} pages", s.pages));
            }
        }
        Ok(())
    }

    /// Logical pages a full drive's stream of `plane` holds.
    pub(super) fn stream_pages(&self, plane: usize) -> u64 {
        self.planes.get(plane).map_or(0, |s| s.pages)
    }

    /// Position of logical page `lpn` in its plane's stream, if the fill wrote it.
    #[inline]
    fn position(&self, lpn: u64) -> Option<(usize, u64)> {
        if lpn >= self.logical {
            return None;
        }
        let (plane, local) = self.local_of(lpn);
        let s = self.planes.get(plane)?;
        let own = self.footprint_of(s);
        let rank = own.partition_point(|&f| u64::from(f) < local);
        if own.get(rank).is_some_and(|&f| u64::from(f) == local) {
            return Some((plane, rank as u64));
        }
        let (distance, footprint_between) = if local >= s.sweep_start {
            (
                local - s.sweep_start,
                rank - s.footprint_before_sweep.min(rank),
            )
        } else {
            (
                local + s.locals - s.sweep_start,
                s.footprint_len - s.footprint_before_sweep + rank,
            )
        };
        if distance >= s.swept {
            return None;
        }
        Some((
            plane,
            s.footprint_len as u64 + distance - footprint_between as u64,
        ))
    }

    /// Physical page holding logical page `lpn` as the fill left it, if the fill wrote it.
    #[inline]
    pub fn ppn_of(&self, lpn: u64) -> Option<u32> {
        let (plane, k) = self.position(lpn)?;
        // A position is below the plane's pages, which fit in 32 bits.
        let (k, ppb) = (k as u32, self.pages_per_block);
        Some(
            (plane as u64 * self.pages_per_plane) as u32
                + (self.first_block + k / ppb) * ppb
                + k % ppb,
        )
    }

    /// The logical pages of the first `out.len()` pages of `block` of `plane`, as the fill
    /// wrote them ([`INVALID`] past the end of the stream).
    pub(super) fn block_lpns(&self, plane: usize, block: u32, out: &mut [u32]) {
        let written = self.block_lpns_written(plane, block, out);
        out[written..].fill(INVALID);
    }

    /// [`FillMap::block_lpns`] but for the [`INVALID`] tail: how many of `out`'s pages the
    /// stream wrote, those written (the sweep's a run at a time: aging materialises every
    /// block it touches, 84 M pages on `venice-perf`, a page at a time 24 instructions each).
    fn block_lpns_written(&self, plane: usize, block: u32, out: &mut [u32]) -> usize {
        let Some(s) = self.planes.get(plane) else {
            return 0;
        };
        let Some(index) = block.checked_sub(self.first_block) else {
            return 0;
        };
        let first = u64::from(index) * u64::from(self.pages_per_block);
        let own = self.footprint_of(s);
        let mut at = 0;
        let mut k = first;
        // Footprint pages first.
        while k < own.len() as u64 && k < s.pages {
            let Some(slot) = out.get_mut(at) else {
                return at;
            };
            *slot = self.lpn_of(s.residue, u64::from(own[k as usize])) as u32;
            at += 1;
            k += 1;
        }
        if k >= s.pages {
            return at;
        }
        // Then the swept pages not in the footprint, by distance from the sweep's start. The
        // footprint's distances, in that order, are `rotated(i)`, increasing in `i`.
        let len = own.len();
        let rotated = |i: usize| {
            let local = u64::from(own[(s.footprint_before_sweep + i) % len]);
            (local + s.locals - s.sweep_start) % s.locals
        };
        // The q-th swept page not in the footprint is at distance q + i, where i footprint
        // pages come before it: the first i with rotated(i) - i > q.
        let q = k - len as u64;
        let (mut low, mut high) = (0usize, len);
        while low < high {
            let mid = (low + high) / 2;
            if rotated(mid) - mid as u64 > q {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        let mut next_footprint = low;
        let mut distance = q + low as u64;
        let mut footprint_distance = (next_footprint < len).then(|| rotated(next_footprint));
        let mut local = (s.sweep_start + distance) % s.locals;
        while at < out.len() && k < s.pages {
            while footprint_distance == Some(distance) {
                next_footprint += 1;
                footprint_distance = (next_footprint < len).then(|| rotated(next_footprint));
                distance += 1;
                local += 1;
                if local == s.locals {
                    local = 0;
                }
            }
            // A run of consecutive local pages: up to the next footprint page, the sweep's
            // wrap, the stream's end or the slots' end.
            let run = ((out.len() - at) as u64)
                .min(s.pages - k)
                .min(s.locals - local)
                .min(footprint_distance.map_or(u64::MAX, |d| d - distance));
            self.put_locals(s.residue, local, &mut out[at..at + run as usize]);
            at += run as usize;
            k += run;
            distance += run;
            local += run;
            if local == s.locals {
                local = 0;
            }
        }
        at
    }

    /// The logical pages of local pages `local..` of the plane of `residue` into `out`, as
    /// [`FillMap::lpn_of`] gives them one by one (page striping: a stride; within one stripe
    /// unit, as aging's plane-major numbering always is: consecutive).
    #[inline]
    fn put_locals(&self, residue: u64, local: u64, out: &mut [u32]) {
        let Some(last) = (out.len() as u64).checked_sub(1).map(|n| local + n) else {
            return;
        };
        if self.unit == 1 {
            let first = local * self.period + residue;
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = (first + i as u64 * self.period) as u32;
            }
        } else if local / self.unit == last / self.unit {
            let first = self.lpn_of(residue, local);
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = (first + i as u64) as u32;
            }
        } else {
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = self.lpn_of(residue, local + i as u64) as u32;
            }
        }
    }

    /// `plane`'s stream as runs, in order: `put(k, local, len)` for stream pages `k..k + len`
    /// holding local pages `local..local + len`, as [`FillMap::stream_locals`] gives them
    /// page by page (a footprint page is a run of its own; the sweep's pages run between the
    /// footprint pages it skips and its wrap), so that a caller writes a run at once (aging's
    /// plane-major entries: 84 M on `venice-perf`, a call a page before).
    pub(super) fn stream_runs(&self, plane: usize, mut put: impl FnMut(u64, u64, u64)) {
        let Some(s) = self.planes.get(plane) else {
            return;
        };
        let own = self.footprint_of(s);
        for (k, &local) in own.iter().enumerate().take(s.pages as usize) {
            put(k as u64, u64::from(local), 1);
        }
        let mut k = own.len() as u64;
        let mut local = s.sweep_start;
        // The next footprint page the sweep meets, in sweep order (wrapping).
        let mut next = s.footprint_before_sweep;
        let mut wrapped = false;
        let mut visited = 0;
        while visited < s.swept && k < s.pages {
            let to_footprint = match own.get(next) {
                Some(&f) if u64::from(f) >= local => u64::from(f) - local,
                _ => u64::MAX,
            };
            let step = if to_footprint == 0 {
                next += 1;
                1
            } else {
                let len = to_footprint
                    .min(s.locals - local)
                    .min(s.swept - visited)
                    .min(s.pages - k);
                put(k, local, len);
                k += len;
                len
            };
            local += step;
            visited += step;
            if local == s.locals {
                local = 0;
                if !wrapped {
                    wrapped = true;
                    next = 0;
                }
            }
        }
    }

    /// Each page of `plane`'s stream in order, as (position in the stream, local number):
    /// the footprint's pages, then the swept ones not in the footprint. The reference
    /// [`FillMap::stream_runs`] is tested against.
    #[cfg(test)]
    pub(super) fn stream_locals(&self, plane: usize, mut put: impl FnMut(u64, u64)) {
        let Some(s) = self.planes.get(plane) else {
            return;
        };
        let own = self.footprint_of(s);
        for (k, &local) in own.iter().enumerate().take(s.pages as usize) {
            put(k as u64, u64::from(local));
        }
        let mut k = own.len() as u64;
        let mut local = s.sweep_start;
        // The next footprint page the sweep meets, in sweep order (wrapping).
        let mut next = s.footprint_before_sweep;
        let mut wrapped = false;
        for _ in 0..s.swept {
            if k >= s.pages {
                break;
            }
            let in_footprint = next < own.len() && u64::from(own[next]) == local;
            if in_footprint {
                next += 1;
            } else {
                put(k, local);
                k += 1;
            }
            local += 1;
            if local == s.locals {
                local = 0;
                if !wrapped {
                    wrapped = true;
                    next = 0;
                }
            }
        }
    }

    /// The pages the fill wrote as a test by arithmetic ([`Filled`]), not a bitmap.
    pub(super) fn filled(&self) -> Filled {
        let mut footprint: Vec<u64> = self
            .planes
            .iter()
            .flat_map(|s| {
                self.footprint_of(s)
                    .iter()
                    .map(|&local| self.lpn_of(s.residue, u64::from(local)))
            })
            .collect();
        footprint.sort_unstable();
        // At most 32 K regions (4 KiB of bits), so the test stays in cache.
        let region_shift = (self.logical >> 15).max(1).ilog2() + 1;
        let mut regions = vec![0u64; ((self.logical >> region_shift) / 64 + 1) as usize];
        for &lpn in &footprint {
            let region = lpn >> region_shift;
            regions[(region / 64) as usize] |= 1 << (region % 64);
        }
        Filled {
            start: self.sweep_start,
            swept: self.swept,
            logical: self.logical,
            footprint,
            region_shift,
            regions,
        }
    }

    /// Every logical page the fill wrote, as a set.
    pub(super) fn written(&self) -> Footprint {
        let mut written = Footprint::new(self.logical);
        for s in &self.planes {
            for &local in self.footprint_of(s) {
                written.insert(self.lpn_of(s.residue, u64::from(local)));
            }
        }
        written.insert_wrapping(self.sweep_start, self.swept, self.logical);
        written
    }
}

/// The logical pages a fill wrote: the swept range, and the footprint's pages (few, sorted).
/// Aging draws a random logical page until it is one of them; testing the range is
/// arithmetic, where a bitmap of the drive's pages (11.7 MB on `venice-perf`) missed the
/// cache on nearly every draw.
#[derive(Debug, Clone)]
pub(super) struct Filled {
    start: u64,
    swept: u64,
    logical: u64,
    footprint: Vec<u64>,
    /// A bit per region of `1 << region_shift` logical pages that holds a footprint page: a
    /// page outside the sweep (a tenth of the draws on a drive filled to 0.9) is mostly
    /// rejected by this bit rather than by a binary search whose every step is a branch
    /// that mispredicts.
    region_shift: u32,
    regions: Vec<u64>,
}

impl Filled {
    #[inline]
    pub(super) fn contains(&self, lpn: u64) -> bool {
        let distance = if lpn >= self.start {
            lpn - self.start
        } else {
            lpn + self.logical - self.start
        };
        if distance < self.swept {
            return true;
        }
        let region = lpn >> self.region_shift;
        let marked = self
            .regions
            .get((region / 64) as usize)
            .is_some_and(|bits| bits & (1 << (region % 64)) != 0);
        marked && self.footprint.binary_search(&lpn).is_ok()
    }
}

/// Logical pages the sweep visits from `start` (wrapping at `logical`) until it has written
/// `needed` pages not in `footprint`, and the pages it writes: the precondition loop's
/// extent, counted a word of the footprint at a time.
pub fn sweep_extent(
    footprint: Option<&Footprint>,
    start: u64,
    logical: u64,
    needed: u64,
) -> (u64, u64) {
    let words = footprint.map_or(&[][..], Footprint::words);
    let (mut visited, mut written, mut lpn) = (0u64, 0u64, start);
    while visited < logical && written < needed {
        let segment = (64 - lpn % 64).min(logical - lpn).min(logical - visited);
        let word = words.get((lpn / 64) as usize).copied().unwrap_or(0) >> (lpn % 64);
        let taken = if segment == 64 {
            word
        } else {
            word & ((1u64 << segment) - 1)
        };
        let free = segment - u64::from(taken.count_ones());
        if written + free < needed {
            written += free;
            visited += segment;
            // A segment never passes the end: it wraps exactly there (no division a word).
            lpn += segment;
            if lpn == logical {
                lpn = 0;
            }
            continue;
        }
        for bit in 0..segment {
            if taken & (1 << bit) == 0 {
                written += 1;
                if written == needed {
                    return (visited + bit + 1, written);
                }
            }
        }
    }
    (visited, written)
}

impl Ftl {
    /// Precondition a fresh drive with the footprint, then `swept` logical pages from
    /// `sweep_start`, as the fill's formula (see the module's comment). Returns false, having
    /// changed nothing, when the formula does not apply (then the caller writes page by page).
    pub(super) fn fill_in_order(
        &mut self,
        footprint: Option<&Footprint>,
        sweep_start: u64,
        swept: u64,
    ) -> bool {
        if self.dynamic || !self.is_fresh() {
            return false;
        }
        let blocks = self.geometry.blocks_per_plane;
        let first_block = blocks - self.planes[0].free_blocks();
        let planes = self.planes.len();
        let mut counts = vec![0usize; planes];
        let mut locals = Vec::new();
        if let Some(footprint) = footprint {
            let unit = self.static_map.stripe_unit_pages();
            let round = unit * self.static_map.period();
            let placed: Vec<(usize, u32)> = footprint
                .iter()
                .map(|lpn| {
                    let plane = self.static_map.plane_of(lpn) as usize;
                    (plane, ((lpn / round) * unit + lpn % unit) as u32)
                })
                .collect();
            for &(p, _) in &placed {
                counts[p] += 1;
            }
            let mut at: Vec<usize> = counts
                .iter()
                .scan(0, |sum, &c| {
                    let here = *sum;
                    *sum += c;
                    Some(here)
                })
                .collect();
            locals = vec![0u32; placed.len()];
            // In logical order, so each plane's pages come in increasing local order.
            for (p, local) in placed {
                locals[at[p]] = local;
                at[p] += 1;
            }
        }
        let fill = FillMap::new(
            &self.static_map,
            self.drive_shape(first_block),
            (&counts, locals),
            (sweep_start, swept),
        );
        let capacity = u64::from(blocks - first_block) * u64::from(self.geometry.pages_per_block);
        if (0..planes).any(|p| fill.stream_pages(p) > capacity) {
            return false;
        }
        self.apply_fill(fill);
        true
    }

    /// The drive's shape for a fill starting at block `first_block` of every plane.
    pub(super) fn drive_shape(&self, first_block: u32) -> DriveShape {
        DriveShape {
            pages_per_block: self.geometry.pages_per_block,
            pages_per_plane: self.pages_per_plane,
            first_block,
            logical: self.logical_pages(),
        }
    }

    /// Nothing written yet, the planes as built (reserved blocks first, the rest free in
    /// number order), no speed ordering.
    fn is_fresh(&self) -> bool {
        let blocks = self.geometry.blocks_per_plane;
        self.counters == super::FtlCounters::default()
            && self.map.is_empty()
            && self.planes.iter().all(|p| {
                let first = blocks - p.free_blocks();
                p.opened_blocks == 0
                    && p.active.is_none()
                    && p.active_gc.is_none()
                    && p.collecting == 0
                    && !p.speed_ordered
                    && p.free.first() == Some((0, 0, first))
                    && p.free.last() == Some((0, 0, blocks - 1))
            })
            && self
                .planes
                .iter()
                .all(|p| p.free_blocks() == self.planes[0].free_blocks())
    }

    /// Write `footprint`'s pages in logical order, leaving the state page-by-page writing
    /// leaves, every entry explicit (its pages are the ones the trace reads: each read then
    /// stays one table access). On a fresh drive under static placement page k of a plane's
    /// share lands on page k % pages_per_block of its (k / pages_per_block)-th block, as in
    /// the formula fill, so each page is two stores (its forward entry and its reverse one)
    /// instead of a general write. False, with nothing changed, where that does not hold
    /// (the conditions of [`Ftl::fill_in_order`], the integrity shadow, a page past the end):
    /// the footprint is then written page by page, whose errors say what is wrong.
    pub(super) fn write_footprint_in_order(&mut self, footprint: &Footprint) -> bool {
        if self.dynamic || self.shadow.is_some() || !self.is_fresh() {
            return false;
        }
        let ppb = self.geometry.pages_per_block;
        let blocks = self.geometry.blocks_per_plane;
        let first_block = blocks - self.planes[0].free_blocks();
        let capacity = u64::from(blocks - first_block) * u64::from(ppb);
        let logical = self.logical_pages();
        let mut counts = vec![0u64; self.planes.len()];
        for lpn in footprint.iter() {
            if lpn >= logical {
                return false;
            }
            counts[self.static_map.plane_of(lpn) as usize] += 1;
        }
        if counts.iter().any(|&pages| pages > capacity) {
            return false;
        }
        for (p, &pages) in counts.iter().enumerate() {
            let plane = &mut self.planes[p];
            // The open block's reverse map is filled below with the full blocks'.
            plane.fill_fresh(pages, |_, _| {});
            let full = (pages / u64::from(ppb)) as u32;
            for b in first_block..first_block + full {
                plane.blocks[b as usize].reverse =
                    Some(vec![INVALID; ppb as usize].into_boxed_slice());
            }
            self.count_fill_writes(p, pages, first_block);
        }
        counts.fill(0);
        for lpn in footprint.iter() {
            let p = self.static_map.plane_of(lpn);
            let k = counts[p as usize];
            counts[p as usize] += 1;
            let block = first_block + (k / u64::from(ppb)) as u32;
            let page = (k % u64::from(ppb)) as u32;
            if let Some(reverse) = &mut self.planes[p as usize].blocks[block as usize].reverse {
                reverse[page as usize] = lpn as u32;
            }
            let ppn = self.ppn_of(p, block, page);
            self.map.set(lpn, ppn);
        }
        self.counters.host_page_writes += footprint.pages();
        true
    }

    /// The host-write counters of process variation for `pages` written in order from block
    /// `first_block` of plane `p` (each page's block class and program time).
    fn count_fill_writes(&mut self, p: usize, pages: u64, first_block: u32) {
        let Some(variation) = &mut self.variation else {
            return;
        };
        let ppb = u64::from(self.geometry.pages_per_block);
        let blocks_per_plane = self.geometry.blocks_per_plane as usize;
        let mut left = pages;
        let mut block = first_block as usize;
        while left > 0 {
            let written = left.min(ppb);
            let global = p * blocks_per_plane + block;
            let class = variation.class(global);
            let program_ns = u64::from(variation.program_ns(global));
            let c = &mut variation.counters;
            c.writes_by_class[class as usize] += written;
            c.host_program_ns_sum += written * program_ns;
            left -= written;
            block += 1;
        }
    }

    /// Give the drive the state `fill` describes, as page-by-page writing leaves it.
    fn apply_fill(&mut self, fill: FillMap) {
        let ppb = self.geometry.pages_per_block;
        let mut host_writes = 0;
        for p in 0..self.planes.len() {
            let pages = fill.stream_pages(p);
            host_writes += pages;
            self.planes[p].fill_fresh(pages, |block, reverse| fill.block_lpns(p, block, reverse));
            self.count_fill_writes(p, pages, fill.first_block);
        }
        self.counters.host_page_writes += host_writes;
        if let Some(shadow) = &mut self.shadow {
            // Every page of the fill holds the first version of its logical page.
            let mut lpns = vec![INVALID; ppb as usize];
            for p in 0..fill.planes.len() {
                let pages = fill.stream_pages(p);
                let blocks = pages.div_ceil(u64::from(ppb)) as u32;
                for index in 0..blocks {
                    let block = fill.first_block + index;
                    fill.block_lpns(p, block, &mut lpns);
                    let first = p as u64 * self.pages_per_plane + u64::from(block * ppb);
                    for (page, &lpn) in lpns.iter().enumerate() {
                        if lpn != INVALID {
                            shadow.lpn_version.set(u64::from(lpn), 1);
                            shadow.ppn_version[(first + page as u64) as usize] = 1;
                        }
                    }
                }
            }
        }
        self.map.install_fill(fill);
    }

    /// Invalidate `page` of `block` of `plane`, a block holding fill pages as a formula: its
    /// reverse map is materialised first. Out of line, off the usual write path.
    #[cold]
    #[inline(never)]
    pub(super) fn invalidate_filled(&mut self, plane: u32, block: u32, page: u32) {
        self.materialise_block(plane, block);
        self.planes[plane as usize].invalidate(block, page);
    }

    /// Give full block `block` of `plane`, which holds fill pages as a formula, its reverse
    /// map (before a page of it is invalidated).
    pub(super) fn materialise_block(&mut self, plane: u32, block: u32) {
        let fill = self.map.fill();
        self.planes[plane as usize].materialise(block, |lpns| {
            if let Some(fill) = fill {
                fill.block_lpns(plane as usize, block, lpns);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::{precondition, FtlConfig, PreconditionConfig, PreconditionReport};
    use crate::geometry::{Geometry, Level};

    fn geometry() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 24,
            pages_per_block: 8,
            page_bytes: 4096,
        }
    }

    /// Preconditioning with the formula leaves the drive page-by-page writing leaves: same
    /// mapping of every logical page, same reverse maps once materialised, same block
    /// records, and the same drive after aging on top of it.
    #[test]
    fn the_formula_is_the_drive_written_page_by_page() {
        let g = geometry();
        for integrity in [true, false] {
            the_formula_is_the_drive_written_page_by_page_with(&g, integrity);
        }
        // 12 planes: a period not a power of two (aging's labels divide), whose rounds do
        // not start at a map chunk (the gather's general path).
        let twelve = Geometry {
            channels: 3,
            ..geometry()
        };
        the_formula_is_the_drive_written_page_by_page_with(&twelve, false);
    }

    /// A drive that cannot be aged (no spare blocks) fails aging with the error that writing
    /// the picks in order gives: the first failing pick's, though planes are written one
    /// after another and the next round drawn meanwhile.
    #[test]
    fn aging_fails_as_writing_in_order_does() {
        let g = geometry();
        let mut config = FtlConfig::plain(0.0, 0.0);
        config.gc_threshold_fraction = 0.05;
        let map = StaticMap::new(&g, [Level::Channel, Level::Die, Level::Chip, Level::Plane]);
        let build = || Ftl::new(&g, &config, map.clone(), false);
        let pre = PreconditionConfig {
            fill_fraction: 1.0,
            age: true,
            age_max_rounds: 3,
            ..Default::default()
        };
        let footprint = Footprint::new(build().logical_pages());
        let bulk = precondition(&mut build(), &pre, Some(&footprint), 5).map_err(|e| e.to_string());
        let plain =
            precondition::precondition_page_by_page(&mut build(), &pre, Some(&footprint), 5)
                .map_err(|e| e.to_string());
        assert!(plain.is_err(), "{plain:?}");
        assert_eq!(bulk, plain);
    }

    /// [`FillMap::block_lpns`] of every block of every plane, whole and cut short, against
    /// [`FillMap::stream_locals`] page by page.
    fn assert_block_lpns_are_the_stream(fill: &FillMap, planes: usize, g: &Geometry) {
        let ppb = g.pages_per_block as usize;
        for p in 0..planes {
            let (residue, _) = fill.plane_residue(p);
            let mut stream = Vec::new();
            fill.stream_locals(p, |_, local| {
                stream.push(fill.lpn_of(residue, local) as u32)
            });
            for index in 0..=stream.len().div_ceil(ppb) {
                for len in [ppb, ppb - 3] {
                    let mut got = vec![0; len];
                    fill.block_lpns(p, fill.first_block + index as u32, &mut got);
                    let want: Vec<u32> = (0..len)
                        .map(|i| stream.get(index * ppb + i).copied().unwrap_or(INVALID))
                        .collect();
                    assert_eq!(
                        got, want,
                        "plane {p}, block {index} of the fill, {len} pages"
                    );
                }
            }
        }
    }

    /// With the integrity shadow aging writes in the order of the picks; without it, plane by
    /// plane (ftl/aging.rs).
    fn the_formula_is_the_drive_written_page_by_page_with(g: &Geometry, integrity: bool) {
        for (unit, reserved, fill, age, footprint_every) in [
            (1, 0, 0.9, false, 7u64),
            (3, 1, 0.6, true, 5),
            (1, 2, 1.0, true, 3),
            (5, 0, 0.95, false, 0),
            (2, 0, 0.7, true, 2),
        ] {
            let mut config = FtlConfig::plain(0.2, 0.1);
            config.stripe_unit_pages = unit;
            config.translation_reserved_blocks_per_plane = reserved;
            let map = StaticMap::new(g, [Level::Channel, Level::Die, Level::Chip, Level::Plane])
                .with_stripe_unit_pages(unit);
            let build = || Ftl::new(g, &config, map.clone(), integrity);
            let mut bulk = build();
            let logical = bulk.logical_pages();
            let mut footprint = Footprint::new(logical);
            if footprint_every > 0 {
                for lpn in (0..logical).filter(|l| (l * 13 + 5) % footprint_every == 0) {
                    footprint.insert(lpn);
                }
            }
            let pre = PreconditionConfig {
                fill_fraction: fill,
                age,
                age_max_rounds: 3,
                ..Default::default()
            };
            let (report, plain, plain_report) = both_ways(&mut bulk, build, &pre, &footprint);
            assert!(
                bulk.map.fill().is_some(),
                "the formula applied (unit {unit})"
            );
            // Aging's test of a pick by arithmetic is the set of pages the fill wrote, and
            // its plane-major entries' runs are the stream page by page.
            if let Some(fill) = bulk.map.fill() {
                for p in 0..bulk.planes.len() {
                    let (mut pages, mut runs) = (Vec::new(), Vec::new());
                    fill.stream_locals(p, |k, local| pages.push((k, local)));
                    fill.stream_runs(p, |k, local, len| {
                        assert!(len > 0);
                        runs.extend((0..len).map(|i| (k + i, local + i)));
                    });
                    assert_eq!(runs, pages, "plane {p}");
                }
                // Each block's logical pages, as materialising it writes them, are the
                // stream's page by page; in the drive's numbering and in aging's plane-major
                // one (one stripe unit a plane, consecutive runs).
                let span = (0..bulk.planes.len())
                    .map(|p| fill.plane_residue(p).1)
                    .max()
                    .unwrap_or(0)
                    + 3;
                for numbering in [fill.clone(), fill.plane_major(span)] {
                    assert_block_lpns_are_the_stream(&numbering, bulk.planes.len(), g);
                }
                let (filled, written) = (fill.filled(), fill.written());
                for lpn in 0..logical {
                    assert_eq!(filled.contains(lpn), written.contains(lpn), "{lpn}");
                }
            }
            assert_eq!(
                (report.footprint_pages, report.fill_pages, report.age_rounds),
                (
                    plain_report.footprint_pages,
                    plain_report.fill_pages,
                    plain_report.age_rounds
                )
            );
            assert_eq!(report.age_final_waf, plain_report.age_final_waf);
            assert!(
                !age || fill < 0.9 || report.age_final_waf > 1.0,
                "GC ran while aging"
            );
            assert_same_drive(&mut bulk, &plain);
            // Reads and writes on top keep the integrity check clean.
            let mut ops = Vec::new();
            for lpn in (0..logical).step_by(3) {
                bulk.write(lpn, &[0; 4], &mut ops).unwrap();
            }
            for lpn in 0..logical {
                bulk.read(lpn).unwrap();
            }
            assert_eq!(bulk.integrity_violations(), integrity.then_some(0));
        }
    }

    /// Precondition `bulk` as runs do and a drive from `build` page by page (the reference):
    /// `bulk`'s report, the reference drive and its report.
    fn both_ways(
        bulk: &mut Ftl,
        build: impl Fn() -> Ftl,
        pre: &PreconditionConfig,
        footprint: &Footprint,
    ) -> (PreconditionReport, Ftl, PreconditionReport) {
        let report = precondition(bulk, pre, Some(footprint), 11).unwrap();
        let mut plain = build();
        let plain_report =
            precondition::precondition_page_by_page(&mut plain, pre, Some(footprint), 11).unwrap();
        (report, plain, plain_report)
    }

    /// `bulk` holds what `plain`, written page by page, holds: map entries, memory, block
    /// records, lists and reverse maps (blocks still held by formula are materialised first).
    fn assert_same_drive(bulk: &mut Ftl, plain: &Ftl) {
        let logical = bulk.logical_pages();
        let blocks = bulk.geometry.blocks_per_plane;
        assert_eq!(bulk.allocated_bytes(), plain.allocated_bytes());
        assert_eq!(
            bulk.mapped_lpns().collect::<Vec<_>>(),
            plain.mapped_lpns().collect::<Vec<_>>()
        );
        for lpn in 0..logical {
            assert_eq!(bulk.mapped_target(lpn), plain.mapped_target(lpn), "{lpn}");
        }
        for (a, b) in bulk.planes.iter_mut().zip(&plain.planes) {
            assert_eq!(a.free, b.free);
            assert_eq!((a.active, a.opened_blocks), (b.active, b.opened_blocks));
            assert_eq!(
                (&a.bucket_head, &a.bucket_tail),
                (&b.bucket_head, &b.bucket_tail)
            );
            for (x, y) in a.blocks.iter().zip(&b.blocks) {
                assert_eq!(
                    (
                        x.erase_count,
                        x.valid_pages,
                        x.next_page,
                        x.state,
                        x.prev,
                        x.next
                    ),
                    (
                        y.erase_count,
                        y.valid_pages,
                        y.next_page,
                        y.state,
                        y.prev,
                        y.next
                    )
                );
            }
        }
        for p in 0..bulk.planes.len() {
            for b in 0..blocks {
                if bulk.planes[p].blocks[b as usize].holds_fill() {
                    bulk.materialise_block(p as u32, b);
                }
                assert_eq!(
                    bulk.planes[p].blocks[b as usize].reverse,
                    plain.planes[p].blocks[b as usize].reverse,
                    "plane {p} block {b}"
                );
            }
        }
    }

    /// Only the footprint written (it covers the fill): one pass of explicit entries
    /// ([`Ftl::write_footprint_in_order`]), the drive page-by-page writing leaves; with
    /// process variation its counters too. Under the integrity shadow page by page.
    #[test]
    fn the_footprint_in_one_pass_is_the_drive_written_page_by_page() {
        let g = geometry();
        for (unit, reserved, footprint_every, integrity, variation) in [
            (1, 0, 7u64, false, false),
            (3, 1, 2, false, true),
            (5, 2, 3, false, false),
            (1, 0, 1, false, false),
            (2, 1, 5, true, false),
        ] {
            let mut config = FtlConfig::plain(0.2, 0.1);
            config.stripe_unit_pages = unit;
            config.translation_reserved_blocks_per_plane = reserved;
            let map = StaticMap::new(&g, [Level::Channel, Level::Die, Level::Chip, Level::Plane])
                .with_stripe_unit_pages(unit);
            let build = || {
                let mut ftl = Ftl::new(&g, &config, map.clone(), integrity);
                if variation {
                    let config = crate::ftl::VariationConfig {
                        enabled: true,
                        ..Default::default()
                    };
                    ftl.enable_variation(&config, 600_000, 5).unwrap();
                }
                ftl
            };
            let mut bulk = build();
            let logical = bulk.logical_pages();
            let mut footprint = Footprint::new(logical);
            for lpn in (0..logical).filter(|l| (l * 13 + 5) % footprint_every == 0) {
                footprint.insert(lpn);
            }
            let pre = PreconditionConfig {
                fill_fraction: 0.0,
                ..Default::default()
            };
            let (report, mut plain, plain_report) = both_ways(&mut bulk, build, &pre, &footprint);
            assert_eq!(report.footprint_pages, footprint.pages());
            assert_eq!(plain_report.footprint_pages, footprint.pages());
            assert!(bulk.map.fill().is_none(), "every entry explicit");
            assert!(bulk
                .planes
                .iter()
                .all(|p| p.blocks.iter().all(|b| !b.holds_fill())));
            assert_eq!(
                bulk.variation().map(|v| v.counters),
                plain.variation().map(|v| v.counters)
            );
            assert_same_drive(&mut bulk, &plain);
            // Reads and writes on top: the same targets, the integrity check clean.
            let (mut ops, mut plain_ops) = (Vec::new(), Vec::new());
            for lpn in (0..logical).step_by(3) {
                assert_eq!(
                    bulk.write(lpn, &[0; 4], &mut ops).unwrap(),
                    plain.write(lpn, &[0; 4], &mut plain_ops).unwrap()
                );
            }
            assert_eq!(ops, plain_ops);
            for lpn in 0..logical {
                assert_eq!(bulk.read(lpn).ok(), plain.read(lpn).ok(), "{lpn}");
            }
            assert_eq!(bulk.integrity_violations(), integrity.then_some(0));
        }
    }

    #[test]
    fn sweep_extent_counts_the_pages_the_loop_visits() {
        let logical = 300u64;
        let mut footprint = Footprint::new(logical);
        for lpn in (0..logical).filter(|l| l % 7 == 2 || (100..170).contains(l)) {
            footprint.insert(lpn);
        }
        for start in [0u64, 5, 63, 64, 250, 299] {
            for needed in [0u64, 1, 10, 64, 130, 200, 1000] {
                let (mut visited, mut written) = (0, 0);
                for i in 0..logical {
                    if written >= needed {
                        break;
                    }
                    visited = i + 1;
                    if !footprint.contains((start + i) % logical) {
                        written += 1;
                    }
                }
                assert_eq!(
                    sweep_extent(Some(&footprint), start, logical, needed),
                    (visited, written),
                    "start {start} needed {needed}"
                );
            }
        }
    }
}
