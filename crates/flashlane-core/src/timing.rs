//! Flash and channel timings (`[timing]`): a geometry-level type, read by the interconnects
//! (transfer times), the energy model and the config, so none of them imports another.

use serde::{Deserialize, Serialize};

/// Flash and channel timings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Time to send a command and address cycle to a chip over its channel.
    pub command_transfer_ns: u64,
    /// Array read time tR.
    pub page_read_ns: u64,
    /// Array program time tPROG.
    pub page_program_ns: u64,
    /// Block erase time tBERS.
    pub block_erase_ns: u64,
    /// Data rate of one channel (bytes per nanosecond; 0.333 = 333 MB/s).
    pub channel_bytes_per_ns: f64,
}
