//! Every accumulator operator on every element type, on a flat phaser and on a tree: after each
//! phase `result()` is the operator folded over every value sent in that phase (several per task),
//! and before the first phase it is the operator's identity. Bitwise operators on floats are
//! refused; custom operators work like the built-in ones.

mod phaser_support;

use phaser_support::Watchdog;
use phasers::{Accumulator, Element, Error, Mode, Op, Phaser, Registration};

const PHASES: u64 = 4;
const SENDS: usize = 3;

/// The shapes every operator runs on, with the number of tasks: a flat phaser, and a tree whose
/// leaves hold partial results that combine up two levels.
const SHAPES: [(usize, usize, usize); 3] = [(1, 16, 4), (2, 2, 6), (3, 2, 7)];

/// A value a task sends, spread over `0..50`, different for each task, phase and send.
fn spread(task: usize, phase: u64, send: usize) -> i64 {
    ((task * 31 + phase as usize * 7 + send * 13) % 50) as i64
}

/// A small factor (1 to 3), so that products of every value of a phase fit in 32 bits.
fn factor(task: usize, phase: u64, send: usize) -> i64 {
    ((task + phase as usize * 2 + send) % 3 + 1) as i64
}

/// Runs [`PHASES`] phases of `tasks` tasks that each send [`SENDS`] values (`value(task, phase,
/// send)`) per phase, and checks `result()` after each phase against `fold` over the phase's values
/// from `identity`, and before the first phase against `identity` where `check_identity`.
fn check<T: Element>(
    shape: (usize, usize, usize),
    op: Op<T>,
    identity: T,
    check_identity: bool,
    value: fn(usize, u64, usize) -> T,
    fold: fn(T, T) -> T,
) {
    let (tiers, degree, tasks) = shape;
    let what = format!(
        "{}, tiers {tiers}, degree {degree}",
        std::any::type_name::<T>()
    );
    let (phaser, creator) = Phaser::builder()
        .tiers(tiers)
        .degree(degree)
        .build()
        .expect("a valid phaser");
    let acc = Accumulator::new(&phaser, op).unwrap_or_else(|e| panic!("{what}: {e}"));
    if check_identity {
        assert_eq!(
            acc.result(),
            identity,
            "{what}: the identity before any phase"
        );
    }
    let expected: Vec<T> = (0..PHASES)
        .map(|phase| {
            (0..tasks)
                .flat_map(|task| (0..SENDS).map(move |send| value(task, phase, send)))
                .fold(identity, fold)
        })
        .collect();
    let mut regs: Vec<Registration> = (1..tasks)
        .map(|_| creator.register(Mode::SigWait).expect("a child"))
        .collect();
    regs.insert(0, creator);
    let watchdog = Watchdog::new(&what, &phaser);
    std::thread::scope(|s| {
        for (task, mut reg) in regs.into_iter().enumerate() {
            let (acc, expected, what, watchdog) = (&acc, &expected, &what, &watchdog);
            s.spawn(move || {
                for phase in 0..PHASES {
                    for send in 0..SENDS {
                        acc.send(&mut reg, value(task, phase, send))
                            .unwrap_or_else(|e| panic!("{what}: send: {e}"));
                    }
                    let done = reg
                        .next()
                        .unwrap_or_else(|e| panic!("{}", watchdog.explain(what, &e)));
                    assert_eq!(done, phase, "{what}");
                    // This task has not signalled the next phase: this one is the latest completed.
                    assert_eq!(
                        acc.result(),
                        expected[phase as usize],
                        "{what}: task {task} after phase {phase}"
                    );
                }
            });
        }
    });
}

fn on_every_shape<T: Element>(
    op: fn() -> Op<T>,
    identity: T,
    check_identity: bool,
    value: fn(usize, u64, usize) -> T,
    fold: fn(T, T) -> T,
) {
    for shape in SHAPES {
        check(shape, op(), identity, check_identity, value, fold);
    }
}

