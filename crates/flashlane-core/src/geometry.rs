//! SSD geometry, physical addresses, the static logical-page -> chip function and chip sets.

use serde::{Deserialize, Serialize};

/// The largest number of chips a [`ChipSet`] can hold.
pub const MAX_CHIPS: usize = 256;

/// Physical organisation of the flash array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
}

impl Geometry {
    pub fn chips(&self) -> u32 {
        self.channels * self.chips_per_channel
    }
    pub fn dies(&self) -> u32 {
        self.chips() * self.dies_per_chip
    }
    pub fn planes(&self) -> u32 {
        self.dies() * self.planes_per_die
    }
    pub fn pages_per_plane(&self) -> u64 {
        self.blocks_per_plane as u64 * self.pages_per_block as u64
    }
    pub fn physical_pages(&self) -> u64 {
        self.planes() as u64 * self.pages_per_plane()
    }
    pub fn physical_bytes(&self) -> u64 {
        self.physical_pages() * self.page_bytes as u64
    }
    /// Channel a chip hangs on (chips are numbered channel-major: chip = channel * ways + way).
    pub fn channel_of_chip(&self, chip: u32) -> u32 {
        chip / self.chips_per_channel
    }
    /// Global plane index -> (chip, die within chip, plane within die).
    pub fn plane_location(&self, plane: u32) -> (u32, u32, u32) {
        let plane_in_die = plane % self.planes_per_die;
        let die = plane / self.planes_per_die;
        (
            die / self.dies_per_chip,
            die % self.dies_per_chip,
            plane_in_die,
        )
    }
    /// Global plane index of (chip, die, plane within die).
    pub fn plane_index(&self, chip: u32, die: u32, plane: u32) -> u32 {
        (chip * self.dies_per_chip + die) * self.planes_per_die + plane
    }

    /// Check the geometry is usable; returns a message naming the bad key.
    pub fn validate(&self) -> Result<(), String> {
        for (key, value) in [
            ("geometry.channels", self.channels),
            ("geometry.chips_per_channel", self.chips_per_channel),
            ("geometry.dies_per_chip", self.dies_per_chip),
            ("geometry.planes_per_die", self.planes_per_die),
            ("geometry.blocks_per_plane", self.blocks_per_plane),
            ("geometry.pages_per_block", self.pages_per_block),
            ("geometry.page_bytes", self.page_bytes),
        ] {
            if value == 0 {
                return Err(format!("{key} must be at least 1"));
            }
        }
        // Products in u64 first: chips(), dies() and planes() multiply in u32.
        let chips = u64::from(self.channels) * u64::from(self.chips_per_channel);
        let planes = chips * u64::from(self.dies_per_chip) * u64::from(self.planes_per_die);
        if chips > MAX_CHIPS as u64 {
            return Err(format!(
                "geometry has {chips} chips (geometry.channels x geometry.chips_per_channel); \
                 at most {MAX_CHIPS} are supported"
            ));
        }
        if planes > 1 << 20 {
            return Err(format!(
                "geometry has {planes} planes (chips x geometry.dies_per_chip x \
                 geometry.planes_per_die); at most 2^20 are supported"
            ));
        }
        let pages = u128::from(planes)
            * u128::from(self.blocks_per_plane)
            * u128::from(self.pages_per_block);
        if pages >= u128::from(u32::MAX) {
            return Err(format!(
                "geometry has {pages} physical pages (planes x geometry.blocks_per_plane x \
                 geometry.pages_per_block); at most {} are supported",
                u32::MAX - 1
            ));
        }
        if self.chips() as usize > MAX_CHIPS {
            return Err(format!(
                "geometry has {} chips; at most {MAX_CHIPS} are supported",
                self.chips()
            ));
        }
        if self.blocks_per_plane < 4 {
            return Err("geometry.blocks_per_plane must be at least 4 (garbage collection needs spare blocks)".into());
        }
        if self.planes() > 1 << 20 {
            return Err(format!(
                "geometry has {} planes; at most 2^20 are supported",
                self.planes()
            ));
        }
        if self.physical_pages() >= u32::MAX as u64 {
            return Err(format!(
                "geometry has {} physical pages; at most {} are supported",
                self.physical_pages(),
                u32::MAX - 1
            ));
        }
        if !self.page_bytes.is_multiple_of(512) {
            return Err("geometry.page_bytes must be a multiple of 512".into());
        }
        Ok(())
    }
}

