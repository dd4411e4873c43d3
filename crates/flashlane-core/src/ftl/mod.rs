//! Flash translation layer: page-level mapping, static or dynamic allocation, greedy garbage
//! collection inside a plane, dynamic wear levelling and preconditioning.
//!
//! The FTL updates its state the moment a request is translated (data sits in the controller's
//! write buffer until programmed); the flash operations it returns carry the timing.

mod aging;
pub mod cmt;
mod config;
mod fill;
mod footprint;
mod free_blocks;
mod mapping;
pub mod partial_pages;
mod plane;
mod precondition;
mod slot_index;
pub mod snapshot;
pub mod variation;
mod zeroed_block;

use serde::{Deserialize, Serialize};

use crate::geometry::{Geometry, StaticMap};
use crate::Error;

pub use config::{AllocationConfig, FtlConfig, GcBlockRelease, GcPageMove, GcTrigger};
pub use footprint::Footprint;
pub use mapping::{ChunkedTable, PageMap};
pub use partial_pages::{PartialPageWrites, PartialPages};
pub use plane::{BlockState, Plane, INVALID};
pub use precondition::{
    precondition, FootprintRequests, PreconditionConfig, PreconditionReport, SnapshotReport,
};
pub use variation::{
    BlockChoice, SpeedClass, Variation, VariationConfig, VariationCounters, VariationStats,
};

/// Garbage-collection moves between prefetching a page's map entry and moving it.
const MOVES_AHEAD: usize = 8;

/// Where a flash operation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysicalTarget {
    pub chip: u32,
    /// Global die index (chip * dies_per_chip + die).
    pub die: u32,
    /// Global plane index.
    pub plane: u32,
    pub ppn: u32,
}

/// A garbage-collection flash operation the FTL asks the device to perform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcOp {
    /// Move the valid page at `from_ppn` to `target`, inside its plane (a copyback, or a read
    /// and a program under `ftl.gc_page_move = "read_and_program"`).
    Copyback {
        target: PhysicalTarget,
        from_ppn: u32,
    },
    /// Erase a block of the plane.
    Erase { target: PhysicalTarget },
    /// Read the valid page at `from` to move it; where it goes is decided when the read ends
    /// ([`Ftl::place_moved_page`]). Under `ftl.gc_page_move = "read_and_program"` with the
    /// deferred release (MQSim's `Allocate_new_page_for_gc` at the end of a GC read).
    MoveRead { from: PhysicalTarget },
}

/// Counters of FTL activity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FtlCounters {
    pub host_page_writes: u64,
    pub gc_runs: u64,
    pub gc_pages_moved: u64,
    pub erases: u64,
    /// Reads of logical pages never written: served from the page's static location, or, under
    /// `ftl.unwritten_reads = "allocate"`, the reads that gave the page its physical page.
    pub unmapped_reads: u64,
}

/// Where a host read of a logical page never written finds its data (`ftl.unwritten_reads`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnwrittenReads {
    /// At the page the static order gives, block 0 (any page will do for timing); nothing is
    /// allocated, so every such read goes there.
    #[default]
    StaticLocation,
    /// MQSim's `online_create_entry_for_reads`: the logical page first gets a physical page at
    /// its plane's write frontier (untimed, no program) and is read there; later reads, writes
    /// and garbage collection treat it as written.
    Allocate,
}

impl UnwrittenReads {
    pub fn is_default(&self) -> bool {
        *self == UnwrittenReads::StaticLocation
    }
}

/// Shadow data used to prove mapping correctness: a version per logical page and the version
/// each physical page holds. Only kept when integrity checking is on.
#[derive(Debug)]
struct Shadow {
    lpn_version: ChunkedTable,
    ppn_version: Vec<u32>,
    violations: u64,
}

/// A plane whose waiting host writes can never be placed ([`Ftl::stuck_plane`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StuckPlane {
    pub free_blocks: u32,
    /// `ftl.write_stall_below_free_blocks`.
    pub stall_below_free_blocks: u32,
    /// Valid pages held by the plane's blocks.
    pub valid_pages: u64,
    pub blocks: u32,
}

/// The drive's state. Every field preconditioning changes is also in its snapshot
/// (ftl/snapshot.rs, which fails to compile until a new field is placed there).
pub struct Ftl {
    geometry: Geometry,
    static_map: StaticMap,
    dynamic: bool,
    map: PageMap,
    planes: Vec<Plane>,
    gc_threshold_blocks: u32,
    /// Under `ftl.gc_trigger = "free_pages"`: GC while a plane has fewer free pages.
    gc_threshold_pages: Option<u64>,
    pages_per_plane: u64,
    /// (chip, global die) of every plane, so translation needs no divisions.
    plane_targets: Vec<(u32, u32)>,
    counters: FtlCounters,
    /// Round-robin cursors for dynamic allocation: next chip on ties, next die/plane per chip.
    next_chip: u32,
    next_plane_in_chip: Vec<u32>,
    shadow: Option<Shadow>,
    /// Test hook (see [`Ftl::break_relocation_for_test`]).
    break_relocation_for_test: bool,
    /// Per-block program latencies (`[variation]`), when enabled.
    variation: Option<Variation>,
    block_choice: BlockChoice,
    unwritten_reads: UnwrittenReads,
    /// `ftl.gc_block_release`, and whether the deferred release is running (it starts with the
    /// timed run, after preconditioning: see [`Ftl::start_deferred_release`]).
    gc_block_release: GcBlockRelease,
    defer_release: bool,
    gc_max_victims_per_plane: u32,
    write_stall_below_free_blocks: u32,
    gc_separate_write_block: bool,
    /// `ftl.gc_page_move = "read_and_program"`: under the deferred release a moved page is
    /// placed when its read ends, not when its victim is chosen.
    place_on_read: bool,
    /// Scratch list of a GC victim's valid pages (no allocation per run).
    gc_moves: Vec<(u32, u32)>,
}

