//! The hardware floor: a cache line's round trip between two cores. No barrier among threads on
//! different cores completes faster (every arrival must reach the releaser, and the release every
//! waiter), so it says how far a barrier is from what the machine allows.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use serde::{Deserialize, Serialize};

use super::affinity::{allowed_cpus, pin};
use super::machine::smt_siblings;
use super::schedule::{RoundClock, Sampler, Schedule, WARM_UP_EPISODES};
use super::stats;
use super::table::time;

/// Tells the echoing thread to finish. Never reached by counting: it is odd and far away.
const STOP: u64 = u64::MAX;

/// Spins between yields. With both threads on their own cores a round trip completes long before
/// this many spins; the yield only matters unpinned, where the other thread may need this core.
const SPINS_PER_YIELD: u32 = 1024;

/// The measured floor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    /// The two CPUs the threads were pinned to, when pinning worked.
    pub pinned_to: Option<[usize; 2]>,
    /// Round trips in each timed sample.
    pub round_trips_per_sample: u64,
    /// Nanoseconds per round trip, one value per sample.
    pub samples_ns: Vec<f64>,
    /// The smallest of `samples_ns`.
    pub min_ns: Option<f64>,
    /// The median of `samples_ns`.
    pub median_ns: Option<f64>,
    /// Caveats: unpinned, SMT siblings, fewer samples than wanted.
    pub note: Option<String>,
}

/// How a benchmark measures the floor its header states: 20 samples of about 5 ms, in at most 2 s.
pub const BRIEFLY: Schedule = Schedule {
    episodes: None,
    samples: 20,
    target_sample: Duration::from_millis(5),
    row_budget: Duration::from_secs(2),
};

/// Measures a cache line's round trip between two threads, pinned to two cores where it can.
pub fn measure(schedule: Schedule) -> Floor {
    let (cpus, mut notes) = choose_cpus();
    let line = CachePadded::new(AtomicU64::new(0));
    // Both sides get threads of their own: pinning the caller would pin the rest of the run.
    let (sampler, pinned) = std::thread::scope(|s| {
        let echo = s.spawn(|| {
            let pinned = cpus.is_some_and(|[_, cpu]| pin(cpu));
            echo(&line);
            pinned
        });
        let ping = s.spawn(|| {
            let pinned = cpus.is_some_and(|[cpu, _]| pin(cpu));
            let sampler = ping(&line, schedule);
            line.store(STOP, Ordering::Release);
            (sampler, pinned)
        });
        // Neither side can panic short of a bug in this file; if one did, re-raising it is right.
        let (sampler, ping_pinned) = ping.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        let echo_pinned = echo.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (sampler, ping_pinned && echo_pinned)
    });
    if cpus.is_some() && !pinned {
        notes.push("pinning failed: measured unpinned".to_owned());
    }
    if sampler.capped() {
        notes.push(format!(
            "{} of {} samples (row budget)",
            sampler.samples().len(),
            schedule.samples
        ));
    }
    if sampler.cut() > 0 {
        notes.push(format!("{} sample(s) cut short", sampler.cut()));
    }
    let samples_ns = sampler.per_episode_ns();
    Floor {
        pinned_to: cpus.filter(|_| pinned),
        round_trips_per_sample: sampler.episodes(),
        min_ns: stats::min(&samples_ns),
        median_ns: stats::median(&samples_ns),
        samples_ns,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// The floor as the header of a report states it.
pub fn floor_line(floor: &Floor) -> String {
    match (floor.min_ns, floor.median_ns) {
        (Some(min), Some(median)) => format!(
            "cache-line round trip {}: min {}, median {} ({} samples of {} round trips){}",
            match floor.pinned_to {
                Some([a, b]) => format!("between threads pinned to cpus {a} and {b}"),
                None => "between two unpinned threads".to_owned(),
            },
            time(min),
            time(median),
            floor.samples_ns.len(),
            floor.round_trips_per_sample,
            floor
                .note
                .as_ref()
                .map(|note| format!("; {note}"))
                .unwrap_or_default(),
        ),
        _ => "not measured".to_owned(),
    }
}

/// Two CPUs on different physical cores if there are any, and notes on what could not be had.
fn choose_cpus() -> (Option<[usize; 2]>, Vec<String>) {
    let ids = allowed_cpus();
    if phasers::available_cores() < 2 || ids.len() < 2 {
        return (
            None,
            vec!["only 1 core: unpinned, so each round trip includes a thread switch".to_owned()],
        );
    }
    let first = ids[0];
    let siblings = smt_siblings(first).unwrap_or_else(|| vec![first]);
    match ids.iter().find(|cpu| !siblings.contains(cpu)) {
        Some(&other) => (Some([first, other]), Vec::new()),
        None => (
            Some([first, ids[1]]),
            vec![format!(
                "cpus {first} and {} are SMT siblings of one core: the floor is lower than between cores",
                ids[1]
            )],
        ),
    }
}

/// The timing side: sends odd values and waits for each to come back incremented, in rounds sized
/// by the sampler. Only this side counts, so it can cut a round on its own.
fn ping(line: &AtomicU64, schedule: Schedule) -> Sampler {
    let mut sampler = Sampler::new(schedule, WARM_UP_EPISODES, None);
    let start = Instant::now();
    let mut sent = 1;
    let mut planned = sampler.first_round();
    loop {
        let mut clock = RoundClock::start(planned, sampler.round_deadline(start.elapsed()));
        let mut ran = 0;
        while ran < planned {
            line.store(sent, Ordering::Release);
            wait_for(line, |value| value == sent + 1);
            sent += 2;
            ran += 1;
            if clock.expired() {
                break;
            }
        }
        match sampler.after_round(planned, ran, clock.elapsed(), start.elapsed()) {
            Some(next) => planned = next,
            None => return sampler,
        }
    }
}

/// The other side: answers each odd value with the next even one until told to stop.
fn echo(line: &AtomicU64) {
    let mut expected = 1;
    loop {
        let value = wait_for(line, |value| value == expected || value == STOP);
        if value == STOP {
            return;
        }
        line.store(expected + 1, Ordering::Release);
        expected += 2;
    }
}

/// Spins until the line holds a value `done` accepts, and returns it.
#[inline]
fn wait_for(line: &AtomicU64, done: impl Fn(u64) -> bool) -> u64 {
    let mut spins = 0u32;
    loop {
        let value = line.load(Ordering::Acquire);
        if done(value) {
            return value;
        }
        spin_loop();
        spins = spins.wrapping_add(1);
        if spins % SPINS_PER_YIELD == 0 {
            std::thread::yield_now();
        }
    }
}
