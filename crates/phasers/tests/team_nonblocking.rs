//! Non-blocking collectives complete whatever the order and timing of their completion calls:
//!
//! - a member of several teams (a whole team and the row and column teams of a grid) starts one
//!   collective on each and waits for them in an order of its own, different from its partners';
//! - some members poll `test()` while doing other work, others `wait()` at once;
//! - one member delays before it waits (or before it even starts), while the others wait;
//! - dropping a `Pending` that has not completed completes it (its outputs are written, and the
//!   team goes on with the next call as usual);
//! - `wait()` after `test()` returned `true` is `Ok`, and `test()` keeps saying `true`;
//! - members mixing blocking and non-blocking forms of one call never hang or get garbage.
//!
//! Every test runs under the watchdog, so an order of completion the library cannot handle fails
//! after 20 seconds instead of hanging. The `AllSync` case of the first test is the regression
//! test for a deadlock: non-blocking calls used to wait at a closing meeting, so two members
//! waiting on two teams in opposite orders each waited for the other.

mod team_support;

use std::time::Duration;

use phasers::{Error, Member, Op, Pending, SyncMode, Team};
use team_support::{hash, run_all, SYNC_MODES};

/// The sum over `size` members of member r's contribution `r * 1000 + i` at index `i`.
fn sum_of_ranks(size: usize, len: usize) -> Vec<u64> {
    let ranks = (size * (size - 1) / 2) as u64;
    (0..len).map(|i| ranks * 1000 + (size * i) as u64).collect()
}

/// Member `rank`'s contribution: `rank * 1000 + i` at index `i`.
fn contribution(rank: usize, len: usize) -> Vec<u64> {
    (0..len).map(|i| (rank * 1000 + i) as u64).collect()
}

/// All permutations of `0..3`, one per member (cycling), for the order of the waits.
const ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/// Every member starts an allreduce on the whole team, an allgather on its row team and a
/// broadcast on its column team, then completes the three in an order of its own (each member a
/// different permutation), some by `wait()`, some by polling `test()` first. The allreduce is
/// short (carried inside the meeting) or long (moved after it).
fn waits_in_different_orders(sync: SyncMode) {
    let (size, columns) = (6, 3);
    for len in [2, 9, 100] {
        for round_seed in 0..4u64 {
            let team = Team::new(size).expect("a valid team");
            let what = format!("{sync:?}, length {len}, round {round_seed}");
            let name = what.clone();
            run_all(&what, team.participants(), move |mut whole: Member| {
                let rank = whole.rank();
                let (mut row, mut column) = whole.split_grid(columns).expect("split_grid");
                for m in [&mut whole, &mut row, &mut column] {
                    m.set_sync_mode(sync);
                }
                let input = contribution(rank, len);
                let me = [rank as u64];
                let mut sum = vec![0u64; len];
                let mut gathered = vec![0u64; row.parties()];
                let column_root = column.parties() - 1;
                let mut broadcast = if column.rank() == column_root {
                    vec![rank as u64; 4]
                } else {
                    vec![0; 4]
                };
                {
                    let mut pendings: Vec<Option<Pending<'_, u64>>> = vec![
                        Some(
                            whole
                                .iallreduce(&input, &mut sum, Op::Sum)
                                .expect("start the allreduce"),
                        ),
                        Some(
                            row.iallgather(&me, &mut gathered)
                                .expect("start the allgather"),
                        ),
                        Some(
                            column
                                .ibroadcast(column_root, &mut broadcast)
                                .expect("start the broadcast"),
                        ),
                    ];
                    let order = ORDERS[(rank + round_seed as usize) % ORDERS.len()];
                    let poll = hash(&[round_seed, rank as u64]) % 2 == 0;
                    for index in order {
                        let mut pending = pendings[index].take().expect("each once");
                        if poll {
                            while !pending.test().expect("test") {
                                std::thread::yield_now();
                            }
                        }
                        pending.wait().unwrap_or_else(|error| {
                            panic!("{name}: rank {rank}, {index}: {error}")
                        });
                    }
                }
                assert_eq!(
                    sum,
                    sum_of_ranks(size, len),
                    "{name}: rank {rank}, allreduce"
                );
                let row_members: Vec<u64> = (0..size)
                    .filter(|r| r / columns == rank / columns)
                    .map(|r| r as u64)
                    .collect();
                assert_eq!(gathered, row_members, "{name}: rank {rank}, row allgather");
                // The column's last member is the one in the lowest row.
                let root_rank = (0..size)
                    .rev()
                    .find(|r| r % columns == rank % columns)
                    .expect("rank is in its column");
                assert_eq!(
                    broadcast,
                    vec![root_rank as u64; 4],
                    "{name}: rank {rank}, column broadcast"
                );
            });
        }
    }
}

