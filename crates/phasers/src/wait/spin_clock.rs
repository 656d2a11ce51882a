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

/// The backoff never exceeds this many pauses between loads, whatever the floors say: beyond it a
/// spinning waiter sees a release late by more than it saves in traffic.
const MAX_BACKOFF: u32 = 8;

/// The spin rounds, each a load and up to `backoff` pauses, that last about `time`.
pub(crate) fn rounds_in(time: Duration, backoff: u32) -> u32 {
    let round = pause_cost() * backoff.max(1);
    let rounds = time.as_nanos() / round.as_nanos().max(1);
    rounds.clamp(1, u32::MAX as u128) as u32
}

/// The most pauses between two loads of a word a waiter spins on: as many as fit in half a
/// cache-line round trip, so that a release is seen at most about half a round trip late (the
/// backoff exists to spare the line's owner, not to add latency). A power of two from 1 to
/// `MAX_BACKOFF`.
pub(crate) fn backoff_within(round_trip: Duration) -> u32 {
    let fit = (round_trip / 2).as_nanos() / pause_cost().as_nanos().max(1);
    let fit = fit.clamp(1, MAX_BACKOFF as u128) as u32;
    1 << fit.ilog2()
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
        let short = rounds_in(Duration::from_micros(10), 4);
        let long = rounds_in(Duration::from_millis(10), 4);
        assert!(short >= 1);
        assert!(long > short, "10 ms gave {long} rounds, 10 µs gave {short}");
    }

    #[test]
    fn the_backoff_is_a_power_of_two_within_bounds() {
        for round_trip in [1, 50, 200, 10_000] {
            let backoff = backoff_within(Duration::from_nanos(round_trip));
            assert!(
                backoff.is_power_of_two() && backoff <= MAX_BACKOFF,
                "{backoff}"
            );
        }
        assert_eq!(backoff_within(Duration::from_nanos(1)), 1);
    }
}
