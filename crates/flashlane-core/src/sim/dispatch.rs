//! A handed-over request becomes flash work: the HIL splits it into pages, the FTL translates
//! and places them (with garbage collection, the cached mapping table, the write buffer and
//! read-modify-write), and the page operations enter the device scheduler's queues.

use std::collections::VecDeque;

use super::{
    BufferedWrites, CachedTranslation, Event, GcVictim, MoveTarget, Simulation, UpdateRead,
};
use crate::device::{DeviceScheduler, Transaction, TxnKind, NO_LPN, NO_REQUEST};
use crate::ftl::cmt::{Access, MappingOp, MAPPING_READ_BYTES};
use crate::ftl::partial_pages::SECTOR_BYTES;
use crate::ftl::{GcOp, PhysicalTarget};
use crate::host::RequestId;
use crate::trace::Op;
use crate::Error;

/// The dispatch stage's state: its scratch lists (kept for their capacity) and the optional
/// models between the HIL and the device queues.
pub(super) struct Dispatch {
    pub(super) pop_buffer: Vec<RequestId>,
    pub(super) gc_buffer: Vec<GcOp>,
    /// Host write pages waiting for their plane's free pool, per plane: (request, logical
    /// page, bytes). Only under `ftl.gc_block_release = "erase_done"` (else empty).
    pub(super) stalled_writes: Vec<VecDeque<(RequestId, u32, u32)>>,
    pub(super) touched_chips: Vec<u32>,
    /// Writes the device scheduler cancelled (SOS write hits), to complete.
    pub(super) cancelled: Vec<Transaction>,
    /// Cached mapping table, when `ftl.mapping_cache_bytes` > 0.
    pub(super) cmt: Option<CachedTranslation>,
    /// DRAM write buffer, when `device.write_buffer_bytes` > 0.
    pub(super) buffer: Option<BufferedWrites>,
}

impl Simulation {
    /// HIL + FTL: split the request into page operations and queue them on their chips.
    pub(super) fn dispatch_request(
        &mut self,
        now: u64,
        id: RequestId,
        slot: u32,
    ) -> Result<(), Error> {
        let request = &mut self.inflight.requests[id as usize];
        debug_assert!(
            request.live,
            "host scheduler dispatched a request that is not waiting"
        );
        self.recorder.request_dispatched(now, &mut request.marks);
        request.slot = slot;
        let host = request.host;
        self.inflight.outstanding_requests += 1;
        self.inflight.chip_load.dispatched(host.chips);
        if let Some(r) = &mut self.regions {
            r.dispatched(id, host.offset_bytes);
        }
        if let Some(link) = &mut self.platform.link {
            // The command (and a write's data) must cross the host link first.
            let at = link.fetch(now, host.op, host.size_bytes);
            self.events
                .schedule(at, Event::CommandAtDevice { request: id });
            return Ok(());
        }
        self.split_request(now, id)
    }

    /// The device holds request `id`'s command: split it into page operations and queue them.
    pub(super) fn split_request(&mut self, now: u64, id: RequestId) -> Result<(), Error> {
        if self.dispatch.buffer.is_some() {
            return self.dispatch_buffered(now, id);
        }
        let host = self.inflight.requests[id as usize].host;
        let page = self.drive.geometry.page_bytes as u64;
        let end = host.offset_bytes + host.size_bytes;
        self.dispatch.touched_chips.clear();
        for i in 0..host.pages as u64 {
            let lpn = host.first_lpn + i;
            let page_start = lpn * page;
            let bytes = (end.min(page_start + page) - host.offset_bytes.max(page_start)) as u32;
            match host.op {
                Op::Read => {
                    let (target, allocated) =
                        self.ftl.read_host(lpn, &mut self.dispatch.gc_buffer)?;
                    if allocated && self.platform.partial.is_some() {
                        self.allocated_by_read(lpn, host.offset_bytes, end);
                    }
                    let txn = self.host_page_txn(TxnKind::Read, id, lpn as u32, bytes, target, now);
                    self.enqueue_translated(lpn, allocated, txn);
                    self.dispatch.touched_chips.push(target.chip);
                    self.enqueue_gc_ops(now);
                }
                Op::Write => {
                    if let Some(plane) = self.ftl.write_stall_plane(lpn) {
                        // Its plane's pool is too low: the page waits for an erase there.
                        self.dispatch.stalled_writes[plane as usize]
                            .push_back((id, lpn as u32, bytes));
                        continue;
                    }
                    self.place_write_page(now, id, lpn, bytes)?;
                }
            }
        }
        for i in 0..self.dispatch.touched_chips.len() {
            let chip = self.dispatch.touched_chips[i];
            self.try_issue(now, chip);
        }
        Ok(())
    }

