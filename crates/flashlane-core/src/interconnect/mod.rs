//! The paths between flash controllers and chips.
//!
//! Every interconnect implements [`Interconnect`]; [`InterconnectConfig`] lists them.

mod mesh;
mod venice;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::geometry::Geometry;
use crate::timing::Timing;

pub use mesh::MeshShape;
pub use venice::{Venice, VeniceConfig};

/// A granted transfer: it occupies its path from `start_ns` to `end_ns`. `start_ns` may lie after
/// the time of the grant when setting the path up takes time (Venice's scout round trip).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// The die (global index) the transfer serves, as given to `acquire`.
    pub die: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The path was granted the moment it was asked for, with no wait and no retried
    /// reservation (the same test the interconnect's `path_conflicts` counter uses).
    pub conflict_free: bool,
}

/// A wake-up an interconnect asks for: call [`Interconnect::wake`] with `key` at `at_ns`.
/// The key is the interconnect's own name for the resource to re-examine (a channel, a chip's
/// link, or the whole network).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    pub at_ns: u64,
    pub key: u32,
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
    /// Path reservations tried (Venice scouts sent; 0 on interconnects without reservation).
    pub reservation_attempts: u64,
    /// Of those, attempts that failed and had to be retried (scout came back in cancel mode,
    /// or the destination chip's port was held).
    pub reservation_retries: u64,
    /// Scout moves back to an upstream router (Venice).
    pub backtracks: u64,
    /// Sum over granted transfers of the links of their path (controller link included).
    pub path_hops: u64,
    /// Sum over granted transfers of the links of a shortest path (same counting).
    pub minimal_hops: u64,
    /// Links of the interconnect (buses count as one link each).
    pub links: u64,
    /// Largest busy time of one link over the run, ns.
    pub link_busy_max_ns: u64,
    /// Busy time summed over all links, ns.
    pub link_busy_total_ns: u64,
    /// Time links spent carrying a transfer's bits, summed over all links, ns: the busy time
    /// without Venice's set-up (links reserved while the scout travels carry nothing yet).
    /// The energy model charges link power for this time.
    pub link_active_ns: u64,
    /// End of the last transfer granted (the span link utilization is measured over), ns.
    pub last_transfer_end_ns: u64,
    /// Largest link utilization: `link_busy_max_ns / last_transfer_end_ns`.
    pub link_utilization_max_fraction: f64,
    /// Mean link utilization: `link_busy_total_ns / (links * last_transfer_end_ns)`.
    pub link_utilization_mean_fraction: f64,
    /// Share of transfers whose path was granted at their first request, with no wait and no
    /// retry: `(transfers - path_conflicts) / transfers` (the paper's Figure 13, per transfer).
    pub first_try_conflict_free_fraction: f64,
}

impl InterconnectReport {
    /// Fill the derived fractions from the counters.
    pub(crate) fn finish(mut self, link_busy_ns: &[u64]) -> Self {
        self.links = link_busy_ns.len() as u64;
        self.link_busy_max_ns = link_busy_ns.iter().copied().max().unwrap_or(0);
        self.link_busy_total_ns = link_busy_ns.iter().sum();
        self.link_active_ns = self.link_busy_total_ns;
        let span = self.last_transfer_end_ns as f64;
        if span > 0.0 && self.links > 0 {
            self.link_utilization_max_fraction = self.link_busy_max_ns as f64 / span;
            self.link_utilization_mean_fraction =
                self.link_busy_total_ns as f64 / (span * self.links as f64);
        }
        if self.transfers > 0 {
            self.first_try_conflict_free_fraction =
                (self.transfers - self.path_conflicts) as f64 / self.transfers as f64;
        }
        self
    }
}

/// Answer of [`Interconnect::acquire`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquire {
    /// The transfer holds its path from `grant.start_ns` until `grant.end_ns`. If `wake` is
    /// given, the simulator must call [`Interconnect::wake`] with its key at its time (a
    /// reservation that ends frees the path for transfers already waiting).
    Granted { grant: Grant, wake: Option<Wake> },
    /// The path is busy: the transfer waits. If `wake` is given, the simulator must call
    /// [`Interconnect::wake`] with its key at its time.
    Queued { wake: Option<Wake> },
}

