//! SSDsim's sub-request service order (the simulator of the PIQ and VIOS papers).
//!
//! SSDsim (`flash.c: process`) visits each idle channel and, reads first, starts the first
//! waiting read sub-request of that channel whose **chip** is idle (`services_2_r_wait`: busy
//! chips are skipped, so service is out of order within a channel); only if no read used the
//! channel does it start a write (`services_2_write`, which under static allocation also takes
//! the first waiting write of an idle chip). Without advanced commands (the shipped
//! `page.parameters` has `advanced command = 0`) the busy unit is the whole chip: a chip runs
//! one operation at a time, on either of its dies.
//!
//! Here: one read queue (host and mapping reads) and one queue for everything else (programs,
//! mapping programs, GC copybacks, erases) per chip, both in arrival order. An idle chip (no
//! die busy) starts the head of its read queue, or if that is empty the head of its other
//! queue. The channel itself (one transfer at a time) is the interconnect's business; skipping
//! busy chips is what per-chip queues give.
//!
//! Three more of SSDsim's rules are switches of this scheduler (each off by default;
//! docs/models/ssd-model.md, "SSDsim's platform rules"). Under
//! `program_binding = "at_transfer"` a program waits on its channel, not on its chip: the
//! simulation offers a channel its programs only when the channel is free and no command or
//! read data waits for it (`services_2_write` runs last on an idle channel), and the program
//! takes its chip only then ([`Ssdsim::take_program`]); `program_order` says which one the
//! channel takes. Under `gc = "holds_channel"` the copybacks and the erase of one victim form
//! one job ([`GcJob`]) that runs only on a channel without host work and holds it
//! ([`Ssdsim::take_gc_job`]).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::DeviceSchedulerKind;
use super::{DeviceContext, DeviceScheduler, Transaction, TxnKind};
use crate::geometry::Geometry;

/// `kind = "ssdsim"`: SSDsim's order (PIQ/VIOS platform): the whole chip is busy while any of
/// its dies works; an idle chip starts its oldest read, else its oldest program or GC
/// operation. Its switches are SSDsim's further rules, each off by default (docs/models/
/// ssd-model.md, "SSDsim's platform rules").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdsimConfig {
    /// When a program takes its chip: `at_issue` (default) or `at_transfer`.
    #[serde(default, skip_serializing_if = "ProgramBinding::is_default")]
    pub program_binding: ProgramBinding,
    /// Which waiting program a free channel takes under `at_transfer`: `arrival`
    /// (default) or `lowest_idle_chip`.
    #[serde(default, skip_serializing_if = "ProgramOrder::is_default")]
    pub program_order: ProgramOrder,
    /// Garbage collection: `queued` (default) or `holds_channel`.
    #[serde(default, skip_serializing_if = "GcService::is_default")]
    pub gc: GcService,
    /// Bytes a host read moves out of the chip: `requested` (default) or
    /// `held_sectors`.
    #[serde(default, skip_serializing_if = "ReadTransfer::is_default")]
    pub read_transfer: ReadTransfer,
    /// A host read of a physical page that a read already queued or under way reads
    /// completes this many ns after its hand-over, with no flash work (SSDsim's
    /// `creat_sub_request`: 1000). Absent = off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_read_ns: Option<u64>,
}

impl SsdsimConfig {
    pub fn switches(&self) -> SsdsimSwitches {
        SsdsimSwitches {
            program_binding: self.program_binding,
            program_order: self.program_order,
            gc: self.gc,
        }
    }
}

impl DeviceSchedulerKind for SsdsimConfig {
    type Built = Ssdsim;
    fn build(&self, geometry: &Geometry) -> Ssdsim {
        Ssdsim::with_switches(geometry.chips(), geometry.dies_per_chip, self.switches())
    }
}

