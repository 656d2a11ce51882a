//! Bad input to an array reduction gets a typed error whose message says what was wrong, never a
//! panic and never a hang:
//!
//! - at construction: no participants, too many, a root out of range, a bitwise operator on a
//!   floating-point type, a builder without an operator (`InvalidArgument`);
//! - handing out a rank's handle twice, or a rank that does not exist.
//!
//! Calls whose participants disagree (lengths, `reduce` against `allreduce`, an output of the
//! wrong length) are tested in `reduce_mismatch.rs`.

use phasers::{Error, Op, ReduceAlgorithm, Reduction};

/// The message of an `InvalidArgument`, or a panic naming what came instead.
fn invalid_message<T: std::fmt::Debug>(result: phasers::Result<T>, what: &str) -> String {
    match result {
        Err(Error::InvalidArgument { message }) => message,
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

/// Asserts that `message` mentions every one of `needles`.
fn assert_mentions(what: &str, message: &str, needles: &[&str]) {
    for needle in needles {
        assert!(
            message.contains(needle),
            "{what}: the message should mention {needle:?}: {message}"
        );
    }
}

#[test]
fn zero_participants_is_invalid() {
    let message = invalid_message(Reduction::<i32>::new(0, Op::Sum), "new(0)");
    assert_mentions("new(0)", &message, &["at least 1"]);
    for algorithm in ReduceAlgorithm::ALL {
        let message = invalid_message(
            Reduction::<f64>::builder(0)
                .op(Op::Sum)
                .algorithm(algorithm)
                .build(),
            "builder(0)",
        );
        assert_mentions("builder(0)", &message, &["at least 1"]);
    }
    let message = invalid_message(
        Reduction::with_fn(0, |a: (u8, u8), b| (a.0 | b.0, a.1 & b.1)),
        "with_fn(0)",
    );
    assert_mentions("with_fn(0)", &message, &["at least 1"]);
}

#[test]
fn too_many_participants_is_invalid() {
    // 65535 is the largest group; one more is refused before anything is allocated for it.
    for parties in [65_536, usize::MAX] {
        let message = invalid_message(Reduction::<u64>::new(parties, Op::Sum), "too many");
        assert_mentions("too many", &message, &["65535", &parties.to_string()]);
    }
}

#[test]
fn root_out_of_range_is_invalid() {
    for (parties, root) in [(1, 1), (4, 4), (4, 1000)] {
        let what = format!("root {root} of {parties}");
        let message = invalid_message(
            Reduction::<i64>::builder(parties)
                .op(Op::Max)
                .root(root)
                .build(),
            &what,
        );
        // Names the root asked for and the participant count it must stay below.
        assert_mentions(&what, &message, &[&root.to_string(), &parties.to_string()]);
    }
}

#[test]
fn bitwise_ops_on_floats_are_invalid() {
    fn check<T: phasers::Element>(op: fn() -> Op<T>, name: &str) {
        let what = format!("Op::{name} on {}", std::any::type_name::<T>());
        let message = invalid_message(Reduction::<T>::new(3, op()), &what);
        assert_mentions(&what, &message, &[name, std::any::type_name::<T>()]);
        let message = invalid_message(
            Reduction::<T>::builder(3)
                .op(op())
                .algorithm(ReduceAlgorithm::DynamicPairs)
                .build(),
            &what,
        );
        assert_mentions(&what, &message, &[name]);
    }
    check::<f32>(|| Op::And, "And");
    check::<f32>(|| Op::Or, "Or");
    check::<f32>(|| Op::Xor, "Xor");
    check::<f64>(|| Op::And, "And");
    check::<f64>(|| Op::Or, "Or");
    check::<f64>(|| Op::Xor, "Xor");
    // The same operators on integers are fine, so the refusal really is about the type.
    assert!(Reduction::<u32>::new(3, Op::Xor).is_ok());
}

#[test]
fn builder_without_op_is_invalid() {
    for algorithm in ReduceAlgorithm::ALL {
        let message = invalid_message(
            Reduction::<i32>::builder(2).algorithm(algorithm).build(),
            "no op",
        );
        // Says how to give one.
        assert_mentions("no op", &message, &["op"]);
    }
}

#[test]
fn each_handle_is_handed_out_once() {
    let group = Reduction::<i32>::new(4, Op::Sum).expect("a valid group");
    let second = group.participant(2).expect("rank 2, the first time");
    assert_eq!(second.rank(), 2);
    let message = invalid_message(group.participant(2), "rank 2 again");
    assert_mentions("rank 2 again", &message, &["2"]);
    let message = invalid_message(group.participant(4), "rank 4 of 4");
    assert_mentions("rank 4 of 4", &message, &["4"]);
    // `participants` hands out the rest, in rank order, without the one already taken.
    let rest = group.participants();
    let ranks: Vec<usize> = rest.iter().map(|p| p.rank()).collect();
    assert_eq!(ranks, [0, 1, 3]);
    assert!(group.participants().is_empty(), "nothing left to hand out");
    invalid_message(group.participant(0), "rank 0 after participants()");
    // Handing out is not breaking: the handles hold no call yet.
    assert!(!group.is_broken());
}
