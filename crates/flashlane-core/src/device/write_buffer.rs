//! The controller's DRAM write buffer in front of the FTL (`device.write_buffer_bytes`; the
//! SOS paper's Fig. 3 puts one above its FTL).
//!
//! A host write page completes once its data is in DRAM; the buffer later flushes it to flash
//! as a program with no host request. Policy (docs/models/sos.md, "Write buffer"):
//! - **Slots**: `write_buffer_bytes / page_bytes` pages, one per logical page, whatever part of
//!   the page the host wrote. A slot is held from the write until its flush program ends.
//! - **Write hit**: a write to a logical page already in the buffer overwrites it in place
//!   (no new slot). If that page's flush is under way, the flash copy will be stale: the page
//!   is flushed again once the running flush ends (one flush per page at a time, so programs of
//!   a page reach the FTL in data order).
//! - **Flush trigger and order**: the oldest dirty page (first-written order; a rewrite keeps
//!   its place) is flushed while more than `write_buffer_flush_threshold_fraction` of the slots
//!   hold dirty data, or while more writes wait for a slot than flushes are running.
//! - **Full**: a write page finding no slot waits (counted) in arrival order, and every later
//!   write waits behind it, until a flush ends and frees a slot.
//! - **Read hit**: a read of a page in the buffer (dirty or being flushed) is served from DRAM.
//! - **DRAM time**: every page moved into or out of the buffer holds the DRAM for
//!   `write_buffer_page_ns` (one page at a time: a busy-until).
//!
//! With integrity checking the buffer keeps shadow versions: a read hit must see the newest
//! admitted write of its page, and a read miss must find that version already flushed (the
//! FTL's shadow then checks the flash copy).

use std::collections::VecDeque;

use serde::Serialize;

use crate::int_map::IntMap;

/// A page resident in the buffer.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Waiting in `dirty_order` for a flush.
    dirty: bool,
    /// A flush program of this page is under way.
    flushing: bool,
    /// Shadow version of the data held (0 without integrity checking).
    version: u32,
}

/// A host write page waiting for a free slot.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    request: u32,
    lpn: u32,
    version: u32,
}

/// Event counts since the start (the simulation subtracts those at the window start).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteBufferCounters {
    pub write_pages: u64,
    pub write_hits: u64,
    pub read_pages: u64,
    pub read_hits: u64,
    pub full_waits: u64,
    pub flushes: u64,
    pub rewrites_while_flushing: u64,
}

/// Write-buffer figures of the measured window (`write_buffer` in the summary).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WriteBufferStats {
    /// Buffer size in pages (`device.write_buffer_bytes / geometry.page_bytes`).
    pub capacity_pages: u64,
    /// Host write pages that entered the buffer.
    pub write_pages: u64,
    /// Host write pages that found their logical page already in the buffer and overwrote it
    /// in place (no slot taken; one flash program fewer unless its flush was under way).
    pub write_hits: u64,
    /// write_hits / write_pages (0 without writes).
    pub write_hit_ratio: f64,
    /// Host read pages the device served (from DRAM or flash).
    pub read_pages: u64,
    /// Host read pages found in the buffer and served from DRAM.
    pub read_hits: u64,
    /// read_hits / read_pages (0 without reads).
    pub read_hit_ratio: f64,
    /// (write_hits + read_hits) / (write_pages + read_pages): the buffer hit ratio.
    pub hit_ratio: f64,
    /// Host write pages that found the buffer full (or others already waiting) and waited for
    /// a flush to free a slot.
    pub full_waits: u64,
    /// Flush programs issued (pages the buffer sent to the FTL).
    pub flushes: u64,
    /// Write hits on a page whose flush was under way (the page is flushed again).
    pub rewrites_while_flushing: u64,
}

pub struct WriteBuffer {
    capacity_pages: u32,
    /// Dirty pages above this start flushes.
    flush_threshold_pages: u32,
    page_ns: u64,
    entries: IntMap<u32, Entry>,
    dirty_order: VecDeque<u32>,
    flushing: u32,
    waiting: VecDeque<Waiting>,
    /// When the DRAM finishes its last page move.
    dram_free_ns: u64,
    counters: WriteBufferCounters,
    shadow: Option<BufferShadow>,
    /// Test hook: forget that a page was rewritten while being flushed.
    lose_rewrites_for_test: bool,
}

/// Integrity shadow: per logical page, the version of the newest admitted write and of the
/// newest flush issued.
#[derive(Debug, Default)]
struct BufferShadow {
    next_version: u32,
    admitted: IntMap<u32, u32>,
    flushed: IntMap<u32, u32>,
    violations: u64,
}

