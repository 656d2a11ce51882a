//! Waiting for MPI: poll, then yield, then sleep, with a deadline and a stall warning.
//!
//! MPI cannot wake a parked thread when a message arrives, so a waiter polls. It polls in a tight
//! loop first (a message from another core arrives within microseconds), then yields its core
//! for up to 2 ms, then sleeps for growing naps of up to a millisecond, so that ranks that
//! outnumber the cores do not steal them from the rank that is late. Nothing polls for ever at
//! full speed.
//!
//! A wait that lasts longer than `PHASERS_MPI_STALL_WARN` seconds (10 by default, `off` to
//! disable) prints one line to stderr naming the operation, the episode and the ranks it waits
//! for, and repeats it at doubling intervals: a job whose rank is stuck never hangs silently.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Polls that a waiter with a core of its own makes before it starts yielding.
const SPIN_POLLS: u32 = 4_000;
/// Polls before yielding when ranks × threads outnumber the cores.
const OVERSUBSCRIBED_POLLS: u32 = 16;
/// How long a waiter yields before it starts to nap. A rank that naps cannot be woken by the
/// message it waits for, so napping early makes episodes wait out naps once ranks share cores
/// (a benchmark of four ranks on two cores, napping after 64 yields, once crawled through its
/// MCS-tree row with every rank asleep); yielding hands the core to the rank that is late, and
/// napping is kept for waits that are really long.
const YIELD_PHASE: Duration = Duration::from_millis(2);
const FIRST_NAP: Duration = Duration::from_micros(20);
const LONGEST_NAP: Duration = Duration::from_millis(1);
/// Environment variable: seconds before a stalled wait prints a warning, or `off`.
///
/// Read once, at the first wait that could stall; set it before.
///
/// ```
/// use phasers_mpi::STALL_WARN_ENV;
///
/// assert_eq!(STALL_WARN_ENV, "PHASERS_MPI_STALL_WARN");
/// // Warn after 2.5 s instead of 10.
/// std::env::set_var(STALL_WARN_ENV, "2.5");
/// ```
pub const STALL_WARN_ENV: &str = "PHASERS_MPI_STALL_WARN";
const DEFAULT_STALL_WARN: Duration = Duration::from_secs(10);

/// What a wait is for, to name it in stall warnings and timeouts.
pub(crate) struct WaitFor<'a> {
    /// The operation, e.g. "dissemination barrier".
    pub what: &'static str,
    /// The episode or call number.
    pub episode: u64,
    /// This process's rank, for the warning line.
    pub rank: usize,
    /// Whether more threads wait than there are cores (poll briefly, then sleep).
    pub oversubscribed: bool,
    /// Describes what is still missing, e.g. "rank 3's arrival"; called only to warn.
    pub missing: &'a dyn Fn() -> String,
}

/// Polls `ready` until it returns `true` (then returns `true`) or `deadline` passes (then `false`).
pub(crate) fn poll_until(
    wait: &WaitFor<'_>,
    deadline: Option<Instant>,
    mut ready: impl FnMut() -> bool,
) -> bool {
    let polls = if wait.oversubscribed {
        OVERSUBSCRIBED_POLLS
    } else {
        SPIN_POLLS
    };
    for _ in 0..polls {
        if ready() {
            return true;
        }
        std::hint::spin_loop();
    }
    let start = Instant::now();
    let mut warn_after = stall_warning();
    let mut nap = FIRST_NAP;
    loop {
        if ready() {
            return true;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return false;
        }
        if let Some(after) = warn_after {
            let waited = now - start;
            if waited >= after {
                eprintln!(
                    "phasers-mpi: rank {} has waited {:.0?} in {} (episode {}) for {}; if a rank \
                     died, mpirun ends the job; set {}=off to silence this",
                    wait.rank,
                    waited,
                    wait.what,
                    wait.episode,
                    (wait.missing)(),
                    STALL_WARN_ENV
                );
                warn_after = Some(after * 2);
            }
        }
        if now - start < YIELD_PHASE {
            std::thread::yield_now();
        } else {
            let mut sleep = nap;
            if let Some(d) = deadline {
                sleep = sleep.min(d.saturating_duration_since(now));
            }
            std::thread::sleep(sleep);
            nap = (nap * 2).min(LONGEST_NAP);
        }
    }
}

/// The stall-warning threshold from [`STALL_WARN_ENV`]; `None` when warnings are off. An
/// unparsable value keeps the default and says so once.
fn stall_warning() -> Option<Duration> {
    static THRESHOLD: OnceLock<Option<Duration>> = OnceLock::new();
    *THRESHOLD.get_or_init(|| match std::env::var(STALL_WARN_ENV) {
        Err(_) => Some(DEFAULT_STALL_WARN),
        Ok(v) if v.eq_ignore_ascii_case("off") => None,
        Ok(v) => match v.parse::<f64>() {
            Ok(secs) if secs > 0.0 && secs.is_finite() => Some(Duration::from_secs_f64(secs)),
            _ => {
                eprintln!(
                    "phasers-mpi: {STALL_WARN_ENV}={v:?} is neither a positive number of seconds \
                     nor `off`; using {DEFAULT_STALL_WARN:?}"
                );
                Some(DEFAULT_STALL_WARN)
            }
        },
    })
}
