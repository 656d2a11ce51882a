//! Issue 31's audit: errors made through the C entry points, as a C program makes them, read back
//! with `phasers_last_error`, must name only what a C programmer has (the header's functions,
//! constants and types), never a Rust-only item.
//!
//! It lives in the library's unit tests rather than in `tests/` because the library is built as a
//! cdylib and a staticlib only, with no rlib that an integration test could call; the functions
//! called here are the exported ones, unchanged.

use std::ffi::{c_int, c_void, CStr};
use std::ptr::null_mut;

use crate::accumulator::{
    phasers_accumulator_create, phasers_accumulator_destroy, phasers_accumulator_send_f64,
    phasers_accumulator_send_i64, AccumulatorHandle,
};
use crate::barrier::{
    phasers_barrier_create, phasers_barrier_destroy, phasers_barrier_timedwait,
    phasers_barrier_wait, BarrierHandle,
};
use crate::collectives::{phasers_member_allreduce, phasers_member_barrier};
use crate::last_error::phasers_last_error;
use crate::phaser::{
    phasers_phaser_create, phasers_phaser_create_tree, phasers_phaser_destroy,
    phasers_phaser_terminate, PhaserHandle,
};
use crate::reduction::{
    phasers_reduction_allreduce, phasers_reduction_create, phasers_reduction_destroy,
    phasers_reduction_reduce, ReductionHandle,
};
use crate::registration::{
    phasers_registration_drop, phasers_registration_next, phasers_registration_next_timeout,
    phasers_registration_register, phasers_registration_signal, phasers_registration_wait,
    RegistrationHandle,
};
use crate::request::{
    phasers_member_iallreduce, phasers_member_ibarrier, phasers_request_timedwait,
    phasers_request_wait, RequestHandle,
};
use crate::status::*;
use crate::team::{
    phasers_member_destroy, phasers_team_create, phasers_team_destroy, phasers_team_member,
    MemberHandle, TeamHandle,
};

/// Text that names a Rust-only item: a type, a method, a path, a Rust spelling.
const FORBIDDEN_TEXT: &[&str] = &[
    "Participant",
    "Registration",
    "Pending",
    "Member",
    "TeamBuilder",
    "Reduction",
    "AnyThreadBarrier",
    "Barrier",
    "Phaser",
    "Error::",
    "WaitPolicy",
    ".unchecked",
    "::unchecked",
    "participants()",
    "wait_timeout",
    "next_timeout",
    "register_many",
    "next_single",
    "()",
    "Op::",
    "Mode::",
    "Algorithm::",
    "phasers::",
    "std::",
    "force_terminate",
    "on_advance",
    "Break",
    "AllSync",
    "MySync",
    "NoSync",
    "split_grid",
    "barrier_checked",
    "`",
    "builder",
];

/// Words that are Rust spellings when they stand alone (`i32` is Rust's, the suffix of
/// `phasers_accumulator_send_i32` is C's).
const FORBIDDEN_WORDS: &[&str] = &[
    "i32",
    "i64",
    "u32",
    "u64",
    "f32",
    "f64",
    "Sig",
    "Wait",
    "SigWait",
    "SigWaitSingle",
    "Sum",
    "Product",
    "Min",
    "Max",
    "And",
    "Or",
    "Xor",
    "Custom",
    "usize",
];

// The header's constants (`header_values` checks that they match the header).
const ALGORITHM_AUTO: c_int = 0;
const MODE_SIG: c_int = 0;
const MODE_WAIT: c_int = 1;
const MODE_SIG_WAIT: c_int = 2;
const TYPE_I64: c_int = 1;
const TYPE_U32: c_int = 2;
const TYPE_F64: c_int = 5;
const OP_SUM: c_int = 0;
const OP_MAX: c_int = 3;
const OP_AND: c_int = 4;
const OP_OR: c_int = 5;
const REDUCE_AUTO: c_int = 0;
const REDUCE_LINEAR: c_int = 1;

/// One nanosecond count short enough for a test that expects a timeout.
const MILLISECOND: u64 = 1_000_000;

/// What one failed call returned and said.
struct Seen {
    call: String,
    code: c_int,
    message: String,
}

