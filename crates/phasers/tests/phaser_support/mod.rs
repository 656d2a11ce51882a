//! Shared helpers for the phaser and accumulator integration tests.
//!
//! Each test binary includes this module with `mod phaser_support;` and uses only part of it, so
//! unused helpers are allowed.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use phasers::{Error, Phaser};

// The barrier tests' seeded generator, so the phaser stress tests' "random" choices of who joins
// and leaves when can be replayed from a seed the same way.
#[path = "../barrier_support/mod.rs"]
mod barrier_support;
#[allow(unused_imports)]
pub use barrier_support::Rng;

/// How long anything may take before the test calls it a hang. It only detects hangs: on a loaded
/// 2-core CI machine a correct run needs a small fraction of it.
pub const HANG: Duration = Duration::from_secs(30);

/// Runs `f` on its own thread and returns its result, failing with a message naming `what` if it
/// has not finished within [`HANG`] (the thread is left behind: the test has failed anyway).
pub fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(HANG) {
        Ok(value) => {
            let _ = handle.join();
            value
        }
        // The sender went away without a value: `f` panicked; rethrow its panic.
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => unreachable!("the thread sends before it ends"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: still running after {HANG:?}, it hangs")
        }
    }
}

/// Turns a hang of threads that block on a phaser into a clear failure: if it is still armed
/// after [`HANG`], it force-terminates the phaser, so every blocked wait returns
/// `Error::Terminated` and the test reports the hang (see [`Watchdog::fired`]) instead of blocking
/// the whole test run. If even that does not free them, it aborts the process with a message, so CI
/// never waits out its own time limit in silence.
pub struct Watchdog {
    done: Arc<AtomicBool>,
    fired: Arc<AtomicBool>,
    cancel: mpsc::Sender<()>,
}

impl Watchdog {
    pub fn new(what: &str, phaser: &Phaser) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let fired = Arc::new(AtomicBool::new(false));
        let (cancel, cancelled) = mpsc::channel::<()>();
        let what = what.to_string();
        let phaser = phaser.clone();
        let watch_fired = Arc::clone(&fired);
        let watch_done = Arc::clone(&done);
        std::thread::spawn(move || {
            if cancelled.recv_timeout(HANG) != Err(mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            eprintln!("{what}: no progress after {HANG:?}; force-terminating the phaser");
            watch_fired.store(true, Ordering::SeqCst);
            phaser.force_terminate();
            if cancelled.recv_timeout(HANG) == Err(mpsc::RecvTimeoutError::Timeout)
                && !watch_done.load(Ordering::SeqCst)
            {
                eprintln!("{what}: still blocked after force_terminate; aborting");
                std::process::abort();
            }
        });
        Watchdog {
            done,
            fired,
            cancel,
        }
    }

    /// Whether the deadline passed and the phaser was terminated to free blocked threads.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    /// Panics with a hang message if the watchdog fired; otherwise describes `error` as a failure of
    /// `what`. For use in the `unwrap_or_else` of a phaser call.
    pub fn explain(&self, what: &str, error: &Error) -> String {
        if self.fired() {
            format!("{what}: hang, the watchdog terminated the phaser ({error})")
        } else {
            format!("{what}: {error}")
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        let _ = self.cancel.send(());
    }
}

/// The text of a panic payload.
pub fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}