/// When a program takes its chip (`device.scheduler.program_binding`, `ssdsim` only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramBinding {
    /// As soon as its chip is idle: the chip then waits for the channel to carry the
    /// program's command and data (flashlane's default).
    #[default]
    AtIssue,
    /// Only when its transfer starts: a program waits on its channel until the channel is
    /// free and no read command or read data waits for it, so a read that arrives later for
    /// the same chip goes first (SSDsim's `flash.c: process`, where `services_2_write` runs
    /// last on an idle channel and `static_write` makes the chip busy).
    AtTransfer,
}

/// Which waiting program a free channel takes (`device.scheduler.program_order`; needs
/// `program_binding = "at_transfer"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramOrder {
    /// The oldest program of an idle chip of the channel.
    #[default]
    Arrival,
    /// SSDsim's static allocation (`services_2_write`, `allocation_scheme == 1`): the lowest
    /// idle chip of the channel that has a program, die 0 before die 1, the oldest program of
    /// that die.
    LowestIdleChip,
}

/// How garbage collection uses the flash (`device.scheduler.gc`, `ssdsim` only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcService {
    /// Each copyback and erase is queued with its chip's other operations (flashlane's
    /// default; copybacks move no data over the channel).
    #[default]
    Queued,
    /// SSDsim's uninterruptible GC without copyback (`pagemap.c: gc`, `gc_for_channel`,
    /// `uninterrupt_gc`, `move_page`): a victim's moves and its erase are one job that starts
    /// only when its channel is free and has no read (waiting or under way) and no waiting
    /// program, and its chip is idle; it holds the channel for every move (two commands,
    /// tR, tPROG and the page's data out and back in) and the chip for that plus the erase.
    HoldsChannel,
}

/// How many bytes a host read moves out of the chip (`device.scheduler.read_transfer`,
/// `ssdsim` only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadTransfer {
    /// The bytes the request reads in that page (flashlane's default).
    #[default]
    Requested,
    /// Every 512-byte sector the page holds (SSDsim's `no_buffer_distribute_*`: a read
    /// sub-request's size is its page's mapping state, `size(map_entry[lpn].state)`).
    HeldSectors,
}

impl ReadTransfer {
    pub fn is_default(&self) -> bool {
        *self == ReadTransfer::Requested
    }
}

impl ProgramBinding {
    pub fn is_default(&self) -> bool {
        *self == ProgramBinding::AtIssue
    }
}

impl ProgramOrder {
    pub fn is_default(&self) -> bool {
        *self == ProgramOrder::Arrival
    }
}

impl GcService {
    pub fn is_default(&self) -> bool {
        *self == GcService::Queued
    }
}

/// The switches of the `ssdsim` scheduler (see [`SsdsimConfig`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SsdsimSwitches {
    pub program_binding: ProgramBinding,
    pub program_order: ProgramOrder,
    pub gc: GcService,
}

impl SsdsimSwitches {
    /// Check the switches against the rest of the drive; messages name the key. `shared_bus`:
    /// the interconnect is `shared_bus` (the channel these rules serve); `multiplane`:
    /// `device.multiplane`; `erase_done`: `ftl.gc_block_release = "erase_done"`.
    pub fn check(
        &self,
        shared_bus: bool,
        multiplane: bool,
        erase_done: bool,
    ) -> Result<(), String> {
        let at_transfer = self.program_binding == ProgramBinding::AtTransfer;
        let holds = self.gc == GcService::HoldsChannel;
        if self.program_order != ProgramOrder::Arrival && !at_transfer {
            return Err("device.scheduler.program_order applies to programs that wait on their channel: set device.scheduler.program_binding = \"at_transfer\" (or leave the key out)".into());
        }
        for (on, key) in [
            (
                at_transfer,
                "device.scheduler.program_binding = \"at_transfer\"",
            ),
            (holds, "device.scheduler.gc = \"holds_channel\""),
        ] {
            if !on {
                continue;
            }
            if !shared_bus {
                return Err(format!(
                    "{key} serves SSDsim's channels: it needs interconnect.kind = \"shared_bus\""
                ));
            }
            if multiplane {
                return Err(format!(
                    "{key} is not modelled with multi-plane commands (device.multiplane must be false; SSDsim's platform has advanced commands off)"
                ));
            }
        }
        if holds && erase_done {
            return Err("device.scheduler.gc = \"holds_channel\" releases a victim when the FTL collects it: it needs ftl.gc_block_release = \"translation\"".into());
        }
        Ok(())
    }
}

