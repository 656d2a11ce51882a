//! A reduction whose participant is lost never hangs: when a custom operator panics in one
//! participant, or a participant's handle is dropped before its call, every other participant's
//! current call (where it still needs the lost one) and every later call returns `Error::Broken`
//! naming the lost rank and the episode, promptly, for every algorithm and both modes, and
//! `is_broken()` says so. Dropping the `Reduction` object itself while the handles work breaks
//! nothing.
//!
//! Every test runs its participants under a watchdog (`reduce_support::within`), so a hang fails
//! the test after 20 seconds instead of blocking CI.

mod reduce_support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use phasers::{Error, Op, ReduceAlgorithm, ReduceOutcome, Reduction};
use reduce_support::{payload_text, run_all, run_each_within, Mode};

/// The library promises to notice within milliseconds; this bound is for a loaded 2-core machine
/// and only proves that nobody waits for the lost participant.
const PROMPTLY: Duration = Duration::from_secs(2);

/// Waits until `group` reports itself broken: a participant that returned from its call before
/// the break (its data consumed by a master) may otherwise start its next call, and even finish
/// it, before the group breaks. Fails if that does not happen within a few seconds.
fn wait_until_broken<T: Copy + Send + Sync + 'static>(what: &str, group: &Reduction<T>) {
    let start = Instant::now();
    while !group.is_broken() {
        assert!(
            start.elapsed() < 2 * PROMPTLY,
            "{what}: the group does not report itself broken"
        );
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// The element that makes the custom operator panic.
const POISON: i64 = -999;

/// What the poisoned operator panics with.
const PANIC_TEXT: &str = "deliberate panic in the combiner";

/// Participant counts and roots: a pair either way round, an odd count rooted in the middle, and
/// 64 participants (oversubscribed on a small machine) rooted neither at an end nor in the middle.
const SHAPES: [(usize, usize); 4] = [(2, 0), (2, 1), (5, 2), (64, 17)];

const LEN: usize = 50;

/// A sum whose combiner panics when it meets [`POISON`], so it panics in whichever participant
/// happens to combine the poisoned element, and in no other.
fn poisonous_group(algorithm: ReduceAlgorithm, parties: usize, root: usize) -> Reduction<i64> {
    let op = Op::custom(0, |a: i64, b: i64| {
        if a == POISON || b == POISON {
            panic!("{PANIC_TEXT}");
        }
        a + b
    });
    Reduction::builder(parties)
        .op(op)
        .algorithm(algorithm)
        .root(root)
        .build()
        .expect("a valid group")
}

/// How one participant's poisoned call (and the call after it) ended.
#[derive(Debug)]
enum Ending {
    /// Its call panicked (it was the one that combined the poison).
    Panicked,
    /// Its poisoned call returned the first (`Ok` for one that handed its data on and returned
    /// before the panic), and its next call the second.
    Returned(
        phasers::Result<ReduceOutcome>,
        phasers::Result<ReduceOutcome>,
    ),
}

/// A custom operator that panics in one participant: the others get `Broken` instead of hanging.
#[test]
fn panicking_combiner_breaks_the_group() {
    for algorithm in ReduceAlgorithm::ALL {
        for (parties, root) in SHAPES {
            for mode in Mode::BOTH {
                for poisoned in [root, parties - 1] {
                    panicking_combiner(algorithm, parties, root, mode, poisoned);
                }
            }
        }
    }
}

fn panicking_combiner(
    algorithm: ReduceAlgorithm,
    parties: usize,
    root: usize,
    mode: Mode,
    poisoned: usize,
) {
    let what = format!(
        "{algorithm}, {parties} parties, root {root}, {mode:?}, poison in rank {poisoned}'s input"
    );
    let group = poisonous_group(algorithm, parties, root);
    let observer = group.clone();
    let endings = run_each_within(&what, &group, move |mut participant| {
        let rank = participant.rank();
        let mut output = vec![0; LEN];
        // Episode 0 is clean: the group works before the poison.
        let clean: Vec<i64> = (0..LEN as i64).collect();
        let warmup = mode
            .call(&mut participant, &clean, &mut output)
            .expect("the clean episode");
        assert_eq!(warmup.episode(), 0);
        if warmup.has_result() {
            let expected: Vec<i64> = (0..LEN as i64).map(|i| i * parties as i64).collect();
            assert_eq!(output, expected, "rank {rank}: the clean episode's result");
        }
        let mut input = clean;
        if rank == poisoned {
            input[LEN / 2] = POISON;
        }
        let poisoned_call = mode.call(&mut participant, &input, &mut output);
        // Once the group is broken, the next call must not wait for a participant that will
        // never come.
        wait_until_broken(&format!("rank {rank}"), &observer);
        let start = Instant::now();
        let next = mode.call(&mut participant, &input, &mut output);
        assert!(
            start.elapsed() < PROMPTLY,
            "rank {rank}: the call after the break took {:?}",
            start.elapsed()
        );
        (poisoned_call, next)
    });
    let mut panicked = BTreeSet::new();
    let endings: Vec<(usize, Ending)> = endings
        .into_iter()
        .map(|(rank, ending)| match ending {
            Ok((poisoned_call, next)) => (rank, Ending::Returned(poisoned_call, next)),
            Err(payload) => {
                assert_eq!(
                    payload_text(&*payload),
                    PANIC_TEXT,
                    "{what}: rank {rank} panicked, but not with the combiner's panic"
                );
                panicked.insert(rank);
                (rank, Ending::Panicked)
            }
        })
        .collect();
    // Exactly one participant combines the poisoned element, and it panics.
    assert_eq!(
        panicked.len(),
        1,
        "{what}: expected one participant to panic in the combiner, got {panicked:?}; {endings:?}"
    );
    let culprit = *panicked.first().expect("one culprit");
    let expected = Error::Broken {
        by: culprit,
        episode: 1,
    };
    for (rank, ending) in &endings {
        let Ending::Returned(poisoned_call, next) = ending else {
            continue;
        };
        match poisoned_call {
            // A result needs the poisoned element combined, which never happened: only a reduce
            // participant other than the root, which hands its data on and returns, may see Ok.
            Ok(outcome) => assert!(
                !outcome.has_result() && *rank != root && mode == Mode::Reduce,
                "{what}: rank {rank} got {outcome:?} from the poisoned call"
            ),
            Err(error) => assert_eq!(error, &expected, "{what}: rank {rank}, poisoned call"),
        }
        assert_eq!(
            next.as_ref().err(),
            Some(&expected),
            "{what}: rank {rank}, the call after the break"
        );
    }
    assert!(group.is_broken(), "{what}: is_broken after the panic");
}

/// A handle dropped (without a panic) before a call breaks that call for those who need the lost
/// participant, and every later call for everyone.
#[test]
fn dropped_handle_breaks_the_group() {
    for algorithm in ReduceAlgorithm::ALL {
        for (parties, root) in SHAPES {
            for mode in Mode::BOTH {
                for culprit in [root, (root + 1) % parties] {
                    // Dropped before any call (from the group, never handed to a thread), or by
                    // its thread after two complete episodes, while the others may already wait.
                    dropped_before_any_call(algorithm, parties, root, mode, culprit);
                    dropped_after_episodes(algorithm, parties, root, mode, culprit, 2);
                }
            }
        }
    }
}

/// The checks for the participants that were not dropped: their call at `episode` (the first the
/// dropped one missed) returned `Broken` where it needed the dropped one (the root of a reduce,
/// everyone in an allreduce), at most `Ok` without a result elsewhere, and their next call
/// returned `Broken` promptly.
fn check_survivors(
    what: &str,
    survivors: &[(
        usize,
        phasers::Result<ReduceOutcome>,
        phasers::Result<ReduceOutcome>,
    )],
    mode: Mode,
    root: usize,
    expected: &Error,
) {
    for (rank, broken_call, next) in survivors {
        match broken_call {
            Ok(outcome) => assert!(
                mode == Mode::Reduce && *rank != root && !outcome.has_result(),
                "{what}: rank {rank} got {outcome:?} from a call that lacked a participant"
            ),
            Err(error) => assert_eq!(error, expected, "{what}: rank {rank}"),
        }
        assert_eq!(
            next.as_ref().err(),
            Some(expected),
            "{what}: rank {rank}, the call after the break"
        );
    }
}

/// One call of `mode` then, once `group` is broken, another, on `LEN` ones; the second must
/// return promptly.
fn two_calls(
    participant: &mut phasers::Reducer<i64>,
    mode: Mode,
    group: &Reduction<i64>,
) -> (
    phasers::Result<ReduceOutcome>,
    phasers::Result<ReduceOutcome>,
) {
    let input = vec![1; LEN];
    let mut output = vec![0; LEN];
    let first = mode.call(participant, &input, &mut output);
    wait_until_broken(&format!("rank {}", participant.rank()), group);
    let start = Instant::now();
    let second = mode.call(participant, &input, &mut output);
    assert!(
        start.elapsed() < PROMPTLY,
        "rank {}: a call after the break took {:?}",
        participant.rank(),
        start.elapsed()
    );
    (first, second)
}

fn dropped_before_any_call(
    algorithm: ReduceAlgorithm,
    parties: usize,
    root: usize,
    mode: Mode,
    culprit: usize,
) {
    let what = format!(
        "{algorithm}, {parties} parties, root {root}, {mode:?}, rank {culprit} dropped before \
         episode 0"
    );
    let group = Reduction::<i64>::builder(parties)
        .op(Op::Sum)
        .algorithm(algorithm)
        .root(root)
        .build()
        .expect("a valid group");
    drop(group.participant(culprit).expect("the culprit's handle"));
    let observer = group.clone();
    let survivors = run_all(&what, &group, move |mut participant| {
        let (first, second) = two_calls(&mut participant, mode, &observer);
        (participant.rank(), first, second)
    });
    assert_eq!(survivors.len(), parties - 1);
    let expected = Error::Broken {
        by: culprit,
        episode: 0,
    };
    check_survivors(&what, &survivors, mode, root, &expected);
    assert!(group.is_broken(), "{what}: is_broken");
}

fn dropped_after_episodes(
    algorithm: ReduceAlgorithm,
    parties: usize,
    root: usize,
    mode: Mode,
    culprit: usize,
    episodes: u64,
) {
    let what = format!(
        "{algorithm}, {parties} parties, root {root}, {mode:?}, rank {culprit} dropped after \
         {episodes} episodes"
    );
    let group = Reduction::<i64>::builder(parties)
        .op(Op::Sum)
        .algorithm(algorithm)
        .root(root)
        .build()
        .expect("a valid group");
    let observer = group.clone();
    let outcomes = run_all(&what, &group, move |mut participant| {
        let rank = participant.rank();
        let input = vec![rank as i64; LEN];
        let mut output = vec![0; LEN];
        for episode in 0..episodes {
            let outcome = mode
                .call(&mut participant, &input, &mut output)
                .unwrap_or_else(|error| panic!("rank {rank}, episode {episode}: {error}"));
            assert_eq!(outcome.episode(), episode);
        }
        if rank == culprit {
            // Not broken yet: the culprit completed every episode so far (its last one may still
            // be finishing elsewhere, which the drop must not disturb), and nobody else can
            // finish two more calls and drop its handle without it.
            assert!(!observer.is_broken(), "rank {rank}: broken before the drop");
            drop(participant);
            return None;
        }
        let (first, second) = two_calls(&mut participant, mode, &observer);
        Some((rank, first, second))
    });
    let survivors: Vec<_> = outcomes.into_iter().flatten().collect();
    assert_eq!(survivors.len(), parties - 1);
    let expected = Error::Broken {
        by: culprit,
        episode: episodes,
    };
    check_survivors(&what, &survivors, mode, root, &expected);
    assert!(group.is_broken(), "{what}: is_broken");
}

/// A participant thread that panics outside the library while holding its handle (a bug in the
/// user's own code between calls) breaks the group the same way: its handle is dropped by the
/// unwinding.
#[test]
fn panic_outside_the_library_breaks_the_group() {
    for algorithm in ReduceAlgorithm::ALL {
        let (parties, root, culprit) = (3, 0, 2);
        let what = format!("{algorithm}: rank {culprit} panics between calls");
        let group = Reduction::<i64>::builder(parties)
            .op(Op::Sum)
            .algorithm(algorithm)
            .root(root)
            .build()
            .expect("a valid group");
        let observer = group.clone();
        let outcomes = run_each_within(&what, &group, move |mut participant| {
            let rank = participant.rank();
            let input = vec![1; LEN];
            let mut output = vec![0; LEN];
            Mode::Allreduce
                .call(&mut participant, &input, &mut output)
                .expect("episode 0");
            if rank == culprit {
                panic!("{PANIC_TEXT}");
            }
            two_calls(&mut participant, Mode::Allreduce, &observer)
        });
        let expected = Error::Broken {
            by: culprit,
            episode: 1,
        };
        for (rank, outcome) in outcomes {
            match outcome {
                Ok((first, second)) => {
                    assert_ne!(rank, culprit);
                    assert_eq!(first.err(), Some(expected.clone()), "{what}: rank {rank}");
                    assert_eq!(second.err(), Some(expected.clone()), "{what}: rank {rank}");
                }
                Err(payload) => {
                    assert_eq!(rank, culprit, "{what}: {}", payload_text(&*payload));
                }
            }
        }
        assert!(group.is_broken(), "{what}: is_broken");
    }
}

/// The `Reduction` object is only a way to hand out handles: dropping every clone of it while the
/// participants work does not break anything, and a clone sees the same state as the original.
#[test]
fn dropping_the_group_object_breaks_nothing() {
    for algorithm in ReduceAlgorithm::ALL {
        let parties = 4;
        let what = format!("{algorithm}: the group object dropped during the calls");
        let group = Reduction::<u32>::builder(parties)
            .op(Op::Max)
            .algorithm(algorithm)
            .build()
            .expect("a valid group");
        let handles = group.participants();
        let clone = group.clone();
        assert!(!clone.is_broken());
        drop(group);
        drop(clone);
        let results = reduce_support::within(&what, move || {
            let threads: Vec<_> = handles
                .into_iter()
                .map(|mut participant| {
                    std::thread::spawn(move || {
                        let rank = participant.rank() as u32;
                        (0..20)
                            .map(|episode| {
                                let input = vec![rank * 100 + episode; 8];
                                let mut output = vec![0; 8];
                                participant
                                    .allreduce(&input, &mut output)
                                    .unwrap_or_else(|error| panic!("rank {rank}: {error}"));
                                output[0]
                            })
                            .collect::<Vec<u32>>()
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|thread| thread.join().expect("no participant panics"))
                .collect::<Vec<_>>()
        });
        for result in results {
            let expected: Vec<u32> = (0..20).map(|episode| 300 + episode).collect();
            assert_eq!(result, expected, "{what}");
        }
    }
}
