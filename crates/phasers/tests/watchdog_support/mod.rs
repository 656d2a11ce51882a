//! The hang watchdog the reduction and team tests share: a test that would wait forever fails
//! after [`HANG`] instead of blocking CI. Included by `reduce_support` and `team_support`.
#![allow(dead_code)]

use std::sync::mpsc;
use std::time::Duration;

/// How long a group of threads may take before the test calls it a hang. It only detects hangs:
/// on a loaded 2-core CI machine a correct run needs a small fraction of it.
pub const HANG: Duration = Duration::from_secs(20);

/// Runs `f` on its own thread and returns its result; fails naming `what` if `f` has not finished
/// within [`HANG`]. The hung thread is left behind (the test has failed anyway, and the process
/// exits when the harness is done), so a hang costs CI 20 seconds, not its whole time limit.
pub fn within<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(HANG) {
        Ok(value) => {
            let _ = handle.join();
            value
        }
        // The sender went away without a value: `f` panicked; rethrow its panic here.
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => unreachable!("the thread sends before it ends"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: still running after {HANG:?}; it hangs")
        }
    }
}

/// The text of a panic payload.
pub fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic without a message)".to_string())
}