/// One victim's garbage collection under `gc = "holds_channel"`: its page moves and its erase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcJob {
    /// Order of arrival among the scheduler's jobs.
    pub seq: u64,
    /// The copybacks (one per valid page moved), in the FTL's order.
    pub moves: Vec<Transaction>,
    /// The victim's erase; its chip, die and plane are the job's.
    pub erase: Transaction,
}

pub struct Ssdsim {
    reads: Vec<VecDeque<Transaction>>,
    /// Programs and GC work, in arrival order.
    others: Vec<VecDeque<Transaction>>,
    queued: Vec<u32>,
    switches: SsdsimSwitches,
    dies_per_chip: usize,
    /// Under `at_transfer`: each die's programs (global die index), oldest first, with their
    /// arrival sequence.
    programs: Vec<VecDeque<(u64, Transaction)>>,
    /// Bit `die % 64` of word `die / 64` is set while `programs[die]` is not empty: a free
    /// channel (asked after every instant, 8 times each on `ssdsim-platform`) looks only at
    /// its dies with programs, usually none, instead of every die of its chips.
    dies_with_programs: Vec<u64>,
    /// Bound programs queued, and GC jobs queued: what a free channel could take
    /// ([`Ssdsim::channel_work_queued`]).
    bound_programs: usize,
    gc_jobs_queued: usize,
    next_seq: u64,
    /// Under `holds_channel`: the moves of the victim being queued, per plane (the FTL asks
    /// for a victim's copybacks, then its erase).
    pending_moves: Vec<(u32, Vec<Transaction>)>,
    /// Under `holds_channel`: jobs per chip, oldest first.
    gc_jobs: Vec<Vec<GcJob>>,
}

impl Ssdsim {
    pub fn new(chips: u32, dies_per_chip: u32) -> Self {
        Self::with_switches(chips, dies_per_chip, SsdsimSwitches::default())
    }

    pub fn with_switches(chips: u32, dies_per_chip: u32, switches: SsdsimSwitches) -> Self {
        let at_transfer = switches.program_binding == ProgramBinding::AtTransfer;
        let holds = switches.gc == GcService::HoldsChannel;
        let dies = if at_transfer {
            chips * dies_per_chip
        } else {
            0
        };
        Ssdsim {
            reads: (0..chips).map(|_| VecDeque::with_capacity(64)).collect(),
            others: (0..chips).map(|_| VecDeque::with_capacity(64)).collect(),
            queued: vec![0; chips as usize],
            switches,
            dies_per_chip: dies_per_chip.max(1) as usize,
            programs: (0..dies).map(|_| VecDeque::new()).collect(),
            dies_with_programs: vec![0; (dies as usize).div_ceil(64)],
            bound_programs: 0,
            gc_jobs_queued: 0,
            next_seq: 0,
            pending_moves: Vec::new(),
            gc_jobs: if holds {
                (0..chips).map(|_| Vec::new()).collect()
            } else {
                Vec::new()
            },
        }
    }

    pub fn switches(&self) -> SsdsimSwitches {
        self.switches
    }

    fn chip_idle(&self, chip: usize, die_busy: &[bool]) -> bool {
        let first = chip * self.dies_per_chip;
        !die_busy[first..first + self.dies_per_chip]
            .iter()
            .any(|b| *b)
    }

