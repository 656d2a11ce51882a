//! `phasers app` end to end: a tiny run of every application writes valid JSON with a checked
//! row per thread count and kind, and bad options fail with a clear message and no output file.

use std::path::PathBuf;

use serde_json::Value;

mod cli_support;
use cli_support::phasers;

fn scratch(name: &str) -> PathBuf {
    cli_support::scratch("apps", name)
}

#[test]
fn every_application_runs_checked_on_every_default_kind() {
    let json = scratch("apps.json");
    let output = phasers(&[
        "app",
        "all",
        "--size",
        "small",
        "--threads",
        "1,3",
        "--repeat",
        "1",
        "--nops",
        "100",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["benchmark"], "app");
    assert_eq!(report["schema_version"], 4);
    let kinds = report["settings"]["contenders"].as_array().unwrap();
    assert_eq!(kinds.len(), 5, "auto, three baselines, the phaser");
    let rows = report["rows"].as_array().unwrap();
    let of = |program: Option<&str>| {
        let rows = rows
            .iter()
            .filter(move |row| row["program"].as_str() == program);
        rows.collect::<Vec<&Value>>()
    };
    let runs = of(None);
    let sequential: Vec<&str> = (runs.iter())
        .filter(|row| row["contender"] == "sequential")
        .map(|row| row["app"].as_str().unwrap())
        .collect();
    assert_eq!(sequential, ["sor", "lu", "streamcluster", "interp"]);
    assert_eq!(runs.len(), 4 * (1 + 2 * kinds.len()));
    for row in runs {
        assert!(row["error"].is_null(), "{row}");
        assert!(row["summary"]["min"].as_f64().unwrap() > 0.0, "{row}");
        if row["kind"] != "reference" {
            assert!(row["barriers"].as_u64().unwrap() > 0, "{row}");
            assert!(row["speedup_vs_sequential"].is_number(), "{row}");
            assert!(row["speedup_vs_one_thread"].is_number(), "{row}");
        }
    }
    let ratios = report["ratios"].as_array().unwrap();
    let over_std = |ratio: &&Value| ratio["label"] == "auto / std::sync::Barrier";
    assert_eq!(
        ratios.iter().filter(over_std).count(),
        4 * 2,
        "every app at each count"
    );
    let nop = of(Some("nop"));
    assert_eq!(nop.len(), 2 * (kinds.len() + 1), "every kind and the ideal");
    assert!(nop.iter().all(|row| row["error"].is_null()));
    assert!(stdout.contains("auto / fastest standard"), "{stdout}");
    assert!(stdout.contains("ns/NOP"), "{stdout}");
}

#[test]
fn bad_app_options_fail_clearly_and_write_nothing() {
    let json = scratch("never.json");
    for (args, message) in [
        (vec!["app", "fft"], "unknown application"),
        (
            vec!["app", "sor", "--sync", "openmp"],
            "unknown barrier kind",
        ),
        (vec!["app", "sor", "--size", "tiny"], "unknown size"),
    ] {
        let mut args = args.clone();
        args.extend(["--json", json.to_str().unwrap()]);
        let output = phasers(&args);
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!json.exists(), "{args:?} wrote {}", json.display());
    }
}
