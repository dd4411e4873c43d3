//! The discrete-event engine: a priority queue of events keyed by (time, sequence).
//!
//! Contract: events pop in order of (time, insertion sequence), so ties in time are FIFO and a
//! run is a pure function of its inputs; nothing may be scheduled before `now_ns` (the time of
//! the last event popped or advanced to). Events are small `Copy` values; the storage is
//! reused, so the hot loop does not allocate once the queue has grown to its working size.
//!
//! Structure: events scheduled with the same delay (time - now) come in (time, sequence) order,
//! since now never decreases. So each delay's events form a sorted FIFO *lane* (the delay hashed
//! to one of `LANES`), and only a lane's front needs a place in a binary min-heap; its later
//! events (followers) wait in the lane's ring. Appending to a lane costs no heap operation, and
//! the heap holds a few lane fronts instead of every pending event (`mqsim-ssd`: about 3
//! against 20). An event goes into the heap itself when its lane's last event is later than it
//! (two delays sharing a lane) or the lane's ring is full, so any schedule keeps the order and
//! the worst case is the plain heap's O(log n). The heap's keys are unique (the sequence breaks
//! every tie), so every correct structure pops the same order: same bytes out.
//!
//! The heap is our own rather than std's `BinaryHeap`, with pop and schedule always inlined
//! into the event loop: std's `pop` stopped being inlined twice, each time +2 % instructions
//! (docs/performance.md).

/// Number of lanes (a power of two) and the followers a lane's ring holds.
const LANE_BITS: u32 = 6;
const LANES: usize = 1 << LANE_BITS;
const RING: usize = 32;
/// `Entry::lane` of an event in the heap that is no lane's front.
const NO_LANE: u32 = u32::MAX;

/// A scheduled event: `payload` happens at the time in the high 64 bits of `key`; the low 64
/// bits are the insertion sequence, so one integer comparison orders by (time, sequence).
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    key: u128,
    payload: E,
    /// In the heap: the lane whose front this is, or `NO_LANE`.
    lane: u32,
}

impl<E> Entry<E> {
    fn time_ns(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Lane {
    /// Key of the lane's last event (its front when it has no followers).
    back: u128,
    /// The followers: `len` ring slots from `head`, in order.
    head: u32,
    len: u32,
}

/// The lane of a delay: Fibonacci hashing, so the few delays a run repeats rarely share one.
#[inline(always)]
fn lane_of(delay_ns: u64) -> usize {
    (delay_ns.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LANE_BITS)) as usize
}

/// Event queue ordered by (time, insertion sequence).
#[derive(Debug)]
pub struct EventQueue<E> {
    /// A binary min-heap on `key`: the children of slot i are 2i+1 and 2i+2.
    heap: Vec<Entry<E>>,
    lanes: [Lane; LANES],
    /// Bit i: lane i's front is in the heap (else the lane is empty).
    active: u64,
    /// The lanes' followers; allocated by the first schedule (it needs an `E` to fill with).
    rings: Option<Box<[[Entry<E>; RING]; LANES]>>,
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
            lanes: [Lane::default(); LANES],
            active: 0,
            rings: None,
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
        self.heap.len() + self.lanes.iter().map(|l| l.len as usize).sum::<usize>()
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
        let key = ((time_ns as u128) << 64) | seq as u128;
        let lane = lane_of(time_ns - self.now_ns);
        let bit = 1u64 << lane;
        let in_heap = if self.active & bit == 0 {
            // The lane is empty: the event is its front.
            self.active |= bit;
            self.lanes[lane].back = key;
            if self.rings.is_none() {
                self.allocate_rings(payload);
            }
            lane as u32
        } else {
            let l = &mut self.lanes[lane];
            if l.back <= key && (l.len as usize) < RING {
                l.back = key;
                let slot = (l.head + l.len) as usize % RING;
                l.len += 1;
                let rings = self.rings.as_mut().unwrap_or_else(|| unreachable!());
                rings[lane][slot] = Entry {
                    key,
                    payload,
                    lane: lane as u32,
                };
                return;
            }
            NO_LANE
        };
        self.sift_up(Entry {
            key,
            payload,
            lane: in_heap,
        });
    }

