//! Cached mapping table (CMT): a demand-based FTL in the manner of DFTL and MQSim, where only
//! `ftl.mapping_cache_bytes` of the page map sit in controller DRAM and the rest lives in
//! translation pages on flash.
//!
//! The FTL's own page map stays the truth about where data is; this cache only decides which
//! translations cost a flash access, and queues the data operations that must wait for one.
//! Choices (docs/models/ssd-model.md, "Cached mapping table"):
//!
//! - One cache entry per logical page, LRU over entries. Entry and translation-page sizes follow
//!   MQSim: a cached entry holds LPN, PPN and a sector bitmap, `ceil((2 log2(physical pages) +
//!   sectors per page) / 8)` bytes; an entry in a translation page holds PPN and bitmap,
//!   `ceil((log2(physical pages) + sectors per page) / 8)` bytes, so a translation page holds
//!   `page_bytes / that` entries.
//! - Translation page `t` lives on the plane the static striping gives logical page `t`, so
//!   translation pages spread over all chips. They take no room in the data planes and are never
//!   garbage-collected (MQSim keeps them in the data blocks).
//! - A miss (read or write) reads one 512-byte sector of the translation page; the data
//!   operation waits for that read. A miss on a translation page that is already being read
//!   waits for the same read (no second flash read). A miss on a page never written to flash
//!   (no logical page of it mapped at start, none written back since; under
//!   `ftl.translation_pages_on_flash = "all"` every page is on flash from the start), or whose
//!   write-back is still in flight (the controller holds its content), needs no read.
//! - Evicting a dirty entry writes its translation page back: a read of the page (one sector:
//!   the unchanged entries to merge; skipped if the page was never on flash or is being read
//!   already) and a program of the whole page. Every cached dirty entry of that page becomes
//!   clean with it (batch update). Requests never wait for write-backs.

use serde::{Deserialize, Serialize};

use super::slot_index::{prefetch, SlotIndex};
use crate::geometry::{Geometry, StaticMap};
use crate::int_map::IntMap;
use crate::transaction::Transaction;

/// Bytes a translation-page read moves over the channel (one sector, as MQSim).
pub const MAPPING_READ_BYTES: u32 = 512;

/// Which translation pages are on flash when the run starts (`ftl.translation_pages_on_flash`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TranslationPagesOnFlash {
    /// Those holding the entry of a logical page mapped when the run starts (after
    /// preconditioning); a miss on any other page needs no flash read until it is written back.
    #[default]
    MappedAtStart,
    /// Every translation page: MQSim's `Store_mapping_table_on_flash_at_start` writes the whole
    /// table before the run, mapped or not, so every miss reads flash.
    All,
}

impl TranslationPagesOnFlash {
    pub fn is_default(&self) -> bool {
        *self == TranslationPagesOnFlash::MappedAtStart
    }
}

/// What becomes of the program of a translation-page write-back (`ftl.mapping_writebacks`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MappingWritebacks {
    /// It is queued and programmed like any flash operation; the controller holds the page's
    /// content until the program ends.
    #[default]
    Programmed,
    /// MQSim's behaviour at commit 7ec40e3, a defect kept only to compare with it: the program is
    /// submitted but no transaction scheduler ever serves MQSim's mapping-write queue, so it never
    /// reaches the flash and the page stays "departing" (held by the controller) for the rest of
    /// the run: every later miss on it needs no flash read. The merge read still runs.
    NeverProgrammed,
}

impl MappingWritebacks {
    pub fn is_default(&self) -> bool {
        *self == MappingWritebacks::Programmed
    }
}

/// The platform rules of a mapping cache (set from `[ftl]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CmtRules {
    pub on_flash_at_start: TranslationPagesOnFlash,
    pub writebacks: MappingWritebacks,
}
const NONE: u32 = u32::MAX;
const SECTOR_BYTES: u32 = 512;

