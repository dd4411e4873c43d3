//! The discrete-event engine: a priority queue of events keyed by (time, sequence).
//!
//! Ties in time break by insertion order (FIFO), so a run is a pure function of its inputs.
//! Events are small `Copy` values; the heap's storage is reused, so the hot loop does not
//! allocate once the heap has grown to its working size.
//!
//! The heap is our own binary min-heap rather than std's `BinaryHeap`: its keys are unique
//! (the sequence breaks every tie), so any correct heap pops the same order, and a pop the
//! compiler always inlines into the event loop keeps the loop's cost from moving with
//! unrelated changes (std's `pop` stopped being inlined twice, each time +2 % instructions:
//! docs/performance.md).

/// A scheduled event: `payload` happens at the time in the high 64 bits of `key`; the low 64
/// bits are the insertion sequence, so one integer comparison orders by (time, sequence).
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    key: u128,
    payload: E,
}

impl<E> Entry<E> {
    fn time_ns(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

/// Event queue ordered by (time, insertion sequence).
#[derive(Debug)]
pub struct EventQueue<E> {
    /// A binary min-heap on `key`: the children of slot i are 2i+1 and 2i+2.
    heap: Vec<Entry<E>>,
    next_seq: u64,
    now_ns: u64,
    processed: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(1024),
            next_seq: 0,
            now_ns: 0,
            processed: 0,
        }
    }

    /// Current simulated time: the time of the last event popped.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `payload` at `time_ns`, which must not be in the past.
    #[inline(always)]
    pub fn schedule(&mut self, time_ns: u64, payload: E) {
        debug_assert!(time_ns >= self.now_ns, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        let time_ns = time_ns.max(self.now_ns);
        let entry = Entry {
            key: ((time_ns as u128) << 64) | seq as u128,
            payload,
        };
        // Sift up: move parents down into the hole until the entry's place is found. On a
        // local slice: through `self.heap` every store made the loop reload the vector's
        // pointer and length.
        let mut hole = self.heap.len();
        self.heap.push(entry);
        let heap = &mut self.heap[..];
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if heap[parent].key <= entry.key {
                break;
            }
            heap[hole] = heap[parent];
            hole = parent;
        }
        heap[hole] = entry;
    }

    /// Pop the earliest event and advance time to it.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let last = self.heap.pop()?;
        let top = match self.heap.first() {
            None => last,
            Some(&top) => {
                self.sift_down_from_root(last);
                top
            }
        };
        self.now_ns = top.time_ns();
        self.processed += 1;
        Some((self.now_ns, top.payload))
    }

    /// Put `entry` (the former last slot) in the root's place, bottom-up (as std's heap
    /// does): walk the hole down along the earlier child to a leaf, one comparison a level,
    /// then sift `entry` up from there, which is rarely more than a level or two.
    #[inline(always)]
    fn sift_down_from_root(&mut self, entry: Entry<E>) {
        let heap = &mut self.heap[..];
        let len = heap.len();
        let mut hole = 0;
        let mut child = 1;
        while child + 1 < len {
            child += usize::from(heap[child + 1].key < heap[child].key);
            heap[hole] = heap[child];
            hole = child;
            child = 2 * hole + 1;
        }
        if child + 1 == len {
            heap[hole] = heap[child];
            hole = child;
        }
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if heap[parent].key <= entry.key {
                break;
            }
            heap[hole] = heap[parent];
            hole = parent;
        }
        heap[hole] = entry;
    }

    /// Advance time to `time_ns` for an event handled outside the queue (counted as processed).
    /// It must not be earlier than now nor later than the earliest queued event.
    pub fn advance_to(&mut self, time_ns: u64) {
        debug_assert!(time_ns >= self.now_ns && self.peek_time_ns().is_none_or(|t| time_ns <= t));
        self.now_ns = time_ns;
        self.processed += 1;
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time_ns(&self) -> Option<u64> {
        self.heap.first().map(|e| e.time_ns())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn ties_are_fifo() {
        let mut q = EventQueue::new();
        q.schedule(5, 'a');
        q.schedule(3, 'b');
        q.schedule(5, 'c');
        q.schedule(3, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    /// Long randomized check against a shadow model: a sorted list with stable ordering.
    #[test]
    fn matches_a_stable_sorted_shadow() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut q = EventQueue::new();
        let mut shadow: Vec<(u64, u64)> = Vec::new(); // (time, id), kept in insertion order
        let mut next_id = 0u64;
        for _ in 0..20_000 {
            if rng.random_bool(0.6) || shadow.is_empty() {
                let t = q.now_ns() + rng.random_range(0..50);
                q.schedule(t, next_id);
                shadow.push((t, next_id));
                next_id += 1;
            } else {
                let pos = shadow
                    .iter()
                    .enumerate()
                    .min_by_key(|(i, (t, _))| (*t, *i))
                    .map(|(i, _)| i)
                    .unwrap();
                let expected = shadow.remove(pos);
                assert_eq!(q.pop(), Some(expected));
            }
        }
    }
}
