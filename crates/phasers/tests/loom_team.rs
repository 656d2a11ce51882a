//! Loom models of team collectives: the inline small-message path (posts combined by the last
//! arrival into the meeting's line), the pull and linear paths with their `touched` counts, the
//! staged copies of non-blocking calls, non-blocking completion in any order, and a mismatch
//! caught by the signatures summed in the arrival word.
//!
//! Every member spends (overwrites with garbage) its input the moment its call returns, keeping
//! it allocated until the model ends: an interleaving in which anyone read a member's buffer
//! after its call returned would put garbage into a result and fail the model. Loom checks the
//! library's own cells (posts, staging areas, the meeting's inline result) for unordered
//! accesses directly.
//!
//! Bounds: two-member models at 3 preemptions, the three-member barriers at 2 (CI's default
//! `LOOM_MAX_PREEMPTIONS=2` caps them all at 2). At 3 the file explores about a million
//! executions in 70 s, most of them the two-call linear allreduce (680,000).
//! Run with `scripts/loom.sh loom_team` (`--nocapture` prints the executions explored).
#![cfg(phasers_loom)]

mod loom_support;

use loom::thread;
use loom_support::model_bounded;
use phasers::{Member, Op, SyncMode, Team};

const GARBAGE: u64 = 0xDEAD_0000_0000;

fn input(call: usize, rank: usize, i: usize) -> u64 {
    (1 + rank as u64) + 10 * (1 + i as u64) + 100 * (1 + call as u64)
}

fn sum(size: usize, call: usize, len: usize) -> Vec<u64> {
    (0..len)
        .map(|i| (0..size).map(|rank| input(call, rank, i)).sum())
        .collect()
}

/// Runs `body` for every member of a team of `size` on its own loom thread.
fn on_members(size: usize, mode: SyncMode, body: fn(&mut Member)) {
    let team = Team::builder(size).checked(true).build().unwrap();
    let mut members = team.participants();
    let last = members.pop().unwrap();
    let handles: Vec<_> = members
        .into_iter()
        .map(|mut member| {
            thread::spawn(move || {
                member.set_sync_mode(mode);
                body(&mut member);
            })
        })
        .collect();
    let mut last = last;
    last.set_sync_mode(mode);
    body(&mut last);
    for handle in handles {
        handle.join().unwrap();
    }
}

fn allreduce_calls(member: &mut Member, len: usize, calls: usize) {
    let size = member.parties();
    let rank = member.rank();
    let mut spent = Vec::new();
    for call in 0..calls {
        let mut data: Vec<u64> = (0..len).map(|i| input(call, rank, i)).collect();
        let mut out = vec![0; len];
        member.allreduce(&data, &mut out, Op::Sum).unwrap();
        data.fill(GARBAGE);
        spent.push(data);
        assert_eq!(out, sum(size, call, len));
    }
}

fn broadcast_calls(member: &mut Member, len: usize, calls: usize) {
    let size = member.parties();
    let rank = member.rank();
    let mut spent = Vec::new();
    for call in 0..calls {
        let root = call % size;
        let mut buffer: Vec<u64> = if rank == root {
            (0..len).map(|i| input(call, root, i)).collect()
        } else {
            vec![0; len]
        };
        member.broadcast(root, &mut buffer).unwrap();
        let expected: Vec<u64> = (0..len).map(|i| input(call, root, i)).collect();
        assert_eq!(buffer, expected);
        buffer.fill(GARBAGE);
        spent.push(buffer);
    }
}

/// Starts a non-blocking allreduce; rank 0 waits at once, the others poll `test()` first.
fn nonblocking_allreduce(member: &mut Member, len: usize, calls: usize) {
    let size = member.parties();
    let rank = member.rank();
    for call in 0..calls {
        let data: Vec<u64> = (0..len).map(|i| input(call, rank, i)).collect();
        let mut out = vec![0; len];
        let mut pending = member.iallreduce(&data, &mut out, Op::Sum).unwrap();
        if rank != 0 {
            for _ in 0..2 {
                if pending.test().unwrap() {
                    break;
                }
                thread::yield_now();
            }
        }
        pending.wait().unwrap();
        assert_eq!(out, sum(size, call, len));
    }
}

