//! Which sectors of a logical page hold data, for read-modify-write of partial-page writes
//! (`ftl.partial_page_writes = "read_modify_write"`, SSDsim's rule, or `"update_read"`,
//! MQSim's).
//!
//! SSDsim keeps a sector bitmap per logical page (`map_entry[lpn].state`). A write sub-request
//! whose sectors do not cover every sector that holds data first reads the others from flash
//! (`flash.c: allocate_location`, the `update` sub-request, counted in `update_read_count`),
//! and the program waits for that read (`services_2_write` skips a write whose `update` has not
//! completed). Here only pages that hold *some but not all* sectors are kept in a table; a page
//! absent from it holds every sector if it is mapped and none if it is not.

use crate::int_map::IntMap;

use serde::{Deserialize, Serialize};

/// Bytes per sector (the 512-byte sector of block traces and SSDsim's subpage).
pub const SECTOR_BYTES: u64 = 512;

/// What a host write that covers only part of a page does (`ftl.partial_page_writes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartialPageWrites {
    /// The page is programmed; the rest of its data is assumed at hand (nothing read).
    #[default]
    WholePage,
    /// The sectors the write does not cover but that hold data are read from flash first;
    /// the program waits for that read outside the device queue and then carries the merged
    /// page (SSDsim's `allocate_location` update sub-request).
    ReadModifyWrite,
    /// As `read_modify_write`, with MQSim's rule: the program enters the device queue at once
    /// and keeps its place there, but no scheduler starts it before its read ends, and it
    /// carries only the host's sectors
    /// (`Address_Mapping_Unit_Page_Level::allocate_page_in_plane_for_user_write`, the
    /// `RelatedRead` a write waits for in `TSU_Base::transaction_is_ready`).
    UpdateRead,
}

impl PartialPageWrites {
    pub fn is_default(&self) -> bool {
        *self == PartialPageWrites::WholePage
    }

    /// Whether sector bitmaps are kept (some sectors of a page may be read before a write).
    pub fn reads_first(&self) -> bool {
        *self != PartialPageWrites::WholePage
    }
}

/// Sector bitmaps of the logical pages that hold only part of their sectors.
#[derive(Debug, Clone)]
pub struct PartialPages {
    page_bytes: u64,
    full: u32,
    /// Keyed by logical page (a transaction's logical page is a `u32`): 8 bytes an entry.
    masks: IntMap<u32, u32>,
}

impl PartialPages {
    /// Pages of `page_bytes`; `None` unless the page is 1 to 32 whole sectors.
    pub fn new(page_bytes: u32) -> Option<Self> {
        let page_bytes = u64::from(page_bytes);
        let sectors = page_bytes / SECTOR_BYTES;
        if page_bytes % SECTOR_BYTES != 0 || !(1..=32).contains(&sectors) {
            return None;
        }
        Some(PartialPages {
            page_bytes,
            full: if sectors == 32 {
                u32::MAX
            } else {
                (1u32 << sectors) - 1
            },
            masks: IntMap::default(),
        })
    }

    /// The sectors of logical page `lpn` that bytes `[offset, end)` touch (a partly touched
    /// sector counts, as SSDsim's sector addresses do).
    pub fn sectors(&self, lpn: u64, offset: u64, end: u64) -> u32 {
        let page_start = lpn * self.page_bytes;
        let from = offset.max(page_start) - page_start;
        let to = end.min(page_start + self.page_bytes) - page_start;
        if to <= from {
            return 0;
        }
        let first = from / SECTOR_BYTES;
        let last = (to - 1) / SECTOR_BYTES;
        let upper = if last == 31 {
            u32::MAX
        } else {
            (1u32 << (last + 1)) - 1
        };
        upper & !((1u32 << first) - 1)
    }

    /// Whether `sectors` are every sector of a page.
    pub fn is_whole(&self, sectors: u32) -> bool {
        sectors == self.full
    }

    /// The sectors that hold data in `lpn`, mapped or not.
    pub fn held(&self, lpn: u64, mapped: bool) -> u32 {
        match self.masks.get(&(lpn as u32)) {
            Some(mask) => *mask,
            None if mapped => self.full,
            None => 0,
        }
    }

    /// A host write of `written` sectors to `lpn` (`mapped`: whether the page held data before
    /// it). Returns whether sectors it does not cover hold data, i.e. must be read first.
    pub fn write(&mut self, lpn: u64, written: u32, mapped: bool) -> bool {
        let held = self.held(lpn, mapped);
        self.set(lpn, held | written);
        held & !written != 0
    }

    /// Preconditioning: sectors of `lpn` that exist before the trace starts (SSDsim's
    /// `pre_process_page` marks the sectors the trace reads).
    pub fn preload(&mut self, lpn: u64, sectors: u32) {
        let held = self.masks.get(&(lpn as u32)).copied().unwrap_or(0);
        self.set(lpn, held | sectors);
    }

    fn set(&mut self, lpn: u64, mask: u32) {
        if mask == self.full || mask == 0 {
            self.masks.remove(&(lpn as u32));
        } else {
            self.masks.insert(lpn as u32, mask);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_of_a_byte_range() {
        let p = PartialPages::new(2048).unwrap();
        // Page 1 is bytes 2048..4096: sectors 0..3.
        assert_eq!(p.sectors(1, 2048, 4096), 0b1111);
        assert_eq!(p.sectors(1, 2048 + 512, 2048 + 1024), 0b0010);
        // A partly touched sector counts: bytes 2100..2700 touch sectors 0 and 1.
        assert_eq!(p.sectors(1, 2100, 2700), 0b0011);
        // A range that starts before the page and ends in its third sector.
        assert_eq!(p.sectors(1, 0, 2048 + 1100), 0b0111);
        assert!(PartialPages::new(1000).is_none());
        assert_eq!(PartialPages::new(16384).unwrap().full, u32::MAX);
    }

    #[test]
    fn a_write_reads_first_only_when_data_lies_outside_it() {
        let mut p = PartialPages::new(2048).unwrap();
        // Unmapped, nothing preloaded: no read; the page now holds sectors 0-1.
        assert!(!p.write(5, 0b0011, false));
        // Sectors 2-3 written: 0-1 hold data outside the write, so read first.
        assert!(p.write(5, 0b1100, true));
        // Now the page is whole: a full-page write never reads.
        assert!(!p.write(5, 0b1111, true));
        // A mapped page not in the table is whole: a partial write reads the rest.
        assert!(p.write(9, 0b0001, true));
        // Preloaded sector 2 only (a read of the trace): a write of 2-3 covers it, no read.
        p.preload(11, 0b0100);
        assert!(!p.write(11, 0b1100, true));
        assert_eq!(p.held(11, true), 0b1100);
    }
}
