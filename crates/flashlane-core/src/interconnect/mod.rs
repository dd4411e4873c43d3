//! The paths between flash controllers and chips.
//!
//! Every interconnect implements [`Interconnect`]; [`InterconnectConfig`] lists them.

mod ideal;
mod shared_bus;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::config::Timing;
use crate::geometry::Geometry;

pub use ideal::Ideal;
pub use shared_bus::SharedBus;

/// A granted transfer: it occupies its path from `start_ns` to `end_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// The die (global index) the transfer serves, as given to `acquire`.
    pub die: u32,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// Counters an interconnect reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct InterconnectReport {
    /// Transfers that could not start the moment they asked for a path (path busy).
    pub path_conflicts: u64,
    /// Sum over transfers of (start - request time), ns.
    pub path_wait_ns: u64,
    /// Transfers granted.
    pub transfers: u64,
}

/// Answer of [`Interconnect::acquire`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquire {
    /// The transfer starts now and holds its path until `end_ns`.
    Granted(Grant),
    /// The path is busy: the transfer waits. If `wake_at_ns` is given, the simulator must
    /// call [`Interconnect::wake`] for this chip at that time.
    Queued { wake_at_ns: Option<u64> },
}

/// Contract: the simulator asks for a path with `acquire` (at most one outstanding request per
/// die) and calls `wake` at every wake-up time the interconnect asks for. A path carries one
/// transfer at a time; a granted transfer holds it until its `end_ns` without further calls
/// ("busy until T"), so uncontended transfers cost no events. Waiting transfers are granted
/// exactly once, from `wake`. An implementation never sees schedulers or the FTL.
pub trait Interconnect {
    /// Ask for a path between `chip`'s controller and `chip` on behalf of `die`.
    fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire;
    /// A wake-up asked for by `acquire` or by the previous `wake` of `chip`'s path: append the
    /// transfers that start now to `granted`; return the next wake-up time, if any.
    fn wake(&mut self, now_ns: u64, chip: u32, granted: &mut Vec<Grant>) -> Option<u64>;
    fn report(&self) -> InterconnectReport;
}

/// What crosses the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfer {
    /// A command and address sequence that starts an array operation (read, erase, copyback).
    /// Controllers send these ahead of waiting data so idle dies start work early.
    Command,
    /// Data out of a die after a read.
    DataOut { bytes: u32 },
    /// Program command, address and data in, one bus sequence.
    ProgramIn { bytes: u32 },
}

/// Interconnect choice in a config (`[interconnect] kind = "shared_bus"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum InterconnectConfig {
    /// One shared bus per channel: the chips of a channel take turns (the baseline SSD).
    SharedBus {},
    /// A private link per chip at the channel rate: no path conflicts (Venice's ideal SSD).
    Ideal {},
}

impl InterconnectConfig {
    pub fn name(&self) -> &'static str {
        match self {
            InterconnectConfig::SharedBus {} => "shared_bus",
            InterconnectConfig::Ideal {} => "ideal",
        }
    }

    pub fn build(&self, geometry: &Geometry, timing: &Timing) -> AnyInterconnect {
        match self {
            InterconnectConfig::SharedBus {} => {
                AnyInterconnect::SharedBus(SharedBus::new(geometry, timing))
            }
            InterconnectConfig::Ideal {} => AnyInterconnect::Ideal(Ideal::new(geometry, timing)),
        }
    }
}

/// Every interconnect, for static dispatch.
pub enum AnyInterconnect {
    SharedBus(SharedBus),
    Ideal(Ideal),
}

impl Interconnect for AnyInterconnect {
    fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire {
        match self {
            AnyInterconnect::SharedBus(i) => i.acquire(now_ns, chip, die, what),
            AnyInterconnect::Ideal(i) => i.acquire(now_ns, chip, die, what),
        }
    }
    fn wake(&mut self, now_ns: u64, chip: u32, granted: &mut Vec<Grant>) -> Option<u64> {
        match self {
            AnyInterconnect::SharedBus(i) => i.wake(now_ns, chip, granted),
            AnyInterconnect::Ideal(i) => i.wake(now_ns, chip, granted),
        }
    }
    fn report(&self) -> InterconnectReport {
        match self {
            AnyInterconnect::SharedBus(i) => i.report(),
            AnyInterconnect::Ideal(i) => i.report(),
        }
    }
}

/// Nanoseconds to move `bytes` at `bytes_per_ns`, rounded up.
pub fn transfer_ns(bytes: u32, bytes_per_ns: f64) -> u64 {
    (bytes as f64 / bytes_per_ns).ceil() as u64
}

/// A waiting transfer.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    die: u32,
    since_ns: u64,
    duration_ns: u64,
}

/// One link: busy until `busy_until_ns`; waiting commands go before waiting data, each class
/// first come, first served.
#[derive(Debug, Clone, Default)]
struct Link {
    busy_until_ns: u64,
    commands: VecDeque<Waiting>,
    data: VecDeque<Waiting>,
}

