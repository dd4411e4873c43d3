//! Blocks of one plane: free list with dynamic wear levelling, active write block, and full
//! blocks indexed by valid-page count so the greedy victim is found without a scan.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Marker in the reverse map: the physical page holds no valid data.
pub const INVALID: u32 = u32::MAX;

/// End of an intrusive list.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    Free,
    /// Receiving writes.
    Active,
    /// Fully written; a garbage-collection candidate.
    Full,
}

#[derive(Debug)]
pub struct Block {
    pub erase_count: u32,
    pub valid_pages: u32,
    pub next_page: u32,
    pub state: BlockState,
    /// Logical page held by each physical page (or [`INVALID`]); allocated when the block is
    /// first written, so untouched blocks cost no reverse-map memory. Logical page numbers fit
    /// in `u32` because physical pages do (checked by the geometry).
    pub reverse: Option<Box<[u32]>>,
    /// Neighbours in the list of full blocks with the same valid-page count.
    prev: u32,
    next: u32,
}

#[derive(Debug)]
pub struct Plane {
    pub blocks: Vec<Block>,
    /// Free blocks, least-erased first (dynamic wear levelling); ties by block number.
    free: BinaryHeap<Reverse<(u32, u32)>>,
    pub active: Option<u32>,
    pages_per_block: u32,
    /// Full blocks by valid-page count: head and tail of a list each, oldest entry first.
    bucket_head: Vec<u32>,
    bucket_tail: Vec<u32>,
}

impl Plane {
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
            free: (0..blocks).map(|b| Reverse((0, b))).collect(),
            active: None,
            pages_per_block,
            bucket_head: vec![NONE; pages_per_block as usize + 1],
            bucket_tail: vec![NONE; pages_per_block as usize + 1],
        }
    }

    pub fn free_blocks(&self) -> u32 {
        self.free.len() as u32
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
        match prev {
            NONE => self.bucket_head[v] = next,
            p => self.blocks[p as usize].next = next,
        }
        match next {
            NONE => self.bucket_tail[v] = prev,
            n => self.blocks[n as usize].prev = prev,
        }
        self.blocks[b as usize].prev = NONE;
        self.blocks[b as usize].next = NONE;
    }

    /// Take the next free page of the active block, opening the least-erased free block when
    /// needed. Returns (block, page) or `None` when the plane has no free page at all.
    pub fn allocate_page(&mut self, lpn: u32) -> Option<(u32, u32)> {
        let block_index = match self.active {
            Some(b) => b,
            None => {
                let Reverse((_, b)) = self.free.pop()?;
                self.blocks[b as usize].state = BlockState::Active;
                self.active = Some(b);
                b
            }
        };
        let pages_per_block = self.pages_per_block;
        let block = &mut self.blocks[block_index as usize];
        let page = block.next_page;
        let reverse = block
            .reverse
            .get_or_insert_with(|| vec![INVALID; pages_per_block as usize].into_boxed_slice());
        reverse[page as usize] = lpn;
        block.valid_pages += 1;
        block.next_page += 1;
        if block.next_page == pages_per_block {
            block.state = BlockState::Full;
            self.active = None;
            self.bucket_push(block_index);
        }
        Some((block_index, page))
    }

    pub fn invalidate(&mut self, block_index: u32, page: u32) {
        let block = &mut self.blocks[block_index as usize];
        let Some(reverse) = &mut block.reverse else {
            return;
        };
        if reverse[page as usize] == INVALID {
            return;
        }
        reverse[page as usize] = INVALID;
        if block.state == BlockState::Full {
            self.bucket_remove(block_index);
            self.blocks[block_index as usize].valid_pages -= 1;
            self.bucket_push(block_index);
        } else {
            block.valid_pages -= 1;
        }
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

    /// Erase a full block whose valid pages have all been moved.
    pub fn erase(&mut self, block_index: u32) {
        debug_assert_eq!(self.blocks[block_index as usize].valid_pages, 0);
        if self.blocks[block_index as usize].state == BlockState::Full {
            self.bucket_remove(block_index);
        }
        let block = &mut self.blocks[block_index as usize];
        block.erase_count += 1;
        block.next_page = 0;
        block.state = BlockState::Free;
        if let Some(reverse) = &mut block.reverse {
            reverse.fill(INVALID);
        }
        self.free.push(Reverse((block.erase_count, block_index)));
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
}