/// One level of the static allocation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Channel,
    Chip,
    Die,
    Plane,
}

/// Static striping of logical pages over the array: the first level in `order` varies fastest.
/// `[channel, chip, die, plane]` is "channel first, chip second" of the PIQ and VIOS papers.
#[derive(Debug, Clone)]
pub struct StaticMap {
    order: [Level; 4],
    channels: u64,
    ways: u64,
    dies: u64,
    planes: u64,
    /// The placement repeats every `period` = channels x ways x dies x planes stripe units:
    /// chip and plane of every residue, so the hot path costs a table look-up.
    period: u64,
    chip_of_residue: Vec<u32>,
    plane_of_residue: Vec<u32>,
    /// Consecutive logical pages kept on one plane before the order moves on (1 = page
    /// striping); see [`StaticMap::with_stripe_unit_pages`].
    unit: u64,
    /// `unit` and `period` as a shift and a mask when they are powers of two (the presets'
    /// drives): every request and page write looks its plane or chip up, and two 64-bit
    /// divisions cost more than the rest of the look-up.
    unit_shift: Option<u32>,
    period_mask: Option<u64>,
}

/// Where the static map places a logical page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub channel: u32,
    /// Chip within its channel (the "way").
    pub way: u32,
    pub die: u32,
    pub plane: u32,
}

impl StaticMap {
    pub fn new(geometry: &Geometry, order: [Level; 4]) -> Self {
        let mut map = StaticMap {
            order,
            channels: geometry.channels as u64,
            ways: geometry.chips_per_channel as u64,
            dies: geometry.dies_per_chip as u64,
            planes: geometry.planes_per_die as u64,
            period: geometry.planes() as u64,
            chip_of_residue: Vec::new(),
            plane_of_residue: Vec::new(),
            unit: 1,
            unit_shift: Some(0),
            period_mask: None,
        };
        let period = map.period;
        map.period_mask = period.is_power_of_two().then(|| period - 1);
        let (chips, planes): (Vec<u32>, Vec<u32>) = (0..map.period)
            .map(|residue| {
                let p = map.place(residue);
                let chip = p.channel as u64 * map.ways + p.way as u64;
                (
                    chip as u32,
                    ((chip * map.dies + p.die as u64) * map.planes + p.plane as u64) as u32,
                )
            })
            .unzip();
        map.chip_of_residue = chips;
        map.plane_of_residue = planes;
        map
    }

    pub fn order(&self) -> [Level; 4] {
        self.order
    }

    /// Stripe in units of `pages` consecutive logical pages (at least 1): unit u goes where
    /// page u goes under page striping. A unit of logical pages / planes is a concatenated
    /// layout: every plane holds one contiguous logical range (PASS's "region" as a package).
    pub fn with_stripe_unit_pages(mut self, pages: u64) -> Self {
        self.unit = pages.max(1);
        self.unit_shift = self
            .unit
            .is_power_of_two()
            .then(|| self.unit.trailing_zeros());
        self
    }

    /// Place stripe unit `lpn` (= logical page `lpn` under page striping).
    pub fn place(&self, lpn: u64) -> Placement {
        let mut rest = lpn;
        let mut placement = Placement {
            channel: 0,
            way: 0,
            die: 0,
            plane: 0,
        };
        for level in self.order {
            let (count, slot) = match level {
                Level::Channel => (self.channels, &mut placement.channel),
                Level::Chip => (self.ways, &mut placement.way),
                Level::Die => (self.dies, &mut placement.die),
                Level::Plane => (self.planes, &mut placement.plane),
            };
            *slot = (rest % count) as u32;
            rest /= count;
        }
        placement
    }

    /// Stripe unit of logical page `lpn`.
    #[inline]
    fn unit_of(&self, lpn: u64) -> u64 {
        match self.unit_shift {
            Some(shift) => lpn >> shift,
            None => lpn / self.unit,
        }
    }

