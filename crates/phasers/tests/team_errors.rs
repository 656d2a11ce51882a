//! Bad input to a team gets a typed error whose message says what was wrong, never a panic and
//! never a hang:
//!
//! - at construction: no members, too many (`InvalidArgument`);
//! - handing out a member twice, or a rank that does not exist;
//! - in a call: a root out of range, an output or input of the wrong length, `split_grid(0)`
//!   (`InvalidArgument`), on the member that passed it and on every other member of the call,
//!   blocking and non-blocking, in checked and unchecked teams;
//! - in a checked team, members that differ in the collective they call, its element type,
//!   length, root, operator or sync mode, or in the value of `barrier_checked`: every member gets
//!   the same `Mismatch`, naming both sides; in an unchecked team a length mismatch is at worst a
//!   `Mismatch` for some members;
//!
//! and after every such error the team is still usable: the next matching call gives the right
//! result. Every test runs its members under the watchdog (`team_support::within`), so a hang
//! fails the test after 20 seconds instead of blocking CI.
//!
//! The tests of usability after an error, and of the unchecked mismatch, are regression tests:
//! a failed call used to leave its readers counted (so the next call waited forever), and a
//! member used to skip releasing a partner whose post differed from its own.

mod team_support;

use std::sync::Arc;

use phasers::{Error, Member, Op, Pending, SyncMode, Team};
use team_support::run_all;

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
fn zero_members_is_invalid() {
    let message = invalid_message(Team::new(0), "Team::new(0)");
    assert_mentions("Team::new(0)", &message, &["0", "member"]);
    let message = invalid_message(Team::builder(0).build(), "builder(0)");
    assert_mentions("builder(0)", &message, &["0", "member"]);
}

#[test]
fn too_many_members_is_invalid() {
    for size in [65_536, usize::MAX] {
        let what = format!("Team::new({size})");
        let message = invalid_message(Team::new(size), &what);
        // Names the size asked for and the largest allowed.
        assert_mentions(&what, &message, &["65535", &size.to_string()]);
    }
}

#[test]
fn each_member_is_handed_out_once() {
    let team = Team::new(4).expect("a valid team");
    let second = team.participant(2).expect("rank 2, the first time");
    assert_eq!(second.rank(), 2);
    let message = invalid_message(team.participant(2), "rank 2 again");
    assert_mentions("rank 2 again", &message, &["2"]);
    let message = invalid_message(team.participant(4), "rank 4 of 4");
    assert_mentions("rank 4 of 4", &message, &["4"]);
    // `members` hands out the rest, in rank order, without the one already taken.
    let rest = team.participants();
    let ranks: Vec<usize> = rest.iter().map(Member::rank).collect();
    assert_eq!(ranks, [0, 1, 3]);
    assert!(team.participants().is_empty(), "nothing left to hand out");
    invalid_message(team.participant(0), "rank 0 after members()");
}

/// Team size of the call-error tests, and the member that passes the bad argument (a middle one,
/// so neither the first nor the last rank is special).
const SIZE: usize = 5;
const CULPRIT: usize = 3;

/// How a test makes a call: the blocking form, or the non-blocking form and `wait()` (an argument
/// error may come from either).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Blocking,
    NonBlocking,
}

/// A call whose arguments may be bad for some members: given the member and whether it is to pass
/// the bad argument, makes the call and returns its result.
type Call = Arc<dyn Fn(&mut Member, bool, Form) -> phasers::Result<()> + Send + Sync>;

/// A [`Call`] from a closure, whose argument types this gives it.
fn call_of(
    f: impl Fn(&mut Member, bool, Form) -> phasers::Result<()> + Send + Sync + 'static,
) -> Call {
    Arc::new(f)
}

/// Makes the same call through either form.
macro_rules! either {
    ($form:expr, $m:expr, $blocking:ident, $nonblocking:ident ($($arg:expr),*)) => {
        match $form {
            Form::Blocking => $m.$blocking($($arg),*),
            Form::NonBlocking => $m.$nonblocking($($arg),*).and_then(Pending::wait),
        }
    };
}

