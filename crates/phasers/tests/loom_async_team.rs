//! Loom models of a team member that waits as an async task (`Pending::wait_async`), beside
//! members that wait as threads: the task's waker stored on the word its call stopped at (the
//! opening meeting's release, then, on the pull path, its readers' count) while the others
//! arrive, release and read (see `src/team/member.rs`'s `wait_for` and `src/wait/poll.rs`).
//!
//! There is no executor under loom: the task runs on a loom thread that polls its future by hand
//! and, on `Pending`, parks until its waker unparks it (`loom_support::poller`). A waker that a
//! release or a reader's touch fails to wake leaves the thread parked for ever, which loom
//! reports as a deadlock; the waker counts its wakes, so a task that resumes must have been woken.
//! As in `loom_team.rs`, every member spends (overwrites with garbage) its input the moment its
//! call returns: a reader of a buffer after its call returned would put garbage into a result.
//!
//! - `inline_allreduce_task_and_thread`: two members, two one-word allreduces (the meeting's
//!   line carries the data); the task waits at the opening meeting only.
//! - `staged_allgather_task_and_thread`: two members, two allgathers on the pull path from
//!   staged copies; the task waits at the meeting, then for the thread to have read its staged
//!   copy (so that its second call's start does not wait), on another word: its waker key must
//!   follow it there.
//! - `barrier_two_tasks_and_a_thread`: three members, two of them tasks on one release word, one
//!   barrier: the second task finds the word `PARKED` already.
//! - `task_waiting_when_a_member_is_dropped`: two members; the thread's member is dropped
//!   instead of calling, and the task waiting in the barrier gets `Error::Broken`.
//!
//! About 15 s in all on a 2-core VM at two preemptions (each model's figure is at it).
//!
//! Run with `scripts/loom.sh loom_async_team` (`--nocapture` prints the executions explored).
#![cfg(phasers_loom)]

mod loom_support;

use loom::thread;
use loom_support::model_bounded;
use loom_support::poller::Poller;
use phasers::{Error, Member, Op, Team};

const GARBAGE: u64 = 0xDEAD_0000_0000;

fn input(call: usize, rank: usize, i: usize) -> u64 {
    (1 + rank as u64) + 10 * (1 + i as u64) + 100 * (1 + call as u64)
}

/// Runs `body` for every member of a checked team of `size`, each on its own loom thread; the
/// ranks in `tasks` get a poller (they wait as tasks), the others none.
fn on_members(size: usize, tasks: &'static [usize], body: fn(&mut Member, Option<&mut Poller>)) {
    let team = Team::builder(size).checked(true).build().unwrap();
    let mut members = team.participants();
    let last = members.pop().unwrap();
    let run = move |mut member: Member| {
        let mut poller = tasks.contains(&member.rank()).then(Poller::new);
        body(&mut member, poller.as_mut());
    };
    let handles: Vec<_> = members
        .into_iter()
        .map(|member| thread::spawn(move || run(member)))
        .collect();
    run(last);
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Finishes `pending`: as a task through `poller`, else as a thread.
fn finish<T: Copy + Send + 'static>(
    pending: &mut phasers::team::Pending<'_, T>,
    poller: Option<&mut Poller>,
) -> phasers::Result<()> {
    match poller {
        Some(poller) => poller.block_on(pending.wait_async()),
        None => pending.wait_timeout(std::time::Duration::MAX),
    }
}

fn allreduce_calls(member: &mut Member, mut poller: Option<&mut Poller>) {
    let (size, rank) = (member.parties(), member.rank());
    let mut spent = Vec::new();
    for call in 0..2 {
        let mut data = vec![input(call, rank, 0)];
        let mut out = [0u64];
        let mut pending = member.iallreduce(&data, &mut out, Op::Sum).unwrap();
        finish(&mut pending, poller.as_deref_mut()).unwrap();
        drop(pending);
        data.fill(GARBAGE);
        spent.push(data);
        let expected: u64 = (0..size).map(|r| input(call, r, 0)).sum();
        assert_eq!(out, [expected]);
    }
}

fn allgather_calls(member: &mut Member, mut poller: Option<&mut Poller>) {
    let (size, rank) = (member.parties(), member.rank());
    let mut spent = Vec::new();
    for call in 0..2 {
        let mut data = vec![input(call, rank, 0)];
        let mut out = vec![0u64; size];
        let mut pending = member.iallgather(&data, &mut out).unwrap();
        finish(&mut pending, poller.as_deref_mut()).unwrap();
        drop(pending);
        data.fill(GARBAGE);
        spent.push(data);
        let expected: Vec<u64> = (0..size).map(|r| input(call, r, 0)).collect();
        assert_eq!(out, expected);
    }
}

fn one_barrier(member: &mut Member, poller: Option<&mut Poller>) {
    let mut pending = member.ibarrier().unwrap();
    finish(&mut pending, poller).unwrap();
}

/// 2 preemptions: 2,008 executions, 0.1 s.
#[test]
fn inline_allreduce_task_and_thread() {
    model_bounded(2, || on_members(2, &[0], allreduce_calls));
}

/// The task is rank 1, whose staged copy rank 0 reads; 2 preemptions: 80,666 executions, 6.1 s.
#[test]
fn staged_allgather_task_and_thread() {
    model_bounded(2, || on_members(2, &[1], allgather_calls));
}

/// Two tasks and a thread at one release word; 2 preemptions: 90,636 executions, 8.3 s.
#[test]
fn barrier_two_tasks_and_a_thread() {
    model_bounded(2, || on_members(3, &[0, 1], one_barrier));
}

/// The task waits in a barrier whose other member is dropped instead: the drop breaks the team
/// and wakes the task, which returns `Error::Broken` naming it. 39 executions.
#[test]
fn task_waiting_when_a_member_is_dropped() {
    model_bounded(2, || {
        let team = Team::new(2).unwrap();
        let mut members = team.participants();
        let other = members.pop().unwrap();
        let mut task = members.pop().unwrap();
        let dropper = thread::spawn(move || drop(other));
        let mut poller = Poller::new();
        let mut pending = task.ibarrier().unwrap();
        let outcome = poller.block_on(pending.wait_async());
        assert!(
            matches!(outcome, Err(Error::Broken { by: 1, .. })),
            "{outcome:?}"
        );
        drop(pending);
        dropper.join().unwrap();
    });
}