    /// Once per queue, off the inlined path.
    #[cold]
    #[inline(never)]
    fn allocate_rings(&mut self, fill: E) {
        let entry = Entry {
            key: 0,
            payload: fill,
            lane: NO_LANE,
        };
        let rings = vec![[entry; RING]; LANES].into_boxed_slice();
        self.rings = Some(rings.try_into().unwrap_or_else(|_| unreachable!()));
    }

    /// Push `entry` and sift it up: move parents down into the hole until its place is found.
    /// The heap's loops index through a raw pointer: every index is in bounds by the loop's
    /// condition, which the compiler did not see; the checks cost 1.9 % / 1.0 % of
    /// `mqsim-ssd`'s instructions (CMT on / off) in the plain heap.
    #[inline(always)]
    fn sift_up(&mut self, entry: Entry<E>) {
        let mut hole = self.heap.len();
        self.heap.push(entry);
        let heap = self.heap.as_mut_ptr();
        // SAFETY: every index is below the heap's length (parent < hole <= len - 1).
        unsafe {
            while hole > 0 {
                let parent = (hole - 1) / 2;
                if (*heap.add(parent)).key <= entry.key {
                    break;
                }
                *heap.add(hole) = *heap.add(parent);
                hole = parent;
            }
            *heap.add(hole) = entry;
        }
    }