/// After an error, the team must still work: an allreduce of every member's rank + 1 gives the
/// right sum everywhere.
fn check_still_usable(what: &str, m: &mut Member) {
    let rank = m.rank();
    let size = m.parties() as u64;
    let mut output = [0u64; 3];
    m.allreduce(&[rank as u64 + 1; 3], &mut output, Op::Sum)
        .unwrap_or_else(|error| panic!("{what}: rank {rank}, the call after the error: {error}"));
    assert_eq!(
        output,
        [size * (size + 1) / 2; 3],
        "{what}: rank {rank}, the call after the error"
    );
}

/// A call with a bad argument: what it is, which members pass the bad argument, and words the
/// message they get must contain.
struct Invalid {
    what: String,
    culprits: Vec<usize>,
    needles: &'static [&'static str],
    call: Call,
}

impl Invalid {
    fn new(
        what: impl Into<String>,
        culprits: &[usize],
        needles: &'static [&'static str],
        call: Call,
    ) -> Self {
        Invalid {
            what: what.into(),
            culprits: culprits.to_vec(),
            needles,
            call,
        }
    }
}

/// Runs `invalid.call` on a team of [`SIZE`] (checked or not), with its culprits passing the bad
/// argument, in both forms; every member must get `InvalidArgument`: the culprits' messages
/// mentioning the needles, the others' naming the culprits and saying their own were valid. With `then_usable`, the team
/// must then still work.
fn check_invalid(invalid: &Invalid, then_usable: bool) {
    for checked in [false, true] {
        for form in [Form::Blocking, Form::NonBlocking] {
            let team = Team::builder(SIZE)
                .checked(checked)
                .build()
                .expect("a valid team");
            let what = format!("{}, checked {checked}, {form:?}", invalid.what);
            let name = what.clone();
            let culprits = invalid.culprits.clone();
            let needles = invalid.needles;
            let call = Arc::clone(&invalid.call);
            run_all(&what, team.participants(), move |mut m| {
                let rank = m.rank();
                let bad = culprits.contains(&rank);
                let here = format!("{name}: rank {rank}");
                let message = invalid_message(call(&mut m, bad, form), &here);
                if bad {
                    assert_mentions(&here, &message, needles);
                } else {
                    // Someone else's mistake: the message says whose, and that this member's
                    // own arguments were valid (issue 31).
                    let whose = match &culprits[..] {
                        [one] => format!("member {one}'s arguments were invalid"),
                        many => format!("the arguments of members {many:?} were invalid"),
                    };
                    let valid = format!("member {rank} (this one) were valid");
                    assert_mentions(&here, &message, &[&whose, &valid]);
                }
                if then_usable {
                    check_still_usable(&name, &mut m);
                }
            });
        }
    }
}

/// Every member passes the same root, equal to the size or far beyond it.
fn root_out_of_range_everywhere() -> Vec<Invalid> {
    let mut list = Vec::new();
    for root in [SIZE, 1000] {
        let needles: &'static [&'static str] = if root == SIZE {
            &["root", "5", "0 to 4"]
        } else {
            &["root", "1000", "0 to 4"]
        };
        let everyone: Vec<usize> = (0..SIZE).collect();
        list.push(Invalid::new(
            format!("broadcast from root {root}"),
            &everyone,
            needles,
            call_of(move |m, _, form| {
                let mut buf = [1u32; 4];
                either!(form, m, broadcast, ibroadcast(root, &mut buf))
            }),
        ));
        list.push(Invalid::new(
            format!("reduce to root {root}"),
            &everyone,
            needles,
            call_of(move |m, _, form| {
                let mut out = [0u64; 4];
                either!(
                    form,
                    m,
                    reduce,
                    ireduce(root, &[1u64; 4], &mut out, Op::Sum)
                )
            }),
        ));
        list.push(Invalid::new(
            format!("gather to root {root}"),
            &everyone,
            needles,
            call_of(move |m, _, form| {
                let mut out = vec![0i32; 4 * SIZE];
                either!(form, m, gather, igather(root, &[1i32; 4], &mut out))
            }),
        ));
        list.push(Invalid::new(
            format!("scatter from root {root}"),
            &everyone,
            needles,
            call_of(move |m, _, form| {
                let mut out = [0f64; 2];
                either!(form, m, scatter, iscatter(root, &[1.0; 2 * SIZE], &mut out))
            }),
        ));
        list.push(Invalid::new(
            format!("reduce_with to root {root}"),
            &everyone,
            needles,
            call_of(move |m, _, form| {
                let mut out = [0u8; 4];
                let f = |a: u8, b: u8| a.wrapping_add(b);
                either!(
                    form,
                    m,
                    reduce_with,
                    ireduce_with(root, &[1u8; 4], &mut out, f)
                )
            }),
        ));
    }
    list
}