/// The error of a write that finds its plane without a free page.
#[cold]
fn no_free_page(plane: u32) -> Error {
    Error::Workload(format!(
        "plane {plane} has no free page left: the logical data exceeds what over-provisioning and garbage collection can hold"
    ))
}

impl Ftl {
    pub fn new(
        geometry: &Geometry,
        config: &FtlConfig,
        static_map: StaticMap,
        check_integrity: bool,
    ) -> Self {
        let pages_per_plane = geometry.pages_per_plane();
        let logical_pages = ((geometry.physical_pages() as f64)
            * (1.0 - config.overprovisioning_fraction))
            .floor() as u64;
        let gc_threshold_blocks =
            ((geometry.blocks_per_plane as f64 * config.gc_threshold_fraction).ceil() as u32)
                .max(config.gc_threshold_min_blocks)
                .max(1);
        let shadow = check_integrity.then(|| Shadow {
            lpn_version: ChunkedTable::new(logical_pages),
            ppn_version: vec![0; geometry.physical_pages() as usize],
            violations: 0,
        });
        Ftl {
            geometry: geometry.clone(),
            static_map,
            dynamic: matches!(config.allocation, AllocationConfig::Dynamic {}),
            map: PageMap::new(logical_pages),
            planes: (0..geometry.planes())
                .map(|_| {
                    let mut plane = Plane::new(geometry.blocks_per_plane, geometry.pages_per_block);
                    plane.reserve_blocks(config.translation_reserved_blocks_per_plane);
                    plane
                })
                .collect(),
            gc_threshold_blocks,
            gc_threshold_pages: (config.gc_trigger == GcTrigger::FreePages)
                .then(|| (pages_per_plane as f64 * config.gc_threshold_fraction).ceil() as u64),
            pages_per_plane,
            plane_targets: (0..geometry.planes())
                .map(|plane| {
                    let (chip, die, _) = geometry.plane_location(plane);
                    (chip, chip * geometry.dies_per_chip + die)
                })
                .collect(),
            counters: FtlCounters::default(),
            next_chip: 0,
            next_plane_in_chip: vec![0; geometry.chips() as usize],
            shadow,
            break_relocation_for_test: false,
            variation: None,
            block_choice: config.block_choice,
            unwritten_reads: config.unwritten_reads,
            gc_block_release: config.gc_block_release,
            defer_release: false,
            gc_max_victims_per_plane: config.gc_max_victims_per_plane,
            write_stall_below_free_blocks: config.write_stall_below_free_blocks,
            gc_separate_write_block: config.gc_separate_write_block,
            place_on_read: config.gc_page_move == GcPageMove::ReadAndProgram,
            gc_moves: Vec::new(),
        }
    }

    /// Under `ftl.gc_block_release = "erase_done"`, from now on a victim's block returns to the
    /// free pool only through [`Ftl::erase_done`]. Called when the timed run starts: untimed
    /// preconditioning has no erase completions, so it collects as under `translation`.
    pub fn start_deferred_release(&mut self) {
        self.defer_release = self.gc_block_release == GcBlockRelease::EraseDone;
    }

    /// Whether victims' blocks wait for [`Ftl::erase_done`] (deferred release running).
    #[inline]
    pub fn defers_release(&self) -> bool {
        self.defer_release
    }

    /// Under deferred release: the plane a host write of `lpn` must wait for, when that plane
    /// has fewer free blocks than `ftl.write_stall_below_free_blocks` (MQSim's
    /// Stop_servicing_writes). `None`: the write may be placed now.
    #[inline]
    pub fn write_stall_plane(&self, lpn: u64) -> Option<u32> {
        if !self.defer_release {
            return None;
        }
        let plane = self.static_map.plane_of(lpn);
        (self.planes[plane as usize].free_blocks() < self.write_stall_below_free_blocks)
            .then_some(plane)
    }

    /// Under deferred release: the state of `plane` when host writes waiting for it can never
    /// be placed. The plane is below the write-stall level, no victim of it is being erased
    /// and every full block is entirely valid, so no collection can free a block; only a write
    /// to the plane could invalidate a page, and those writes wait. (The config keeps the GC
    /// threshold at or above the stall level, so a plane below it with a victim has one
    /// being erased.)
    pub fn stuck_plane(&self, plane: u32) -> Option<StuckPlane> {
        let p = &self.planes[plane as usize];
        let stuck = self.defer_release
            && p.free_blocks() < self.write_stall_below_free_blocks
            && p.collecting == 0
            && p.greedy_victim().is_none();
        stuck.then(|| StuckPlane {
            free_blocks: p.free_blocks(),
            stall_below_free_blocks: self.write_stall_below_free_blocks,
            valid_pages: p.blocks.iter().map(|b| u64::from(b.valid_pages)).sum(),
            blocks: p.blocks.len() as u32,
        })
    }

    /// Under deferred release: the erase of the block holding `ppn` completed; the block joins
    /// the free pool. Returns its plane.
    pub fn erase_done(&mut self, ppn: u32) -> u32 {
        let (plane, block, _) = self.split_ppn(ppn);
        debug_assert_eq!(
            self.planes[plane as usize].blocks[block as usize].state,
            plane::BlockState::Collecting
        );
        self.release_block(plane, block);
        plane
    }

    /// Under deferred release, after an erase completed and the writes waiting for `plane` were
    /// placed: while the plane is still below the write-stall level, try one more victim
    /// (MQSim's GC_and_WL_Unit_Base::handle_transaction_serviced_signal_from_PHY).
    pub fn gc_after_erase(&mut self, plane: u32, gc_ops: &mut Vec<GcOp>) -> Result<(), Error> {
        if self.planes[plane as usize].free_blocks() < self.write_stall_below_free_blocks {
            self.collect_on_openings(plane, 1, gc_ops)?;
        }
        Ok(())
    }

