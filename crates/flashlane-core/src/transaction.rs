//! A flash transaction: one operation (read, program, copyback, erase, mapping or GC page
//! move) on its way from the FTL through the device scheduler to a die. Its own module so the
//! FTL, the device schedulers, the event flow and the recorder share it without importing each
//! other.

/// Marks a transaction that belongs to no host request (garbage collection).
pub const NO_REQUEST: u32 = u32::MAX;

/// Marks a transaction that carries no logical page (erase, garbage-collection copyback).
pub const NO_LPN: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnKind {
    /// Command, array read (tR), data transfer out.
    Read,
    /// Command and data transfer in, array program (tPROG).
    Program,
    /// GC page move inside a plane: command, tR, command, tPROG; no data crosses the channel.
    Copyback,
    /// Command, block erase (tBERS).
    Erase,
    /// Read of a translation page for the cached mapping table (as `Read`; `request` holds the
    /// translation page number, see `ftl::cmt`).
    MappingRead,
    /// Program of a translation page written back from the cached mapping table (as `Program`;
    /// `request` holds the translation page number).
    MappingProgram,
    /// GC page move, first half (`ftl.gc_page_move = "read_and_program"`): as `Read`, the page
    /// out to the controller; `request` holds the victim's index in the simulation's list.
    GcRead,
    /// GC page move, second half: as `Program`, queued when its `GcRead` ended; `request` as
    /// for `GcRead`.
    GcProgram,
}

/// One flash operation waiting for or running on a die.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transaction {
    pub kind: TxnKind,
    /// Host request it serves, or [`NO_REQUEST`]; for mapping operations the translation page
    /// (use [`Transaction::host_request`]).
    pub request: u32,
    pub chip: u32,
    /// Global die index.
    pub die: u32,
    /// Global plane index.
    pub plane: u32,
    /// Page index inside its block (multi-plane operations pair equal ones).
    pub page_in_block: u32,
    /// Bytes moved over the channel (the part of the page the request touches).
    pub bytes: u32,
    /// Array program time of a program or copyback, ns: the latency of the block it lands in
    /// (`[variation]`) or `timing.page_program_ns`. Unused by other kinds.
    pub program_ns: u32,
    /// When it entered the device scheduler.
    pub enqueued_ns: u64,
    /// Logical page a host read or program serves, or [`NO_LPN`].
    pub lpn: u32,
    /// Physical page read or programmed (an erase: the block's first page).
    pub ppn: u32,
    /// Chip whose queue it was enqueued on (differs from `chip` once SOS moved it).
    pub from_chip: u32,
}

impl Transaction {
    /// The host request this transaction serves: `None` for garbage collection and mapping
    /// operations.
    #[inline]
    pub fn host_request(&self) -> Option<u32> {
        match self.kind {
            TxnKind::Read | TxnKind::Program if self.request != NO_REQUEST => Some(self.request),
            _ => None,
        }
    }
}