/// One cached translation, in an LRU list threaded through the slot array.
#[derive(Debug, Clone, Copy)]
struct Slot {
    lpn: u64,
    /// Toward the most recently used end.
    newer: u32,
    /// Toward the least recently used end.
    older: u32,
    /// Dirty iff equal to `write_backs[tpage] + 1` (0 = clean); a write-back of the page bumps
    /// its counter and so cleans all its entries at once.
    dirty_mark: u32,
}

/// A data operation waiting for a translation-page read.
#[derive(Debug, Clone, Copy)]
struct Waiter {
    txn: Transaction,
    next: u32,
}

/// A flash operation on a translation page the simulation must queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MappingOp {
    Read { tpage: u32 },
    Program { tpage: u32 },
}

/// What became of a data operation offered to [`MappingCache::access`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The translation is known: queue the operation now.
    Ready,
    /// The operation waits inside the cache for a translation-page read; it comes back from
    /// [`MappingCache::read_done`].
    Parked,
}

/// Counters of the cache, all since the start of the run (the simulation takes differences
/// over its measured window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CmtCounters {
    /// Page translations whose entry was cached.
    pub hits: u64,
    /// Page translations whose entry was not cached.
    pub misses: u64,
    /// Flash reads of translation pages (demand reads on misses and write-back merge reads).
    pub mapping_reads: u64,
    /// Programs of translation pages submitted (write-backs of dirty evicted entries; under
    /// `never_programmed` none of them reaches the flash).
    pub mapping_programs: u64,
}

pub struct MappingCache {
    capacity_entries: u32,
    entry_bytes: u32,
    entries_per_tpage: u64,
    slots: Vec<Slot>,
    /// Slot of each cached logical page.
    index: SlotIndex,
    most_recent: u32,
    least_recent: u32,
    /// Write-backs so far per translation page.
    write_backs: Vec<u32>,
    /// Whether each translation page exists on flash.
    on_flash: Vec<bool>,
    /// Per translation page, while it is being read: the first and last data operation
    /// waiting for it (`NONE` for none yet); `None` when it is not being read. Dense, as
    /// `on_flash` is: a look-up on every access, cheaper than hashing.
    reading: Vec<Option<(u32, u32)>>,
    /// Translation pages being programmed: how many programs are in flight.
    departing: IntMap<u32, u32>,
    waiters: Vec<Waiter>,
    free_waiters: Vec<u32>,
    /// (chip, global die) of every plane.
    plane_targets: Vec<(u32, u32)>,
    static_map: StaticMap,
    writebacks: MappingWritebacks,
    counters: CmtCounters,
}

impl MappingCache {
    /// A cache of `capacity_bytes` for `logical_pages` pages of `geometry`.
    /// `mapped_groups(entries per translation page)` says for each translation page whether
    /// it holds the entry of a logical page mapped when the run starts (after
    /// preconditioning): those are on flash, and under `rules.on_flash_at_start` = `All`
    /// every other one too.
    pub fn new(
        geometry: &Geometry,
        static_map: StaticMap,
        capacity_bytes: u64,
        logical_pages: u64,
        mapped_groups: impl FnOnce(u64) -> Vec<bool>,
        rules: CmtRules,
    ) -> Self {
        let (entry_bytes, entries_per_tpage) = entry_sizes(geometry);
        let capacity_entries =
            (capacity_bytes / u64::from(entry_bytes)).clamp(1, u32::MAX as u64 - 1) as u32;
        let tpages = logical_pages.div_ceil(entries_per_tpage) as usize;
        let on_flash = match rules.on_flash_at_start {
            TranslationPagesOnFlash::MappedAtStart => mapped_groups(entries_per_tpage),
            TranslationPagesOnFlash::All => vec![true; tpages],
        };
        assert_eq!(on_flash.len(), tpages, "one flag per translation page");
        let reserve = capacity_entries.min(1 << 24) as usize;
        MappingCache {
            capacity_entries,
            entry_bytes,
            entries_per_tpage,
            slots: Vec::with_capacity(reserve),
            // Logical pages fit in u32, as physical pages do (checked by the geometry).
            index: SlotIndex::new(reserve.min(logical_pages as usize)),
            most_recent: NONE,
            least_recent: NONE,
            write_backs: vec![0; tpages],
            on_flash,
            reading: vec![None; tpages],
            departing: IntMap::default(),
            waiters: Vec::new(),
            free_waiters: Vec::new(),
            plane_targets: (0..geometry.planes())
                .map(|plane| {
                    let (chip, die, _) = geometry.plane_location(plane);
                    (chip, chip * geometry.dies_per_chip + die)
                })
                .collect(),
            static_map,
            writebacks: rules.writebacks,
            counters: CmtCounters::default(),
        }
    }

