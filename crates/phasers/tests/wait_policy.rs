//! Wait policies: every policy, set explicitly, gives a correct barrier even with many more threads
//! than cores; every policy ends in parking, so timeouts and breaking still work; and the policy
//! names parse and print.
//!
//! `PHASERS_WAIT` overrides the policy set here; when it is set in the environment the checks of
//! `Barrier::wait_policy` are skipped (its own tests are in `wait_env.rs`).

mod barrier_support;

use std::time::{Duration, Instant};

use barrier_support::{all_algorithms, builder_with_record, run_checked, Record};
use phasers::{Algorithm, Barrier, Error, WaitPolicy};

/// Threads per barrier: 8 times the 2 cores of the CI machines.
const THREADS: usize = 16;

fn env_overrides_policy() -> bool {
    std::env::var_os("PHASERS_WAIT").is_some()
}

/// A short oversubscribed run of every algorithm under `policy`.
fn oversubscribed(policy: WaitPolicy) {
    // `Spin` keeps spinning for tens of milliseconds even when threads outnumber cores, as
    // documented, so with 16 threads on 2 cores an episode takes about a tenth of a second: a few
    // episodes suffice to check it is correct and terminates.
    let episodes = if policy == WaitPolicy::Spin { 4 } else { 1_000 };
    for algorithm in all_algorithms() {
        let start = Instant::now();
        let record = Record::new(THREADS, episodes);
        let barrier = builder_with_record(THREADS, &record)
            .algorithm(algorithm)
            .wait_policy(policy)
            .build()
            .unwrap();
        if !env_overrides_policy() {
            assert_eq!(barrier.wait_policy(), policy);
        }
        let what = format!("{algorithm} under {policy} with {THREADS} threads");
        run_checked(&what, &barrier, &record, episodes);
        eprintln!("{what}: {episodes} episodes in {:?}", start.elapsed());
    }
}

/// Under `policy`, a wait with nobody coming gives up: no policy spins for ever.
fn gives_up(policy: WaitPolicy) {
    for algorithm in all_algorithms() {
        let barrier = Barrier::builder(2)
            .algorithm(algorithm)
            .wait_policy(policy)
            .build()
            .unwrap();
        let mut handles = barrier.participants();
        let timeout = Duration::from_millis(10);
        let start = Instant::now();
        match handles[0].wait_timeout(timeout) {
            Err(Error::Timeout {
                episode,
                missing,
                resumable: true,
            }) => {
                assert_eq!(episode, 0);
                assert_eq!(missing, vec![1]);
            }
            other => panic!("{algorithm} under {policy}: expected a timeout, got {other:?}"),
        }
        let elapsed = start.elapsed();
        assert!(
            elapsed >= timeout,
            "{algorithm} under {policy}: gave up early"
        );
        // Generous: the deadline may be overshot by one spin phase (tens of ms under `Spin`).
        assert!(
            elapsed < Duration::from_secs(5),
            "{algorithm} under {policy}: took {elapsed:?}"
        );
    }
}

/// Under `policy`, a waiter notices a break promptly (it must not sleep or spin through it).
fn notices_breaking(policy: WaitPolicy) {
    for algorithm in all_algorithms() {
        let barrier = Barrier::builder(4)
            .algorithm(algorithm)
            .wait_policy(policy)
            .build()
            .unwrap();
        let mut handles = barrier.participants();
        let culprit = handles.pop().unwrap();
        std::thread::scope(|s| {
            let waiters: Vec<_> = handles
                .iter_mut()
                .map(|p| s.spawn(move || (p.wait(), Instant::now())))
                .collect();
            std::thread::sleep(Duration::from_millis(30));
            let dropped_at = Instant::now();
            drop(culprit);
            for waiter in waiters {
                let (result, returned_at) = waiter.join().unwrap();
                assert_eq!(
                    result,
                    Err(Error::Broken { by: 3, episode: 0 }),
                    "{algorithm}"
                );
                let delay = returned_at.saturating_duration_since(dropped_at);
                assert!(
                    delay < Duration::from_secs(2),
                    "{algorithm} under {policy}: noticed the break after {delay:?}"
                );
            }
        });
    }
}

macro_rules! policy_tests {
    ($($module:ident: $policy:expr),+ $(,)?) => {
        $(
            mod $module {
                use super::*;

                #[test]
                fn sixteen_threads_every_algorithm() {
                    oversubscribed($policy);
                }

                #[test]
                fn timed_wait_gives_up() {
                    gives_up($policy);
                }

                #[test]
                fn waiters_notice_breaking() {
                    notices_breaking($policy);
                }
            }
        )+
    };
}

policy_tests!(
    auto: WaitPolicy::Auto,
    spin: WaitPolicy::Spin,
    yield_: WaitPolicy::Yield,
    park: WaitPolicy::Park,
);

/// Every waiter sleeps on the signal's shared futex word whenever it waits, so one wake releases
/// all 63 sleepers at once: the barrier invariant must hold at 64 threads on 2 cores, every episode.
#[test]
fn parking_at_sixty_four_threads_every_algorithm() {
    const MANY: usize = 64;
    let episodes = 200;
    for algorithm in all_algorithms() {
        let record = Record::new(MANY, episodes);
        let barrier = builder_with_record(MANY, &record)
            .algorithm(algorithm)
            .wait_policy(WaitPolicy::Park)
            .build()
            .unwrap();
        run_checked(
            &format!("{algorithm} parking with {MANY} threads"),
            &barrier,
            &record,
            episodes,
        );
    }
}

#[test]
fn the_default_policy_is_auto() {
    assert_eq!(WaitPolicy::default(), WaitPolicy::Auto);
    if !env_overrides_policy() {
        assert_eq!(
            Barrier::with_algorithm(2, Algorithm::Auto)
                .unwrap()
                .wait_policy(),
            WaitPolicy::Auto
        );
        let built = Barrier::builder(2).build().unwrap();
        assert_eq!(built.wait_policy(), WaitPolicy::Auto);
    }
}

#[test]
fn policy_names_round_trip() {
    assert_eq!(WaitPolicy::ALL.len(), 4);
    for policy in WaitPolicy::ALL {
        assert_eq!(policy.to_string(), policy.name());
        assert_eq!(policy.name().parse::<WaitPolicy>(), Ok(policy));
        // As `PHASERS_WAIT` may be written: any case, stray spaces.
        assert_eq!(
            policy.name().to_uppercase().parse::<WaitPolicy>(),
            Ok(policy)
        );
        assert_eq!(format!("  {policy}\n").parse::<WaitPolicy>(), Ok(policy));
    }
    let names: Vec<&str> = WaitPolicy::ALL.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["auto", "spin", "yield", "park"]);
}

#[test]
fn bad_policy_name_lists_the_valid_ones() {
    for bad in ["", "sleep", "spinning", "auto,park"] {
        match bad.parse::<WaitPolicy>() {
            Err(Error::InvalidArgument { message }) => {
                assert!(message.contains(&format!("{bad:?}")), "{message}");
                assert!(message.contains("auto, spin, yield, park"), "{message}");
            }
            other => panic!("{bad:?}: expected InvalidArgument, got {other:?}"),
        }
    }
}