/// The culprit names a root that does not exist; the others a valid one.
fn root_out_of_range_at_one_member() -> Vec<Invalid> {
    vec![
        Invalid::new(
            "broadcast, one member's root out of range",
            &[CULPRIT],
            &["root", "7", "0 to 4"],
            call_of(|m, bad, form| {
                let root = if bad { 7 } else { 1 };
                let mut buf = [1u32; 4];
                either!(form, m, broadcast, ibroadcast(root, &mut buf))
            }),
        ),
        Invalid::new(
            "gather, one member's root out of range",
            &[CULPRIT],
            &["root", "7", "0 to 4"],
            call_of(|m, bad, form| {
                let root = if bad { 7 } else { 0 };
                let mut out = if m.rank() == 0 {
                    vec![0u16; 3 * SIZE]
                } else {
                    Vec::new()
                };
                either!(form, m, gather, igather(root, &[1u16; 3], &mut out))
            }),
        ),
    ]
}

/// The culprit passes an input or output of the wrong length.
fn wrong_lengths() -> Vec<Invalid> {
    let culprit = &[CULPRIT];
    vec![
        Invalid::new(
            "allreduce, output one too long",
            culprit,
            &["output", "6", "5"],
            call_of(|m, bad, form| {
                let mut out = vec![0u64; if bad { 6 } else { 5 }];
                either!(
                    form,
                    m,
                    allreduce,
                    iallreduce(&[1u64; 5], &mut out, Op::Sum)
                )
            }),
        ),
        Invalid::new(
            "allreduce_with, output one too short",
            culprit,
            &["output", "4", "5"],
            call_of(|m, bad, form| {
                let mut out = vec![0i32; if bad { 4 } else { 5 }];
                let f = |a: i32, b: i32| a.wrapping_add(b);
                either!(
                    form,
                    m,
                    allreduce_with,
                    iallreduce_with(&[1i32; 5], &mut out, f)
                )
            }),
        ),
        Invalid::new(
            "reduce, the root's output too short",
            culprit,
            &["output", "2", "8"],
            call_of(|m, bad, form| {
                let mut out = if bad { vec![0u32; 2] } else { Vec::new() };
                either!(
                    form,
                    m,
                    reduce,
                    ireduce(CULPRIT, &[1u32; 8], &mut out, Op::Max)
                )
            }),
        ),
        Invalid::new(
            "gather, the root's output not size * input",
            culprit,
            &["output", "11", "10"],
            call_of(|m, bad, form| {
                let mut out = if bad { vec![0u64; 11] } else { Vec::new() };
                either!(form, m, gather, igather(CULPRIT, &[1u64; 2], &mut out))
            }),
        ),
        Invalid::new(
            "allgather, output not size * input",
            culprit,
            &["output", "9", "10"],
            call_of(|m, bad, form| {
                let mut out = vec![0u64; if bad { 9 } else { 2 * SIZE }];
                either!(form, m, allgather, iallgather(&[1u64; 2], &mut out))
            }),
        ),
        Invalid::new(
            "scatter, the root's input not size * output",
            culprit,
            &["input", "14", "15"],
            call_of(|m, bad, form| {
                let input = if bad { vec![1u64; 14] } else { Vec::new() };
                let mut out = [0u64; 3];
                either!(form, m, scatter, iscatter(CULPRIT, &input, &mut out))
            }),
        ),
        Invalid::new(
            "alltoall, input not a multiple of the size",
            culprit,
            &["input", "11", "multiple"],
            call_of(|m, bad, form| {
                let len = if bad { 11 } else { 2 * SIZE };
                let input = vec![1u64; len];
                let mut out = vec![0u64; len];
                either!(form, m, alltoall, ialltoall(&input, &mut out))
            }),
        ),
        Invalid::new(
            "alltoall, output a different length from the input",
            culprit,
            &["output", "15", "10"],
            call_of(|m, bad, form| {
                let input = vec![1u64; 2 * SIZE];
                let mut out = vec![0u64; if bad { 3 * SIZE } else { 2 * SIZE }];
                either!(form, m, alltoall, ialltoall(&input, &mut out))
            }),
        ),
        Invalid::new(
            "scan_inclusive, output one too long",
            culprit,
            &["output", "4", "3"],
            call_of(|m, bad, form| {
                let mut out = vec![0u64; if bad { 4 } else { 3 }];
                either!(
                    form,
                    m,
                    scan_inclusive,
                    iscan_inclusive(&[1u64; 3], &mut out, Op::Sum)
                )
            }),
        ),
        Invalid::new(
            "scan_exclusive_with, output one too short",
            culprit,
            &["output", "2", "3"],
            call_of(|m, bad, form| {
                let mut out = vec![0u64; if bad { 2 } else { 3 }];
                let f = |a: u64, b: u64| a ^ b;
                either!(
                    form,
                    m,
                    scan_exclusive_with,
                    iscan_exclusive_with(&[1u64; 3], &mut out, f)
                )
            }),
        ),
    ]
}