/// Contract: the simulator asks for a path with `acquire` (at most one outstanding request per
/// die), in time order, and calls `wake` at every wake-up the interconnect asks for. A link
/// carries one transfer at a time; a granted transfer holds its path (one link or many) until
/// its `end_ns` without further calls ("busy until T"), so uncontended transfers cost no
/// events. A grant's `start_ns` is never before the call that grants it, and may be later
/// (path set-up time). Transfers not granted by `acquire` are granted exactly once, from
/// `wake`; one wake may grant transfers to any chips (a release on a mesh frees paths to many
/// chips; a scout reaches its chip). A die that was granted a [`Transfer::ReadCommand`] asks
/// for its [`Transfer::DataOut`] next (after the array read), so an interconnect may keep the
/// command's path for the data. An implementation never sees schedulers or the FTL.
pub trait Interconnect {
    /// Ask for a path between a controller and `chip` on behalf of `die`.
    fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire;
    /// A wake-up asked for by `acquire` or by the previous `wake` with the same `key`: append
    /// the transfers granted now to `granted`; return the next wake-up time for `key`, if any.
    fn wake(&mut self, now_ns: u64, key: u32, granted: &mut Vec<Grant>) -> Option<u64>;
    fn report(&self) -> InterconnectReport;
}

/// What crosses the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfer {
    /// A command and address sequence that starts an array operation (erase, copyback).
    /// Controllers send these ahead of waiting data so idle dies start work early.
    Command,
    /// The command of a read whose data the same die moves next (`DataOut`): on a bus the same
    /// as `Command`; Venice may keep its reserved path for the data (`read_data_path`).
    ReadCommand,
    /// Data out of a die after a read.
    DataOut { bytes: u32 },
    /// Program command, address and data in, one bus sequence.
    ProgramIn { bytes: u32 },
}

crate::registry::registry! {
    /// Interconnect choice in a config (`[interconnect] kind = "shared_bus"`).
    config InterconnectConfig;

    dispatch AnyInterconnect: Interconnect {
        fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire;
        fn wake(&mut self, now_ns: u64, key: u32, granted: &mut Vec<Grant>) -> Option<u64>;
        fn report(&self) -> InterconnectReport;
    }

    /// An interconnect's config struct (`[interconnect]` minus `kind`): builds it for a drive
    /// of `geometry` and `timing`.
    kind trait InterconnectKind {
        fn build(&self, geometry: &Geometry, timing: &Timing);
        /// Check the parameters against the geometry; messages name the key.
        fn validate(&self, geometry: &Geometry) -> Result<(), String> {
            let _ = geometry;
            Ok(())
        }
        /// Which active power the energy model charges for its links' busy time.
        fn link_power(&self) -> LinkPower;
        /// Flash controllers and routers it has (what draws static power in the energy model).
        fn controllers_and_routers(&self, geometry: &Geometry) -> (u64, u64);
    }

    // One line per interconnect, in documentation order: `mod FILE: "kind" => Variant(Config)`
    // declares FILE.rs and re-exports its public items; a line without `mod` names a module
    // declared above, which serves more than that kind.
    kinds [
        mod shared_bus: "shared_bus" => SharedBus(SharedBusConfig),
        mod ideal: "ideal" => Ideal(IdealConfig),
        mod packetized: "packetized" => Packetized(PacketizedConfig),
        mod pnssd: "pnssd" => Pnssd(PnssdConfig),
        mod nossd: "nossd" => Nossd(NoSsdConfig),
        "venice" => Venice(VeniceConfig),
    ]
}

/// The power a link draws while it carries bits (`[energy]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkPower {
    /// A shared or packetized bus: `energy.bus_active_mw`.
    Bus,
    /// A point-to-point link: `energy.link_active_mw`.
    Link,
}