    /// Residue of stripe unit `unit` (its place in the period).
    #[inline]
    fn residue(&self, unit: u64) -> usize {
        (match self.period_mask {
            Some(mask) => unit & mask,
            None => unit % self.period,
        }) as usize
    }

    /// Chip index (channel-major) of logical page `lpn`.
    #[inline]
    pub fn chip_of(&self, lpn: u64) -> u32 {
        self.chip_of_residue[self.residue(self.unit_of(lpn))]
    }

    /// Global plane index of logical page `lpn`.
    #[inline]
    pub fn plane_of(&self, lpn: u64) -> u32 {
        self.plane_of_residue[self.residue(self.unit_of(lpn))]
    }

    /// Consecutive logical pages kept on one plane (1 = page striping).
    pub fn stripe_unit_pages(&self) -> u64 {
        self.unit
    }

    /// Stripe units after which the placement repeats (one per plane).
    pub fn period(&self) -> u64 {
        self.period
    }

    /// Set of chips touched by `pages` logical pages starting at `first_lpn` (PIQ's location vector).
    pub fn chips_of_range(&self, first_lpn: u64, pages: u64) -> ChipSet {
        let mut set = ChipSet::EMPTY;
        let chips = self.channels * self.ways;
        if pages == 0 {
            return set;
        }
        // Consecutive units cycle through the chips with a period of chips*dies*planes.
        let first_unit = self.unit_of(first_lpn);
        let last_unit = self.unit_of(first_lpn + pages - 1);
        if first_unit == last_unit {
            // Most requests sit in one stripe unit: one chip, no loop.
            set.insert(self.chip_of_residue[self.residue(first_unit)]);
            return set;
        }
        // Counted as inserted rather than by `set.len()`: reading the whole set right after a
        // one-word store to it stalled on store forwarding (a third of this function's time).
        let mut count = 0;
        for unit in first_unit..=last_unit.min(first_unit + self.period - 1) {
            let chip = self.chip_of_residue[self.residue(unit)];
            if !set.contains(chip) {
                set.insert(chip);
                count += 1;
                if count == chips {
                    break;
                }
            }
        }
        set
    }
}

/// A set of chip indices (PIQ's location vector), up to [`MAX_CHIPS`] chips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ChipSet([u64; MAX_CHIPS / 64]);

impl ChipSet {
    pub const EMPTY: ChipSet = ChipSet([0; MAX_CHIPS / 64]);

