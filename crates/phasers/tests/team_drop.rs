//! A member dropped at any point of a call never hangs the others (issue 21, part 2).
//!
//! At 2 and 8 members (and 64 for a few collectives), for every collective, one member (the first rank, or the last, which is
//! every call's root) goes away at each point where the others can wait for it:
//!
//! - **before its post**: it never calls; its `Member` is dropped while the others wait at the
//!   call's opening meeting;
//! - **after its post**: it starts the non-blocking form, forgets the `Pending`
//!   (`std::mem::forget`) and drops the `Member`;
//! - **between the stages**: it starts the non-blocking form, tests it a few times (until it is
//!   done, where the others let it), then forgets the `Pending` and drops the `Member`.
//!
//! The survivors call the same collective, in the blocking form or the non-blocking one, in a
//! checked team and in an unchecked one (where a blocking call and a forgotten non-blocking one
//! pass the meeting although they move data differently), with payloads small enough to travel
//! inline and larger ones. Each survivor must return from the call it was in (with any result,
//! but `Broken` only naming the dropped member), and its next call must be `Error::Broken` naming
//! the dropped member; no output may change after its call returned.
//!
//! Last, the issue's own scenario: in an unchecked team of 2, member 0 calls `allreduce` with 2
//! elements (carried inline) and member 1 with 102 (the linear path); member 0 fails and is
//! dropped, and member 1 must not hang but fail too.
//!
//! Every team runs under the watchdog (`team_support::within`), so a hang fails the test.

mod team_support;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use phasers::{Error, Member, Op, Pending, Team};
use team_support::{run_all, within, Collective};

/// What these tests do with each collective (team_support's [`Collective`]), every member passing
/// the same arguments.
trait DropCalls: Sized {
    fn buffers(self, rank: usize, size: usize, len: usize) -> (Vec<u64>, Vec<u64>);
    fn call(self, m: &mut Member, input: &[u64], output: &mut [u64]) -> phasers::Result<()>;
    fn start<'a>(
        self,
        m: &'a mut Member,
        input: &'a [u64],
        output: &'a mut [u64],
    ) -> phasers::Result<Box<dyn Handle + 'a>>;
}

impl DropCalls for Collective {
    /// The input and output of `rank` for one call of `len` elements per member (roots at the
    /// last rank).
    fn buffers(self, rank: usize, size: usize, len: usize) -> (Vec<u64>, Vec<u64>) {
        let is_root = rank == size - 1;
        let mine = vec![rank as u64 + 1; len];
        let (input, output) = match self {
            Collective::Barrier => (0, 0),
            Collective::Broadcast => (0, len),
            Collective::Reduce => (len, if is_root { len } else { 0 }),
            Collective::Allreduce | Collective::ScanInclusive | Collective::ScanExclusive => {
                (len, len)
            }
            Collective::Gather => (len, if is_root { size * len } else { 0 }),
            Collective::Allgather => (len, size * len),
            Collective::Scatter => (if is_root { size * len } else { 0 }, len),
            Collective::Alltoall => (size * len, size * len),
        };
        let mut input_buffer = mine;
        input_buffer.resize(input, rank as u64 + 1);
        let mut output_buffer = vec![0u64; output];
        if self == Collective::Broadcast && is_root {
            output_buffer.fill(7);
        }
        (input_buffer, output_buffer)
    }

    /// One blocking call.
    fn call(self, m: &mut Member, input: &[u64], output: &mut [u64]) -> phasers::Result<()> {
        let root = m.parties() - 1;
        match self {
            Collective::Barrier => m.barrier(),
            Collective::Broadcast => m.broadcast(root, output),
            Collective::Reduce => m.reduce(root, input, output, Op::Sum),
            Collective::Allreduce => m.allreduce(input, output, Op::Sum),
            Collective::Gather => m.gather(root, input, output),
            Collective::Allgather => m.allgather(input, output),
            Collective::Scatter => m.scatter(root, input, output),
            Collective::Alltoall => m.alltoall(input, output),
            Collective::ScanInclusive => m.scan_inclusive(input, output, Op::Sum),
            Collective::ScanExclusive => m.scan_exclusive(input, output, Op::Sum),
        }
    }