/// A boxed interconnect (a large one, kept off the dispatch enum) is one too.
impl<T: Interconnect + ?Sized> Interconnect for Box<T> {
    fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire {
        (**self).acquire(now_ns, chip, die, what)
    }
    fn wake(&mut self, now_ns: u64, key: u32, granted: &mut Vec<Grant>) -> Option<u64> {
        (**self).wake(now_ns, key, granted)
    }
    fn report(&self) -> InterconnectReport {
        (**self).report()
    }
}

/// Which waiting transfer a freed bus (or private link) serves first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BusArbitration {
    /// Commands first, so idle dies start their array work early; then data out of dies and
    /// program sequences, in arrival order (flashlane's default).
    #[default]
    CommandsFirst,
    /// MQSim's order (NVM_PHY_ONFI_NVDDR2): read data waiting to leave a die first, then
    /// commands, then program sequences; MQSim's scheduler issues new commands only once no
    /// read data waits for the channel (docs/models/venice.md, "Platform").
    DataOutFirst,
    /// SSDsim's order (`flash.c: process` on an idle channel): commands first
    /// (`services_2_r_wait`), then the data of a finished read of the lowest-numbered chip
    /// (`services_2_r_data_trans` scans the channel's chips in order, not by age), then program
    /// sequences in arrival order (`services_2_write`).
    SsdsimOrder,
}