/// A set of independent links with command-first arbitration.
#[derive(Debug, Clone)]
pub(crate) struct Links {
    links: Vec<Link>,
    command_ns: u64,
    bytes_per_ns: f64,
    report: InterconnectReport,
}

impl Links {
    pub(crate) fn new(count: usize, timing: &Timing) -> Self {
        Links {
            links: vec![Link::default(); count],
            command_ns: timing.command_transfer_ns,
            bytes_per_ns: timing.channel_bytes_per_ns,
            report: InterconnectReport::default(),
        }
    }

    fn duration(&self, what: Transfer) -> u64 {
        match what {
            Transfer::Command => self.command_ns,
            Transfer::DataOut { bytes } => transfer_ns(bytes, self.bytes_per_ns),
            Transfer::ProgramIn { bytes } => {
                self.command_ns + transfer_ns(bytes, self.bytes_per_ns)
            }
        }
    }

    fn grant(&mut self, now_ns: u64, link: usize, waiting: Waiting) -> Grant {
        self.report.transfers += 1;
        if now_ns > waiting.since_ns {
            self.report.path_conflicts += 1;
            self.report.path_wait_ns += now_ns - waiting.since_ns;
        }
        let end_ns = now_ns + waiting.duration_ns;
        self.links[link].busy_until_ns = end_ns;
        Grant {
            die: waiting.die,
            start_ns: now_ns,
            end_ns,
        }
    }

    pub(crate) fn acquire(
        &mut self,
        now_ns: u64,
        link: usize,
        die: u32,
        what: Transfer,
    ) -> Acquire {
        let waiting = Waiting {
            die,
            since_ns: now_ns,
            duration_ns: self.duration(what),
        };
        let l = &mut self.links[link];
        let nobody_waits = l.commands.is_empty() && l.data.is_empty();
        if nobody_waits && now_ns >= l.busy_until_ns {
            return Acquire::Granted(self.grant(now_ns, link, waiting));
        }
        match what {
            Transfer::Command => l.commands.push_back(waiting),
            Transfer::DataOut { .. } | Transfer::ProgramIn { .. } => l.data.push_back(waiting),
        }
        // The first waiter asks for a wake-up when the link frees; later ones ride on it.
        Acquire::Queued {
            wake_at_ns: nobody_waits.then_some(l.busy_until_ns),
        }
    }

    pub(crate) fn wake(
        &mut self,
        now_ns: u64,
        link: usize,
        granted: &mut Vec<Grant>,
    ) -> Option<u64> {
        let l = &mut self.links[link];
        let next = l.commands.pop_front().or_else(|| l.data.pop_front())?;
        granted.push(self.grant(now_ns, link, next));
        let l = &self.links[link];
        (!l.commands.is_empty() || !l.data.is_empty()).then_some(l.busy_until_ns)
    }

    pub(crate) fn report(&self) -> InterconnectReport {
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing() -> Timing {
        Timing {
            command_transfer_ns: 10,
            page_read_ns: 0,
            page_program_ns: 0,
            block_erase_ns: 0,
            channel_bytes_per_ns: 1.0,
        }
    }

    #[test]
    fn busy_link_queues_and_wakes_commands_before_data() {
        let mut links = Links::new(1, &timing());
        let first = links.acquire(0, 0, 0, Transfer::DataOut { bytes: 100 });
        assert_eq!(
            first,
            Acquire::Granted(Grant {
                die: 0,
                start_ns: 0,
                end_ns: 100
            })
        );
        // The first waiter asks for a wake-up at the end of the transfer; later ones do not.
        assert_eq!(
            links.acquire(5, 0, 1, Transfer::DataOut { bytes: 50 }),
            Acquire::Queued {
                wake_at_ns: Some(100)
            }
        );
        assert_eq!(
            links.acquire(6, 0, 2, Transfer::Command),
            Acquire::Queued { wake_at_ns: None }
        );
        let mut granted = Vec::new();
        assert_eq!(links.wake(100, 0, &mut granted), Some(110));
        assert_eq!(
            granted,
            vec![Grant {
                die: 2,
                start_ns: 100,
                end_ns: 110
            }]
        );
        granted.clear();
        assert_eq!(links.wake(110, 0, &mut granted), None);
        assert_eq!(
            granted,
            vec![Grant {
                die: 1,
                start_ns: 110,
                end_ns: 160
            }]
        );
        // Free again once its last transfer ends.
        assert!(matches!(
            links.acquire(160, 0, 3, Transfer::Command),
            Acquire::Granted(_)
        ));
        let report = links.report();
        assert_eq!(
            (report.transfers, report.path_conflicts, report.path_wait_ns),
            (4, 2, 95 + 104)
        );
    }
}