    /// Starts the non-blocking form.
    fn start<'a>(
        self,
        m: &'a mut Member,
        input: &'a [u64],
        output: &'a mut [u64],
    ) -> phasers::Result<Box<dyn Handle + 'a>> {
        let root = m.parties() - 1;
        fn boxed<'a, T: Copy + Send + 'static>(
            pending: phasers::Result<Pending<'a, T>>,
        ) -> phasers::Result<Box<dyn Handle + 'a>> {
            pending.map(|p| Box::new(p) as Box<dyn Handle + 'a>)
        }
        match self {
            Collective::Barrier => boxed(m.ibarrier()),
            Collective::Broadcast => boxed(m.ibroadcast(root, output)),
            Collective::Reduce => boxed(m.ireduce(root, input, output, Op::Sum)),
            Collective::Allreduce => boxed(m.iallreduce(input, output, Op::Sum)),
            Collective::Gather => boxed(m.igather(root, input, output)),
            Collective::Allgather => boxed(m.iallgather(input, output)),
            Collective::Scatter => boxed(m.iscatter(root, input, output)),
            Collective::Alltoall => boxed(m.ialltoall(input, output)),
            Collective::ScanInclusive => boxed(m.iscan_inclusive(input, output, Op::Sum)),
            Collective::ScanExclusive => boxed(m.iscan_exclusive(input, output, Op::Sum)),
        }
    }
}

/// A `Pending` of any element type.
trait Handle {
    fn test(&mut self) -> phasers::Result<bool>;
    fn wait(self: Box<Self>) -> phasers::Result<()>;
    /// Leaks the handle, as `std::mem::forget` does: the call is left in flight.
    fn forget(self: Box<Self>);
}

impl<T: Copy + Send + 'static> Handle for Pending<'_, T> {
    fn test(&mut self) -> phasers::Result<bool> {
        Pending::test(self)
    }

    fn wait(self: Box<Self>) -> phasers::Result<()> {
        Pending::wait(*self)
    }

    fn forget(self: Box<Self>) {
        std::mem::forget(*self);
    }
}

/// Where the dropped member goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DropPoint {
    BeforePost,
    AfterPost,
    BetweenStages,
}

/// How the survivors call the collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Blocking,
    NonBlocking,
}

/// One team of `size`, `checked` or not, where member `lost` goes away at `point` while the
/// others make `collective` calls of `len` elements in `form`.
fn check_drop(
    size: usize,
    lost: usize,
    collective: Collective,
    point: DropPoint,
    form: Form,
    checked: bool,
    len: usize,
) {
    let what = format!(
        "{size} members, {} team, rank {lost} dropped {point:?}, survivors {form:?} \
         {collective:?} of {len}",
        if checked { "checked" } else { "unchecked" }
    );
    let team = Team::builder(size)
        .checked(checked)
        .build()
        .expect("a valid team");
    // The survivors meet here once every one of them has returned from both calls, to check that
    // nobody wrote their outputs after that.
    let returned = Arc::new(Barrier::new(size - 1));
    let name = what.clone();
    run_all(&what, team.participants(), move |mut m| {
        let rank = m.rank();
        let here = format!("{name}: rank {rank}");
        let (input, mut output) = collective.buffers(rank, size, len);
        if rank == lost {
            match point {
                DropPoint::BeforePost => {
                    // Let the others reach the meeting first, most of the time.
                    std::thread::sleep(Duration::from_millis(2));
                }
                DropPoint::AfterPost | DropPoint::BetweenStages => {
                    let mut pending = collective
                        .start(&mut m, &input, &mut output)
                        .unwrap_or_else(|error| panic!("{here}: start: {error}"));
                    if point == DropPoint::BetweenStages {
                        for _ in 0..100 {
                            match pending.test() {
                                Ok(false) => std::thread::yield_now(),
                                Ok(true) | Err(_) => break,
                            }
                        }
                    }
                    pending.forget();
                }
            }
            drop(m);
            return;
        }
        let first = match form {
            Form::Blocking => collective.call(&mut m, &input, &mut output),
            Form::NonBlocking => collective
                .start(&mut m, &input, &mut output)
                .and_then(|pending| pending.wait()),
        };
        let after_first = output.clone();
        match &first {
            Err(Error::Broken { by, .. }) => {
                assert_eq!(*by, lost, "{here}: the first call: {first:?}")
            }
            Ok(()) | Err(_) => assert!(
                point != DropPoint::BeforePost,
                "{here}: the call the dropped member never made returned {first:?}"
            ),
        }
        let (input, mut next_output) = collective.buffers(rank, size, len);
        let next = collective.call(&mut m, &input, &mut next_output);
        assert!(
            matches!(next, Err(Error::Broken { by, .. }) if by == lost),
            "{here}: the call after the loss: expected Broken by {lost}, got {next:?} (the first \
             returned {first:?})"
        );
        let after_next = next_output.clone();
        returned.wait();
        assert_eq!(
            output, after_first,
            "{here}: an output written after its call returned"
        );
        assert_eq!(
            next_output, after_next,
            "{here}: an output written after its call returned"
        );
    });
}