    /// Place page `lpn` of host write `id` (`bytes` of it) and queue its program, after the
    /// read of the page's other sectors when the write covers only part of the data there.
    #[inline]
    pub(super) fn place_write_page(
        &mut self,
        now: u64,
        id: RequestId,
        lpn: u64,
        bytes: u32,
    ) -> Result<(), Error> {
        let rmw = if self.platform.partial.is_some() {
            let host = &self.inflight.requests[id as usize].host;
            let (offset, end) = (host.offset_bytes, host.offset_bytes + host.size_bytes);
            self.read_modify_write_source(lpn, offset, end)
        } else {
            None
        };
        self.dispatch.gc_buffer.clear();
        let target = self.ftl.write_with_claims(
            lpn,
            self.device.queued_per_chip(),
            &self.inflight.chip_load.claims,
            &mut self.dispatch.gc_buffer,
        )?;
        match rmw {
            None => {
                let txn = self.host_page_txn(TxnKind::Program, id, lpn as u32, bytes, target, now);
                self.enqueue_translated(lpn, true, txn);
                self.dispatch.touched_chips.push(target.chip);
            }
            Some((source, bytes_read, _)) if self.platform.update_read_rule => {
                // MQSim: the program carries the host's sectors and waits in the queue.
                let program =
                    self.host_page_txn(TxnKind::Program, id, lpn as u32, bytes, target, now);
                self.start_update_read(now, lpn, source, bytes_read, program);
                self.dispatch.touched_chips.push(target.chip);
                self.dispatch.touched_chips.push(source.chip);
            }
            Some((source, bytes_read, merged)) => {
                let program =
                    self.host_page_txn(TxnKind::Program, id, lpn as u32, merged, target, now);
                self.start_read_modify_write(now, lpn, source, bytes_read, program);
                self.dispatch.touched_chips.push(source.chip);
            }
        }
        self.enqueue_gc_ops(now);
        Ok(())
    }

    /// A read gave never-written page `lpn` a physical page: it now holds the sectors the read
    /// asked for (MQSim's `online_create_entry_for_reads` records the read's sector bitmap).
    #[inline(never)]
    fn allocated_by_read(&mut self, lpn: u64, offset: u64, end: u64) {
        if let Some(partial) = &mut self.platform.partial {
            let sectors = partial.sectors(lpn, offset, end);
            partial.preload(lpn, sectors);
        }
    }

    /// Read-modify-write: the page's current location and the bytes to read when a write of
    /// bytes `[offset, end)` to `lpn` leaves sectors holding data uncovered.
    #[inline(never)]
    pub(super) fn read_modify_write_source(
        &mut self,
        lpn: u64,
        offset: u64,
        end: u64,
    ) -> Option<(PhysicalTarget, u32, u32)> {
        let source = self.ftl.mapped_target(lpn);
        let partial = self.platform.partial.as_mut()?;
        let written = partial.sectors(lpn, offset, end);
        let held = partial.held(lpn, source.is_some());
        if !partial.write(lpn, written, source.is_some()) {
            return None;
        }
        // A page that holds sectors is mapped (preconditioning maps what it preloads).
        let source = source?;
        let sector = SECTOR_BYTES as u32;
        // The program then carries the merged page: the sectors read back and the host's
        // (SSDsim's allocate_location sets the write's size to the merged state).
        Some((
            source,
            (held & !written).count_ones() * sector,
            (held | written).count_ones() * sector,
        ))
    }

