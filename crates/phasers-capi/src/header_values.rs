//! The header's constants must equal the values this crate gives them: the header is written by
//! hand, so this test is what keeps the two in step.

use std::ffi::c_int;

use crate::enums::{ALGORITHMS, ELEMENT_TYPES, MODES, OPS, REDUCE_ALGORITHMS};
use crate::status::*;

const HEADER: &str = include_str!("../include/phasers.h");

/// The value the header gives `name` (`NAME = value` inside an enum).
fn header_value(name: &str) -> c_int {
    let pattern = format!("{name} = ");
    let at = HEADER
        .find(&pattern)
        .unwrap_or_else(|| panic!("phasers.h does not define {name}"));
    let digits: String = HEADER[at + pattern.len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().expect("enum values are decimal")
}

#[test]
fn status_codes_match() {
    let codes = [
        ("PHASERS_OK", PHASERS_OK),
        ("PHASERS_EINVAL", PHASERS_EINVAL),
        ("PHASERS_ENULL", PHASERS_ENULL),
        ("PHASERS_EDESTROYED", PHASERS_EDESTROYED),
        ("PHASERS_ETIMEDOUT", PHASERS_ETIMEDOUT),
        ("PHASERS_EBROKEN", PHASERS_EBROKEN),
        ("PHASERS_EUNSUPPORTED", PHASERS_EUNSUPPORTED),
        ("PHASERS_ECAPABILITY", PHASERS_ECAPABILITY),
        ("PHASERS_ETERMINATED", PHASERS_ETERMINATED),
        ("PHASERS_EBUSY", PHASERS_EBUSY),
        ("PHASERS_EPANIC", PHASERS_EPANIC),
        ("PHASERS_EMISMATCH", PHASERS_EMISMATCH),
    ];
    for (name, value) in codes {
        assert_eq!(header_value(name), value, "{name}");
    }
}

#[test]
fn enumerations_match() {
    let algorithms = [
        "AUTO",
        "SENSE_REVERSING",
        "COUNTING",
        "TICKET",
        "COMBINING_TREE",
        "MCS_TREE",
        "DISSEMINATION",
        "TOURNAMENT",
    ];
    assert_eq!(algorithms.len(), ALGORITHMS.len());
    for (value, name) in algorithms.iter().enumerate() {
        assert_eq!(
            header_value(&format!("PHASERS_ALGORITHM_{name}")),
            value as c_int
        );
    }
    for (value, mode) in MODES.iter().enumerate() {
        let name = match mode {
            phasers_core::Mode::Sig => "SIG",
            phasers_core::Mode::Wait => "WAIT",
            phasers_core::Mode::SigWait => "SIG_WAIT",
            phasers_core::Mode::SigWaitSingle => "SIG_WAIT_SINGLE",
        };
        assert_eq!(
            header_value(&format!("PHASERS_MODE_{name}")),
            value as c_int
        );
    }
    for (value, element) in ELEMENT_TYPES.iter().enumerate() {
        let name = element.suffix().to_ascii_uppercase();
        assert_eq!(
            header_value(&format!("PHASERS_TYPE_{name}")),
            value as c_int
        );
    }
    let reduce_algorithms = [
        "AUTO",
        "LINEAR",
        "STATIC_TREE",
        "DYNAMIC_PAIRS",
        "DYNAMIC_GROUP",
    ];
    assert_eq!(reduce_algorithms.len(), REDUCE_ALGORITHMS.len());
    for (value, name) in reduce_algorithms.iter().enumerate() {
        assert_eq!(
            header_value(&format!("PHASERS_REDUCE_{name}")),
            value as c_int
        );
    }
    for (value, op) in OPS.iter().enumerate() {
        let name = format!("{op:?}").to_ascii_uppercase();
        assert_eq!(header_value(&format!("PHASERS_OP_{name}")), value as c_int);
    }
}
