//! The progress display of `flashlane run`: on a terminal, an indicatif bar with the rate and
//! (once the footprint pass has counted the records) the ETA; otherwise a plain line on stderr
//! every [`PLAIN_LINE_INTERVAL`], so logs of long runs show how far they got.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use flashlane_core::{Phase, Progress};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};

/// Time between two plain progress lines when stderr is not a terminal.
const PLAIN_LINE_INTERVAL: Duration = Duration::from_secs(10);

pub struct ProgressDisplay {
    terminal: bool,
    bar: Option<ProgressBar>,
    phase: Option<Phase>,
    phase_started: Instant,
    last_line: Instant,
}

impl ProgressDisplay {
    pub fn new() -> Self {
        let now = Instant::now();
        ProgressDisplay {
            terminal: std::io::stderr().is_terminal(),
            bar: None,
            phase: None,
            phase_started: now,
            last_line: now,
        }
    }

    pub fn update(&mut self, progress: Progress) {
        if let Some(line) = self.due_line(progress) {
            crate::output::print_err(&format!("flashlane: {line}\n"));
        }
    }

    /// Moves the display on; the plain line to print now, if one is due.
    fn due_line(&mut self, progress: Progress) -> Option<String> {
        if self.phase != Some(progress.phase) {
            self.start_phase(progress);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(progress.records);
        } else if !self.terminal && self.last_line.elapsed() >= PLAIN_LINE_INTERVAL {
            self.last_line = Instant::now();
            return Some(self.plain_line(progress));
        }
        None
    }

    fn start_phase(&mut self, progress: Progress) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.phase = Some(progress.phase);
        self.phase_started = Instant::now();
        // A phase's first line comes a full interval into it, so its rate is measured over
        // that interval, not over the instant since the phase began.
        self.last_line = self.phase_started;
        if !self.terminal {
            return;
        }
        let (bar, template) = match (progress.phase, progress.total_records) {
            (Phase::Simulation, Some(total)) => (
                ProgressBar::new(total),
                "{spinner} {elapsed} simulating [{bar:20}] {human_pos}/{human_len} requests, \
                 {rate}, ETA {eta}",
            ),
            (Phase::Simulation, None) => (
                ProgressBar::new_spinner(),
                "{spinner} {elapsed} simulating: {human_pos} requests, {rate}",
            ),
            (Phase::FootprintPass, _) => (
                ProgressBar::new_spinner(),
                "{spinner} {elapsed} reading the trace for preconditioning: {human_pos} records, \
                 {rate}",
            ),
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_spinner())
                .with_key(
                    "rate",
                    |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.2} M/s", state.per_sec() / 1e6);
                    },
                ),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        self.bar = Some(bar);
    }

    /// "simulating: 12,000,000 of 100,000,000 requests (12 %), 1.20 M requests/s, ETA 73 s"
    fn plain_line(&self, progress: Progress) -> String {
        let seconds = self.phase_started.elapsed().as_secs_f64();
        let rate = if seconds > 0.0 {
            progress.records as f64 / seconds
        } else {
            0.0
        };
        let what = match progress.phase {
            Phase::FootprintPass => "reading the trace for preconditioning",
            Phase::Simulation => "simulating",
        };
        match progress.total_records {
            Some(total) if total > 0 && rate > 0.0 => format!(
                "{what}: {} of {total} requests ({:.0} %), {:.2} M requests/s, ETA {:.0} s",
                progress.records,
                progress.records as f64 * 100.0 / total as f64,
                rate / 1e6,
                total.saturating_sub(progress.records) as f64 / rate
            ),
            _ => format!(
                "{what}: {} records, {:.2} M records/s",
                progress.records,
                rate / 1e6
            ),
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Progress of `compare` and `sweep`: runs finished out of all, as a bar on a terminal, else a
/// plain line at most every [`PLAIN_LINE_INTERVAL`] (and at the end). Shared by the worker
/// threads.
pub struct RunsProgress {
    total: u64,
    bar: Option<ProgressBar>,
    started: Instant,
    /// Runs finished, and when the last plain line was printed.
    state: std::sync::Mutex<(u64, Instant)>,
}

impl RunsProgress {
    pub fn new(total: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {elapsed} runs [{bar:20}] {pos}/{len} finished, ETA {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        let now = Instant::now();
        RunsProgress {
            total,
            bar,
            started: now,
            state: std::sync::Mutex::new((0, now)),
        }
    }

    pub fn run_finished(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            return;
        }
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        state.0 += 1;
        if state.1.elapsed() >= PLAIN_LINE_INTERVAL {
            state.1 = Instant::now();
            crate::output::print_err(&format!(
                "flashlane: {}/{} runs finished after {:.0} s\n",
                state.0,
                self.total,
                self.started.elapsed().as_secs_f64()
            ));
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        } else if self.started.elapsed() >= PLAIN_LINE_INTERVAL {
            crate::output::print_err(&format!(
                "flashlane: {} finished in {:.0} s\n",
                crate::output::count(self.total, "run"),
                self.started.elapsed().as_secs_f64()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After a long footprint pass (and preconditioning) the first simulation report must not
    /// print a rate measured over the instant since that phase began ("1282 of 6999 requests
    /// (18 %), 3270.41 M requests/s, ETA 0 s").
    #[test]
    fn a_new_phase_prints_no_rate_before_an_interval_of_it() {
        let mut display = ProgressDisplay::new();
        display.terminal = false;
        let footprint = Progress {
            phase: Phase::FootprintPass,
            records: 6999,
            total_records: None,
        };
        display.due_line(footprint);
        display.last_line = Instant::now() - 3 * PLAIN_LINE_INTERVAL;
        display.phase_started = display.last_line;
        let simulating = Progress {
            phase: Phase::Simulation,
            records: 1282,
            total_records: Some(6999),
        };
        assert_eq!(display.due_line(simulating), None);
        // An interval into the phase, the line's rate is over that interval.
        display.phase_started = Instant::now() - PLAIN_LINE_INTERVAL;
        display.last_line = display.phase_started;
        let line = display.due_line(simulating).expect("a line is due");
        assert!(
            line.contains("1282 of 6999 requests (18 %), 0.00 M requests/s"),
            "{line}"
        );
    }

    #[test]
    fn plain_lines_give_rate_and_eta_once_the_total_is_known() {
        let mut display = ProgressDisplay::new();
        display.terminal = false;
        display.phase_started = Instant::now() - Duration::from_secs(2);
        let simulating = Progress {
            phase: Phase::Simulation,
            records: 2_000_000,
            total_records: Some(8_000_000),
        };
        let line = display.plain_line(simulating);
        assert!(line.starts_with("simulating: 2000000 of 8000000 requests (25 %), "));
        // At most 1 M requests/s (2 M in 2 s or a little more), and the ETA is the 6 M
        // requests left at that rate.
        let number_before = |suffix: &str| -> f64 {
            let head = &line[..line.find(suffix).expect(suffix)];
            head.rsplit(' ').next().unwrap().parse().unwrap()
        };
        let rate = number_before(" M requests/s");
        let without_unit = line.strip_suffix(" s").expect("ends with the ETA");
        let eta: f64 = without_unit.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(rate > 0.0 && rate <= 1.0, "{line}");
        assert!((eta - 6.0 / rate).abs() <= 1.0, "{line}");
        let reading = Progress {
            phase: Phase::FootprintPass,
            records: 2_000_000,
            total_records: None,
        };
        let line = display.plain_line(reading);
        assert!(line.starts_with("reading the trace for preconditioning: 2000000 records, "));
        assert!(line.ends_with(" M records/s"), "{line}");
    }
}