    /// Queue the read of a partial write's page; its program waits for it (`rmw_read_done`).
    #[inline(never)]
    pub(super) fn start_read_modify_write(
        &mut self,
        now: u64,
        lpn: u64,
        source: PhysicalTarget,
        bytes: u32,
        program: Transaction,
    ) {
        let read = Transaction {
            kind: TxnKind::Read,
            request: NO_REQUEST,
            chip: source.chip,
            die: source.die,
            plane: source.plane,
            page_in_block: self.ftl.page_in_block(source.ppn),
            bytes,
            program_ns: 0,
            enqueued_ns: now,
            lpn: lpn as u32,
            ppn: source.ppn,
            from_chip: source.chip,
        };
        self.platform.rmw_held.push((source.ppn, program));
        self.enqueue_device(now, read);
    }

    /// MQSim's update read: queue the program (held in its place until the read ends) and,
    /// once the program has its mapping entry, the read (`ftl.partial_page_writes =
    /// "update_read"`).
    #[inline(never)]
    pub(super) fn start_update_read(
        &mut self,
        now: u64,
        lpn: u64,
        source: PhysicalTarget,
        bytes: u32,
        program: Transaction,
    ) {
        let read = Transaction {
            kind: TxnKind::Read,
            request: NO_REQUEST,
            chip: source.chip,
            die: source.die,
            plane: source.plane,
            page_in_block: self.ftl.page_in_block(source.ppn),
            bytes,
            program_ns: 0,
            enqueued_ns: now,
            lpn: lpn as u32,
            ppn: source.ppn,
            from_chip: source.chip,
        };
        self.platform
            .held_programs
            .push((program.request, program.lpn));
        self.platform.update_reads.push(UpdateRead {
            read,
            request: program.request,
            program_chip: program.chip,
            queued: false,
        });
        // MQSim submits the write, then its read, once the write is translated.
        if self.enqueue_translated(lpn, true, program) {
            self.queue_update_read(now, program);
        }
    }

    /// The held `program` entered the device queue: its update read follows it.
    #[inline(never)]
    fn queue_update_read(&mut self, now: u64, program: Transaction) {
        let Some(entry) = self
            .platform
            .update_reads
            .iter_mut()
            .find(|u| !u.queued && u.request == program.request && u.read.lpn == program.lpn)
        else {
            return;
        };
        entry.queued = true;
        let read = Transaction {
            enqueued_ns: now,
            ..entry.read
        };
        self.enqueue_device(now, read);
        self.dispatch.touched_chips.push(read.chip);
    }

    /// A read-modify-write's (or update) read finished: its program may go.
    #[inline(never)]
    pub(super) fn rmw_read_done(&mut self, now: u64, read: Transaction) {
        if self.platform.update_read_rule {
            let at = self
                .platform
                .update_reads
                .iter()
                .position(|u| u.queued && u.read.ppn == read.ppn && u.read.lpn == read.lpn)
                .expect("every update read has a held program");
            let entry = self.platform.update_reads.swap_remove(at);
            let key = (entry.request, read.lpn);
            let held = self
                .platform
                .held_programs
                .iter()
                .position(|k| *k == key)
                .expect("an update read's program is held");
            self.platform.held_programs.swap_remove(held);
            self.try_issue(now, entry.program_chip);
            return;
        }
        let at = self
            .platform
            .rmw_held
            .iter()
            .position(|(ppn, program)| *ppn == read.ppn && program.lpn == read.lpn)
            .expect("every read-modify-write read has a held program");
        let (_, program) = self.platform.rmw_held.swap_remove(at);
        let program = Transaction {
            enqueued_ns: now,
            ..program
        };
        // A host write remaps its page.
        self.enqueue_translated(u64::from(program.lpn), true, program);
        self.try_issue(now, program.chip);
    }