    /// Under `program_binding = "at_transfer"`: the program that a free channel whose chips
    /// are `chips` takes now, removed from the queue (`None`: no program of an idle chip).
    pub fn take_program(
        &mut self,
        chips: std::ops::Range<u32>,
        die_busy: &[bool],
    ) -> Option<Transaction> {
        let d = self.dies_per_chip;
        let die = {
            // The dies of idle chips with programs, in die order (so chip order).
            let mut candidates = self
                .program_dies_in(chips.start as usize * d..chips.end as usize * d)
                .filter(|&die| self.chip_idle(die / d, die_busy));
            match self.switches.program_order {
                ProgramOrder::LowestIdleChip => candidates.next()?,
                ProgramOrder::Arrival => {
                    candidates
                        .filter_map(|die| self.programs[die].front().map(|(seq, _)| (*seq, die)))
                        .min()?
                        .1
                }
            }
        };
        let (_, txn) = self.programs[die].pop_front()?;
        if self.programs[die].is_empty() {
            self.dies_with_programs[die / 64] &= !(1 << (die % 64));
        }
        self.bound_programs -= 1;
        self.queued[txn.chip as usize] -= 1;
        Some(txn)
    }

    /// Whether a bound program or a GC job waits for a channel anywhere: when none does, the
    /// free channels have nothing to take (most instants of a read-heavy run).
    pub fn channel_work_queued(&self) -> bool {
        self.bound_programs + self.gc_jobs_queued > 0
    }

    /// The dies in `dies` whose program queue is not empty, in increasing order.
    fn program_dies_in(&self, dies: std::ops::Range<usize>) -> impl Iterator<Item = usize> + '_ {
        let (start, end) = (dies.start, dies.end);
        (start / 64..end.div_ceil(64)).flat_map(move |word| {
            let low = word * 64;
            let mut bits = self.dies_with_programs[word];
            if start > low {
                bits &= u64::MAX << (start - low);
            }
            if end < low + 64 {
                bits &= (1u64 << (end - low)) - 1;
            }
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(low + bit)
            })
        })
    }

    /// Under `gc = "holds_channel"`: a GC job that a free channel whose chips are `chips`
    /// may run now, removed from the queue. SSDsim (`gc_for_channel`) takes the newest
    /// request of an idle chip; the channel must have no host work (the caller checks).
    pub fn take_gc_job(&mut self, chips: std::ops::Range<u32>, die_busy: &[bool]) -> Option<GcJob> {
        let mut best: Option<(u64, usize)> = None;
        for chip in chips {
            let c = chip as usize;
            if !self.chip_idle(c, die_busy) {
                continue;
            }
            if let Some(job) = self.gc_jobs[c].last() {
                if best.is_none_or(|(seq, _)| job.seq > seq) {
                    best = Some((job.seq, c));
                }
            }
        }
        let (_, c) = best?;
        let job = self.gc_jobs[c].pop()?;
        self.gc_jobs_queued -= 1;
        self.queued[c] -= 1 + job.moves.len() as u32;
        Some(job)
    }

    /// Under `gc = "holds_channel"`: GC jobs waiting on the chips `chips`.
    pub fn gc_jobs_waiting(&self, chips: std::ops::Range<u32>) -> bool {
        if self.gc_jobs_queued == 0 {
            return false;
        }
        chips
            .into_iter()
            .any(|c| !self.gc_jobs[c as usize].is_empty())
    }

    /// Host work on the chips `chips` that keeps SSDsim's GC off their channel: a waiting
    /// read, or a waiting program (under `at_transfer`; else any waiting program or GC
    /// operation of the chip's other queue).
    pub fn host_work_waiting(&self, chips: std::ops::Range<u32>) -> bool {
        let d = self.dies_per_chip;
        chips.clone().any(|c| {
            let c = c as usize;
            !self.reads[c].is_empty() || !self.others[c].is_empty()
        }) || (self.bound_programs > 0
            && self
                .program_dies_in(chips.start as usize * d..chips.end as usize * d)
                .next()
                .is_some())
    }

    /// Under `holds_channel`: a copyback or erase joins the job of its plane's victim.
    fn enqueue_gc(&mut self, txn: Transaction) {
        let at = match self.pending_moves.iter().position(|(p, _)| *p == txn.plane) {
            Some(at) => at,
            None => {
                self.pending_moves.push((txn.plane, Vec::new()));
                self.pending_moves.len() - 1
            }
        };
        if txn.kind == TxnKind::Copyback {
            self.pending_moves[at].1.push(txn);
            return;
        }
        let (_, moves) = self.pending_moves.swap_remove(at);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.gc_jobs_queued += 1;
        self.gc_jobs[txn.chip as usize].push(GcJob {
            seq,
            moves,
            erase: txn,
        });
    }
}

