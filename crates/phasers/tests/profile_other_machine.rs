//! A valid profile measured with another core count is set aside: `Algorithm::Auto` follows the
//! built-in rule, and the status says why. Not an error.
//!
//! The profile is looked up once per process, so this file holds a single test that sets the
//! variable before anything reads it.

mod profile_support;

use phasers::barrier::ProfileStatus;
use phasers::{Algorithm, Barrier, Profile};
use profile_support::{entry, party_counts, works, Scratch};

#[test]
fn a_profile_from_another_machine_shape_is_ignored() {
    let scratch = Scratch::new("profile-other-machine");
    let path = scratch.path().join("elsewhere.json");
    let cores = phasers::available_cores();
    // The built-in rule never picks the MCS tree, so following this profile would show.
    Profile::new(cores + 1, None, None, vec![entry(1, Algorithm::McsTree)])
        .unwrap()
        .save(&path)
        .unwrap();
    std::env::set_var(Profile::ENV_VAR, &path);

    for parties in party_counts() {
        let builtin = Algorithm::Auto.resolve_builtin(parties);
        assert_ne!(builtin, Algorithm::McsTree);
        assert_eq!(Algorithm::Auto.resolve(parties), builtin, "{parties}");
        let barrier = Barrier::with_algorithm(parties, Algorithm::Auto).unwrap();
        assert_eq!(barrier.algorithm(), builtin, "{parties}");
    }
    works(&Barrier::with_algorithm(3, Algorithm::Auto).unwrap());

    let status = Profile::status();
    assert_eq!(
        *status,
        ProfileStatus::Ignored {
            path: path.clone(),
            profile_cores: cores + 1,
            machine_cores: cores,
        }
    );
    assert_eq!(Profile::active(), None);
    assert_eq!(status.error(), None);
    let shown = status.to_string();
    assert!(shown.contains("ignored"), "{shown}");
    assert!(
        shown.contains(&format!("measured on {} cores", cores + 1)),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("this machine has {cores}")),
        "{shown}"
    );
}
