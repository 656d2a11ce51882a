//! A polled non-blocking collective reports a lost member as its wait would (issue 31).
//!
//! `Pending::test()` used to return `Ok(false)` for ever once a member was lost, while `wait()`
//! returned `Error::Broken` at once, so a program that polls (as MPI_Test does) spun for ever.
//! Here every survivor starts one of the ten non-blocking collectives and polls it with
//! `test()` while another member is dropped, or panics, after the survivors started: every
//! survivor must get `Broken` naming the lost member, within 50 ms of the loss, at 2, 8 and 64
//! members (64 threads oversubscribe a 2-core machine 32 times).
//!
//! Every case runs under the hang watchdog, so a poll that never ends fails after 20 seconds.

mod loss_support;
mod team_support;

use loss_support::{quiet_deliberate_panics, Loss, LossClock};
use phasers::{Error, SyncMode, Team};
use team_support::{make_call, payload_text, run_each_within, Case, Collective, OpKind, Style};

#[test]
fn polled_collectives_report_a_lost_member() {
    quiet_deliberate_panics();
    for size in [2, 8, 64] {
        for collective in Collective::ALL {
            for loss in Loss::BOTH {
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
    let clock = LossClock::default();
    let losing = clock.clone();
    let outcomes = run_each_within(&what, team.participants(), move |mut member| {
        if member.rank() == lost {
            losing.lose(member, loss);
            return None;
        }
        let result = make_call::<u64>(&mut member, &case);
        Some((result.map(drop), std::time::Instant::now()))
    });
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
                clock.assert_prompt(&what, &format!("member {rank}"), ended);
            }
        }
    }
}
