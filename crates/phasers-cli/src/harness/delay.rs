//! EPCC's delay loop: private work before every barrier, so threads arrive as in a program (after
//! some work, slightly apart), subtracted with the reference loop. Dependent arithmetic on no
//! shared memory costs every thread the same; `extern "C"`, so OpenMP's C loop calls the same code.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Runs `iterations` steps of private, dependent arithmetic.
#[inline(never)]
pub extern "C" fn delay(iterations: u64) {
    let mut accumulator = 0u64;
    for step in 0..iterations {
        accumulator = black_box(accumulator.wrapping_add(step));
    }
    black_box(accumulator);
}

/// How many iterations of [`delay`] take `wanted` on this thread now: the fastest of several runs,
/// as EPCC leaves out preemptions; at least one, so a delay is never silently zero.
pub fn calibrate(wanted: Duration) -> u64 {
    if wanted.is_zero() {
        return 0;
    }
    const PROBE: u64 = 1 << 20;
    const TRIES: usize = 5;
    let fastest = (0..TRIES)
        .map(|_| {
            let start = Instant::now();
            delay(PROBE);
            start.elapsed()
        })
        .min()
        .unwrap_or(Duration::from_nanos(1))
        .max(Duration::from_nanos(1));
    let per_iteration_ns = fastest.as_nanos() as f64 / PROBE as f64;
    ((wanted.as_nanos() as f64 / per_iteration_ns).round() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_scales_with_the_wanted_time_and_no_delay_is_no_iterations() {
        assert_eq!(calibrate(Duration::ZERO), 0);
        let short = calibrate(Duration::from_micros(1));
        let long = calibrate(Duration::from_micros(100));
        // Each call calibrates afresh, so allow for a noisy machine: ~100x, well within 10x..1000x.
        assert!(
            short >= 1 && long >= 10 * short && long <= 1000 * short,
            "{short} {long}"
        );
    }

    #[test]
    fn delay_takes_time_proportional_to_iterations() {
        // Never far below what was asked. Preemption makes the run longer, but preemption during
        // the calibration makes it shorter (the loop looked slower than it is), so on a crowded
        // machine one of a few tries must show it; a loop that is always short fails them all.
        let runs: Vec<Duration> = (0..5)
            .map(|_| {
                let iterations = calibrate(Duration::from_millis(2));
                let start = Instant::now();
                delay(iterations);
                start.elapsed()
            })
            .collect();
        assert!(
            runs.iter().any(|run| *run >= Duration::from_micros(500)),
            "{runs:?}"
        );
    }
}
