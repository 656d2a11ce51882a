//! Hang detection: threads stuck in a barrier cannot be cancelled, so a row without progress for
//! too long stops the run, named.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the spawning thread checks on a row; rare enough to cost the row nothing.
const WATCH_INTERVAL: Duration = Duration::from_millis(20);

/// What the spawning thread needs to tell a hung row from a slow one.
#[derive(Debug, Clone)]
pub struct Watch {
    name: String,
    threads: usize,
    hang_after: Duration,
}

impl Watch {
    /// The watch over the row `name` of `threads` threads, hung after `hang_after` without a round.
    pub fn new(name: &str, threads: usize, hang_after: Duration) -> Self {
        Watch {
            name: name.to_owned(),
            threads,
            hang_after,
        }
    }
}

/// Blocks until `finished`, looking every 20 ms or when unparked; exits if `rounds_done` stalls.
pub fn watch_until(finished: impl Fn() -> bool, rounds_done: &AtomicU64, watch: &Watch) {
    let mut last_rounds = rounds_done.load(Ordering::Relaxed);
    let mut last_progress = Instant::now();
    while !finished() {
        // Parked, so a row that ends sooner can wake it; any other wake-up is one more look.
        std::thread::park_timeout(WATCH_INTERVAL);
        let rounds = rounds_done.load(Ordering::Relaxed);
        if rounds != last_rounds {
            (last_rounds, last_progress) = (rounds, Instant::now());
        } else if last_progress.elapsed() >= watch.hang_after {
            eprintln!(
                "error: {} with {} threads completed no round for {} s; it looks hung, so the \
                 run stops here (raise --hang-seconds if the rounds are legitimately this slow)",
                watch.name,
                watch.threads,
                watch.hang_after.as_secs_f64()
            );
            std::process::exit(3);
        }
    }
}

/// The message a thread panicked with.
///
/// ```
/// use phasers_cli::harness::watchdog::panic_message;
///
/// let panic = std::thread::spawn(|| panic!("boom {}", 1)).join().unwrap_err();
/// assert_eq!(panic_message(&*panic), "boom 1");
/// ```
pub fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}
