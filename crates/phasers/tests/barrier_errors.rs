//! Bad input gets a typed error whose message says what to do, and the edge cases that are not
//! errors (a barrier of one, the largest party count, the fan-in bounds) work.

mod barrier_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use barrier_support::all_algorithms;
use phasers::barrier::{
    BarrierAlgorithm, CombiningTree, Counting, Dissemination, McsTree, SenseReversing, Ticket,
    Tournament, MAX_FAN_IN, MAX_PARTIES,
};
use phasers::{Algorithm, Barrier, Error};

/// The message of an `InvalidArgument`, or a panic naming what came instead.
fn invalid_message<T: std::fmt::Debug>(result: Result<T, Error>, what: &str) -> String {
    match result {
        Err(Error::InvalidArgument { message }) => message,
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn zero_parties_is_invalid_and_says_what_to_pass() {
    for algorithm in all_algorithms() {
        let message = invalid_message(
            Barrier::with_algorithm(0, algorithm),
            "Barrier::with_algorithm(0)",
        );
        assert!(message.contains("at least 1"), "{message}");
        assert!(message.contains("number of threads"), "{message}");
        // The builder path and static dispatch reject it the same way.
        let message = invalid_message(
            Barrier::builder(0).algorithm(algorithm).build(),
            "builder(0).build()",
        );
        assert!(message.contains("at least 1"), "{message}");
    }
    let message = invalid_message(
        Barrier::builder(0).build_static::<McsTree>(),
        "builder(0).build_static",
    );
    assert!(message.contains("at least 1"), "{message}");
}

#[test]
fn too_many_parties_is_invalid_and_says_what_to_do() {
    for algorithm in all_algorithms() {
        for parties in [MAX_PARTIES + 1, usize::MAX] {
            let message = invalid_message(
                Barrier::with_algorithm(parties, algorithm),
                "too many parties",
            );
            // Names the limit, the count asked for, and the way out.
            assert!(message.contains(&MAX_PARTIES.to_string()), "{message}");
            assert!(message.contains(&parties.to_string()), "{message}");
            assert!(message.contains("split the work"), "{message}");
        }
    }
    let message = invalid_message(
        Barrier::builder(MAX_PARTIES + 1).build_static::<Dissemination>(),
        "static, too many parties",
    );
    assert!(message.contains("at most"), "{message}");
}

#[test]
fn max_parties_is_accepted() {
    // The limit itself is valid. The centralized algorithms keep little per-participant state, so
    // building one at the limit is cheap enough for a test.
    let barrier =
        Barrier::with_algorithm(MAX_PARTIES, Algorithm::SenseReversing).expect("at the limit");
    assert_eq!(barrier.parties(), MAX_PARTIES);
    let last = barrier.participant(MAX_PARTIES - 1).expect("last rank");
    assert_eq!(last.rank(), MAX_PARTIES - 1);
    // The handle is dropped without leaving: that breaks the barrier, which is nobody's concern here.
}

#[test]
fn fan_in_out_of_range_is_invalid() {
    for fan_in in [0, 1, MAX_FAN_IN + 1, usize::MAX] {
        let message = invalid_message(
            Barrier::builder(8)
                .algorithm(Algorithm::CombiningTree)
                .fan_in(fan_in)
                .build(),
            "fan-in out of range",
        );
        // Names the accepted range and the value given.
        assert!(message.contains("fan-in"), "{message}");
        assert!(
            message.contains(&format!("between 2 and {MAX_FAN_IN}")),
            "{message}"
        );
        assert!(message.contains(&format!("got {fan_in}")), "{message}");
        let result = Barrier::builder(8)
            .fan_in(fan_in)
            .build_static::<CombiningTree>();
        invalid_message(result, "static combining tree, fan-in out of range");
    }
}

#[test]
fn fan_in_bounds_are_accepted() {
    for fan_in in [2, MAX_FAN_IN] {
        for parties in [1, 2, 5, MAX_FAN_IN + 1] {
            let barrier = Barrier::builder(parties)
                .algorithm(Algorithm::CombiningTree)
                .fan_in(fan_in)
                .build()
                .unwrap_or_else(|e| panic!("fan-in {fan_in}, {parties} parties: {e}"));
            let mut handles = barrier.participants();
            barrier_support::run_episodes(&mut handles, 3);
        }
    }
}

#[test]
fn participant_rank_out_of_range_is_invalid() {
    let barrier = Barrier::with_algorithm(3, Algorithm::Auto).unwrap();
    for rank in [3, 4, usize::MAX] {
        let message = invalid_message(barrier.participant(rank), "rank out of range");
        assert!(message.contains(&format!("rank {rank}")), "{message}");
        assert!(message.contains("0 to 2"), "{message}");
    }
    // Asking for a bad rank claims nothing: every valid handle is still available.
    assert_eq!(barrier.participants().len(), 3);
}

#[test]
fn participant_twice_for_the_same_rank_is_invalid() {
    for algorithm in all_algorithms() {
        let barrier = Barrier::with_algorithm(3, algorithm).unwrap();
        let first = barrier.participant(1).expect("first request for rank 1");
        assert_eq!(first.rank(), 1);
        let message = invalid_message(barrier.participant(1), "second request for rank 1");
        assert!(message.contains("rank 1"), "{message}");
        assert!(message.contains("already handed out"), "{message}");
        // A clone of the barrier shares the claims: it cannot hand out rank 1 either.
        invalid_message(barrier.clone().participant(1), "rank 1 through a clone");
        // participants() hands out only the ranks not yet claimed, in rank order.
        let rest: Vec<usize> = barrier.participants().iter().map(|p| p.rank()).collect();
        assert_eq!(rest, vec![0, 2]);
    }
}

#[test]
fn participants_second_call_returns_nothing() {
    for algorithm in all_algorithms() {
        let barrier = Barrier::with_algorithm(4, algorithm).unwrap();
        let ranks: Vec<usize> = barrier.participants().iter().map(|p| p.rank()).collect();
        assert_eq!(ranks, vec![0, 1, 2, 3]);
        assert!(barrier.participants().is_empty());
        assert!(barrier.clone().participants().is_empty());
        invalid_message(barrier.participant(0), "rank 0 after participants()");
    }
}

/// Runs `waits` waits (plain, timed and with a past deadline) on a barrier of one and checks that
/// none blocks and each one leads.
fn single_party_never_blocks<A: BarrierAlgorithm>(
    barrier: &Barrier<A>,
    completed: Option<&AtomicU64>,
) {
    let what = barrier.algorithm();
    let mut only = barrier.participant(0).unwrap();
    let start = Instant::now();
    for episode in 0..50u64 {
        let released = match episode % 3 {
            0 => only.wait(),
            // A zero timeout or a deadline in the past must not matter: nobody else is needed.
            1 => only.wait_timeout(Duration::ZERO),
            _ => only.wait_deadline(Instant::now() - Duration::from_secs(1)),
        }
        .unwrap_or_else(|e| panic!("{what}: episode {episode}: {e}"));
        assert_eq!(released.episode(), episode, "{what}");
        assert!(released.is_leader(), "{what}: the only participant leads");
        assert!(!only.is_pending());
        if let Some(completed) = completed {
            assert_eq!(completed.load(Ordering::Relaxed), episode + 1, "{what}");
        }
    }
    // Generous: the point is that nothing parks waiting for a partner that does not exist.
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{what}: a barrier of one blocked"
    );
}

#[test]
fn a_barrier_of_one_never_blocks() {
    for algorithm in all_algorithms() {
        let barrier = Barrier::with_algorithm(1, algorithm).unwrap();
        single_party_never_blocks(&barrier, None);

        let completed = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&completed);
        let barrier = Barrier::builder(1)
            .algorithm(algorithm)
            .on_completion(move || {
                counter.fetch_add(1, Ordering::Relaxed);
            })
            .build()
            .unwrap();
        single_party_never_blocks(&barrier, Some(&completed));
        assert_eq!(completed.load(Ordering::Relaxed), 50);
    }
}

