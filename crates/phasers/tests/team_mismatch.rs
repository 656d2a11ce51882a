//! Issue 18's promise for teams built with the defaults, in release builds as in debug (CI runs
//! this file with `--release` too): mismatched collectives return `Error::Mismatch` on every
//! member, naming both sides, instead of hanging. The cases are the ones a new user hit:
//! allreduce lengths 2 and 102, or 8 and 9; broadcast against allreduce of the same length;
//! broadcast lengths 2 and 200; and a blocking allreduce against a non-blocking one. Each runs at 2
//! and 8 members, with the odd member first and last, and the team must work afterwards.

mod team_support;

use std::sync::Arc;

use phasers::{Error, Member, Op, Team};
use team_support::run_all;

/// One member's side of a mismatch: what it calls, given whether it is the odd one.
type Side = Arc<dyn Fn(&mut Member, bool) -> phasers::Result<()> + Send + Sync>;

struct Case {
    name: &'static str,
    /// A word the error's description of the common side must contain, and of the odd side.
    common: &'static str,
    odd: &'static str,
    call: Side,
}

fn allreduce(m: &mut Member, len: usize) -> phasers::Result<()> {
    let input = vec![1u64; len];
    let mut output = vec![0u64; len];
    m.allreduce(&input, &mut output, Op::Sum)
}

fn broadcast(m: &mut Member, len: usize) -> phasers::Result<()> {
    let mut buffer = vec![7u64; len];
    m.broadcast(0, &mut buffer)
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "allreduce lengths 2 and 102",
            common: "2",
            odd: "102",
            call: Arc::new(|m, odd| allreduce(m, if odd { 102 } else { 2 })),
        },
        Case {
            name: "allreduce lengths 8 and 9",
            common: "8",
            odd: "9",
            call: Arc::new(|m, odd| allreduce(m, if odd { 9 } else { 8 })),
        },
        Case {
            name: "broadcast against allreduce",
            common: "allreduce",
            odd: "broadcast",
            call: Arc::new(|m, odd| {
                if odd {
                    broadcast(m, 8)
                } else {
                    allreduce(m, 8)
                }
            }),
        },
        Case {
            name: "broadcast lengths 2 and 200",
            common: "2",
            odd: "200",
            call: Arc::new(|m, odd| broadcast(m, if odd { 200 } else { 2 })),
        },
        Case {
            name: "allreduce against iallreduce",
            common: "blocking",
            odd: "non-blocking",
            call: Arc::new(|m, odd| {
                let input = [1u64, 2];
                let mut output = [0u64; 2];
                if odd {
                    m.iallreduce(&input, &mut output, Op::Sum)?.wait()
                } else {
                    m.allreduce(&input, &mut output, Op::Sum)
                }
            }),
        },
    ]
}

/// After a mismatch, a barrier and an allreduce still work.
fn still_usable(m: &mut Member) {
    m.barrier().expect("a barrier after the mismatch");
    let mut sum = [0u64];
    m.allreduce(&[1], &mut sum, Op::Sum)
        .expect("an allreduce after the mismatch");
    assert_eq!(sum[0], m.parties() as u64);
}

fn check(case: &Case, size: usize, odd_rank: usize) {
    let team = Team::new(size).expect("a team");
    assert!(team.is_checked(), "teams are checked by default");
    let what = format!("{}, {size} members, rank {odd_rank} odd", case.name);
    let call = Arc::clone(&case.call);
    let results = run_all(&what, team.participants(), move |mut m| {
        let odd = m.rank() == odd_rank;
        let result = call(&mut m, odd);
        still_usable(&mut m);
        result
    });
    let first = &results[0];
    for (rank, result) in results.iter().enumerate() {
        assert_eq!(result, first, "{what}: rank {rank} differs from rank 0");
    }
    let Err(Error::Mismatch {
        rank,
        ours,
        other,
        theirs,
        ..
    }) = first
    else {
        panic!("{what}: expected Mismatch on every member, got {first:?}");
    };
    assert_ne!(rank, other, "{what}: {first:?}");
    let (odd_side, common_side) = if *rank == odd_rank {
        (ours, theirs)
    } else {
        assert_eq!(*other, odd_rank, "{what}: neither side is the odd member");
        (theirs, ours)
    };
    assert!(odd_side.contains(case.odd), "{what}: {first:?}");
    assert!(common_side.contains(case.common), "{what}: {first:?}");
    let message = first.as_ref().unwrap_err().to_string();
    assert!(!message.contains("bug"), "{what}: {message}");
}

#[test]
fn mismatches_return_mismatch_on_every_member_at_two() {
    for case in cases() {
        for odd in [0, 1] {
            check(&case, 2, odd);
        }
    }
}

#[test]
fn mismatches_return_mismatch_on_every_member_at_eight() {
    for case in cases() {
        for odd in [0, 7] {
            check(&case, 8, odd);
        }
    }
}

/// An unchecked team gives up naming the difference, but an allreduce against an iallreduce of
/// the same small length still completes on both, with the right sums and no error text that
/// blames the library.
#[test]
fn unchecked_blocking_against_nonblocking_completes() {
    let team = Team::builder(2).unchecked().build().expect("a team");
    let results = run_all(
        "unchecked allreduce/iallreduce",
        team.participants(),
        |mut m| {
            let input = [1u64, 2];
            let mut output = [0u64; 2];
            let result = if m.rank() == 1 {
                m.iallreduce(&input, &mut output, Op::Sum)
                    .and_then(|pending| pending.wait())
            } else {
                m.allreduce(&input, &mut output, Op::Sum)
            };
            result.map(|()| output)
        },
    );
    for result in results {
        assert_eq!(result, Ok([2, 4]));
    }
}