/// Every member, or one, asks for a grid of 0 columns. `split_grid` has no non-blocking form; the
/// loop over forms in [`check_invalid`] repeats it, which does no harm.
fn split_grid_zero_columns() -> Vec<Invalid> {
    let everyone: Vec<usize> = (0..SIZE).collect();
    let mut list = Vec::new();
    for culprits in [everyone, vec![CULPRIT]] {
        list.push(Invalid::new(
            format!("split_grid(0) at {culprits:?}"),
            &culprits,
            &["column", "0"],
            call_of(|m, bad, _| {
                let columns = if bad { 0 } else { 2 };
                m.split_grid(columns).map(drop)
            }),
        ));
    }
    list
}

#[test]
fn invalid_root_everywhere_reaches_every_member() {
    for invalid in root_out_of_range_everywhere() {
        check_invalid(&invalid, false);
    }
}

#[test]
fn invalid_root_at_one_member_reaches_every_member() {
    for invalid in root_out_of_range_at_one_member() {
        check_invalid(&invalid, false);
    }
}

#[test]
fn wrong_length_reaches_every_member() {
    for invalid in wrong_lengths() {
        check_invalid(&invalid, false);
    }
}

#[test]
fn split_grid_zero_columns_reaches_every_member() {
    for invalid in split_grid_zero_columns() {
        check_invalid(&invalid, false);
    }
}

/// After each of the invalid calls above, the team's next matching call works.
#[test]
fn team_is_usable_after_an_invalid_argument() {
    let all = [
        root_out_of_range_everywhere(),
        root_out_of_range_at_one_member(),
        wrong_lengths(),
        split_grid_zero_columns(),
    ];
    for invalid in all.iter().flatten() {
        check_invalid(invalid, true);
    }
}

/// One way members of a checked team can disagree: what the majority calls, what the deviant
/// calls, the `what` of the expected `Mismatch`, and words that the descriptions of the two sides
/// (`ours`/`theirs`) must contain.
struct Disagreement {
    what: &'static str,
    common: &'static str,
    deviant: &'static str,
    call: Call,
}

