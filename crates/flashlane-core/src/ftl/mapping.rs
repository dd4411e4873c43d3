//! Page-level logical -> physical map whose memory grows with the logical pages touched.

/// Entries per lazily allocated chunk.
const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;

/// A chunked array of `u32` values, 0 meaning "unset"; a chunk is allocated on its first write.
#[derive(Debug, Default)]
pub struct ChunkedTable {
    chunks: Vec<Option<Box<[u32]>>>,
    allocated_chunks: usize,
}

impl ChunkedTable {
    pub fn new(len: u64) -> Self {
        let chunks = len.div_ceil(CHUNK as u64) as usize;
        ChunkedTable {
            chunks: (0..chunks).map(|_| None).collect(),
            allocated_chunks: 0,
        }
    }

    pub fn get(&self, index: u64) -> u32 {
        match &self.chunks[(index >> CHUNK_BITS) as usize] {
            Some(chunk) => chunk[(index as usize) & (CHUNK - 1)],
            None => 0,
        }
    }

    pub fn set(&mut self, index: u64, value: u32) {
        let slot = &mut self.chunks[(index >> CHUNK_BITS) as usize];
        if slot.is_none() {
            if value == 0 {
                return;
            }
            *slot = Some(vec![0u32; CHUNK].into_boxed_slice());
            self.allocated_chunks += 1;
        }
        if let Some(chunk) = slot {
            chunk[(index as usize) & (CHUNK - 1)] = value;
        }
    }

    /// Indices of every non-zero value, in order (skips unallocated chunks).
    pub fn nonzero_indices(&self) -> impl Iterator<Item = u64> + '_ {
        self.chunks.iter().enumerate().flat_map(|(c, chunk)| {
            chunk.iter().flat_map(move |values| {
                values
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| **v != 0)
                    .map(move |(i, _)| ((c as u64) << CHUNK_BITS) + i as u64)
            })
        })
    }

    /// Bytes held by allocated chunks.
    pub fn allocated_bytes(&self) -> u64 {
        (self.allocated_chunks * CHUNK * 4) as u64
    }

    /// Hint the CPU to start loading entry `index` (a random look-up misses the cache; asking
    /// early lets the simulation do other work meanwhile). No effect on results.
    pub fn prefetch(&self, index: u64) {
        if let Some(Some(chunk)) = self.chunks.get((index >> CHUNK_BITS) as usize) {
            let entry: *const u32 = &chunk[(index as usize) & (CHUNK - 1)];
            #[cfg(target_arch = "x86_64")]
            // SAFETY: prefetching is a hint; it never faults, even for invalid addresses.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(entry.cast());
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = entry;
        }
    }
}

/// Logical page -> physical page map. Physical page numbers are stored plus one (0 = unmapped).
#[derive(Debug)]
pub struct PageMap {
    table: ChunkedTable,
    logical_pages: u64,
}

impl PageMap {
    pub fn new(logical_pages: u64) -> Self {
        PageMap {
            table: ChunkedTable::new(logical_pages),
            logical_pages,
        }
    }

    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    pub fn get(&self, lpn: u64) -> Option<u32> {
        match self.table.get(lpn) {
            0 => None,
            v => Some(v - 1),
        }
    }

    pub fn set(&mut self, lpn: u64, ppn: u32) {
        self.table.set(lpn, ppn + 1);
    }

    pub fn allocated_bytes(&self) -> u64 {
        self.table.allocated_bytes()
    }

    /// Every mapped logical page, in order.
    pub fn mapped_lpns(&self) -> impl Iterator<Item = u64> + '_ {
        self.table.nonzero_indices()
    }

    /// See [`ChunkedTable::prefetch`].
    pub fn prefetch(&self, lpn: u64) {
        self.table.prefetch(lpn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_grows_with_touched_pages_only() {
        // A 1 TiB drive of 4 KiB pages: 2^28 logical pages, nothing allocated up front.
        let mut map = PageMap::new(1 << 28);
        assert_eq!(map.allocated_bytes(), 0);
        assert_eq!(map.get(123_456_789), None);
        map.set(123_456_789, 42);
        assert_eq!(map.get(123_456_789), Some(42));
        assert_eq!(map.allocated_bytes(), (CHUNK * 4) as u64);
    }
}
