//! `PHASERS_PROFILE=off` ignores profiles, even a broken one at the default path, which would
//! otherwise make building with `Algorithm::Auto` fail.
//!
//! The profile is looked up once per process, so this file holds a single test that sets the
//! variables before anything reads them.

mod profile_support;

use phasers::barrier::ProfileStatus;
use phasers::{Algorithm, Barrier, Profile};
use profile_support::{party_counts, works, Scratch};

#[test]
fn off_ignores_even_a_broken_default_profile() {
    let scratch = Scratch::new("profile-off");
    std::env::set_var("XDG_CONFIG_HOME", scratch.path());
    std::env::set_var(Profile::ENV_VAR, " Off ");
    let path = Profile::default_path().expect("XDG_CONFIG_HOME is an absolute path");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "not a profile").unwrap();

    assert_eq!(*Profile::status(), ProfileStatus::Disabled);
    assert_eq!(Profile::active(), None);
    for parties in party_counts() {
        let barrier = Barrier::with_algorithm(parties, Algorithm::Auto).unwrap();
        assert_eq!(
            barrier.algorithm(),
            Algorithm::Auto.resolve_builtin(parties)
        );
    }
    works(&Barrier::with_algorithm(2, Algorithm::Auto).unwrap());

    // Without the variable, the same broken default file would be an error naming it.
    std::env::remove_var(Profile::ENV_VAR);
    let status = ProfileStatus::detect();
    let Some(phasers::Error::InvalidArgument { message }) = status.error() else {
        panic!("expected the broken default profile to be invalid, got {status:?}");
    };
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("delete it"), "{message}");
    assert!(message.contains("PHASERS_PROFILE=off"), "{message}");
    // The process keeps what it found first.
    assert_eq!(*Profile::status(), ProfileStatus::Disabled);
}
