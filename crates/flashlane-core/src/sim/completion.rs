//! A finished page operation ends its part of a request (or releases what waited for a
//! translation, a flush, an erase or a read-modify-write read); the last page completes the
//! request and frees its place in the device queue.

use super::{Event, Simulation};
use crate::device::{Transaction, TxnKind, NO_LPN, NO_REQUEST};
use crate::host::{HostScheduler, RequestId};
use crate::Error;

impl Simulation {
    /// Pages of a request finished in the DRAM write buffer.
    pub(super) fn on_buffer_done(&mut self, now: u64, id: RequestId, pages: u32) {
        let request = &mut self.inflight.requests[id as usize];
        request.remaining_pages -= pages;
        if request.remaining_pages == 0 {
            self.complete(now, id);
            self.admission.dispatch_pending = true;
        }
    }

    /// Complete the host page of every write the device scheduler cancelled (superseded while
    /// queued: the newer write carries the data, so this page's part of its request is done).
    pub(super) fn finish_cancelled(&mut self, now: u64) {
        while let Some(txn) = self.dispatch.cancelled.pop() {
            self.queue_changed(now, txn.chip);
            self.recorder.write_hit(now);
            if txn.request == NO_REQUEST {
                // A buffer flush superseded by a newer flush of its page.
                self.on_flush_done(now, txn.lpn);
                continue;
            }
            let request = &mut self.inflight.requests[txn.request as usize];
            request.remaining_pages -= 1;
            if request.remaining_pages == 0 {
                self.complete(now, txn.request);
                self.admission.dispatch_pending = true;
            }
        }
    }

    /// One page operation of a finished command is done: its request, translation or flush.
    #[inline]
    pub(super) fn page_done(&mut self, now: u64, txn: Transaction) -> Result<(), Error> {
        if let Some(id) = txn.host_request() {
            if self.platform.rules.ack_at_transfer && txn.kind == TxnKind::Program {
                // Counted when its data transfer ended (`on_transfer_end`).
                return Ok(());
            }
            let request = &mut self.inflight.requests[id as usize];
            request.remaining_pages -= 1;
            if request.remaining_pages == 0 {
                self.complete(now, id);
                self.admission.dispatch_pending = true;
            }
        } else if matches!(txn.kind, TxnKind::MappingRead | TxnKind::MappingProgram) {
            self.on_mapping_done(now, txn);
        } else if txn.kind == TxnKind::GcRead {
            self.gc_read_done(now, txn)?;
        } else if txn.kind == TxnKind::GcProgram {
            self.gc_program_done(now, txn);
        } else if txn.kind == TxnKind::Program && txn.lpn != NO_LPN {
            self.on_flush_done(now, txn.lpn);
        } else if txn.kind == TxnKind::Erase && self.ftl.defers_release() {
            self.on_erase_done(now, txn.ppn)?;
        } else if txn.kind == TxnKind::Read && txn.lpn != NO_LPN {
            self.rmw_read_done(now, txn);
        }
        Ok(())
    }

    pub(super) fn ack_program(&mut self, now: u64, txn: Transaction) {
        if txn.kind != TxnKind::Program {
            return;
        }
        if let Some(id) = txn.host_request() {
            let request = &mut self.inflight.requests[id as usize];
            request.remaining_pages -= 1;
            if request.remaining_pages == 0 {
                self.complete(now, id);
                self.admission.dispatch_pending = true;
            }
        }
    }

    /// The last page of request `id` is done: its place in the device queue is free, and the
    /// host learns of its completion now, or once it has crossed the host link.
    pub(super) fn complete(&mut self, now: u64, id: RequestId) {
        let slot = self.inflight.requests[id as usize].slot;
        self.inflight.slot_member_done(slot);
        if let Some(link) = &mut self.platform.link {
            let host = &self.inflight.requests[id as usize].host;
            let at = link.complete(now, host.op, host.size_bytes);
            self.events
                .schedule(at, Event::HostCompletion { request: id });
            return;
        }
        self.complete_for_host(now, id);
    }

    /// The host learns that request `id` completed.
    pub(super) fn complete_for_host(&mut self, now: u64, id: RequestId) {
        let request = self.inflight.requests[id as usize];
        debug_assert!(request.live);
        self.inflight.requests[id as usize].live = false;
        self.inflight.live_requests -= 1;
        let host = request.host;
        self.recorder.request_completed(
            now,
            request.marks,
            host.op,
            host.arrival_ns,
            host.size_bytes,
        );
        self.inflight.chip_load.completed(host.chips);
        self.inflight.outstanding_requests -= 1;
        if let Some(r) = &mut self.regions {
            r.completed(host.offset_bytes);
        }
        if self.admission.host_queue.includes_outstanding() {
            self.host_queue_changed(now);
        }
        if let Some(link) = &mut self.platform.link {
            // The host takes the completion entry and rings the completion doorbell; a
            // request waiting for room in the host queue may now enter.
            link.doorbell(now);
            self.admission.dispatch_pending = true;
        }
        let view = host_view!(self, now);
        self.host.complete(&host, &view);
        self.inflight.free_requests.push(id);
    }
}
