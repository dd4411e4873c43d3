//! Blocks of one plane: free list with dynamic wear levelling, active write block, and full
//! blocks indexed by valid-page count so the greedy victim is found without a scan.

use std::collections::BTreeSet;

use super::free_blocks::FreeBlocks;

/// Marker in the reverse map: the physical page holds no valid data.
pub const INVALID: u32 = u32::MAX;

/// End of an intrusive list.
pub(super) const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    Free,
    /// Receiving writes.
    Active,
    /// Fully written; a garbage-collection candidate.
    Full,
    /// A garbage-collection victim whose pages have moved, waiting for its erase to complete
    /// (`ftl.gc_block_release = "erase_done"` only).
    Collecting,
    /// Held out of the free pool and never written (`ftl.translation_reserved_blocks_per_plane`).
    Reserved,
    /// A garbage-collection victim whose pages are being moved, erased right after
    /// (`ftl.gc_block_release = "translation"`): off the victim lists meanwhile.
    Moving,
}

/// Which open block of a plane a page goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frontier {
    Normal,
    /// Pages moved by garbage collection (`ftl.gc_separate_write_block`).
    Gc,
}

#[derive(Debug)]
pub struct Block {
    pub erase_count: u32,
    pub valid_pages: u32,
    pub next_page: u32,
    pub state: BlockState,
    /// Logical page held by each physical page (or [`INVALID`]); allocated when the block is
    /// written, freed when it is full and holds no valid page any more, so blocks without
    /// valid data cost no reverse-map memory. Logical page numbers fit
    /// in `u32` because physical pages do (checked by the geometry).
    pub reverse: Option<Box<[u32]>>,
    /// Neighbours in the list of full blocks with the same valid-page count.
    pub(super) prev: u32,
    pub(super) next: u32,
}

impl Block {
    /// A full block of the in-order fill whose reverse map is not materialised yet: its
    /// logical pages follow from the fill's formula (ftl/fill.rs). The only blocks with valid
    /// pages and no reverse map.
    #[inline]
    pub fn holds_fill(&self) -> bool {
        self.reverse.is_none() && self.valid_pages > 0
    }
}

#[derive(Debug)]
pub struct Plane {
    pub blocks: Vec<Block>,
    /// Free blocks by (speed key, erase count, block): without variation-aware choice the
    /// speed key is 0, so least-erased first (dynamic wear levelling), ties by block number.
    /// With it, fastest first (see [`Plane::allocate_page_in`]).
    pub(super) free: FreeBlocks,
    /// Under speed ordering, the same free blocks by (erase count, block): a write that does
    /// not want a fast block opens the least-erased one, as without the choice.
    pub(super) free_by_wear: BTreeSet<(u32, u32)>,
    /// Under speed ordering, each block's speed key as filed in `free`.
    pub(super) speed_keys: Vec<u32>,
    pub active: Option<u32>,
    /// Open block of pages moved by garbage collection (`ftl.gc_separate_write_block` only).
    pub active_gc: Option<u32>,
    /// Blocks opened so far (free blocks taken by any stream).
    pub opened_blocks: u64,
    /// Victims whose erase has not completed yet (`ftl.gc_block_release = "erase_done"`).
    pub collecting: u32,
    /// Variation-aware choice: a block is opened from the fast or the slow end of the free set.
    pub(super) speed_ordered: bool,
    pub(super) pages_per_block: u32,
    /// Full blocks by valid-page count: head and tail of a list each, oldest entry first.
    pub(super) bucket_head: Vec<u32>,
    pub(super) bucket_tail: Vec<u32>,
    /// The reverse map a block last gave up (its valid data gone), for the next block opened:
    /// an allocation and a free fewer a block (aging opens about 50 k blocks a round), and a
    /// plane's maps stay in the allocator arena they came from, whichever thread ages the
    /// plane (ftl/aging.rs, `on_threads`). Not state: a snapshot leaves it out.
    pub(super) spare_reverse: Option<Box<[u32]>>,
}

