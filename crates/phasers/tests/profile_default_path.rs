//! With `PHASERS_PROFILE` unset, the profile at `$XDG_CONFIG_HOME/phasers/profile.json` is used.
//!
//! The profile is looked up once per process, so this file holds a single test that sets the
//! variables before anything reads them.

mod profile_support;

use phasers::barrier::ProfileStatus;
use phasers::{Algorithm, Barrier, Profile};
use profile_support::{entry, works, Scratch};

#[test]
fn the_profile_at_the_default_path_is_used() {
    let scratch = Scratch::new("profile-default-path");
    std::env::remove_var(Profile::ENV_VAR);
    std::env::set_var("XDG_CONFIG_HOME", scratch.path());

    let path = Profile::default_path().expect("XDG_CONFIG_HOME is an absolute path");
    assert_eq!(path, scratch.path().join("phasers").join("profile.json"));
    Profile::new(
        phasers::available_cores(),
        None,
        None,
        vec![
            entry(1, Algorithm::Counting),
            entry(2, Algorithm::Tournament),
        ],
    )
    .unwrap()
    .save(&path)
    .unwrap();

    let status = Profile::status();
    assert!(matches!(status, ProfileStatus::Active { .. }), "{status:?}");
    assert_eq!(status.path(), Some(path.as_path()));
    assert_eq!(
        Barrier::with_algorithm(1, Algorithm::Auto)
            .unwrap()
            .algorithm(),
        Algorithm::Counting
    );
    let barrier = Barrier::with_algorithm(3, Algorithm::Auto).unwrap();
    assert_eq!(barrier.algorithm(), Algorithm::Tournament);
    works(&barrier);
}
