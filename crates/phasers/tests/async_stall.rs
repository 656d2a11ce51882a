//! Stall reports for async tasks: a task left waiting (polled once, then never again, as a stalled
//! task is) on a phaser, an observed phase, a barrier or a team call is reported by the stall
//! watchdog, once, naming who is missing, within a few multiples of a short stall time; nothing
//! is reported when nothing stalls or when the object's reports are off; and the watchdog keeps
//! no object alive.
//!
//! The reports go to `stall_support`'s collecting hook; its `serial` lock keeps one test at a time.
//! Every test runs under `executor_support`'s `within`, so nothing hangs.

mod executor_support;
mod stall_support;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use executor_support::{poll_once, within};
use phasers::{Algorithm, Barrier, Mode, Phaser, StallReport, Team};
use stall_support::{serial, take_reports};

/// The objects' stall time: short, so that the tests are quick.
const STALL: Duration = Duration::from_millis(200);
/// How long a report may take: the stall time, the watchdog's period (a quarter of it) and a
/// wake-up on a busy 2-core machine.
const LATE: Duration = Duration::from_secs(3);
/// How long the quiet tests wait for a report that must not come: many stall times.
const QUIET: Duration = Duration::from_millis(1200);

/// Waits up to [`LATE`] for the first report, then a little more for a second one that must not
/// come; returns the one report and how long after `start` it came.
fn one_report(start: Instant) -> (StallReport, Duration) {
    stall_support::one_report(start, LATE, STALL)
}

fn assert_quiet() {
    std::thread::sleep(QUIET);
    let lines: Vec<_> = take_reports().iter().map(|(_, r)| r.to_string()).collect();
    assert!(lines.is_empty(), "no report expected: {lines:#?}");
}

#[test]
fn a_task_stalled_on_a_phaser_is_reported_naming_the_missing() {
    let _serial = serial();
    within(|| {
        let (_phaser, mut waiter) = Phaser::builder().stall_after(STALL).build().unwrap();
        let late = waiter.register(Mode::SigWait).unwrap();
        let start = Instant::now();
        let mut next = waiter.next_async();
        assert!(poll_once(&mut next).is_pending());
        let (report, came) = one_report(start);
        assert!(came >= STALL, "reported after {came:?}");
        assert_eq!(report.object(), "Phaser of 2 signallers");
        assert_eq!(report.episode(), 0);
        assert_eq!(report.missing(), Some(&[late.id()][..]));
        assert!(report.waited() > Duration::ZERO, "{report}");
        let line = report.to_string();
        assert!(line.contains("in phase 0 for registration(s)"), "{line}");
        drop(next);
    });
}

#[test]
fn a_task_awaiting_a_phase_is_reported() {
    let _serial = serial();
    within(|| {
        let (phaser, creator) = Phaser::builder().stall_after(STALL).build().unwrap();
        let start = Instant::now();
        let mut observed = phaser.await_phase_async(0);
        assert!(poll_once(&mut observed).is_pending());
        let (report, _) = one_report(start);
        assert_eq!(report.object(), "Phaser of 1 signallers");
        assert_eq!(report.missing(), Some(&[creator.id()][..]));
        drop(observed);
    });
}

#[test]
fn a_task_stalled_on_a_barrier_is_reported_naming_the_missing() {
    let _serial = serial();
    within(|| {
        let barrier = Barrier::builder(3)
            .algorithm(Algorithm::Counting)
            .stall_after(STALL)
            .build()
            .unwrap();
        let mut handles = barrier.participants();
        let mut first = handles.remove(0);
        let start = Instant::now();
        let mut wait = first.wait_async();
        assert!(poll_once(&mut wait).is_pending());
        let (report, came) = one_report(start);
        assert!(came >= STALL, "reported after {came:?}");
        assert_eq!(report.object(), "Barrier (Counting, 3 participants)");
        assert_eq!(report.episode(), 0);
        assert_eq!(report.missing(), Some(&[1, 2][..]));
        assert!(report
            .to_string()
            .contains("in episode 0 for rank(s) [1, 2]"));
        drop(wait);
    });
}

