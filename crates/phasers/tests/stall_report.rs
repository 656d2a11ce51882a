//! A participant that silently stops calling (its handle alive, so nothing breaks) leaves the
//! others waiting; after the stall time they report it, exactly once per object and episode,
//! naming the stopped participant, and once it comes back everything completes as before.
//!
//! Every object gets a stall time of 1 s from its builder; the reports go to a hook that collects
//! them (`stall_support`). Teams and barriers run 64 participants on this 2-core machine, so most
//! waiters are asleep when the stall time passes; phasers and reductions run 8.

mod stall_support;

use std::time::Duration;

use phasers::{Algorithm, Barrier, Mode, Op, Phaser, ReduceAlgorithm, Reduction, Team};
use stall_support::{gate, serial, take_reports, within, STALL};

/// The rank (or registration) that stops.
const STOPPER: usize = 13;

#[test]
fn a_team_member_that_stops_calling_is_reported_once_per_call() {
    let _serial = serial();
    within("team of 64 with a silent member", || {
        const SIZE: usize = 64;
        const CALLS: u64 = 40;
        // The member stops before these calls: twice, so the latch must report a later call.
        const STOPS: [u64; 2] = [7, 23];
        let team = Team::builder(SIZE).stall_after(STALL).build().unwrap();
        let (gate, hold) = gate();
        std::thread::scope(|s| {
            for mut member in team.participants() {
                let hold = &hold;
                s.spawn(move || {
                    for call in 0..CALLS {
                        if member.rank() == STOPPER && STOPS.contains(&call) {
                            hold.hold();
                        }
                        if call % 2 == 0 {
                            member.barrier().unwrap();
                        } else {
                            let mut sum = [0u64];
                            member.allreduce(&[1], &mut sum, Op::Sum).unwrap();
                            assert_eq!(sum, [SIZE as u64]);
                        }
                    }
                });
            }
            for call in STOPS {
                let report = gate.expect_stall("Team of 64", call, &[STOPPER]);
                let line = report.to_string();
                assert!(
                    line.contains(&format!("in call {call} for member(s) [13]")),
                    "{line}"
                );
                assert!(line.contains("PHASERS_STALL"), "{line}");
            }
        });
    });
    assert!(
        take_reports().is_empty(),
        "no report once the member came back"
    );
}

/// One barrier of 64 whose rank `STOPPER` stops before episode 5.
fn barrier_stall(algorithm: Algorithm) {
    const PARTIES: usize = 64;
    const EPISODES: u64 = 12;
    const STOP: u64 = 5;
    let barrier = Barrier::builder(PARTIES)
        .algorithm(algorithm)
        .stall_after(STALL)
        .build()
        .unwrap();
    let object = format!("Barrier ({:?}, 64 participants)", barrier.algorithm());
    let (gate, hold) = gate();
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            let hold = &hold;
            s.spawn(move || {
                for episode in 0..EPISODES {
                    if p.rank() == STOPPER && episode == STOP {
                        hold.hold();
                    }
                    assert_eq!(p.wait().unwrap().episode(), episode);
                }
            });
        }
        let report = gate.expect_stall(&object, STOP, &[STOPPER]);
        assert!(
            report.to_string().contains("in episode 5 for rank(s) [13]"),
            "{report}"
        );
    });
}

#[test]
fn a_barrier_participant_that_stops_is_reported_once() {
    let _serial = serial();
    // The default algorithm, and the trees, whose waiters wait on different words.
    for algorithm in [
        Algorithm::Auto,
        Algorithm::McsTree,
        Algorithm::Tournament,
        Algorithm::CombiningTree,
        Algorithm::Dissemination,
    ] {
        within(&format!("barrier {algorithm} of 64"), move || {
            barrier_stall(algorithm)
        });
        assert!(take_reports().is_empty(), "{algorithm}: no report after");
    }
}

