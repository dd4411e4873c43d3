//! Zeroed `u32` memory mapped straight from the kernel, for the mapping table's blocks.
//!
//! Why not `vec![0; n]`: that is `calloc`, and glibc serves a large `calloc` from its heap,
//! clearing it with `memset`, once its mmap threshold has risen (it rises to the size of any
//! mmapped block freed, e.g. a hash table's old storage after it grew). The table's blocks
//! are mostly never written (a 4 MiB block holds a 2 MiB window; chunks are handed out as
//! they are first written), so the clearing touched memory nothing else would: on
//! `mqsim-platform`, 3.8 % of the run's instructions and a few MiB of resident memory. Pages
//! of an anonymous mapping read as zero and cost memory only once written.

use std::ops::{Deref, DerefMut};

/// `len` zeroed `u32` values in their own anonymous mapping (unmapped when dropped).
pub(super) struct ZeroedBlock {
    values: std::ptr::NonNull<u32>,
    len: usize,
}

// SAFETY: a `ZeroedBlock` owns its mapping exclusively, as a `Box<[u32]>` owns its memory;
// `&ZeroedBlock` only gives shared reads.
unsafe impl Send for ZeroedBlock {}
// SAFETY: as above.
unsafe impl Sync for ZeroedBlock {}

impl ZeroedBlock {
    /// An empty block (no mapping), to stand in for a released one.
    pub(super) fn empty() -> Self {
        ZeroedBlock {
            values: std::ptr::NonNull::dangling(),
            len: 0,
        }
    }

    /// `len` zeroed values. Out of memory aborts, as a failed allocation does.
    #[cfg(unix)]
    pub(super) fn new(len: usize) -> Self {
        if len == 0 {
            return Self::empty();
        }
        let layout = std::alloc::Layout::array::<u32>(len).expect("block size fits the memory");
        // SAFETY: an anonymous private mapping of a non-zero length at an address the kernel
        // chooses: it aliases no existing memory, and its pages read as zero, which are valid
        // `u32`s. The result is checked against MAP_FAILED before it is used.
        let address = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                layout.size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if address == libc::MAP_FAILED {
            std::alloc::handle_alloc_error(layout);
        }
        ZeroedBlock {
            values: std::ptr::NonNull::new(address.cast()).unwrap_or_else(|| unreachable!()),
            len,
        }
    }

    /// Without `mmap`: the allocator's zeroed memory.
    #[cfg(not(unix))]
    pub(super) fn new(len: usize) -> Self {
        let values = Box::leak(vec![0u32; len].into_boxed_slice());
        ZeroedBlock {
            values: std::ptr::NonNull::new(values.as_mut_ptr()).unwrap_or_else(|| unreachable!()),
            len,
        }
    }
}

impl Drop for ZeroedBlock {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        #[cfg(unix)]
        // SAFETY: `values` and `len` describe the mapping `new` made, which nothing else
        // references once the block is dropped; a failure leaves the pages mapped (a leak,
        // not unsoundness) and is ignored.
        unsafe {
            libc::munmap(self.values.as_ptr().cast(), self.len * 4);
        }
        #[cfg(not(unix))]
        // SAFETY: `values` and `len` are the boxed slice `new` leaked.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.values.as_ptr(),
                self.len,
            )));
        }
    }
}

impl Deref for ZeroedBlock {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        // SAFETY: `values` points to `len` initialised `u32`s this block owns (dangling but
        // aligned when `len` is 0), alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.values.as_ptr(), self.len) }
    }
}

impl DerefMut for ZeroedBlock {
    fn deref_mut(&mut self) -> &mut [u32] {
        // SAFETY: as in `deref`; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.values.as_ptr(), self.len) }
    }
}

impl std::fmt::Debug for ZeroedBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZeroedBlock({} values)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_reads_zero_and_keeps_what_is_written() {
        let mut block = ZeroedBlock::new(3 << 20);
        assert_eq!(block.len(), 3 << 20);
        assert!(block.iter().all(|&v| v == 0));
        block[0] = 7;
        block[(3 << 20) - 1] = 9;
        assert_eq!((block[0], block[1], block[(3 << 20) - 1]), (7, 0, 9));
        assert!(ZeroedBlock::empty().is_empty());
        assert!(ZeroedBlock::new(0).is_empty());
    }
}
