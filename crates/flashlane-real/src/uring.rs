//! The io_uring engine: reads and writes of aligned buffers at byte offsets of one file
//! opened with O_DIRECT, each handed to the kernel when pushed, their completions reaped;
//! waits bounded by a timeout (the replay's next arrival or scheduler timer). A buffer stays owned by its I/O
//! until the kernel completes it, and the engine waits for every I/O before it is dropped.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::time::Duration;

use io_uring::{opcode, types, IoUring};

/// Memory alignment of every buffer (covers any direct-I/O memory alignment).
const BUFFER_ALIGN: usize = 4096;

/// A zeroed heap buffer aligned for direct I/O.
pub struct AlignedBuf {
    ptr: *mut u8,
    capacity: usize,
    len: usize,
}

// SAFETY: the buffer owns its allocation; nothing else aliases it.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    fn new(capacity: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(capacity.max(BUFFER_ALIGN), BUFFER_ALIGN)
            .expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf {
            ptr,
            capacity: layout.size(),
            len: 0,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `len <= capacity` bytes of the allocation, initialised (zeroed at first).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe {
            dealloc(
                self.ptr,
                Layout::from_size_align_unchecked(self.capacity, BUFFER_ALIGN),
            )
        }
    }
}

/// Buffers kept for reuse, by capacity.
#[derive(Default)]
pub struct BufferPool {
    free: Vec<AlignedBuf>,
}

impl BufferPool {
    /// A buffer of `len` bytes (its contents are whatever its last use left).
    pub fn take(&mut self, len: usize) -> AlignedBuf {
        let mut buf = match self.free.iter().position(|b| b.capacity >= len) {
            Some(i) => self.free.swap_remove(i),
            None => AlignedBuf::new(len.next_power_of_two()),
        };
        buf.len = len;
        buf
    }

    pub fn give(&mut self, buf: AlignedBuf) {
        self.free.push(buf);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

/// An I/O handed to the kernel, with what the caller wants back.
pub struct Io<T> {
    pub direction: Direction,
    pub offset_bytes: u64,
    pub buf: AlignedBuf,
    pub tag: T,
}

/// A finished I/O: the bytes moved, or the error.
pub struct Done<T> {
    pub io: Io<T>,
    pub result: std::io::Result<usize>,
}

pub struct Engine<T> {
    ring: IoUring,
    fd: i32,
    /// I/Os in the kernel (or queued for it), by user_data.
    slots: Vec<Option<Io<T>>>,
    free_slots: Vec<usize>,
    in_flight: usize,
}

/// Why io_uring cannot be used here, if it cannot (a kernel without it, or with it disabled
/// by `kernel.io_uring_disabled` or a seccomp profile).
pub fn unavailable() -> Option<String> {
    match IoUring::new(2) {
        Ok(_) => None,
        Err(e) => Some(explain(e)),
    }
}

fn explain(e: std::io::Error) -> String {
    let hint = match e.raw_os_error() {
        Some(libc::ENOSYS) => " (the kernel has no io_uring)",
        Some(libc::EPERM) | Some(libc::EACCES) => {
            " (io_uring is disabled: see /proc/sys/kernel/io_uring_disabled, or a seccomp \
             profile forbids it)"
        }
        _ => "",
    };
    format!("io_uring is not available: {e}{hint}")
}

impl<T> Engine<T> {
    /// A ring for up to `depth` I/Os in flight on `file`.
    pub fn new(file: &File, depth: u32) -> Result<Engine<T>, String> {
        let entries = depth.clamp(8, 4096).next_power_of_two();
        // Set up as fio's io_uring engine does (3.33: one submitting thread, completions run
        // when it asks for them, not by interrupting it), which saves a wake-up per batch;
        // kernels before 6.1 lack these and get a plain ring.
        let ring = IoUring::builder()
            .setup_cqsize(entries * 2)
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::builder().setup_cqsize(entries * 2).build(entries))
            .map_err(explain)?;
        if !ring.params().is_feature_ext_arg() {
            return Err(
                "io_uring: the kernel lacks IORING_FEAT_EXT_ARG (needs Linux 5.11+)".into(),
            );
        }
        Ok(Engine {
            ring,
            fd: file.as_raw_fd(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            in_flight: 0,
        })
    }

    /// I/Os queued or in the kernel.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Hand `io` to the kernel.
    pub fn push(&mut self, io: Io<T>) -> std::io::Result<()> {
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        let fd = types::Fd(self.fd);
        let len = io.buf.len as u32;
        let entry = match io.direction {
            Direction::Read => opcode::Read::new(fd, io.buf.ptr, len)
                .offset(io.offset_bytes)
                .build(),
            Direction::Write => opcode::Write::new(fd, io.buf.ptr, len)
                .offset(io.offset_bytes)
                .build(),
        }
        .user_data(slot as u64);
        self.slots[slot] = Some(io);
        self.in_flight += 1;
        loop {
            // SAFETY: the buffer lives in `self.slots[slot]` until its completion is reaped
            // (and the engine drains every I/O before it is dropped).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                break;
            }
            // The submission queue is full: hand it to the kernel and go on.
            self.ring.submit()?;
        }
        // To the kernel at once, as a host hands a request to the drive when it is popped (and
        // fio with its default iodepth_batch_submit=1): batching the submissions of one wake-up
        // cost 10-25 % of the IOPS at 32 outstanding on this project's virtual disk
        // (docs/real-drive.md, "Beside fio").
        self.ring.submit()?;
        Ok(())
    }

    /// Wait until at least one I/O completes or `timeout` passes (`None`: no limit). With
    /// nothing in flight, just sleeps for the timeout.
    pub fn wait(&mut self, timeout: Option<Duration>) -> std::io::Result<()> {
        if self.in_flight == 0 {
            if let Some(t) = timeout {
                std::thread::sleep(t);
            }
            return Ok(());
        }
        if !self.ring.completion().is_empty() {
            return Ok(());
        }
        {
            let result = match timeout {
                Some(t) => {
                    let ts = types::Timespec::new()
                        .sec(t.as_secs())
                        .nsec(t.subsec_nanos());
                    let args = types::SubmitArgs::new().timespec(&ts);
                    self.ring.submitter().submit_with_args(1, &args)
                }
                None => self.ring.submit_and_wait(1),
            };
            match result {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Move every completed I/O into `out`.
    pub fn reap(&mut self, out: &mut Vec<Done<T>>) {
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as usize;
            let io = self.slots[slot]
                .take()
                .expect("a completion for an I/O in flight");
            self.free_slots.push(slot);
            self.in_flight -= 1;
            let res = cqe.result();
            out.push(Done {
                result: if res < 0 {
                    Err(std::io::Error::from_raw_os_error(-res))
                } else {
                    Ok(res as usize)
                },
                io,
            });
        }
    }

    /// Wait for every I/O in flight and return them (their buffers are then free to go).
    pub fn drain(&mut self, out: &mut Vec<Done<T>>) {
        while self.in_flight > 0 {
            if self.wait(None).is_err() {
                // Cannot wait (should not happen): sleep a little and look again.
                std::thread::sleep(Duration::from_millis(1));
            }
            self.reap(out);
        }
    }
}

impl<T> Drop for Engine<T> {
    fn drop(&mut self) {
        // The kernel may still write into buffers of I/Os in flight: wait for them first.
        let mut done = Vec::new();
        self.drain(&mut done);
    }
}
