//! Every builder against random numeric arguments (issue 18): party counts, tiers, degrees,
//! fan-ins, roots, team sizes, grid columns, split colors and keys, timeouts, floors, profile
//! counts and `PHASERS_SPIN`, drawn from the whole range of their types but biased to the edges
//! (0, 1, 2, small counts, powers of two and their neighbours, each documented maximum and one
//! past it, `u16::MAX + 1`, `u32::MAX`, `usize::MAX`).
//!
//! Each case must end, within [`CASE_LIMIT`], in one of two ways: `Error::InvalidArgument` with a
//! message that is not empty and blames no bug, or an object that works (a party of one completes
//! an episode, small groups run one across threads, large ones report the size asked for and hand
//! out every handle). An oracle written here from the documented limits says which of the two each
//! case must give (from the public constants and the rules the builders' docs state), so an error
//! where the docs promise an object fails, and so does an object where they promise an error.
//! Every property runs under the hang watchdog: a builder that loops for ever fails the test
//! instead of blocking CI.
//!
//! Environment variables are global to the process: the `PHASERS_SPIN` property holds
//! [`ENVIRONMENT`] for writing, every other property holds it for reading.

mod watchdog_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock};
use std::time::{Duration, Instant};

use phasers::barrier::{
    BarrierAlgorithm, CombiningTree, Counting, Dissemination, McsTree, SenseReversing, Ticket,
    Tournament, MAX_FAN_IN,
};
use phasers::phaser::MAX_SUB_PHASERS;
use phasers::team::{MAX_MEMBERS, NONE};
use phasers::wait::MAX_SPIN_ROUNDS;
use phasers::{
    Accumulator, Algorithm, AnyThreadBarrier, Barrier, Error, Floors, Member, Mode, Op, Phaser,
    Profile, ProfileEntry, ReduceAlgorithm, Reduction, Team, WaitPolicy,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use watchdog_support::within;

/// The longest a case may take, building, proving and dropping its object included: a builder
/// asked for something huge must refuse at once, and the largest legal objects must stay cheap.
const CASE_LIMIT: Duration = Duration::from_secs(1);

/// Groups up to this size run an episode across threads; larger ones only report their size.
const SMALL: usize = 4;

/// Taken for writing by the property that sets `PHASERS_SPIN`, for reading by every other.
static ENVIRONMENT: RwLock<()> = RwLock::new(());

type Outcome = Result<(), TestCaseError>;

/// Runs `check` on `cases` values of the strategy `make` returns, each within [`CASE_LIMIT`],
/// under the hang watchdog.
fn property<S: Strategy + 'static>(
    name: &'static str,
    cases: u32,
    make: impl FnOnce() -> S + Send + 'static,
    check: fn(S::Value) -> Outcome,
) {
    within(name, move || {
        let _environment = ENVIRONMENT.read().unwrap_or_else(PoisonError::into_inner);
        run_cases(name, cases, make(), check);
    });
}

fn run_cases<S: Strategy>(name: &str, cases: u32, strategy: S, check: fn(S::Value) -> Outcome) {
    // PROPTEST_CASES asks for more; PROPTEST_RNG_SEED replays a failing run.
    let cases = match std::env::var("PROPTEST_CASES") {
        Ok(_) => Config::default().cases,
        Err(_) => cases,
    };
    let config = Config {
        cases,
        // No regression files in the source tree: a failure prints its minimal case.
        failure_persistence: None,
        ..Config::default()
    };
    let result = TestRunner::new(config).run(&strategy, |value| {
        let start = Instant::now();
        check(value)?;
        let took = start.elapsed();
        prop_assert!(took < CASE_LIMIT, "the case took {took:?}");
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{name}: {failure}");
    }
}

/// Builds with `build`, failing the case if building alone took [`CASE_LIMIT`] or more.
fn timed<T>(what: &str, build: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    let start = Instant::now();
    let built = build();
    let took = start.elapsed();
    prop_assert!(took < CASE_LIMIT, "{what}: building took {took:?}");
    Ok(built)
}

/// Checks that `result` is `InvalidArgument` with a message worth showing a user.
fn expect_invalid<T>(result: phasers::Result<T>, what: &str) -> Outcome {
    match result {
        Err(Error::InvalidArgument { message }) => {
            prop_assert!(!message.trim().is_empty(), "{what}: an empty message");
            let blames_a_bug = message
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|word| word.eq_ignore_ascii_case("bug"));
            prop_assert!(!blames_a_bug, "{what}: {message}");
            Ok(())
        }
        Err(other) => Err(TestCaseError::fail(format!(
            "{what}: expected InvalidArgument, got {other:?}"
        ))),
        Ok(_) => Err(TestCaseError::fail(format!(
            "{what}: built, but the arguments are outside the documented limits"
        ))),
    }
}

