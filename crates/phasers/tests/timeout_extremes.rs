//! Every timeout API at the ends of its range (issue 21): `Duration::MAX` means "no deadline"
//! and never overflows, `Duration::ZERO` only checks, and a deadline in the past does the same.
//! With nothing missing each returns at once; with someone missing, ZERO and a past deadline
//! time out at once, naming who is missing.

use std::time::{Duration, Instant};

use phasers::{Algorithm, Barrier, Error, Mode, Phaser};

/// Every algorithm a barrier can be built with: `Auto` and the concrete ones.
fn algorithms() -> impl Iterator<Item = Algorithm> {
    std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE)
}

/// "At once": far below anything a wait would take, far above a loaded machine's scheduling
/// noise.
const AT_ONCE: Duration = Duration::from_secs(1);

fn quickly<R>(what: &str, f: impl FnOnce() -> R) -> R {
    let start = Instant::now();
    let result = f();
    assert!(
        start.elapsed() < AT_ONCE,
        "{what} took {:?}",
        start.elapsed()
    );
    result
}

#[test]
fn a_lone_participant_passes_with_any_timeout() {
    for algorithm in algorithms() {
        let barrier = Barrier::with_algorithm(1, algorithm).unwrap();
        let mut only = barrier.participant(0).unwrap();
        let what = format!("{algorithm:?}");
        quickly(&what, || {
            assert_eq!(only.wait_timeout(Duration::MAX).unwrap().episode(), 0);
            assert_eq!(only.wait_timeout(Duration::ZERO).unwrap().episode(), 1);
            let past = Instant::now() - Duration::from_millis(5);
            assert_eq!(only.wait_deadline(past).unwrap().episode(), 2);
        });
    }
}

#[test]
fn zero_and_a_past_deadline_time_out_at_once_naming_the_missing() {
    for algorithm in algorithms() {
        let barrier = Barrier::with_algorithm(2, algorithm).unwrap();
        let mut handles = barrier.participants();
        let mut late = handles.pop().unwrap();
        let mut early = handles.pop().unwrap();
        let what = format!("{algorithm:?}");
        let expected = Error::Timeout {
            episode: 0,
            missing: vec![1],
            resumable: true,
        };
        quickly(&what, || {
            assert_eq!(early.wait_timeout(Duration::ZERO).unwrap_err(), expected);
            let past = Instant::now() - Duration::from_millis(5);
            assert_eq!(early.wait_deadline(past).unwrap_err(), expected);
        });
        // The arrival stayed in place: once the other arrives, waiting with no deadline at all
        // (Duration::MAX) completes the same episode for both.
        std::thread::scope(|s| {
            let other = s.spawn(move || late.wait_timeout(Duration::MAX).map(|r| r.episode()));
            assert_eq!(early.wait_timeout(Duration::MAX).unwrap().episode(), 0);
            assert_eq!(other.join().unwrap().unwrap(), 0);
        });
    }
}

#[test]
fn a_lone_registration_passes_with_any_timeout() {
    let (_phaser, mut creator) = Phaser::new(Mode::SigWait).unwrap();
    quickly("phaser", || {
        assert_eq!(creator.next_timeout(Duration::MAX).unwrap(), 0);
        assert_eq!(creator.next_timeout(Duration::ZERO).unwrap(), 1);
        creator.signal().unwrap();
        assert_eq!(creator.wait_timeout(Duration::MAX).unwrap(), 2);
        creator.signal().unwrap();
        assert_eq!(creator.wait_timeout(Duration::ZERO).unwrap(), 3);
    });
}

#[test]
fn a_registration_times_out_at_once_on_zero_naming_the_missing() {
    let (_phaser, mut creator) = Phaser::new(Mode::SigWait).unwrap();
    let mut late = creator.register(Mode::SigWait).unwrap();
    let late_id = late.id();
    quickly("phaser", || {
        let error = creator.next_timeout(Duration::ZERO).unwrap_err();
        assert!(
            matches!(&error, Error::Timeout { episode: 0, missing, resumable: true } if *missing == [late_id]),
            "{error:?}"
        );
        let error = creator.wait_timeout(Duration::ZERO).unwrap_err();
        assert!(
            matches!(error, Error::Timeout { episode: 0, .. }),
            "{error:?}"
        );
    });
    late.signal().unwrap();
    assert_eq!(creator.next_timeout(Duration::MAX).unwrap(), 0);
}