/// A reverse map for a block opened: `spare` (refilled) when there is one, else a new one.
/// Once a block, so out of line.
#[inline(never)]
fn new_reverse(spare: &mut Option<Box<[u32]>>, pages_per_block: u32) -> Box<[u32]> {
    match spare.take() {
        Some(mut reverse) if reverse.len() == pages_per_block as usize => {
            reverse.fill(INVALID);
            reverse
        }
        _ => vec![INVALID; pages_per_block as usize].into_boxed_slice(),
    }
}

impl Plane {
    /// Bytes a plane holds for its records: the block records, the free list (a B-tree: about
    /// twice its 12-byte entries; a new plane's is a range, but erased blocks go into the
    /// tree, so this is what it may come to) and the valid-count buckets. Reverse maps come
    /// later, per block written.
    pub fn upfront_bytes(blocks: u32, pages_per_block: u32) -> u64 {
        std::mem::size_of::<Plane>() as u64
            + u64::from(blocks) * (std::mem::size_of::<Block>() as u64 + 24)
            + 2 * (u64::from(pages_per_block) + 1) * 4
    }

    pub fn new(blocks: u32, pages_per_block: u32) -> Self {
        Plane {
            blocks: (0..blocks)
                .map(|_| Block {
                    erase_count: 0,
                    valid_pages: 0,
                    next_page: 0,
                    state: BlockState::Free,
                    reverse: None,
                    prev: NONE,
                    next: NONE,
                })
                .collect(),
            free: FreeBlocks::all_fresh(blocks),
            free_by_wear: BTreeSet::new(),
            speed_keys: Vec::new(),
            active: None,
            active_gc: None,
            opened_blocks: 0,
            collecting: 0,
            speed_ordered: false,
            pages_per_block,
            bucket_head: vec![NONE; pages_per_block as usize + 1],
            bucket_tail: vec![NONE; pages_per_block as usize + 1],
            spare_reverse: None,
        }
    }

    /// Start loading what invalidating `page` of full block `block_index` touches besides its
    /// record (loaded by now): the reverse-map entry, and the records of its neighbours in its
    /// valid-count list and of the tail of the list one lower, which it moves to. A hint.
    pub fn prefetch_invalidation(&self, block_index: u32, page: u32) {
        let Some(block) = self.blocks.get(block_index as usize) else {
            return;
        };
        if let Some(entry) = block.reverse.as_ref().and_then(|r| r.get(page as usize)) {
            super::slot_index::prefetch(entry);
        }
        if block.state != BlockState::Full {
            return;
        }
        let lower = (block.valid_pages as usize).checked_sub(1);
        let tail = lower.and_then(|v| self.bucket_tail.get(v)).copied();
        for neighbour in [block.prev, block.next, tail.unwrap_or(NONE)] {
            if let Some(record) = self.blocks.get(neighbour as usize) {
                super::slot_index::prefetch(record);
            }
        }
    }

    pub fn free_blocks(&self) -> u32 {
        self.free.len() as u32
    }

    /// Pages that can still be written: the free blocks' and the open blocks' rest.
    pub fn free_pages(&self) -> u64 {
        let open_rest = [self.active, self.active_gc]
            .into_iter()
            .flatten()
            .map(|b| u64::from(self.pages_per_block - self.blocks[b as usize].next_page))
            .sum::<u64>();
        u64::from(self.free_blocks()) * u64::from(self.pages_per_block) + open_rest
    }

    /// Append full block `b` to the list of its valid-page count.
    fn bucket_push(&mut self, b: u32) {
        let v = self.blocks[b as usize].valid_pages as usize;
        let tail = self.bucket_tail[v];
        self.blocks[b as usize].prev = tail;
        self.blocks[b as usize].next = NONE;
        match tail {
            NONE => self.bucket_head[v] = b,
            t => self.blocks[t as usize].next = b,
        }
        self.bucket_tail[v] = b;
    }

    /// Unlink full block `b` from the list of its valid-page count.
    fn bucket_remove(&mut self, b: u32) {
        let v = self.blocks[b as usize].valid_pages as usize;
        let (prev, next) = (self.blocks[b as usize].prev, self.blocks[b as usize].next);
        self.join_neighbours(v, prev, next);
        self.blocks[b as usize].prev = NONE;
        self.blocks[b as usize].next = NONE;
    }

