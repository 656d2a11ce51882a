//! How long a pause lasts on this CPU, to turn spin budgets written as times into rounds.
//!
//! The cost of one `spin_loop` pause differs more than tenfold between processors (a few
//! nanoseconds on many x86 parts, about 140 cycles on Skylake-SP and later), so a spin budget
//! written as a fixed count would spin for 70 µs on one machine and a millisecond on another. The
//! budgets are therefore written as times and converted once per process by timing a burst of
//! pauses.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Pauses timed by the calibration: long enough to swamp the clock's resolution, and about
/// 4 to 60 µs once, when the first object is built.
const CALIBRATION_PAUSES: u32 = 1 << 12;

/// The time of one spin round, a load and one pause, measured once per process.
///
/// One pause per load, never a growing backoff: the waiters poll a line that only its releaser
/// writes, so polling it more often costs the releaser nothing until it writes, while every extra
/// pause delays the waiter's sight of the release. (An earlier backoff of up to 8 pauses cost
/// 1.4x at 2 threads on the EPYC VM, whose pause is 24 ns; deriving it from the round trip made it
/// depend on the round trip measured at start-up, which the VM changes fivefold from minute to
/// minute.)
pub(crate) fn pause_cost() -> Duration {
    static COST: OnceLock<Duration> = OnceLock::new();
    *COST.get_or_init(|| {
        let start = Instant::now();
        for _ in 0..CALIBRATION_PAUSES {
            std::hint::spin_loop();
        }
        (start.elapsed() / CALIBRATION_PAUSES).max(Duration::from_nanos(1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_is_measured_once_and_is_plausible() {
        let pause = pause_cost();
        assert_eq!(pause_cost(), pause);
        // A calibration preempted for a whole 4 ms tick would still come out under 1 µs a pause.
        assert!(
            pause >= Duration::from_nanos(1) && pause < Duration::from_micros(10),
            "{pause:?}"
        );
    }
}