    pub fn insert(&mut self, chip: u32) {
        self.0[chip as usize / 64] |= 1 << (chip % 64);
    }
    pub fn contains(&self, chip: u32) -> bool {
        self.0[chip as usize / 64] & (1 << (chip % 64)) != 0
    }
    pub fn intersects(&self, other: &ChipSet) -> bool {
        self.0.iter().zip(other.0.iter()).any(|(a, b)| a & b != 0)
    }
    pub fn union_with(&mut self, other: &ChipSet) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a |= b;
        }
    }
    /// Remove every chip of `other` from this set.
    pub fn remove_all(&mut self, other: &ChipSet) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a &= !b;
        }
    }
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
    pub fn len(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    /// Chip indices in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(word, bits)| {
            let mut bits = *bits;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                Some(word as u32 * 64 + bit)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(channels: u32, ways: u32) -> Geometry {
        Geometry {
            channels,
            chips_per_channel: ways,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 16,
            pages_per_block: 8,
            page_bytes: 4096,
        }
    }

    /// The look-ups (a shift and a mask where unit and period are powers of two, divisions
    /// otherwise) place every page where [`StaticMap::place`] puts its stripe unit.
    #[test]
    fn look_ups_agree_with_the_placement() {
        for (channels, ways) in [(4, 2), (3, 2), (1, 1), (5, 3)] {
            let g = geometry(channels, ways);
            for unit in [1, 2, 4, 10, 64] {
                let map =
                    StaticMap::new(&g, [Level::Chip, Level::Die, Level::Channel, Level::Plane])
                        .with_stripe_unit_pages(unit);
                for lpn in 0..3 * unit * g.planes() as u64 + 7 {
                    let p = map.place(lpn / unit);
                    let chip = p.channel * ways + p.way;
                    let plane = (chip * 2 + p.die) * 2 + p.plane;
                    assert_eq!(
                        map.chip_of(lpn),
                        chip,
                        "{channels}x{ways} unit {unit} page {lpn}"
                    );
                    assert_eq!(
                        map.plane_of(lpn),
                        plane,
                        "{channels}x{ways} unit {unit} page {lpn}"
                    );
                    for pages in [1, 3, unit + 1] {
                        let expected: Vec<u32> = {
                            let mut chips: Vec<u32> =
                                (lpn..lpn + pages).map(|l| map.chip_of(l)).collect();
                            chips.sort_unstable();
                            chips.dedup();
                            chips
                        };
                        assert_eq!(
                            map.chips_of_range(lpn, pages).iter().collect::<Vec<_>>(),
                            expected
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn channel_first_stripes_channels_then_chips() {
        let g = geometry(4, 2);
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
        let chips: Vec<u32> = (0..8).map(|lpn| map.chip_of(lpn)).collect();
        // channel-major chip numbering: chip = channel * 2 + way
        assert_eq!(chips, vec![0, 2, 4, 6, 1, 3, 5, 7]);
        assert_eq!(
            map.place(8),
            Placement {
                channel: 0,
                way: 0,
                die: 1,
                plane: 0
            }
        );
        assert_eq!(
            map.place(16),
            Placement {
                channel: 0,
                way: 0,
                die: 0,
                plane: 1
            }
        );
    }

    #[test]
    fn plane_first_keeps_consecutive_pages_on_one_chip() {
        let g = geometry(4, 2);
        let map = StaticMap::new(&g, [Level::Plane, Level::Die, Level::Chip, Level::Channel]);
        let chips: Vec<u32> = (0..5).map(|lpn| map.chip_of(lpn)).collect();
        assert_eq!(chips, vec![0, 0, 0, 0, 1]);
        assert_eq!(map.plane_of(0), 0);
        assert_eq!(map.plane_of(1), 1);
        assert_eq!(map.plane_of(2), 2);
    }

    #[test]
    fn a_stripe_unit_keeps_consecutive_pages_together() {
        // 4 channels x 2 ways x 2 dies x 2 planes = 32 planes, unit 10 pages, channel first.
        // Pages 0-9 are unit 0 (chip 0, plane 0), 10-19 unit 1 (channel 1 = chip 2, plane 8),
        // 20-29 unit 2 (chip 4); unit 32 wraps to unit 0's place: pages 320-329 on chip 0.
        let g = geometry(4, 2);
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane])
            .with_stripe_unit_pages(10);
        let chips: Vec<u32> = [0, 9, 10, 19, 20, 320].map(|lpn| map.chip_of(lpn)).to_vec();
        assert_eq!(chips, vec![0, 0, 2, 2, 4, 0]);
        assert_eq!((map.plane_of(9), map.plane_of(10)), (0, 8));
        // Pages 5..=24 span units 0, 1 and 2.
        assert_eq!(
            map.chips_of_range(5, 20).iter().collect::<Vec<_>>(),
            vec![0, 2, 4]
        );
        // One page and a range inside one unit touch one chip.
        assert_eq!(
            map.chips_of_range(12, 1).iter().collect::<Vec<_>>(),
            vec![2]
        );
        assert_eq!(
            map.chips_of_range(10, 10).iter().collect::<Vec<_>>(),
            vec![2]
        );
    }

    #[test]
    fn chip_set_operations() {
        let mut a = ChipSet::EMPTY;
        a.insert(3);
        a.insert(200);
        let mut b = ChipSet::EMPTY;
        b.insert(200);
        assert!(a.intersects(&b));
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![3, 200]);
        assert_eq!(a.len(), 2);
        let g = geometry(8, 1);
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
        assert_eq!(
            map.chips_of_range(6, 2).iter().collect::<Vec<_>>(),
            vec![6, 7]
        );
        assert_eq!(map.chips_of_range(0, 1000).len(), 8);
    }
}
