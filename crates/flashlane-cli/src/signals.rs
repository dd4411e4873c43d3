//! SIGINT, SIGTERM and SIGHUP: without a child, remove the output and precondition snapshot
//! temporaries and exit with 128 + the signal (130, 143, 129); with a child (`reproduce`),
//! pass the signal on to the child's process group and let the caller wait for it.

use std::sync::atomic::{AtomicI32, Ordering};

/// Process group of the running child (its pid, as it leads its own group); 0 = none.
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);
/// The last signal received while a child ran (0 = none).
static FORWARDED: AtomicI32 = AtomicI32::new(0);

/// Handle the signals on a thread of their own (a handler proper may do almost nothing; a
/// thread may remove files and take locks). Quietly does nothing if that cannot be set up:
/// the signals then keep their default effect.
#[cfg(unix)]
pub fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                handle(signal);
            }
        });
}

#[cfg(not(unix))]
pub fn install() {}

#[cfg(unix)]
fn handle(signal: i32) {
    if forward(signal) {
        return;
    }
    // Held until the process is gone: no temporary is created or renamed after this (the
    // outputs' and the precondition snapshots').
    let _held = crate::output::remove_temporaries();
    let _snapshots = flashlane_core::run::remove_snapshot_temporaries();
    std::process::exit(128 + signal);
}

/// Pass `signal` to the running child's process group, if a child runs; true if it did (or
/// will, as soon as the child has started).
#[cfg(unix)]
pub fn forward(signal: i32) -> bool {
    let group = CHILD_GROUP.load(Ordering::SeqCst);
    if group == 0 {
        return false;
    }
    FORWARDED.store(signal, Ordering::SeqCst);
    if group > 0 {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
        unsafe {
            libc::kill(-group, signal);
        }
    }
    true
}

/// Mark that a child is about to start: a signal from now on is kept for it rather than
/// ending this process.
pub fn child_starting() {
    FORWARDED.store(0, Ordering::SeqCst);
    CHILD_GROUP.store(-1, Ordering::SeqCst);
}

/// The child runs as the leader of process group `pid`: forward to it from now on, and pass
/// on a signal that came while it started.
#[cfg(unix)]
pub fn child_started(pid: u32) {
    let group = i32::try_from(pid).unwrap_or(0);
    CHILD_GROUP.store(group, Ordering::SeqCst);
    let pending = FORWARDED.load(Ordering::SeqCst);
    if pending != 0 && group > 0 {
        // SAFETY: as in `forward`.
        unsafe {
            libc::kill(-group, pending);
        }
    }
}

#[cfg(not(unix))]
pub fn child_started(_pid: u32) {}

/// The child is gone (or never started): signals end this process again. Returns the signal
/// forwarded to it, if any.
pub fn child_finished() -> Option<i32> {
    CHILD_GROUP.store(0, Ordering::SeqCst);
    match FORWARDED.swap(0, Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A signal is forwarded to the child's whole group, including one that came while the
    /// child was starting; without a child nothing is forwarded.
    #[test]
    fn signals_reach_the_child_group() {
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        assert!(!forward(libc::SIGTERM));
        child_starting();
        // Arrives before the pid is known: kept, then sent by `child_started`.
        assert!(forward(libc::SIGTERM));
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .process_group(0)
            .spawn()
            .unwrap();
        child_started(child.id());
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGTERM));
        assert_eq!(child_finished(), Some(libc::SIGTERM));
        assert!(!forward(libc::SIGTERM));
        assert_eq!(child_finished(), None);
    }
}
