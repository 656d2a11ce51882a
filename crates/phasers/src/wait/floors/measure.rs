//! How the three floors are measured: two short-lived threads play ping-pong three ways.
//!
//! - **Round trip**: the threads on two different cores pass a counter back and forth through one
//!   cache line, spinning.
//! - **Yield hand-off**: both threads on the same core; each yields until the other has moved the
//!   counter, so every step is one hand-off of the core.
//! - **Wake**: the threads on two cores; each sleeps in the kernel (futex) until the other moves
//!   the counter and wakes it, so every step is one wake-up.
//!
//! Each figure is the median over several batches, not the minimum: budgets should fit the machine
//! as it usually is, and a lucky batch on a noisy VM would make them too short. The threads are
//! the measurement's own, so pinning them leaves the caller's affinity alone. Where pinning is not
//! possible (another OS, or a single allowed core) the ping-pong runs unpinned, and the figures are
//! what this process would see anyway.

use std::cell::Cell;
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::yield_now;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

/// The three floors, as measured.
pub(crate) struct Measured {
    pub(crate) round_trip: Duration,
    pub(crate) yield_handoff: Duration,
    pub(crate) wake: Duration,
}

/// Batches per figure; the median of their means is the figure.
const BATCHES: usize = 7;
/// Round trips per batch of the spinning ping-pong: about 10 to 60 µs a batch.
const SPIN_ROUND_TRIPS: u32 = 200;
/// Round trips per batch of the yielding ping-pong: 100 hand-offs, about 0.1 ms a batch.
const YIELD_ROUND_TRIPS: u32 = 50;
/// Sleeping round trips at most, each two wake-ups (about 40 µs on the EPYC VM)...
const WAKE_ROUND_TRIPS: usize = 40;
/// ...or until this much time has passed, where a wake-up waits for the next timer tick (4 ms).
const WAKE_TIME_CAP: Duration = Duration::from_millis(15);
/// Spins before a spinning waiter yields once: only matters when both ended up on one core.
const SPINS_PER_YIELD: u32 = 1 << 10;

/// Measures all three, a few milliseconds in all.
pub(crate) fn measure() -> Measured {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let first = cores.first().copied();
    let second = cores.get(1).copied();
    Measured {
        round_trip: ping_pong(first, second, Style::Spin),
        yield_handoff: ping_pong(first, first, Style::Yield) / 2,
        wake: ping_pong(first, second, Style::Sleep) / 2,
    }
}

/// How both sides of a ping-pong wait for the other's move, and how they make theirs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Spin on the line (yielding rarely, in case both share a core); a move is a store.
    Spin,
    /// Yield until the line moves; a move is a store.
    Yield,
    /// Sleep on the line (futex) until woken; a move is a store and a wake.
    Sleep,
}

impl Style {
    fn wait(self, line: &AtomicU32, value: u32) {
        match self {
            Style::Spin => {
                let mut spins = 0u32;
                while !reached(line, value) {
                    spin_loop();
                    spins = spins.wrapping_add(1);
                    if spins % SPINS_PER_YIELD == 0 {
                        yield_now();
                    }
                }
            }
            Style::Yield => {
                while !reached(line, value) {
                    yield_now();
                }
            }
            Style::Sleep => loop {
                let now = line.load(Ordering::Acquire);
                if now == value || now == STOP {
                    return;
                }
                atomic_wait::wait(line, now);
            },
        }
    }

    fn set(self, line: &AtomicU32, value: u32) {
        line.store(value, Ordering::Release);
        if self == Style::Sleep || value == STOP {
            atomic_wait::wake_one(line);
        }
    }

    /// The round trip figure: the median batch mean, or for sleeps the median single round trip.
    fn time(self, play: &Play<'_>) -> Duration {
        match self {
            Style::Spin => play.median_batch(SPIN_ROUND_TRIPS),
            Style::Yield => play.median_batch(YIELD_ROUND_TRIPS),
            Style::Sleep => play.median_single(),
        }
    }
}