    /// Link `prev` and `next`, the neighbours of a block leaving list `v`, to each other (or
    /// make them the list's ends).
    #[inline]
    fn join_neighbours(&mut self, v: usize, prev: u32, next: u32) {
        match prev {
            NONE => self.bucket_head[v] = next,
            p => self.blocks[p as usize].next = next,
        }
        match next {
            NONE => self.bucket_tail[v] = prev,
            n => self.blocks[n as usize].prev = prev,
        }
    }

    /// Move full block `b` from the list of its valid-page count to the end of the list one
    /// lower, counting one valid page less: [`Plane::bucket_remove`], the decrement and
    /// [`Plane::bucket_push`] in one (every invalidated page of a full block takes this step;
    /// written out, it saves aging the unlinked block's cleared links and a call).
    #[inline]
    fn bucket_move_down(&mut self, b: u32) {
        let block = &mut self.blocks[b as usize];
        let v = block.valid_pages as usize;
        let (prev, next) = (block.prev, block.next);
        let tail = self.bucket_tail[v - 1];
        block.valid_pages -= 1;
        block.prev = tail;
        block.next = NONE;
        self.join_neighbours(v, prev, next);
        // The lower list's tail is not `b`'s old neighbour: `b` was in another list.
        match tail {
            NONE => self.bucket_head[v - 1] = b,
            t => self.blocks[t as usize].next = b,
        }
        self.bucket_tail[v - 1] = b;
    }

    /// Order free blocks by `speed_key(block)` (smaller = faster) before erase count: a block
    /// opened for a write that wants a fast block is then the fastest free block; any other
    /// write still opens the least-erased one.
    pub fn order_by_speed(&mut self, speed_key: impl Fn(u32) -> u32) {
        self.speed_ordered = true;
        self.speed_keys = (0..self.blocks.len() as u32).map(&speed_key).collect();
        self.free_by_wear = self.free.iter().map(|(_, erases, b)| (erases, b)).collect();
        self.free = FreeBlocks::from_entries(
            self.free
                .iter()
                .map(|(_, erases, b)| (speed_key(b), erases, b)),
        );
    }

    /// Take a free block out of the pool: the fastest when `fast` (under speed ordering), else
    /// the least-erased.
    fn take_free(&mut self, fast: bool) -> Option<u32> {
        if !self.speed_ordered {
            return self.free.pop_first().map(|(_, _, b)| b);
        }
        if fast {
            let (_, erases, b) = self.free.pop_first()?;
            self.free_by_wear.remove(&(erases, b));
            Some(b)
        } else {
            let (erases, b) = self.free_by_wear.pop_first()?;
            self.free.remove(&(self.speed_keys[b as usize], erases, b));
            Some(b)
        }
    }

    /// Take the next free page of the active block, opening the least-erased free block when
    /// needed. Returns (block, page) or `None` when the plane has no free page at all.
    #[inline]
    pub fn allocate_page(&mut self, lpn: u32) -> Option<(u32, u32)> {
        self.allocate_page_in(lpn, false)
    }

    /// As [`Plane::allocate_page`], for a write that wants a fast block when `fast`: if the
    /// write opens a block, it is the fastest free one, else the least-erased. One open block
    /// per plane either way (a second one per plane costs garbage collection a block's worth
    /// of victims in every plane; docs/models/vios.md). Without speed ordering `fast` changes
    /// nothing.
    #[inline]
    pub fn allocate_page_in(&mut self, lpn: u32, fast: bool) -> Option<(u32, u32)> {
        // The usual page, inline: the open block's next, not its last (aging places ~60 M
        // of these).
        if let Some(b) = self.active {
            let block = &mut self.blocks[b as usize];
            let page = block.next_page;
            if page + 1 < self.pages_per_block {
                if let Some(reverse) = block.reverse.as_mut() {
                    reverse[page as usize] = lpn;
                    block.valid_pages += 1;
                    block.next_page += 1;
                    return Some((b, page));
                }
            }
        }
        self.allocate_in_frontier(lpn, Frontier::Normal, fast)
    }

