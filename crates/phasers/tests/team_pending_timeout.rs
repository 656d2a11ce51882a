//! `Pending::wait_timeout` and `Pending::wait_deadline` bound a collective's wait:
//!
//! - when a member has not started the call, a timed wait gives up with `Error::Timeout` naming
//!   it, promptly, and leaves the call pending: a later `wait()`, `test()` or `wait_timeout`
//!   completes it with the right outputs, and dropping the handle still settles it;
//! - a deadline already past gives up at once on a call that cannot complete, and completes one
//!   that can; `Duration::MAX` never expires, so it waits as `wait()` does;
//! - a completed call returns its outcome again, errors included;
//! - a member dropped during a timed wait ends it with `Error::Broken`, not a timeout;
//! - 64 members on 2 cores complete timed allreduces, with correct sums.
//!
//! Every test runs its members under the watchdog (`team_support::run_all`), so a hang fails the
//! test after 20 seconds instead of blocking CI.

mod team_support;

use std::sync::{Arc, Barrier as Gate};
use std::time::{Duration, Instant};

use phasers::{Error, Member, Op, Pending, Team};
use team_support::run_all;

/// How long a timed wait may overrun its timeout, or a call take once everyone has come, on a
/// busy 2-core machine: "within seconds".
const PROMPTLY: Duration = Duration::from_secs(5);

/// A timeout that only a hang reaches.
const LONG: Duration = Duration::from_secs(10);

/// Member `rank`'s contribution to an allreduce of `len` elements: `rank * 1000 + i` at `i`.
fn contribution(rank: usize, len: usize) -> Vec<u64> {
    (0..len).map(|i| (rank * 1000 + i) as u64).collect()
}

/// The sum of every member's [`contribution`] in a team of `size`.
fn sum_of(size: usize, len: usize) -> Vec<u64> {
    let ranks = (size * (size - 1) / 2) as u64;
    (0..len).map(|i| ranks * 1000 + (size * i) as u64).collect()
}

/// Asserts that `outcome` is a timeout of call `call` that names exactly `missing`.
fn assert_timeout(what: &str, outcome: phasers::Result<()>, call: u64, missing: &[usize]) {
    match outcome {
        Err(Error::Timeout {
            episode,
            missing: got,
            resumable: true,
        }) => {
            assert_eq!(episode, call, "{what}: the timeout names the wrong call");
            assert_eq!(got, missing, "{what}: the timeout names the wrong members");
        }
        other => panic!("{what}: expected a timeout of call {call}, got {other:?}"),
    }
}

/// How a call that timed out is finished afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    Wait,
    Test,
    WaitTimeout,
}

impl Then {
    const ALL: [Then; 3] = [Then::Wait, Then::Test, Then::WaitTimeout];

    fn finish<T: Copy + Send + 'static>(self, mut pending: Pending<'_, T>) -> phasers::Result<()> {
        match self {
            Then::Wait => pending.wait(),
            Then::Test => {
                let start = Instant::now();
                while !pending.test()? {
                    assert!(
                        start.elapsed() < PROMPTLY,
                        "test() never completed the call"
                    );
                    std::thread::yield_now();
                }
                Ok(())
            }
            Then::WaitTimeout => pending.wait_timeout(LONG),
        }
    }
}

/// Member 1 never calls until member 0's timed waits on an `ibarrier` gave up (twice, each
/// naming member 1, and promptly); then it calls, and a `wait()` on the same handle completes
/// the barrier. The team goes on with the next call as usual.
#[test]
fn a_late_member_times_out_then_the_same_pending_completes() {
    let team = Team::new(2).expect("a valid team");
    let gate = Arc::new(Gate::new(2));
    run_all("late barrier", team.participants(), move |mut m: Member| {
        if m.rank() == 0 {
            let mut pending = m.ibarrier().expect("start the barrier");
            for attempt in 0..2 {
                let start = Instant::now();
                let outcome = pending.wait_timeout(Duration::from_millis(50));
                let took = start.elapsed();
                assert_timeout(&format!("attempt {attempt}"), outcome, 0, &[1]);
                assert!(took >= Duration::from_millis(50), "gave up early: {took:?}");
                assert!(took < PROMPTLY, "gave up only after {took:?}");
            }
            assert!(!pending.test().expect("still pending"));
            gate.wait(); // member 1 may call now
            pending
                .wait()
                .expect("the barrier completes once member 1 comes");
        } else {
            gate.wait();
            m.ibarrier().expect("start").wait().expect("the barrier");
        }
        let mut total = [0u64];
        m.allreduce(&[m.rank() as u64 + 1], &mut total, Op::Sum)
            .expect("the next call");
        assert_eq!(total, [3]);
    });
}

