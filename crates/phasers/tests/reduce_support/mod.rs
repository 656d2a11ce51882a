//! Shared helpers for the array-reduction tests (`reduce_*.rs`): element types with the operators
//! the tests need, a sequential reference reduction, reproducible pseudo-random values and arrival
//! delays, and a runner that gives every participant its own thread and turns a hang into a test
//! failure instead of blocking CI.
//!
//! Each test binary includes this module with `mod reduce_support;` and uses only part of it, so
//! unused helpers are allowed.
#![allow(dead_code)]

use std::fmt::Debug;
use std::sync::Arc;

use phasers::{Element, Op, ReduceAlgorithm, Reducer, Reduction};

#[path = "../replay_support/mod.rs"]
mod replay_support;
#[path = "../watchdog_support/mod.rs"]
mod watchdog_support;

#[allow(unused_imports)] // each test binary uses part of the support module
pub use replay_support::{arrive_after, collect_values, hash};
#[allow(unused_imports)] // each test binary uses part of the support module
pub use watchdog_support::{payload_text, within, HANG};

/// Hands every participant of `group` not yet handed out to `body` on its own thread (named after
/// its rank), and returns each thread's outcome in rank order, panics included. Not protected
/// against hangs: call it inside [`within`], as [`run_all`] and [`run_each_within`] do.
pub fn run_each<T, R, F>(group: &Reduction<T>, body: F) -> Vec<(usize, std::thread::Result<R>)>
where
    T: Copy + Send + Sync + 'static,
    R: Send + 'static,
    F: Fn(Reducer<T>) -> R + Send + Sync + 'static,
{
    let body = Arc::new(body);
    let threads: Vec<_> = group
        .participants()
        .into_iter()
        .map(|participant| {
            let rank = participant.rank();
            let body = Arc::clone(&body);
            let thread = std::thread::Builder::new()
                .name(format!("rank {rank}"))
                .spawn(move || body(participant))
                .expect("spawn a participant thread");
            (rank, thread)
        })
        .collect();
    threads
        .into_iter()
        .map(|(rank, thread)| (rank, thread.join()))
        .collect()
}

/// [`run_each`] under the hang watchdog.
pub fn run_each_within<T, R, F>(
    what: &str,
    group: &Reduction<T>,
    body: F,
) -> Vec<(usize, std::thread::Result<R>)>
where
    T: Copy + Send + Sync + 'static,
    R: Send + 'static,
    F: Fn(Reducer<T>) -> R + Send + Sync + 'static,
{
    let group = group.clone();
    within(what, move || run_each(&group, body))
}

/// [`run_each_within`], where no participant may panic: returns what each returned, in rank order,
/// or fails with every participant's panic message (the first one is usually the cause, the others
/// its consequences, such as `Broken`).
pub fn run_all<T, R, F>(what: &str, group: &Reduction<T>, body: F) -> Vec<R>
where
    T: Copy + Send + Sync + 'static,
    R: Send + 'static,
    F: Fn(Reducer<T>) -> R + Send + Sync + 'static,
{
    collect_values(what, run_each_within(what, group, body))
}

/// Whether the call is a `reduce` (result at the root only) or an `allreduce` (result everywhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Reduce,
    Allreduce,
}

impl Mode {
    pub const BOTH: [Mode; 2] = [Mode::Reduce, Mode::Allreduce];

    /// Makes the call on `participant`.
    pub fn call<T: Copy + Send + Sync + 'static>(
        self,
        participant: &mut Reducer<T>,
        input: &[T],
        output: &mut [T],
    ) -> phasers::Result<phasers::ReduceOutcome> {
        match self {
            Mode::Reduce => participant.reduce(input, output),
            Mode::Allreduce => participant.allreduce(input, output),
        }
    }

    /// Whether `rank` receives the result in this mode, with `root` as the group's root.
    pub fn has_result(self, rank: usize, root: usize) -> bool {
        self == Mode::Allreduce || rank == root
    }
}

