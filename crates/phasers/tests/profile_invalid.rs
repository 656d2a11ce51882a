//! `PHASERS_PROFILE` naming a broken file: building with `Algorithm::Auto` fails with a message
//! naming the file, concrete algorithms are unaffected, and `resolve` uses the built-in rule.
//!
//! The profile is looked up once per process, so this file holds a single test that sets the
//! variable before anything reads it.

mod profile_support;

use phasers::barrier::{AnyAlgorithm, McsTree, ProfileStatus};
use phasers::{Algorithm, Barrier, Profile};
use profile_support::{invalid_message, party_counts, works, Scratch};

#[test]
fn a_broken_profile_fails_auto_only() {
    let scratch = Scratch::new("profile-invalid");
    let path = scratch.path().join("broken.json");
    std::fs::write(
        &path,
        r#"{"format": "phasers-profile", "version": 1, "cores": "#,
    )
    .unwrap();
    std::env::set_var(Profile::ENV_VAR, &path);

    // A concrete algorithm builds and works whatever the profile holds.
    for algorithm in Algorithm::CONCRETE {
        let barrier = Barrier::with_algorithm(3, algorithm).unwrap();
        assert_eq!(barrier.algorithm(), algorithm);
    }
    works(&Barrier::builder(2).build_static::<McsTree>().unwrap());

    let message = invalid_message(
        Barrier::with_algorithm(2, Algorithm::Auto),
        "Barrier::new with Auto",
    );
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("named by PHASERS_PROFILE"), "{message}");
    assert!(message.contains("not JSON"), "{message}");
    assert!(
        message.contains("re-run `phasers bench barrier --write-profile`"),
        "{message}"
    );
    assert!(message.contains("PHASERS_PROFILE=off"), "{message}");
    for (result, what) in [
        (Barrier::builder(5).build().map(|_| ()), "builder default"),
        (
            Barrier::builder(5)
                .build_static::<AnyAlgorithm>()
                .map(|_| ()),
            "build_static::<AnyAlgorithm>",
        ),
    ] {
        assert_eq!(invalid_message(result, what), message);
    }
    // Bad arguments are reported before the environment, as with PHASERS_WAIT.
    let zero = invalid_message(Barrier::with_algorithm(0, Algorithm::Auto), "zero parties");
    assert!(zero.contains("at least 1"), "{zero}");

    let status = Profile::status();
    assert!(
        matches!(status, ProfileStatus::Invalid { .. }),
        "{status:?}"
    );
    assert_eq!(status.path(), Some(path.as_path()));
    assert_eq!(Profile::active(), None);
    let shown = status.to_string();
    assert!(shown.contains("unusable"), "{shown}");
    assert!(shown.contains(&message), "{shown}");

    // `resolve` cannot fail, so it follows the built-in rule.
    for parties in party_counts() {
        assert_eq!(
            Algorithm::Auto.resolve(parties),
            Algorithm::Auto.resolve_builtin(parties),
            "{parties}"
        );
    }
}
