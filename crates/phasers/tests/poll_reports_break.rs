//! A poll reports what the wait would (issue 31's audit): a wait with a zero timeout, the poll
//! form of every blocking wait, returns `Error::Broken` once the object is broken, never
//! `Error::Timeout`, which would tell a polling loop to go on polling for ever. Before the loss
//! the same poll times out, and says that waiting again resumes.
//!
//! Barriers of every algorithm, a phaser (a registration and a handle-less `await_phase`), and a
//! team's pending call, each polled before and after one participant is lost.

use std::time::Duration;

use phasers::{Algorithm, Barrier, Error, Mode, Phaser, Team};

/// The poll of a wait.
const POLL: Duration = Duration::ZERO;

fn assert_resumable_timeout<T: std::fmt::Debug>(what: &str, result: phasers::Result<T>) {
    assert!(
        matches!(
            result,
            Err(Error::Timeout {
                resumable: true,
                ..
            })
        ),
        "{what}: before the loss a poll must time out, resumably: {result:?}"
    );
}

fn assert_broken_by<T: std::fmt::Debug>(what: &str, result: phasers::Result<T>, lost: usize) {
    assert!(
        matches!(result, Err(Error::Broken { by, .. }) if by == lost),
        "{what}: after the loss a poll must say Broken by {lost}: {result:?}"
    );
}

#[test]
fn a_barrier_poll_reports_a_dropped_participant() {
    for algorithm in std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE) {
        let what = format!("{algorithm:?}");
        let barrier = Barrier::with_algorithm(3, algorithm).expect("a valid barrier");
        let mut handles = barrier.participants();
        let lost = handles.pop().expect("rank 2");
        let mut first = handles.remove(0);
        assert_resumable_timeout(&what, first.wait_timeout(POLL));
        drop(lost);
        assert_broken_by(&what, first.wait_timeout(POLL), 2);
        assert_broken_by(&what, first.wait_timeout(POLL), 2); // and it stays so
    }
}

#[test]
fn a_phaser_poll_reports_a_registration_lost_in_a_panic() {
    for tiers in [1, 2] {
        let what = format!("{tiers} tier(s)");
        let (phaser, mut creator) = Phaser::builder()
            .mode(Mode::SigWait)
            .tiers(tiers)
            .degree(2)
            .build()
            .expect("a valid phaser");
        let lost = creator.register(Mode::SigWait).expect("a registration");
        let lost_id = lost.id();
        assert_resumable_timeout(&what, creator.next_timeout(POLL));
        assert_resumable_timeout(&what, phaser.await_phase_timeout(0, POLL));
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {})); // the one panic below is on purpose
        let panicked = std::thread::spawn(move || {
            let _held = lost;
            panic!("deliberate panic holding a registration");
        })
        .join();
        std::panic::set_hook(hook);
        assert!(panicked.is_err());
        // The creator signalled phase 0 in its first poll; its wait now learns of the loss.
        assert_broken_by(&what, creator.wait_timeout(POLL), lost_id);
        assert_broken_by(&what, phaser.await_phase_timeout(0, POLL), lost_id);
    }
}

#[test]
fn a_team_poll_reports_a_dropped_member() {
    let team = Team::new(2).expect("a valid team");
    let (mut first, second) = (
        team.participant(0).expect("rank 0"),
        team.participant(1).expect("rank 1"),
    );
    let mut pending = first.ibarrier().expect("the call starts");
    assert_resumable_timeout("team", pending.wait_timeout(POLL));
    assert_eq!(pending.test(), Ok(false));
    drop(second);
    assert_broken_by("team", pending.wait_timeout(POLL), 1);
    assert_broken_by("team", pending.test(), 1);
}