    /// Queue the garbage-collection operations the last FTL write asked for.
    #[inline]
    pub(super) fn enqueue_gc_ops(&mut self, now: u64) {
        if self.platform.gc_victims.is_some() && !self.dispatch.gc_buffer.is_empty() {
            return self.start_gc_moves(now);
        }
        for g in 0..self.dispatch.gc_buffer.len() {
            let (kind, target) = match self.dispatch.gc_buffer[g] {
                GcOp::Copyback { target, .. } => (TxnKind::Copyback, target),
                GcOp::Erase { target } => (TxnKind::Erase, target),
                // Only under `ftl.gc_page_move = "read_and_program"` (`start_gc_moves`).
                GcOp::MoveRead { from } => (TxnKind::GcRead, from),
            };
            let txn = self.gc_txn(kind, NO_REQUEST, target, now);
            self.enqueue_device(now, txn);
            self.dispatch.touched_chips.push(target.chip);
        }
        self.dispatch.gc_buffer.clear();
    }

    /// `ftl.gc_page_move = "read_and_program"`: each victim the FTL reported becomes its GC
    /// reads, queued now; its programs follow their reads and its erase its programs.
    #[inline(never)]
    fn start_gc_moves(&mut self, now: u64) {
        let Some(mut gc) = self.platform.gc_victims.take() else {
            return;
        };
        let mut queue = Vec::new();
        let mut ops = std::mem::take(&mut self.dispatch.gc_buffer);
        for op in ops.drain(..) {
            match op {
                GcOp::Copyback { target, from_ppn } => {
                    // A page moves inside its plane: the read is on the target's plane.
                    let from = PhysicalTarget {
                        ppn: from_ppn,
                        ..target
                    };
                    gc.pending.push((from, MoveTarget::Chosen(target)));
                }
                GcOp::MoveRead { from } => gc.pending.push((from, MoveTarget::AtReadEnd)),
                GcOp::Erase { target } => {
                    let index = gc.free.pop().unwrap_or_else(|| {
                        gc.victims.push(GcVictim::default());
                        (gc.victims.len() - 1) as u32
                    });
                    let victim = &mut gc.victims[index as usize];
                    victim.moves.clear();
                    victim.moves.append(&mut gc.pending);
                    victim.left = victim.moves.len() as u32;
                    let erase = self.gc_txn(TxnKind::Erase, NO_REQUEST, target, now);
                    if victim.left == 0 {
                        gc.free.push(index);
                        queue.push(erase);
                        continue;
                    }
                    victim.erase = Some(erase);
                    for &(from, _) in &victim.moves {
                        queue.push(self.gc_txn(TxnKind::GcRead, index, from, now));
                    }
                }
            }
        }
        self.platform.gc_victims = Some(gc);
        self.dispatch.gc_buffer = ops;
        for txn in queue {
            self.enqueue_device(now, txn);
            self.dispatch.touched_chips.push(txn.chip);
        }
    }

    /// A garbage-collection operation at `target` (`request`: its victim's index under
    /// `ftl.gc_page_move = "read_and_program"`, else [`NO_REQUEST`]).
    fn gc_txn(&self, kind: TxnKind, request: u32, target: PhysicalTarget, now: u64) -> Transaction {
        let moves_data = matches!(kind, TxnKind::GcRead | TxnKind::GcProgram);
        Transaction {
            kind,
            request,
            chip: target.chip,
            die: target.die,
            plane: target.plane,
            page_in_block: target.ppn % self.drive.geometry.pages_per_block,
            bytes: if moves_data {
                self.drive.geometry.page_bytes
            } else {
                0
            },
            program_ns: self.program_ns_at(target.ppn),
            enqueued_ns: now,
            lpn: NO_LPN,
            ppn: target.ppn,
            from_chip: target.chip,
        }
    }