/// The object `result` holds, failing the case with its error when the arguments were legal.
fn expect_built<T>(result: phasers::Result<T>, what: &str) -> Result<T, TestCaseError> {
    result.map_err(|error| TestCaseError::fail(format!("{what}: legal arguments gave {error}")))
}

/// The values the numeric arguments are drawn from.
fn edges() -> Vec<usize> {
    let mut values = vec![
        0,
        1,
        2,
        3,
        4,
        5,
        7,
        8,
        15,
        16,
        17,
        63,
        64,
        65,
        255,
        256,
        u16::MAX as usize,
        u16::MAX as usize + 1,
        u32::MAX as usize,
        (u32::MAX as usize).wrapping_add(1),
        usize::MAX - 1,
        usize::MAX,
    ];
    for limit in [
        phasers::barrier::MAX_PARTIES,
        MAX_FAN_IN,
        phasers::reduce::MAX_PARTIES,
        MAX_MEMBERS,
        MAX_SUB_PHASERS,
    ] {
        values.extend([limit - 1, limit, limit + 1]);
    }
    values
}

/// Any `usize`, but mostly an edge, a small count, or a power of two and its neighbours.
fn edgy() -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => prop::sample::select(edges()),
        3 => 0usize..=20,
        3 => (0..usize::BITS, -1isize..=1)
            .prop_map(|(bit, step)| (1usize << bit).wrapping_add_signed(step)),
        1 => any::<usize>(),
    ]
}

fn policy() -> impl Strategy<Value = WaitPolicy> {
    prop::sample::select(WaitPolicy::ALL.to_vec())
}

fn any_algorithm() -> impl Strategy<Value = Algorithm> {
    let mut all = vec![Algorithm::Auto];
    all.extend(Algorithm::CONCRETE);
    prop::sample::select(all)
}

/// Any duration, biased to zero, the largest, and the ends of the nanosecond and second ranges.
fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        prop::sample::select(vec![
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_secs(1),
            Duration::from_secs(1) + Duration::from_nanos(1),
            Duration::from_nanos(u64::MAX),
            Duration::from_secs(u64::MAX),
            Duration::MAX,
        ]),
        any::<u64>().prop_map(Duration::from_nanos),
        (0u64..2_000_000).prop_map(Duration::from_micros),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(secs, nanos)| Duration::new(secs, nanos)),
    ]
}

// ---------------------------------------------------------------------------------------------
// Barriers

