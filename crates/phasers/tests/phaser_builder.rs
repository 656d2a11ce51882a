//! Building a phaser: the creator's registration, the shape the phaser reports, and bad shapes
//! refused with `Error::InvalidArgument` instead of a phaser that cannot work.

use phasers::{Error, Mode, Phaser, WaitPolicy};

fn expect_invalid(result: phasers::Result<(Phaser, phasers::Registration)>, what: &str) {
    match result {
        Err(Error::InvalidArgument { message }) => {
            assert!(
                !message.is_empty(),
                "{what}: the message says what is wrong"
            )
        }
        Err(other) => panic!("{what}: expected InvalidArgument, got {other:?}"),
        Ok((phaser, _)) => panic!(
            "{what}: built a phaser with {} tier(s) of degree {}",
            phaser.tiers(),
            phaser.degree()
        ),
    }
}

#[test]
fn zero_tiers_is_refused() {
    expect_invalid(Phaser::builder().tiers(0).build(), "tiers 0");
    expect_invalid(
        Phaser::builder().tiers(0).degree(4).build(),
        "tiers 0, degree 4",
    );
}

#[test]
fn a_tree_needs_degree_two_or_more() {
    for tiers in [2, 3] {
        for degree in [0, 1] {
            let what = format!("tiers {tiers}, degree {degree}");
            expect_invalid(Phaser::builder().tiers(tiers).degree(degree).build(), &what);
        }
    }
}

#[test]
fn the_phaser_reports_the_shape_asked_for() {
    for (tiers, degree) in [(1, 16), (2, 2), (2, 4), (3, 2), (2, 16)] {
        let (phaser, creator) = Phaser::builder()
            .tiers(tiers)
            .degree(degree)
            .build()
            .unwrap_or_else(|e| panic!("tiers {tiers}, degree {degree}: {e}"));
        assert_eq!((phaser.tiers(), phaser.degree()), (tiers, degree));
        assert_eq!(phaser.phase(), 0);
        assert_eq!(phaser.signallers(), 1, "the creator");
        assert!(!phaser.is_terminated());
        assert_eq!((creator.id(), creator.phase()), (0, 0));
    }
}

#[test]
fn the_creator_gets_the_mode_it_asks_for() {
    let (_, creator) = Phaser::builder().build().expect("defaults");
    assert_eq!(creator.mode(), Mode::SigWait, "the default mode");
    for mode in [Mode::SigWaitSingle, Mode::SigWait, Mode::Sig] {
        let (phaser, creator) = Phaser::new(mode).expect("a phaser");
        assert_eq!(creator.mode(), mode);
        assert_eq!(phaser.signallers(), 1, "{mode:?} signals");
        let (_, creator) = Phaser::builder().mode(mode).build().expect("a phaser");
        assert_eq!(creator.mode(), mode);
    }
}

/// Defaults chosen from the expected party count, and a wait policy, still give a working phaser.
#[test]
fn defaults_and_wait_policy_build_a_working_phaser() {
    for parties in [1, 2, 8, 64, 1000] {
        let (phaser, mut creator) = Phaser::builder()
            .expected_parties(parties)
            .wait_policy(WaitPolicy::Auto)
            .build()
            .unwrap_or_else(|e| panic!("expected_parties({parties}): {e}"));
        assert!(phaser.tiers() >= 1, "expected_parties({parties})");
        assert!(
            phaser.tiers() == 1 || phaser.degree() >= 2,
            "expected_parties({parties}): a tree of degree {}",
            phaser.degree()
        );
        assert_eq!(creator.next(), Ok(0), "expected_parties({parties}): alone");
    }
}
