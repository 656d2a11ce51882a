//! `Algorithm` names: every name round-trips through `Display` and `FromStr`, the documented
//! aliases parse, and a bad name is an error that lists the valid ones.

use phasers::{Algorithm, Error};

/// `Auto` and every concrete algorithm.
fn every() -> impl Iterator<Item = Algorithm> {
    std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE)
}

#[test]
fn every_name_round_trips() {
    for algorithm in every() {
        let name = algorithm.to_string();
        assert_eq!(name, algorithm.name());
        assert_eq!(name.parse::<Algorithm>(), Ok(algorithm), "{name}");
        // Case, surrounding space and underscores for dashes do not matter.
        assert_eq!(
            name.to_uppercase().parse::<Algorithm>(),
            Ok(algorithm),
            "{name}"
        );
        assert_eq!(
            format!(" {name}\t").parse::<Algorithm>(),
            Ok(algorithm),
            "{name}"
        );
        assert_eq!(
            name.replace('-', "_").parse::<Algorithm>(),
            Ok(algorithm),
            "{name}"
        );
    }
}

#[test]
fn names_are_distinct_and_concrete_excludes_auto() {
    let names: Vec<&str> = every().map(Algorithm::name).collect();
    for (i, name) in names.iter().enumerate() {
        assert!(!names[i + 1..].contains(name), "{name} is used twice");
    }
    assert!(!Algorithm::CONCRETE.contains(&Algorithm::Auto));
    assert_eq!(Algorithm::default(), Algorithm::Auto);
    // Concrete algorithms resolve to themselves whatever the party count.
    for algorithm in Algorithm::CONCRETE {
        for parties in [1, 2, 64, 1 << 16] {
            assert_eq!(algorithm.resolve(parties), algorithm);
        }
    }
}

#[test]
fn documented_aliases_parse() {
    for (alias, algorithm) in [
        ("sense", Algorithm::SenseReversing),
        ("central", Algorithm::SenseReversing),
        ("two-generation", Algorithm::Counting),
        ("tree", Algorithm::CombiningTree),
        ("combining", Algorithm::CombiningTree),
        ("mcs-tree", Algorithm::McsTree),
        ("MCS_Tree", Algorithm::McsTree),
    ] {
        assert_eq!(alias.parse::<Algorithm>(), Ok(algorithm), "{alias}");
    }
}

#[test]
fn bad_name_lists_the_valid_ones() {
    for bad in ["", "bogus", "mcs tree", "sense-reversing!", "tournaments"] {
        match bad.parse::<Algorithm>() {
            Err(Error::InvalidArgument { message }) => {
                assert!(message.contains(&format!("{bad:?}")), "{message}");
                for algorithm in every() {
                    assert!(
                        message.contains(algorithm.name()),
                        "{bad:?}: the message should list {}: {message}",
                        algorithm.name()
                    );
                }
            }
            other => panic!("{bad:?}: expected InvalidArgument, got {other:?}"),
        }
    }
}