    /// Take the next free page of the garbage-collection open block (opening one as needed).
    pub fn allocate_gc_page(&mut self, lpn: u32) -> Option<(u32, u32)> {
        self.allocate_in_frontier(lpn, Frontier::Gc, false)
    }

    fn open_block(&mut self, frontier: Frontier) -> &mut Option<u32> {
        match frontier {
            Frontier::Normal => &mut self.active,
            Frontier::Gc => &mut self.active_gc,
        }
    }

    /// Open a free block for `frontier`: a write that wants a fast block takes the fastest
    /// free one (under speed ordering); any other the least-erased (dynamic wear levelling).
    /// Once a block's worth of pages, so out of line.
    #[inline(never)]
    fn open_free_block(&mut self, frontier: Frontier, fast: bool) -> Option<u32> {
        let b = self.take_free(fast)?;
        self.blocks[b as usize].state = BlockState::Active;
        self.opened_blocks += 1;
        *self.open_block(frontier) = Some(b);
        Some(b)
    }

    /// Open block `b` of `frontier` took its last page: full, a garbage-collection candidate.
    /// Once a block's worth of pages, so out of line.
    #[inline(never)]
    fn close_full(&mut self, b: u32, frontier: Frontier) {
        self.blocks[b as usize].state = BlockState::Full;
        *self.open_block(frontier) = None;
        self.bucket_push(b);
    }

    #[inline(never)]
    fn allocate_in_frontier(
        &mut self,
        lpn: u32,
        frontier: Frontier,
        fast: bool,
    ) -> Option<(u32, u32)> {
        let block_index = match *self.open_block(frontier) {
            Some(b) => b,
            None => self.open_free_block(frontier, fast)?,
        };
        let pages_per_block = self.pages_per_block;
        let spare = &mut self.spare_reverse;
        let block = &mut self.blocks[block_index as usize];
        let page = block.next_page;
        let reverse = block
            .reverse
            .get_or_insert_with(|| new_reverse(spare, pages_per_block));
        reverse[page as usize] = lpn;
        block.valid_pages += 1;
        block.next_page += 1;
        if block.next_page == pages_per_block {
            self.close_full(block_index, frontier);
        }
        Some((block_index, page))
    }

    /// Mark `page` of `block_index` invalid. Returns false, changing nothing, when the block
    /// holds fill pages as a formula ([`Block::holds_fill`]): its reverse map must be
    /// materialised first (`Ftl::materialise_block`).
    pub fn invalidate(&mut self, block_index: u32, page: u32) -> bool {
        let block = &mut self.blocks[block_index as usize];
        let Some(reverse) = &mut block.reverse else {
            return block.valid_pages == 0;
        };
        if reverse[page as usize] == INVALID {
            return true;
        }
        reverse[page as usize] = INVALID;
        match block.state {
            BlockState::Full => {
                if block.valid_pages == 1 {
                    // A full block without valid data needs no reverse map until it is written
                    // again: memory follows the valid data, not the pages ever written.
                    self.spare_reverse = block.reverse.take();
                }
                self.bucket_move_down(block_index);
            }
            BlockState::Moving => {
                block.valid_pages -= 1;
                if block.valid_pages == 0 {
                    self.spare_reverse = block.reverse.take();
                }
            }
            _ => block.valid_pages -= 1,
        }
        true
    }

    /// Give full block `block`, which holds fill pages as a formula ([`Block::holds_fill`]),
    /// its reverse map before a page of it is invalidated: `lpns` writes the logical pages of
    /// its written pages (`FillMap::block_lpns`), the rest stay [`INVALID`].
    pub(super) fn materialise(&mut self, block: u32, lpns: impl FnOnce(&mut [u32])) {
        let mut reverse = vec![INVALID; self.pages_per_block as usize].into_boxed_slice();
        let written = (self.blocks[block as usize].next_page as usize).min(reverse.len());
        lpns(&mut reverse[..written]);
        self.blocks[block as usize].reverse = Some(reverse);
    }

