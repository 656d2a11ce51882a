//! Array reductions compute the right thing: for every algorithm, operator and element type, at
//! lengths around the participant count and at prime lengths, both `reduce` (the root's output)
//! and `allreduce` (everyone's output) equal a sequential reduction of the same inputs, exactly.
//!
//! Integers are compared exactly (wrapping arithmetic is exact in any order). Floating-point inputs
//! are chosen so that every order of combination gives the same exact result (multiples of 1/4,
//! products of powers of two); a separate test shows that `Linear`, `StaticTree` and any group
//! built with `.deterministic(true)` give bit-identical results on inputs whose sums do depend on
//! the order, whatever the arrival order. Custom `Copy` types work through `Reduction::with_fn`
//! and the builder's `.combine`.
//!
//! Every group runs several calls in a row (episodes) with different data each time, mixing
//! `reduce` and `allreduce`, and every outcome is checked: the episode number, that the algorithm
//! reported is never `Auto` (and is the configured one otherwise, and the same for every
//! participant of a call), and that `has_result` holds exactly where the result was written.

mod reduce_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use phasers::{Op, ReduceAlgorithm, ReduceOutcome, Reducer, Reduction};
use reduce_support::{
    arrive_after, assert_same, check_algorithm, hash, run_all, sequential, Item, Kind, Mode, Sample,
};

/// Participant counts of the matrix: one alone, a pair, odd counts, a power of two.
const PARTIES: [usize; 5] = [1, 2, 3, 5, 8];

/// The lengths every group reduces: empty, one element, one fewer and one more than the
/// participant count (where splitting an array among the participants leaves some with nothing or
/// one extra), and primes that split evenly among nobody.
fn lengths(parties: usize) -> Vec<usize> {
    let mut lengths = vec![0, 1, parties.saturating_sub(1), parties + 1, 7, 1031];
    // One long array per matrix cell is enough to cover chunked combination; more would only cost
    // debug-build time.
    if parties == 3 {
        lengths.push(65537);
    }
    lengths
}

/// A root other than 0 for `parties` (in the middle of the range where there is one), so the
/// algorithms' rank renumbering around the root is exercised.
fn other_root(parties: usize) -> Option<usize> {
    (parties > 1).then_some(parties * 2 / 3)
}

/// A value no result is expected to take, written into the output of participants that get no
/// result, to check that `reduce` leaves their output alone.
fn sentinel<T: Sample>() -> T {
    T::small(-7777)
}

/// What every outcome of a group's calls must say.
struct Expect {
    what: String,
    configured: ReduceAlgorithm,
    /// Whether the group is deterministic, which may change a dynamic algorithm to a fixed one.
    deterministic: bool,
    root: usize,
}

impl Expect {
    fn new<T: Item>(what: String, group: &Reduction<T>) -> Self {
        Expect {
            what,
            configured: group.algorithm(),
            deterministic: false,
            root: group.root(),
        }
    }

    fn check_outcome(&self, what: &str, outcome: &ReduceOutcome, call: usize, receives: bool) {
        assert_eq!(outcome.episode(), call as u64, "{what}: episode");
        if self.deterministic {
            // A deterministic group runs an algorithm with a fixed combination order.
            assert!(
                matches!(
                    outcome.algorithm(),
                    ReduceAlgorithm::Linear | ReduceAlgorithm::StaticTree
                ),
                "{what}: a deterministic group ran {}",
                outcome.algorithm()
            );
        } else {
            check_algorithm(what, self.configured, outcome.algorithm());
        }
        assert_eq!(outcome.has_result(), receives, "{what}: has_result");
    }
}

/// One group's sequence of calls, with every participant's input and the expected result of each.
struct Plan<T> {
    expect: Expect,
    calls: Vec<(Mode, usize)>,
    /// `inputs[call][rank]`.
    inputs: Vec<Vec<Vec<T>>>,
    expected: Vec<Vec<T>>,
    /// What participants without a result find in their output buffer after the call.
    sentinel: T,
}