    /// Start loading what translating `lpn` will touch first (a performance hint).
    #[inline]
    pub fn prefetch(&self, lpn: u64) {
        self.index.prefetch(lpn as u32);
    }

    pub fn counters(&self) -> CmtCounters {
        self.counters
    }

    pub fn capacity_entries(&self) -> u32 {
        self.capacity_entries
    }

    pub fn entry_bytes(&self) -> u32 {
        self.entry_bytes
    }

    pub fn entries_per_translation_page(&self) -> u64 {
        self.entries_per_tpage
    }

    /// (chip, global die, global plane) holding translation page `tpage`.
    pub fn location(&self, tpage: u32) -> (u32, u32, u32) {
        let plane = self.static_map.plane_of(u64::from(tpage));
        let (chip, die) = self.plane_targets[plane as usize];
        (chip, die, plane)
    }

    /// Translate logical page `lpn` for data operation `txn` (`write`: the entry becomes dirty).
    /// Flash operations on translation pages this needs are appended to `ops`.
    pub fn access(
        &mut self,
        lpn: u64,
        write: bool,
        txn: Transaction,
        ops: &mut Vec<MappingOp>,
    ) -> Access {
        let tpage = (lpn / self.entries_per_tpage) as u32;
        let slot = match self.index.get(lpn as u32) {
            Some(slot) => {
                self.counters.hits += 1;
                self.unlink(slot);
                self.push_most_recent(slot);
                slot
            }
            None => {
                self.counters.misses += 1;
                let slot = self.insert(lpn, ops);
                if self.reading[tpage as usize].is_none()
                    && self.on_flash[tpage as usize]
                    && !self.departing.contains_key(&tpage)
                {
                    self.counters.mapping_reads += 1;
                    self.reading[tpage as usize] = Some((NONE, NONE));
                    ops.push(MappingOp::Read { tpage });
                }
                slot
            }
        };
        if write {
            self.slots[slot as usize].dirty_mark = self.write_backs[tpage as usize] + 1;
        }
        // A hit on an entry whose page is still arriving waits for it too.
        match &mut self.reading[tpage as usize] {
            Some(queue) => {
                let waiter = Waiter { txn, next: NONE };
                let id = match self.free_waiters.pop() {
                    Some(id) => {
                        self.waiters[id as usize] = waiter;
                        id
                    }
                    None => {
                        self.waiters.push(waiter);
                        (self.waiters.len() - 1) as u32
                    }
                };
                if queue.1 == NONE {
                    queue.0 = id;
                } else {
                    self.waiters[queue.1 as usize].next = id;
                }
                queue.1 = id;
                Access::Parked
            }
            None => Access::Ready,
        }
    }

    /// The read of `tpage` finished: the data operations that waited for it go to `released`
    /// (in the order they arrived).
    pub fn read_done(&mut self, tpage: u32, released: &mut Vec<Transaction>) {
        let Some((mut id, _)) = self.reading[tpage as usize].take() else {
            return; // a write-back merge read nobody waited for
        };
        while id != NONE {
            let waiter = self.waiters[id as usize];
            released.push(waiter.txn);
            self.free_waiters.push(id);
            id = waiter.next;
        }
    }

