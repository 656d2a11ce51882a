//! Stress tests of [`AnyThreadBarrier`] for every algorithm, with more threads than parties so that
//! threads change ranks from one episode to the next, and up to 64 threads on the 2-core CI
//! machines (heavily oversubscribed: the park path, and slots taken while their previous holder is
//! still leaving).
//!
//! The threads share a pool of calls, a multiple of `parties`, rather than each making a fixed
//! number: with anonymous calls, some threads may complete episodes among themselves and finish
//! while another still has calls to make and no partners left (a `pthread_barrier_t` program
//! written that way deadlocks too). A call is claimed by incrementing the arrival counter right
//! before `wait`, and the counter is read again right after: a call that leaves episode `e` must
//! see at least `(e + 1) * parties` arrivals (the invariant; the counter is `Relaxed`, so only the
//! barrier orders it). Each call also records the episode it
//! completed; at the end every episode must have been returned by exactly `parties` calls with
//! exactly one leader, and `settle` must find the barrier idle. A hang fails the test after the
//! watchdog's limit instead of blocking CI.

mod watchdog_support;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use phasers::{Algorithm, AnyThreadBarrier};
use watchdog_support::within;

/// Every algorithm a test should cover: the concrete ones and `Auto`.
fn all_algorithms() -> impl Iterator<Item = Algorithm> {
    Algorithm::CONCRETE
        .into_iter()
        .chain(std::iter::once(Algorithm::Auto))
}

/// What the calls of one run record.
struct Record {
    parties: u64,
    /// The size of the pool of calls.
    total: u64,
    /// Calls claimed (a claim past `total` finds the pool empty and makes no call).
    arrivals: AtomicU64,
    /// How many calls returned each episode.
    returned: Vec<AtomicU32>,
    /// How many calls led each episode.
    leaders: Vec<AtomicU32>,
    /// Violations seen inside the threads, reported at the end: a thread that panicked would leave
    /// the others waiting for its calls, and the watchdog's "hang" would hide the real message.
    violations: Mutex<Vec<String>>,
}

impl Record {
    fn violation(&self, message: String) {
        let mut violations = self.violations.lock().unwrap();
        if violations.len() < 10 {
            violations.push(message);
        }
    }

    /// Claims a call from the pool and makes it, checked; `false` once the pool is empty.
    fn call(&self, barrier: &AnyThreadBarrier) -> bool {
        let claimed = self.arrivals.fetch_add(1, Ordering::Relaxed);
        if claimed >= self.total {
            return false;
        }
        let result = match barrier.wait() {
            Ok(result) => result,
            Err(error) => {
                self.violation(format!("wait failed: {error}"));
                return true;
            }
        };
        let seen = self.arrivals.load(Ordering::Relaxed);
        let episode = result.episode();
        if seen < (episode + 1) * self.parties {
            self.violation(format!(
                "a call left episode {episode} having seen only {seen} arrivals"
            ));
        }
        let Some(returned) = self.returned.get(episode as usize) else {
            self.violation(format!("episode {episode} is beyond the last one"));
            return true;
        };
        returned.fetch_add(1, Ordering::Relaxed);
        if result.is_leader() {
            self.leaders[episode as usize].fetch_add(1, Ordering::Relaxed);
        }
        true
    }
}

/// `threads` threads make `episodes * parties` calls between them on a barrier of `parties`.
fn stress(algorithm: Algorithm, parties: usize, threads: usize, episodes: usize) {
    let total = episodes * parties;
    let barrier =
        Arc::new(AnyThreadBarrier::with_algorithm(parties, algorithm).expect("valid barrier"));
    assert_eq!(barrier.algorithm(), algorithm.resolve(parties));
    let what = format!(
        "{algorithm} ({}), {parties} parties, {threads} threads, {episodes} episodes",
        barrier.algorithm()
    );
    let record = Arc::new(Record {
        parties: parties as u64,
        total: total as u64,
        arrivals: AtomicU64::new(0),
        returned: (0..episodes).map(|_| AtomicU32::new(0)).collect(),
        leaders: (0..episodes).map(|_| AtomicU32::new(0)).collect(),
        violations: Mutex::new(Vec::new()),
    });
    {
        let barrier = Arc::clone(&barrier);
        let record = Arc::clone(&record);
        within(&what, move || {
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| while record.call(&barrier) {});
                }
            });
        });
    }
    let violations = record.violations.lock().unwrap();
    assert!(violations.is_empty(), "{what}: {violations:#?}");
    for episode in 0..episodes {
        let returned = record.returned[episode].load(Ordering::Relaxed);
        assert_eq!(
            returned, parties as u32,
            "{what}: episode {episode} was completed by {returned} calls"
        );
        let leaders = record.leaders[episode].load(Ordering::Relaxed);
        assert_eq!(
            leaders, 1,
            "{what}: episode {episode} had {leaders} leaders"
        );
    }
    barrier
        .settle()
        .unwrap_or_else(|busy| panic!("{what}: every call has returned, yet {busy}"));
    assert!(!barrier.is_broken());
}

/// One `#[test]` per (parties, threads, episodes), each running every algorithm.
macro_rules! stress_tests {
    ($($name:ident: $parties:expr, $threads:expr, $episodes:expr;)+) => {
        $(
            #[test]
            fn $name() {
                for algorithm in all_algorithms() {
                    stress(algorithm, $parties, $threads, $episodes);
                }
            }
        )+
    };
}

stress_tests! {
    // One party: every call is an episode of its own, and its leader.
    one_party_four_threads: 1, 4, 20_000;
    // As many threads as parties, as with a `Barrier`'s participants.
    two_parties_two_threads: 2, 2, 10_000;
    // The smallest case where threads change ranks.
    two_parties_three_threads: 2, 3, 10_000;
    // Threads not a multiple of parties.
    five_parties_seven_threads: 5, 7, 3_000;
    // The case: 64 threads on a 16-party barrier, four threads for each rank.
    sixteen_parties_sixty_four_threads: 16, 64, 3_000;
    // As many threads as parties at the largest size.
    sixty_four_parties_sixty_four_threads: 64, 64, 1_000;
}