/// One ping-pong: an echo thread answers each odd value with the next even one; the timing
/// thread returns the round trip figure of `style`.
fn ping_pong(
    timer_core: Option<core_affinity::CoreId>,
    echo_core: Option<core_affinity::CoreId>,
    style: Style,
) -> Duration {
    let line = CachePadded::new(AtomicU32::new(0));
    std::thread::scope(|s| {
        let echo = s.spawn(|| {
            if let Some(core) = echo_core {
                core_affinity::set_for_current(core);
            }
            let mut expected = 1;
            loop {
                style.wait(&line, expected);
                let value = line.load(Ordering::Acquire);
                if value == STOP {
                    return;
                }
                style.set(&line, value + 1);
                expected = value + 2;
            }
        });
        let timer = s.spawn(|| {
            if let Some(core) = timer_core {
                core_affinity::set_for_current(core);
            }
            let play = Play {
                line: &line,
                style,
                next: Cell::new(1),
            };
            let figure = style.time(&play);
            style.set(&line, STOP);
            figure
        });
        let figure = timer.join();
        let _ = echo.join();
        // Neither thread can panic short of a bug in this file; a plausible figure keeps the
        // budgets sane if one did.
        figure.unwrap_or(Duration::from_micros(1))
    })
}

/// Tells the echo thread to return. Odd, so the echo is waiting for it, and never reached by
/// counting.
const STOP: u32 = u32::MAX;

fn reached(line: &AtomicU32, value: u32) -> bool {
    let now = line.load(Ordering::Acquire);
    now == value || now == STOP
}

/// The timing side of a ping-pong.
struct Play<'a> {
    line: &'a AtomicU32,
    style: Style,
    next: Cell<u32>,
}

impl Play<'_> {
    fn round_trip(&self) {
        let value = self.next.get();
        self.style.set(self.line, value);
        self.style.wait(self.line, value + 1);
        self.next.set(value + 2);
    }

    /// The median over `BATCHES` batches of the mean time of one round trip.
    fn median_batch(&self, round_trips: u32) -> Duration {
        self.round_trip(); // warm-up: both threads running, the line in place
        let mut batches: Vec<Duration> = (0..BATCHES)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..round_trips {
                    self.round_trip();
                }
                start.elapsed() / round_trips
            })
            .collect();
        batches.sort();
        batches[BATCHES / 2]
    }

    /// The median of single round trips. Wake-ups are timed one at a time because one that waits
    /// for a timer tick must not hide in a batch mean; the median sees through both kinds.
    fn median_single(&self) -> Duration {
        self.round_trip();
        let start = Instant::now();
        let mut round_trips = Vec::with_capacity(WAKE_ROUND_TRIPS);
        while round_trips.len() < WAKE_ROUND_TRIPS && start.elapsed() < WAKE_TIME_CAP {
            let one = Instant::now();
            self.round_trip();
            round_trips.push(one.elapsed());
        }
        round_trips.sort();
        round_trips[round_trips.len() / 2]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Several measurements at once (as several processes starting together would run them) each
    /// finish, and give figures in the range of real machines: the ping-pongs cannot hang or
    /// return nonsense when threads outnumber cores.
    #[test]
    fn concurrent_measurements_finish_with_plausible_figures() {
        let all: Vec<Measured> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..3).map(|_| s.spawn(measure)).collect();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        });
        for measured in all {
            for (name, figure, most) in [
                ("round trip", measured.round_trip, Duration::from_millis(5)),
                (
                    "yield hand-off",
                    measured.yield_handoff,
                    Duration::from_millis(50),
                ),
                ("wake", measured.wake, Duration::from_millis(100)),
            ] {
                assert!(
                    figure > Duration::ZERO && figure < most,
                    "{name} measured {figure:?}"
                );
            }
        }
    }
}