// No `take_companion`: SSDsim's shipped config has advanced (multi-plane) commands off.
impl DeviceScheduler for Ssdsim {
    fn enqueue(&mut self, txn: Transaction, _ctx: &mut DeviceContext<'_>) {
        self.queued[txn.chip as usize] += 1;
        let queues = match txn.kind {
            // A mapping (translation page) read is a flash read like any other.
            TxnKind::Read | TxnKind::MappingRead | TxnKind::GcRead => &mut self.reads,
            TxnKind::Program | TxnKind::MappingProgram
                if self.switches.program_binding == ProgramBinding::AtTransfer =>
            {
                let die = txn.die as usize;
                self.programs[die].push_back((self.next_seq, txn));
                self.dies_with_programs[die / 64] |= 1 << (die % 64);
                self.bound_programs += 1;
                self.next_seq += 1;
                return;
            }
            TxnKind::Copyback | TxnKind::Erase | TxnKind::GcProgram
                if self.switches.gc == GcService::HoldsChannel =>
            {
                self.enqueue_gc(txn);
                return;
            }
            TxnKind::Program
            | TxnKind::MappingProgram
            | TxnKind::Copyback
            | TxnKind::Erase
            | TxnKind::GcProgram => &mut self.others,
        };
        queues[txn.chip as usize].push_back(txn);
    }

    fn next(&mut self, chip: u32, ctx: &mut DeviceContext<'_>) -> Option<Transaction> {
        let die_busy = ctx.die_busy;
        // Dies are numbered chip-major (chip * dies_per_chip + die).
        let dies_per_chip = self.dies_per_chip;
        let first = chip as usize * dies_per_chip;
        if die_busy[first..first + dies_per_chip].iter().any(|b| *b) {
            return None;
        }
        let c = chip as usize;
        let txn = match self.reads[c].pop_front() {
            Some(txn) => txn,
            // A held program keeps its place at the head of the chip's other work.
            None if self.others[c].front().is_some_and(|t| ctx.is_held(t)) => return None,
            None => self.others[c].pop_front()?,
        };
        self.queued[c] -= 1;
        Some(txn)
    }