/// An `iallreduce` whose timed wait expired completes with the right sums, whether finished by
/// `wait`, by polling `test`, or by another `wait_timeout`; for a result carried in the meeting
/// (1 and 8 elements) and one moved after it (1000).
#[test]
fn an_iallreduce_that_timed_out_completes_with_the_right_values() {
    for then in Then::ALL {
        for len in [1, 8, 1000] {
            let what = format!("{then:?}, length {len}");
            let team = Team::new(2).expect("a valid team");
            let gate = Arc::new(Gate::new(2));
            let name = what.clone();
            run_all(&what, team.participants(), move |mut m: Member| {
                let input = contribution(m.rank(), len);
                let mut output = vec![0u64; len];
                if m.rank() == 0 {
                    let mut pending = m
                        .iallreduce(&input, &mut output, Op::Sum)
                        .expect("start the allreduce");
                    let outcome = pending.wait_timeout(Duration::from_millis(20));
                    assert_timeout(&name, outcome, 0, &[1]);
                    gate.wait();
                    then.finish(pending).expect("the allreduce completes");
                } else {
                    gate.wait();
                    m.iallreduce(&input, &mut output, Op::Sum)
                        .expect("start")
                        .wait()
                        .expect("the allreduce");
                }
                assert_eq!(output, sum_of(2, len), "{name}: member {}", m.rank());
            });
        }
    }
}

/// A deadline already past gives up at once while member 1 has not started the call, and
/// completes the call, still without waiting, once member 1 has finished its side of it.
#[test]
fn a_deadline_in_the_past() {
    let team = Team::new(2).expect("a valid team");
    let gate = Arc::new(Gate::new(2));
    run_all(
        "past deadline",
        team.participants(),
        move |mut m: Member| {
            let past = Instant::now();
            let input = contribution(m.rank(), 4);
            let mut output = vec![0u64; 4];
            if m.rank() == 0 {
                let mut pending = m.iallreduce(&input, &mut output, Op::Sum).expect("start");
                let start = Instant::now();
                assert_timeout("past", pending.wait_deadline(past), 0, &[1]);
                let long_ago = past.checked_sub(Duration::from_secs(1)).unwrap_or(past);
                assert_timeout("long ago", pending.wait_deadline(long_ago), 0, &[1]);
                assert!(start.elapsed() < PROMPTLY, "a past deadline waited");
                gate.wait(); // member 1 may call now...
                gate.wait(); // ...and has completed its side: the call is ready
                pending.wait_deadline(past).expect("a ready call completes");
                assert!(pending.test().expect("and stays complete"));
            } else {
                gate.wait();
                m.iallreduce(&input, &mut output, Op::Sum)
                    .expect("start")
                    .wait()
                    .expect("the allreduce");
                gate.wait();
            }
            assert_eq!(output, sum_of(2, 4), "member {}", m.rank());
        },
    );
}

/// `wait_timeout(Duration::MAX)` (whose end no clock holds) never expires: it waits for a late
/// member as `wait()` does, as does `wait_deadline` far in the future.
#[test]
fn duration_max_waits_as_wait_does() {
    let team = Team::new(3).expect("a valid team");
    run_all(
        "Duration::MAX",
        team.participants(),
        move |mut m: Member| {
            for call in 0..3 {
                if m.rank() == call {
                    std::thread::sleep(Duration::from_millis(30)); // late, each call another member
                }
                let input = contribution(m.rank(), 16);
                let mut output = vec![0u64; 16];
                let mut pending = m.iallreduce(&input, &mut output, Op::Sum).expect("start");
                if call == 2 {
                    let far = Instant::now() + Duration::from_secs(3600);
                    pending.wait_deadline(far).expect("a far deadline waits");
                } else {
                    pending.wait_timeout(Duration::MAX).expect("MAX waits");
                }
                drop(pending);
                assert_eq!(output, sum_of(3, 16), "call {call}, member {}", m.rank());
            }
        },
    );
}

