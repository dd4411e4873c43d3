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
//! entries are one contiguous run that stays in cache while the plane is aged. When aging
//! ends the numbering is turned back: the reverse maps entry by entry, the forward map
//! gathered in logical order while the plane-major one is released chunk by chunk (so the two
//! never both hold the whole map).
//!
//! Used after a fill written as a formula (so the forward map has no entry yet), without the
//! integrity shadow (indexed by logical page), under static allocation and on drives of at
//! least [`PLANE_MAJOR_FROM_PAGES`] logical pages; otherwise aging writes in the order of the
//! picks, as before. Either way aging costs a random overwrite per pick plus the GC moves it
//! causes (about 2 s of CPU a round of 8.4 M overwrites on `venice-perf`, plane by plane): it
//! is the one part of preconditioning that still grows with the pages written.

use super::fill::FillMap;
use super::mapping::{PageMap, CHUNK};
use super::plane::INVALID;
use super::Ftl;
use crate::geometry::StaticMap;

/// Logical pages from which aging runs plane-major. A smaller drive's map stays in cache
/// anyway, and the renumbering costs more than it saves (`sos-4x4`, 3.8 M logical pages,
/// filled to 0.9 and aged: 0.69 -> 0.71 s CPU, 43 -> 50 MiB; `venice-perf`, 93.6 M: 23.7
/// -> 16.3 s).
#[cfg(not(test))]
const PLANE_MAJOR_FROM_PAGES: u64 = 1 << 24;
/// Unit tests compare plane-major aging with page-by-page writing on small drives.
#[cfg(test)]
const PLANE_MAJOR_FROM_PAGES: u64 = 1;

/// Rounds of the static placement (a stripe unit on every plane) gathered at a time when the
/// numbering is turned back.
const GATHER_ROUNDS: u64 = 1024;

/// The drive's own numbering, set aside while aging runs plane-major.
pub(super) struct PlaneMajor {
    /// The drive's map: its fill, with the chunks it counts.
    map: PageMap,
    /// That fill (the drive's numbering of each plane's pages).
    fill: FillMap,
    static_map: StaticMap,
    /// Logical pages numbered per plane (a whole number of map chunks).
    span: u64,
}

impl PlaneMajor {
    /// Plane-major number of logical page `lpn` (see the module's comment).
    pub(super) fn label(&self, lpn: u64) -> u32 {
        let (plane, local) = self.fill.local_of(lpn);
        (self.fill.plane_residue(plane).0 * self.span + local) as u32
    }

    /// Logical pages numbered per plane: labels `r * span ..` belong to residue `r`.
    pub(super) fn span(&self) -> u64 {
        self.span
    }
}

impl Ftl {
    /// Number the logical pages plane-major for aging, when it applies (see the module's
    /// comment); `None` leaves the drive as it is.
    pub(super) fn begin_plane_major(&mut self) -> Option<PlaneMajor> {
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
        let span = (0..planes)
            .map(|p| fill.plane_residue(p).1)
            .max()?
            .next_multiple_of(CHUNK as u64);
        if span * planes as u64 >= u64::from(INVALID) {
            return None;
        }
        let plane_major = fill.plane_major(span);
        for (p, plane) in self.planes.iter_mut().enumerate() {
            let base = fill.plane_residue(p).0 * span;
            for reverse in plane.blocks.iter_mut().filter_map(|b| b.reverse.as_mut()) {
                for lpn in reverse.iter_mut().filter(|l| **l != INVALID) {
                    *lpn = (base + fill.local_of(u64::from(*lpn)).1) as u32;
                }
            }
        }
        let map = std::mem::replace(
            &mut self.map,
            PageMap::releasable_with_fill(span * planes as u64, plane_major),
        );
        let plane_major_static =
            StaticMap::new(&self.geometry, self.static_map.order()).with_stripe_unit_pages(span);
        let static_map = std::mem::replace(&mut self.static_map, plane_major_static);
        Some(PlaneMajor {
            map,
            fill: own_fill,
            static_map,
            span,
        })
    }

    /// Number the logical pages as before [`Ftl::begin_plane_major`] again.
    pub(super) fn end_plane_major(&mut self, numbering: PlaneMajor) {
        let PlaneMajor {
            map,
            fill: _,
            static_map,
            span,
        } = numbering;
        let mut plane_major = std::mem::replace(&mut self.map, map);
        self.static_map = static_map;
        let Some(fill) = self.map.fill() else {
            return;
        };
        for (p, plane) in self.planes.iter_mut().enumerate() {
            let (residue, _) = fill.plane_residue(p);
            let base = residue * span;
            for reverse in plane.blocks.iter_mut().filter_map(|b| b.reverse.as_mut()) {
                for lpn in reverse.iter_mut().filter(|l| **l != INVALID) {
                    *lpn = fill.lpn_of(residue, u64::from(*lpn) - base) as u32;
                }
            }
        }
        // The entries written, in logical order: logical page (k * period + r) * unit + j is
        // local k * unit + j of residue r. A chunk of every residue is released once the
        // locals it holds are all copied.
        let unit = self.static_map.stripe_unit_pages();
        let period = self.static_map.period();
        let logical = self.map.logical_pages();
        let rounds = logical.div_ceil(unit * period);
        let mut released = 0u64;
        let mut tile = 0u64;
        while tile < rounds {
            // A tile of rounds at a time, residue after residue: each residue's entries are
            // read as one sequential run while the tile's destination stays in cache.
            let end = (tile + GATHER_ROUNDS).min(rounds);
            for r in 0..period {
                for k in tile..end {
                    let first = (k * period + r) * unit;
                    if first >= logical {
                        break;
                    }
                    for j in 0..unit.min(logical - first) {
                        let value = plane_major.table.get(r * span + k * unit + j);
                        if value != 0 {
                            self.map.set(first + j, value - 1);
                        }
                    }
                }
            }
            tile = end;
            let done = (tile * unit).min(span) / CHUNK as u64;
            while released < done {
                for r in 0..period {
                    plane_major
                        .table
                        .release_chunk(((r * span) / CHUNK as u64 + released) as usize);
                }
                released += 1;
            }
        }
    }
}
