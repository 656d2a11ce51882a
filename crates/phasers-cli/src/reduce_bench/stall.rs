//! How a participant stalls before it arrives: until a deadline on the monotonic clock.
//!
//! The stall stands for the work a thread does before it reaches the reduction, so it is a busy
//! wait, as in the seed: the thread keeps its core, and arrives when the deadline passes. That is
//! only faithful while every participant has a core of its own. When participants outnumber the
//! cores, a spinning staller would hold a core for a whole scheduler time slice (milliseconds,
//! longer than any stall here) while a participant that has already arrived, or the one that must
//! combine its data, waits for that core; the reduction would be measured behind the scheduler.
//! So, oversubscribed, the staller yields between looks at the clock: it still arrives at its
//! deadline (or as soon after as the scheduler gives it a core back), and the cores go to the
//! threads that are reducing, as they would on a machine with a core per participant. The C
//! baseline stalls the same way (`sched_yield` in the same place).

use std::hint::spin_loop;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How a stall waits for its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StallPolicy {
    /// Spin on the clock: every participant has a core.
    Spin,
    /// Yield the core between looks at the clock: participants outnumber the cores.
    Yield,
}

impl StallPolicy {
    /// The policy for `threads` participants on this machine.
    pub fn for_threads(threads: usize) -> Self {
        if phasers::is_oversubscribed(threads) {
            StallPolicy::Yield
        } else {
            StallPolicy::Spin
        }
    }
}

/// Waits `ns` nanoseconds from now, the way `policy` says. No stall returns at once, without
/// reading the clock.
#[inline]
pub fn stall(ns: u64, policy: StallPolicy) {
    if ns == 0 {
        return;
    }
    let deadline = Instant::now() + Duration::from_nanos(ns);
    while Instant::now() < deadline {
        match policy {
            StallPolicy::Spin => spin_loop(),
            StallPolicy::Yield => std::thread::yield_now(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_lasts_at_least_its_length() {
        for policy in [StallPolicy::Spin, StallPolicy::Yield] {
            let start = Instant::now();
            stall(200_000, policy);
            let elapsed = start.elapsed();
            assert!(
                elapsed >= Duration::from_micros(200),
                "{policy:?}: {elapsed:?}"
            );
            // Generous: this machine is shared, but a stall must not run away.
            assert!(
                elapsed < Duration::from_millis(200),
                "{policy:?}: {elapsed:?}"
            );
        }
    }

    #[test]
    fn no_stall_returns_at_once() {
        let start = Instant::now();
        for _ in 0..1000 {
            stall(0, StallPolicy::Spin);
        }
        assert!(start.elapsed() < Duration::from_millis(10));
    }

    #[test]
    fn oversubscription_yields() {
        let cores = phasers::available_cores();
        assert_eq!(StallPolicy::for_threads(cores), StallPolicy::Spin);
        assert_eq!(StallPolicy::for_threads(cores + 1), StallPolicy::Yield);
    }
}
