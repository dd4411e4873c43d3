//! What the unit tests of the per-chip device schedulers share: a transaction builder and
//! `enqueue` / `next` calls with a throwaway context, for schedulers that never remap.

use super::{DeviceContext, DeviceScheduler, Transaction, TxnKind, NO_LPN};
use crate::ftl::{Ftl, FtlConfig};
use crate::geometry::{Geometry, Level, StaticMap};

/// A tiny FTL for scheduler unit tests that never remap.
pub(crate) fn test_ftl() -> Ftl {
    let g = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 4,
        pages_per_block: 4,
        page_bytes: 4096,
    };
    let order = [Level::Channel, Level::Chip, Level::Die, Level::Plane];
    let config = FtlConfig::plain(0.25, 0.25);
    Ftl::new(&g, &config, StaticMap::new(&g, order), false)
}

/// A one-page transaction on plane 0 of `die`, carrying no logical page.
pub(crate) fn txn(kind: TxnKind, chip: u32, die: u32, request: u32) -> Transaction {
    Transaction {
        kind,
        request,
        chip,
        die,
        plane: 0,
        page_in_block: 0,
        bytes: 4096,
        program_ns: 0,
        enqueued_ns: 0,
        lpn: NO_LPN,
        ppn: 0,
        from_chip: chip,
    }
}

/// Calls `f` with a context at time 0 over `die_busy` and a fresh [`test_ftl`].
fn with_context<R>(
    die_busy: &[bool],
    held: &[(u32, u32)],
    f: impl FnOnce(&mut DeviceContext<'_>) -> R,
) -> R {
    let mut ftl = test_ftl();
    let mut cancelled = Vec::new();
    f(&mut DeviceContext {
        now_ns: 0,
        die_busy,
        held,
        ftl: &mut ftl,
        cancelled: &mut cancelled,
    })
}

pub(crate) fn enq(s: &mut impl DeviceScheduler, t: Transaction) {
    with_context(&[], &[], |ctx| s.enqueue(t, ctx));
}

pub(crate) fn nxt(s: &mut impl DeviceScheduler, chip: u32, busy: &[bool]) -> Option<Transaction> {
    with_context(busy, &[], |ctx| s.next(chip, ctx))
}

/// `next` while the programs `held` (request, logical page) wait for their update reads.
pub(crate) fn nxt_held(
    s: &mut impl DeviceScheduler,
    chip: u32,
    busy: &[bool],
    held: &[(u32, u32)],
) -> Option<Transaction> {
    with_context(busy, held, |ctx| s.next(chip, ctx))
}