    /// A GC read ended: queue the program of its page (placed now when it was not placed with
    /// its victim, which may start more GC), or count the move done when a host write
    /// superseded the page meanwhile.
    #[inline(never)]
    pub(super) fn gc_read_done(&mut self, now: u64, read: Transaction) -> Result<(), Error> {
        let Some(gc) = &mut self.platform.gc_victims else {
            return Ok(());
        };
        let victim = &mut gc.victims[read.request as usize];
        let at = victim
            .moves
            .iter()
            .position(|&(from, _)| from.ppn == read.ppn)
            .expect("every GC read has its move");
        let (_, target) = victim.moves.swap_remove(at);
        let target = match target {
            MoveTarget::Chosen(target) => Some(target),
            MoveTarget::AtReadEnd => {
                self.dispatch.gc_buffer.clear();
                let placed = self
                    .ftl
                    .place_moved_page(read.ppn, &mut self.dispatch.gc_buffer)?;
                self.dispatch.touched_chips.clear();
                self.enqueue_gc_ops(now);
                for i in 0..self.dispatch.touched_chips.len() {
                    let chip = self.dispatch.touched_chips[i];
                    self.try_issue(now, chip);
                }
                placed
            }
        };
        match target {
            Some(target) => {
                let program = self.gc_txn(TxnKind::GcProgram, read.request, target, now);
                self.enqueue_device(now, program);
                self.try_issue(now, program.chip);
            }
            None => self.gc_move_done(now, read.request),
        }
        Ok(())
    }

    /// A GC program ended: its victim has one move less to wait for.
    #[inline(never)]
    pub(super) fn gc_program_done(&mut self, now: u64, program: Transaction) {
        self.gc_move_done(now, program.request);
    }

    /// A move of victim `index` is over: the last one lets the victim's erase go.
    fn gc_move_done(&mut self, now: u64, index: u32) {
        let Some(gc) = &mut self.platform.gc_victims else {
            return;
        };
        let victim = &mut gc.victims[index as usize];
        victim.left -= 1;
        if victim.left > 0 {
            return;
        }
        let erase = victim.erase.take().expect("a victim keeps its erase");
        gc.free.push(index);
        let erase = Transaction {
            enqueued_ns: now,
            ..erase
        };
        self.enqueue_device(now, erase);
        self.try_issue(now, erase.chip);
    }

    /// HIL with the DRAM write buffer: writes go into the buffer, reads it holds are served
    /// from DRAM, the other reads go to flash as without a buffer.
    #[inline(never)]
    pub(super) fn dispatch_buffered(&mut self, now: u64, id: RequestId) -> Result<(), Error> {
        let host = self.inflight.requests[id as usize].host;
        let page = self.drive.geometry.page_bytes as u64;
        let end = host.offset_bytes + host.size_bytes;
        self.dispatch.touched_chips.clear();
        let (mut in_dram, mut last_done) = (0, now);
        for i in 0..host.pages as u64 {
            let lpn = host.first_lpn + i;
            let Some(b) = &mut self.dispatch.buffer else {
                break;
            };
            let done = match host.op {
                Op::Write => {
                    b.flush_due = true;
                    match b.buffer.write(now, id, lpn as u32) {
                        Some(done) => done,
                        // Waits for a slot; `on_flush_done` lets it in.
                        None => continue,
                    }
                }
                Op::Read => match b.buffer.read(now, lpn as u32) {
                    Some(done) => done,
                    None => {
                        let page_start = lpn * page;
                        let bytes =
                            (end.min(page_start + page) - host.offset_bytes.max(page_start)) as u32;
                        let (target, allocated) =
                            self.ftl.read_host(lpn, &mut self.dispatch.gc_buffer)?;
                        let txn =
                            self.host_page_txn(TxnKind::Read, id, lpn as u32, bytes, target, now);
                        self.enqueue_translated(lpn, allocated, txn);
                        self.dispatch.touched_chips.push(target.chip);
                        self.enqueue_gc_ops(now);
                        continue;
                    }
                },
            };
            in_dram += 1;
            last_done = done;
        }
        if in_dram > 0 {
            self.events.schedule(
                last_done,
                Event::BufferDone {
                    request: id,
                    pages: in_dram,
                },
            );
        }
        for i in 0..self.dispatch.touched_chips.len() {
            let chip = self.dispatch.touched_chips[i];
            self.try_issue(now, chip);
        }
        Ok(())
    }