fn disagreements() -> Vec<Disagreement> {
    vec![
        Disagreement {
            what: "collective",
            common: "allreduce",
            deviant: "broadcast",
            call: call_of(|m, bad, form| {
                let mut buf = [0u64; 4];
                if bad {
                    either!(form, m, broadcast, ibroadcast(0, &mut buf))
                } else {
                    either!(
                        form,
                        m,
                        allreduce,
                        iallreduce(&[1u64; 4], &mut buf, Op::Sum)
                    )
                }
            }),
        },
        Disagreement {
            what: "type",
            common: "u64",
            deviant: "f64",
            call: call_of(|m, bad, form| {
                if bad {
                    let mut out = [0f64; 4];
                    either!(
                        form,
                        m,
                        allreduce,
                        iallreduce(&[1f64; 4], &mut out, Op::Sum)
                    )
                } else {
                    let mut out = [0u64; 4];
                    either!(
                        form,
                        m,
                        allreduce,
                        iallreduce(&[1u64; 4], &mut out, Op::Sum)
                    )
                }
            }),
        },
        Disagreement {
            what: "length",
            common: "13",
            deviant: "29",
            call: call_of(|m, bad, form| {
                let len = if bad { 29 } else { 13 };
                let input = vec![1u64; len];
                let mut out = vec![0u64; len];
                either!(form, m, allreduce, iallreduce(&input, &mut out, Op::Sum))
            }),
        },
        Disagreement {
            what: "root",
            common: "1",
            deviant: "4",
            call: call_of(|m, bad, form| {
                let mut buf = [7u64; 4];
                let root = if bad { 4 } else { 1 };
                either!(form, m, broadcast, ibroadcast(root, &mut buf))
            }),
        },
        Disagreement {
            what: "operation",
            common: "Sum",
            deviant: "Max",
            call: call_of(|m, bad, form| {
                let op = if bad { Op::Max } else { Op::Sum };
                let mut out = [0i32; 4];
                either!(form, m, allreduce, iallreduce(&[1i32; 4], &mut out, op))
            }),
        },
        Disagreement {
            what: "sync mode",
            common: "AllSync",
            deviant: "NoSync",
            call: call_of(|m, bad, form| {
                m.set_sync_mode(if bad {
                    SyncMode::NoSync
                } else {
                    SyncMode::AllSync
                });
                let mut out = [0u64; 4];
                let result = either!(
                    form,
                    m,
                    allreduce,
                    iallreduce(&[1u64; 4], &mut out, Op::Sum)
                );
                // Back to the same mode for the next call.
                m.set_sync_mode(SyncMode::AllSync);
                result
            }),
        },
        Disagreement {
            what: "barrier value",
            common: "1234",
            deviant: "5678",
            call: call_of(|m, bad, form| {
                let value = if bad { 5678 } else { 1234 };
                either!(form, m, barrier_checked, ibarrier_checked(value))
            }),
        },
    ]
}

/// In a checked team, one member (`deviant`) disagrees with the others: every member gets the
/// same `Mismatch` of the expected kind, whose two sides are the deviant and another member, each
/// described by what it passed, and whose message says all of it. With `then_usable`, the team's
/// next matching call must work.
fn check_mismatch(disagreement: &Disagreement, deviant: usize, form: Form, then_usable: bool) {
    let team = Team::builder(SIZE)
        .checked(true)
        .build()
        .expect("a valid team");
    assert!(team.is_checked());
    let what = format!(
        "{} mismatch, rank {deviant} deviates, {form:?}",
        disagreement.what
    );
    let name = what.clone();
    let call = Arc::clone(&disagreement.call);
    let errors = run_all(&what, team.participants(), move |mut m| {
        let rank = m.rank();
        assert!(m.is_checked());
        let result = call(&mut m, rank == deviant, form);
        if then_usable {
            check_still_usable(&name, &mut m);
        }
        result
    });
    let first = errors[0].clone();
    for (rank, error) in errors.iter().enumerate() {
        assert_eq!(
            error, &first,
            "{what}: rank {rank}'s error differs from rank 0's"
        );
    }
    let message = match &first {
        Err(error) => error.to_string(),
        Ok(()) => panic!("{what}: every member got Ok"),
    };
    let Err(Error::Mismatch {
        what: field,
        rank,
        ours,
        other,
        theirs,
    }) = &first
    else {
        panic!("{what}: expected Mismatch, got {first:?}");
    };
    // The field names what differs by a key word; the library may qualify it ("element type").
    assert!(
        field.contains(disagreement.what),
        "{what}: the mismatch should be about {:?}: {first:?}",
        disagreement.what
    );
    assert!(
        *rank < SIZE && *other < SIZE && rank != other,
        "{what}: the two sides must be two members: {first:?}"
    );
    // Only the deviant differs from anyone, so it is one of the two sides.
    let (deviant_side, common_side) = if *rank == deviant {
        (ours, theirs)
    } else {
        assert_eq!(
            *other, deviant,
            "{what}: neither side is the deviant: {first:?}"
        );
        (theirs, ours)
    };
    assert_mentions(&what, deviant_side, &[disagreement.deviant]);
    assert_mentions(&what, common_side, &[disagreement.common]);
    assert_mentions(
        &what,
        &message,
        &[
            disagreement.what,
            disagreement.common,
            disagreement.deviant,
            &rank.to_string(),
            &other.to_string(),
        ],
    );
}

