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

/// The spin rounds, each a load and one pause, that last about `time`.
///
/// One pause per load, never a growing backoff: the waiters poll a line that only its releaser
/// writes, so polling it more often costs the releaser nothing until it writes, while every extra
/// pause delays the waiter's sight of the release. (An earlier backoff of up to 8 pauses cost
/// 1.4x at 2 threads on the EPYC VM, whose pause is 24 ns; deriving it from the round trip made it
/// depend on the round trip measured at start-up, which the VM changes fivefold from minute to
/// minute.)
pub(crate) fn rounds_in(time: Duration) -> u32 {
    let rounds = time.as_nanos() / pause_cost().as_nanos().max(1);
    rounds.clamp(1, u32::MAX as u128) as u32
}

/// The time of one pause, measured once per process.
fn pause_cost() -> Duration {
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
    fn longer_times_give_more_rounds() {
        let short = rounds_in(Duration::from_micros(10));
        let long = rounds_in(Duration::from_millis(10));
        assert!(short >= 1);
        assert!(long > short, "10 ms gave {long} rounds, 10 µs gave {short}");
    }
}