    /// Send every flush the write buffer's trigger asks for to the FTL and the device queues.
    #[inline(never)]
    pub(super) fn flush_buffer(&mut self, now: u64) -> Result<(), Error> {
        match &mut self.dispatch.buffer {
            Some(b) if b.flush_due => b.flush_due = false,
            _ => return Ok(()),
        }
        self.dispatch.touched_chips.clear();
        while let Some(lpn) = self
            .dispatch
            .buffer
            .as_mut()
            .and_then(|b| b.buffer.next_flush())
        {
            self.dispatch.gc_buffer.clear();
            let target = self.ftl.write_with_claims(
                u64::from(lpn),
                self.device.queued_per_chip(),
                &self.inflight.chip_load.claims,
                &mut self.dispatch.gc_buffer,
            )?;
            // A program with a logical page and no host request is a buffer flush.
            let txn = Transaction {
                kind: TxnKind::Program,
                request: NO_REQUEST,
                chip: target.chip,
                die: target.die,
                plane: target.plane,
                page_in_block: target.ppn % self.drive.geometry.pages_per_block,
                bytes: self.drive.geometry.page_bytes,
                program_ns: self.program_ns_at(target.ppn),
                enqueued_ns: now,
                lpn,
                ppn: target.ppn,
                from_chip: target.chip,
            };
            self.enqueue_translated(u64::from(lpn), true, txn);
            self.dispatch.touched_chips.push(target.chip);
            self.enqueue_gc_ops(now);
        }
        for i in 0..self.dispatch.touched_chips.len() {
            let chip = self.dispatch.touched_chips[i];
            self.try_issue(now, chip);
        }
        Ok(())
    }

    /// A buffer flush ended (or was cancelled by a newer program of its page): its slot may
    /// take waiting writes.
    pub(super) fn on_flush_done(&mut self, now: u64, lpn: u32) {
        let Some(b) = &mut self.dispatch.buffer else {
            return;
        };
        b.buffer.flush_done(lpn);
        b.flush_due = true;
        let mut admitted = std::mem::take(&mut b.admitted);
        b.buffer.admit_waiting(now, &mut admitted);
        for (request, done) in admitted.drain(..) {
            self.events
                .schedule(done, Event::BufferDone { request, pages: 1 });
        }
        if let Some(b) = &mut self.dispatch.buffer {
            b.admitted = admitted;
        }
    }

    /// The flash operation of one page of host request `id`, placed at `target`.
    #[inline]
    pub(super) fn host_page_txn(
        &self,
        kind: TxnKind,
        id: RequestId,
        lpn: u32,
        bytes: u32,
        target: PhysicalTarget,
        now: u64,
    ) -> Transaction {
        Transaction {
            kind,
            request: id,
            chip: target.chip,
            die: target.die,
            plane: target.plane,
            page_in_block: target.ppn % self.drive.geometry.pages_per_block,
            bytes,
            program_ns: self.program_ns_at(target.ppn),
            enqueued_ns: now,
            lpn,
            ppn: target.ppn,
            from_chip: target.chip,
        }
    }

    /// Array program time at physical page `ppn`: its block's latency under `[variation]`,
    /// else `timing.page_program_ns`.
    #[inline]
    pub(super) fn program_ns_at(&self, ppn: u32) -> u32 {
        self.ftl
            .program_ns(ppn)
            .unwrap_or(self.drive.page_program_ns as u32)
    }

