//! The cached mapping table's index from logical page to cache slot: an open-addressing hash
//! table with linear probing, 8 bytes an entry, so one look-up touches one cache line most of
//! the time and the next request's entry can be prefetched (the CMT misses on most requests of
//! a random trace, so its look-ups are cache misses; `std`'s map cannot be prefetched).

/// Marks a free entry (no logical page has this number: they fit below `u32::MAX`).
const EMPTY: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Entry {
    lpn: u32,
    slot: u32,
}

/// Map from logical page (`< u32::MAX`) to slot. The table doubles whenever it would become
/// more than half full, so it stays small for a cache that is configured large but used little.
#[derive(Debug)]
pub struct SlotIndex {
    entries: Vec<Entry>,
    /// `entries.len() - 1` (a power of two minus one).
    mask: usize,
    /// Right shift that keeps the top bits of the multiplicative hash.
    shift: u32,
    len: usize,
}

impl SlotIndex {
    /// An index sized for `expected` keys at first.
    pub fn new(expected: usize) -> Self {
        Self::with_table_len((expected.max(1) * 2).next_power_of_two())
    }

    fn with_table_len(table_len: usize) -> Self {
        SlotIndex {
            entries: vec![
                Entry {
                    lpn: EMPTY,
                    slot: 0
                };
                table_len
            ],
            mask: table_len - 1,
            shift: 64 - table_len.trailing_zeros(),
            len: 0,
        }
    }

    /// Keys held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    #[cold]
    fn grow(&mut self) {
        let mut bigger = Self::with_table_len(self.entries.len() * 2);
        for entry in self.entries.iter().filter(|e| e.lpn != EMPTY) {
            bigger.insert(entry.lpn, entry.slot);
        }
        *self = bigger;
    }

    #[inline]
    fn home(&self, lpn: u32) -> usize {
        // Fibonacci hashing: consecutive logical pages land far apart.
        ((u64::from(lpn).wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> self.shift) as usize & self.mask
    }

    #[inline]
    pub fn get(&self, lpn: u32) -> Option<u32> {
        let mut i = self.home(lpn);
        loop {
            let entry = self.entries[i];
            if entry.lpn == lpn {
                return Some(entry.slot);
            }
            if entry.lpn == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Insert `lpn`, which must not be present.
    #[inline]
    pub fn insert(&mut self, lpn: u32, slot: u32) {
        debug_assert!(lpn != EMPTY && self.get(lpn).is_none());
        if (self.len + 1) * 2 > self.entries.len() {
            self.grow();
        }
        self.len += 1;
        let mut i = self.home(lpn);
        while self.entries[i].lpn != EMPTY {
            i = (i + 1) & self.mask;
        }
        self.entries[i] = Entry { lpn, slot };
    }

    /// Remove `lpn` if present, shifting later entries of its probe run back (no tombstones,
    /// so look-ups never slow down with churn).
    pub fn remove(&mut self, lpn: u32) {
        let mut i = self.home(lpn);
        loop {
            match self.entries[i].lpn {
                EMPTY => return,
                l if l == lpn => break,
                _ => i = (i + 1) & self.mask,
            }
        }
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let entry = self.entries[j];
            if entry.lpn == EMPTY {
                break;
            }
            let home = self.home(entry.lpn);
            // The entry at j may move to the hole at i unless its home lies cyclically in (i, j].
            let stays = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !stays {
                self.entries[i] = entry;
                i = j;
            }
        }
        self.entries[i].lpn = EMPTY;
    }

    /// Start loading the line `lpn`'s look-up begins with. No effect on results.
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        prefetch(&self.entries[self.home(lpn)]);
    }
}

/// Ask the CPU to start loading `value`'s cache line (a hint: no effect on results).
#[inline]
pub(crate) fn prefetch<T>(value: &T) {
    let address: *const T = value;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, even for invalid addresses.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;

    /// Random inserts, removals and look-ups against `std`'s map, at full load and with many
    /// keys sharing a home (small key range), so probe runs wrap around the table's end.
    #[test]
    fn matches_a_std_map() {
        for (capacity, key_range) in [(8usize, 64u32), (1000, 3000), (1000, 1 << 30)] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(capacity as u64);
            // Sized for a tenth of the keys: the table must grow on the way.
            let mut index = SlotIndex::new(capacity / 10);
            let mut shadow: HashMap<u32, u32> = HashMap::new();
            for step in 0..50_000u32 {
                let lpn = rng.random_range(0..key_range);
                match shadow.get(&lpn) {
                    Some(_) if rng.random_bool(0.5) => {
                        index.remove(lpn);
                        shadow.remove(&lpn);
                    }
                    None if shadow.len() < capacity => {
                        index.insert(lpn, step);
                        shadow.insert(lpn, step);
                    }
                    _ => {}
                }
                let probe = rng.random_range(0..key_range);
                assert_eq!(index.get(probe), shadow.get(&probe).copied());
            }
            for (&lpn, &slot) in &shadow {
                assert_eq!(index.get(lpn), Some(slot));
            }
            assert_eq!(index.len(), shadow.len());
        }
    }
}