/// Two non-blocking gathers: the second overwrites the staged copy of the first.
fn nonblocking_gathers(member: &mut Member) {
    let size = member.parties();
    let rank = member.rank();
    for call in 0..2 {
        let data = [input(call, rank, 0)];
        let root = call % size;
        let mut out = vec![0; if rank == root { size } else { 0 }];
        let mut pending = member.igather(root, &data, &mut out).unwrap();
        if rank == 1 {
            let _ = pending.test().unwrap();
        }
        pending.wait().unwrap();
        if rank == root {
            let expected: Vec<u64> = (0..size).map(|r| input(call, r, 0)).collect();
            assert_eq!(out, expected);
        }
    }
}

#[test]
fn inline_allreduce_two_calls() {
    model_bounded(3, || {
        on_members(2, SyncMode::AllSync, |m| allreduce_calls(m, 1, 2))
    });
}

#[test]
fn inline_allreduce_nonblocking_any_order() {
    model_bounded(3, || {
        on_members(2, SyncMode::AllSync, |m| nonblocking_allreduce(m, 1, 2))
    });
}

#[test]
fn linear_allreduce_two_calls() {
    // 9 words: over the 64-byte inline limit, so the linear path with its touched counts.
    model_bounded(3, || {
        on_members(2, SyncMode::MySync, |m| allreduce_calls(m, 9, 2))
    });
}

#[test]
fn pull_allreduce_nonblocking() {
    model_bounded(3, || {
        on_members(2, SyncMode::AllSync, |m| nonblocking_allreduce(m, 9, 1))
    });
}

#[test]
fn pull_broadcast_mysync_two_calls() {
    model_bounded(3, || {
        on_members(2, SyncMode::MySync, |m| broadcast_calls(m, 9, 2))
    });
}

#[test]
fn pull_broadcast_allsync() {
    model_bounded(3, || {
        on_members(2, SyncMode::AllSync, |m| broadcast_calls(m, 9, 1))
    });
}

#[test]
fn staged_gathers_nonblocking() {
    model_bounded(3, || on_members(2, SyncMode::AllSync, nonblocking_gathers));
}

#[test]
fn three_member_barriers() {
    model_bounded(2, || {
        on_members(3, SyncMode::AllSync, |m| {
            m.barrier().unwrap();
            m.barrier_checked(7).unwrap();
        })
    });
}

/// A mismatched call found by the signatures in the arrival word, then two matched ones: every
/// member gets the same `Mismatch`, and the word the completer reset counts the next meetings
/// from zero (a stale count or sum would release a meeting early or report a false mismatch).
/// Member 1 calls 9 words where member 0 calls 1: the linear path against the inline one, which
/// would wait for ever if the meeting let it through.
#[test]
fn mismatch_then_matched_calls() {
    model_bounded(2, || {
        on_members(2, SyncMode::AllSync, |m| {
            let len = if m.rank() == 1 { 9 } else { 1 };
            let data = vec![1u64; len];
            let mut out = vec![0; len];
            let error = m.allreduce(&data, &mut out, Op::Sum).unwrap_err();
            assert!(
                matches!(error, phasers::Error::Mismatch { what: "length", .. }),
                "{error:?}"
            );
            m.barrier().unwrap();
            allreduce_calls(m, 1, 1);
        })
    });
}

/// The scenario of issue 21: in an unchecked team, member 0's allreduce of 1 word travels inline
/// while member 1's of 9 takes the linear path, so the meeting lets the call through. Member 0
/// finds no inline result for its call, fails, and is dropped; member 1 waits for it at the
/// closing meeting and for its touch. Both must fail and member 1 must return in every
/// interleaving (a hang is a loom deadlock): member 0 settles its debt (the touch member 1's post
/// counts) and its drop breaks the team from that call, which ends the closing meeting's wait.
#[test]
fn unchecked_mismatch_then_dropped() {
    model_bounded(2, || {
        let team = Team::builder(2).unchecked().build().unwrap();
        let mut members = team.participants();
        let mut one = members.pop().unwrap();
        let mut zero = members.pop().unwrap();
        let other = thread::spawn(move || {
            let data = [1u64; 9];
            let mut out = [0u64; 9];
            let result = one.allreduce(&data, &mut out, Op::Sum);
            assert!(result.is_err(), "member 1: {result:?}");
        });
        let mut out = [0u64; 1];
        let result = zero.allreduce(&[1u64], &mut out, Op::Sum);
        assert!(result.is_err(), "member 0: {result:?}");
        drop(zero);
        other.join().unwrap();
    });
}

