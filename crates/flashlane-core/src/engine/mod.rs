//! The discrete-event engine: a priority queue of events keyed by (time, sequence).
//!
//! Ties in time break by insertion order (FIFO), so a run is a pure function of its inputs.
//! Events are small `Copy` values; the heap's storage is reused, so the hot loop does not
//! allocate once the heap has grown to its working size.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Event queue ordered by (time, insertion sequence).
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
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
            heap: BinaryHeap::with_capacity(1024),
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
    pub fn schedule(&mut self, time_ns: u64, payload: E) {
        debug_assert!(time_ns >= self.now_ns, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        let time_ns = time_ns.max(self.now_ns);
        self.heap.push(Entry {
            key: ((time_ns as u128) << 64) | seq as u128,
            payload,
        });
    }

    /// Pop the earliest event and advance time to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let entry = self.heap.pop()?;
        self.now_ns = entry.time_ns();
        self.processed += 1;
        Some((self.now_ns, entry.payload))
    }

    /// Advance time to `time_ns` for an event handled outside the queue (counted as processed).
    /// It must not be earlier than now nor later than the earliest queued event.
    pub fn advance_to(&mut self, time_ns: u64) {
        debug_assert!(time_ns >= self.now_ns && self.peek_time_ns().is_none_or(|t| time_ns <= t));
        self.now_ns = time_ns;
        self.processed += 1;
    }

    /// Time of the earliest pending event.
    pub fn peek_time_ns(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time_ns())
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
