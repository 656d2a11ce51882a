//! How many spin rounds fit in a given time on this CPU.
//!
//! The cost of one `spin_loop` pause differs more than tenfold between processors (a few
//! nanoseconds on many x86 parts, about 140 cycles on Skylake-SP and later), so a spin budget
//! written as a fixed count would spin for 70 µs on one machine and a millisecond on another. The
//! budgets are therefore written as times and converted once per process by timing a burst of
//! pauses.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::waiter::MAX_BACKOFF;

/// Pauses timed by the calibration: long enough to swamp the clock's resolution, and about
/// 4 to 60 µs once, when the first object is built.
const CALIBRATION_PAUSES: u32 = 1 << 12;

/// The spin rounds (each a load and up to `MAX_BACKOFF` pauses) that last about `time`.
pub(crate) fn rounds_in(time: Duration) -> u32 {
    let round = round_cost();
    let rounds = time.as_nanos() / round.as_nanos().max(1);
    rounds.clamp(1, u32::MAX as u128) as u32
}

/// The time of one spin round at full backoff, measured once per process.
fn round_cost() -> Duration {
    static COST: OnceLock<Duration> = OnceLock::new();
    *COST.get_or_init(|| {
        let start = Instant::now();
        for _ in 0..CALIBRATION_PAUSES {
            std::hint::spin_loop();
        }
        start.elapsed() * MAX_BACKOFF / CALIBRATION_PAUSES
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