impl<T: Item> Plan<T> {
    /// Inputs from `value(h)` for each element, with `h` different for every call, rank and index,
    /// and the expected results from `combine` folded sequentially.
    fn new(
        what: String,
        group: &Reduction<T>,
        calls: Vec<(Mode, usize)>,
        value: impl Fn(u64) -> T,
        combine: impl Fn(T, T) -> T,
        sentinel: T,
    ) -> Self {
        let parties = group.parties();
        let inputs: Vec<Vec<Vec<T>>> = calls
            .iter()
            .enumerate()
            .map(|(call, &(_, len))| {
                (0..parties)
                    .map(|rank| {
                        // A Weyl sequence from a hashed start: cheap per element in a debug build,
                        // and different in every bit position from one element to the next.
                        let start = hash(&[call as u64, rank as u64, len as u64]);
                        (0..len as u64)
                            .map(|i| {
                                value(start.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let expected = inputs
            .iter()
            .map(|per_rank| sequential(per_rank, &combine))
            .collect();
        Plan {
            expect: Expect::new(what, group),
            calls,
            inputs,
            expected,
            sentinel,
        }
    }

    /// Runs the plan with one thread per participant and checks everything each call promises.
    fn run(self, group: &Reduction<T>) {
        let plan = Arc::new(self);
        let shared = Arc::clone(&plan);
        let reports: Vec<Vec<ReduceAlgorithm>> =
            run_all(&plan.expect.what, group, move |participant| {
                shared.participate(participant)
            });
        // Auto may choose differently from call to call, but never differently for the participants
        // of one call: they must all run the same protocol.
        for (call, _) in plan.calls.iter().enumerate() {
            let ran: Vec<_> = reports.iter().map(|report| report[call]).collect();
            assert!(
                ran.windows(2).all(|pair| pair[0] == pair[1]),
                "{}: call {call}: participants report different algorithms: {ran:?}",
                plan.expect.what
            );
        }
    }

    /// One participant's part: every call in order, each checked. Returns the algorithm each call
    /// reported.
    fn participate(&self, mut participant: Reducer<T>) -> Vec<ReduceAlgorithm> {
        let rank = participant.rank();
        let root = self.expect.root;
        assert_eq!(
            participant.is_root(),
            rank == root,
            "{}: rank {rank}",
            self.expect.what
        );
        let mut ran = Vec::new();
        for (call, &(mode, len)) in self.calls.iter().enumerate() {
            let what = format!(
                "{}, call {call} ({mode:?}, length {len}), rank {rank}",
                self.expect.what
            );
            let input = &self.inputs[call][rank];
            let receives = mode.has_result(rank, root);
            // Participants without a result pass either nothing or a full-length buffer (alternating
            // by rank): both are allowed, and the buffer must come back untouched.
            let mut output = if receives || rank % 2 == 1 {
                vec![self.sentinel; len]
            } else {
                Vec::new()
            };
            let outcome = mode
                .call(&mut participant, input, &mut output)
                .unwrap_or_else(|error| panic!("{what}: {error}"));
            self.expect.check_outcome(&what, &outcome, call, receives);
            if receives {
                assert_same(&what, &output, &self.expected[call]);
            } else {
                assert!(
                    output.iter().all(|&x| x == self.sentinel),
                    "{what}: reduce wrote into the output of a participant that is not the root"
                );
            }
            ran.push(outcome.algorithm());
        }
        ran
    }
}

/// The calls of a group: every length, each reduced with both modes. The group with root 0 does
/// `reduce` first and lengths upward, the other `allreduce` first and lengths downward, so each
/// mode follows the other and each length follows a longer and a shorter one.
fn calls(parties: usize, root: usize) -> Vec<(Mode, usize)> {
    let mut lengths = lengths(parties);
    if root != 0 {
        lengths.reverse();
    }
    lengths
        .into_iter()
        .flat_map(|len| {
            let mut modes = Mode::BOTH;
            if root != 0 {
                modes.reverse();
            }
            modes.map(|mode| (mode, len))
        })
        .collect()
}

/// One cell of the type x operator matrix: every algorithm, participant count and root.
fn check_op<T: Sample>(kind: Kind) {
    for algorithm in ReduceAlgorithm::ALL {
        for parties in PARTIES {
            for root in std::iter::once(0).chain(other_root(parties)) {
                let group = Reduction::<T>::builder(parties)
                    .op(kind.op())
                    .algorithm(algorithm)
                    .root(root)
                    .build()
                    .unwrap_or_else(|error| panic!("{kind:?} on {}: {error}", T::NAME));
                assert_eq!(group.parties(), parties);
                assert_eq!(group.root(), root);
                assert_eq!(group.algorithm(), algorithm);
                let what = format!(
                    "{kind:?} on {}, {algorithm}, {parties} parties, root {root}",
                    T::NAME
                );
                Plan::new(
                    what,
                    &group,
                    calls(parties, root),
                    |h| kind.value::<T>(h),
                    |a, b| kind.apply(a, b),
                    sentinel(),
                )
                .run(&group);
            }
        }
    }
}

/// One test per (type, operator), named `<type>::<operator>`, so a failure names both and the
/// harness runs them in parallel.
macro_rules! matrix {
    ($($t:ident: [$($op:ident => $kind:ident),* $(,)?];)*) => {$(
        mod $t {
            use super::*;

            $(
                #[test]
                fn $op() {
                    check_op::<$t>(Kind::$kind);
                }
            )*
        }
    )*};
}

matrix! {
    i32: [sum => Sum, product => Product, min => Min, max => Max, and => And, or => Or, xor => Xor, custom => Custom];
    i64: [sum => Sum, product => Product, min => Min, max => Max, and => And, or => Or, xor => Xor, custom => Custom];
    u32: [sum => Sum, product => Product, min => Min, max => Max, and => And, or => Or, xor => Xor, custom => Custom];
    u64: [sum => Sum, product => Product, min => Min, max => Max, and => And, or => Or, xor => Xor, custom => Custom];
    f32: [sum => Sum, product => Product, min => Min, max => Max, custom => Custom];
    f64: [sum => Sum, product => Product, min => Min, max => Max, custom => Custom];
}

/// A custom `Copy` element that is not a number: a count, a sum and the extremes of the values
/// seen, merged field by field.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tally {
    count: u32,
    sum: i64,
    low: i32,
    high: i32,
}

fn merge(a: Tally, b: Tally) -> Tally {
    Tally {
        count: a.count + b.count,
        sum: a.sum + b.sum,
        low: a.low.min(b.low),
        high: a.high.max(b.high),
    }
}

/// Not a tally of anything: what participants without a result find in their output.
const NO_TALLY: Tally = Tally {
    count: 0,
    sum: -1,
    low: i32::MAX,
    high: i32::MIN,
};

fn tally(h: u64) -> Tally {
    let value = (h % 2_000_001) as i32 - 1_000_000;
    Tally {
        count: 1,
        sum: i64::from(value),
        low: value,
        high: value,
    }
}

#[test]
fn custom_type_with_fn() {
    for parties in PARTIES {
        let group = Reduction::with_fn(parties, merge).expect("a valid group");
        // `with_fn` takes the defaults: Auto, root 0.
        assert_eq!(group.algorithm(), ReduceAlgorithm::Auto);
        assert_eq!(group.root(), 0);
        let what = format!("Tally via with_fn, {parties} parties");
        Plan::new(what, &group, calls(parties, 0), tally, merge, NO_TALLY).run(&group);
    }
}

#[test]
fn custom_type_with_builder_combine() {
    for algorithm in ReduceAlgorithm::ALL {
        for parties in PARTIES {
            for root in std::iter::once(0).chain(other_root(parties)) {
                let group = Reduction::<Tally>::builder(parties)
                    .combine(merge)
                    .algorithm(algorithm)
                    .root(root)
                    .build()
                    .expect("a valid group");
                let what =
                    format!("Tally via combine, {algorithm}, {parties} parties, root {root}");
                Plan::new(what, &group, calls(parties, root), tally, merge, NO_TALLY).run(&group);
            }
        }
    }
}

/// A closure capturing state works as a combiner too (not just a `fn` item), and a tuple element.
#[test]
fn custom_closure_on_tuples() {
    let modulus = 1_000_003_u64;
    let combine = move |a: (u32, u64), b: (u32, u64)| (a.0.max(b.0), (a.1 + b.1) % modulus);
    for algorithm in ReduceAlgorithm::ALL {
        let group = Reduction::<(u32, u64)>::builder(5)
            .combine(combine)
            .algorithm(algorithm)
            .build()
            .expect("a valid group");
        let what = format!("tuples, {algorithm}");
        Plan::new(
            what,
            &group,
            calls(5, 0),
            |h| ((h >> 40) as u32, h % modulus),
            combine,
            (u32::MAX, u64::MAX),
        )
        .run(&group);
    }
}

/// `Reduction::new` takes the defaults (Auto, root 0) and reduces correctly; accessors report the
/// configuration.
#[test]
fn new_uses_defaults() {
    let group = Reduction::<i64>::new(4, Op::Sum).expect("a valid group");
    assert_eq!(group.parties(), 4);
    assert_eq!(group.root(), 0);
    assert_eq!(group.algorithm(), ReduceAlgorithm::Auto);
    assert!(!group.is_broken());
    Plan::new(
        "new(4, Sum)".to_string(),
        &group,
        calls(4, 0),
        |h| h as i64,
        i64::wrapping_add,
        -7777,
    )
    .run(&group);
}

/// Many episodes on one group, with a random mix of modes and lengths (zero included), the same
/// sequence for everyone: results stay right and episodes keep counting, whatever came before.
#[test]
fn episodes_mix_modes_and_lengths() {
    const CALLS: usize = 60;
    for algorithm in ReduceAlgorithm::ALL {
        for (parties, root) in [(4, 1), (7, 0)] {
            let group = Reduction::<u64>::builder(parties)
                .op(Op::Xor)
                .algorithm(algorithm)
                .root(root)
                .build()
                .expect("a valid group");
            let calls = (0..CALLS as u64)
                .map(|call| {
                    let h = hash(&[0xE915, call]);
                    let mode = Mode::BOTH[(h % 2) as usize];
                    let len = [0, 1, 2, parties - 1, parties, parties + 1, 64, 257]
                        [(h >> 8) as usize % 8];
                    (mode, len)
                })
                .collect();
            let what = format!("random sequence, {algorithm}, {parties} parties, root {root}");
            Plan::new(what, &group, calls, |h| h, |a, b| a ^ b, 7777).run(&group);
        }
    }
}

/// Length 0 still synchronizes: an `allreduce` of nothing returns to nobody before everyone has
/// called it, and a `reduce` of nothing returns to the root only after everyone has called it.
#[test]
fn empty_calls_still_synchronize() {
    const ROUNDS: u64 = 50;
    for algorithm in ReduceAlgorithm::ALL {
        let parties = 5;
        let root = 2;
        let group = Reduction::<i32>::builder(parties)
            .op(Op::Sum)
            .algorithm(algorithm)
            .root(root)
            .build()
            .expect("a valid group");
        // counts[rank] = how many calls `rank` has started. Relaxed on purpose: the reduction's
        // own synchronization must order these stores before the checks.
        let counts: Arc<Vec<AtomicU64>> =
            Arc::new((0..parties).map(|_| AtomicU64::new(0)).collect());
        let what = format!("empty calls, {algorithm}");
        let name = what.clone();
        let checked = run_all(&what, &group, move |mut participant| {
            let rank = participant.rank();
            let mut checked = 0;
            for call in 0..2 * ROUNDS {
                let mode = Mode::BOTH[(call % 2) as usize];
                arrive_after(hash(&[0x5E7, rank as u64, call]));
                counts[rank].store(call + 1, Ordering::Relaxed);
                let outcome = mode
                    .call(&mut participant, &[], &mut [])
                    .unwrap_or_else(|error| panic!("{name}: rank {rank}, call {call}: {error}"));
                assert_eq!(outcome.episode(), call);
                if mode.has_result(rank, root) {
                    for (other, count) in counts.iter().enumerate() {
                        let seen = count.load(Ordering::Relaxed);
                        assert!(
                            seen > call,
                            "{name}: rank {rank} returned from {mode:?} call {call} before rank \
                             {other} started it (it had started {seen} calls)"
                        );
                    }
                    checked += 1;
                }
            }
            checked
        });
        // Every participant checked every allreduce, and the root every reduce too.
        assert_eq!(
            checked.iter().sum::<u64>(),
            parties as u64 * ROUNDS + ROUNDS
        );
    }
}

/// `inexact` inputs: the test below is only meaningful if the order of combination changes the
/// rounded result; this checks that it does for the inputs it uses.
fn order_matters<T: Sample>(inputs: &[Vec<T>]) -> bool {
    let forward = sequential(inputs, T::wrapping_add);
    let mut reversed = inputs.to_vec();
    reversed.reverse();
    let backward = sequential(&reversed, T::wrapping_add);
    forward
        .iter()
        .zip(&backward)
        .any(|(a, b)| a.bits() != b.bits())
}

/// Linear and StaticTree, and every algorithm with `.deterministic(true)`, give bit-identical
/// floating-point sums on every call and every participant, however the arrivals are ordered,
/// on inputs whose sum depends on the order of combination.
fn deterministic_floats<T: Sample>() {
    const REPEATS: u64 = 20;
    const LEN: usize = 37;
    let configs = [
        (ReduceAlgorithm::Linear, false),
        (ReduceAlgorithm::StaticTree, false),
    ]
    .into_iter()
    // Auto with `.deterministic(true)` has a test of its own below.
    .chain(
        ReduceAlgorithm::ALL
            .into_iter()
            .filter(|&algorithm| algorithm != ReduceAlgorithm::Auto)
            .map(|algorithm| (algorithm, true)),
    );
    for (algorithm, deterministic) in configs {
        for parties in [3, 5, 8] {
            let inputs: Vec<Vec<T>> = (0..parties as u64)
                .map(|rank| {
                    (0..LEN as u64)
                        .map(|i| T::inexact(hash(&[rank, i])))
                        .collect()
                })
                .collect();
            assert!(
                order_matters(&inputs),
                "the inputs must not be exactly summable"
            );
            let group = Reduction::<T>::builder(parties)
                .op(Op::Sum)
                .algorithm(algorithm)
                .deterministic(deterministic)
                .build()
                .expect("a valid group");
            let what = format!(
                "{} sum, {algorithm}, deterministic {deterministic}, {parties} parties",
                T::NAME
            );
            let mut expect = Expect::new(what.clone(), &group);
            expect.deterministic = deterministic;
            let shared = Arc::new(expect);
            let inputs = Arc::new(inputs);
            // Each participant returns the bits of every result it received.
            let results: Vec<Vec<Vec<u64>>> = run_all(&what, &group, move |mut participant| {
                let rank = participant.rank();
                let mut received = Vec::new();
                for call in 0..2 * REPEATS {
                    let mode = Mode::BOTH[(call % 2) as usize];
                    let what = format!("{}, call {call} ({mode:?}), rank {rank}", shared.what);
                    arrive_after(hash(&[0xD7, rank as u64, call]));
                    let mut output = vec![T::small(0); LEN];
                    let outcome = mode
                        .call(&mut participant, &inputs[rank], &mut output)
                        .unwrap_or_else(|error| panic!("{what}: {error}"));
                    let receives = mode.has_result(rank, shared.root);
                    shared.check_outcome(&what, &outcome, call as usize, receives);
                    if receives {
                        received.push(output.iter().map(|x| x.bits()).collect());
                    }
                }
                received
            });
            let reference = &results[0][0];
            for (rank, received) in results.iter().enumerate() {
                for (index, result) in received.iter().enumerate() {
                    assert!(
                        result == reference,
                        "{what}: rank {rank}'s result {index} differs in its bits from the first \
                         one: not reproducible"
                    );
                }
            }
            // The root received both modes' results, everyone else the allreduce ones.
            assert_eq!(results[0].len(), 2 * REPEATS as usize);
        }
    }
}

/// `Auto` with `.deterministic(true)` must give the same bits on every call too, even though it
/// may choose between `Linear` and `StaticTree`, whose orders differ. Four participants whose
/// one-element sum depends on the order: `(1e16 + 1) - 1e16 + 1` is 1 from left to right, but
/// `(1e16 + 1) + (-1e16 + 1)` is 0 in pairs.
#[test]
fn deterministic_auto_same_bits_every_call() {
    const CALLS: usize = 8;
    let group = Reduction::<f64>::builder(4)
        .op(Op::Sum)
        .algorithm(ReduceAlgorithm::Auto)
        .deterministic(true)
        .build()
        .expect("a valid group");
    let results = run_all("auto, deterministic", &group, |mut participant| {
        let input = [[1e16, 1.0, -1e16, 1.0][participant.rank()]];
        (0..CALLS)
            .map(|call| {
                let mut output = [f64::NAN];
                let outcome = participant
                    .allreduce(&input, &mut output)
                    .unwrap_or_else(|error| panic!("call {call}: {error}"));
                (outcome.algorithm(), output[0].to_bits())
            })
            .collect::<Vec<_>>()
    });
    for (rank, calls) in results.iter().enumerate() {
        let first = calls[0].1;
        for (call, &(algorithm, bits)) in calls.iter().enumerate() {
            assert_eq!(
                bits,
                first,
                "rank {rank}: call {call} ({algorithm}) gave {} where call 0 ({}) gave {}",
                f64::from_bits(bits),
                calls[0].0,
                f64::from_bits(first)
            );
        }
    }
}

#[test]
fn deterministic_f32() {
    deterministic_floats::<f32>();
}

#[test]
fn deterministic_f64() {
    deterministic_floats::<f64>();
}

/// Names, parsing (with the short aliases) and `Display` agree, and `ALL` lists each algorithm
/// once with `Auto` among them.
#[test]
fn algorithm_names_round_trip() {
    let names: Vec<&str> = ReduceAlgorithm::ALL.iter().map(|a| a.name()).collect();
    assert_eq!(
        names,
        [
            "linear",
            "static-tree",
            "dynamic-pairs",
            "dynamic-group",
            "auto"
        ]
    );
    for algorithm in ReduceAlgorithm::ALL {
        assert_eq!(algorithm.to_string(), algorithm.name());
        assert_eq!(
            algorithm.name().parse::<ReduceAlgorithm>().ok(),
            Some(algorithm)
        );
    }
    for (alias, algorithm) in [
        ("static", ReduceAlgorithm::StaticTree),
        ("dynamic", ReduceAlgorithm::DynamicPairs),
        ("group", ReduceAlgorithm::DynamicGroup),
    ] {
        assert_eq!(
            alias.parse::<ReduceAlgorithm>().ok(),
            Some(algorithm),
            "{alias}"
        );
    }
    assert!("no-such-algorithm".parse::<ReduceAlgorithm>().is_err());
}