/// The element types the tests reduce: the six [`Element`] types, with what the tests need of them
/// that the library's sealed trait does not expose.
pub trait Sample: Element {
    const NAME: &'static str;
    const IS_INTEGER: bool;
    /// A value from `h`: any 64-bit pattern cut to the type for integers (wrapping arithmetic is
    /// exact whatever the order), a multiple of 1/4 in `-250..=250` for floats, so that sums of up
    /// to a few thousand of them, in any order, are exact.
    fn any(h: u64) -> Self;
    /// A factor for products: any value for integers (wrapping products are exact), one of
    /// +-1/4, +-1/2, +-1, +-2, +-4 for floats, so products of a few dozen are exact.
    fn factor(h: u64) -> Self;
    /// `0.1 * (1 + h % 1000)`: values whose sums round differently in different orders.
    fn inexact(h: u64) -> Self;
    fn small(x: i64) -> Self;
    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_mul(self, other: Self) -> Self;
    fn minimum(self, other: Self) -> Self;
    fn maximum(self, other: Self) -> Self;
    /// A bitwise op on the value's bits; integers only (the test matrix never asks a float).
    fn bit_op(self, other: Self, op: fn(u64, u64) -> u64) -> Self;
    fn from_u64(bits: u64) -> Self;
    /// The value's bit pattern, for bit-identical comparisons.
    fn bits(self) -> u64;
}

macro_rules! integer_sample {
    ($($t:ident),*) => {$(
        impl Sample for $t {
            const NAME: &'static str = stringify!($t);
            const IS_INTEGER: bool = true;
            fn any(h: u64) -> Self {
                h as $t
            }
            fn factor(h: u64) -> Self {
                h as $t
            }
            fn inexact(h: u64) -> Self {
                h as $t
            }
            fn small(x: i64) -> Self {
                x as $t
            }
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
            fn wrapping_mul(self, other: Self) -> Self {
                <$t>::wrapping_mul(self, other)
            }
            fn minimum(self, other: Self) -> Self {
                Ord::min(self, other)
            }
            fn maximum(self, other: Self) -> Self {
                Ord::max(self, other)
            }
            fn bit_op(self, other: Self, op: fn(u64, u64) -> u64) -> Self {
                op(self as u64, other as u64) as $t
            }
            fn from_u64(bits: u64) -> Self {
                bits as $t
            }
            fn bits(self) -> u64 {
                self as u64
            }
        }
    )*};
}

integer_sample!(i32, i64, u32, u64);