#[test]
fn a_static_barrier_of_one_never_blocks() {
    fn check<A: BarrierAlgorithm>() {
        let barrier = Barrier::builder(1).build_static::<A>().unwrap();
        single_party_never_blocks(&barrier, None);
    }
    check::<SenseReversing>();
    check::<Counting>();
    check::<Ticket>();
    check::<CombiningTree>();
    check::<McsTree>();
    check::<Dissemination>();
    check::<Tournament>();
}

#[test]
fn the_barrier_reports_how_it_was_built() {
    for algorithm in all_algorithms() {
        let barrier = Barrier::with_algorithm(6, algorithm).unwrap();
        assert_eq!(barrier.parties(), 6);
        // `Auto` is resolved when the barrier is built; the barrier never reports `Auto`.
        assert_eq!(barrier.algorithm(), algorithm.resolve(6));
        assert_ne!(barrier.algorithm(), Algorithm::Auto);
        assert!(!barrier.is_broken());
        let debug = format!("{barrier:?}");
        assert!(debug.contains("parties: 6"), "{debug}");
    }
    let barrier = Barrier::builder(3).build_static::<Tournament>().unwrap();
    assert_eq!(barrier.algorithm(), Algorithm::Tournament);
    // Without a tuning profile, `Auto` follows the documented table: counting up to 2 parties
    // or whenever the parties outnumber the cores; else sense-reversing at 3 and 5,
    // dissemination at 4 and 6 to 16, tournament beyond. `resolve_builtin`, because a
    // developer's own profile (at the default path) may change what `resolve` says.
    for parties in [1, 2, 3, 4, 5, 6, 8, 16, 17, 64, 1000] {
        let chosen = Algorithm::Auto.resolve_builtin(parties);
        let expected = match parties {
            _ if phasers::is_oversubscribed(parties) => Algorithm::Counting,
            1 | 2 => Algorithm::Counting,
            3 | 5 => Algorithm::SenseReversing,
            4 | 6..=16 => Algorithm::Dissemination,
            _ => Algorithm::Tournament,
        };
        assert_eq!(chosen, expected, "Auto for {parties} parties");
    }
}

