//! A team that loses a member never hangs the others:
//!
//! - a member dropped before any call, between calls, or while the others already wait inside a
//!   collective (blocking or non-blocking) makes the others' calls return `Error::Broken` naming
//!   it, and every later call too, promptly;
//! - a `*_with` operator that panics: the panic propagates out of the call on the thread where
//!   the operator ran, with its own message, and every other member gets `Broken` naming that
//!   member.
//!
//! In `AllSync` mode (the default) every collective synchronizes all members on the way in and
//! out, so every surviving member must see the loss in the very call it happened in. In `NoSync`
//! mode a member whose part of the call did not need the lost one may return `Ok`; its next call
//! must then report `Broken`.
//!
//! Every test runs its members under the watchdog (`team_support::within`), so a hang fails the
//! test after 20 seconds instead of blocking CI.

mod team_support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use phasers::{Error, Member, Op, Pending, SyncMode, Team};
use team_support::{payload_text, run_all, run_each_within};

/// How soon a call must return once its team is broken: a broken team must not wait for the lost
/// member, but the 2-core machine may be busy.
const PROMPTLY: Duration = Duration::from_secs(2);

/// The collectives of the broken-team tests, each making one call of a few elements on `m`
/// (roots at the last rank, which is never the lost one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Barrier,
    Broadcast,
    Reduce,
    Allreduce,
    Gather,
    Allgather,
    Scatter,
    Alltoall,
    ScanInclusive,
    ScanExclusive,
    IAllreduce,
    IBarrier,
}

impl Call {
    const ALL: [Call; 12] = [
        Call::Barrier,
        Call::Broadcast,
        Call::Reduce,
        Call::Allreduce,
        Call::Gather,
        Call::Allgather,
        Call::Scatter,
        Call::Alltoall,
        Call::ScanInclusive,
        Call::ScanExclusive,
        Call::IAllreduce,
        Call::IBarrier,
    ];

    fn make(self, m: &mut Member) -> phasers::Result<()> {
        let size = m.parties();
        let root = size - 1;
        let mine = [m.rank() as u64; 3];
        let is_root = m.rank() == root;
        let mut out = vec![0u64; 3 * size];
        match self {
            Call::Barrier => m.barrier(),
            Call::Broadcast => m.broadcast(root, &mut out[..3]),
            Call::Reduce => {
                let out = if is_root {
                    &mut out[..3]
                } else {
                    &mut out[..0]
                };
                m.reduce(root, &mine, out, Op::Sum)
            }
            Call::Allreduce => m.allreduce(&mine, &mut out[..3], Op::Sum),
            Call::Gather => {
                let out = if is_root { &mut out[..] } else { &mut out[..0] };
                m.gather(root, &mine, out)
            }
            Call::Allgather => m.allgather(&mine, &mut out),
            Call::Scatter => {
                let input = if is_root {
                    vec![1u64; 3 * size]
                } else {
                    Vec::new()
                };
                m.scatter(root, &input, &mut out[..3])
            }
            Call::Alltoall => {
                let input = vec![1u64; 3 * size];
                m.alltoall(&input, &mut out)
            }
            Call::ScanInclusive => m.scan_inclusive(&mine, &mut out[..3], Op::Sum),
            Call::ScanExclusive => m.scan_exclusive(&mine, &mut out[..3], Op::Sum),
            Call::IAllreduce => m
                .iallreduce(&mine, &mut out[..3], Op::Sum)
                .and_then(Pending::wait),
            Call::IBarrier => m.ibarrier().and_then(Pending::wait),
        }
    }
}

/// Whether `result` is `Broken` naming `by`.
fn is_broken_by(result: &phasers::Result<()>, by: usize) -> bool {
    matches!(result, Err(Error::Broken { by: b, .. }) if *b == by)
}

/// The call after a loss: must return `Broken` naming `by`, promptly.
fn check_next_call(what: &str, m: &mut Member, call: Call, by: usize) {
    let start = Instant::now();
    let result = call.make(m);
    assert!(
        is_broken_by(&result, by),
        "{what}: the call after the loss: expected Broken by {by}, got {result:?}"
    );
    assert!(
        start.elapsed() < PROMPTLY,
        "{what}: the call after the loss took {:?}",
        start.elapsed()
    );
}

/// When the lost member goes: before any call, after some calls of its own (while the others may
/// already be in the next), or while the others surely wait in a call (after a sleep).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loss {
    BeforeAnyCall,
    AfterCalls,
    WhileOthersWait,
}

/// Calls made before the loss, all of which must succeed.
const CALLS_BEFORE: usize = 3;

/// A team of `size` in `sync` mode loses member `lost` as `loss` says; the survivors make `call`
/// repeatedly, and must get `Broken` naming the lost member (in `AllSync`, at the first call the
/// lost member missed; in `NoSync`, at the latest at the call after it).
fn check_loss(size: usize, lost: usize, call: Call, loss: Loss, sync: SyncMode) {
    let team = Team::new(size).expect("a valid team");
    let what = format!("{size} members, rank {lost} lost {loss:?}, {call:?}, {sync:?}");
    let name = what.clone();
    let mut members = team.participants();
    if loss == Loss::BeforeAnyCall {
        drop(members.remove(lost));
    }
    run_all(&what, members, move |mut m| {
        let rank = m.rank();
        let here = format!("{name}: rank {rank}");
        m.set_sync_mode(sync);
        if loss != Loss::BeforeAnyCall {
            for index in 0..CALLS_BEFORE {
                call.make(&mut m).unwrap_or_else(|error| {
                    panic!("{here}: call {index} before the loss: {error}")
                });
            }
            if rank == lost {
                if loss == Loss::WhileOthersWait {
                    std::thread::sleep(Duration::from_millis(30));
                }
                drop(m);
                return;
            }
        }
        let first = call.make(&mut m);
        let strict = sync == SyncMode::AllSync;
        assert!(
            is_broken_by(&first, lost) || (!strict && first.is_ok()),
            "{here}: the call the lost member missed: expected Broken by {lost}, got {first:?}"
        );
        check_next_call(&here, &mut m, call, lost);
    });
}