    /// The program of `tpage` finished.
    pub fn program_done(&mut self, tpage: u32) {
        if let Some(count) = self.departing.get_mut(&tpage) {
            *count -= 1;
            if *count == 0 {
                self.departing.remove(&tpage);
            }
        }
    }

    fn is_dirty(&self, slot: u32) -> bool {
        let s = &self.slots[slot as usize];
        let tpage = (s.lpn / self.entries_per_tpage) as usize;
        s.dirty_mark != 0 && s.dirty_mark == self.write_backs[tpage] + 1
    }

    /// Cache `lpn` as most recent, evicting the least recent entry if full.
    fn insert(&mut self, lpn: u64, ops: &mut Vec<MappingOp>) -> u32 {
        let slot = if self.slots.len() < self.capacity_entries as usize {
            self.slots.push(Slot {
                lpn,
                newer: NONE,
                older: NONE,
                dirty_mark: 0,
            });
            (self.slots.len() - 1) as u32
        } else {
            let victim = self.least_recent;
            if self.is_dirty(victim) {
                self.write_back(self.slots[victim as usize].lpn, ops);
            }
            self.unlink(victim);
            self.index.remove(self.slots[victim as usize].lpn as u32);
            self.prefetch_next_victims();
            self.slots[victim as usize].lpn = lpn;
            self.slots[victim as usize].dirty_mark = 0;
            victim
        };
        self.index.insert(lpn as u32, slot);
        self.push_most_recent(slot);
        slot
    }

    /// Evictions remove the least recent entry from the index, a look-up that misses the CPU
    /// cache: start loading the next victim's index entry, and the slot of the one after it
    /// (read at the next eviction). A hint only: a hit on them changes nothing but its use.
    #[inline]
    fn prefetch_next_victims(&self) {
        let Some(next) = self.slots.get(self.least_recent as usize) else {
            return;
        };
        self.index.prefetch(next.lpn as u32);
        if let Some(after) = self.slots.get(next.newer as usize) {
            prefetch(after);
        }
    }

    fn write_back(&mut self, victim_lpn: u64, ops: &mut Vec<MappingOp>) {
        let tpage = (victim_lpn / self.entries_per_tpage) as u32;
        if self.on_flash[tpage as usize] && self.reading[tpage as usize].is_none() {
            self.counters.mapping_reads += 1;
            ops.push(MappingOp::Read { tpage });
        }
        self.counters.mapping_programs += 1;
        self.write_backs[tpage as usize] += 1;
        self.on_flash[tpage as usize] = true;
        match self.writebacks {
            MappingWritebacks::Programmed => {
                ops.push(MappingOp::Program { tpage });
                *self.departing.entry(tpage).or_insert(0) += 1;
            }
            // No program: the count never drops back to 0.
            MappingWritebacks::NeverProgrammed => {
                self.departing.insert(tpage, 1);
            }
        }
    }

    fn unlink(&mut self, slot: u32) {
        let Slot { newer, older, .. } = self.slots[slot as usize];
        match newer {
            NONE => self.most_recent = older,
            n => self.slots[n as usize].older = older,
        }
        match older {
            NONE => self.least_recent = newer,
            o => self.slots[o as usize].newer = newer,
        }
    }

    fn push_most_recent(&mut self, slot: u32) {
        let old_head = self.most_recent;
        let s = &mut self.slots[slot as usize];
        s.newer = NONE;
        s.older = old_head;
        match old_head {
            NONE => self.least_recent = slot,
            h => self.slots[h as usize].newer = slot,
        }
        self.most_recent = slot;
    }
}

