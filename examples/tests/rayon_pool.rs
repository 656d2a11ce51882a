//! Barriers and teams on a rayon pool (`examples/rayon_pool.rs`): the example runs and checks
//! itself; its stencil matches the sequential run on pools of 1 to 4 threads; and a pool with
//! fewer threads than parties never hangs silently: the example's helper refuses it, a
//! [`Barrier`]'s per-rank handles leave the missing ranks unclaimed so a timed wait names them,
//! and an [`AnyThreadBarrier`]'s timed waits give up and break it, whether the calls come from
//! `broadcast` or from `par_iter`.
//!
//! Every pool runs under a hang watchdog, so a wait that would never return fails the test.

#[allow(dead_code)]
#[path = "../examples/rayon_pool.rs"]
mod example;

use std::time::{Duration, Instant};

use phasers::{AnyThreadBarrier, Barrier, Error, Team};
use rayon::prelude::*;

use example::{heat_on_pool, heat_sequential, pool_of};

// The phasers crate's hang watchdog, shared rather than copied.
#[path = "../../crates/phasers/tests/watchdog_support/mod.rs"]
mod watchdog_support;
use watchdog_support::within;

#[test]
fn the_example_program_asserts_its_results_and_returns_ok() {
    within("the rayon_pool example", || example::main().unwrap());
}

#[test]
fn stencil_on_a_pool_matches_the_sequential_run_for_one_to_four_threads() {
    // Uneven blocks (101 cells) and an uneven start, so every boundary between ranks matters.
    let initial: Vec<f64> = (0..101).map(|i| ((i * 37) % 11) as f64).collect();
    for threads in 1..=4 {
        let start = initial.clone();
        let (cells, total) = within("stencil on a pool", move || {
            let pool = pool_of(threads);
            let (barrier, team) = (Barrier::new(threads), Team::new(threads).unwrap());
            heat_on_pool(&pool, &barrier, &team, &start, 50).unwrap()
        });
        let (expected, expected_total) = heat_sequential(&initial, 50, threads);
        assert_eq!(
            cells.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            expected.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "{threads} threads"
        );
        assert!(
            (total - expected_total).abs() <= 1e-9 * expected_total.abs(),
            "{threads} threads: {total} against {expected_total}"
        );
    }
}

#[test]
fn a_pool_with_fewer_or_more_threads_than_parties_is_refused_before_any_wait() {
    for (threads, parties) in [(2, 4), (4, 2)] {
        let pool = pool_of(threads);
        let (barrier, team) = (Barrier::new(parties), Team::new(parties).unwrap());
        let start = Instant::now();
        match heat_on_pool(&pool, &barrier, &team, &[1.0; 16], 10) {
            Err(Error::InvalidArgument { message }) => {
                assert!(message.contains("num_threads"), "{message}")
            }
            other => panic!("{threads} threads, {parties} parties: {other:?}"),
        }
        assert!(start.elapsed() < Duration::from_secs(5));
        // Refused before any thread took a handle: every rank is still there to hand out.
        assert_eq!(barrier.participants().len(), parties);
        assert_eq!(team.participants().len(), parties);
    }
}

#[test]
fn barrier_handles_are_per_rank_so_a_small_pool_leaves_ranks_unclaimed_and_a_timed_wait_names_them()
{
    // Without the helper's check: 2 threads take ranks 0 and 1 of 4; ranks 2 and 3 are never
    // claimed, so a plain wait would wait for ever. A timed wait says who is missing.
    let results = within("Barrier of 4 on 2 threads", || {
        let pool = pool_of(2);
        let barrier = Barrier::new(4);
        let results = pool.broadcast(|ctx| {
            let mut participant = barrier.participant(ctx.index()).unwrap();
            let result = participant.wait_timeout(Duration::from_millis(200));
            // Handed back rather than dropped here: a dropped handle breaks the barrier, and the
            // other thread could then see `Broken` instead of its own timeout.
            (result, participant)
        });
        results
            .into_iter()
            .map(|(result, _)| result)
            .collect::<Vec<_>>()
    });
    for result in results {
        match result {
            // The other claimed rank is missing too if it had not arrived yet.
            Err(Error::Timeout {
                episode: 0,
                missing,
                resumable: true,
            }) => {
                assert!(missing.ends_with(&[2, 3]), "{missing:?}")
            }
            other => panic!("expected ranks 2 and 3 missing, got {other:?}"),
        }
    }
}

#[test]
fn any_thread_barrier_on_a_smaller_pool_times_out_or_breaks_within_seconds() {
    let (results, elapsed, broken) = within("AnyThreadBarrier of 4 on 2 threads", || {
        let pool = pool_of(2);
        let barrier = AnyThreadBarrier::new(4);
        let start = Instant::now();
        let results = pool.broadcast(|_| barrier.wait_timeout(Duration::from_millis(200)));
        (results, start.elapsed(), barrier.is_broken())
    });
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Err(Error::Timeout { .. } | Error::Broken { .. }))),
        "{results:?}"
    );
    // At least the first call to give up reports the timeout; the other may see the break first.
    assert!(results
        .iter()
        .any(|r| matches!(r, Err(Error::Timeout { .. }))));
    assert!(broken);
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

#[test]
fn any_thread_barrier_inside_par_iter_with_fewer_threads_than_parties_times_out() {
    // Four items for a barrier of 4 on 2 threads: the two threads each block in an item, and the
    // other two items cannot start until one of them returns. Only the timeout ends it; then the
    // remaining items find the barrier broken and return at once.
    let results = within("AnyThreadBarrier of 4 in par_iter on 2 threads", || {
        let pool = pool_of(2);
        let barrier = AnyThreadBarrier::new(4);
        pool.install(|| {
            (0..4)
                .into_par_iter()
                .map(|_| barrier.wait_timeout(Duration::from_millis(200)))
                .collect::<Vec<_>>()
        })
    });
    assert_eq!(results.len(), 4);
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Err(Error::Timeout { .. } | Error::Broken { .. }))),
        "{results:?}"
    );
    assert!(results
        .iter()
        .any(|r| matches!(r, Err(Error::Timeout { .. }))));
}

#[test]
fn any_thread_barrier_on_a_pool_with_one_thread_per_party_completes_every_episode() {
    const EPISODES: u64 = 100;
    let calls = within("AnyThreadBarrier of 4 on 4 threads", || {
        let pool = pool_of(4);
        let barrier = AnyThreadBarrier::new(4);
        let calls = pool.broadcast(|_| {
            (0..EPISODES)
                .map(|_| {
                    let r = barrier.wait_timeout(Duration::from_secs(10)).unwrap();
                    (r.episode(), r.is_leader())
                })
                .collect::<Vec<_>>()
        });
        barrier.settle().unwrap();
        calls
    });
    let all: Vec<(u64, bool)> = calls.into_iter().flatten().collect();
    for episode in 0..EPISODES {
        assert_eq!(all.iter().filter(|(e, _)| *e == episode).count(), 4);
        let leaders = all.iter().filter(|&&(e, led)| e == episode && led).count();
        assert_eq!(leaders, 1, "episode {episode}");
    }
}