impl WriteBuffer {
    /// Bytes [`WriteBuffer::new`] reserves for `capacity_pages` slots: the hash table (its
    /// buckets a power of two at 7/8 load, each an entry and a control byte) and the flush
    /// order.
    pub fn upfront_bytes(capacity_pages: u64) -> u64 {
        let buckets = (capacity_pages.max(1) * 8 / 7).next_power_of_two();
        buckets * (std::mem::size_of::<(u32, Entry)>() as u64 + 1) + capacity_pages * 4
    }

    /// `capacity_pages` >= 1 (the config checks it).
    pub fn new(
        capacity_pages: u32,
        flush_threshold_fraction: f64,
        page_ns: u64,
        check_integrity: bool,
    ) -> Self {
        let capacity_pages = capacity_pages.max(1);
        let slots = capacity_pages as usize;
        WriteBuffer {
            capacity_pages,
            flush_threshold_pages: (capacity_pages as f64 * flush_threshold_fraction).floor()
                as u32,
            page_ns,
            entries: IntMap::with_capacity_and_hasher(slots, Default::default()),
            dirty_order: VecDeque::with_capacity(slots),
            flushing: 0,
            waiting: VecDeque::with_capacity(64),
            dram_free_ns: 0,
            counters: WriteBufferCounters::default(),
            shadow: check_integrity.then(BufferShadow::default),
            lose_rewrites_for_test: false,
        }
    }

    pub fn counters(&self) -> WriteBufferCounters {
        self.counters
    }

    pub fn capacity_pages(&self) -> u32 {
        self.capacity_pages
    }

    /// Integrity violations found by the buffer's shadow (None without checking).
    pub fn integrity_violations(&self) -> Option<u64> {
        self.shadow.as_ref().map(|s| s.violations)
    }

    /// One page through the DRAM: when it is done.
    fn dram(&mut self, now: u64) -> u64 {
        let done = self.dram_free_ns.max(now) + self.page_ns;
        self.dram_free_ns = done;
        done
    }

    /// A host write page of `request`: `Some(done_ns)` when it entered the buffer, `None` when
    /// it waits for a slot (see [`WriteBuffer::admit_waiting`]).
    pub fn write(&mut self, now: u64, request: u32, lpn: u32) -> Option<u64> {
        self.counters.write_pages += 1;
        let version = match &mut self.shadow {
            Some(shadow) => {
                shadow.next_version += 1;
                shadow.next_version
            }
            None => 0,
        };
        // Writes behind a waiting one wait too: a later rewrite must not overtake it.
        if !self.waiting.is_empty()
            || (!self.entries.contains_key(&lpn)
                && self.entries.len() >= self.capacity_pages as usize)
        {
            self.counters.full_waits += 1;
            self.waiting.push_back(Waiting {
                request,
                lpn,
                version,
            });
            return None;
        }
        self.store(lpn, version);
        Some(self.dram(now))
    }

    /// Put the page's data into its slot (a hit overwrites in place).
    fn store(&mut self, lpn: u32, version: u32) {
        if let Some(shadow) = &mut self.shadow {
            shadow.admitted.insert(lpn, version);
        }
        match self.entries.get_mut(&lpn) {
            Some(entry) => {
                self.counters.write_hits += 1;
                entry.version = version;
                if entry.flushing && !entry.dirty {
                    self.counters.rewrites_while_flushing += 1;
                    // Flushed again when the running flush ends (see `flush_done`).
                    entry.dirty = !self.lose_rewrites_for_test;
                }
            }
            None => {
                self.entries.insert(
                    lpn,
                    Entry {
                        dirty: true,
                        flushing: false,
                        version,
                    },
                );
                self.dirty_order.push_back(lpn);
            }
        }
    }

    /// A host read page: `Some(done_ns)` when the buffer holds it (served from DRAM), `None`
    /// when it must be read from flash.
    pub fn read(&mut self, now: u64, lpn: u32) -> Option<u64> {
        self.counters.read_pages += 1;
        let held = self.entries.get(&lpn).map(|e| e.version);
        if let Some(shadow) = &mut self.shadow {
            let newest = shadow.admitted.get(&lpn).copied();
            let stale = match held {
                Some(version) => Some(version) != newest,
                None => newest.is_some() && shadow.flushed.get(&lpn).copied() != newest,
            };
            shadow.violations += u64::from(stale);
        }
        held?;
        self.counters.read_hits += 1;
        Some(self.dram(now))
    }