    fn queued_per_chip(&self) -> &[u32] {
        &self.queued
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::testing::{enq, nxt, txn};
    use crate::device::NO_REQUEST;

    /// Two chips with two dies each: dies 0,1 belong to chip 0 and dies 2,3 to chip 1.
    #[test]
    fn a_busy_die_makes_its_whole_chip_busy() {
        let mut s = Ssdsim::new(2, 2);
        enq(&mut s, txn(TxnKind::Read, 0, 0, 1));
        enq(&mut s, txn(TxnKind::Read, 0, 1, 2));
        let mut busy = vec![false; 4];
        // Chip 0 idle: the first read goes, onto die 0.
        let first = nxt(&mut s, 0, &busy).unwrap();
        assert_eq!(first.request, 1);
        busy[0] = true;
        // Die 1 is idle but its chip is not: SSDsim's chip state blocks the second read
        // (a per-die scheduler would start it now).
        assert_eq!(nxt(&mut s, 0, &busy), None);
        assert_eq!(s.queued_per_chip(), &[1, 0]);
        // Chip 1 is unaffected by chip 0 being busy.
        enq(&mut s, txn(TxnKind::Program, 1, 3, 3));
        assert_eq!(nxt(&mut s, 1, &busy).unwrap().request, 3);
        // Die 0 finishes: the second read may start.
        busy[0] = false;
        assert_eq!(nxt(&mut s, 0, &busy).unwrap().request, 2);
        assert_eq!(nxt(&mut s, 0, &busy), None);
    }

    /// A program queued before a read on the same chip: the read starts first; the program
    /// and the GC erase queued after it then follow in arrival order.
    #[test]
    fn reads_go_before_earlier_writes_and_gc_on_their_chip() {
        let mut s = Ssdsim::new(1, 2);
        enq(&mut s, txn(TxnKind::Program, 0, 0, 1));
        enq(&mut s, txn(TxnKind::Erase, 0, 1, NO_REQUEST));
        enq(&mut s, txn(TxnKind::Read, 0, 1, 2));
        let idle = vec![false; 2];
        let order: Vec<(TxnKind, u32)> = std::iter::from_fn(|| nxt(&mut s, 0, &idle))
            .map(|t| (t.kind, t.request))
            .collect();
        assert_eq!(
            order,
            vec![
                (TxnKind::Read, 2),
                (TxnKind::Program, 1),
                (TxnKind::Erase, NO_REQUEST)
            ]
        );
        assert_eq!(s.queued_per_chip(), &[0]);
    }

    /// The dies with programs found by bits (`take_program`) against a plain scan of every die
    /// of the channel's chips, in chip order: 48 chips of 3 dies (three words of bits, channels
    /// of 6 chips crossing word boundaries), random programs, busy dies and channels.
    #[test]
    fn programs_found_by_bits_are_the_ones_a_scan_finds() {
        use rand::{Rng, SeedableRng};
        let (chips, d) = (48u32, 3usize);
        for order in [ProgramOrder::LowestIdleChip, ProgramOrder::Arrival] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(41);
            let mut s = Ssdsim::with_switches(
                chips,
                d as u32,
                SsdsimSwitches {
                    program_binding: ProgramBinding::AtTransfer,
                    program_order: order,
                    gc: GcService::Queued,
                },
            );
            // The shadow: each die's (arrival, request), oldest first.
            let mut shadow: Vec<VecDeque<(u64, u32)>> = vec![VecDeque::new(); chips as usize * d];
            let (mut arrival, mut taken) = (0u64, 0);
            for request in 0..20_000u32 {
                if rng.random_bool(0.5) {
                    let die = rng.random_range(0..shadow.len());
                    enq(
                        &mut s,
                        txn(TxnKind::Program, (die / d) as u32, die as u32, request),
                    );
                    shadow[die].push_back((arrival, request));
                    arrival += 1;
                    continue;
                }
                let busy: Vec<bool> = (0..shadow.len()).map(|_| rng.random_bool(0.3)).collect();
                let channel = rng.random_range(0..chips / 6);
                let range = channel * 6..(channel + 1) * 6;
                let idle = |c: usize| !busy[c * d..(c + 1) * d].iter().any(|b| *b);
                let mut candidates = range
                    .clone()
                    .filter(|&c| idle(c as usize))
                    .flat_map(|c| c as usize * d..(c as usize + 1) * d)
                    .filter(|&die| !shadow[die].is_empty());
                let expected = match order {
                    ProgramOrder::LowestIdleChip => candidates.next(),
                    ProgramOrder::Arrival => candidates.min_by_key(|&die| shadow[die][0].0),
                }
                .map(|die| shadow[die].pop_front().unwrap().1);
                taken += usize::from(expected.is_some());
                assert_eq!(
                    s.channel_work_queued(),
                    shadow.iter().any(|q| !q.is_empty()) || expected.is_some()
                );
                let got = s.take_program(range, &busy).map(|t| t.request);
                assert_eq!(got, expected, "{order:?}, request {request}");
            }
            assert!(taken > 2_000, "{order:?}: only {taken} programs taken");
        }
    }

    fn bound(order: ProgramOrder) -> Ssdsim {
        Ssdsim::with_switches(
            3,
            2,
            SsdsimSwitches {
                program_binding: ProgramBinding::AtTransfer,
                program_order: order,
                gc: GcService::Queued,
            },
        )
    }