#[test]
fn waits_in_different_orders_across_teams() {
    for sync in [SyncMode::MySync, SyncMode::NoSync] {
        waits_in_different_orders(sync);
    }
}

#[test]
fn waits_in_different_orders_across_teams_all_sync() {
    waits_in_different_orders(SyncMode::AllSync);
}

/// Some members poll `test()` between slices of other work (and count them, so the work really
/// happens while the call is in progress), others wait at once; each checks its result.
#[test]
fn polling_while_doing_other_work() {
    let size = 5;
    for sync in SYNC_MODES {
        let team = Team::new(size).expect("a valid team");
        let what = format!("{sync:?}");
        let name = what.clone();
        run_all(&what, team.participants(), move |mut m| {
            let rank = m.rank();
            m.set_sync_mode(sync);
            for call in 0..20u64 {
                let len = 1 + (call as usize * 37) % 300;
                let input = contribution(rank, len);
                let mut output = vec![0u64; len];
                let mut pending = m.iallreduce(&input, &mut output, Op::Sum).expect("start");
                if (rank + call as usize) % 2 == 0 {
                    // Other work: a running checksum, advanced a little between polls.
                    let mut work = 0u64;
                    let mut slices = 0u64;
                    while !pending.test().expect("test") {
                        for i in 0..100 {
                            work = hash(&[work, i]);
                        }
                        slices += 1;
                        std::thread::yield_now();
                    }
                    std::hint::black_box(work);
                    std::hint::black_box(slices);
                }
                pending
                    .wait()
                    .unwrap_or_else(|error| panic!("{name}: rank {rank}, call {call}: {error}"));
                assert_eq!(
                    output,
                    sum_of_ranks(size, len),
                    "{name}: rank {rank}, call {call}"
                );
            }
        });
    }
}

/// One member (each in turn) sleeps before completing, or before even starting, while the others
/// are already waiting; everyone's results are right.
#[test]
fn one_member_delays() {
    let size = 4;
    for sync in SYNC_MODES {
        for late in 0..size {
            for before_start in [false, true] {
                let team = Team::new(size).expect("a valid team");
                let what = format!("{sync:?}, rank {late} late, before start: {before_start}");
                let name = what.clone();
                run_all(&what, team.participants(), move |mut m| {
                    let rank = m.rank();
                    m.set_sync_mode(sync);
                    let delay = || std::thread::sleep(Duration::from_millis(15));
                    if rank == late && before_start {
                        delay();
                    }
                    let root = 1 % size;
                    let mut gathered = if rank == root {
                        vec![0u64; 2 * size]
                    } else {
                        Vec::new()
                    };
                    let input = contribution(rank, 2);
                    let pending = m.igather(root, &input, &mut gathered).expect("start");
                    if rank == late && !before_start {
                        delay();
                    }
                    pending
                        .wait()
                        .unwrap_or_else(|error| panic!("{name}: rank {rank}: {error}"));
                    if rank == root {
                        let expected: Vec<u64> =
                            (0..size).flat_map(|r| contribution(r, 2)).collect();
                        assert_eq!(gathered, expected, "{name}: root's gather");
                    }
                    // And the team goes on normally.
                    let mut sum = vec![0u64; 3];
                    m.allreduce(&contribution(rank, 3), &mut sum, Op::Sum)
                        .unwrap_or_else(|error| panic!("{name}: rank {rank}, next call: {error}"));
                    assert_eq!(sum, sum_of_ranks(size, 3), "{name}: rank {rank}, next call");
                });
            }
        }
    }
}

/// A `Pending` dropped before it completed completes the call: the dropping member's output holds
/// the result once the drop returns, and the team's next call matches up as usual. The partners
/// start late, so the call cannot have completed when the drop happens.
#[test]
fn dropping_an_unfinished_pending_completes_it() {
    let size = 3;
    for sync in SYNC_MODES {
        for dropper in 0..size {
            let team = Team::new(size).expect("a valid team");
            let what = format!("{sync:?}, rank {dropper} drops");
            let name = what.clone();
            run_all(&what, team.participants(), move |mut m| {
                let rank = m.rank();
                m.set_sync_mode(sync);
                for call in 0..3usize {
                    let len = 5 + call;
                    let input = contribution(rank, len);
                    let mut output = vec![0u64; len];
                    if rank == dropper {
                        let pending = m.iallreduce(&input, &mut output, Op::Sum).expect("start");
                        drop(pending);
                    } else {
                        std::thread::sleep(Duration::from_millis(10));
                        // The non-blocking form, as the dropper's: a blocking call does not match
                        // a non-blocking one.
                        m.iallreduce(&input, &mut output, Op::Sum)
                            .and_then(|pending| pending.wait())
                            .unwrap_or_else(|error| panic!("{name}: rank {rank}: {error}"));
                    }
                    assert_eq!(
                        output,
                        sum_of_ranks(size, len),
                        "{name}: rank {rank}, call {call}"
                    );
                }
                // A dropped broadcast at the root still delivers its data.
                let mut buf = if rank == dropper {
                    vec![42u64; 6]
                } else {
                    vec![0; 6]
                };
                if rank == dropper {
                    drop(m.ibroadcast(dropper, &mut buf).expect("start"));
                } else {
                    std::thread::sleep(Duration::from_millis(10));
                    m.ibroadcast(dropper, &mut buf)
                        .and_then(|pending| pending.wait())
                        .unwrap_or_else(|error| panic!("{name}: rank {rank}: {error}"));
                }
                assert_eq!(buf, vec![42; 6], "{name}: rank {rank}, broadcast");
            });
        }
    }
}