#[test]
fn a_task_stalled_in_a_team_call_is_reported_naming_the_missing() {
    let _serial = serial();
    within(|| {
        let team = Team::builder(2).stall_after(STALL).build().unwrap();
        let mut members = team.participants();
        let mut late = members.pop().unwrap();
        let mut early = members.pop().unwrap();
        // One call completes with both, so the stalled one is call 1.
        std::thread::scope(|s| {
            s.spawn(|| late.barrier().unwrap());
            early.barrier().unwrap();
        });
        let start = Instant::now();
        let mut pending = early.ibarrier().unwrap();
        let mut wait = pending.wait_async();
        assert!(poll_once(&mut wait).is_pending());
        let (report, _) = one_report(start);
        assert_eq!(report.object(), "Team of 2");
        assert_eq!(report.episode(), 1);
        assert_eq!(report.missing(), Some(&[1][..]));
        assert!(report.to_string().contains("in call 1 for member(s) [1]"));
        // The late member comes (with the same form, as checked mode wants): the call completes,
        // and nothing more is reported.
        std::thread::scope(|s| {
            s.spawn(|| late.ibarrier().unwrap().wait().unwrap());
            executor_support::block_on(wait).unwrap();
        });
        drop(pending);
        assert_quiet();
    });
}

#[test]
fn tasks_that_keep_going_are_not_reported() {
    let _serial = serial();
    within(|| {
        let (_phaser, mut first) = Phaser::builder().stall_after(STALL).build().unwrap();
        let mut second = first.register(Mode::SigWait).unwrap();
        // Each phase's first poll leaves `first` waiting until `second` signals; the phases take
        // far less than the stall time, and the last one completes.
        let until = Instant::now() + QUIET;
        while Instant::now() < until {
            let mut next = first.next_async();
            assert!(poll_once(&mut next).is_pending());
            second.next().unwrap();
            assert!(matches!(poll_once(&mut next), Poll::Ready(Ok(_))));
            std::thread::sleep(STALL / 10);
        }
        assert_quiet();
    });
}

#[test]
fn reports_are_off_when_the_object_says_so() {
    let _serial = serial();
    within(|| {
        let (_phaser, mut waiter) = Phaser::builder()
            .stall_after(Duration::MAX)
            .build()
            .unwrap();
        let _late = waiter.register(Mode::SigWait).unwrap();
        let mut next = waiter.next_async();
        assert!(poll_once(&mut next).is_pending());
        // Another object with a short stall time keeps the watchdog looking often.
        let (_other, mut other) = Phaser::builder().stall_after(STALL).build().unwrap();
        assert!(matches!(
            poll_once(&mut other.next_async()),
            Poll::Ready(Ok(0))
        ));
        assert_quiet();
        drop(next);
    });
}

#[test]
fn the_watchdog_keeps_no_object_alive() {
    let _serial = serial();
    within(|| {
        // The phaser's advance action owns `alive`: it goes when the phaser's state is freed.
        let alive = Arc::new(());
        let freed = Arc::downgrade(&alive);
        let (phaser, mut waiter) = Phaser::builder()
            .stall_after(STALL)
            .on_advance(move |_, _| {
                let _ = &alive;
                ControlFlow::Continue(())
            })
            .build()
            .unwrap();
        let late = waiter.register(Mode::SigWait).unwrap();
        let start = Instant::now();
        let mut next = waiter.next_async();
        assert!(poll_once(&mut next).is_pending());
        // Reported: the watchdog has the phaser in its list.
        one_report(start);
        drop(next);
        drop((phaser, waiter, late));
        // The watchdog may be looking at it this very moment (it holds it for the look): it is
        // freed by the end of the look.
        let until = Instant::now() + LATE;
        while freed.upgrade().is_some() {
            assert!(Instant::now() < until, "the phaser is still alive");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_quiet();
    });
}