/// A member that starts a non-blocking broadcast, forgets its handle and is dropped, while the
/// other calls the blocking form in an unchecked team: the meeting lets both through, the blocking
/// member reads the root's staged copy and then waits at a closing meeting the dropped member
/// never attends. The drop breaks the team from that call, so the blocking call returns `Broken`
/// and the next call too; a wait for the opening meeting that sees the break looks at the release
/// once more (`Member::wait_for`), so no member gives up on a meeting that did release.
#[test]
fn forgotten_pending_against_blocking_then_dropped() {
    model_bounded(2, || {
        let team = Team::builder(2).unchecked().build().unwrap();
        let mut members = team.participants();
        let mut one = members.pop().unwrap();
        let mut zero = members.pop().unwrap();
        let other = thread::spawn(move || {
            let mut buffer = [0u64; 9];
            let first = one.broadcast(0, &mut buffer);
            assert!(
                matches!(first, Err(phasers::Error::Broken { by: 0, .. })),
                "member 1: {first:?}"
            );
            assert!(matches!(
                one.barrier(),
                Err(phasers::Error::Broken { by: 0, .. })
            ));
        });
        let mut buffer = [5u64; 9];
        let pending = zero.ibroadcast(0, &mut buffer).unwrap();
        std::mem::forget(pending);
        drop(zero);
        other.join().unwrap();
    });
}

/// Issue 35's one-word calls: three members, so that (with loom's larger signal, one input in the
/// meeting's first line) rank 0's input lies in the release line and ranks 1 and 2's in the far
/// cells. Two calls check that a cell written for the second call never races with the
/// completer's read of the first, and that the result word a waiter reads is its own call's.
#[test]
fn word_allreduce_three_members_near_and_far_cells() {
    model_bounded(2, || {
        on_members(3, SyncMode::AllSync, |m| allreduce_calls(m, 1, 2))
    });
}

/// Issue 35's light path (a blocking call that ends at its meeting, with no state kept in the
/// member) next to the engine's, on the same meetings: a barrier and a one-word allreduce take
/// the light path, a non-blocking one-word allreduce the engine with the same meeting cells, and
/// a two-word allreduce the light path with its payload in the posts. Each call's result is
/// checked, and the completer may be a different member at every call.
#[test]
fn light_and_engine_calls_share_the_meeting() {
    model_bounded(3, || {
        on_members(2, SyncMode::AllSync, |m| {
            let size = m.parties();
            let rank = m.rank();
            m.barrier().unwrap();
            let mut out = [0u64];
            m.allreduce(&[input(0, rank, 0)], &mut out, Op::Sum)
                .unwrap();
            assert_eq!(out.to_vec(), sum(size, 0, 1));
            let data = [input(1, rank, 0)];
            m.iallreduce(&data, &mut out, Op::Sum)
                .unwrap()
                .wait()
                .unwrap();
            assert_eq!(out.to_vec(), sum(size, 1, 1));
            let data: Vec<u64> = (0..2).map(|i| input(2, rank, i)).collect();
            let mut two = [0u64; 2];
            m.allreduce(&data, &mut two, Op::Sum).unwrap();
            assert_eq!(two.to_vec(), sum(size, 2, 2));
        })
    });
}

/// A light barrier against a one-word allreduce in a checked team: the signatures differ, the
/// completer (either member) reads both posts, which the light path writes field by field, and
/// both members get the same `Mismatch` naming the collectives; the next light call then meets
/// from a reset arrival word.
#[test]
fn light_mismatch_then_light_calls() {
    model_bounded(3, || {
        on_members(2, SyncMode::AllSync, |m| {
            let error = if m.rank() == 0 {
                m.barrier().unwrap_err()
            } else {
                let mut out = [0u64];
                m.allreduce(&[1u64], &mut out, Op::Sum).unwrap_err()
            };
            assert!(
                matches!(
                    error,
                    phasers::Error::Mismatch {
                        what: "collective",
                        ..
                    }
                ),
                "{error:?}"
            );
            allreduce_calls(m, 1, 1);
        })
    });
}