#[test]
fn error_messages_say_what_happened_and_what_to_do() {
    let timeout = Error::Timeout {
        episode: 7,
        missing: vec![1, 3],
        resumable: true,
    }
    .to_string();
    assert!(timeout.contains("episode 7"), "{timeout}");
    assert!(timeout.contains("[1, 3]"), "{timeout}");
    assert!(
        timeout.contains("waiting again on the same handle completes"),
        "{timeout}"
    );
    // Only the advice that applies (issue 31): a handle's timeout does not talk about the
    // barrier without handles, and that one's says the barrier is broken.
    assert!(!timeout.contains("AnyThreadBarrier"), "{timeout}");
    let broke = Error::Timeout {
        episode: 7,
        missing: vec![1],
        resumable: false,
    }
    .to_string();
    assert!(broke.contains("broke the barrier"), "{broke}");
    assert!(broke.contains("build a new barrier"), "{broke}");
    assert!(!broke.contains("waiting again"), "{broke}");

    let broken = Error::Broken { by: 2, episode: 9 }.to_string();
    assert!(broken.contains("participant 2"), "{broken}");
    assert!(broken.contains("episode 9"), "{broken}");
    assert!(broken.contains("build a new object"), "{broken}");

    // The Unsupported message, as a real leave produces it, names the algorithm and the way out.
    let barrier = Barrier::with_algorithm(2, Algorithm::Tournament).unwrap();
    let mut handles = barrier.participants();
    let unsupported = handles[0].leave().unwrap_err();
    match &unsupported {
        Error::Unsupported {
            operation,
            algorithm,
            hint,
        } => {
            assert_eq!(*algorithm, "tournament");
            assert!(operation.contains("leav"), "{operation}");
            assert!(hint.contains("SenseReversing"), "{hint}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    let text = unsupported.to_string();
    assert!(text.starts_with("tournament does not support"), "{text}");
    // The handle is unharmed: both ranks can still complete an episode.
    barrier_support::run_episodes(&mut handles, 2);

    let invalid = Barrier::with_algorithm(0, Algorithm::Auto)
        .unwrap_err()
        .to_string();
    assert!(invalid.starts_with("invalid argument: "), "{invalid}");
}

#[test]
fn barriers_and_handles_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Barrier>();
    send_sync::<Barrier<McsTree>>();
    send::<phasers::Participant>();
    send::<phasers::Participant<Tournament>>();
    send_sync::<Error>();
}