    /// Fill a plane fresh from the factory (nothing written, reserved blocks aside) with
    /// `pages` pages, as that many calls of [`Plane::allocate_page`] would, except that full
    /// blocks keep no reverse map: their logical pages follow from the fill (ftl/fill.rs). A
    /// last, partial block stays open, its reverse map written by `partial(block, pages)`.
    pub(super) fn fill_fresh(&mut self, pages: u64, partial: impl FnOnce(u32, &mut [u32])) {
        let ppb = self.pages_per_block;
        let first = self.blocks.len() as u32 - self.free_blocks();
        let full = (pages / u64::from(ppb)) as u32;
        let rest = (pages % u64::from(ppb)) as u32;
        for b in first..first + full {
            let block = &mut self.blocks[b as usize];
            block.state = BlockState::Full;
            block.valid_pages = ppb;
            block.next_page = ppb;
            self.bucket_push(b);
        }
        let mut opened = full;
        if rest > 0 {
            let b = first + full;
            let mut reverse = vec![INVALID; ppb as usize].into_boxed_slice();
            partial(b, &mut reverse[..rest as usize]);
            let block = &mut self.blocks[b as usize];
            block.state = BlockState::Active;
            block.valid_pages = rest;
            block.next_page = rest;
            block.reverse = Some(reverse);
            self.active = Some(b);
            opened += 1;
        }
        self.opened_blocks += u64::from(opened);
        // The free set held every block from `first` on, in number order.
        self.free.drop_below((0, 0, first + opened));
    }

    /// Greedy victim: a full block with the fewest valid pages, if collecting it frees space
    /// (it has at least one invalid page). Among equals, the one that reached that count
    /// first, so equally good victims take turns and wear evens out.
    pub fn greedy_victim(&self) -> Option<u32> {
        self.bucket_head[..self.pages_per_block as usize]
            .iter()
            .copied()
            .find(|b| *b != NONE)
    }

    /// Take `count` free blocks out of the pool for good (least-erased first, i.e. the lowest
    /// numbers on a new plane).
    pub fn reserve_blocks(&mut self, count: u32) {
        for _ in 0..count {
            if let Some(b) = self.take_free(false) {
                self.blocks[b as usize].state = BlockState::Reserved;
            }
        }
    }

    /// Make full block `block_index` a victim whose pages are moved now and which is erased
    /// right after. It leaves the victim lists at once rather than one list lower per page
    /// moved: nothing reads the lists before the erase, and a list entry removed later leaves
    /// its list as one never added, so the lists end as before, two random block records
    /// fewer touched per page moved.
    pub fn begin_moving(&mut self, block_index: u32) {
        debug_assert_eq!(self.blocks[block_index as usize].state, BlockState::Full);
        self.bucket_remove(block_index);
        self.blocks[block_index as usize].state = BlockState::Moving;
    }

