//! Blocks of one plane: free list with dynamic wear levelling, active write block, greedy victim.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Marker in the reverse map: the physical page holds no valid data.
pub const INVALID: u32 = u32::MAX;

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
}

#[derive(Debug)]
pub struct Plane {
    pub blocks: Vec<Block>,
    /// Free blocks, least-erased first (dynamic wear levelling); ties by block number.
    free: BinaryHeap<Reverse<(u32, u32)>>,
    pub active: Option<u32>,
    pages_per_block: u32,
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
                })
                .collect(),
            free: (0..blocks).map(|b| Reverse((0, b))).collect(),
            active: None,
            pages_per_block,
        }
    }

    pub fn free_blocks(&self) -> u32 {
        self.free.len() as u32
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
        }
        Some((block_index, page))
    }

    pub fn invalidate(&mut self, block: u32, page: u32) {
        let block = &mut self.blocks[block as usize];
        if let Some(reverse) = &mut block.reverse {
            if reverse[page as usize] != INVALID {
                reverse[page as usize] = INVALID;
                block.valid_pages -= 1;
            }
        }
    }

    /// Greedy victim: the full block with the fewest valid pages, if collecting it frees space
    /// (it has at least one invalid page). Ties go to the least-erased block, then the lowest
    /// number, so equally good victims take turns and wear evens out.
    pub fn greedy_victim(&self) -> Option<u32> {
        let mut best: Option<(u32, u32, u32)> = None;
        for (index, block) in self.blocks.iter().enumerate() {
            let reclaimable =
                block.state == BlockState::Full && block.valid_pages < self.pages_per_block;
            let key = (block.valid_pages, block.erase_count, index as u32);
            if reclaimable && best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        best.map(|(_, _, index)| index)
    }

    /// Erase a block whose valid pages have all been moved.
    pub fn erase(&mut self, block_index: u32) {
        let block = &mut self.blocks[block_index as usize];
        debug_assert_eq!(block.valid_pages, 0);
        block.erase_count += 1;
        block.next_page = 0;
        block.state = BlockState::Free;
        if let Some(reverse) = &mut block.reverse {
            reverse.fill(INVALID);
        }
        self.free.push(Reverse((block.erase_count, block_index)));
    }
}