    /// Give every block its own program latency (`[variation]`; see ftl::variation), drawn from
    /// the run seed. Call before any write; [`Ftl::start_block_choice`] then turns on the
    /// variation-aware choice.
    pub fn enable_variation(
        &mut self,
        config: &VariationConfig,
        nominal_program_ns: u64,
        seed: u64,
    ) -> Result<(), Error> {
        let blocks = self.geometry.planes() as u64 * self.geometry.blocks_per_plane as u64;
        let variation =
            Variation::new(config, blocks, nominal_program_ns, seed).map_err(Error::Config)?;
        self.variation = Some(variation);
        Ok(())
    }

    /// Under `ftl.block_choice = "fastest_for_conflicts"` with variation on, order the free
    /// blocks of every plane by speed from now on. Called after preconditioning, so that the
    /// data placed before the trace sits in the same blocks whatever the choice (runs then
    /// differ only in how the trace's writes are placed; docs/models/vios.md).
    pub fn start_block_choice(&mut self) {
        let Some(variation) = &self.variation else {
            return;
        };
        if self.block_choice == BlockChoice::FastestForConflicts {
            let per_plane = self.geometry.blocks_per_plane as usize;
            for (p, plane) in self.planes.iter_mut().enumerate() {
                plane.order_by_speed(|b| variation.speed_key(p * per_plane + b as usize));
            }
        }
    }

    pub fn variation(&self) -> Option<&Variation> {
        self.variation.as_ref()
    }

    /// Array program time of the block holding `ppn` under `[variation]`; `None` without it
    /// (the device's `timing.page_program_ns` applies).
    #[inline]
    pub fn program_ns(&self, ppn: u32) -> Option<u32> {
        let variation = self.variation.as_ref()?;
        let block = ppn as u64 / self.geometry.pages_per_block as u64;
        Some(variation.program_ns(block as usize))
    }

    pub fn logical_pages(&self) -> u64 {
        self.map.logical_pages()
    }

    pub fn counters(&self) -> FtlCounters {
        self.counters
    }

    pub fn reset_counters(&mut self) {
        self.counters = FtlCounters::default();
    }

    /// Reads whose physical page did not hold the last version written (must stay 0).
    pub fn integrity_violations(&self) -> Option<u64> {
        self.shadow.as_ref().map(|s| s.violations)
    }

    /// Bytes of mapping state allocated (forward map chunks and the reverse maps of blocks
    /// being written or holding valid data).
    pub fn allocated_bytes(&self) -> u64 {
        let reverse: u64 = self
            .planes
            .iter()
            .flat_map(|p| p.blocks.iter())
            .filter(|b| b.reverse.is_some() || b.holds_fill())
            .count() as u64
            * self.geometry.pages_per_block as u64
            * 4;
        self.map.allocated_bytes() + reverse
    }

