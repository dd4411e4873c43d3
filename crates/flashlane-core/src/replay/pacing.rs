//! The replay modes' rules, shared by the simulator (`sim/admission.rs`) and the real-drive
//! replay (`flashlane-real`): when a record read from the input arrives, when it may enter the
//! host queue, and where the input stops (`--max-requests`). One implementation, so a trace
//! replayed on a real drive arrives as it does in a simulation.

use super::{Arrival, Replay};
use crate::Error;

/// Arrivals under one replay mode: reads records, counts them, and times them.
#[derive(Debug, Clone)]
pub struct Pacing {
    replay: Replay,
    max_requests: Option<u64>,
    records: u64,
    last_arrival_ns: u64,
}

impl Pacing {
    pub fn new(replay: Replay, max_requests: Option<u64>) -> Self {
        Pacing {
            replay,
            max_requests,
            records: 0,
            last_arrival_ns: 0,
        }
    }

    /// The next record of the input, or `None` once it ended or `max_requests` were read.
    #[inline]
    pub fn next(
        &mut self,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<Option<Arrival>, Error> {
        if self.max_requests.is_some_and(|max| self.records >= max) {
            return Ok(None);
        }
        let arrival = next_record()?;
        if arrival.is_some() {
            self.records += 1;
        }
        Ok(arrival)
    }

    /// When the record just read arrives. Open loop: at its (rebased, scaled) trace time, or
    /// with its predecessor if it is earlier (readers bound how far back a trace may step).
    /// Paced replay (closed loop, as fast as possible): `None`, it is ready at once and
    /// arrives when it enters the host queue.
    #[inline]
    pub fn arrival_ns(&mut self, arrival: &Arrival) -> Option<u64> {
        match self.replay {
            Replay::OpenLoop { .. } => {
                self.last_arrival_ns = arrival.record.time_ns.max(self.last_arrival_ns);
                Some(self.last_arrival_ns)
            }
            Replay::ClosedLoop { .. } | Replay::AsFastAsPossible => None,
        }
    }

    /// The arrival time a request entering the host queue at `now` gets: its trace time under
    /// open loop (a request that waited for room keeps it: the wait is part of its latency),
    /// `now` under paced replay.
    #[inline]
    pub fn admitted_arrival_ns(&self, now: u64) -> u64 {
        match self.replay {
            Replay::OpenLoop { .. } => self.last_arrival_ns,
            Replay::ClosedLoop { .. } | Replay::AsFastAsPossible => now,
        }
    }

    /// May an arrived request enter the host queue, which has room or not (`host_room`), with
    /// `live_requests` in the host queue and the device? Closed loop also bounds those.
    #[inline]
    pub fn admits(&self, host_room: bool, live_requests: u64) -> bool {
        match self.replay {
            Replay::ClosedLoop { outstanding } => host_room && live_requests < outstanding as u64,
            Replay::OpenLoop { .. } | Replay::AsFastAsPossible => host_room,
        }
    }

    /// Paced replay (closed loop, as fast as possible): a record arrives when it is admitted.
    #[inline]
    pub fn paced(&self) -> bool {
        !matches!(self.replay, Replay::OpenLoop { .. })
    }

    /// Records read so far.
    #[inline]
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Open loop: the latest arrival time so far; else 0.
    #[inline]
    pub fn last_arrival_ns(&self) -> u64 {
        self.last_arrival_ns
    }

    pub fn replay(&self) -> Replay {
        self.replay
    }
}

impl Replay {
    /// Check the mode's parameter; the message names the option.
    pub fn validate(&self) -> Result<(), Error> {
        match *self {
            Replay::OpenLoop { time_scale }
                if !(time_scale > 0.0 && time_scale <= super::MAX_TIME_SCALE) =>
            {
                Err(Error::Config(format!(
                    "--time-scale {time_scale}: must be a positive number of at most {} \
                     (arrival times stay below 2^60 ns)",
                    super::MAX_TIME_SCALE
                )))
            }
            Replay::ClosedLoop { outstanding: 0 } => Err(Error::Config(
                "--closed-loop 0: at least one request must be outstanding".into(),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Op, TraceRecord};

    fn arrival(time_ns: u64) -> Arrival {
        Arrival {
            record: TraceRecord {
                time_ns,
                device: 0,
                stream: 0,
                offset_bytes: 0,
                size_bytes: 4096,
                op: Op::Read,
            },
            source: 0,
            next_offset_hint: None,
        }
    }

    #[test]
    fn open_loop_never_steps_back_and_paced_replay_arrives_on_admission() {
        let mut open = Pacing::new(Replay::default(), None);
        assert_eq!(open.arrival_ns(&arrival(50)), Some(50));
        assert_eq!(open.arrival_ns(&arrival(20)), Some(50));
        assert_eq!(open.admitted_arrival_ns(999), 50);
        let mut closed = Pacing::new(Replay::ClosedLoop { outstanding: 2 }, None);
        assert_eq!(closed.arrival_ns(&arrival(50)), None);
        assert_eq!(closed.admitted_arrival_ns(999), 999);
        assert!(closed.admits(true, 1) && !closed.admits(true, 2) && !closed.admits(false, 0));
        assert!(Pacing::new(Replay::AsFastAsPossible, None).admits(true, 1 << 40));
    }

    #[test]
    fn the_input_stops_at_max_requests() {
        let mut pacing = Pacing::new(Replay::AsFastAsPossible, Some(2));
        let mut source = || Ok(Some(arrival(0)));
        assert!(pacing.next(&mut source).unwrap().is_some());
        assert!(pacing.next(&mut source).unwrap().is_some());
        assert!(pacing.next(&mut source).unwrap().is_none());
        assert_eq!(pacing.records(), 2);
    }
}