#[test]
fn a_phaser_registration_that_stops_signalling_is_reported_by_id() {
    let _serial = serial();
    within("phaser of 8 with a silent registration", || {
        const PHASES: u64 = 20;
        const STOP: u64 = 9;
        let (phaser, creator) = Phaser::builder().stall_after(STALL).build().unwrap();
        let registrations: Vec<_> = (0..8)
            .map(|_| creator.register(Mode::SigWait).unwrap())
            .collect();
        drop(creator);
        let stopper = registrations[3].id();
        let (gate, hold) = gate();
        std::thread::scope(|s| {
            for mut registration in registrations {
                let hold = &hold;
                s.spawn(move || {
                    for phase in 0..PHASES {
                        if registration.id() == stopper && phase == STOP {
                            hold.hold();
                        }
                        assert_eq!(registration.next().unwrap(), phase);
                    }
                });
            }
            let report = gate.expect_stall("Phaser of 8 signallers", STOP, &[stopper]);
            assert!(
                report
                    .to_string()
                    .contains(&format!("in phase 9 for registration(s) [{stopper}]")),
                "{report}"
            );
        });
        // The tasks leave in phase PHASES; the last leave completes it (issue 31).
        assert_eq!(phaser.phase(), PHASES + 1);
    });
    assert!(take_reports().is_empty());
}

#[test]
fn a_reduction_participant_that_stops_is_reported_once() {
    let _serial = serial();
    for algorithm in [
        ReduceAlgorithm::Linear,
        ReduceAlgorithm::StaticTree,
        ReduceAlgorithm::DynamicGroup,
    ] {
        within(&format!("reduction {algorithm} of 8"), move || {
            const PARTIES: usize = 8;
            const STOPPER: usize = 5;
            const CALLS: u64 = 15;
            const STOP: u64 = 6;
            let group = Reduction::<u64>::builder(PARTIES)
                .op(Op::Sum)
                .algorithm(algorithm)
                .stall_after(STALL)
                .build()
                .unwrap();
            let (gate, hold) = gate();
            std::thread::scope(|s| {
                for mut p in group.participants() {
                    let hold = &hold;
                    s.spawn(move || {
                        for call in 0..CALLS {
                            if p.rank() == STOPPER && call == STOP {
                                hold.hold();
                            }
                            let mut sum = [0u64; 256];
                            p.allreduce(&[1; 256], &mut sum).unwrap();
                            assert_eq!(sum, [PARTIES as u64; 256]);
                        }
                    });
                }
                let object = format!("Reduction ({algorithm:?}, 8 participants)");
                gate.expect_stall(&object, STOP, &[STOPPER]);
            });
        });
        assert!(take_reports().is_empty(), "{algorithm}: no report after");
    }
}

/// Stall reports are off with `Duration::MAX`: a long wait stays silent.
#[test]
fn no_report_when_stall_reports_are_off() {
    let _serial = serial();
    within("barrier with reports off", || {
        let barrier = Barrier::builder(2)
            .algorithm(Algorithm::Counting)
            .stall_after(Duration::MAX)
            .build()
            .unwrap();
        let mut handles = barrier.participants();
        let (mut late, mut early) = (handles.pop().unwrap(), handles.pop().unwrap());
        std::thread::scope(|s| {
            s.spawn(move || early.wait().unwrap());
            std::thread::sleep(STALL + Duration::from_millis(500));
            late.wait().unwrap();
        });
    });
    assert!(take_reports().is_empty());
}

/// A stall is not an error: a timed wait that stalls reports, then still times out at its
/// deadline with the usual error, and the arrival stays in place.
#[test]
fn a_timed_wait_reports_then_times_out_as_before() {
    let _serial = serial();
    within("timed wait past the stall time", || {
        let barrier = Barrier::builder(2)
            .algorithm(Algorithm::McsTree)
            .stall_after(Duration::from_millis(200))
            .build()
            .unwrap();
        let mut handles = barrier.participants();
        let (mut second, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
        match first.wait_timeout(Duration::from_millis(800)) {
            Err(phasers::Error::Timeout {
                episode,
                missing,
                resumable: true,
            }) => {
                assert_eq!((episode, missing), (0, vec![1]))
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
        let reports = take_reports();
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(reports[0].1.missing(), Some(&[1][..]));
        // Waiting again resumes the same episode, already reported: no second report.
        std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(400));
                second.wait().unwrap()
            });
            assert_eq!(first.wait().unwrap().episode(), 0);
        });
        assert!(take_reports().is_empty());
    });
}
