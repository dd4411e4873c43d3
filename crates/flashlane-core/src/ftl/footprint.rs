//! The footprint: the set of logical pages a trace touches, which preconditioning writes
//! before the trace starts.

/// Set of logical pages a trace touches, one bit per logical page.
#[derive(Debug, Clone)]
pub struct Footprint {
    words: Vec<u64>,
    pages: u64,
}

impl Footprint {
    pub fn new(logical_pages: u64) -> Self {
        Footprint {
            words: vec![0; logical_pages.div_ceil(64) as usize],
            pages: 0,
        }
    }

    /// Mark `lpn`; returns false if it is past the end.
    pub fn insert(&mut self, lpn: u64) -> bool {
        let Some(word) = self.words.get_mut((lpn / 64) as usize) else {
            return false;
        };
        let bit = 1u64 << (lpn % 64);
        if *word & bit == 0 {
            *word |= bit;
            self.pages += 1;
        }
        true
    }

    /// Mark the `count` logical pages from `start` on, wrapping at `logical`, a word at a
    /// time.
    pub fn insert_wrapping(&mut self, start: u64, count: u64, logical: u64) {
        let end = start + count;
        let ranges = if end <= logical {
            [(start, end), (0, 0)]
        } else {
            [(start, logical), (0, end - logical)]
        };
        for (first, last) in ranges {
            let mut lpn = first;
            while lpn < last {
                let bits = (64 - lpn % 64).min(last - lpn);
                let mask = if bits == 64 {
                    u64::MAX
                } else {
                    ((1u64 << bits) - 1) << (lpn % 64)
                };
                self.words[(lpn / 64) as usize] |= mask;
                lpn += bits;
            }
        }
        self.pages = self.words.iter().map(|w| u64::from(w.count_ones())).sum();
    }

    /// Start loading the word of `lpn`'s bit (a performance hint).
    #[inline]
    pub fn prefetch(&self, lpn: u64) {
        if let Some(word) = self.words.get((lpn / 64) as usize) {
            super::slot_index::prefetch(word);
        }
    }

    pub fn contains(&self, lpn: u64) -> bool {
        self.words
            .get((lpn / 64) as usize)
            .is_some_and(|w| w & (1 << (lpn % 64)) != 0)
    }

    /// The set's bits, 64 logical pages a word (page `lpn` is bit `lpn % 64` of word
    /// `lpn / 64`).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Distinct logical pages marked.
    pub fn pages(&self) -> u64 {
        self.pages
    }

    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(|(i, w)| {
            let mut bits = *w;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as u64;
                bits &= bits - 1;
                Some(i as u64 * 64 + b)
            })
        })
    }
}
