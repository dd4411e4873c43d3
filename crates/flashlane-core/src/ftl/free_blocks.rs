//! A plane's free blocks, ordered by (speed key, erase count, block).
//!
//! A B-tree set, except for the blocks not opened since the drive was new: those are the
//! range `fresh`, standing for the entries (0, 0, b). So a new plane is one range, not a tree
//! of all its blocks: on `ssdsim-platform`'s 1 M blocks, building and dropping those trees
//! took about 115 M instructions (6 % of a 200 k-request run) and 14 MB.
//!
//! Invariant: every entry of `tree` sorts after every fresh entry. An erased block goes back
//! with an erase count of at least 1, so it sorts after any (0, 0, b); anything else that
//! could break the order (a keying by speed, a snapshot's entries) puts every entry in the
//! tree first ([`FreeBlocks::materialise`]).

use std::collections::BTreeSet;
use std::ops::Range;

/// An entry: (speed key, erase count, block).
pub(super) type FreeEntry = (u32, u32, u32);

#[derive(Debug, Clone, Default)]
pub(super) struct FreeBlocks {
    /// Blocks never opened, each the entry (0, 0, b); all before `tree`'s entries.
    fresh: Range<u32>,
    tree: BTreeSet<FreeEntry>,
}

impl FreeBlocks {
    /// Every block of a new plane of `blocks` blocks.
    pub fn all_fresh(blocks: u32) -> Self {
        FreeBlocks {
            fresh: 0..blocks,
            tree: BTreeSet::new(),
        }
    }

    /// These entries, in no particular order (a snapshot's).
    pub fn from_entries(entries: impl IntoIterator<Item = FreeEntry>) -> Self {
        FreeBlocks {
            fresh: 0..0,
            tree: entries.into_iter().collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.fresh.len() + self.tree.len()
    }

    pub fn first(&self) -> Option<FreeEntry> {
        match self.fresh.is_empty() {
            false => Some((0, 0, self.fresh.start)),
            true => self.tree.first().copied(),
        }
    }

    pub fn last(&self) -> Option<FreeEntry> {
        match self.tree.last() {
            Some(&entry) => Some(entry),
            None if !self.fresh.is_empty() => Some((0, 0, self.fresh.end - 1)),
            None => None,
        }
    }

    pub fn pop_first(&mut self) -> Option<FreeEntry> {
        match self.fresh.next() {
            Some(b) => Some((0, 0, b)),
            None => self.tree.pop_first(),
        }
    }

    pub fn insert(&mut self, entry: FreeEntry) -> bool {
        if !self.fresh.is_empty() && entry <= (0, 0, self.fresh.end - 1) {
            // Not after every fresh entry (no erased block is: see the module's comment).
            self.materialise();
        }
        self.tree.insert(entry)
    }

    pub fn remove(&mut self, entry: &FreeEntry) -> bool {
        let &(speed, erases, b) = entry;
        if (speed, erases) == (0, 0) && self.fresh.contains(&b) {
            if b == self.fresh.start {
                self.fresh.start += 1;
                return true;
            }
            if b == self.fresh.end - 1 {
                self.fresh.end -= 1;
                return true;
            }
            self.materialise();
        }
        self.tree.remove(entry)
    }

    /// Keep only the entries from `at` on.
    pub fn drop_below(&mut self, at: FreeEntry) {
        let (speed, erases, b) = at;
        if (speed, erases) > (0, 0) {
            self.fresh = 0..0;
        } else {
            self.fresh.start = self.fresh.start.max(b).min(self.fresh.end);
        }
        self.tree = self.tree.split_off(&at);
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = FreeEntry> + '_ {
        self.fresh
            .clone()
            .map(|b| (0, 0, b))
            .chain(self.tree.iter().copied())
    }

    /// Put the fresh entries into the tree (before a change the range cannot hold).
    fn materialise(&mut self) {
        let fresh = std::mem::replace(&mut self.fresh, 0..0);
        self.tree.extend(fresh.map(|b| (0, 0, b)));
    }
}

/// Equal when they hold the same entries, however they are held.
impl PartialEq for FreeBlocks {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random operations on a plane of 300 blocks against a plain B-tree set holding every
    /// entry: erases (counts 1-3, speed keys 0-2), a few entries that sort among the fresh
    /// ones (the range must turn into tree entries), removals anywhere, `drop_below`.
    #[test]
    fn holds_what_a_b_tree_of_every_entry_holds() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(47);
        for round in 0..20 {
            let mut free = FreeBlocks::all_fresh(300);
            let mut shadow: BTreeSet<FreeEntry> = (0..300).map(|b| (0, 0, b)).collect();
            if round % 5 == 4 {
                let at = (0, 0, rng.random_range(0..300));
                free.drop_below(at);
                shadow = shadow.split_off(&at);
            }
            for step in 0..600 {
                match rng.random_range(0..10) {
                    0..=3 => assert_eq!(free.pop_first(), shadow.pop_first(), "step {step}"),
                    4..=6 => {
                        let entry = (
                            rng.random_range(0..3),
                            rng.random_range(1..4),
                            rng.random_range(0..300),
                        );
                        assert_eq!(free.insert(entry), shadow.insert(entry));
                    }
                    7 => {
                        // An entry among the fresh ones (not one an erase makes).
                        let entry = (0, 0, rng.random_range(0..300));
                        assert_eq!(free.insert(entry), shadow.insert(entry));
                    }
                    _ => {
                        let picked = shadow.iter().nth(rng.random_range(0..shadow.len().max(1)));
                        let entry = picked.copied().unwrap_or((0, 0, 0));
                        assert_eq!(free.remove(&entry), shadow.remove(&entry));
                    }
                }
                assert_eq!(free.len(), shadow.len());
                assert_eq!(free.first(), shadow.first().copied());
                assert_eq!(free.last(), shadow.last().copied());
            }
            assert!(free.iter().eq(shadow.iter().copied()), "round {round}");
            assert_eq!(free, FreeBlocks::from_entries(shadow.iter().copied()));
        }
    }

    #[test]
    fn dropping_below_an_entry_of_the_tree_drops_every_fresh_one() {
        let mut free = FreeBlocks::all_fresh(10);
        free.insert((0, 1, 3));
        free.insert((2, 1, 4));
        free.drop_below((0, 1, 4));
        assert_eq!(free.iter().collect::<Vec<_>>(), vec![(2, 1, 4)]);
        let mut free = FreeBlocks::all_fresh(10);
        free.drop_below((0, 0, 7));
        assert_eq!(
            free.iter().collect::<Vec<_>>(),
            vec![(0, 0, 7), (0, 0, 8), (0, 0, 9)]
        );
        free.drop_below((0, 0, 12));
        assert!(free.len() == 0 && free.first().is_none() && free.last().is_none());
    }
}
