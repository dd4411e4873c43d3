//! Why a run ended with requests that never completed, when the drive, not the flow, is the
//! cause.

use super::Simulation;
use crate::Error;

impl Simulation {
    /// The events ran out with requests not completed: why. Cold and out of line: it runs at
    /// most once, after the event loop.
    #[cold]
    #[inline(never)]
    pub(super) fn requests_left_error(&self) -> Error {
        self.stuck_writes_error().unwrap_or_else(|| {
            Error::Workload(format!(
                "internal error: {} requests never completed (host scheduler held them with no \
                 timer set)",
                self.inflight.live_requests
            ))
        })
    }

    /// Under deferred release, the events ran out with host writes waiting for a plane that
    /// will never free a block (ftl::Ftl::stuck_plane): say which plane, why, and which keys
    /// make the data fit, instead of an internal error.
    fn stuck_writes_error(&self) -> Option<Error> {
        let mut planes = (0..self.dispatch.stalled_writes.len() as u32).filter_map(|plane| {
            let waiting = self.dispatch.stalled_writes[plane as usize].len();
            (waiting > 0)
                .then(|| self.ftl.stuck_plane(plane).map(|s| (plane, waiting, s)))
                .flatten()
        });
        let (plane, waiting, stuck) = planes.next()?;
        let more = planes.count();
        let others = match more {
            0 => String::new(),
            n => format!(" (and {n} more plane(s) the same way)"),
        };
        Some(Error::Workload(format!(
            "the drive ran out of space it can reclaim: {} request(s) never completed; \
             {waiting} host page write(s) wait for plane {plane}{others}, which has {} free \
             blocks, below ftl.write_stall_below_free_blocks = {}, and no block being erased; \
             every full block is entirely valid, so no collection can free one (its {} valid \
             pages and {} free blocks to keep do not fit in its {} blocks of {} pages beside its \
             open blocks). Lower precondition.fill_fraction or the trace's footprint, raise \
             ftl.overprovisioning_fraction or geometry.blocks_per_plane, or lower \
             ftl.write_stall_below_free_blocks",
            self.inflight.live_requests,
            stuck.free_blocks,
            stuck.stall_below_free_blocks,
            stuck.valid_pages,
            stuck.stall_below_free_blocks,
            stuck.blocks,
            self.drive.geometry.pages_per_block
        )))
    }
}
