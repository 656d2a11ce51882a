//! `PHASERS_PROFILE` naming a valid profile measured on this machine: `Algorithm::Auto` follows it.
//!
//! The profile is looked up once per process, so this file holds a single test that sets the
//! variable before anything reads it.

mod profile_support;

use phasers::barrier::{AnyAlgorithm, ProfileStatus};
use phasers::{Algorithm, Barrier, Profile};
use profile_support::{entry, party_counts, works, Scratch};

#[test]
fn auto_follows_the_profile_named_by_phasers_profile() {
    let scratch = Scratch::new("profile-env");
    let path = scratch.path().join("tuned.json");
    let profile = Profile::new(
        phasers::available_cores(),
        None,
        Some("tests/profile_env.rs".into()),
        vec![
            entry(1, Algorithm::McsTree),
            entry(3, Algorithm::Dissemination),
        ],
    )
    .unwrap();
    profile.save(&path).unwrap();
    std::env::set_var(Profile::ENV_VAR, &path);

    let status = Profile::status();
    assert!(matches!(status, ProfileStatus::Active { .. }), "{status:?}");
    assert_eq!(status.path(), Some(path.as_path()));
    assert_eq!(Profile::active(), Some(&profile));
    let shown = status.to_string();
    assert!(shown.contains(&path.display().to_string()), "{shown}");
    assert!(shown.contains("in use"), "{shown}");

    for parties in party_counts() {
        let expected = if parties < 3 {
            Algorithm::McsTree
        } else {
            Algorithm::Dissemination
        };
        assert_eq!(Algorithm::Auto.resolve(parties), expected, "{parties}");
        let barrier = Barrier::with_algorithm(parties, Algorithm::Auto).unwrap();
        assert_eq!(barrier.algorithm(), expected, "{parties}");
        // The builder's default, and the statically dispatched `Barrier<AnyAlgorithm>`, are `Auto`.
        assert_eq!(
            Barrier::builder(parties).build().unwrap().algorithm(),
            expected
        );
        let any: Barrier<AnyAlgorithm> = Barrier::builder(parties).build_static().unwrap();
        assert_eq!(any.algorithm(), expected, "{parties}");
    }
    // The profile only concerns `Auto`, and the built-in rule stays available for comparison.
    assert_eq!(
        Barrier::with_algorithm(3, Algorithm::Ticket)
            .unwrap()
            .algorithm(),
        Algorithm::Ticket
    );
    assert_eq!(Algorithm::Ticket.resolve(3), Algorithm::Ticket);
    assert_eq!(Algorithm::Auto.resolve_builtin(2), Algorithm::Counting);

    works(&Barrier::with_algorithm(1, Algorithm::Auto).unwrap());
    works(&Barrier::with_algorithm(4, Algorithm::Auto).unwrap());

    // Read once: deleting the file changes nothing in this process, while a fresh lookup sees it.
    drop(scratch);
    assert_eq!(
        Barrier::with_algorithm(2, Algorithm::Auto)
            .unwrap()
            .algorithm(),
        Algorithm::McsTree
    );
    let fresh = ProfileStatus::detect();
    assert!(matches!(fresh, ProfileStatus::Invalid { .. }), "{fresh:?}");
}