/// One module per integer type, one test per operator. `$offset` shifts the values below zero for
/// the signed types.
macro_rules! integer_ops {
    ($($module:ident: $t:ty, offset $offset:expr;)+) => {$(
        mod $module {
            use super::*;

            fn value(task: usize, phase: u64, send: usize) -> $t {
                (spread(task, phase, send) - $offset) as $t
            }

            fn small(task: usize, phase: u64, send: usize) -> $t {
                factor(task, phase, send) as $t
            }

            #[test]
            fn sum() {
                on_every_shape(|| Op::Sum, 0, true, value, |a: $t, b| a.wrapping_add(b));
            }

            #[test]
            fn product() {
                on_every_shape(|| Op::Product, 1, true, small, |a: $t, b| a.wrapping_mul(b));
            }

            #[test]
            fn min() {
                on_every_shape(|| Op::Min, <$t>::MAX, true, value, |a: $t, b| Ord::min(a, b));
            }

            #[test]
            fn max() {
                on_every_shape(|| Op::Max, <$t>::MIN, true, value, |a: $t, b| Ord::max(a, b));
            }

            #[test]
            fn and() {
                // Values with many bits set, so that the result is neither all ones nor zero.
                let dense = |t: usize, p: u64, s: usize| !(1 << (spread(t, p, s) % 7)) as $t;
                on_every_shape(|| Op::And, !0, true, dense, |a: $t, b| a & b);
            }

            #[test]
            fn or() {
                on_every_shape(|| Op::Or, 0, true, value, |a: $t, b| a | b);
            }

            #[test]
            fn xor() {
                on_every_shape(|| Op::Xor, 0, true, value, |a: $t, b| a ^ b);
            }

            /// Overflowing sums and products wrap, like the integer type does.
            #[test]
            fn sums_and_products_wrap() {
                let huge = |t: usize, _: u64, s: usize| {
                    if (t + s) % 2 == 0 { <$t>::MAX } else { 3 as $t }
                };
                on_every_shape(|| Op::Sum, 0, true, huge, |a: $t, b| a.wrapping_add(b));
                on_every_shape(|| Op::Product, 1, true, huge, |a: $t, b| a.wrapping_mul(b));
            }

            /// The extremes of the type survive the trip through the phaser.
            #[test]
            fn min_and_max_of_the_extremes() {
                let extreme = |t: usize, p: u64, s: usize| match (t + p as usize + s) % 3 {
                    0 => <$t>::MIN,
                    1 => <$t>::MAX,
                    _ => 0 as $t,
                };
                on_every_shape(|| Op::Min, <$t>::MAX, true, extreme, |a: $t, b| Ord::min(a, b));
                on_every_shape(|| Op::Max, <$t>::MIN, true, extreme, |a: $t, b| Ord::max(a, b));
            }
        }
    )+};
}

integer_ops! {
    i32_ops: i32, offset 25;
    i64_ops: i64, offset 25;
    u32_ops: u32, offset 0;
    u64_ops: u64, offset 0;
}

/// One module per float type. The values are small integers and halves, so every sum and product
/// is exact whatever the order in which the tasks' partials combine.
macro_rules! float_ops {
    ($($module:ident: $t:ty;)+) => {$(
        mod $module {
            use super::*;

            fn value(task: usize, phase: u64, send: usize) -> $t {
                (spread(task, phase, send) - 25) as $t / 2.0
            }

            fn small(task: usize, phase: u64, send: usize) -> $t {
                factor(task, phase, send) as $t
            }

            #[test]
            fn sum() {
                on_every_shape(|| Op::Sum, 0.0, true, value, |a: $t, b| a + b);
            }

            #[test]
            fn product() {
                on_every_shape(|| Op::Product, 1.0, true, small, |a: $t, b| a * b);
            }

            /// The identity of Min and Max on floats may be the infinities or the finite extremes;
            /// either way no value sent can beat it.
            #[test]
            fn min() {
                let (phaser, _creator) = Phaser::new(Mode::SigWait).expect("a phaser");
                let acc = Accumulator::<$t>::new(&phaser, Op::Min).expect("Min");
                assert!(acc.result() >= <$t>::MAX, "identity {}", acc.result());
                on_every_shape(|| Op::Min, <$t>::INFINITY, false, value, |a: $t, b| <$t>::min(a, b));
            }

            #[test]
            fn max() {
                let (phaser, _creator) = Phaser::new(Mode::SigWait).expect("a phaser");
                let acc = Accumulator::<$t>::new(&phaser, Op::Max).expect("Max");
                assert!(acc.result() <= <$t>::MIN, "identity {}", acc.result());
                on_every_shape(|| Op::Max, <$t>::NEG_INFINITY, false, value, |a: $t, b| <$t>::max(a, b));
            }

            #[test]
            fn bitwise_operators_are_refused() {
                let (phaser, _creator) = Phaser::new(Mode::SigWait).expect("a phaser");
                let ops: [(&str, fn() -> Op<$t>); 3] =
                    [("And", || Op::And), ("Or", || Op::Or), ("Xor", || Op::Xor)];
                for (name, op) in ops {
                    for reproducible in [false, true] {
                        let result = if reproducible {
                            Accumulator::<$t>::reproducible(&phaser, op())
                        } else {
                            Accumulator::<$t>::new(&phaser, op())
                        };
                        match result {
                            Err(Error::InvalidArgument { .. }) => {}
                            Err(other) => panic!("{name}: expected InvalidArgument, got {other:?}"),
                            Ok(_) => panic!("{name} on a float type must be refused"),
                        }
                    }
                }
            }
        }
    )+};
}

float_ops! {
    f32_ops: f32;
    f64_ops: f64;
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A custom operator: greatest common divisor, whose identity is 0. The values are multiples of 6
/// (and of 12 in even phases), so the result says whether every value was folded in.
#[test]
fn custom_gcd() {
    let multiple = |t: usize, p: u64, s: usize| {
        let base = if p % 2 == 0 { 12 } else { 6 };
        base * (spread(t, p, s) as u64 + 1)
    };
    on_every_shape(|| Op::custom(0, gcd), 0, true, multiple, gcd);
}

/// A custom operator on floats: the largest magnitude.
#[test]
fn custom_largest_magnitude() {
    fn largest(a: f64, b: f64) -> f64 {
        a.abs().max(b.abs())
    }
    let value = |t: usize, p: u64, s: usize| (spread(t, p, s) - 25) as f64;
    on_every_shape(|| Op::custom(0.0, largest), 0.0, true, value, largest);
}
