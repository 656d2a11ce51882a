//! A polled non-blocking collective reports a lost member as its wait would (issue 31).
//!
//! `Pending::test()` used to return `Ok(false)` for ever once a member was lost, while `wait()`
//! returned `Error::Broken` at once, so a program that polls (as MPI_Test does) spun for ever.
//! Here every survivor starts one of the ten non-blocking collectives and polls it with
//! `test()` while another member is dropped, or panics, after the survivors started: every
//! survivor must get `Broken` naming the lost member, within [`PROMPTLY`] of the loss, at 2, 8
//! and 64 members (64 threads oversubscribe a 2-core machine 32 times).
//!
//! Every case runs under the hang watchdog, so a poll that never ends fails after 20 seconds.

mod team_support;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use phasers::{Error, SyncMode, Team};
use team_support::{make_call, payload_text, run_each_within, Case, Collective, OpKind, Style};

/// How soon after the loss every survivor must have its error (the bound). The survivors
/// poll with a yield in between, so on 2 cores each gets the core within a round of the others.
const PROMPTLY: Duration = Duration::from_millis(50);

/// How long the lost member waits before it goes: long enough that the survivors have started
/// their calls and are polling.
const BEFORE_LOSS: Duration = Duration::from_millis(30);

/// How the member is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loss {
    Drop,
    Panic,
}

const PANIC_TEXT: &str = "deliberate panic while the others poll";

#[test]
fn polled_collectives_report_a_lost_member() {
    let hook = std::panic::take_hook();
    // The deliberate panics would otherwise print a backtrace note per case.
    std::panic::set_hook(Box::new(move |info| {
        if payload_text(info.payload()) != PANIC_TEXT {
            hook(info);
        }
    }));
    for size in [2, 8, 64] {
        for collective in Collective::ALL {
            for loss in [Loss::Drop, Loss::Panic] {
                polled_call_under_loss(size, collective, loss);
            }
        }
    }
}

fn polled_call_under_loss(size: usize, collective: Collective, loss: Loss) {
    // The root is a survivor, and the lost member is neither the first nor the last rank.
    let lost = size / 2;
    let root = 0;
    let what = format!("{collective:?} polled by {size} members, member {lost} lost by {loss:?}");
    let case = Case {
        collective,
        root,
        len: 20,
        op: OpKind::Sum,
        style: Style::Poll,
        sync: SyncMode::AllSync,
        seed: size as u64,
    };
    let team = Team::new(size).expect("a valid team");
    let lost_at: Arc<OnceLock<Instant>> = Arc::new(OnceLock::new());
    let lost_at_for_members = Arc::clone(&lost_at);
    let outcomes = run_each_within(&what, team.participants(), move |mut member| {
        if member.rank() == lost {
            std::thread::sleep(BEFORE_LOSS);
            lost_at_for_members.set(Instant::now()).expect("one loss");
            match loss {
                Loss::Drop => drop(member),
                Loss::Panic => panic!("{PANIC_TEXT}"),
            }
            return None;
        }
        let result = make_call::<u64>(&mut member, &case);
        Some((result.map(drop), Instant::now()))
    });
    let lost_at = *lost_at.get().expect("the lost member went");
    for (rank, outcome) in outcomes {
        match outcome {
            Err(payload) => {
                assert_eq!(
                    rank,
                    lost,
                    "{what}: member {rank} panicked: {}",
                    payload_text(&*payload)
                );
                assert_eq!(loss, Loss::Panic, "{what}: member {rank} panicked");
            }
            Ok(None) => assert_eq!(rank, lost, "{what}"),
            Ok(Some((result, ended))) => {
                assert!(
                    matches!(result, Err(Error::Broken { by, .. }) if by == lost),
                    "{what}: member {rank}'s polled call returned {result:?}, not Broken by {lost}"
                );
                let late = ended.saturating_duration_since(lost_at);
                assert!(
                    late <= PROMPTLY,
                    "{what}: member {rank} learned of the loss {late:?} after it (at most \
                     {PROMPTLY:?})"
                );
            }
        }
    }
}