impl BusArbitration {
    pub(crate) fn is_commands_first(&self) -> bool {
        *self == BusArbitration::CommandsFirst
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

/// One link: busy until `busy_until_ns`; waiting transfers in three classes, each first come,
/// first served (data out under `SsdsimOrder`: lowest die, so lowest chip, first), served in
/// the order [`BusArbitration`] gives. Under `CommandsFirst`, `data` holds data out and
/// program sequences together (arrival order) and `programs` stays empty.
#[derive(Debug, Clone, Default)]
struct Link {
    busy_until_ns: u64,
    busy_ns: u64,
    commands: VecDeque<Waiting>,
    data: VecDeque<Waiting>,
    programs: VecDeque<Waiting>,
}

impl Link {
    fn nobody_waits(&self) -> bool {
        self.commands.is_empty() && self.data.is_empty() && self.programs.is_empty()
    }
}

/// A set of independent links, each serving its waiting transfers in `arbitration` order.
#[derive(Debug, Clone)]
pub(crate) struct Links {
    links: Vec<Link>,
    arbitration: BusArbitration,
    command_ns: u64,
    bytes_per_ns: f64,
    /// [`transfer_ns`] of every whole number of sectors up to [`TABLED_SECTORS`], computed
    /// once: a data transfer (a page, a mapping read's sector) then costs a look-up instead
    /// of a division and a `ceil`, which is a libm call (the same values).
    sector_ns: Box<[u64]>,
    /// Bytes added to every data transfer (packet header); 0 on a plain bus.
    header_bytes: u32,
    report: InterconnectReport,
}

/// Sectors whose transfer time [`Links`] keeps in a table (up to 64 KiB).
const TABLED_SECTORS: u32 = 128;
const SECTOR_BYTES: u32 = 512;

fn sector_transfer_table(bytes_per_ns: f64) -> Box<[u64]> {
    (0..=TABLED_SECTORS)
        .map(|sectors| transfer_ns(sectors * SECTOR_BYTES, bytes_per_ns))
        .collect()
}

impl Links {
    pub(crate) fn new(count: usize, timing: &Timing) -> Self {
        Links {
            links: vec![Link::default(); count],
            arbitration: BusArbitration::CommandsFirst,
            command_ns: timing.command_transfer_ns,
            bytes_per_ns: timing.channel_bytes_per_ns,
            sector_ns: sector_transfer_table(timing.channel_bytes_per_ns),
            header_bytes: 0,
            report: InterconnectReport::default(),
        }
    }

    /// Links carrying packets at `rate_ratio` times the channel rate, every command and every
    /// data transfer one packet with `header_bytes` of header.
    pub(crate) fn packetized(
        count: usize,
        timing: &Timing,
        rate_ratio: f64,
        header_bytes: u32,
    ) -> Self {
        let bytes_per_ns = timing.channel_bytes_per_ns * rate_ratio;
        Links {
            links: vec![Link::default(); count],
            arbitration: BusArbitration::CommandsFirst,
            command_ns: (timing.command_transfer_ns as f64 / rate_ratio).ceil() as u64
                + transfer_ns(header_bytes, bytes_per_ns),
            bytes_per_ns,
            sector_ns: sector_transfer_table(bytes_per_ns),
            header_bytes,
            report: InterconnectReport::default(),
        }
    }

    /// The same links serving waiting transfers in `arbitration` order.
    pub(crate) fn with_arbitration(mut self, arbitration: BusArbitration) -> Self {
        self.arbitration = arbitration;
        self
    }

    fn duration(&self, what: Transfer) -> u64 {
        match what {
            Transfer::Command | Transfer::ReadCommand => self.command_ns,
            Transfer::DataOut { bytes } => self.data_ns(bytes + self.header_bytes),
            Transfer::ProgramIn { bytes } => self.command_ns + self.data_ns(bytes),
        }
    }

    /// [`transfer_ns`] at these links' rate, from the table for whole sectors.
    #[inline]
    fn data_ns(&self, bytes: u32) -> u64 {
        if bytes.is_multiple_of(SECTOR_BYTES) {
            if let Some(&ns) = self.sector_ns.get((bytes / SECTOR_BYTES) as usize) {
                return ns;
            }
        }
        transfer_ns(bytes, self.bytes_per_ns)
    }

    /// The time `link` is free and nobody waits for it, or `None` if transfers wait for it.
    pub(crate) fn free_from(&self, link: usize) -> Option<u64> {
        let l = &self.links[link];
        l.nobody_waits().then_some(l.busy_until_ns)
    }

    /// Whether `link` is free at `now_ns` with no transfer waiting for it.
    pub(crate) fn idle_at(&self, now_ns: u64, link: usize) -> bool {
        self.free_from(link).is_some_and(|free| free <= now_ns)
    }

    /// Hold `link`, idle at `now_ns`, until `until_ns` without a transfer (SSDsim's GC keeps
    /// its channel busy while it moves a victim's pages). Returns false, changing nothing,
    /// if the link is not idle.
    pub(crate) fn hold(&mut self, now_ns: u64, link: usize, until_ns: u64) -> bool {
        if !self.idle_at(now_ns, link) || until_ns < now_ns {
            return false;
        }
        let l = &mut self.links[link];
        l.busy_until_ns = until_ns;
        l.busy_ns += until_ns - now_ns;
        self.report.last_transfer_end_ns = self.report.last_transfer_end_ns.max(until_ns);
        true
    }

    /// Transfers waiting for `link`.
    pub(crate) fn waiting(&self, link: usize) -> usize {
        let l = &self.links[link];
        l.commands.len() + l.data.len() + l.programs.len()
    }

    fn grant(&mut self, now_ns: u64, link: usize, waiting: Waiting) -> Grant {
        self.report.transfers += 1;
        if now_ns > waiting.since_ns {
            self.report.path_conflicts += 1;
            self.report.path_wait_ns += now_ns - waiting.since_ns;
        }
        let end_ns = now_ns + waiting.duration_ns;
        self.links[link].busy_until_ns = end_ns;
        self.links[link].busy_ns += waiting.duration_ns;
        self.report.last_transfer_end_ns = self.report.last_transfer_end_ns.max(end_ns);
        Grant {
            die: waiting.die,
            start_ns: now_ns,
            end_ns,
            conflict_free: now_ns <= waiting.since_ns,
        }
    }

    /// Ask for `link`; a wake-up it asks for carries `link` as its key.
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
        let arbitration = self.arbitration;
        let l = &mut self.links[link];
        let nobody_waits = l.nobody_waits();
        if nobody_waits && now_ns >= l.busy_until_ns {
            return Acquire::Granted {
                grant: self.grant(now_ns, link, waiting),
                wake: None,
            };
        }
        match (what, arbitration) {
            (Transfer::Command | Transfer::ReadCommand, _) => l.commands.push_back(waiting),
            (
                Transfer::ProgramIn { .. },
                BusArbitration::DataOutFirst | BusArbitration::SsdsimOrder,
            ) => l.programs.push_back(waiting),
            (Transfer::DataOut { .. } | Transfer::ProgramIn { .. }, _) => l.data.push_back(waiting),
        }
        // The first waiter asks for a wake-up when the link frees; later ones ride on it.
        Acquire::Queued {
            wake: nobody_waits.then_some(Wake {
                at_ns: l.busy_until_ns,
                key: link as u32,
            }),
        }
    }

    pub(crate) fn wake(
        &mut self,
        now_ns: u64,
        link: usize,
        granted: &mut Vec<Grant>,
    ) -> Option<u64> {
        let l = &mut self.links[link];
        let next = match self.arbitration {
            BusArbitration::CommandsFirst => l.commands.pop_front().or_else(|| l.data.pop_front()),
            BusArbitration::DataOutFirst => l
                .data
                .pop_front()
                .or_else(|| l.commands.pop_front())
                .or_else(|| l.programs.pop_front()),
            BusArbitration::SsdsimOrder => l
                .commands
                .pop_front()
                .or_else(|| {
                    // Dies are numbered chip-major: the lowest die is on the lowest chip.
                    let lowest = (0..l.data.len()).min_by_key(|&i| l.data[i].die)?;
                    l.data.remove(lowest)
                })
                .or_else(|| l.programs.pop_front()),
        }?;
        granted.push(self.grant(now_ns, link, next));
        let l = &self.links[link];
        (!l.nobody_waits()).then_some(l.busy_until_ns)
    }

    pub(crate) fn report(&self) -> InterconnectReport {
        let busy: Vec<u64> = self.links.iter().map(|l| l.busy_ns).collect();
        let mut report = self.report;
        report.path_hops = report.transfers;
        report.minimal_hops = report.transfers;
        report.finish(&busy)
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

    /// The table of whole-sector transfer times gives what the formula gives, at rates that
    /// divide evenly and rates that do not, for sizes in the table, past it and between
    /// sectors; packetized links (a header on every data transfer) too.
    #[test]
    fn tabled_transfer_times_match_the_formula() {
        for rate in [1.0, 0.333, 0.8, 1.6, 3.2, 7.3] {
            let mut t = timing();
            t.channel_bytes_per_ns = rate;
            for links in [Links::new(1, &t), Links::packetized(1, &t, 0.7, 24)] {
                for bytes in (0..=80_000).step_by(64).chain([1, 511, 513, 4096, 16384]) {
                    assert_eq!(
                        links.duration(Transfer::DataOut { bytes }),
                        transfer_ns(bytes + links.header_bytes, links.bytes_per_ns),
                        "{rate} {bytes}"
                    );
                    assert_eq!(
                        links.duration(Transfer::ProgramIn { bytes }),
                        links.command_ns + transfer_ns(bytes, links.bytes_per_ns),
                        "{rate} {bytes}"
                    );
                }
            }
        }
    }

    #[test]
    fn ssdsim_order_serves_commands_then_the_lowest_chip_s_data_then_programs() {
        let mut links = Links::new(1, &timing()).with_arbitration(BusArbitration::SsdsimOrder);
        // Busy 0..100; then, while it is busy: a program of die 0, data of die 5, data of
        // die 2, a command of die 7. Served at 100: the command (10 ns), then die 2's data
        // (older die 5 waits: chip order), then die 5's, then the program.
        let _ = links.acquire(0, 0, 9, Transfer::DataOut { bytes: 100 });
        let _ = links.acquire(1, 0, 0, Transfer::ProgramIn { bytes: 10 });
        let _ = links.acquire(2, 0, 5, Transfer::DataOut { bytes: 10 });
        let _ = links.acquire(3, 0, 2, Transfer::DataOut { bytes: 10 });
        let _ = links.acquire(4, 0, 7, Transfer::Command);
        let mut order = Vec::new();
        let mut at = Some(100);
        while let Some(now) = at {
            let mut granted = Vec::new();
            at = links.wake(now, 0, &mut granted);
            order.extend(granted.iter().map(|g| (g.die, g.start_ns)));
        }
        assert_eq!(order, [(7, 100), (2, 110), (5, 120), (0, 130)]);
    }

    #[test]
    fn busy_link_queues_and_wakes_commands_before_data() {
        let mut links = Links::new(1, &timing());
        let first = links.acquire(0, 0, 0, Transfer::DataOut { bytes: 100 });
        assert_eq!(
            first,
            Acquire::Granted {
                grant: Grant {
                    die: 0,
                    start_ns: 0,
                    end_ns: 100,
                    conflict_free: true
                },
                wake: None
            }
        );
        // The first waiter asks for a wake-up at the end of the transfer; later ones do not.
        assert_eq!(
            links.acquire(5, 0, 1, Transfer::DataOut { bytes: 50 }),
            Acquire::Queued {
                wake: Some(Wake { at_ns: 100, key: 0 })
            }
        );
        assert_eq!(
            links.acquire(6, 0, 2, Transfer::Command),
            Acquire::Queued { wake: None }
        );
        let mut granted = Vec::new();
        assert_eq!(links.wake(100, 0, &mut granted), Some(110));
        assert_eq!(
            granted,
            vec![Grant {
                die: 2,
                start_ns: 100,
                end_ns: 110,
                conflict_free: false
            }]
        );
        granted.clear();
        assert_eq!(links.wake(110, 0, &mut granted), None);
        assert_eq!(
            granted,
            vec![Grant {
                die: 1,
                start_ns: 110,
                end_ns: 160,
                conflict_free: false
            }]
        );
        // Free again once its last transfer ends.
        assert!(matches!(
            links.acquire(160, 0, 3, Transfer::Command),
            Acquire::Granted { .. }
        ));
        let report = links.report();
        assert_eq!(
            (report.transfers, report.path_conflicts, report.path_wait_ns),
            (4, 2, 95 + 104)
        );
    }

    /// MQSim's order: waiting read data leaves first, then commands, then program sequences,
    /// whatever order they arrived in.
    #[test]
    fn data_out_first_serves_read_data_then_commands_then_programs() {
        let mut links = Links::new(1, &timing()).with_arbitration(BusArbitration::DataOutFirst);
        assert!(matches!(
            links.acquire(0, 0, 0, Transfer::DataOut { bytes: 100 }),
            Acquire::Granted { .. }
        ));
        assert_eq!(
            links.acquire(1, 0, 1, Transfer::ProgramIn { bytes: 20 }),
            Acquire::Queued {
                wake: Some(Wake { at_ns: 100, key: 0 })
            }
        );
        for (at, die, what) in [
            (2, 2, Transfer::Command),
            (3, 3, Transfer::DataOut { bytes: 50 }),
        ] {
            assert_eq!(
                links.acquire(at, 0, die, what),
                Acquire::Queued { wake: None }
            );
        }
        assert_eq!(links.waiting(0), 3);
        let mut order = Vec::new();
        let mut granted = Vec::new();
        let mut now = 100;
        loop {
            let next = links.wake(now, 0, &mut granted);
            let g = granted.pop().expect("each wake grants one transfer");
            order.push((g.die, g.start_ns, g.end_ns));
            match next {
                Some(at) => now = at,
                None => break,
            }
        }
        // Data out (50 ns), command (10 ns), program: command 10 ns + 20 bytes.
        assert_eq!(order, vec![(3, 100, 150), (2, 150, 160), (1, 160, 190)]);
        assert_eq!(links.free_from(0), Some(190));
    }
}
