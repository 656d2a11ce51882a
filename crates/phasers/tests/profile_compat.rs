//! Profile files users already have keep loading.
//!
//! The fixtures in `tests/fixtures/` were written by `Profile::save` of the code before the
//! profile moved to `src/tune/` (commit 6492567): one as `phasers bench barrier --write-profile` wrote it then, without
//! floors; one with the floors `phasers bench barrier --write-profile` records now; one without any optional field. Each
//! must load with every field as written, and saving it again must give the same bytes, so a file
//! written by this build reads the same in an older one.

use std::path::PathBuf;
use std::time::Duration;

use phasers::{Algorithm, FloorsSource, Profile, ProfileEntry};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join(name)
}

/// The entries both full fixtures hold: every concrete algorithm once, by its written name.
fn full_entries() -> Vec<ProfileEntry> {
    let entry = |threads, algorithm, median_ns| ProfileEntry {
        threads,
        algorithm,
        median_ns: Some(median_ns),
    };
    vec![
        entry(1, Algorithm::Counting, 26.1),
        entry(2, Algorithm::Dissemination, 139.0),
        entry(4, Algorithm::SenseReversing, 4100.0),
        entry(8, Algorithm::McsTree, 8213.75),
        entry(16, Algorithm::CombiningTree, 0.0),
        entry(32, Algorithm::Tournament, 31337.5),
        entry(64, Algorithm::Ticket, 150000.0),
    ]
}

/// Loads `name`, checks that saving it again writes the fixture's bytes, and returns it.
fn load_and_rewrite(name: &str) -> Profile {
    let path = fixture(name);
    let profile = Profile::load(&path).unwrap_or_else(|error| panic!("{name}: {error}"));
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(profile.to_json(), written, "{name}: rewritten differently");
    assert_eq!(Profile::from_json(&written).unwrap(), profile, "{name}");

    let dir = std::env::temp_dir().join(format!("phasers-compat-{name}-{}", std::process::id()));
    let copy = dir.join(name);
    profile.save(&copy).unwrap();
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), written, "{name}");
    std::fs::remove_dir_all(&dir).unwrap();
    profile
}

#[test]
fn a_profile_as_phasers_tune_wrote_it_loads_with_every_field() {
    let profile = load_and_rewrite("profile_v1_full.json");
    assert_eq!(profile.cores(), 2);
    assert_eq!(profile.cpu_model(), Some("Intel(R) Xeon(R) CPU @ 2.50GHz"));
    assert_eq!(
        profile.created_by(),
        Some("phasers tune 0.1.0 (quick mode)")
    );
    assert_eq!(profile.created_unix_s(), Some(1_795_700_787));
    assert_eq!(profile.entries(), full_entries().as_slice());
    assert_eq!(profile.floors(), None);
    assert_eq!(profile.choose(3), Algorithm::Dissemination);
    assert_eq!(profile.choose(1000), Algorithm::Ticket);
}

#[test]
fn a_profile_with_floors_loads_them() {
    let profile = load_and_rewrite("profile_v1_floors.json");
    assert_eq!(profile.cores(), 2);
    assert_eq!(profile.cpu_model(), Some("Intel(R) Xeon(R) CPU @ 2.50GHz"));
    assert_eq!(
        profile.created_by(),
        Some("phasers tune 0.1.0 (quick mode)")
    );
    assert_eq!(profile.created_unix_s(), Some(1_795_700_787));
    assert_eq!(profile.entries(), full_entries().as_slice());
    let floors = profile.floors().expect("the fixture records floors");
    assert_eq!(floors.round_trip(), Duration::from_nanos(187));
    assert_eq!(floors.yield_handoff(), Duration::from_nanos(1_234));
    assert_eq!(floors.wake(), Duration::from_nanos(21_987));
    assert_eq!(floors.source(), FloorsSource::Profile);
}

#[test]
fn a_profile_without_the_optional_fields_loads() {
    let profile = load_and_rewrite("profile_v1_minimal.json");
    assert_eq!(profile.cores(), 4);
    assert_eq!(profile.cpu_model(), None);
    assert_eq!(profile.created_by(), None);
    assert_eq!(profile.created_unix_s(), None);
    assert_eq!(profile.floors(), None);
    assert_eq!(
        profile.entries(),
        &[ProfileEntry {
            threads: 3,
            algorithm: Algorithm::Tournament,
            median_ns: None,
        }]
    );
    // Below the only entry's thread count, that entry still applies.
    assert_eq!(profile.choose(1), Algorithm::Tournament);
}