    /// The next page to flush under the trigger, marked as being flushed; `None` when no flush
    /// is due. The caller turns it into a program through the FTL.
    pub fn next_flush(&mut self) -> Option<u32> {
        let dirty = self.dirty_order.len() as u32;
        if dirty == 0
            || (dirty <= self.flush_threshold_pages && self.waiting.len() as u32 <= self.flushing)
        {
            return None;
        }
        let lpn = self.dirty_order.pop_front()?;
        let entry = self.entries.get_mut(&lpn)?;
        entry.dirty = false;
        entry.flushing = true;
        self.flushing += 1;
        self.counters.flushes += 1;
        if let Some(shadow) = &mut self.shadow {
            shadow.flushed.insert(lpn, entry.version);
        }
        Some(lpn)
    }

    /// The flush program of `lpn` ended: free its slot, or queue it again if it was rewritten.
    pub fn flush_done(&mut self, lpn: u32) {
        self.flushing -= 1;
        let Some(entry) = self.entries.get_mut(&lpn) else {
            return;
        };
        entry.flushing = false;
        if entry.dirty {
            self.dirty_order.push_back(lpn);
        } else {
            self.entries.remove(&lpn);
        }
    }

    /// Let waiting writes in while slots are free; push `(request, done_ns)` for each.
    pub fn admit_waiting(&mut self, now: u64, admitted: &mut Vec<(u32, u64)>) {
        while let Some(&next) = self.waiting.front() {
            if !self.entries.contains_key(&next.lpn)
                && self.entries.len() >= self.capacity_pages as usize
            {
                break;
            }
            self.waiting.pop_front();
            self.store(next.lpn, next.version);
            let done = self.dram(now);
            admitted.push((next.request, done));
        }
    }

    /// Test hook: a rewrite during a flush is not flushed again, so the newest data is lost
    /// and the integrity check must flag a later read.
    #[doc(hidden)]
    pub fn lose_rewrites_for_test(&mut self) {
        self.lose_rewrites_for_test = true;
    }

    /// The window's figures: `now` minus `base` counters.
    pub fn stats(&self, base: &WriteBufferCounters) -> WriteBufferStats {
        let c = self.counters;
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let write_pages = c.write_pages - base.write_pages;
        let write_hits = c.write_hits - base.write_hits;
        let read_pages = c.read_pages - base.read_pages;
        let read_hits = c.read_hits - base.read_hits;
        WriteBufferStats {
            capacity_pages: u64::from(self.capacity_pages),
            write_pages,
            write_hits,
            write_hit_ratio: ratio(write_hits, write_pages),
            read_pages,
            read_hits,
            read_hit_ratio: ratio(read_hits, read_pages),
            hit_ratio: ratio(write_hits + read_hits, write_pages + read_pages),
            full_waits: c.full_waits - base.full_waits,
            flushes: c.flushes - base.flushes,
            rewrites_while_flushing: c.rewrites_while_flushing - base.rewrites_while_flushing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrite_is_a_hit_and_a_full_buffer_waits_for_a_flush() {
        let mut b = WriteBuffer::new(2, 1.0, 100, true);
        assert_eq!(b.write(0, 0, 1), Some(100));
        assert_eq!(b.write(0, 1, 1), Some(200)); // hit, DRAM busy-until
        assert_eq!(b.write(0, 2, 2), Some(300));
        assert_eq!(b.counters().write_hits, 1);
        assert_eq!(b.next_flush(), None); // 2 dirty, threshold 2, nobody waits
        assert_eq!(b.write(1000, 3, 3), None);
        assert_eq!(b.next_flush(), Some(1)); // a write waits: oldest page goes
        assert_eq!(b.next_flush(), None);
        let mut admitted = Vec::new();
        b.admit_waiting(2000, &mut admitted);
        assert!(admitted.is_empty());
        b.flush_done(1);
        b.admit_waiting(5000, &mut admitted);
        assert_eq!(admitted, vec![(3, 5100)]);
        assert_eq!(b.read(6000, 1), None); // flushed and gone
        assert_eq!(b.read(6000, 2), Some(6100));
        assert_eq!(b.integrity_violations(), Some(0));
    }

    #[test]
    fn lost_rewrite_is_flagged() {
        for lose in [false, true] {
            let mut b = WriteBuffer::new(1, 0.0, 10, true);
            if lose {
                b.lose_rewrites_for_test();
            }
            b.write(0, 0, 7);
            assert_eq!(b.next_flush(), Some(7));
            b.write(0, 1, 7); // rewrite while flushing
            b.flush_done(7);
            while let Some(lpn) = b.next_flush() {
                b.flush_done(lpn);
            }
            b.read(100, 7);
            assert_eq!(b.integrity_violations(), Some(u64::from(lose)));
        }
    }
}