    /// The logical pages of `block_index`'s valid pages, a victim [`Plane::begin_moving`]
    /// made, in page order, written into `scratch` (grown as needed, its other entries left
    /// as they are); the block is left as invalidating each of them leaves it (no valid page,
    /// no reverse map), for a caller that moves them all.
    pub(super) fn drain_moving<'a>(
        &mut self,
        block_index: u32,
        scratch: &'a mut Vec<u32>,
    ) -> &'a [u32] {
        let block = &mut self.blocks[block_index as usize];
        debug_assert_eq!(block.state, BlockState::Moving);
        block.valid_pages = 0;
        let Some(reverse) = block.reverse.take() else {
            return &[];
        };
        // Without a branch a page: a victim's valid pages lie at random, so a filter's branch
        // mispredicted about every other page (a third of aging's plane kernel). Each slot is
        // written before it counts, so `scratch` is not cleared first (a memset a victim).
        if scratch.len() < reverse.len() {
            scratch.resize(reverse.len(), INVALID);
        }
        let mut kept = 0;
        for &lpn in reverse.iter() {
            if let Some(slot) = scratch.get_mut(kept) {
                *slot = lpn;
            }
            kept += usize::from(lpn != INVALID);
        }
        self.spare_reverse = Some(reverse);
        &scratch[..kept]
    }

    /// Place `lpns` one after another as [`Plane::allocate_page`] would, a block's worth at a
    /// time, telling `placed` each (logical page, block, page). False when the plane runs out
    /// of free blocks first (the pages placed so far stay placed).
    pub(super) fn append_run(
        &mut self,
        lpns: &[u32],
        mut placed: impl FnMut(u32, u32, u32),
    ) -> bool {
        let ppb = self.pages_per_block;
        let mut rest = lpns;
        while !rest.is_empty() {
            let b = match self.active {
                Some(b) => b,
                None => match self.open_free_block(Frontier::Normal, false) {
                    Some(b) => b,
                    None => return false,
                },
            };
            let spare = &mut self.spare_reverse;
            let block = &mut self.blocks[b as usize];
            let first = block.next_page;
            let take = ((ppb - first) as usize).min(rest.len());
            let reverse = block.reverse.get_or_insert_with(|| new_reverse(spare, ppb));
            reverse[first as usize..first as usize + take].copy_from_slice(&rest[..take]);
            for (page, &lpn) in (first..).zip(&rest[..take]) {
                placed(lpn, b, page);
            }
            block.valid_pages += take as u32;
            block.next_page += take as u32;
            if block.next_page == ppb {
                self.close_full(b, Frontier::Normal);
            }
            rest = &rest[take..];
        }
        true
    }

    /// Make full block `block_index` a victim under collection: no longer a candidate, not
    /// free until [`Plane::erase`] (its pages are moved by the caller).
    pub fn begin_collection(&mut self, block_index: u32) {
        debug_assert_eq!(self.blocks[block_index as usize].state, BlockState::Full);
        self.bucket_remove(block_index);
        self.blocks[block_index as usize].state = BlockState::Collecting;
        self.collecting += 1;
    }

    /// Erase a full block whose valid pages have all been moved.
    pub fn erase(&mut self, block_index: u32) {
        self.erase_with_speed(block_index, 0);
    }

    /// Erase, filing the block among free blocks under `speed_key` (its speed after the
    /// erase; ignored without speed ordering).
    pub fn erase_with_speed(&mut self, block_index: u32, speed_key: u32) {
        let speed_key = if self.speed_ordered { speed_key } else { 0 };
        debug_assert_eq!(self.blocks[block_index as usize].valid_pages, 0);
        match self.blocks[block_index as usize].state {
            BlockState::Full => self.bucket_remove(block_index),
            BlockState::Collecting => self.collecting -= 1,
            _ => {}
        }
        let block = &mut self.blocks[block_index as usize];
        block.erase_count += 1;
        block.next_page = 0;
        block.state = BlockState::Free;
        if let Some(reverse) = &mut block.reverse {
            reverse.fill(INVALID);
        }
        let erases = block.erase_count;
        self.free.insert((speed_key, erases, block_index));
        if self.speed_ordered {
            self.speed_keys[block_index as usize] = speed_key;
            self.free_by_wear.insert((erases, block_index));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The indexed victim must be a block of minimum valid count, as a full scan finds.
    #[test]
    fn victim_has_the_fewest_valid_pages() {
        let mut plane = Plane::new(8, 4);
        for lpn in 0..24 {
            plane.allocate_page(lpn).unwrap();
        }
        // Blocks 0..5 are full; invalidate a pattern of pages.
        for (block, page) in [
            (0, 0),
            (0, 1),
            (1, 3),
            (2, 0),
            (2, 1),
            (2, 2),
            (4, 2),
            (5, 0),
            (5, 1),
        ] {
            plane.invalidate(block, page);
            plane.invalidate(block, page); // twice is harmless
        }
        let victim = plane.greedy_victim().unwrap();
        assert_eq!(victim, 2);
        assert_eq!(plane.blocks[2].valid_pages, 1);
        // Empty block 2 and erase it: next victims are 0 then 5 (2 valid each, 0 first).
        for page in 3..4 {
            plane.invalidate(2, page);
        }
        plane.erase(2);
        assert_eq!(plane.greedy_victim(), Some(0));
        let min = plane
            .blocks
            .iter()
            .filter(|b| b.state == BlockState::Full)
            .map(|b| b.valid_pages)
            .min();
        assert_eq!(plane.blocks[0].valid_pages, min.unwrap());
    }

    /// The VIOS paper's Fig. 4: three conflicting sub-requests of one chip, three blocks with
    /// one empty page each (fast 150 us, medium 180 us, slow 210 us). Variation-aware choice
    /// gives the two that still have others waiting behind them the faster blocks and the last
    /// the slow one: (150 + 330 + 540) / 3 = 340 us; in block order (medium, slow, fast) it is
    /// (180 + 390 + 540) / 3 = 370 us.
    #[test]
    fn paper_figure4_allocation_example() {
        // Block numbers give the "in order" sequence: medium, slow, fast.
        let latency_us = [180u64, 210, 150];
        let speed_key = |b: u32| [1, 2, 0][b as usize];
        let mean_response = |blocks: &[u32]| {
            let mut done = 0;
            let mut sum = 0;
            for &b in blocks {
                done += latency_us[b as usize]; // one chip: programs run one after another
                sum += done;
            }
            sum as f64 / blocks.len() as f64
        };
        // Sub-request i still has 2 - i others waiting behind it: conflict while any wait.
        let conflicts = [true, true, false];

        let mut aware = Plane::new(3, 1);
        aware.order_by_speed(speed_key);
        let chosen: Vec<u32> = (0..3)
            .map(|i| aware.allocate_page_in(i, conflicts[i as usize]).unwrap().0)
            .collect();
        assert_eq!(chosen, [2, 0, 1], "fast, medium, slow");
        assert_eq!(mean_response(&chosen), 340.0);
        assert_eq!(
            aware.allocate_page_in(3, true),
            None,
            "no free page is left"
        );

        let mut in_order = Plane::new(3, 1);
        let chosen: Vec<u32> = (0..3)
            .map(|i| {
                in_order
                    .allocate_page_in(i, conflicts[i as usize])
                    .unwrap()
                    .0
            })
            .collect();
        assert_eq!(chosen, [0, 1, 2]);
        assert_eq!(mean_response(&chosen), 370.0);
    }

    /// Speed-ordered allocation only ever opens free blocks, and a block erased with a slower
    /// speed is filed at its new place.
    #[test]
    fn speed_ordered_allocation_takes_only_free_blocks() {
        let mut plane = Plane::new(6, 2);
        let keys = [3u32, 0, 5, 1, 4, 2];
        plane.order_by_speed(|b| keys[b as usize]);
        let mut taken = Vec::new();
        for lpn in 0..12u32 {
            let free_before: Vec<u32> = plane
                .blocks
                .iter()
                .enumerate()
                .filter(|(_, b)| b.state == BlockState::Free)
                .map(|(i, _)| i as u32)
                .collect();
            let open = [plane.active];
            let (b, _) = plane.allocate_page_in(lpn, lpn % 3 == 0).unwrap();
            assert!(
                open.contains(&Some(b)) || free_before.contains(&b),
                "block {b} was neither open nor free"
            );
            taken.push(b);
        }
        assert_eq!(plane.allocate_page_in(99, false), None);
        // Page 0 wants a fast block and opens block 1 (key 0); page 1 fills that open block
        // (one open block per plane); page 2 does not want a fast block: it opens the
        // least-erased, block 0 (all have 0 erases: lowest number), and page 3 (fast) fills it.
        assert_eq!(taken[..4], [1, 1, 0, 0]);
        // Page 4 opens the least-erased left (2); page 6 (fast) the fastest left (3, key 1).
        assert_eq!(taken[4], 2);
        assert_eq!(taken[6], 3);
        // Empty block 1 and erase it (now the only free block): the next write opens it.
        plane.invalidate(1, 0);
        plane.invalidate(1, 1);
        plane.erase_with_speed(1, 9);
        assert_eq!(plane.allocate_page_in(100, false), Some((1, 0)));
    }
}