/// (cached entry bytes, entries per translation page), as MQSim sizes them.
pub fn entry_sizes(geometry: &Geometry) -> (u32, u64) {
    let address_bits = (geometry.physical_pages() as f64).log2();
    let sectors = f64::from(geometry.page_bytes / SECTOR_BYTES);
    let cached = ((2.0 * address_bits + sectors) / 8.0).ceil() as u32;
    let on_flash = ((address_bits + sectors) / 8.0).ceil() as u64;
    (
        cached.max(1),
        (u64::from(geometry.page_bytes) / on_flash.max(1)).max(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Level;
    use crate::transaction::{TxnKind, NO_REQUEST};

    fn mqsim_geometry() -> Geometry {
        Geometry {
            channels: 8,
            chips_per_channel: 4,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 2048,
            pages_per_block: 256,
            page_bytes: 8192,
        }
    }

    #[test]
    fn entry_sizes_follow_mqsim() {
        // 2^26 physical pages, 16 sectors per page: (52 + 16) / 8 -> 9 B cached,
        // (26 + 16) / 8 -> 6 B on flash, 8192 / 6 = 1365 entries per translation page.
        assert_eq!(entry_sizes(&mqsim_geometry()), (9, 1365));
    }

    #[test]
    fn lru_with_waiting_and_batch_write_back() {
        let g = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 64,
            pages_per_block: 64,
            page_bytes: 4096,
        };
        // 4096 physical pages: 12 address bits, 8 sectors -> cached (24 + 8) / 8 = 4 B,
        // on flash (12 + 8) / 8 = 3 B (ceil 2.5), 4096 / 3 = 1365 entries per page.
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
        let mut cmt = MappingCache::new(
            &g,
            map,
            8,
            4096,
            |entries| vec![true; 4096usize.div_ceil(entries as usize)],
            CmtRules::default(),
        );
        assert_eq!((cmt.entry_bytes(), cmt.capacity_entries()), (4, 2));
        let txn = Transaction {
            kind: TxnKind::Read,
            request: NO_REQUEST,
            chip: 0,
            die: 0,
            plane: 0,
            page_in_block: 0,
            bytes: 0,
            program_ns: 0,
            enqueued_ns: 0,
            lpn: crate::transaction::NO_LPN,
            ppn: 0,
            from_chip: 0,
        };
        let mut ops = Vec::new();
        // Miss on page 0 (translation page 0): one read, parked.
        assert_eq!(cmt.access(0, true, txn, &mut ops), Access::Parked);
        assert_eq!(ops, [MappingOp::Read { tpage: 0 }]);
        ops.clear();
        // Miss on page 1 of the same translation page while it is read: no second read.
        assert_eq!(cmt.access(1, false, txn, &mut ops), Access::Parked);
        assert!(ops.is_empty());
        let mut released = Vec::new();
        cmt.read_done(0, &mut released);
        assert_eq!(released.len(), 2);
        // Hit on 0; then page 2000 (translation page 1) evicts the LRU entry, page 1 (clean).
        assert_eq!(cmt.access(0, false, txn, &mut ops), Access::Ready);
        assert_eq!(cmt.access(2000, false, txn, &mut ops), Access::Parked);
        assert_eq!(ops, [MappingOp::Read { tpage: 1 }]);
        ops.clear();
        cmt.read_done(1, &mut Vec::new());
        // Page 3000 evicts page 0, dirty: write back translation page 0 (merge read, program).
        assert_eq!(cmt.access(3000, false, txn, &mut ops), Access::Parked);
        assert_eq!(
            ops,
            [
                MappingOp::Read { tpage: 0 },
                MappingOp::Program { tpage: 0 },
                MappingOp::Read { tpage: 2 }
            ]
        );
        let c = cmt.counters();
        assert_eq!(
            (c.hits, c.misses, c.mapping_reads, c.mapping_programs),
            (1, 4, 4, 1)
        );
        // While translation page 0 is departing, a miss on it needs no read.
        ops.clear();
        cmt.access(5, false, txn, &mut ops);
        assert!(!ops.contains(&MappingOp::Read { tpage: 0 }), "{ops:?}");
    }
}
