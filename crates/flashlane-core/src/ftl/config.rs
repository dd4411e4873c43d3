//! The FTL's config types (`[ftl]`): owned here, assembled into `Config` by the config module.

use serde::{Deserialize, Serialize};

use super::cmt::{MappingWritebacks, TranslationPagesOnFlash};
use super::{BlockChoice, PartialPageWrites, UnwrittenReads};
use crate::geometry::{Geometry, Level, StaticMap};

/// Page allocation policy for writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AllocationConfig {
    /// A logical page always lands on the plane the static order gives (first level fastest).
    Static { order: [Level; 4] },
    /// A write goes to the chip with the fewest queued flash transactions (ties: round-robin),
    /// then round-robin over its dies and planes.
    Dynamic {},
}

/// Flash translation layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Share of physical pages hidden from the host (0.07 = 7 %).
    pub overprovisioning_fraction: f64,
    /// Garbage collection starts in a plane when its free blocks fall below this share of its blocks.
    pub gc_threshold_fraction: f64,
    /// Floor of that threshold, in free blocks per plane: the threshold is
    /// max(ceil(gc_threshold_fraction x blocks_per_plane), gc_threshold_min_blocks). 0 (the
    /// default): no floor. MQSim raises its threshold to 10 (its max_ongoing_gc_reqs_per_plane);
    /// docs/models/ssd-model.md, "Garbage collection threshold".
    #[serde(default, skip_serializing_if = "is_zero_blocks")]
    pub gc_threshold_min_blocks: u32,
    pub allocation: AllocationConfig,
    /// The static order host-side schedulers assume for location vectors, and the order used
    /// for static allocation. Defaults to channel, chip, die, plane.
    #[serde(default = "default_host_visible_order")]
    pub host_visible_order: [Level; 4],
    /// Controller DRAM for the cached mapping table (demand-based FTL, as MQSim's CMT): 0 keeps
    /// the whole page map in DRAM (no mapping flash traffic). See ftl::cmt.
    #[serde(default)]
    pub mapping_cache_bytes: u64,
    /// Consecutive logical pages the static order keeps on one plane before moving on: 1 =
    /// page striping (default); logical pages / planes = a concatenated layout, each plane one
    /// contiguous logical range. Used by static allocation and the host's location vectors.
    #[serde(default = "one_page", skip_serializing_if = "is_one_page")]
    pub stripe_unit_pages: u64,
    /// Which free block a write opens: `in_order` (least-erased first) or
    /// `fastest_for_conflicts` (VIOS; needs `[variation]`, else the same as `in_order`).
    #[serde(default)]
    pub block_choice: BlockChoice,
    /// Where a host read of a logical page never written finds its data: `static_location`
    /// (the default: the page's static location, nothing allocated) or `allocate` (MQSim's
    /// `online_create_entry_for_reads`: the page first gets a physical page at its plane's
    /// write frontier, untimed). docs/models/ssd-model.md, "Reads of unwritten pages".
    #[serde(default, skip_serializing_if = "UnwrittenReads::is_default")]
    pub unwritten_reads: UnwrittenReads,
    /// With `mapping_cache_bytes` > 0, which translation pages are on flash at the start:
    /// `mapped_at_start` (the default: those with an entry mapped after preconditioning) or
    /// `all` (MQSim stores the whole table at start, so every miss reads flash). ftl::cmt.
    #[serde(default, skip_serializing_if = "TranslationPagesOnFlash::is_default")]
    pub translation_pages_on_flash: TranslationPagesOnFlash,
    /// With `mapping_cache_bytes` > 0, what becomes of a translation-page write-back's
    /// program: `programmed` (the default) or `never_programmed`, a defect of MQSim (commit
    /// 7ec40e3) kept only to compare with it: its schedulers never serve the mapping-write
    /// queue, so the page stays held by the controller and later misses on it read nothing.
    /// No preset sets it; docs/validation.md.
    #[serde(default, skip_serializing_if = "MappingWritebacks::is_default")]
    pub mapping_writebacks: MappingWritebacks,
    /// When a garbage-collection victim's block returns to the free pool. `translation` (the
    /// default): at once, when the FTL moves its valid pages (garbage collection takes no
    /// time in the FTL's state). `erase_done`: only when its erase completes on the flash; GC
    /// is then started one victim per opened block and at most `gc_max_victims_per_plane` at a
    /// time, and host writes to a plane wait while its free pool is below
    /// `write_stall_below_free_blocks` (MQSim's asynchronous GC; docs/models/ssd-model.md,
    /// "Asynchronous garbage collection").
    #[serde(default, skip_serializing_if = "GcBlockRelease::is_default")]
    pub gc_block_release: GcBlockRelease,
    /// With `gc_block_release = "erase_done"`: most victims under collection at once per plane
    /// (MQSim's max_ongoing_gc_reqs_per_plane, 10). 0 (the default) with `translation`.
    #[serde(default, skip_serializing_if = "is_zero_blocks")]
    pub gc_max_victims_per_plane: u32,
    /// With `gc_block_release = "erase_done"`: a host write waits while its plane has fewer
    /// free blocks than this (MQSim's Stop_servicing_writes, 10); must be at least 1 there.
    /// 0 (the default) with `translation`.
    #[serde(default, skip_serializing_if = "is_zero_blocks")]
    pub write_stall_below_free_blocks: u32,
    /// Pages moved by garbage collection go to their own open block per plane instead of the
    /// block host writes fill (MQSim's GC write frontier, GC_wf). Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub gc_separate_write_block: bool,
    /// Blocks per plane taken out of the free pool at start and never written: MQSim's
    /// translation-page write frontier (Translation_wf), which flashlane's model does not fill
    /// (its translation pages have no blocks). Default 0.
    #[serde(default, skip_serializing_if = "is_zero_blocks")]
    pub translation_reserved_blocks_per_plane: u32,
    /// A host write that covers only part of a page whose other sectors hold data:
    /// `whole_page` (the default: the page is programmed, nothing read) or
    /// `read_modify_write` (SSDsim: the page's other sectors are read from flash first, and the
    /// program waits for that read; `flash.read_modify_write_reads`) or `update_read` (MQSim:
    /// the same read, while the program waits in the device queue in its place and carries
    /// only the host's sectors). ftl/partial_pages.rs.
    #[serde(default, skip_serializing_if = "PartialPageWrites::is_default")]
    pub partial_page_writes: PartialPageWrites,
    /// How garbage collection moves a valid page: `copyback` (the default: inside the plane,
    /// no data on the channel) or `read_and_program` (MQSim with `Use_Copyback_for_GC` false:
    /// the page is read out over the channel, then programmed in over it when the read ends;
    /// the victim's erase waits for every program).
    #[serde(default, skip_serializing_if = "GcPageMove::is_default")]
    pub gc_page_move: GcPageMove,
    /// What `gc_threshold_fraction` is a share of: `free_blocks` (the default: GC while a
    /// plane's free blocks are below the threshold) or `free_pages` (SSDsim's `get_ppn`: GC
    /// when a program leaves its plane with fewer free pages, the open block's included, than
    /// `gc_threshold_fraction` x pages per plane). Needs `gc_block_release = "translation"`.
    #[serde(default, skip_serializing_if = "GcTrigger::is_default")]
    pub gc_trigger: GcTrigger,
}