/// Runs one episode on every participant of `barrier` (one thread each) and checks it has one
/// leader, which ran the completion action that counts into `completions`.
fn one_episode<A: BarrierAlgorithm>(
    barrier: &Barrier<A>,
    completions: &AtomicUsize,
    has_completion: bool,
) -> Outcome {
    let participants = barrier.participants();
    prop_assert_eq!(participants.len(), barrier.parties());
    if barrier.parties() > SMALL {
        return Ok(());
    }
    let results: Vec<_> = std::thread::scope(|s| {
        let threads: Vec<_> = participants
            .into_iter()
            .map(|mut p| s.spawn(move || p.wait()))
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let mut leaders = 0;
    for result in results {
        let released = result.map_err(|e| TestCaseError::fail(format!("wait: {e}")))?;
        prop_assert_eq!(released.episode(), 0);
        leaders += usize::from(released.is_leader());
    }
    prop_assert_eq!(leaders, 1);
    let expected = usize::from(has_completion);
    prop_assert_eq!(completions.load(Ordering::Relaxed), expected);
    Ok(())
}

#[derive(Debug, Clone)]
struct BarrierCase {
    parties: usize,
    algorithm: Algorithm,
    fan_in: usize,
    policy: WaitPolicy,
    completion: bool,
    static_dispatch: bool,
}

fn barrier_case() -> impl Strategy<Value = BarrierCase> {
    (
        edgy(),
        any_algorithm(),
        edgy(),
        policy(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(parties, algorithm, fan_in, policy, completion, static_dispatch)| BarrierCase {
                parties,
                algorithm,
                fan_in,
                policy,
                completion,
                static_dispatch,
            },
        )
}

fn check_barrier(case: BarrierCase) -> Outcome {
    let legal = (1..=phasers::barrier::MAX_PARTIES).contains(&case.parties)
        && (2..=MAX_FAN_IN).contains(&case.fan_in);
    let completions = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&completions);
    let mut builder = Barrier::builder(case.parties)
        .algorithm(case.algorithm)
        .fan_in(case.fan_in)
        .wait_policy(case.policy);
    if case.completion {
        builder = builder.on_completion(move || {
            counter.fetch_add(1, Ordering::Relaxed);
        });
    }
    let what = format!("{case:?}");
    macro_rules! check_static {
        ($($variant:ident => $algorithm:ty),*) => {
            match case.algorithm {
                $(Algorithm::$variant => {
                    let result = timed(&what, || builder.build_static::<$algorithm>())?;
                    if !legal {
                        return expect_invalid(result, &what);
                    }
                    let barrier = expect_built(result, &what)?;
                    prop_assert_eq!(barrier.algorithm(), Algorithm::$variant);
                    prop_assert_eq!(barrier.parties(), case.parties);
                    one_episode(&barrier, &completions, case.completion)
                })*
                Algorithm::Auto => unreachable!("Auto is dispatched dynamically"),
            }
        };
    }
    if case.static_dispatch && case.algorithm != Algorithm::Auto {
        return check_static!(
            SenseReversing => SenseReversing,
            Counting => Counting,
            Ticket => Ticket,
            CombiningTree => CombiningTree,
            McsTree => McsTree,
            Dissemination => Dissemination,
            Tournament => Tournament
        );
    }
    let result = timed(&what, || builder.build())?;
    if !legal {
        return expect_invalid(result, &what);
    }
    let barrier = expect_built(result, &what)?;
    prop_assert_eq!(barrier.parties(), case.parties);
    match case.algorithm {
        Algorithm::Auto => prop_assert_ne!(barrier.algorithm(), Algorithm::Auto),
        asked => prop_assert_eq!(barrier.algorithm(), asked),
    }
    one_episode(&barrier, &completions, case.completion)
}

#[test]
fn barrier_builders_refuse_or_work() {
    property("barrier builder", 256, barrier_case, check_barrier);
}

fn check_any_thread((parties, algorithm): (usize, Algorithm)) -> Outcome {
    let what = format!("AnyThreadBarrier::with_algorithm({parties}, {algorithm:?})");
    let result = timed(&what, || {
        AnyThreadBarrier::with_algorithm(parties, algorithm)
    })?;
    if !(1..=phasers::barrier::MAX_PARTIES).contains(&parties) {
        return expect_invalid(result, &what);
    }
    let barrier = expect_built(result, &what)?;
    prop_assert_eq!(barrier.parties(), parties);
    if parties > SMALL {
        return Ok(());
    }
    // Twice as many calls as parties, from as many threads: two episodes of one leader each.
    let leaders = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 * parties {
            s.spawn(|| {
                if barrier
                    .wait()
                    .expect("a call of a legal barrier")
                    .is_leader()
                {
                    leaders.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    prop_assert_eq!(leaders.into_inner(), 2);
    prop_assert!(barrier.settle().is_ok(), "{what}: calls still inside wait");
    Ok(())
}

#[test]
fn any_thread_barriers_refuse_or_work() {
    property(
        "AnyThreadBarrier::new",
        128,
        || (edgy(), any_algorithm()),
        check_any_thread,
    );
}

// ---------------------------------------------------------------------------------------------
// Phasers and accumulators

/// Whether a tree of `tiers` levels of `degree` children fits the documented limit, computed
/// without overflow for any arguments.
fn shape_fits(tiers: usize, degree: usize) -> bool {
    if tiers == 0 || degree < 2 {
        return false;
    }
    let (mut nodes, mut level) = (0u128, 1u128);
    for _ in 0..tiers {
        nodes += level;
        if nodes > MAX_SUB_PHASERS as u128 {
            return false;
        }
        level *= degree as u128;
    }
    true
}

/// The documented default shape: flat without an expected count or up to 2 tasks, else two
/// tiers of degree `parties / 2` clamped to 2..=16.
fn default_shape(expected: Option<usize>) -> (usize, usize) {
    match expected {
        None | Some(0..=2) => (1, 16),
        Some(parties) => (2, (parties / 2).clamp(2, 16)),
    }
}

#[derive(Debug, Clone)]
struct PhaserCase {
    tiers: Option<usize>,
    degree: Option<usize>,
    expected: Option<usize>,
    mode: Mode,
    policy: WaitPolicy,
    reproducible: bool,
}

fn phaser_case() -> impl Strategy<Value = PhaserCase> {
    (
        prop::option::weighted(0.9, edgy()),
        prop::option::weighted(0.8, edgy()),
        prop::option::weighted(0.3, edgy()),
        prop::sample::select(Mode::ALL.to_vec()),
        policy(),
        any::<bool>(),
    )
        .prop_map(
            |(tiers, degree, expected, mode, policy, reproducible)| PhaserCase {
                tiers,
                degree,
                expected,
                mode,
                policy,
                reproducible,
            },
        )
}

fn check_phaser(case: PhaserCase) -> Outcome {
    let what = format!("{case:?}");
    let mut builder = Phaser::builder().mode(case.mode).wait_policy(case.policy);
    if let Some(tiers) = case.tiers {
        builder = builder.tiers(tiers);
    }
    if let Some(degree) = case.degree {
        builder = builder.degree(degree);
    }
    if let Some(parties) = case.expected {
        builder = builder.expected_parties(parties);
    }
    let result = timed(&what, || builder.build())?;
    let (default_tiers, default_degree) = default_shape(case.expected);
    let tiers = case.tiers.unwrap_or(default_tiers);
    let degree = case.degree.unwrap_or(default_degree);
    if !shape_fits(tiers, degree) || case.mode == Mode::Wait {
        return expect_invalid(result, &what);
    }
    let (phaser, mut creator) = expect_built(result, &what)?;
    prop_assert_eq!((phaser.tiers(), phaser.degree()), (tiers, degree));
    prop_assert_eq!(creator.mode(), case.mode);
    prop_assert_eq!(phaser.signallers(), 1);
    let sum = if case.reproducible {
        Accumulator::<u64>::reproducible(&phaser, Op::Sum)
    } else {
        Accumulator::<u64>::new(&phaser, Op::Sum)
    };
    let sum = expect_built(sum, &what)?;
    // Alone, the creator completes phase 0 with its own contribution.
    expect_built(sum.send(&mut creator, 5), &what)?;
    prop_assert_eq!(expect_built(creator.next(), &what)?, 0);
    prop_assert_eq!(sum.result(), 5);
    if !case.mode.includes(Mode::SigWait) {
        return Ok(());
    }
    // A child placed in the tree and the creator complete phase 1 together.
    let mut child = expect_built(creator.register(Mode::SigWait), &what)?;
    prop_assert_eq!(phaser.signallers(), 2);
    let phases = std::thread::scope(|s| {
        let sum = &sum;
        let other = s.spawn(move || {
            sum.send(&mut child, 2)?;
            child.next()
        });
        let mine = sum.send(&mut creator, 1).and_then(|()| creator.next());
        (mine, other.join().unwrap())
    });
    prop_assert_eq!(phases, (Ok(1), Ok(1)));
    prop_assert_eq!(sum.result(), 3);
    prop_assert_eq!(phaser.phase(), 2);
    Ok(())
}

#[test]
fn phaser_builders_refuse_or_work() {
    property("phaser builder", 256, phaser_case, check_phaser);
}

/// The regression behind issue 18: this builder looped over every one of `usize::MAX` tiers.
#[test]
fn a_phaser_of_usize_max_tiers_is_refused_at_once() {
    let _environment = ENVIRONMENT.read().unwrap_or_else(PoisonError::into_inner);
    let start = Instant::now();
    let result = within("Phaser::builder().tiers(usize::MAX).degree(2)", || {
        Phaser::builder()
            .tiers(usize::MAX)
            .degree(2)
            .build()
            .map(|_| ())
    });
    let took = start.elapsed();
    match result {
        Err(Error::InvalidArgument { message }) => {
            assert!(
                message.contains(&MAX_SUB_PHASERS.to_string()),
                "the message names the limit: {message}"
            );
            assert!(message.contains("fewer tiers"), "and what to do: {message}");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    assert!(took < CASE_LIMIT, "refusing took {took:?}");
}

// ---------------------------------------------------------------------------------------------
// Reductions and teams

#[derive(Debug, Clone)]
struct ReductionCase {
    parties: usize,
    root: usize,
    algorithm: ReduceAlgorithm,
    deterministic: bool,
    policy: WaitPolicy,
}

fn reduction_case() -> impl Strategy<Value = ReductionCase> {
    (
        edgy(),
        prop_oneof![2 => 0usize..SMALL, 1 => edgy()],
        prop::sample::select(ReduceAlgorithm::ALL.to_vec()),
        any::<bool>(),
        policy(),
    )
        .prop_map(
            |(parties, root, algorithm, deterministic, policy)| ReductionCase {
                parties,
                root,
                algorithm,
                deterministic,
                policy,
            },
        )
}

fn check_reduction(case: ReductionCase) -> Outcome {
    let what = format!("{case:?}");
    let result = timed(&what, || {
        Reduction::<u64>::builder(case.parties)
            .op(Op::Sum)
            .root(case.root)
            .algorithm(case.algorithm)
            .deterministic(case.deterministic)
            .wait_policy(case.policy)
            .build()
    })?;
    let legal =
        (1..=phasers::reduce::MAX_PARTIES).contains(&case.parties) && case.root < case.parties;
    if !legal {
        return expect_invalid(result, &what);
    }
    let group = expect_built(result, &what)?;
    prop_assert_eq!((group.parties(), group.root()), (case.parties, case.root));
    let reducers = group.participants();
    prop_assert_eq!(reducers.len(), case.parties);
    if case.parties > SMALL {
        return Ok(());
    }
    // Rank r brings [r + 1, 1]: the sums are parties * (parties + 1) / 2 and parties.
    let n = case.parties as u64;
    let expected = [n * (n + 1) / 2, n];
    let outputs: Vec<_> = std::thread::scope(|s| {
        let threads: Vec<_> = reducers
            .into_iter()
            .map(|mut reducer| {
                s.spawn(move || {
                    let mine = [reducer.rank() as u64 + 1, 1];
                    let mut at_root = [0u64; 2];
                    let has_output = reducer.is_root();
                    let output: &mut [u64] = if has_output { &mut at_root } else { &mut [] };
                    reducer.reduce(&mine, output).expect("reduce");
                    let mut everywhere = [0u64; 2];
                    reducer
                        .allreduce(&mine, &mut everywhere)
                        .expect("allreduce");
                    (has_output.then_some(at_root), everywhere)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for (at_root, everywhere) in outputs {
        if let Some(at_root) = at_root {
            prop_assert_eq!(at_root, expected);
        }
        prop_assert_eq!(everywhere, expected);
    }
    Ok(())
}

#[test]
fn reduction_builders_refuse_or_work() {
    property("reduction builder", 192, reduction_case, check_reduction);
}

/// Runs a barrier and a one-word allreduce on every member (one thread each) and checks the sum.
fn team_works(members: Vec<Member>) -> Outcome {
    let size = members.len() as u64;
    let sums: Vec<_> = std::thread::scope(|s| {
        let threads: Vec<_> = members
            .into_iter()
            .map(|mut member| {
                s.spawn(move || {
                    member.barrier()?;
                    let mut sum = [0u64];
                    member.allreduce(&[member.rank() as u64], &mut sum, Op::Sum)?;
                    Ok::<_, Error>(sum[0])
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for sum in sums {
        prop_assert_eq!(sum, Ok(size * (size - 1) / 2));
    }
    Ok(())
}

fn check_team((size, checked, policy): (usize, Option<bool>, WaitPolicy)) -> Outcome {
    let what = format!("Team of {size}, checked {checked:?}, {policy:?}");
    let result = timed(&what, || {
        let builder = Team::builder(size).wait_policy(policy);
        match checked {
            Some(checked) => builder.checked(checked).build(),
            None => builder.build(),
        }
    })?;
    if !(1..=MAX_MEMBERS).contains(&size) {
        return expect_invalid(result, &what);
    }
    let team = expect_built(result, &what)?;
    prop_assert_eq!(team.parties(), size);
    if let Some(checked) = checked {
        prop_assert_eq!(team.is_checked(), checked);
    }
    let members = team.participants();
    prop_assert_eq!(members.len(), size);
    if size > SMALL {
        return Ok(());
    }
    team_works(members)
}

#[test]
fn team_builders_refuse_or_work() {
    property(
        "team builder",
        192,
        || (edgy(), prop::option::of(any::<bool>()), policy()),
        check_team,
    );
}

#[derive(Debug, Clone)]
struct SplitCase {
    size: usize,
    checked: bool,
    columns: usize,
    /// Per member: the color and key it passes to `split`.
    seats: Vec<(u32, i64)>,
}

fn split_case() -> impl Strategy<Value = SplitCase> {
    let color = prop_oneof![
        3 => prop::sample::select(vec![0, 1, 2, NONE]),
        1 => prop::sample::select(vec![u32::MAX - 1, 1 << 31]),
        1 => any::<u32>(),
    ];
    let key = prop_oneof![
        2 => prop::sample::select(vec![i64::MIN, -1, 0, 1, i64::MAX]),
        1 => any::<i64>(),
    ];
    (1..=SMALL, any::<bool>(), edgy()).prop_flat_map(move |(size, checked, columns)| {
        prop::collection::vec((color.clone(), key.clone()), size).prop_map(move |seats| SplitCase {
            size,
            checked,
            columns,
            seats,
        })
    })
}

/// What `split(color, key)` must give `rank`: `None` for [`NONE`], else its rank among the members
/// of its color ordered by key then old rank, and their number.
fn expected_seat(seats: &[(u32, i64)], rank: usize) -> Option<(usize, usize)> {
    let color = seats[rank].0;
    if color == NONE {
        return None;
    }
    let mut group: Vec<(i64, usize)> = (0..seats.len())
        .filter(|&other| seats[other].0 == color)
        .map(|other| (seats[other].1, other))
        .collect();
    group.sort_unstable();
    let new_rank = group.iter().position(|&(_, other)| other == rank)?;
    Some((new_rank, group.len()))
}

/// What one member saw: its grid teams' (rank, size) or the grid error, and its split seat.
type SplitSeen = (
    Result<((usize, usize), (usize, usize)), Error>,
    Result<Option<(usize, usize)>, Error>,
);

fn check_split(case: SplitCase) -> Outcome {
    let team = expect_built(
        Team::builder(case.size).checked(case.checked).build(),
        "a small team",
    )?;
    let columns = case.columns;
    let seats = &case.seats;
    let seen: Vec<SplitSeen> = std::thread::scope(|s| {
        let threads: Vec<_> = team
            .participants()
            .into_iter()
            .map(|mut member| {
                s.spawn(move || {
                    let grid = member
                        .split_grid(columns)
                        .and_then(|(mut row, mut column)| {
                            row.barrier()?;
                            column.barrier()?;
                            Ok((
                                (row.rank(), row.parties()),
                                (column.rank(), column.parties()),
                            ))
                        });
                    let (color, key) = seats[member.rank()];
                    let split = member.split(color, key).and_then(|new| {
                        new.map(|mut new| {
                            new.barrier()?;
                            Ok((new.rank(), new.parties()))
                        })
                        .transpose()
                    });
                    (grid, split)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for (rank, (grid, split)) in seen.into_iter().enumerate() {
        let what = format!("{case:?}, member {rank}");
        match (rank.checked_div(columns), rank.checked_rem(columns)) {
            (Some(row), Some(column)) => {
                let row_size = columns.min(case.size - row * columns);
                let column_size = (column..case.size).step_by(columns).count();
                let grid = expect_built(grid, &what)?;
                prop_assert_eq!(grid, ((column, row_size), (row, column_size)), "{}", what);
            }
            // 0 columns: refused on every member.
            _ => expect_invalid(grid, &what)?,
        }
        let split = expect_built(split, &what)?;
        prop_assert_eq!(split, expected_seat(seats, rank), "{}", what);
    }
    Ok(())
}

#[test]
fn splits_refuse_or_work() {
    property("split and split_grid", 96, split_case, check_split);
}

// ---------------------------------------------------------------------------------------------
// Timeouts, floors, profiles, the spin count

fn check_timeouts((timeout, algorithm): (Duration, Algorithm)) -> Outcome {
    let what = format!("timeout {timeout:?}, {algorithm:?}");
    let barrier = expect_built(Barrier::with_algorithm(1, algorithm), &what)?;
    let mut only = expect_built(barrier.participant(0), &what)?;
    let released = expect_built(timed(&what, || only.wait_timeout(timeout))?, &what)?;
    prop_assert_eq!(released.episode(), 0);
    let (_phaser, mut creator) = expect_built(Phaser::new(Mode::SigWait), &what)?;
    prop_assert_eq!(expect_built(creator.next_timeout(timeout), &what)?, 0);
    expect_built(creator.signal(), &what)?;
    prop_assert_eq!(expect_built(creator.wait_timeout(timeout), &what)?, 1);
    Ok(())
}

#[test]
fn timeouts_of_any_length_work_alone() {
    property(
        "wait_timeout and next_timeout",
        128,
        || (duration(), any_algorithm()),
        check_timeouts,
    );
}

fn check_floors((round_trip, yield_handoff, wake): (Duration, Duration, Duration)) -> Outcome {
    let what = format!("Floors::new({round_trip:?}, {yield_handoff:?}, {wake:?})");
    let result = timed(&what, || Floors::new(round_trip, yield_handoff, wake))?;
    let plausible = |floor: Duration| !floor.is_zero() && floor <= Duration::from_secs(1);
    if !(plausible(round_trip) && plausible(yield_handoff) && plausible(wake)) {
        return expect_invalid(result, &what);
    }
    let floors = expect_built(result, &what)?;
    prop_assert_eq!(
        (floors.round_trip(), floors.yield_handoff(), floors.wake()),
        (round_trip, yield_handoff, wake)
    );
    Ok(())
}

#[test]
fn floors_refuse_or_keep_their_values() {
    property(
        "Floors::new",
        256,
        || (duration(), duration(), duration()),
        check_floors,
    );
}

fn median() -> impl Strategy<Value = Option<f64>> {
    prop::option::of(prop_oneof![
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
        0.0f64..1e9,
    ])
}

#[derive(Debug, Clone)]
struct ProfileCase {
    cores: usize,
    entries: Vec<ProfileEntry>,
    parties: usize,
}

fn profile_case() -> impl Strategy<Value = ProfileCase> {
    let entry = (edgy(), any_algorithm(), median()).prop_map(|(threads, algorithm, median_ns)| {
        ProfileEntry {
            threads,
            algorithm,
            median_ns,
        }
    });
    (edgy(), prop::collection::vec(entry, 0..5), edgy()).prop_map(|(cores, entries, parties)| {
        ProfileCase {
            cores,
            entries,
            parties,
        }
    })
}

fn check_profile(case: ProfileCase) -> Outcome {
    let what = format!("{case:?}");
    let result = timed(&what, || {
        Profile::new(case.cores, None, None, case.entries.clone())
    })?;
    let mut threads: Vec<usize> = case.entries.iter().map(|entry| entry.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let legal = case.cores >= 1
        && !case.entries.is_empty()
        && threads.len() == case.entries.len()
        && case.entries.iter().all(|entry| {
            entry.threads >= 1
                && entry.algorithm != Algorithm::Auto
                && entry
                    .median_ns
                    .map_or(true, |median| median.is_finite() && median >= 0.0)
        });
    if !legal {
        return expect_invalid(result, &what);
    }
    let profile = expect_built(result, &what)?;
    prop_assert_eq!(profile.cores(), case.cores);
    // The entry with the largest thread count not above `parties`, else the smallest.
    let covering = case
        .entries
        .iter()
        .filter(|entry| entry.threads <= case.parties)
        .max_by_key(|entry| entry.threads)
        .or_else(|| case.entries.iter().min_by_key(|entry| entry.threads))
        .expect("a legal profile has entries");
    prop_assert_eq!(profile.choose(case.parties), covering.algorithm);
    let back = expect_built(Profile::from_json(&profile.to_json()), &what)?;
    prop_assert_eq!(back.cores(), case.cores);
    let counts = |profile: &Profile| -> Vec<(usize, Algorithm)> {
        profile
            .entries()
            .iter()
            .map(|entry| (entry.threads, entry.algorithm))
            .collect()
    };
    prop_assert_eq!(counts(&back), counts(&profile));
    Ok(())
}

#[test]
fn profiles_refuse_or_choose() {
    property("Profile::new", 256, profile_case, check_profile);
}

/// Restores `PHASERS_SPIN` when the property ends, however it ends.
struct SpinRestored(Option<std::ffi::OsString>);

impl Drop for SpinRestored {
    fn drop(&mut self) {
        match self.0.take() {
            Some(value) => std::env::set_var("PHASERS_SPIN", value),
            None => std::env::remove_var("PHASERS_SPIN"),
        }
    }
}

fn check_spin(spins: u64) -> Outcome {
    std::env::set_var("PHASERS_SPIN", format!(" {spins} "));
    let what = format!("PHASERS_SPIN={spins}");
    let barrier = timed(&what, || Barrier::with_algorithm(1, Algorithm::Counting))?;
    let team = timed(&what, || Team::new(1))?;
    if spins > u64::from(MAX_SPIN_ROUNDS) {
        expect_invalid(barrier, &what)?;
        return expect_invalid(team, &what);
    }
    let barrier = expect_built(barrier, &what)?;
    let mut only = expect_built(barrier.participant(0), &what)?;
    prop_assert!(expect_built(only.wait(), &what)?.is_leader());
    team_works(expect_built(team, &what)?.participants())
}

#[test]
fn spin_counts_refuse_or_work() {
    within("PHASERS_SPIN", || {
        let _environment = ENVIRONMENT.write().unwrap_or_else(PoisonError::into_inner);
        let _restored = SpinRestored(std::env::var_os("PHASERS_SPIN"));
        let spins = prop_oneof![
            2 => prop::sample::select(vec![
                0,
                1,
                2000,
                u64::from(MAX_SPIN_ROUNDS) - 1,
                u64::from(MAX_SPIN_ROUNDS),
                u64::from(MAX_SPIN_ROUNDS) + 1,
                u64::from(u32::MAX),
                u64::from(u32::MAX) + 1,
                u64::MAX,
            ]),
            1 => any::<u64>(),
            1 => 0..=u64::from(MAX_SPIN_ROUNDS),
        ];
        run_cases("PHASERS_SPIN", 64, spins, check_spin);
    });
}
