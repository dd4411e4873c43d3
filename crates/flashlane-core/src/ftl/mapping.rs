//! Page-level logical -> physical map whose memory grows with the logical pages touched.

use super::fill::FillMap;
use super::zeroed_block::ZeroedBlock;

/// Entries per lazily allocated chunk.
const CHUNK_BITS: u32 = 16;
pub(super) const CHUNK: usize = 1 << CHUNK_BITS;

/// Chunks are carved, in the order they are first written, out of 2 MiB blocks aligned on
/// 2 MiB, which the kernel is asked to back with transparent huge pages: the table is read at
/// random (one look-up per request), and with 4 KiB pages most look-ups also missed the TLB
/// (a page walk, in a VM a two-level one). A block is a zeroed mapping twice that size
/// ([`ZeroedBlock`]: the aligned window is somewhere in it; the rest is never touched, so it
/// costs address space, not memory), so memory still grows with the chunks written, by whole
/// huge pages.
const HUGE_PAGE_BYTES: usize = 2 << 20;
const BLOCK_CHUNKS: usize = HUGE_PAGE_BYTES / (CHUNK * 4);
/// Huge pages a block of a releasable table spans (one mapping, [`ZeroedBlock`]): each huge
/// page goes back to the kernel once its chunks are all released, the mapping once all its
/// pages have.
const RELEASABLE_HUGE_PAGES: usize = 16;

/// Where a chunk's values are: block and element offset in it (`block == NO_BLOCK`: the chunk
/// is not allocated).
#[derive(Debug, Clone, Copy)]
struct ChunkAt {
    block: u32,
    offset: u32,
}

const NO_BLOCK: u32 = u32::MAX;
const UNALLOCATED: ChunkAt = ChunkAt {
    block: NO_BLOCK,
    offset: 0,
};

/// A chunked array of `u32` values, 0 meaning "unset"; a chunk is allocated on its first write.
#[derive(Debug, Default)]
pub struct ChunkedTable {
    chunks: Vec<ChunkAt>,
    /// Zeroed memory the chunks are carved from.
    blocks: Vec<ZeroedBlock>,
    /// Offset of the next chunk to hand out in the last block, and of the end of its aligned
    /// window.
    next_offset: usize,
    window_end: usize,
    allocated_chunks: usize,
    /// Chunks can be released ([`ChunkedTable::release_chunk`]): the plane-major map of
    /// aging (ftl/aging.rs). A huge page goes back to the kernel once none of its chunks is
    /// held any more, a block is freed once none of its huge pages is.
    releasable: bool,
    /// Releasable tables: chunks held in each huge page (`RELEASABLE_HUGE_PAGES` a block),
    /// huge pages held in each block, and where each block's first huge page starts.
    held_in_page: Vec<u32>,
    held_pages: Vec<u32>,
    window_start: Vec<usize>,
}

