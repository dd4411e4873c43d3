//! When a die of a chip may start its next operation (`device.die_issue`).
//!
//! `independent` (the default): whenever the die itself is idle; dies of one chip contend only
//! for the channel. `whole_chip_idle`: only when no die of its chip works, so a chip runs one
//! die's command at a time. The second is MQSim's rule: its schedulers serve a chip only while
//! `GetChipStatus(chip)` is IDLE (`TSU_OutOfOrder::service_read_transaction` and friends), and
//! `TSU_Base::issue_command_to_chip` sends the transactions of one die only (its loop over dies
//! returns after the first die), so a second die of the chip starts only after the first ends
//! (docs/models/ssd-model.md, "Dies of a chip").
//!
//! The rule is applied by what the device scheduler sees: `blocked()` replaces the dies' busy
//! state in [`super::DeviceContext::die_busy`], so every scheduler obeys it unchanged.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DieIssueRule {
    /// A die starts whenever it is idle.
    #[default]
    Independent,
    /// A die starts only when every die of its chip is idle (MQSim).
    WholeChipIdle,
}

impl DieIssueRule {
    pub fn name(self) -> &'static str {
        match self {
            DieIssueRule::Independent => "independent",
            DieIssueRule::WholeChipIdle => "whole_chip_idle",
        }
    }
}

/// Which dies may not start an operation now.
pub struct DieIssue {
    rule: DieIssueRule,
    dies_per_chip: usize,
    blocked: Vec<bool>,
    /// Working dies per chip (`whole_chip_idle` only).
    working: Vec<u32>,
}

impl DieIssue {
    pub fn new(rule: DieIssueRule, chips: u32, dies_per_chip: u32) -> Self {
        DieIssue {
            rule,
            dies_per_chip: dies_per_chip as usize,
            blocked: vec![false; (chips * dies_per_chip) as usize],
            working: vec![0; chips as usize],
        }
    }

    /// `die` (global index, chip-major) of `chip` started an operation.
    #[inline]
    pub fn started(&mut self, chip: u32, die: u32) {
        debug_assert_eq!(die as usize / self.dies_per_chip, chip as usize);
        match self.rule {
            DieIssueRule::Independent => self.blocked[die as usize] = true,
            DieIssueRule::WholeChipIdle => {
                let chip = chip as usize;
                self.working[chip] += 1;
                let first = chip * self.dies_per_chip;
                set_all(&mut self.blocked[first..first + self.dies_per_chip], true);
            }
        }
    }

    /// `die` of `chip` ended its operation.
    #[inline]
    pub fn finished(&mut self, chip: u32, die: u32) {
        debug_assert_eq!(die as usize / self.dies_per_chip, chip as usize);
        match self.rule {
            DieIssueRule::Independent => self.blocked[die as usize] = false,
            DieIssueRule::WholeChipIdle => {
                let chip = chip as usize;
                self.working[chip] -= 1;
                if self.working[chip] == 0 {
                    let first = chip * self.dies_per_chip;
                    set_all(&mut self.blocked[first..first + self.dies_per_chip], false);
                }
            }
        }
    }

    /// Per die: true while it may not start an operation.
    #[inline]
    pub fn blocked(&self) -> &[bool] {
        &self.blocked
    }
}

/// Set a chip's dies: stores of a known count for the usual few dies per chip (a `fill` of a
/// length known only at run time is a call to `memset`, about 1 % of `mqsim-platform`'s
/// instructions when it ran twice an operation).
#[inline]
fn set_all(dies: &mut [bool], value: bool) {
    match dies {
        [a] => *a = value,
        [a, b] => (*a, *b) = (value, value),
        [a, b, c, d] => (*a, *b, *c, *d) = (value, value, value, value),
        _ => dies.fill(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_blocks_only_the_working_die() {
        let mut d = DieIssue::new(DieIssueRule::Independent, 2, 2);
        d.started(0, 1);
        assert_eq!(d.blocked(), &[false, true, false, false]);
        d.finished(0, 1);
        assert_eq!(d.blocked(), &[false; 4]);
    }

    #[test]
    fn whole_chip_idle_blocks_the_chip_until_its_last_die_ends() {
        let mut d = DieIssue::new(DieIssueRule::WholeChipIdle, 2, 2);
        d.started(1, 2);
        assert_eq!(d.blocked(), &[false, false, true, true]);
        // Two dies working (e.g. one started before the rule could stop it): the chip frees
        // only when both ended.
        d.started(1, 3);
        d.finished(1, 2);
        assert_eq!(d.blocked(), &[false, false, true, true]);
        d.finished(1, 3);
        assert_eq!(d.blocked(), &[false; 4]);
    }

    /// Every count of dies per chip (the stores of a known count and the general fill)
    /// blocks exactly the chip's dies, and frees them.
    #[test]
    fn whole_chip_idle_blocks_exactly_the_chips_dies() {
        for dies_per_chip in 1..=9u32 {
            let mut d = DieIssue::new(DieIssueRule::WholeChipIdle, 3, dies_per_chip);
            let last = 2 * dies_per_chip - 1;
            d.started(1, last);
            let expected: Vec<bool> = (0..3 * dies_per_chip)
                .map(|die| die / dies_per_chip == 1)
                .collect();
            assert_eq!(d.blocked(), &expected[..], "{dies_per_chip} dies a chip");
            d.finished(1, last);
            assert!(
                d.blocked().iter().all(|b| !b),
                "{dies_per_chip} dies a chip"
            );
        }
    }
}
