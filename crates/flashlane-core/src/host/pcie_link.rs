//! The host interface's PCIe link (`[host.link] kind = "pcie"`), as MQSim models NVMe over PCIe
//! (`Host_Components::PCIe_Link`, `Request_Fetch_Unit_NVMe`).
//!
//! Two directions, each a FIFO that carries one message at a time ("busy until"). A message of
//! `p` payload bytes travels in TLPs of at most `tlp_max_payload_bytes`, each with
//! `tlp_overhead_bytes` of header; the wire bytes are spread over the lanes and take
//! `ceil(wire / lanes) / lane_bytes_per_ns` ns (`PCIe_Link::estimate_transfer_time`). A read
//! request (asking the other side for data) is a header and 4 bytes.
//!
//! A request's messages, as MQSim's NVMe host interface sends them:
//! - at its arrival the host rings the submission-queue doorbell (2 bytes, to the device);
//! - when the device fetches it: a read request for the submission entry (to the host), the
//!   64-byte entry (to the device); a write then asks for its data (read request to the host)
//!   and receives it (to the device); only then do its pages reach the FTL;
//! - when its last page is done: a read's data (to the host), then the 16-byte completion
//!   entry (to the host); the request completes for the host when that entry arrives, and the
//!   host rings the completion-queue doorbell (2 bytes, to the device).
//!
//! The device fetches the next command when a request's pages are done, not when its
//! completion reaches the host (`Input_Stream_Manager_NVMe::Handle_serviced_request`).

use serde::{Deserialize, Serialize};

use crate::trace::Op;

/// The link between host and device (`[host.link]`, `kind = "none"` or `"pcie"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum HostLinkConfig {
    /// No link (the default): requests reach the device, and completions the host, at no cost.
    None {},
    /// MQSim's PCIe link: commands, write data, read data and completions cross it in timed
    /// messages.
    Pcie {
        /// Lanes of the link (MQSim `PCIe_Lane_Count`).
        lane_count: u32,
        /// Bytes per ns each lane carries, i.e. GB/s (MQSim `PCIe_Lane_Bandwidth`).
        lane_bytes_per_ns: f64,
        /// Largest payload of one transaction-layer packet (MQSim: 128).
        #[serde(default = "default_tlp_max_payload_bytes")]
        tlp_max_payload_bytes: u32,
        /// Bytes each packet adds to its payload: TLP header, data-link and physical framing
        /// (MQSim: 20 + 6 + 2 = 28).
        #[serde(default = "default_tlp_overhead_bytes")]
        tlp_overhead_bytes: u32,
    },
}

fn default_tlp_max_payload_bytes() -> u32 {
    128
}

fn default_tlp_overhead_bytes() -> u32 {
    28
}

impl Default for HostLinkConfig {
    fn default() -> Self {
        HostLinkConfig::None {}
    }
}

impl HostLinkConfig {
    pub fn is_none(&self) -> bool {
        *self == HostLinkConfig::None {}
    }

    pub fn validate(&self) -> Result<(), String> {
        let HostLinkConfig::Pcie {
            lane_count,
            lane_bytes_per_ns,
            tlp_max_payload_bytes,
            ..
        } = self
        else {
            return Ok(());
        };
        if *lane_count == 0 {
            return Err("host.link.lane_count must be at least 1".into());
        }
        if !(lane_bytes_per_ns.is_finite() && *lane_bytes_per_ns > 0.0) {
            return Err(format!(
                "host.link.lane_bytes_per_ns must be a positive number (it is {lane_bytes_per_ns})"
            ));
        }
        if *tlp_max_payload_bytes == 0 {
            return Err("host.link.tlp_max_payload_bytes must be at least 1".into());
        }
        Ok(())
    }

    /// The link's model, or `None` without one.
    pub fn build(&self) -> Option<PcieLink> {
        match self {
            HostLinkConfig::None {} => None,
            HostLinkConfig::Pcie {
                lane_count,
                lane_bytes_per_ns,
                tlp_max_payload_bytes,
                tlp_overhead_bytes,
            } => Some(PcieLink {
                lanes: u64::from(*lane_count),
                lane_bytes_per_ns: *lane_bytes_per_ns,
                tlp_payload: u64::from(*tlp_max_payload_bytes),
                tlp_overhead: u64::from(*tlp_overhead_bytes),
                to_device_free_ns: 0,
                to_host_free_ns: 0,
            }),
        }
    }
}

/// Submission-queue entry, completion-queue entry and doorbell sizes (NVMe; MQSim's
/// `Submission_Queue_Entry`, `Completion_Queue_Entry` and its 16-bit doorbell value).
const SUBMISSION_ENTRY_BYTES: u64 = 64;
const COMPLETION_ENTRY_BYTES: u64 = 16;
const DOORBELL_BYTES: u64 = 2;

/// The link's state: when each direction is free again.
#[derive(Debug, Clone)]
pub struct PcieLink {
    lanes: u64,
    lane_bytes_per_ns: f64,
    tlp_payload: u64,
    tlp_overhead: u64,
    to_device_free_ns: u64,
    to_host_free_ns: u64,
}

impl PcieLink {
    /// Time on the wire of a message carrying `payload` bytes (data, an entry, a doorbell).
    pub fn payload_ns(&self, payload: u64) -> u64 {
        let full = payload / self.tlp_payload;
        let rest = payload % self.tlp_payload;
        let wire = full * (self.tlp_payload + self.tlp_overhead)
            + if rest == 0 {
                0
            } else {
                rest + self.tlp_overhead
            };
        self.wire_ns(wire)
    }