    /// Pop the earliest event and advance time to it.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let top = *self.heap.first()?;
        let lane = top.lane as usize;
        if lane < LANES {
            let l = &mut self.lanes[lane];
            if l.len > 0 {
                // The lane's next event takes the front's place.
                let slot = l.head as usize;
                l.head = (l.head + 1) % RING as u32;
                l.len -= 1;
                let next = self.rings.as_ref().unwrap_or_else(|| unreachable!())[lane][slot];
                self.replace_root(next);
                return Some(self.popped(top));
            }
            self.active &= !(1u64 << lane);
        }
        if let Some(last) = self.heap.pop() {
            if !self.heap.is_empty() {
                self.sift_down_from_root(last);
            }
        }
        Some(self.popped(top))
    }

    #[inline(always)]
    fn popped(&mut self, top: Entry<E>) -> (u64, E) {
        self.now_ns = top.time_ns();
        self.processed += 1;
        (self.now_ns, top.payload)
    }

    /// Put a lane's next event in the root's place, top-down: it often stays at or near the
    /// root (a lane's events tend to be close together), so stop as soon as it is not later
    /// than the earlier child.
    #[inline(always)]
    fn replace_root(&mut self, entry: Entry<E>) {
        let len = self.heap.len();
        let heap = self.heap.as_mut_ptr();
        let mut hole = 0;
        let mut child = 1;
        // SAFETY: every index is below `len` (the loop's conditions), and len >= 1 (the root).
        unsafe {
            while child < len {
                if child + 1 < len {
                    child += usize::from((*heap.add(child + 1)).key < (*heap.add(child)).key);
                }
                if entry.key <= (*heap.add(child)).key {
                    break;
                }
                *heap.add(hole) = *heap.add(child);
                hole = child;
                child = 2 * hole + 1;
            }
            *heap.add(hole) = entry;
        }
    }

    /// Put `entry` (the former last slot) in the root's place, bottom-up (as std's heap
    /// does): walk the hole down along the earlier child to a leaf, one comparison a level,
    /// then sift `entry` up from there, which is rarely more than a level or two.
    #[inline(always)]
    fn sift_down_from_root(&mut self, entry: Entry<E>) {
        let len = self.heap.len();
        let heap = self.heap.as_mut_ptr();
        let mut hole = 0;
        let mut child = 1;
        // SAFETY: every index is below `len` (the loops' conditions), and len >= 1.
        unsafe {
            while child + 1 < len {
                child += usize::from((*heap.add(child + 1)).key < (*heap.add(child)).key);
                *heap.add(hole) = *heap.add(child);
                hole = child;
                child = 2 * hole + 1;
            }
            if child + 1 == len {
                *heap.add(hole) = *heap.add(child);
                hole = child;
            }
            while hole > 0 {
                let parent = (hole - 1) / 2;
                if (*heap.add(parent)).key <= entry.key {
                    break;
                }
                *heap.add(hole) = *heap.add(parent);
                hole = parent;
            }
            *heap.add(hole) = entry;
        }
    }

    /// Advance time to `time_ns` for an event handled outside the queue (counted as processed).
    /// It must not be earlier than now nor later than the earliest queued event.
    pub fn advance_to(&mut self, time_ns: u64) {
        debug_assert!(time_ns >= self.now_ns && self.peek_time_ns().is_none_or(|t| time_ns <= t));
        self.now_ns = time_ns;
        self.processed += 1;
    }

    /// Time of the earliest pending event (a lane's followers are never earlier than its
    /// front in the heap).
    #[inline]
    pub fn peek_time_ns(&self) -> Option<u64> {
        self.heap.first().map(|e| e.time_ns())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
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

    /// The earliest of a stable, insertion-ordered shadow list: what `pop` must return.
    fn shadow_pop(shadow: &mut Vec<(u64, u64)>) -> Option<(u64, u64)> {
        let pos = shadow
            .iter()
            .enumerate()
            .min_by_key(|(i, (t, _))| (*t, *i))
            .map(|(i, _)| i)?;
        Some(shadow.remove(pos))
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
                assert_eq!(q.pop(), shadow_pop(&mut shadow));
            }
        }
    }

    /// One step of a property run: schedule after one of a few delays (so lanes fill,
    /// overflow their rings and share lanes), or after any delay, or pop, or advance time.
    #[derive(Debug, Clone)]
    enum Op {
        Repeat(usize),
        Any(u64),
        Pop,
        Advance(u64),
    }

    const DELAYS: [u64; 8] = [0, 0, 1, 7, 1_538, 75_021, 762_322, 1 << 40];

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..DELAYS.len()).prop_map(Op::Repeat),
            1 => (0u64..2_000_000).prop_map(Op::Any),
            4 => Just(Op::Pop),
            1 => (0u64..1_000).prop_map(Op::Advance),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Against the stable sorted shadow: the same events in the same order, many at one
        /// time and at now, through lanes, shared lanes, full rings and `advance_to`.
        #[test]
        fn pops_as_a_stable_sort(ops in prop::collection::vec(op(), 1..600)) {
            let mut q = EventQueue::new();
            let mut shadow: Vec<(u64, u64)> = Vec::new();
            let mut next_id = 0u64;
            for op in ops {
                let delay = match op {
                    Op::Repeat(i) => Some(DELAYS[i]),
                    Op::Any(d) => Some(d),
                    Op::Pop => {
                        prop_assert_eq!(q.pop(), shadow_pop(&mut shadow));
                        None
                    }
                    Op::Advance(d) => {
                        // Not past the earliest pending event.
                        let to = (q.now_ns() + d).min(q.peek_time_ns().unwrap_or(u64::MAX));
                        q.advance_to(to);
                        None
                    }
                };
                if let Some(d) = delay {
                    let t = q.now_ns() + d;
                    q.schedule(t, next_id);
                    shadow.push((t, next_id));
                    next_id += 1;
                }
                prop_assert_eq!(q.len(), shadow.len());
                prop_assert_eq!(q.peek_time_ns(), shadow.iter().map(|e| e.0).min());
            }
            while let Some(expected) = shadow_pop(&mut shadow) {
                prop_assert_eq!(q.pop(), Some(expected));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }

    /// A lane's ring overflows into the heap, and two delays that share a lane keep order.
    #[test]
    fn full_rings_and_shared_lanes_keep_order() {
        let a = 1_538;
        let b = (1..10_000)
            .find(|&d| d != a && lane_of(d) == lane_of(a))
            .unwrap();
        let mut q = EventQueue::new();
        let mut shadow = Vec::new();
        let mut id = 0u64;
        for round in 0..200u64 {
            for d in [a, b, b, a] {
                for _ in 0..(RING as u64 / 2 + round % 3) {
                    q.schedule(q.now_ns() + d, id);
                    shadow.push((q.now_ns() + d, id));
                    id += 1;
                }
            }
            for _ in 0..RING {
                assert_eq!(q.pop(), shadow_pop(&mut shadow));
            }
        }
        while let Some(expected) = shadow_pop(&mut shadow) {
            assert_eq!(q.pop(), Some(expected));
        }
    }
}
