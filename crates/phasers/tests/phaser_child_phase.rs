//! A new child starts in its parent's phase. If the parent has not signalled phase `p` yet, the
//! child is in `p` and `p` waits for it too; if the parent already signalled `p` (`signal()`
//! without `wait()` yet), the child starts in `p + 1` and `p` completes without it. For children of
//! every mode, on a flat phaser and on a tree.

use std::time::Duration;

use phasers::{Error, Mode, Phaser, Registration};

const SHAPES: [(usize, usize); 3] = [(1, 16), (2, 2), (3, 2)];

/// The timeout of waits that must complete: a hang detector only.
const HANG: Duration = Duration::from_secs(30);

/// A parent in phase 2 (two phases done), alone on its phaser.
fn parent_in_phase_two(tiers: usize, degree: usize) -> (Phaser, Registration) {
    let (phaser, mut parent) = Phaser::builder()
        .mode(Mode::SigWaitSingle)
        .tiers(tiers)
        .degree(degree)
        .build()
        .expect("a valid phaser");
    for phase in 0..2 {
        assert_eq!(parent.next_timeout(HANG), Ok(phase));
    }
    (phaser, parent)
}

#[test]
fn a_child_registered_before_the_signal_is_in_the_parents_phase() {
    for (tiers, degree) in SHAPES {
        for mode in Mode::ALL {
            let what = format!("tiers {tiers}, degree {degree}, {mode:?} child");
            let (_phaser, mut parent) = parent_in_phase_two(tiers, degree);
            let mut child = parent.register(mode).expect("a child");
            assert_eq!(child.phase(), 2, "{what}");
            if mode.can_signal() {
                // Phase 2 now waits for the child as well.
                match parent.next_timeout(Duration::from_millis(5)) {
                    Err(Error::Timeout {
                        episode,
                        missing,
                        resumable: true,
                    }) => {
                        assert_eq!((episode, missing), (2, vec![child.id()]), "{what}");
                    }
                    other => panic!("{what}: expected phase 2 to wait for the child: {other:?}"),
                }
                if mode.can_wait() {
                    child.signal().expect("the child signals phase 2");
                } else {
                    assert_eq!(child.next(), Ok(2), "{what}: the Sig child signals phase 2");
                }
                assert_eq!(parent.wait_timeout(HANG), Ok(2), "{what}");
            } else {
                assert_eq!(
                    parent.next_timeout(HANG),
                    Ok(2),
                    "{what}: a Wait child holds nothing back"
                );
                assert_eq!(
                    child.wait_timeout(HANG),
                    Ok(2),
                    "{what}: the Wait child waits for phase 2"
                );
            }
        }
    }
}

#[test]
fn a_child_registered_after_the_signal_starts_in_the_next_phase() {
    for (tiers, degree) in SHAPES {
        for mode in Mode::ALL {
            let what = format!("tiers {tiers}, degree {degree}, {mode:?} child");
            let (_phaser, mut parent) = parent_in_phase_two(tiers, degree);
            parent.signal().expect("the parent signals phase 2");
            let child = parent.register(mode).expect("a child");
            assert_eq!(
                child.phase(),
                3,
                "{what}: the parent signalled phase 2, so its child starts in phase 3"
            );
            // Phase 2 completes without the child.
            assert_eq!(parent.wait_timeout(HANG), Ok(2), "{what}");
            if mode.can_signal() {
                match parent.next_timeout(Duration::from_millis(5)) {
                    Err(Error::Timeout {
                        episode,
                        missing,
                        resumable: true,
                    }) => {
                        assert_eq!((episode, missing), (3, vec![child.id()]), "{what}");
                    }
                    other => panic!("{what}: expected phase 3 to wait for the child: {other:?}"),
                }
            }
        }
    }
}