    /// Time on the wire of a read request (a header and 4 bytes).
    pub fn read_request_ns(&self) -> u64 {
        self.wire_ns(self.tlp_overhead + 4)
    }

    fn wire_ns(&self, wire_bytes: u64) -> u64 {
        // MQSim's arithmetic: whole bytes per lane, then a truncating division by the rate.
        (wire_bytes.div_ceil(self.lanes) as f64 / self.lane_bytes_per_ns) as u64
    }

    fn send_to_device(&mut self, at: u64, ns: u64) -> u64 {
        self.to_device_free_ns = self.to_device_free_ns.max(at) + ns;
        self.to_device_free_ns
    }

    fn send_to_host(&mut self, at: u64, ns: u64) -> u64 {
        self.to_host_free_ns = self.to_host_free_ns.max(at) + ns;
        self.to_host_free_ns
    }

    /// The host rings a doorbell at `now` (a request arrived, or a completion was taken).
    pub fn doorbell(&mut self, now: u64) {
        let ns = self.payload_ns(DOORBELL_BYTES);
        self.send_to_device(now, ns);
    }

    /// The device fetches a command at `now`: when it holds the command and, for a write, the
    /// write's `bytes` of data.
    pub fn fetch(&mut self, now: u64, op: Op, bytes: u64) -> u64 {
        let request = self.read_request_ns();
        let asked = self.send_to_host(now, request);
        let entry = self.payload_ns(SUBMISSION_ENTRY_BYTES);
        let held = self.send_to_device(asked, entry);
        match op {
            Op::Read => held,
            Op::Write => {
                let asked = self.send_to_host(held, request);
                let data = self.payload_ns(bytes);
                self.send_to_device(asked, data)
            }
        }
    }

    /// A request's pages are done at `now`: when its completion entry (after a read's `bytes`
    /// of data) reaches the host.
    pub fn complete(&mut self, now: u64, op: Op, bytes: u64) -> u64 {
        let mut at = now;
        if op == Op::Read {
            let data = self.payload_ns(bytes);
            at = self.send_to_host(at, data);
        }
        let entry = self.payload_ns(COMPLETION_ENTRY_BYTES);
        self.send_to_host(at, entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MQSim's shipped link: 4 lanes of 1 GB/s, 128-byte TLPs with 28 bytes of overhead.
    fn mqsim() -> PcieLink {
        pcie(1.0)
    }

    fn pcie(lane_bytes_per_ns: f64) -> PcieLink {
        HostLinkConfig::Pcie {
            lane_count: 4,
            lane_bytes_per_ns,
            tlp_max_payload_bytes: 128,
            tlp_overhead_bytes: 28,
        }
        .build()
        .unwrap()
    }

    #[test]
    fn message_times_follow_the_tlp_arithmetic() {
        let link = mqsim();
        // 4 KiB: 32 full TLPs of 156 wire bytes = 4,992 bytes, 1,248 per lane.
        assert_eq!(link.payload_ns(4096), 1248);
        // 2 MiB: 16,384 TLPs x 156 = 2,555,904 bytes, 638,976 per lane: MQSim's 0.64 ms.
        assert_eq!(link.payload_ns(2 << 20), 638_976);
        // 100 bytes: one partial TLP of 128 wire bytes, 32 per lane.
        assert_eq!(link.payload_ns(100), 32);
        // A doorbell: 2 + 28 = 30 bytes, 8 per lane (rounded up).
        assert_eq!(link.payload_ns(DOORBELL_BYTES), 8);
        // A read request: 28 + 4 = 32 bytes, 8 per lane; entries 64 B -> 92/4 = 23, 16 B -> 11.
        assert_eq!(link.read_request_ns(), 8);
        assert_eq!(link.payload_ns(SUBMISSION_ENTRY_BYTES), 23);
        assert_eq!(link.payload_ns(COMPLETION_ENTRY_BYTES), 11);
        // Half the lane rate doubles every time.
        assert_eq!(pcie(0.5).payload_ns(4096), 2496);
    }

    /// An idle link: a read's command is held after 8 + 23 ns; its 4 KiB come back in 1,248 ns
    /// and the completion entry 11 ns later. A write's command also fetches its data: + 8 ns
    /// request + 1,248 ns data.
    #[test]
    fn a_request_on_an_idle_link() {
        let mut link = mqsim();
        assert_eq!(link.fetch(1000, Op::Read, 4096), 1031);
        assert_eq!(link.complete(100_000, Op::Read, 4096), 100_000 + 1248 + 11);
        let mut link = mqsim();
        assert_eq!(link.fetch(1000, Op::Write, 4096), 1031 + 8 + 1248);
        assert_eq!(link.complete(100_000, Op::Write, 4096), 100_011);
    }

    /// Each direction is one FIFO: a second read finishing while the first one's 2 MiB of data
    /// cross the link waits for them; the other direction is not held up.
    #[test]
    fn data_in_one_direction_delays_what_follows_it_only() {
        let mut link = mqsim();
        let first = link.complete(0, Op::Read, 2 << 20);
        assert_eq!(first, 638_976 + 11);
        let second = link.complete(1000, Op::Read, 4096);
        assert_eq!(second, first + 1248 + 11);
        // A doorbell and a read's fetch at 2000: the fetch's request to the host waits behind
        // the data (to the host), its entry then goes at once (the device side is idle).
        link.doorbell(2000);
        assert_eq!(link.fetch(2000, Op::Read, 4096), second + 8 + 23);
    }
}