#[test]
fn dropped_member_breaks_every_collective() {
    for call in Call::ALL {
        for loss in [Loss::BeforeAnyCall, Loss::AfterCalls, Loss::WhileOthersWait] {
            check_loss(3, 0, call, loss, SyncMode::AllSync);
        }
    }
}

#[test]
fn dropped_member_in_other_shapes_and_modes() {
    for (size, lost) in [(2, 1), (5, 2), (8, 0)] {
        for sync in [SyncMode::AllSync, SyncMode::MySync, SyncMode::NoSync] {
            for call in [Call::Allreduce, Call::Broadcast, Call::IBarrier] {
                check_loss(size, lost, call, Loss::WhileOthersWait, sync);
            }
        }
    }
}

/// The element that makes the `*_with` operator panic.
const POISON: i64 = -999;

/// What the poisoned operator panics with.
const PANIC_TEXT: &str = "deliberate panic in the operator";

/// A sum that panics when it meets [`POISON`].
fn poisonous(a: i64, b: i64) -> i64 {
    if a == POISON || b == POISON {
        panic!("{PANIC_TEXT}");
    }
    a + b
}

/// The `*_with` calls whose operator may panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WithCall {
    Reduce(usize),
    Allreduce,
    ScanInclusive,
    ScanExclusive,
    IAllreduce,
}

impl WithCall {
    fn make(self, m: &mut Member, input: &[i64]) -> phasers::Result<()> {
        let mut out = vec![0i64; input.len()];
        match self {
            WithCall::Reduce(root) => {
                let out = if m.rank() == root {
                    &mut out[..]
                } else {
                    &mut out[..0]
                };
                m.reduce_with(root, input, out, poisonous)
            }
            WithCall::Allreduce => m.allreduce_with(input, &mut out, poisonous),
            WithCall::ScanInclusive => m.scan_inclusive_with(input, &mut out, poisonous),
            WithCall::ScanExclusive => m.scan_exclusive_with(input, &mut out, poisonous),
            WithCall::IAllreduce => m
                .iallreduce_with(input, &mut out, poisonous)
                .and_then(Pending::wait),
        }
    }
}

/// One member's poisoned call and the call after it, or its panic.
type Ending = std::thread::Result<(phasers::Result<()>, phasers::Result<()>)>;

/// A team of `size` makes one clean `call`, then one where member `poisoned`'s input holds the
/// poison. The operator panics on some thread(s): each such thread's call panics with the
/// operator's own message; every other member gets `Broken` naming a panicking member, from the
/// poisoned call and, promptly, from the next.
fn check_panicking_operator(size: usize, poisoned: usize, call: WithCall) {
    let team = Team::new(size).expect("a valid team");
    const LEN: usize = 20;
    let what = format!("{size} members, poison in rank {poisoned}'s input, {call:?}");
    let endings: Vec<(usize, Ending)> =
        run_each_within(&what, team.participants(), move |mut m| {
            let rank = m.rank();
            let mut input: Vec<i64> = (0..LEN as i64).collect();
            call.make(&mut m, &input)
                .unwrap_or_else(|error| panic!("rank {rank}: the clean call: {error}"));
            if rank == poisoned {
                input[LEN / 2] = POISON;
            }
            let poisoned_call = call.make(&mut m, &input);
            let start = Instant::now();
            let next = call.make(&mut m, &input);
            assert!(
                start.elapsed() < PROMPTLY,
                "rank {rank}: the call after the panic took {:?}",
                start.elapsed()
            );
            (poisoned_call, next)
        });
    let mut panicked = BTreeSet::new();
    for (rank, ending) in &endings {
        if let Err(payload) = ending {
            assert_eq!(
                payload_text(&**payload),
                PANIC_TEXT,
                "{what}: rank {rank} panicked, but not with the operator's panic"
            );
            panicked.insert(*rank);
        }
    }
    assert!(
        !panicked.is_empty(),
        "{what}: the operator met the poison, so some member must have panicked: {endings:?}"
    );
    for (rank, ending) in &endings {
        let Ok((poisoned_call, next)) = ending else {
            continue;
        };
        for (which, result) in [
            ("the poisoned call", poisoned_call),
            ("the next call", next),
        ] {
            assert!(
                matches!(result, Err(Error::Broken { by, .. }) if panicked.contains(by)),
                "{what}: rank {rank}, {which}: expected Broken by one of {panicked:?}, got \
                 {result:?}"
            );
        }
    }
}

#[test]
fn panicking_operator_breaks_the_team() {
    for (size, poisoned) in [(2, 0), (2, 1), (5, 2), (5, 4)] {
        for call in [
            WithCall::Reduce(0),
            WithCall::Reduce(size - 1),
            WithCall::Allreduce,
            WithCall::ScanInclusive,
            WithCall::ScanExclusive,
            WithCall::IAllreduce,
        ] {
            // An exclusive scan must combine the poison only if some member after it has a
            // prefix of at least two elements (rank 2 or later); otherwise it may never meet the
            // operator, and nothing need panic.
            if call == WithCall::ScanExclusive && (poisoned + 1).max(2) >= size {
                continue;
            }
            check_panicking_operator(size, poisoned, call);
        }
    }
}