/// Once a call is over, every later `wait_timeout`, `wait_deadline` and `test` returns its
/// outcome again, without waiting: `Ok` for a call that succeeded, its error for one that failed
/// (here, members passing different lengths to a checked team).
#[test]
fn a_completed_call_returns_its_outcome_again() {
    let team = Team::builder(2)
        .checked(true)
        .build()
        .expect("a valid team");
    run_all(
        "outcome again",
        team.participants(),
        move |mut m: Member| {
            let input = contribution(m.rank(), 2);
            let mut output = vec![0u64; 2];
            let mut pending = m.iallreduce(&input, &mut output, Op::Sum).expect("start");
            pending.wait_timeout(LONG).expect("the allreduce");
            pending.wait_timeout(Duration::ZERO).expect("Ok again");
            pending.wait_deadline(Instant::now()).expect("Ok again");
            assert!(pending.test().expect("Ok again"));
            pending.wait().expect("Ok again");

            // Member 1 passes one element more: a mismatch, reported to both.
            let len = 2 + m.rank();
            let input = contribution(m.rank(), len);
            let mut output = vec![0u64; len];
            let mut pending = m.iallreduce(&input, &mut output, Op::Sum).expect("start");
            let first = pending.wait_timeout(LONG);
            assert!(
                matches!(first, Err(Error::Mismatch { .. })),
                "expected a mismatch, got {first:?}"
            );
            assert_eq!(pending.wait_timeout(Duration::ZERO), first);
            assert_eq!(pending.wait_deadline(Instant::now()), first);
            assert_eq!(pending.test().map(|_| ()), first);
            assert_eq!(pending.wait(), first);
        },
    );
}

/// A member dropped while another waits with a timeout ends that wait with `Error::Broken`
/// naming it, promptly, not with a timeout.
#[test]
fn a_dropped_member_ends_a_timed_wait_with_broken() {
    let team = Team::new(2).expect("a valid team");
    let gate = Arc::new(Gate::new(2));
    run_all("dropped", team.participants(), move |mut m: Member| {
        if m.rank() == 1 {
            gate.wait(); // member 0 has started the barrier
            std::thread::sleep(Duration::from_millis(30));
            drop(m);
            return;
        }
        let mut pending = m.ibarrier().expect("start");
        gate.wait();
        let start = Instant::now();
        let outcome = pending.wait_timeout(LONG);
        assert!(
            matches!(outcome, Err(Error::Broken { by: 1, .. })),
            "expected Broken by member 1, got {outcome:?}"
        );
        assert!(
            start.elapsed() < PROMPTLY,
            "Broken only after {:?}",
            start.elapsed()
        );
    });
}

/// Dropping a `Pending` whose timed wait expired finishes the call (the drop waits for the late
/// member), with its outputs written; the team goes on with the next call.
#[test]
fn dropping_a_pending_after_a_timeout_settles_the_call() {
    let team = Team::new(2).expect("a valid team");
    let gate = Arc::new(Gate::new(2));
    run_all(
        "drop after timeout",
        team.participants(),
        move |mut m: Member| {
            let input = contribution(m.rank(), 100);
            let mut output = vec![0u64; 100];
            if m.rank() == 0 {
                let mut pending = m.iallreduce(&input, &mut output, Op::Sum).expect("start");
                assert_timeout(
                    "before the drop",
                    pending.wait_timeout(Duration::from_millis(20)),
                    0,
                    &[1],
                );
                gate.wait();
                drop(pending); // waits for member 1, then writes the output
            } else {
                gate.wait();
                m.iallreduce(&input, &mut output, Op::Sum)
                    .expect("start")
                    .wait()
                    .expect("the allreduce");
            }
            assert_eq!(output, sum_of(2, 100), "member {}", m.rank());
            let mut total = [0u64];
            m.allreduce(&[1], &mut total, Op::Sum)
                .expect("the next call");
            assert_eq!(total, [2]);
        },
    );
}

/// 64 members on a 2-core machine, each completing several allreduces with
/// `wait_timeout(10 s)`: every one completes (none times out: the timeout is far beyond what the
/// calls need) with the right sums, short and long.
#[test]
fn many_members_on_two_cores_complete_timed_allreduces() {
    const SIZE: usize = 64;
    let team = Team::new(SIZE).expect("a valid team");
    run_all("64 members", team.participants(), move |mut m: Member| {
        let rank = m.rank();
        for call in 0..6 {
            let len = if call % 2 == 0 { 1 } else { 40 };
            let input = contribution(m.rank(), len);
            let mut output = vec![0u64; len];
            m.iallreduce(&input, &mut output, Op::Sum)
                .expect("start")
                .wait_timeout(LONG)
                .unwrap_or_else(|e| panic!("call {call}, member {rank}: {e}"));
            assert_eq!(output, sum_of(SIZE, len), "call {call}, member {rank}");
        }
    });
}