/// This thread's `phasers_last_error`.
fn last_error() -> String {
    // SAFETY: phasers_last_error returns a NUL-terminated string valid until this thread's next
    // phasers call; it is copied at once.
    unsafe { CStr::from_ptr(phasers_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// The record of a call that returned `code`, with this thread's message.
fn record(call: &str, code: c_int) -> Seen {
    Seen {
        call: call.to_string(),
        code,
        message: last_error(),
    }
}

/// Collects failed calls, checking each returned the code expected.
#[derive(Default)]
struct Audit(Vec<Seen>);

impl Audit {
    fn expect(&mut self, call: &str, expected: c_int, code: c_int) {
        assert_eq!(code, expected, "{call}: {}", last_error());
        self.0.push(record(call, code));
    }

    fn add(&mut self, seen: impl IntoIterator<Item = Seen>) {
        self.0.extend(seen);
    }
}

/// Runs `body(rank)` for ranks 0 and 1 on two threads at once, returning what each recorded.
/// Handles cross threads as addresses: the C functions are what make sharing them sound.
fn on_two_threads(body: impl Fn(usize) -> Vec<Seen> + Sync) -> Vec<Seen> {
    std::thread::scope(|scope| {
        let body = &body;
        let threads: Vec<_> = (0..2).map(|rank| scope.spawn(move || body(rank))).collect();
        threads
            .into_iter()
            .flat_map(|thread| thread.join().expect("a rank's thread does not panic"))
            .collect()
    })
}

/// A team of 2 and its two members (as addresses, to cross threads).
fn team_of_two(checked: c_int) -> (*mut TeamHandle, [usize; 2]) {
    let mut team = null_mut();
    let mut members = [null_mut::<MemberHandle>(); 2];
    // SAFETY: every pointer passed is a valid out pointer or the team just created.
    unsafe {
        assert_eq!(phasers_team_create(2, checked, &mut team), PHASERS_OK);
        for (rank, member) in members.iter_mut().enumerate() {
            assert_eq!(phasers_team_member(team, rank, member), PHASERS_OK);
        }
    }
    (team, members.map(|member| member as usize))
}

/// Destroys a team made by [`team_of_two`] whose members are idle.
fn destroy_team(team: *mut TeamHandle, members: [usize; 2]) {
    // SAFETY: the handles were made by team_of_two and no thread uses them any more.
    unsafe {
        for member in members {
            assert_eq!(
                phasers_member_destroy(member as *mut MemberHandle),
                PHASERS_OK
            );
        }
        assert_eq!(phasers_team_destroy(team), PHASERS_OK);
    }
}

/// `phasers_member_allreduce` of `count` elements of `type_` with `op`, from the member at
/// `member`.
fn allreduce(member: usize, type_: c_int, op: c_int, count: usize) -> c_int {
    let input = [1u64; 4];
    let mut output = [0u64; 4];
    assert!(count <= input.len());
    // SAFETY: both buffers hold 4 elements of 8 bytes (i64 or f64), do not overlap, and live
    // until the call returns; `member` is a live member handle used by this thread only.
    unsafe {
        phasers_member_allreduce(
            member as *mut MemberHandle,
            type_,
            op,
            input.as_ptr().cast::<c_void>(),
            output.as_mut_ptr().cast::<c_void>(),
            count,
        )
    }
}

fn barriers(audit: &mut Audit) {
    let mut barrier: *mut BarrierHandle = null_mut();
    // SAFETY: `barrier` is a valid out pointer, then the barrier just created, waited on by this
    // thread only with rank 0 (a timed-out rank does not keep destroy from succeeding).
    unsafe {
        let code = phasers_barrier_create(0, ALGORITHM_AUTO, &mut barrier);
        audit.expect("phasers_barrier_create(0)", PHASERS_EINVAL, code);
        let code = phasers_barrier_create(100_000, ALGORITHM_AUTO, &mut barrier);
        audit.expect("phasers_barrier_create(100000)", PHASERS_EINVAL, code);
        let code = phasers_barrier_create(2, 99, &mut barrier);
        audit.expect("phasers_barrier_create(algorithm 99)", PHASERS_EINVAL, code);
        assert_eq!(
            phasers_barrier_create(2, ALGORITHM_AUTO, &mut barrier),
            PHASERS_OK
        );
        let code = phasers_barrier_timedwait(barrier, 0, MILLISECOND, null_mut());
        audit.expect("phasers_barrier_timedwait", PHASERS_ETIMEDOUT, code);
        let code = phasers_barrier_wait(barrier, 5, null_mut());
        audit.expect("phasers_barrier_wait(rank 5)", PHASERS_EINVAL, code);
        assert_eq!(phasers_barrier_destroy(barrier), PHASERS_OK);
    }
}

fn phasers_and_accumulators(audit: &mut Audit) {
    let mut phaser: *mut PhaserHandle = null_mut();
    let mut other: *mut PhaserHandle = null_mut();
    let mut main: *mut RegistrationHandle = null_mut();
    let mut stranger: *mut RegistrationHandle = null_mut();
    let mut producer: *mut RegistrationHandle = null_mut();
    let mut consumer: *mut RegistrationHandle = null_mut();
    let mut child: *mut RegistrationHandle = null_mut();
    let mut sum: *mut AccumulatorHandle = null_mut();
    // SAFETY: every pointer passed is a valid out pointer or a handle just created here, used by
    // this thread only and destroyed once at the end.
    unsafe {
        let code = phasers_phaser_create(MODE_WAIT, &mut phaser, &mut main);
        audit.expect("phasers_phaser_create(WAIT)", PHASERS_EINVAL, code);
        for (tiers, degree) in [(0, 2), (2, 1), (17, 2)] {
            let code =
                phasers_phaser_create_tree(MODE_SIG_WAIT, tiers, degree, &mut phaser, &mut main);
            let call = format!("phasers_phaser_create_tree({tiers}, {degree})");
            audit.expect(&call, PHASERS_EINVAL, code);
        }
        assert_eq!(
            phasers_phaser_create(MODE_SIG_WAIT, &mut phaser, &mut main),
            PHASERS_OK
        );
        assert_eq!(
            phasers_phaser_create(MODE_SIG_WAIT, &mut other, &mut stranger),
            PHASERS_OK
        );
        assert_eq!(
            phasers_registration_register(main, MODE_SIG, &mut producer),
            PHASERS_OK
        );
        assert_eq!(
            phasers_registration_register(main, MODE_WAIT, &mut consumer),
            PHASERS_OK
        );
        let code = phasers_registration_wait(producer, null_mut());
        audit.expect("phasers_registration_wait(SIG)", PHASERS_ECAPABILITY, code);
        let code = phasers_registration_signal(consumer);
        audit.expect(
            "phasers_registration_signal(WAIT)",
            PHASERS_ECAPABILITY,
            code,
        );
        let code = phasers_registration_register(producer, MODE_SIG_WAIT, &mut child);
        audit.expect(
            "phasers_registration_register(stronger)",
            PHASERS_ECAPABILITY,
            code,
        );

        let code = phasers_accumulator_create(phaser, TYPE_F64, OP_AND, 0, &mut sum);
        audit.expect("phasers_accumulator_create(F64, AND)", PHASERS_EINVAL, code);
        assert_eq!(
            phasers_accumulator_create(phaser, TYPE_I64, OP_SUM, 0, &mut sum),
            PHASERS_OK
        );
        let code = phasers_accumulator_send_i64(sum, consumer, 1);
        audit.expect(
            "phasers_accumulator_send_i64(WAIT)",
            PHASERS_ECAPABILITY,
            code,
        );
        let code = phasers_accumulator_send_f64(sum, main, 1.0);
        audit.expect("phasers_accumulator_send_f64(I64)", PHASERS_EINVAL, code);
        let code = phasers_accumulator_send_i64(sum, stranger, 1);
        audit.expect(
            "phasers_accumulator_send_i64(other phaser)",
            PHASERS_EINVAL,
            code,
        );

        assert_eq!(phasers_registration_signal(main), PHASERS_OK);
        let code = phasers_registration_signal(main);
        audit.expect("phasers_registration_signal(twice)", PHASERS_EINVAL, code);
        // The producer has not signalled, so the phase cannot complete.
        let code = phasers_registration_next_timeout(main, MILLISECOND, null_mut());
        audit.expect("phasers_registration_next_timeout", PHASERS_ETIMEDOUT, code);
        assert_eq!(phasers_phaser_terminate(phaser), PHASERS_OK);
        let code = phasers_registration_next(main, null_mut());
        audit.expect(
            "phasers_registration_next(terminated)",
            PHASERS_ETERMINATED,
            code,
        );

        assert_eq!(phasers_accumulator_destroy(sum), PHASERS_OK);
        for registration in [consumer, producer, main, stranger] {
            assert_eq!(phasers_registration_drop(registration), PHASERS_OK);
        }
        assert_eq!(phasers_phaser_destroy(phaser), PHASERS_OK);
        assert_eq!(phasers_phaser_destroy(other), PHASERS_OK);
    }
}

fn reductions(audit: &mut Audit) {
    let mut reduction: *mut ReductionHandle = null_mut();
    let bad = [
        (
            "phasers_reduction_create(0 parties)",
            0,
            TYPE_F64,
            OP_SUM,
            0,
        ),
        (
            "phasers_reduction_create(70000 parties)",
            70_000,
            TYPE_F64,
            OP_SUM,
            0,
        ),
        ("phasers_reduction_create(F64, OR)", 2, TYPE_F64, OP_OR, 0),
        ("phasers_reduction_create(U32)", 2, TYPE_U32, OP_SUM, 0),
        ("phasers_reduction_create(root 5)", 2, TYPE_F64, OP_SUM, 5),
    ];
    for (call, parties, type_, op, root) in bad {
        // SAFETY: `reduction` is a valid out pointer.
        let code = unsafe {
            phasers_reduction_create(parties, type_, op, REDUCE_AUTO, root, &mut reduction)
        };
        audit.expect(call, PHASERS_EINVAL, code);
    }
    // Mismatches: one rank reduces while the other allreduces, then lengths that differ. LINEAR
    // keeps every rank in the call until it is done, so both ranks see the mismatch.
    type Call = fn(usize, usize, &[f64], &mut [f64]) -> (&'static str, c_int);
    let reduce: Call = |reduction, rank, input, output| {
        let mut has_result = 0;
        // SAFETY: the buffers hold as many doubles as `input.len()` says, do not overlap and
        // live until the call returns; this thread is the only one using `rank`.
        let code = unsafe {
            phasers_reduction_reduce(
                reduction as *mut ReductionHandle,
                rank,
                input.as_ptr().cast(),
                output.as_mut_ptr().cast(),
                input.len(),
                &mut has_result,
            )
        };
        ("phasers_reduction_reduce", code)
    };
    let allreduce: Call = |reduction, rank, input, output| {
        // SAFETY: as for reduce.
        let code = unsafe {
            phasers_reduction_allreduce(
                reduction as *mut ReductionHandle,
                rank,
                input.as_ptr().cast(),
                output.as_mut_ptr().cast(),
                input.len(),
            )
        };
        ("phasers_reduction_allreduce", code)
    };
    let cases: [(Call, Call, usize); 2] = [(reduce, allreduce, 2), (allreduce, allreduce, 3)];
    for (first, second, second_len) in cases {
        // SAFETY: `reduction` is a valid out pointer.
        let code = unsafe {
            phasers_reduction_create(2, TYPE_F64, OP_SUM, REDUCE_LINEAR, 0, &mut reduction)
        };
        assert_eq!(code, PHASERS_OK);
        let shared = reduction as usize;
        let seen = on_two_threads(|rank| {
            let (call, len) = if rank == 0 {
                (first, 2)
            } else {
                (second, second_len)
            };
            let input = vec![1.0; len];
            let mut output = vec![0.0; len];
            let (name, code) = call(shared, rank, &input, &mut output);
            vec![record(name, code)]
        });
        assert!(
            seen.iter().any(|s| s.code == PHASERS_EMISMATCH),
            "a reduction mismatch gives PHASERS_EMISMATCH"
        );
        audit.add(seen.into_iter().filter(|s| s.code != PHASERS_OK));
        // SAFETY: both threads have returned from their calls.
        assert_eq!(unsafe { phasers_reduction_destroy(reduction) }, PHASERS_OK);
    }
}

fn team_arguments(audit: &mut Audit) {
    let mut team: *mut TeamHandle = null_mut();
    let mut member: *mut MemberHandle = null_mut();
    // SAFETY: every pointer passed is a valid out pointer or the team just created.
    unsafe {
        let code = phasers_team_create(0, 1, &mut team);
        audit.expect("phasers_team_create(0)", PHASERS_EINVAL, code);
        let code = phasers_team_create(70_000, 1, &mut team);
        audit.expect("phasers_team_create(70000)", PHASERS_EINVAL, code);
        assert_eq!(phasers_team_create(1, 1, &mut team), PHASERS_OK);
        let code = phasers_team_member(team, 5, &mut member);
        audit.expect("phasers_team_member(5)", PHASERS_EINVAL, code);
        assert_eq!(phasers_team_member(team, 0, &mut member), PHASERS_OK);
        let code = phasers_team_member(team, 0, &mut member);
        audit.expect("phasers_team_member(0, again)", PHASERS_EINVAL, code);
        let code = phasers_team_destroy(team);
        audit.expect("phasers_team_destroy(members alive)", PHASERS_EBUSY, code);
        assert_eq!(phasers_member_destroy(member), PHASERS_OK);
        assert_eq!(phasers_team_destroy(team), PHASERS_OK);
    }
}

fn team_mismatches(audit: &mut Audit) {
    let (team, members) = team_of_two(1);
    // (what differs, rank 0's allreduce, rank 1's allreduce) as (type, op).
    let cases = [
        ("operation", (TYPE_I64, OP_SUM), (TYPE_I64, OP_MAX)),
        ("element type", (TYPE_I64, OP_SUM), (TYPE_F64, OP_SUM)),
    ];
    for (what, ours, theirs) in cases {
        let seen = on_two_threads(|rank| {
            let (type_, op) = if rank == 0 { ours } else { theirs };
            let code = allreduce(members[rank], type_, op, 2);
            vec![record(&format!("phasers_member_allreduce ({what})"), code)]
        });
        assert!(seen.iter().all(|s| s.code == PHASERS_EMISMATCH), "{what}");
        audit.add(seen);
    }
    // A different collective, and the blocking form against the non-blocking one.
    let seen = on_two_threads(|rank| {
        if rank == 0 {
            let code = allreduce(members[0], TYPE_I64, OP_SUM, 2);
            vec![record("phasers_member_allreduce (against a barrier)", code)]
        } else {
            // SAFETY: a live member handle used by this thread only.
            let code = unsafe { phasers_member_barrier(members[1] as *mut MemberHandle) };
            vec![record(
                "phasers_member_barrier (against an allreduce)",
                code,
            )]
        }
    });
    assert!(seen.iter().all(|s| s.code == PHASERS_EMISMATCH));
    audit.add(seen);
    let seen = on_two_threads(|rank| {
        if rank == 0 {
            let code = allreduce(members[0], TYPE_I64, OP_SUM, 2);
            return vec![record(
                "phasers_member_allreduce (against iallreduce)",
                code,
            )];
        }
        let input = [1i64; 2];
        let mut output = [0i64; 2];
        let mut request: *mut RequestHandle = null_mut();
        // SAFETY: the buffers hold 2 int64_t, do not overlap and outlive the request, which is
        // waited for before they go; the member is used by this thread only.
        let code = unsafe {
            let started = phasers_member_iallreduce(
                members[1] as *mut MemberHandle,
                TYPE_I64,
                OP_SUM,
                input.as_ptr().cast(),
                output.as_mut_ptr().cast(),
                2,
                &mut request,
            );
            assert_eq!(started, PHASERS_OK);
            phasers_request_wait(request)
        };
        vec![record(
            "phasers_request_wait (iallreduce against allreduce)",
            code,
        )]
    });
    assert!(seen.iter().all(|s| s.code == PHASERS_EMISMATCH));
    audit.add(seen);
    // A bitwise operator on floating point reaches every member.
    let seen = on_two_threads(|rank| {
        let code = allreduce(members[rank], TYPE_F64, OP_OR, 2);
        vec![record("phasers_member_allreduce (F64, OR)", code)]
    });
    assert!(seen.iter().all(|s| s.code == PHASERS_EINVAL));
    audit.add(seen);
    destroy_team(team, members);
}

fn team_timeouts_and_breaks(audit: &mut Audit) {
    let (team, members) = team_of_two(1);
    // Member 0 starts a barrier that member 1 has not started: its timed wait gives up.
    let mut request: *mut RequestHandle = null_mut();
    // SAFETY: a live member handle and a valid out pointer.
    let code = unsafe { phasers_member_ibarrier(members[0] as *mut MemberHandle, &mut request) };
    assert_eq!(code, PHASERS_OK);
    // SAFETY: the request was just started and is used by this thread only.
    let code = unsafe { phasers_request_timedwait(request, MILLISECOND) };
    audit.expect("phasers_request_timedwait", PHASERS_ETIMEDOUT, code);
    let request = request as usize;
    on_two_threads(|rank| {
        // SAFETY: rank 0 finishes its own request, rank 1 starts and finishes the matching
        // barrier; each uses its own member.
        unsafe {
            if rank == 0 {
                assert_eq!(
                    phasers_request_wait(request as *mut RequestHandle),
                    PHASERS_OK
                );
            } else {
                let mut mine = null_mut();
                let code = phasers_member_ibarrier(members[1] as *mut MemberHandle, &mut mine);
                assert_eq!(code, PHASERS_OK);
                assert_eq!(phasers_request_wait(mine), PHASERS_OK);
            }
        }
        Vec::new()
    });
    // A destroyed member breaks the team for the other.
    // SAFETY: both members are idle; member 1 is destroyed once and not used again.
    unsafe {
        assert_eq!(
            phasers_member_destroy(members[1] as *mut MemberHandle),
            PHASERS_OK
        );
        let code = phasers_member_barrier(members[0] as *mut MemberHandle);
        audit.expect(
            "phasers_member_barrier (member 1 destroyed)",
            PHASERS_EBROKEN,
            code,
        );
        assert_eq!(
            phasers_member_destroy(members[0] as *mut MemberHandle),
            PHASERS_OK
        );
        assert_eq!(phasers_team_destroy(team), PHASERS_OK);
    }
}

fn unchecked_team(audit: &mut Audit) {
    // Unchecked, differing calls are the program's bug, but lengths are compared all the same
    // (memory safety needs them to agree), so each member is told which lengths differed.
    let (team, members) = team_of_two(0);
    let seen = on_two_threads(|rank| {
        let code = allreduce(members[rank], TYPE_I64, OP_SUM, rank + 1);
        vec![record(
            "phasers_member_allreduce (unchecked, lengths differ)",
            code,
        )]
    });
    audit.add(seen.into_iter().filter(|s| s.code != PHASERS_OK));
    destroy_team(team, members);
}

/// Whether `message` holds `word` as a whole word.
fn has_word(message: &str, word: &str) -> bool {
    message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|token| token == word)
}

#[test]
fn errors_through_the_c_entry_points_name_no_rust_item() {
    let mut audit = Audit::default();
    barriers(&mut audit);
    phasers_and_accumulators(&mut audit);
    reductions(&mut audit);
    team_arguments(&mut audit);
    team_mismatches(&mut audit);
    team_timeouts_and_breaks(&mut audit);
    unchecked_team(&mut audit);
    let mut problems = Vec::new();
    for Seen {
        call,
        code,
        message,
    } in &audit.0
    {
        // Shown with --nocapture: the messages a C programmer reads.
        println!("{call} -> {code}: {message}");
        assert!(!message.is_empty(), "{call} left no message");
        let text = FORBIDDEN_TEXT.iter().filter(|text| message.contains(*text));
        let words = FORBIDDEN_WORDS
            .iter()
            .filter(|word| has_word(message, word));
        for rust in text.chain(words) {
            problems.push(format!("{call}: {rust:?} in {message:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "Rust-only names reach C:\n{}",
        problems.join("\n")
    );
    // The C names the messages should use instead are there.
    let all: String = audit.0.iter().map(|s| s.message.as_str()).collect();
    for c in [
        "PHASERS_MODE_SIG",
        "PHASERS_MODE_WAIT",
        "phasers_registration_wait",
        "PHASERS_OP_SUM",
        "PHASERS_TYPE_F64",
        "phasers_phaser_terminate",
        "phasers_registration_signal",
    ] {
        assert!(all.contains(c), "no message names {c}");
    }
}
