//! Data patterns and `--verify` (as fio's verify does): every 512-byte block flashlane writes
//! carries a header (magic, its own block number, a version) and a payload generated from the
//! two, so a read can tell whether a block holds what flashlane wrote there, and which write.
//! A created target is filled with version 0; each write command gets the next version. With
//! `--verify` the replay also tracks, per block written, which versions may be on the medium
//! (writes in flight at once may land in either order) and checks every block it reads.

use std::collections::HashMap;

/// Bytes of one verified block (every direct-I/O alignment is a multiple of it).
pub const BLOCK_BYTES: u64 = 512;
const MAGIC: u64 = u64::from_le_bytes(*b"FLSHLANE");
const HEADER_BYTES: usize = 32;

fn mix(mut z: u64) -> u64 {
    // splitmix64's finaliser: a cheap, well-spread hash of (block, version).
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn payload_word(block: u64, version: u64, i: usize) -> u64 {
    mix(block
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(version.wrapping_mul(0xd1b5_4a32_d192_ed03))
        .wrapping_add(i as u64))
}

/// Fill `buf` (a multiple of [`BLOCK_BYTES`], starting at block `first_block`) with the
/// pattern of `version`.
pub fn fill(buf: &mut [u8], first_block: u64, version: u64) {
    for (i, block) in buf.chunks_exact_mut(BLOCK_BYTES as usize).enumerate() {
        let n = first_block + i as u64;
        block[0..8].copy_from_slice(&MAGIC.to_le_bytes());
        block[8..16].copy_from_slice(&n.to_le_bytes());
        block[16..24].copy_from_slice(&version.to_le_bytes());
        block[24..32].copy_from_slice(&0u64.to_le_bytes());
        for (w, word) in block[HEADER_BYTES..].chunks_exact_mut(8).enumerate() {
            word.copy_from_slice(&payload_word(n, version, w).to_le_bytes());
        }
    }
}

/// The version a block read back holds, if it is a block flashlane wrote for block `block`.
pub fn version_of(block_bytes: &[u8], block: u64) -> Option<u64> {
    let word = |i: usize| u64::from_le_bytes(block_bytes[i * 8..i * 8 + 8].try_into().unwrap());
    if word(0) != MAGIC || word(1) != block || word(3) != 0 {
        return None;
    }
    let version = word(2);
    block_bytes[HEADER_BYTES..]
        .chunks_exact(8)
        .enumerate()
        .all(|(w, b)| u64::from_le_bytes(b.try_into().unwrap()) == payload_word(block, version, w))
        .then_some(version)
}

/// What may be on the medium for one block written in this run.
#[derive(Debug, Clone, Copy)]
struct Block {
    /// Lowest version that may be there once no write is in flight (`None`: whatever the
    /// target held before the run, on an existing target).
    low: Option<u64>,
    /// Latest version submitted.
    high: u64,
    in_flight: u32,
    /// Writes submitted since the last time none was in flight, and the first one's version.
    busy_writes: u32,
    busy_first: u64,
}

/// The versions each block may hold, for `--verify`.
#[derive(Debug, Default)]
pub struct Versions {
    blocks: HashMap<u64, Block>,
    /// The target was filled with version 0 by this run (else its old contents are unknown).
    filled: bool,
    /// Blocks read and checked, and those that held no version they could.
    pub checked_blocks: u64,
    pub mismatched_blocks: u64,
    /// The first mismatches (block number, what was found), for the message.
    pub first_mismatches: Vec<(u64, Option<u64>)>,
}

/// What a read saw when it was submitted: the lowest acceptable version of each block.
pub type ReadSnapshot = Vec<Option<u64>>;

impl Versions {
    pub fn new(filled: bool) -> Self {
        Versions {
            filled,
            ..Versions::default()
        }
    }

    fn low(&self, block: u64) -> Option<u64> {
        match self.blocks.get(&block) {
            Some(b) => b.low,
            None => self.filled.then_some(0),
        }
    }

    /// A write of `version` to `blocks` blocks from `first` was submitted.
    pub fn write_submitted(&mut self, first: u64, blocks: u64, version: u64) {
        let initial = if self.filled { Some(0) } else { None };
        for n in first..first + blocks {
            let b = self.blocks.entry(n).or_insert(Block {
                low: initial,
                high: initial.unwrap_or(0),
                in_flight: 0,
                busy_writes: 0,
                busy_first: 0,
            });
            if b.in_flight == 0 {
                b.busy_writes = 0;
                b.busy_first = version;
            }
            b.in_flight += 1;
            b.busy_writes += 1;
            b.high = version;
        }
    }

    /// That write completed.
    pub fn write_completed(&mut self, first: u64, blocks: u64) {
        for n in first..first + blocks {
            if let Some(b) = self.blocks.get_mut(&n) {
                b.in_flight -= 1;
                if b.in_flight == 0 {
                    // One write: it is there. Several at once: any of them may have landed last.
                    b.low = Some(if b.busy_writes == 1 {
                        b.high
                    } else {
                        b.busy_first
                    });
                }
            }
        }
    }

    /// A read of `blocks` blocks from `first` is submitted: what it may find at the least.
    pub fn read_submitted(&self, first: u64, blocks: u64) -> ReadSnapshot {
        (first..first + blocks).map(|n| self.low(n)).collect()
    }

    /// The read completed with `data`: check every block against what was acceptable when it
    /// was submitted and what was written since.
    pub fn read_completed(&mut self, first: u64, data: &[u8], snapshot: &ReadSnapshot) {
        for (i, bytes) in data.chunks_exact(BLOCK_BYTES as usize).enumerate() {
            let n = first + i as u64;
            let found = version_of(bytes, n);
            let high = match self.blocks.get(&n) {
                Some(b) => b.high,
                None => 0,
            };
            let ok = match (found, snapshot[i]) {
                (None, _) => false,
                // What an existing target held before the run: any block of ours will do.
                (Some(_), None) => true,
                (Some(v), Some(low)) => low <= v && v <= high,
            };
            self.checked_blocks += 1;
            if !ok {
                self.mismatched_blocks += 1;
                if self.first_mismatches.len() < 5 {
                    self.first_mismatches.push((n, found));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_reads_back_as_its_version_and_nothing_else_does() {
        let mut buf = vec![0u8; 1024];
        fill(&mut buf, 10, 7);
        assert_eq!(version_of(&buf[..512], 10), Some(7));
        assert_eq!(version_of(&buf[512..], 11), Some(7));
        // At another block's place, or one bit off: not ours.
        assert_eq!(version_of(&buf[..512], 11), None);
        buf[300] ^= 1;
        assert_eq!(version_of(&buf[..512], 10), None);
        assert_eq!(version_of(&[0u8; 512], 0), None);
    }

    #[test]
    fn overlapping_writes_leave_either_version_and_a_lone_write_only_its_own() {
        let mut v = Versions::new(true);
        let data = |version: u64| {
            let mut b = vec![0u8; 512];
            fill(&mut b, 3, version);
            b
        };
        // Filled block: version 0 only.
        let s = v.read_submitted(3, 1);
        v.read_completed(3, &data(0), &s);
        v.read_completed(3, &data(5), &s);
        assert_eq!((v.checked_blocks, v.mismatched_blocks), (2, 1));
        // Two writes in flight together: afterwards 1 or 2 may be there, not 0.
        v.write_submitted(3, 1, 1);
        v.write_submitted(3, 1, 2);
        v.write_completed(3, 1);
        v.write_completed(3, 1);
        let s = v.read_submitted(3, 1);
        for (version, bad) in [(1, 0), (2, 0), (0, 1)] {
            let before = v.mismatched_blocks;
            v.read_completed(3, &data(version), &s);
            assert_eq!(v.mismatched_blocks - before, bad, "version {version}");
        }
        // A lone write: only its version.
        v.write_submitted(3, 1, 3);
        let during = v.read_submitted(3, 1);
        v.write_completed(3, 1);
        let after = v.read_submitted(3, 1);
        let before = v.mismatched_blocks;
        v.read_completed(3, &data(1), &during); // submitted while the write was in flight
        v.read_completed(3, &data(3), &after);
        v.read_completed(3, &data(2), &after);
        assert_eq!(v.mismatched_blocks - before, 1);
    }
}