    /// Under `at_transfer` a chip never issues its programs itself; the channel takes them.
    /// Chips 0..3 with two dies each (dies 0-1, 2-3, 4-5). Programs in arrival order: request
    /// 1 on die 3 (chip 1, die 1), 2 on die 2 (chip 1, die 0), 3 on die 1 (chip 0, die 1),
    /// 4 on die 4 (chip 2). Chip 0 is busy (die 0 works).
    /// `lowest_idle_chip`: chip 0 is busy, so chip 1, die 0 before die 1: 2, then 1 (chip 1
    /// still idle in this call sequence), then chip 2: 4; 3 waits for chip 0.
    /// `arrival`: the oldest of an idle chip: 1, 2, 4; 3 waits.
    #[test]
    fn a_free_channel_takes_the_program_its_order_names() {
        for (order, expected) in [
            (ProgramOrder::LowestIdleChip, [2, 1, 4]),
            (ProgramOrder::Arrival, [1, 2, 4]),
        ] {
            let mut s = bound(order);
            for (die, request) in [(3, 1), (2, 2), (1, 3), (4, 4)] {
                enq(&mut s, txn(TxnKind::Program, die / 2, die, request));
            }
            let busy = [true, false, false, false, false, false];
            // A chip asked for work offers none of its programs.
            assert_eq!(nxt(&mut s, 1, &busy), None);
            let taken: Vec<u32> = std::iter::from_fn(|| s.take_program(0..3, &busy))
                .map(|t| t.request)
                .collect();
            assert_eq!(taken, expected, "{order:?}");
            assert_eq!(s.queued_per_chip(), &[1, 0, 0]);
            // Chip 0 idle: its program goes.
            let idle = [false; 6];
            assert!(s.channel_work_queued());
            assert_eq!(s.take_program(0..3, &idle).unwrap().request, 3);
            assert_eq!(s.take_program(0..3, &idle), None);
            assert!(!s.channel_work_queued());
        }
    }

    /// Under `holds_channel` a victim's copybacks and erase become one job on its chip, which
    /// only `take_gc_job` hands out (the newest job of an idle chip first); the chip's reads
    /// still go through `next`.
    #[test]
    fn a_victim_s_moves_and_erase_are_one_job() {
        let mut s = Ssdsim::with_switches(
            2,
            1,
            SsdsimSwitches {
                gc: GcService::HoldsChannel,
                ..SsdsimSwitches::default()
            },
        );
        let mut older = txn(TxnKind::Erase, 1, 1, NO_REQUEST);
        older.plane = 1;
        enq(&mut s, txn(TxnKind::Copyback, 0, 0, NO_REQUEST));
        enq(&mut s, older);
        enq(&mut s, txn(TxnKind::Copyback, 0, 0, NO_REQUEST));
        enq(&mut s, txn(TxnKind::Erase, 0, 0, NO_REQUEST));
        let mut later = txn(TxnKind::Erase, 1, 1, NO_REQUEST);
        later.plane = 1;
        later.enqueued_ns = 5;
        enq(&mut s, later);
        enq(&mut s, txn(TxnKind::Read, 0, 0, 7));
        assert_eq!(s.queued_per_chip(), &[4, 2]);
        assert!(s.gc_jobs_waiting(0..2));
        assert!(s.host_work_waiting(0..1));
        assert!(!s.host_work_waiting(1..2));
        let idle = [false, false];
        assert_eq!(nxt(&mut s, 0, &idle).unwrap().request, 7);
        assert_eq!(nxt(&mut s, 0, &idle), None);
        // Chip 1's newest job (enqueued at 5, no moves) first, then its older one, then
        // chip 0's (both copybacks: the plane's moves before its erase).
        let later_job = s.take_gc_job(0..2, &idle).unwrap();
        assert_eq!((later_job.erase.enqueued_ns, later_job.moves.len()), (5, 0));
        let older_job = s.take_gc_job(1..2, &idle).unwrap();
        assert_eq!((older_job.erase.chip, older_job.moves.len()), (1, 0));
        let busy = [true, false];
        assert_eq!(s.take_gc_job(0..2, &busy), None);
        assert!(s.channel_work_queued());
        assert_eq!(s.take_gc_job(0..2, &idle).unwrap().moves.len(), 2);
        assert_eq!(s.queued_per_chip(), &[0, 0]);
        assert!(!s.channel_work_queued());
    }
}
