//! Chip busy time in the measured window, and the time during which any chip was busy
//! (`ChipStats`; the SOS idle ratio of `DeviceQueueStats` uses both).

/// The flow reports when a die of a chip starts working and when it finishes; a chip is busy
/// while any of its dies works (definition at [`super::ChipStats::utilization`]).
#[derive(Debug, Clone)]
pub struct ChipActivityRecorder {
    busy_dies: Vec<u32>,
    busy_since_ns: Vec<u64>,
    /// Busy time in the window, per chip.
    busy_total_ns: Vec<u64>,
    /// Chips with at least one busy die.
    busy_chips: u32,
    active_since_ns: u64,
    /// Window time during which `busy_chips` > 0.
    active_total_ns: u64,
}

impl ChipActivityRecorder {
    pub fn new(chips: usize) -> Self {
        ChipActivityRecorder {
            busy_dies: vec![0; chips],
            busy_since_ns: vec![0; chips],
            busy_total_ns: vec![0; chips],
            busy_chips: 0,
            active_since_ns: 0,
            active_total_ns: 0,
        }
    }

    /// A die of `chip` starts working at `at`.
    #[inline]
    pub fn die_started(&mut self, at: u64, chip: usize) {
        if self.busy_dies[chip] == 0 {
            self.busy_since_ns[chip] = at;
            if self.busy_chips == 0 {
                self.active_since_ns = at;
            }
            self.busy_chips += 1;
        }
        self.busy_dies[chip] += 1;
    }

    /// A die of `chip` finished at `now`; only time after `window_start_ns` counts.
    #[inline]
    pub fn die_finished(&mut self, now: u64, chip: usize, window_start_ns: u64) {
        self.busy_dies[chip] -= 1;
        if self.busy_dies[chip] == 0 {
            self.busy_chips -= 1;
            if now > window_start_ns {
                self.busy_total_ns[chip] += now - self.busy_since_ns[chip].max(window_start_ns);
                if self.busy_chips == 0 {
                    self.active_total_ns += now - self.active_since_ns.max(window_start_ns);
                }
            }
        }
    }

    pub fn busy_total_ns(&self) -> &[u64] {
        &self.busy_total_ns
    }

    pub fn active_total_ns(&self) -> u64 {
        self.active_total_ns
    }
}