macro_rules! float_sample {
    ($($t:ident),*) => {$(
        impl Sample for $t {
            const NAME: &'static str = stringify!($t);
            const IS_INTEGER: bool = false;
            fn any(h: u64) -> Self {
                ((h % 2001) as i64 - 1000) as $t / 4.0
            }
            fn factor(h: u64) -> Self {
                const FACTORS: [$t; 10] = [0.25, -0.25, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0];
                FACTORS[(h % 10) as usize]
            }
            fn inexact(h: u64) -> Self {
                0.1 * (1 + h % 1000) as $t
            }
            fn small(x: i64) -> Self {
                x as $t
            }
            fn wrapping_add(self, other: Self) -> Self {
                self + other
            }
            fn wrapping_mul(self, other: Self) -> Self {
                self * other
            }
            fn minimum(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            fn maximum(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            fn bit_op(self, _: Self, _: fn(u64, u64) -> u64) -> Self {
                panic!("the test matrix applies bitwise ops to integers only")
            }
            fn from_u64(bits: u64) -> Self {
                <$t>::from_bits(bits as _)
            }
            fn bits(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
        }
    )*};
}

float_sample!(f32, f64);

/// The constant the custom operator adds per combination: `a + b + CUSTOM_STEP` is associative and
/// commutative with identity `-CUSTOM_STEP`, is not a built-in operator, and counts combinations,
/// so a value combined twice or an identity mishandled shows in the result.
pub const CUSTOM_STEP: i64 = 3;

/// The operators of the test matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sum,
    Product,
    Min,
    Max,
    And,
    Or,
    Xor,
    Custom,
}

impl Kind {
    /// The library's operator.
    pub fn op<T: Sample>(self) -> Op<T> {
        match self {
            Kind::Sum => Op::Sum,
            Kind::Product => Op::Product,
            Kind::Min => Op::Min,
            Kind::Max => Op::Max,
            Kind::And => Op::And,
            Kind::Or => Op::Or,
            Kind::Xor => Op::Xor,
            Kind::Custom => Op::custom(T::small(-CUSTOM_STEP), |a: T, b: T| {
                a.wrapping_add(b).wrapping_add(T::small(CUSTOM_STEP))
            }),
        }
    }

    /// The same operator, applied by the test.
    pub fn apply<T: Sample>(self, a: T, b: T) -> T {
        match self {
            Kind::Sum => a.wrapping_add(b),
            Kind::Product => a.wrapping_mul(b),
            Kind::Min => a.minimum(b),
            Kind::Max => a.maximum(b),
            Kind::And => a.bit_op(b, |x, y| x & y),
            Kind::Or => a.bit_op(b, |x, y| x | y),
            Kind::Xor => a.bit_op(b, |x, y| x ^ y),
            Kind::Custom => a.wrapping_add(b).wrapping_add(T::small(CUSTOM_STEP)),
        }
    }

    /// An input element for this operator, from `h`, chosen so the result is exact whatever the
    /// order of combination and says something: bits mostly set for `And` (else the result would be
    /// all zeros), mostly clear for `Or`, exact factors for floating-point products.
    pub fn value<T: Sample>(self, h: u64) -> T {
        match self {
            Kind::Product => T::factor(h),
            Kind::And => T::from_u64(!(h & (h >> 17) & (h >> 34))),
            Kind::Or => T::from_u64(h & (h >> 17) & (h >> 34)),
            _ => T::any(h),
        }
    }
}

/// The sequential reference: `combine` folded over the ranks' inputs element by element, in rank
/// order. Every input must have the same length.
pub fn sequential<T: Copy>(inputs: &[Vec<T>], combine: impl Fn(T, T) -> T) -> Vec<T> {
    let (first, rest) = inputs.split_first().expect("at least one participant");
    let mut result = first.clone();
    for input in rest {
        assert_eq!(
            input.len(),
            result.len(),
            "the reference needs equal lengths"
        );
        for (acc, &x) in result.iter_mut().zip(input) {
            *acc = combine(*acc, x);
        }
    }
    result
}

/// The first index where `got` and `expected` differ, described, or `None` if they are equal.
pub fn first_difference<T: PartialEq + Debug>(got: &[T], expected: &[T]) -> Option<String> {
    if got.len() != expected.len() {
        return Some(format!(
            "length {} instead of {}",
            got.len(),
            expected.len()
        ));
    }
    got.iter().zip(expected).position(|(g, e)| g != e).map(|i| {
        format!(
            "element {i} of {} is {:?} instead of {:?}",
            got.len(),
            got[i],
            expected[i]
        )
    })
}

/// Asserts that `got` equals `expected`, naming the first element that differs.
pub fn assert_same<T: PartialEq + Debug>(what: &str, got: &[T], expected: &[T]) {
    if let Some(difference) = first_difference(got, expected) {
        panic!("{what}: {difference}");
    }
}

/// The algorithms a group configured with `configured` may report running: that one, except that
/// `Auto` resolves to one of the concrete algorithms.
pub fn check_algorithm(what: &str, configured: ReduceAlgorithm, ran: ReduceAlgorithm) {
    assert_ne!(
        ran,
        ReduceAlgorithm::Auto,
        "{what}: the outcome must name the algorithm that ran, never Auto"
    );
    if configured != ReduceAlgorithm::Auto {
        assert_eq!(
            ran, configured,
            "{what}: ran another algorithm than configured"
        );
    }
}

/// What the tests need of any element, built-in or custom.
pub trait Item: Copy + PartialEq + Debug + Send + Sync + 'static {}

impl<T: Copy + PartialEq + Debug + Send + Sync + 'static> Item for T {}