/// `test()` says `true` once the call is complete, with the output written by then; it keeps
/// saying `true`; and `wait()` afterwards is `Ok`.
#[test]
fn wait_after_test_returned_true_is_ok() {
    let size = 4;
    for sync in SYNC_MODES {
        let team = Team::new(size).expect("a valid team");
        let what = format!("{sync:?}");
        let name = what.clone();
        run_all(&what, team.participants(), move |mut m| {
            let rank = m.rank();
            m.set_sync_mode(sync);
            for call in 0..10 {
                let len = 3 + call;
                let input = contribution(rank, len);
                let mut output = vec![0u64; len];
                let mut pending = m.iallreduce(&input, &mut output, Op::Sum).expect("start");
                while !pending.test().expect("test") {
                    std::thread::yield_now();
                }
                assert!(
                    pending.test().expect("test again"),
                    "{name}: rank {rank}, call {call}: test() went back to false"
                );
                pending
                    .wait()
                    .unwrap_or_else(|error| panic!("{name}: rank {rank}, call {call}: {error}"));
                assert_eq!(output, sum_of_ranks(size, len), "{name}: rank {rank}");

                // The same for a barrier, which has no output.
                let mut pending = m.ibarrier().expect("start the barrier");
                while !pending.test().expect("test the barrier") {
                    std::thread::yield_now();
                }
                pending
                    .wait()
                    .unwrap_or_else(|error| panic!("{name}: rank {rank}, barrier: {error}"));
            }
        });
    }
}

/// Members that mix the blocking and non-blocking forms of one call (which the spec does not
/// promise to match, as MPI does not) in a checked team never hang and never get garbage: either
/// every member completes the call with the right result, or every member gets the same
/// `Mismatch`. An allreduce of short arrays (carried inside the meeting) and long ones, and an
/// allgather, in every sync mode; a fresh team for each, since only the one call is under test.
#[test]
fn mixing_blocking_and_non_blocking_forms_is_safe() {
    let size = 5;
    for sync in SYNC_MODES {
        for (gather, len) in [(false, 4), (false, 100), (true, 4)] {
            for call in 0..3usize {
                let team = Team::builder(size)
                    .checked(true)
                    .build()
                    .expect("a valid team");
                let what = format!("{sync:?}, gather {gather}, length {len}, pattern {call}");
                let name = what.clone();
                let results = run_all(&what, team.participants(), move |mut m| {
                    let rank = m.rank();
                    m.set_sync_mode(sync);
                    let input = contribution(rank, len);
                    let blocking = (rank + call) % 3 == 0;
                    if gather {
                        let mut output = vec![0u64; size * len];
                        let result = if blocking {
                            m.allgather(&input, &mut output)
                        } else {
                            m.iallgather(&input, &mut output).and_then(Pending::wait)
                        };
                        if result.is_ok() {
                            let all: Vec<u64> =
                                (0..size).flat_map(|r| contribution(r, len)).collect();
                            assert_eq!(output, all, "{name}: rank {rank}");
                        }
                        return result;
                    }
                    let mut output = vec![0u64; len];
                    let result = if blocking {
                        m.allreduce(&input, &mut output, Op::Sum)
                    } else {
                        m.iallreduce(&input, &mut output, Op::Sum)
                            .and_then(Pending::wait)
                    };
                    if result.is_ok() {
                        assert_eq!(output, sum_of_ranks(size, len), "{name}: rank {rank}");
                    }
                    result
                });
                let first = &results[0];
                assert!(
                    matches!(first, Ok(()) | Err(Error::Mismatch { .. })),
                    "{what}: {first:?}"
                );
                for (rank, result) in results.iter().enumerate() {
                    assert_eq!(result, first, "{what}: rank {rank} differs from rank 0");
                }
            }
        }
    }
}