/// Every collective, both lost ranks, checked and unchecked, both lengths.
fn check_point(size: usize, point: DropPoint) {
    let forms: &[Form] = if point == DropPoint::BeforePost {
        &[Form::Blocking, Form::NonBlocking]
    } else {
        &[Form::NonBlocking, Form::Blocking]
    };
    for collective in Collective::ALL {
        for lost in [0, size - 1] {
            for &form in forms {
                for checked in [true, false] {
                    for len in [2, 16] {
                        check_drop(size, lost, collective, point, form, checked, len);
                    }
                }
            }
        }
    }
}

#[test]
fn dropped_before_its_post_2_members() {
    check_point(2, DropPoint::BeforePost);
}

#[test]
fn dropped_after_its_post_2_members() {
    check_point(2, DropPoint::AfterPost);
}

#[test]
fn dropped_between_stages_2_members() {
    check_point(2, DropPoint::BetweenStages);
}

#[test]
fn dropped_before_its_post_8_members() {
    check_point(8, DropPoint::BeforePost);
}

#[test]
fn dropped_after_its_post_8_members() {
    check_point(8, DropPoint::AfterPost);
}

#[test]
fn dropped_between_stages_8_members() {
    check_point(8, DropPoint::BetweenStages);
}

/// 64 members on however few cores: the drop still ends every wait, at every point, for a
/// reduction, a broadcast from the dropped root and an exchange of everyone's data.
#[test]
fn dropped_at_every_point_64_members() {
    for point in [
        DropPoint::BeforePost,
        DropPoint::AfterPost,
        DropPoint::BetweenStages,
    ] {
        for collective in [
            Collective::Allreduce,
            Collective::Broadcast,
            Collective::Alltoall,
        ] {
            for form in [Form::NonBlocking, Form::Blocking] {
                for checked in [true, false] {
                    check_drop(64, 63, collective, point, form, checked, 16);
                }
            }
        }
    }
}

/// The scenario, many times so that either member completes the meeting: member 0's
/// allreduce of 2 travels inline, member 1's of 102 takes the linear path. Both must fail, and
/// member 1 must return once member 0 is dropped.
#[test]
fn unchecked_inline_against_linear_then_dropped() {
    for round in 0..200 {
        let team = Team::builder(2).unchecked().build().expect("a valid team");
        let what = format!("unchecked allreduce of 2 against 102, round {round}");
        let name = what.clone();
        let results = run_all(&what, team.participants(), move |mut m| {
            let len = if m.rank() == 0 { 2 } else { 102 };
            let input = vec![m.rank() as u64 + 1; len];
            let mut output = vec![0u64; len];
            let result = m.allreduce(&input, &mut output, Op::Sum);
            let after = output.clone();
            drop(m);
            // Member 1's output must not change once its call returned, even after member 0
            // is gone.
            std::thread::sleep(Duration::from_millis(1));
            assert_eq!(
                output, after,
                "{name}: an output written after its call returned"
            );
            result
        });
        for (rank, result) in results.iter().enumerate() {
            assert!(
                result.is_err(),
                "{what}: member {rank} returned {result:?} for a call that did not match"
            );
        }
    }
}

/// The same scenario where member 0 is dropped only after member 1 surely waits in its call.
#[test]
fn unchecked_mismatch_partner_dropped_later() {
    let team = Team::builder(2).unchecked().build().expect("a valid team");
    let results = within("unchecked mismatch, late drop", move || {
        let mut members = team.participants();
        let mut one = members.pop().expect("member 1");
        let mut zero = members.pop().expect("member 0");
        let waiter = std::thread::spawn(move || {
            let input = vec![2u64; 102];
            let mut output = vec![0u64; 102];
            one.allreduce(&input, &mut output, Op::Sum)
        });
        let mut output = [0u64; 2];
        let first = zero.allreduce(&[1, 1], &mut output, Op::Sum);
        std::thread::sleep(Duration::from_millis(20));
        drop(zero);
        (first, waiter.join().expect("member 1 does not panic"))
    });
    assert!(results.0.is_err(), "member 0: {:?}", results.0);
    assert!(results.1.is_err(), "member 1: {:?}", results.1);
}