    pub fn erase_counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.planes
            .iter()
            .flat_map(|p| p.blocks.iter().map(|b| b.erase_count))
    }

    fn target_of(&self, ppn: u32) -> PhysicalTarget {
        // u32 division: physical page numbers fit in u32 (checked by the geometry).
        let plane = ppn / self.pages_per_plane as u32;
        let (chip, die) = self.plane_targets[plane as usize];
        PhysicalTarget {
            chip,
            die,
            plane,
            ppn,
        }
    }

    fn ppn_of(&self, plane: u32, block: u32, page: u32) -> u32 {
        (plane as u64 * self.pages_per_plane
            + block as u64 * self.geometry.pages_per_block as u64
            + page as u64) as u32
    }

    fn split_ppn(&self, ppn: u32) -> (u32, u32, u32) {
        let plane = (ppn as u64 / self.pages_per_plane) as u32;
        let in_plane = ppn as u64 % self.pages_per_plane;
        let ppb = self.geometry.pages_per_block as u64;
        (plane, (in_plane / ppb) as u32, (in_plane % ppb) as u32)
    }

    fn check_lpn(&self, lpn: u64) -> Result<(), Error> {
        if lpn >= self.map.logical_pages() {
            return Err(Error::Workload(format!(
                "logical page {lpn} is past the simulated capacity of {} logical pages ({} bytes)",
                self.map.logical_pages(),
                self.map.logical_pages() * self.geometry.page_bytes as u64
            )));
        }
        Ok(())
    }

    /// Every logical page mapped now, in order (scans only the allocated parts of the map).
    pub fn mapped_lpns(&self) -> impl Iterator<Item = u64> + '_ {
        self.map.mapped_lpns()
    }

    /// See [`PageMap::mapped_groups`].
    pub fn mapped_groups(&self, group_pages: u64) -> Vec<bool> {
        self.map.mapped_groups(group_pages)
    }

    /// Start loading the mapping entry of `lpn` ahead of its translation (a performance hint).
    pub fn prefetch(&self, lpn: u64) {
        if lpn < self.map.logical_pages() {
            self.map.prefetch(lpn);
        }
    }

    /// Start loading the block metadata an overwrite of `lpn` will update (the block holding
    /// its current data), a few steps before the write is placed (a performance hint). Returns
    /// that page's (plane, block, page in block) for [`Ftl::prefetch_reverse_entry`].
    pub fn prefetch_overwritten(&self, lpn: u64) -> Option<(u32, u32, u32)> {
        if lpn >= self.map.logical_pages() {
            return None;
        }
        let old = self.map.get(lpn)?;
        let (plane, block, page) = self.split_ppn(old);
        let metadata = self
            .planes
            .get(plane as usize)?
            .blocks
            .get(block as usize)?;
        slot_index::prefetch(metadata);
        Some((plane, block, page))
    }

    /// Start loading the reverse-map entry of physical page `(plane, block, page in block)`
    /// (once [`Ftl::prefetch_overwritten`] has loaded the block's metadata; a hint).
    pub fn prefetch_reverse_entry(&self, (plane, block, page): (u32, u32, u32)) {
        if let Some(entry) = self
            .planes
            .get(plane as usize)
            .and_then(|p| p.blocks.get(block as usize))
            .and_then(|b| b.reverse.as_ref())
            .and_then(|reverse| reverse.get(page as usize))
        {
            slot_index::prefetch(entry);
        }
    }

    /// As [`Ftl::prefetch_reverse_entry`], with the block records the overwrite's
    /// invalidation re-files (see [`Plane::prefetch_invalidation`]).
    pub fn prefetch_invalidation(&self, (plane, block, page): (u32, u32, u32)) {
        if let Some(p) = self.planes.get(plane as usize) {
            p.prefetch_invalidation(block, page);
        }
    }

    /// Where logical page `lpn` is now, if it is mapped (no counter moves).
    pub fn mapped_target(&self, lpn: u64) -> Option<PhysicalTarget> {
        if lpn >= self.map.logical_pages() {
            return None;
        }
        self.map.get(lpn).map(|ppn| self.target_of(ppn))
    }

    /// Translate a read of logical page `lpn`.
    pub fn read(&mut self, lpn: u64) -> Result<PhysicalTarget, Error> {
        self.check_lpn(lpn)?;
        match self.map.get(lpn) {
            Some(ppn) => {
                if let Some(shadow) = &mut self.shadow {
                    if shadow.ppn_version[ppn as usize] != shadow.lpn_version.get(lpn) {
                        shadow.violations += 1;
                    }
                }
                Ok(self.target_of(ppn))
            }
            None => {
                self.counters.unmapped_reads += 1;
                // Never written: the data would sit where the static map puts it; any page will do
                // for timing.
                let plane = self.static_map.plane_of(lpn);
                Ok(self.target_of(self.ppn_of(plane, 0, 0)))
            }
        }
    }

    /// Translate a host read of logical page `lpn` under `ftl.unwritten_reads`: as
    /// [`Ftl::read`], except that under `allocate` a page never written first gets a physical
    /// page on its static plane; garbage collection that allocation makes necessary is appended
    /// to `gc_ops`. Also returns whether it allocated (the mapping changed).
    pub fn read_host(
        &mut self,
        lpn: u64,
        gc_ops: &mut Vec<GcOp>,
    ) -> Result<(PhysicalTarget, bool), Error> {
        if self.unwritten_reads == UnwrittenReads::Allocate {
            self.check_lpn(lpn)?;
            if self.map.get(lpn).is_none() {
                self.counters.unmapped_reads += 1;
                let plane = self.static_map.plane_of(lpn);
                let opened_before = self.planes[plane as usize].opened_blocks;
                let target = self.place_write(lpn, plane)?;
                self.collect_after_placing(plane, opened_before, gc_ops)?;
                return Ok((target, true));
            }
        }
        Ok((self.read(lpn)?, false))
    }

    /// Translate a write of logical page `lpn`: allocate a page, remap, invalidate the old copy.
    /// Garbage collection the write makes necessary is appended to `gc_ops`. `chip_load` gives
    /// the queued flash transactions per chip (used by dynamic allocation).
    pub fn write(
        &mut self,
        lpn: u64,
        chip_load: &[u32],
        gc_ops: &mut Vec<GcOp>,
    ) -> Result<PhysicalTarget, Error> {
        self.write_with_claims(lpn, chip_load, &[], gc_ops)
    }

    /// As [`Ftl::write`], knowing the requests waiting or in service per chip (this one
    /// included; empty = unknown). A write whose chip has `claims > 1` conflicts: under
    /// `fastest_for_conflicts`, if it opens a block in its plane, it opens the fastest free one.
    pub fn write_with_claims(
        &mut self,
        lpn: u64,
        chip_load: &[u32],
        claims_per_chip: &[u32],
        gc_ops: &mut Vec<GcOp>,
    ) -> Result<PhysicalTarget, Error> {
        self.check_lpn(lpn)?;
        let plane = if self.dynamic {
            self.dynamic_plane(chip_load)
        } else {
            self.static_map.plane_of(lpn)
        };
        let chip = self.plane_targets[plane as usize].0 as usize;
        let conflict = claims_per_chip.get(chip).is_some_and(|claims| *claims > 1);
        let fast = conflict && self.block_choice == BlockChoice::FastestForConflicts;
        let opened_before = self.planes[plane as usize].opened_blocks;
        let target = self.place_write_in(lpn, plane, fast)?;
        self.counters.host_page_writes += 1;
        if let Some(variation) = &mut self.variation {
            let block = target.ppn as u64 / self.geometry.pages_per_block as u64;
            let class = variation.class(block as usize);
            let program_ns = variation.program_ns(block as usize);
            let c = &mut variation.counters;
            c.writes_by_class[class as usize] += 1;
            c.conflict_writes += u64::from(conflict);
            c.fast_stream_writes += u64::from(fast);
            c.host_program_ns_sum += program_ns as u64;
        }
        self.collect_after_placing(plane, opened_before, gc_ops)?;
        Ok(target)
    }

    /// Garbage collection after a page was placed in `plane` (whose count of opened blocks was
    /// `opened_before`): at once as needed, or under deferred release one victim per block the
    /// placement opened.
    fn collect_after_placing(
        &mut self,
        plane: u32,
        opened_before: u64,
        gc_ops: &mut Vec<GcOp>,
    ) -> Result<(), Error> {
        if self.defer_release {
            let opened = self.planes[plane as usize].opened_blocks - opened_before;
            self.collect_on_openings(plane, opened, gc_ops)
        } else {
            self.collect_if_needed(plane, gc_ops)
        }
    }

    fn place_write(&mut self, lpn: u64, plane: u32) -> Result<PhysicalTarget, Error> {
        self.place_write_in(lpn, plane, false)
    }

    /// Place on `plane`'s open block; a block opened for it is the fastest free one when `fast`
    /// (under speed ordering), else the slowest.
    fn place_write_in(
        &mut self,
        lpn: u64,
        plane: u32,
        fast: bool,
    ) -> Result<PhysicalTarget, Error> {
        if let Some(old) = self.map.get(lpn) {
            self.invalidate(old);
        }
        let (block, page) = self.planes[plane as usize]
            .allocate_page_in(lpn as u32, fast)
            .ok_or_else(|| no_free_page(plane))?;
        let ppn = self.ppn_of(plane, block, page);
        self.map.set(lpn, ppn);
        if let Some(shadow) = &mut self.shadow {
            let version = shadow.lpn_version.get(lpn).wrapping_add(1).max(1);
            shadow.lpn_version.set(lpn, version);
            shadow.ppn_version[ppn as usize] = version;
        }
        Ok(self.target_of(ppn))
    }

    /// Invalidate physical page `ppn` (its logical page now lives elsewhere), materialising
    /// its block's reverse map first when the block holds fill pages as a formula.
    #[inline]
    fn invalidate(&mut self, ppn: u32) {
        let (p, b, pg) = self.split_ppn(ppn);
        if !self.planes[p as usize].invalidate(b, pg) {
            self.invalidate_filled(p, b, pg);
        }
    }

    /// Least-loaded chip (ties: round-robin from the last chip chosen), then round-robin over
    /// its planes.
    fn dynamic_plane(&mut self, chip_load: &[u32]) -> u32 {
        let chips = self.geometry.chips();
        let mut best = self.next_chip % chips;
        for step in 0..chips {
            let chip = (self.next_chip + step) % chips;
            if chip_load[chip as usize] < chip_load[best as usize] {
                best = chip;
            }
        }
        self.next_chip = (best + 1) % chips;
        let planes_per_chip = self.geometry.dies_per_chip * self.geometry.planes_per_die;
        let cursor = &mut self.next_plane_in_chip[best as usize];
        let in_chip = *cursor;
        *cursor = (*cursor + 1) % planes_per_chip;
        // Alternate dies first, then planes, so consecutive writes spread over dies.
        let die = in_chip % self.geometry.dies_per_chip;
        let plane = in_chip / self.geometry.dies_per_chip;
        self.geometry.plane_index(best, die, plane)
    }

    /// Greedy GC inside `plane` until it has at least the threshold of free blocks again.
    fn collect_if_needed(&mut self, plane: u32, gc_ops: &mut Vec<GcOp>) -> Result<(), Error> {
        while self.below_gc_threshold(plane) {
            let Some(victim) = self.planes[plane as usize].greedy_victim() else {
                return Ok(()); // nothing reclaimable yet: every full block is entirely valid
            };
            self.planes[plane as usize].begin_moving(victim);
            self.move_valid_pages(plane, victim, gc_ops)?;
            self.release_block(plane, victim);
            let erase_target = self.target_of(self.ppn_of(plane, victim, 0));
            gc_ops.push(GcOp::Erase {
                target: erase_target,
            });
        }
        Ok(())
    }

    /// Whether `plane` is below the garbage-collection threshold (`ftl.gc_trigger`).
    #[inline]
    fn below_gc_threshold(&self, plane: u32) -> bool {
        let p = &self.planes[plane as usize];
        match self.gc_threshold_pages {
            None => p.free_blocks() < self.gc_threshold_blocks,
            Some(pages) => p.free_pages() < pages,
        }
    }

    /// Deferred release: `checks` blocks were just opened in `plane`. For each (and for each
    /// block the moves open in turn), when the plane's free pool is below the GC threshold and
    /// fewer than `ftl.gc_max_victims_per_plane` victims are under collection, start one greedy
    /// victim: move its valid pages now, erase it, and keep it out of the pool until
    /// [`Ftl::erase_done`] (MQSim's GC_and_WL_Unit_Page_Level::Check_gc_required, called when
    /// a write frontier takes a free block).
    fn collect_on_openings(
        &mut self,
        plane: u32,
        mut checks: u64,
        gc_ops: &mut Vec<GcOp>,
    ) -> Result<(), Error> {
        while checks > 0 {
            checks -= 1;
            let p = &self.planes[plane as usize];
            if p.free_blocks() >= self.gc_threshold_blocks
                || p.collecting >= self.gc_max_victims_per_plane
            {
                continue;
            }
            let Some(victim) = p.greedy_victim() else {
                continue; // every full block is entirely valid
            };
            let opened_before = p.opened_blocks;
            self.planes[plane as usize].begin_collection(victim);
            self.move_valid_pages(plane, victim, gc_ops)?;
            checks += self.planes[plane as usize].opened_blocks - opened_before;
            let erase_target = self.target_of(self.ppn_of(plane, victim, 0));
            gc_ops.push(GcOp::Erase {
                target: erase_target,
            });
        }
        Ok(())
    }

    /// Move every valid page of `victim` (one GC run): remap, and ask for a copyback each.
    fn move_valid_pages(
        &mut self,
        plane: u32,
        victim: u32,
        gc_ops: &mut Vec<GcOp>,
    ) -> Result<(), Error> {
        self.counters.gc_runs += 1;
        // (page in block, logical page) of each valid page, in a buffer kept between runs.
        let mut valid = std::mem::take(&mut self.gc_moves);
        valid.clear();
        if let Some(reverse) = &self.planes[plane as usize].blocks[victim as usize].reverse {
            valid.extend(
                reverse
                    .iter()
                    .enumerate()
                    .filter(|(_, lpn)| **lpn != INVALID)
                    .map(|(page, lpn)| (page as u32, *lpn)),
            );
        }
        for (i, &(page, lpn)) in valid.iter().enumerate() {
            // Each move updates the map entry of a random logical page: start loading the one
            // a few moves ahead (a hint; the victim's own pages are in cache already).
            if let Some(&(_, ahead)) = valid.get(i + MOVES_AHEAD) {
                self.map.prefetch(ahead as u64);
            }
            let from = self.ppn_of(plane, victim, page);
            if self.place_on_read && self.defer_release {
                // Placed when its read ends (`place_moved_page`).
                gc_ops.push(GcOp::MoveRead {
                    from: self.target_of(from),
                });
                continue;
            }
            let version = self.shadow.as_ref().map(|s| s.ppn_version[from as usize]);
            let target = if self.gc_separate_write_block {
                self.place_gc_write(lpn as u64, plane)?
            } else {
                self.place_write(lpn as u64, plane)?
            };
            if let (Some(shadow), Some(version)) = (&mut self.shadow, version) {
                // A move keeps the data: undo the version bump place_write made.
                shadow.lpn_version.set(lpn as u64, version);
                shadow.ppn_version[target.ppn as usize] = version;
            }
            self.counters.gc_pages_moved += 1;
            gc_ops.push(GcOp::Copyback {
                target,
                from_ppn: from,
            });
        }
        self.gc_moves = valid;
        Ok(())
    }

    /// The GC read of victim page `from_ppn` ended (`GcOp::MoveRead`): if the page still holds
    /// its logical page, place that page on its plane's GC open block (or the host one without
    /// `ftl.gc_separate_write_block`), remap it and return where its program goes; garbage
    /// collection that an opened block starts is appended to `gc_ops`. `None`: a host write
    /// superseded the page while it waited, so nothing moves.
    pub fn place_moved_page(
        &mut self,
        from_ppn: u32,
        gc_ops: &mut Vec<GcOp>,
    ) -> Result<Option<PhysicalTarget>, Error> {
        let (plane, block, page) = self.split_ppn(from_ppn);
        let lpn = match &self.planes[plane as usize].blocks[block as usize].reverse {
            Some(reverse) if reverse[page as usize] != INVALID => reverse[page as usize],
            _ => return Ok(None),
        };
        let version = self
            .shadow
            .as_ref()
            .map(|s| s.ppn_version[from_ppn as usize]);
        let opened_before = self.planes[plane as usize].opened_blocks;
        let target = if self.gc_separate_write_block {
            self.place_gc_write(lpn as u64, plane)?
        } else {
            self.place_write(lpn as u64, plane)?
        };
        if let (Some(shadow), Some(version)) = (&mut self.shadow, version) {
            // A move keeps the data.
            shadow.lpn_version.set(lpn as u64, version);
            shadow.ppn_version[target.ppn as usize] = version;
        }
        self.counters.gc_pages_moved += 1;
        let opened = self.planes[plane as usize].opened_blocks - opened_before;
        self.collect_on_openings(plane, opened, gc_ops)?;
        Ok(Some(target))
    }

    /// Place a page moved by GC on `plane`'s GC open block (`ftl.gc_separate_write_block`).
    fn place_gc_write(&mut self, lpn: u64, plane: u32) -> Result<PhysicalTarget, Error> {
        if let Some(old) = self.map.get(lpn) {
            self.invalidate(old);
        }
        let (block, page) = self.planes[plane as usize]
            .allocate_gc_page(lpn as u32)
            .ok_or_else(|| {
                Error::Workload(format!(
                    "plane {plane} has no free page left for garbage collection: the logical data exceeds what over-provisioning and garbage collection can hold (with ftl.gc_block_release = \"erase_done\", victims under collection keep their blocks: a lower ftl.gc_max_victims_per_plane leaves more)"
                ))
            })?;
        let ppn = self.ppn_of(plane, block, page);
        self.map.set(lpn, ppn);
        Ok(self.target_of(ppn))
    }

    /// Erase `victim` (all its pages moved) and return it to the free pool.
    fn release_block(&mut self, plane: u32, victim: u32) {
        match &mut self.variation {
            None => self.planes[plane as usize].erase(victim),
            Some(variation) => {
                // Write-speed detection: the erase adds a P/E cycle; re-file the block at
                // its (possibly slower) speed.
                let global =
                    plane as usize * self.geometry.blocks_per_plane as usize + victim as usize;
                let erases = self.planes[plane as usize].blocks[victim as usize].erase_count;
                variation.on_erase(global, erases + 1);
                let key = variation.speed_key(global);
                self.planes[plane as usize].erase_with_speed(victim, key);
            }
        }
        self.counters.erases += 1;
    }

    /// SOS queue-size levelling: give the queued (not yet programmed) write of `lpn`, which
    /// reserved `old_ppn`, a new page on die `die` (global index) of `chip` instead, and remap.
    /// The old reservation is released (invalidated). Returns `None`, changing nothing, when
    /// `old_ppn` is no longer the page `lpn` maps to (a newer write or GC superseded it) or when
    /// the chosen plane would have to open a block while at its GC threshold (a move must not
    /// start garbage collection).
    pub fn relocate_queued_write(
        &mut self,
        lpn: u32,
        old_ppn: u32,
        chip: u32,
        die: u32,
    ) -> Option<PhysicalTarget> {
        if self.map.get(lpn as u64) != Some(old_ppn) {
            return None;
        }
        let dies = self.geometry.dies_per_chip;
        let cursor = &mut self.next_plane_in_chip[chip as usize];
        let plane_in_die = (*cursor / dies) % self.geometry.planes_per_die;
        *cursor = (*cursor + dies) % (dies * self.geometry.planes_per_die);
        let plane = self
            .geometry
            .plane_index(chip, die - chip * dies, plane_in_die);
        let target_plane = &self.planes[plane as usize];
        // Opening a block at the threshold would need garbage collection first.
        if target_plane.active.is_none() && target_plane.free_blocks() <= self.gc_threshold_blocks {
            return None;
        }
        let version = self
            .shadow
            .as_ref()
            .map(|s| s.ppn_version[old_ppn as usize]);
        let target = self.place_write(lpn as u64, plane).ok()?;
        if let (Some(shadow), Some(version)) = (&mut self.shadow, version) {
            // A move keeps the data: undo the version bump place_write made.
            shadow.lpn_version.set(lpn as u64, version);
            shadow.ppn_version[target.ppn as usize] = version;
            if self.break_relocation_for_test {
                shadow.ppn_version[target.ppn as usize] = version.wrapping_add(1);
            }
        }
        Some(target)
    }

    /// Page index inside its block of physical page `ppn`.
    pub fn page_in_block(&self, ppn: u32) -> u32 {
        ppn % self.geometry.pages_per_block
    }

    /// Test hook: make every later relocation record wrong data at its new page, so the
    /// integrity check must flag reads of moved pages.
    #[doc(hidden)]
    pub fn break_relocation_for_test(&mut self) {
        self.break_relocation_for_test = true;
    }

    /// Test hook: corrupt the shadow version of `lpn` so a later read must be flagged.
    #[doc(hidden)]
    pub fn corrupt_shadow_for_test(&mut self, lpn: u64) {
        if let Some(shadow) = &mut self.shadow {
            let v = shadow.lpn_version.get(lpn);
            shadow.lpn_version.set(lpn, v.wrapping_add(7));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Level;

    fn small() -> (Geometry, FtlConfig) {
        let g = Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 16,
            pages_per_block: 8,
            page_bytes: 4096,
        };
        let c = FtlConfig::plain(0.25, 0.125);
        (g, c)
    }

    #[test]
    fn overwrites_trigger_gc_and_reads_see_latest_version() {
        let (g, c) = small();
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
        let mut ftl = Ftl::new(&g, &c, map, true);
        let logical = ftl.logical_pages();
        let load = vec![0; 2];
        let mut ops = Vec::new();
        for round in 0..20u64 {
            for lpn in 0..logical {
                if (lpn + round) % 3 != 0 {
                    ftl.write(lpn, &load, &mut ops).unwrap();
                }
            }
        }
        for lpn in 0..logical {
            ftl.read(lpn).unwrap();
        }
        assert!(ftl.counters().gc_runs > 0, "GC never ran");
        assert!(ops.iter().any(|op| matches!(op, GcOp::Erase { .. })));
        assert_eq!(ftl.integrity_violations(), Some(0));
        // Static allocation keeps each logical page on its static chip, through GC.
        for lpn in 0..logical {
            assert_eq!(ftl.read(lpn).unwrap().chip, (lpn % 2) as u32);
        }
        // The check can fail: corrupting the shadow must be detected.
        ftl.corrupt_shadow_for_test(3);
        ftl.read(3).unwrap();
        assert_eq!(ftl.integrity_violations(), Some(1));
    }

    /// Hand-derived case for `ftl.gc_block_release = "erase_done"` with a separate GC block.
    /// Plane 0 (even logical pages) of `small()`: 16 blocks of 8 pages, GC threshold 2 free
    /// blocks. Writing its 96 logical pages fills blocks 0-11 (4 free). Overwriting the first
    /// 4 pages of blocks 0-3 fills blocks 12 and 13 (2 free), leaving blocks 0-3 with 4 valid
    /// pages each. The next write opens block 14 (1 free < 2): one victim, block 0.
    /// - `translation`: its 4 pages move into the open block 14 and block 0 is free at once:
    ///   1 GC run, 2 free blocks.
    /// - `erase_done`: its 4 pages move into a GC block, which opens block 15 (0 free): that
    ///   opening starts a second victim, block 1, whose 4 pages fill block 15. Block 0 and 1 stay
    ///   out of the pool: 2 runs, 0 free, 2 under collection, 8 copybacks, 2 erases asked. When
    ///   block 0's erase completes (1 free, still below the stall level 2) one more victim
    ///   starts, block 2; its moves open block 0 again (0 free), which starts block 3, whose
    ///   pages fit in that block: 4 runs, 0 free, 3 under collection.
    #[test]
    fn deferred_release_collects_ahead_by_hand() {
        let run = |release: GcBlockRelease| {
            let (g, mut c) = small();
            c.gc_block_release = release;
            if release == GcBlockRelease::EraseDone {
                c.gc_max_victims_per_plane = 10;
                c.write_stall_below_free_blocks = 2;
                c.gc_separate_write_block = true;
            }
            let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
            let mut ftl = Ftl::new(&g, &c, map, true);
            ftl.start_deferred_release();
            let mut ops = Vec::new();
            for k in 0..96 {
                ftl.write(2 * k, &[0, 0], &mut ops).unwrap();
            }
            assert_eq!(ftl.planes[0].free_blocks(), 4);
            for block in 0..4 {
                for page in 0..4 {
                    ftl.write(2 * (8 * block + page), &[0, 0], &mut ops)
                        .unwrap();
                }
            }
            assert_eq!(ftl.planes[0].free_blocks(), 2);
            assert_eq!(ftl.counters().gc_runs, 0);
            ftl.write(2 * 8 * 4, &[0, 0], &mut ops).unwrap();
            (ftl, ops)
        };
        let (ftl, _) = run(GcBlockRelease::Translation);
        assert_eq!(ftl.counters().gc_runs, 1);
        assert_eq!(ftl.planes[0].free_blocks(), 2);

        let (mut ftl, mut ops) = run(GcBlockRelease::EraseDone);
        assert_eq!(ftl.counters().gc_runs, 2);
        assert_eq!(ftl.planes[0].free_blocks(), 0);
        assert_eq!(ftl.planes[0].collecting, 2);
        let copybacks = ops
            .iter()
            .filter(|op| matches!(op, GcOp::Copyback { .. }))
            .count();
        let erases: Vec<u32> = ops
            .iter()
            .filter_map(|op| match op {
                GcOp::Erase { target } => Some(target.ppn),
                _ => None,
            })
            .collect();
        assert_eq!(copybacks, 8);
        assert_eq!(erases, [0, 8], "blocks 0 and 1 of plane 0");
        assert_eq!(ftl.write_stall_plane(0), Some(0));
        assert_eq!(ftl.write_stall_plane(1), None, "plane 1 has free blocks");
        assert_eq!(ftl.erase_done(0), 0);
        assert_eq!(ftl.planes[0].free_blocks(), 1);
        ops.clear();
        ftl.gc_after_erase(0, &mut ops).unwrap();
        assert_eq!(ftl.counters().gc_runs, 4);
        assert_eq!(ftl.planes[0].free_blocks(), 0);
        assert_eq!(ftl.planes[0].collecting, 3);
        for lpn in 0..ftl.logical_pages() {
            ftl.read(lpn).unwrap();
        }
        assert_eq!(ftl.integrity_violations(), Some(0));
    }

    /// `ftl.gc_page_move = "read_and_program"` under the deferred release, on the case above:
    /// the victim (block 0, logical pages 8, 10, 12, 14 valid) is chosen, but its pages are only
    /// asked to be read (4 `MoveRead`s, nothing placed, nothing opened: 1 run, 1 free block
    /// left). A host write of page 10 supersedes its copy before its read ends, so that read
    /// places nothing; the read of page 8 places it on a GC block, which opens the last free
    /// block (0 free) and so starts the next victim (block 1) as at the choice above; page 8
    /// now reads its moved copy.
    #[test]
    fn moved_pages_are_placed_when_their_reads_end() {
        let (g, mut c) = small();
        c.gc_block_release = GcBlockRelease::EraseDone;
        c.gc_max_victims_per_plane = 10;
        c.write_stall_below_free_blocks = 2;
        c.gc_separate_write_block = true;
        c.gc_page_move = GcPageMove::ReadAndProgram;
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
        let mut ftl = Ftl::new(&g, &c, map, true);
        ftl.start_deferred_release();
        let mut ops = Vec::new();
        for k in 0..96 {
            ftl.write(2 * k, &[0, 0], &mut ops).unwrap();
        }
        for block in 0..4 {
            for page in 0..4 {
                ftl.write(2 * (8 * block + page), &[0, 0], &mut ops)
                    .unwrap();
            }
        }
        ops.clear();
        ftl.write(2 * 8 * 4, &[0, 0], &mut ops).unwrap();
        let reads: Vec<u32> = ops
            .iter()
            .filter_map(|op| match op {
                GcOp::MoveRead { from } => Some(from.ppn),
                _ => None,
            })
            .collect();
        assert_eq!(reads, [4, 5, 6, 7], "block 0's valid pages");
        assert_eq!(
            (ftl.counters().gc_runs, ftl.counters().gc_pages_moved),
            (1, 0)
        );
        assert_eq!(ftl.planes[0].free_blocks(), 1);
        // Page 10 (block 0, page 5) is written again before its read ends.
        ftl.write(10, &[0, 0], &mut ops).unwrap();
        ops.clear();
        assert_eq!(ftl.place_moved_page(5, &mut ops).unwrap(), None);
        let moved = ftl
            .place_moved_page(4, &mut ops)
            .unwrap()
            .expect("page 8 moves");
        assert_eq!(ftl.mapped_target(8), Some(moved));
        assert_eq!(ftl.counters().gc_pages_moved, 1);
        assert_eq!(ftl.planes[0].free_blocks(), 0);
        assert_eq!(
            ftl.counters().gc_runs,
            2,
            "the opened GC block starts block 1"
        );
        assert!(ops
            .iter()
            .any(|op| matches!(op, GcOp::Erase { target } if target.ppn == 8)));
        for lpn in 0..ftl.logical_pages() {
            ftl.read(lpn).unwrap();
        }
        assert_eq!(ftl.integrity_violations(), Some(0));
    }

    /// A reserved block is never opened.
    #[test]
    fn translation_reserved_blocks_leave_the_pool() {
        let (g, mut c) = small();
        c.translation_reserved_blocks_per_plane = 1;
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
        let mut ftl = Ftl::new(&g, &c, map, false);
        assert_eq!(ftl.planes[0].free_blocks(), 15);
        let mut ops = Vec::new();
        for _ in 0..20 {
            for lpn in 0..ftl.logical_pages() {
                ftl.write(lpn, &[0, 0], &mut ops).unwrap();
            }
        }
        assert_eq!(ftl.planes[0].blocks[0].state, BlockState::Reserved);
        assert_eq!(ftl.planes[0].blocks[0].erase_count, 0);
    }

    #[test]
    fn writes_past_capacity_are_errors() {
        let (g, c) = small();
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
        let mut ftl = Ftl::new(&g, &c, map, false);
        let err = ftl
            .write(ftl.logical_pages(), &[0, 0], &mut Vec::new())
            .unwrap_err();
        assert!(
            err.to_string().contains("past the simulated capacity"),
            "{err}"
        );
    }

    #[test]
    fn wear_levelling_opens_least_erased_block() {
        let (g, c) = small();
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
        let mut ftl = Ftl::new(&g, &c, map, false);
        let mut ops = Vec::new();
        for _ in 0..200 {
            for lpn in 0..8 {
                ftl.write(lpn * 2, &[0, 0], &mut ops).unwrap();
            }
        }
        let counts: Vec<u32> = ftl.planes[0].blocks.iter().map(|b| b.erase_count).collect();
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(max - min <= 2, "erase counts spread too far: {counts:?}");
    }
}