/// What the garbage-collection threshold counts (`ftl.gc_trigger`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcTrigger {
    /// Free blocks of the plane.
    #[default]
    FreeBlocks,
    /// Free pages of the plane (SSDsim's `free_page` count, `get_ppn`).
    FreePages,
}

impl GcTrigger {
    pub fn is_default(&self) -> bool {
        *self == GcTrigger::FreeBlocks
    }
}

impl FtlConfig {
    /// The level order of static placement: the allocation's, or under dynamic allocation
    /// the order host-side schedulers assume.
    pub fn static_order(&self) -> [Level; 4] {
        match &self.allocation {
            AllocationConfig::Static { order } => *order,
            AllocationConfig::Dynamic {} => self.host_visible_order,
        }
    }

    /// Static placement of logical pages over `geometry`'s planes.
    pub fn static_map(&self, geometry: &Geometry) -> StaticMap {
        StaticMap::new(geometry, self.static_order()).with_stripe_unit_pages(self.stripe_unit_pages)
    }
}

/// How garbage collection moves a valid page (`ftl.gc_page_move`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcPageMove {
    /// A copyback inside the plane: read command, tR, program command, tPROG, one operation.
    #[default]
    Copyback,
    /// A read to the controller (command, tR, the page out over the channel), then, queued when
    /// the read ends, a program (the page in over the channel, tPROG): two operations, each
    /// scheduled and paired into multi-plane commands like host ones (MQSim's
    /// `GC_and_WL_Unit_Page_Level::Check_gc_required` with `Use_Copyback_for_GC` false and
    /// `GC_and_WL_Unit_Base::handle_transaction_serviced_signal_from_PHY`).
    ReadAndProgram,
}

impl GcPageMove {
    fn is_default(&self) -> bool {
        *self == GcPageMove::Copyback
    }
}

/// When a garbage-collection victim's block returns to the free pool (`ftl.gc_block_release`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcBlockRelease {
    /// When the FTL moves its pages (GC takes no time in the FTL's state).
    #[default]
    Translation,
    /// When its erase completes on the flash (MQSim).
    EraseDone,
}

impl GcBlockRelease {
    fn is_default(&self) -> bool {
        *self == GcBlockRelease::Translation
    }
}

#[cfg(test)]
impl FtlConfig {
    /// Static channel, chip, die, plane striping with every optional rule at its default: the
    /// small drives of unit tests.
    pub(crate) fn plain(overprovisioning_fraction: f64, gc_threshold_fraction: f64) -> Self {
        let order = default_host_visible_order();
        FtlConfig {
            overprovisioning_fraction,
            gc_threshold_fraction,
            gc_threshold_min_blocks: 0,
            allocation: AllocationConfig::Static { order },
            host_visible_order: order,
            mapping_cache_bytes: 0,
            stripe_unit_pages: 1,
            block_choice: Default::default(),
            unwritten_reads: Default::default(),
            translation_pages_on_flash: Default::default(),
            mapping_writebacks: Default::default(),
            gc_block_release: Default::default(),
            gc_max_victims_per_plane: 0,
            write_stall_below_free_blocks: 0,
            gc_separate_write_block: false,
            translation_reserved_blocks_per_plane: 0,
            partial_page_writes: Default::default(),
            gc_page_move: Default::default(),
            gc_trigger: Default::default(),
        }
    }
}

fn is_zero_blocks(blocks: &u32) -> bool {
    *blocks == 0
}

fn one_page() -> u64 {
    1
}
fn is_one_page(pages: &u64) -> bool {
    *pages == 1
}

fn default_host_visible_order() -> [Level; 4] {
    [Level::Channel, Level::Chip, Level::Die, Level::Plane]
}

fn is_false(b: &bool) -> bool {
    !*b
}