/// Ask the kernel to back `window` (2 MiB aligned, a multiple of 2 MiB long) with huge pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages(window: &mut [u32]) {
    // SAFETY: `window` is a live slice this table owns exclusively, so the range is mapped
    // memory of this process; MADV_HUGEPAGE is advice only: it never changes the contents,
    // the protection or the validity of the range (the kernel may merge or split its pages
    // at any time regardless), so no Rust invariant about the slice depends on the call. The
    // start is 2 MiB aligned, hence page aligned as madvise requires; a failure (e.g. THP
    // disabled) leaves ordinary pages and is ignored.
    unsafe {
        libc::madvise(
            window.as_mut_ptr().cast(),
            std::mem::size_of_val(window),
            libc::MADV_HUGEPAGE,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_window: &mut [u32]) {}

/// Give the whole pages inside `values` back to the kernel (they read as zeros after).
#[cfg(target_os = "linux")]
fn release_pages(values: &mut [u32]) {
    const PAGE: usize = 4096;
    let start = values.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(values);
    let (first, last) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
    if first < last {
        // SAFETY: [first, last) is page aligned and lies inside `values`, memory of a live
        // mapping borrowed exclusively here; MADV_DONTNEED replaces those pages by zero pages
        // (still valid `u32`s), and the caller releases every chunk in them first, never
        // reading them again.
        unsafe {
            libc::madvise(
                first as *mut libc::c_void,
                last - first,
                libc::MADV_DONTNEED,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn release_pages(_values: &mut [u32]) {}

impl ChunkedTable {
    pub fn new(len: u64) -> Self {
        let chunks = len.div_ceil(CHUNK as u64) as usize;
        ChunkedTable {
            chunks: vec![UNALLOCATED; chunks],
            blocks: Vec::new(),
            next_offset: 0,
            window_end: 0,
            allocated_chunks: 0,
            releasable: false,
            held_in_page: Vec::new(),
            held_pages: Vec::new(),
            window_start: Vec::new(),
        }
    }

    /// A table whose chunks can be released one by one (see `releasable`).
    pub(super) fn releasable(len: u64) -> Self {
        ChunkedTable {
            releasable: true,
            ..ChunkedTable::new(len)
        }
    }

    /// Free chunk `c` of a [`ChunkedTable::releasable`] table (its values read 0 again); its
    /// 2 MiB page goes back to the kernel with the page's last chunk. A caller that
    /// releases chunks as it goes allocates them in the order it will release them
    /// ([`ChunkedTable::allocate_in_order`]), so that memory falls as it goes.
    pub(super) fn release_chunk(&mut self, c: usize) {
        let Some(at) = self.chunks.get(c).copied() else {
            return;
        };
        if !self.releasable || at.block == NO_BLOCK {
            return;
        }
        self.chunks[c] = UNALLOCATED;
        self.allocated_chunks -= 1;
        let b = at.block as usize;
        let page_elements = HUGE_PAGE_BYTES / 4;
        let within = (at.offset as usize - self.window_start[b]) / page_elements;
        let page = b * RELEASABLE_HUGE_PAGES + within;
        self.held_in_page[page] -= 1;
        if self.held_in_page[page] > 0 {
            return;
        }
        let from = self.window_start[b] + within * page_elements;
        release_pages(&mut self.blocks[b][from..from + page_elements]);
        self.held_pages[b] -= 1;
        if self.held_pages[b] == 0 {
            self.blocks[b] = ZeroedBlock::empty();
            if b + 1 == self.blocks.len() {
                // No more chunks carved from it.
                self.next_offset = self.window_end;
            }
        }
    }

    /// A releasable table's huge pages whose chunks all hold `dense` data, backed by huge
    /// pages: one touched at a single place costs 2 MiB of memory, so a 2 MiB page holding a
    /// chunk that may stay mostly untouched is left to 4 KiB pages.
    pub(super) fn advise_huge_pages_where(&mut self, dense: impl Fn(usize) -> bool) {
        let page_elements = HUGE_PAGE_BYTES / 4;
        let mut all_dense = vec![true; self.held_in_page.len()];
        for (c, at) in self.chunks.iter().enumerate() {
            if at.block != NO_BLOCK && self.releasable {
                let b = at.block as usize;
                let within = (at.offset as usize - self.window_start[b]) / page_elements;
                all_dense[b * RELEASABLE_HUGE_PAGES + within] &= dense(c);
            }
        }
        for (page, dense) in all_dense.into_iter().enumerate() {
            let (b, within) = (page / RELEASABLE_HUGE_PAGES, page % RELEASABLE_HUGE_PAGES);
            if dense && self.held_in_page[page] > 0 {
                let from = self.window_start[b] + within * page_elements;
                advise_huge_pages(&mut self.blocks[b][from..from + page_elements]);
            }
        }
    }

    /// Allocate chunks `order` (those not allocated yet), in that order: consecutive ones
    /// share a 2 MiB page.
    pub(super) fn allocate_in_order(&mut self, order: impl IntoIterator<Item = usize>) {
        for c in order {
            if self.chunks[c].block == NO_BLOCK {
                self.chunks[c] = self.allocate_chunk();
                self.allocated_chunks += 1;
            }
        }
    }

    #[inline]
    fn chunk(&self, c: usize) -> Option<&[u32]> {
        let at = *self.chunks.get(c)?;
        if at.block == NO_BLOCK {
            return None;
        }
        let offset = at.offset as usize;
        Some(&self.blocks[at.block as usize][offset..offset + CHUNK])
    }

    pub fn get(&self, index: u64) -> u32 {
        let at = self.chunks[(index >> CHUNK_BITS) as usize];
        if at.block == NO_BLOCK {
            return 0;
        }
        self.blocks[at.block as usize][at.offset as usize + ((index as usize) & (CHUNK - 1))]
    }

    pub fn set(&mut self, index: u64, value: u32) {
        let c = (index >> CHUNK_BITS) as usize;
        if self.chunks[c].block == NO_BLOCK {
            if value == 0 {
                return;
            }
            self.chunks[c] = self.allocate_chunk();
            self.allocated_chunks += 1;
        }
        let at = self.chunks[c];
        self.blocks[at.block as usize][at.offset as usize + ((index as usize) & (CHUNK - 1))] =
            value;
    }

    /// Hand out the next chunk of the last block, opening a new block when it is used up.
    fn allocate_chunk(&mut self) -> ChunkAt {
        if self.blocks.is_empty() || self.next_offset == self.window_end {
            let huge_pages = if self.releasable {
                RELEASABLE_HUGE_PAGES
            } else {
                1
            };
            let block_elements = huge_pages * BLOCK_CHUNKS * CHUNK;
            let mut block = ZeroedBlock::new(block_elements + BLOCK_CHUNKS * CHUNK);
            let address = block.as_ptr() as usize;
            let start = (address.next_multiple_of(HUGE_PAGE_BYTES) - address) / 4;
            if !self.releasable {
                advise_huge_pages(&mut block[start..start + block_elements]);
            }
            self.blocks.push(block);
            self.next_offset = start;
            self.window_end = start + block_elements;
            if self.releasable {
                self.window_start.push(start);
                self.held_pages.push(0);
                self.held_in_page
                    .resize(self.blocks.len() * RELEASABLE_HUGE_PAGES, 0);
            }
        }
        if self.releasable {
            let b = self.blocks.len() - 1;
            let within = (self.next_offset - self.window_start[b]) / (HUGE_PAGE_BYTES / 4);
            let page = b * RELEASABLE_HUGE_PAGES + within;
            if self.held_in_page[page] == 0 {
                self.held_pages[b] += 1;
            }
            self.held_in_page[page] += 1;
        }
        let at = ChunkAt {
            block: (self.blocks.len() - 1) as u32,
            offset: self.next_offset as u32,
        };
        self.next_offset += CHUNK;
        at
    }

    /// Chunks of [`CHUNK`] values the table is made of.
    /// Copy the values from `start` on into `out` (0 where no chunk is allocated), a chunk's
    /// slice at a time.
    pub(super) fn read_run(&self, start: u64, out: &mut [u32]) {
        let mut done = 0;
        while done < out.len() {
            let index = start + done as u64;
            let from = (index as usize) & (CHUNK - 1);
            let len = (CHUNK - from).min(out.len() - done);
            match self.chunk((index >> CHUNK_BITS) as usize) {
                Some(values) => out[done..done + len].copy_from_slice(&values[from..from + len]),
                None => out[done..done + len].fill(0),
            }
            done += len;
        }
    }

    /// Chunks `first..first + count`, allocated (in that order) if they were not, to index
    /// directly.
    pub(super) fn chunks_mut(&mut self, first: usize, count: usize) -> Vec<&mut [u32]> {
        self.allocate_in_order(first..first + count);
        let mut all = self.allocated_chunks_mut();
        all.drain(first..first + count)
            .map(|c| c.expect("allocated above"))
            .collect()
    }

    /// Every chunk's values, `None` for a chunk not allocated: to fill chunks side by side.
    pub(super) fn allocated_chunks_mut(&mut self) -> Vec<Option<&mut [u32]>> {
        // Each block cut into its chunks' slices, in the order they lie in it.
        let chunks = &self.chunks;
        let mut order: Vec<usize> = (0..chunks.len())
            .filter(|&c| chunks[c].block != NO_BLOCK)
            .collect();
        order.sort_by_key(|&c| (chunks[c].block, chunks[c].offset));
        let mut out: Vec<Option<&mut [u32]>> = (0..chunks.len()).map(|_| None).collect();
        let mut blocks = self.blocks.iter_mut().enumerate();
        let mut current: Option<(usize, usize, &mut [u32])> = None;
        for c in order {
            let at = chunks[c];
            let (block, base, rest) = loop {
                match current.take() {
                    Some((b, base, rest)) if b == at.block as usize => break (b, base, rest),
                    _ => {
                        let (b, slice) = blocks.next().expect("chunk's block");
                        current = Some((b, 0, &mut slice[..]));
                    }
                }
            };
            let (_, rest) = rest.split_at_mut(at.offset as usize - base);
            let (chunk, rest) = rest.split_at_mut(CHUNK);
            out[c] = Some(chunk);
            current = Some((block, at.offset as usize + CHUNK, rest));
        }
        out
    }

    /// Mark chunk `c` not allocated, its memory left as it is (for a chunk allocated ahead
    /// that turned out to hold nothing; in a block of the table, so not given back).
    pub(super) fn unallocate_chunk(&mut self, c: usize) {
        if self.chunks[c].block != NO_BLOCK && !self.releasable {
            self.chunks[c] = UNALLOCATED;
            self.allocated_chunks -= 1;
        }
    }

    pub(super) fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Chunk `c`'s values, `None` when it is not allocated.
    pub(super) fn chunk_values(&self, c: usize) -> Option<&[u32]> {
        self.chunk(c)
    }

    /// Chunk `c`'s values, allocating it (zeroed) if it is not.
    pub(super) fn chunk_values_mut(&mut self, c: usize) -> &mut [u32] {
        if self.chunks[c].block == NO_BLOCK {
            self.chunks[c] = self.allocate_chunk();
            self.allocated_chunks += 1;
        }
        let at = self.chunks[c];
        let offset = at.offset as usize;
        &mut self.blocks[at.block as usize][offset..offset + CHUNK]
    }

    /// Indices of every non-zero value, in order (skips unallocated chunks).
    pub fn nonzero_indices(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.chunks.len()).flat_map(move |c| {
            self.chunk(c).into_iter().flat_map(move |values| {
                values
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| **v != 0)
                    .map(move |(i, _)| ((c as u64) << CHUNK_BITS) + i as u64)
            })
        })
    }

    /// Whether any value with an index in `range` is non-zero (unallocated chunks hold none).
    /// Stops at the first one found.
    pub fn any_nonzero(&self, range: std::ops::Range<u64>) -> bool {
        let mut start = range.start;
        while start < range.end {
            let c = (start >> CHUNK_BITS) as usize;
            let chunk_end = ((c as u64 + 1) << CHUNK_BITS).min(range.end);
            if let Some(values) = self.chunk(c) {
                let from = (start as usize) & (CHUNK - 1);
                let to = from + (chunk_end - start) as usize;
                if values[from..to].iter().any(|&v| v != 0) {
                    return true;
                }
            }
            start = chunk_end;
        }
        false
    }

    /// Bytes held by allocated chunks.
    pub fn allocated_bytes(&self) -> u64 {
        (self.allocated_chunks * CHUNK * 4) as u64
    }

    /// Whether chunk `c` is allocated.
    fn is_allocated(&self, c: usize) -> bool {
        self.chunks.get(c).is_some_and(|at| at.block != NO_BLOCK)
    }

    /// Hint the CPU to start loading entry `index` (a random look-up misses the cache; asking
    /// early lets the simulation do other work meanwhile). No effect on results.
    pub fn prefetch(&self, index: u64) {
        if let Some(chunk) = self.chunk((index >> CHUNK_BITS) as usize) {
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
/// After an in-order fill (ftl/fill.rs) an entry not written since reads the fill's formula.
#[derive(Debug)]
pub struct PageMap {
    pub(super) table: ChunkedTable,
    logical_pages: u64,
    fill: Option<Box<FillMap>>,
    /// Chunks holding a page of the fill, a bit each: a page-by-page fill would have
    /// allocated them, and [`PageMap::allocated_bytes`] counts them so.
    fill_chunks: Vec<u64>,
}

impl PageMap {
    pub fn new(logical_pages: u64) -> Self {
        PageMap {
            table: ChunkedTable::new(logical_pages),
            logical_pages,
            fill: None,
            fill_chunks: Vec::new(),
        }
    }

    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    #[inline]
    pub fn get(&self, lpn: u64) -> Option<u32> {
        match self.table.get(lpn) {
            0 => self.fill_get(lpn),
            v => Some(v - 1),
        }
    }

    /// An entry never written: the fill's formula, if there is one. Out of line so that the
    /// usual look-up stays one table access.
    #[cold]
    #[inline(never)]
    fn fill_get(&self, lpn: u64) -> Option<u32> {
        self.fill.as_deref()?.ppn_of(lpn)
    }

    pub fn set(&mut self, lpn: u64, ppn: u32) {
        self.table.set(lpn, ppn + 1);
    }

    /// A map of `logical_pages` whose never-written entries read `fill`, its chunks
    /// releasable one by one (aging's plane-major map, ftl/aging.rs).
    pub(super) fn releasable_with_fill(logical_pages: u64, fill: FillMap) -> Self {
        PageMap {
            table: ChunkedTable::releasable(logical_pages),
            logical_pages,
            fill: Some(Box::new(fill)),
            fill_chunks: Vec::new(),
        }
    }

    /// No entry written (a fill's formula aside).
    /// The table and the fill, to use both at once.
    pub(super) fn table_and_fill(&mut self) -> (&mut ChunkedTable, Option<&FillMap>) {
        (&mut self.table, self.fill.as_deref())
    }

    pub(super) fn no_entry_written(&self) -> bool {
        self.table.allocated_bytes() == 0
    }

    /// Nothing mapped (no entry written, no fill).
    pub(super) fn is_empty(&self) -> bool {
        self.fill.is_none() && self.table.allocated_bytes() == 0
    }

    /// The fill's formula, when the drive was filled in order.
    pub(super) fn fill(&self) -> Option<&FillMap> {
        self.fill.as_deref()
    }

    /// Map the pages of `fill` by its formula.
    pub(super) fn install_fill(&mut self, fill: FillMap) {
        let chunks = self.table.chunk_count();
        self.fill_chunks = vec![0; chunks.div_ceil(64)];
        let mut mark = |lpn: u64| {
            let c = (lpn >> CHUNK_BITS) as usize;
            self.fill_chunks[c / 64] |= 1 << (c % 64);
        };
        let written = fill.written();
        for (w, &word) in written.words().iter().enumerate() {
            // A chunk is a whole number of words (CHUNK is a multiple of 64).
            if word != 0 {
                mark(w as u64 * 64);
            }
        }
        self.fill = Some(Box::new(fill));
    }

    /// Whether chunk `c` of the table holds a page of the fill.
    pub(super) fn holds_fill_page(&self, c: usize) -> bool {
        self.fill_chunks
            .get(c / 64)
            .is_some_and(|bits| bits & (1 << (c % 64)) != 0)
    }

    /// Bytes of the map's chunks, counting those holding fill pages as allocated: the map a
    /// page-by-page fill builds, which `memory.mapping_bytes` reports whatever the form.
    pub fn allocated_bytes(&self) -> u64 {
        if self.fill.is_none() {
            return self.table.allocated_bytes();
        }
        let chunks = (0..self.table.chunk_count())
            .filter(|&c| {
                self.table.is_allocated(c) || self.fill_chunks[c / 64] & (1 << (c % 64)) != 0
            })
            .count();
        (chunks * CHUNK * 4) as u64
    }

    /// Every mapped logical page, in order. After a fill this tests every logical page (the
    /// fill's set is built first, a bit per logical page): it runs once, when a cached
    /// mapping table starts.
    pub fn mapped_lpns(&self) -> impl Iterator<Item = u64> + '_ {
        match self.fill.as_deref() {
            None => Mapped::Written(self.table.nonzero_indices()),
            Some(fill) => {
                let written = fill.written();
                Mapped::Filled(
                    (0..self.logical_pages)
                        .filter(move |&lpn| written.contains(lpn) || self.table.get(lpn) != 0),
                )
            }
        }
    }

    /// For each group of `group_pages` logical pages in order (the last may be shorter),
    /// whether any of its pages is mapped: what a cached mapping table needs when it starts
    /// (which translation pages are on flash). Each group's scan stops at its first mapped
    /// page, where listing every mapped page ([`PageMap::mapped_lpns`]) reads the whole table.
    pub fn mapped_groups(&self, group_pages: u64) -> Vec<bool> {
        let groups = self.logical_pages.div_ceil(group_pages) as usize;
        if self.fill.is_some() {
            let mut mapped = vec![false; groups];
            for lpn in self.mapped_lpns() {
                mapped[(lpn / group_pages) as usize] = true;
            }
            return mapped;
        }
        (0..groups as u64)
            .map(|g| {
                let start = g * group_pages;
                let end = (start + group_pages).min(self.logical_pages);
                self.table.any_nonzero(start..end)
            })
            .collect()
    }

    /// See [`ChunkedTable::prefetch`].
    pub fn prefetch(&self, lpn: u64) {
        self.table.prefetch(lpn);
    }
}

/// The mapped pages of a map without a fill (its written entries) or with one.
enum Mapped<W, F> {
    Written(W),
    Filled(F),
}

impl<W: Iterator<Item = u64>, F: Iterator<Item = u64>> Iterator for Mapped<W, F> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        match self {
            Mapped::Written(w) => w.next(),
            Mapped::Filled(f) => f.next(),
        }
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

    #[test]
    fn chunks_from_several_blocks_keep_their_values() {
        // More chunks than one 2 MiB block holds, written out of order.
        let mut table = ChunkedTable::new((3 * BLOCK_CHUNKS * CHUNK) as u64);
        let indices: Vec<u64> = (0..3 * BLOCK_CHUNKS as u64)
            .rev()
            .map(|c| (c << CHUNK_BITS) + c * 7 % CHUNK as u64)
            .collect();
        for (n, &i) in indices.iter().enumerate() {
            table.set(i, n as u32 + 1);
            table.set(i + 1, 0);
        }
        for (n, &i) in indices.iter().enumerate() {
            assert_eq!(table.get(i), n as u32 + 1);
            assert_eq!(table.get(i + 1), 0);
        }
        let mut sorted = indices.clone();
        sorted.sort_unstable();
        assert_eq!(table.nonzero_indices().collect::<Vec<_>>(), sorted);
        // Ranges within a chunk and across chunks (unallocated ones too) agree with the list.
        for (start, len) in [(0, 1), (5, 3 * CHUNK as u64), (CHUNK as u64 - 2, 4), (7, 9)] {
            let listed = sorted.iter().any(|&i| i >= start && i < start + len);
            assert_eq!(
                table.any_nonzero(start..start + len),
                listed,
                "{start} {len}"
            );
        }
        assert_eq!(
            table.allocated_bytes(),
            (3 * BLOCK_CHUNKS * CHUNK * 4) as u64
        );
    }
}
