//! The order in which the host scheduler handed requests to the device (`--dispatch-log FILE`
//! of `flashlane run` and `flashlane replay`): one row per request, in hand-over order, so a
//! simulation's decisions can be set beside a real replay's.

use std::io::Write;

use crate::host::HostRequest;
use crate::trace::Op;

/// One request handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchRecord {
    /// Device command it went out in, numbered from 0 in hand-over order (requests merged into
    /// one command share it).
    pub command: u64,
    /// Its number in trace order (0-based).
    pub seq: u64,
    pub op: Op,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    /// When it was handed over: simulated ns, or ns since a real replay started.
    pub dispatched_ns: u64,
}

/// The hand-over order of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DispatchLog {
    records: Vec<DispatchRecord>,
    commands: u64,
}

/// The CSV header [`DispatchLog::write_csv`] writes.
pub const DISPATCH_LOG_HEADER: &str = "command,seq,op,offset_bytes,size_bytes,dispatched_ns";

impl DispatchLog {
    /// `members` went out at `now` as one device command.
    pub fn command<'a>(&mut self, now: u64, members: impl IntoIterator<Item = &'a HostRequest>) {
        for r in members {
            self.records.push(DispatchRecord {
                command: self.commands,
                seq: r.seq,
                op: r.op,
                offset_bytes: r.offset_bytes,
                size_bytes: r.size_bytes,
                dispatched_ns: now,
            });
        }
        self.commands += 1;
    }

    pub fn records(&self) -> &[DispatchRecord] {
        &self.records
    }

    /// The log as CSV with [`DISPATCH_LOG_HEADER`].
    pub fn write_csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{DISPATCH_LOG_HEADER}")?;
        for r in &self.records {
            let op = match r.op {
                Op::Read => "R",
                Op::Write => "W",
            };
            writeln!(
                out,
                "{},{},{op},{},{},{}",
                r.command, r.seq, r.offset_bytes, r.size_bytes, r.dispatched_ns
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::ChipSet;

    #[test]
    fn merged_requests_share_their_command() {
        let r = |seq: u64| HostRequest {
            id: seq as u32,
            seq,
            arrival_ns: 0,
            op: Op::Write,
            offset_bytes: seq * 4096,
            size_bytes: 4096,
            first_lpn: seq,
            pages: 1,
            stream: 0,
            chips: ChipSet::EMPTY,
        };
        let mut log = DispatchLog::default();
        log.command(5, [&r(2), &r(3)]);
        log.command(9, [&r(0)]);
        let mut csv = Vec::new();
        log.write_csv(&mut csv).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            format!(
                "{DISPATCH_LOG_HEADER}\n0,2,W,8192,4096,5\n0,3,W,12288,4096,5\n1,0,W,0,4096,9\n"
            )
        );
    }
}
