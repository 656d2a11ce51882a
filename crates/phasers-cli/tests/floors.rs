//! `phasers floors` end to end: it measures and explains all three floors, writes them as JSON,
//! reports `PHASERS_FLOORS` as the source of the floors in use, and refuses a malformed one.

use std::process::Output;

use serde_json::Value;

mod cli_support;
use cli_support::{json_file, phasers, phasers_with, scratch, succeeded, text};

/// Runs `phasers` with `PHASERS_FLOORS` set to `floors`.
fn phasers_with_floors(floors: &str, args: &[&str]) -> Output {
    phasers_with(&[("PHASERS_FLOORS", floors)], args)
}

#[test]
fn floors_measures_explains_and_writes_all_three() {
    let json = scratch("floors", "floors.json");
    let output = phasers(&["floors", "--samples", "3", "--json", json.to_str().unwrap()]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for words in [
        "round trip",
        "yield hand-off",
        "wake",
        "in use:",
        "ceil(T/C) hand-offs",
        "wake / yield",
    ] {
        assert!(stdout.contains(words), "{words} missing from\n{stdout}");
    }

    let report: Value = json_file(&json);
    assert_eq!(report["benchmark"], "floors");
    assert!(report["machine"]["available_cores"].as_u64().unwrap() >= 1);
    let measurements = report["measurements"].as_array().unwrap();
    assert_eq!(measurements.len(), 3);
    for floor in ["round_trip_ns", "yield_ns", "wake_ns"] {
        let values: Vec<u64> = measurements
            .iter()
            .map(|m| m[floor].as_u64().unwrap())
            .collect();
        assert!(values.iter().all(|&ns| ns > 0), "{floor}: {values:?}");
        let (min, median) = (
            report["min"][floor].as_u64(),
            report["median"][floor].as_u64(),
        );
        assert_eq!(min, values.iter().min().copied(), "{floor}");
        assert!(median >= min, "{floor}");
        assert!(report["floors"][floor].as_u64().unwrap() > 0, "{floor}");
    }
    assert_eq!(report["floors"]["source"], "measured");
}

#[test]
fn floors_from_the_environment_are_the_ones_in_use() {
    let output = phasers_with_floors(
        "round_trip=100ns,yield=2us,wake=30us",
        &["floors", "--samples", "1"],
    );
    let stdout = succeeded(&output);
    let in_use = stdout
        .lines()
        .find(|line| line.starts_with("in use"))
        .unwrap_or_else(|| panic!("no in-use line in\n{stdout}"));
    for words in [
        "round trip 100 ns",
        "yield hand-off 2.0 µs",
        "wake 30 µs",
        "source environment",
    ] {
        assert!(in_use.contains(words), "{words} missing from {in_use:?}");
    }
}

#[test]
fn a_malformed_phasers_floors_is_refused_clearly() {
    let json = scratch("floors", "never.json");
    for args in [
        &["floors", "--json", json.to_str().unwrap()][..],
        &["bench", "barrier", "--threads", "2", "--time", "0.05"],
    ] {
        let output = phasers_with_floors("wake=fast", args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("PHASERS_FLOORS") && stderr.contains("\"fast\" is not a duration"),
            "{args:?}: {stderr}"
        );
        // Refused before anything was measured or printed.
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    assert!(!json.exists());
}

#[test]
fn every_report_records_and_states_the_floors() {
    let json = scratch("floors", "dynamic.json");
    let output = phasers_with_floors(
        "round_trip=100ns,yield=2us,wake=30us",
        &[
            "bench",
            "dynamic",
            "--threads",
            "3",
            "--samples",
            "2",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let stdout = succeeded(&output);
    assert!(
        stdout.contains(
            "floors:  round trip 100 ns, yield hand-off 2.0 µs, wake 30 µs (set by PHASERS_FLOORS"
        ),
        "{stdout}"
    );
    let report: Value = json_file(&json);
    let floors = &report["floors"];
    assert_eq!(floors["round_trip_ns"], 100);
    assert_eq!(floors["yield_ns"], 2000);
    assert_eq!(floors["wake_ns"], 30_000);
    assert_eq!(floors["source"], "environment");
}