    /// Queue a host page operation, or park it in the cached mapping table until its
    /// translation page has been read; queue the mapping operations the look-up needs.
    /// `remapped`: the operation gave `lpn` a new physical page (a write, or a read that
    /// allocated under `ftl.unwritten_reads = "allocate"`), so its cached entry becomes dirty.
    /// Returns whether `txn` entered the device queue now.
    #[inline]
    pub(super) fn enqueue_translated(
        &mut self,
        lpn: u64,
        remapped: bool,
        txn: Transaction,
    ) -> bool {
        let now = txn.enqueued_ns;
        let Some(cmt) = &mut self.dispatch.cmt else {
            self.enqueue_device(now, txn);
            return true;
        };
        let ready = cmt.cache.access(lpn, remapped, txn, &mut cmt.ops) == Access::Ready;
        if ready {
            self.enqueue_device(now, txn);
        }
        let Some(cmt) = &mut self.dispatch.cmt else {
            return ready;
        };
        let page_bytes = self.drive.geometry.page_bytes;
        for mapping in cmt.ops.drain(..) {
            let (kind, tpage, bytes) = match mapping {
                MappingOp::Read { tpage } => (
                    TxnKind::MappingRead,
                    tpage,
                    MAPPING_READ_BYTES.min(page_bytes),
                ),
                MappingOp::Program { tpage } => (TxnKind::MappingProgram, tpage, page_bytes),
            };
            let (chip, die, plane) = cmt.cache.location(tpage);
            let mapping_txn = Transaction {
                kind,
                request: tpage,
                chip,
                die,
                plane,
                // Translation pages sit in their planes in page order (MQSim writes the table
                // at start, page after page per plane): page t is the (t / planes)-th of its
                // plane. Only multi-plane grouping reads this.
                page_in_block: (tpage / self.drive.geometry.planes())
                    % self.drive.geometry.pages_per_block,
                bytes,
                // Translation pages have no block of their own in the model: nominal time.
                program_ns: self.drive.page_program_ns as u32,
                enqueued_ns: txn.enqueued_ns,
                lpn: NO_LPN,
                ppn: 0,
                from_chip: chip,
            };
            self.device
                .enqueue(mapping_txn, &mut device_ctx!(self, now));
            self.recorder
                .queue_length(now, chip, self.device.queued_per_chip()[chip as usize]);
            self.dispatch.touched_chips.push(chip);
        }
        ready
    }

    /// A mapping operation finished: a read releases the page operations that waited for it.
    pub(super) fn on_mapping_done(&mut self, now: u64, txn: Transaction) {
        let Some(cmt) = &mut self.dispatch.cmt else {
            return;
        };
        match txn.kind {
            TxnKind::MappingRead => cmt.cache.read_done(txn.request, &mut cmt.released),
            TxnKind::MappingProgram => cmt.cache.program_done(txn.request),
            _ => return,
        }
        self.dispatch.touched_chips.clear();
        let mut released_txns = std::mem::take(&mut cmt.released);
        for mut released in released_txns.drain(..) {
            // Its chip wait starts now: the translation was the request's wait, not the chip's.
            released.enqueued_ns = now;
            self.enqueue_device(now, released);
            self.dispatch.touched_chips.push(released.chip);
            if !self.platform.update_reads.is_empty() && released.kind == TxnKind::Program {
                self.queue_update_read(now, released);
            }
        }
        if let Some(cmt) = &mut self.dispatch.cmt {
            cmt.released = released_txns;
        }
        for i in 0..self.dispatch.touched_chips.len() {
            let chip = self.dispatch.touched_chips[i];
            self.try_issue(now, chip);
        }
    }

    /// Deferred release (`ftl.gc_block_release = "erase_done"`): a victim's erase completed.
    /// Its block joins the free pool; the host writes waiting for the plane are placed while the
    /// pool allows (MQSim's Start_servicing_writes_for_overfull_plane), then GC may start
    /// another victim.
    #[inline(never)]
    pub(super) fn on_erase_done(&mut self, now: u64, ppn: u32) -> Result<(), Error> {
        let plane = self.ftl.erase_done(ppn) as usize;
        self.dispatch.touched_chips.clear();
        while let Some(&(id, lpn, bytes)) = self.dispatch.stalled_writes[plane].front() {
            if self.ftl.write_stall_plane(lpn as u64).is_some() {
                break;
            }
            self.dispatch.stalled_writes[plane].pop_front();
            self.place_write_page(now, id, u64::from(lpn), bytes)?;
        }
        self.dispatch.gc_buffer.clear();
        self.ftl
            .gc_after_erase(plane as u32, &mut self.dispatch.gc_buffer)?;
        self.enqueue_gc_ops(now);
        for i in 0..self.dispatch.touched_chips.len() {
            let chip = self.dispatch.touched_chips[i];
            self.try_issue(now, chip);
        }
        Ok(())
    }
}