#[test]
fn checked_mode_reports_every_mismatch_to_every_member() {
    for disagreement in disagreements() {
        for deviant in [0, CULPRIT] {
            for form in [Form::Blocking, Form::NonBlocking] {
                check_mismatch(&disagreement, deviant, form, false);
            }
        }
    }
}

/// After each of the mismatches above, the team's next matching call works.
#[test]
fn team_is_usable_after_a_mismatch() {
    for disagreement in disagreements() {
        for deviant in [0, CULPRIT] {
            for form in [Form::Blocking, Form::NonBlocking] {
                check_mismatch(&disagreement, deviant, form, true);
            }
        }
    }
}

/// The same team goes through several mismatches and matching calls in a row, with different
/// deviants: each mismatch is reported and each matching call after it works.
#[test]
fn checked_team_survives_a_series_of_mismatches() {
    let team = Team::builder(SIZE)
        .checked(true)
        .build()
        .expect("a valid team");
    let calls: Vec<(&'static str, Call)> = disagreements()
        .into_iter()
        .map(|d| (d.what, d.call))
        .collect();
    let calls = Arc::new(calls);
    run_all("a series", team.participants(), move |mut m| {
        let rank = m.rank();
        for (index, (what, call)) in calls.iter().enumerate() {
            let deviant = index % SIZE;
            match call(&mut m, rank == deviant, Form::Blocking) {
                Err(Error::Mismatch { what: field, .. }) => {
                    assert!(
                        field.contains(what),
                        "rank {rank}, call {index}: {field} for {what}"
                    )
                }
                other => {
                    panic!("rank {rank}, call {index} ({what}): expected Mismatch, got {other:?}")
                }
            }
            check_still_usable(what, &mut m);
        }
    });
}

/// Without checking, a length mismatch is memory-safe and does not hang: each member gets `Ok`
/// (with unspecified output) or `Mismatch`, and the team still works afterwards.
#[test]
fn unchecked_length_mismatch_is_safe() {
    for deviant in [0, CULPRIT] {
        for (common, odd) in [(13, 29), (29, 13), (8, 0)] {
            let team = Team::builder(SIZE)
                .checked(false)
                .build()
                .expect("a valid team");
            assert!(!team.is_checked());
            let what = format!("unchecked, rank {deviant} passes {odd} instead of {common}");
            let name = what.clone();
            run_all(&what, team.participants(), move |mut m| {
                let rank = m.rank();
                let len = if rank == deviant { odd } else { common };
                let input = vec![1u64; len];
                let mut out = vec![0u64; len];
                let result = m.allreduce(&input, &mut out, Op::Sum);
                assert!(
                    matches!(result, Ok(()) | Err(Error::Mismatch { .. })),
                    "{name}: rank {rank} got {result:?}"
                );
                check_still_usable(&name, &mut m);
            });
        }
    }
}
