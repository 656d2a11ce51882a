//! The `phasers` binary end to end: the quick suite with a tiny time budget writes valid JSON, CSV
//! and SVG with every row, and bad options fail with a clear message and no output files.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn phasers(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phasers"))
        .args(args)
        // The library's choices must not depend on a profile the developer happens to have.
        .env("PHASERS_PROFILE", "off")
        .output()
        .expect("the phasers binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phasers-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir.join(name)
}

fn names(value: &Value, key: &str) -> Vec<String> {
    value[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not an array"))
        .iter()
        .map(|name| name.as_str().expect("a name").to_owned())
        .collect()
}

#[test]
fn quick_suite_with_a_tiny_budget_reports_every_row() {
    let (json, csv, svg) = (scratch("run.json"), scratch("run.csv"), scratch("run.svg"));
    let output = phasers(&[
        "bench",
        "barrier",
        "--time",
        "0.03",
        "--samples",
        "3",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["schema_version"], 2);
    assert_eq!(report["settings"]["mode"], "epcc");
    assert_eq!(report["settings"]["samples"], 3);
    assert_eq!(report["settings"]["dropped_samples"], 1);
    assert!(report["machine"]["available_cores"].as_u64().unwrap() >= 1);
    assert!(report["machine"]["os"].is_string());
    assert!(report["machine"]["native"]["c_compiler"].is_string());
    assert!(report["floor"]["median_ns"].as_f64().unwrap() > 0.0);

    let algorithms = names(&report["settings"], "algorithms");
    assert_eq!(algorithms.len(), 8, "auto and the seven algorithms");
    let baselines = names(&report["settings"], "baselines");
    for baseline in [
        "reference",
        "std::sync::Barrier",
        "pthread_barrier_t",
        "std::barrier (C++20)",
        "omp barrier",
    ] {
        assert!(baselines.iter().any(|name| name == baseline), "{baseline}");
    }
    let groups = report["groups"].as_array().unwrap();
    let threads: Vec<u64> = groups
        .iter()
        .map(|group| group["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads.first(), Some(&1), "the default sweep starts at 1");
    for group in groups {
        assert!(group["reference_loop"]["summary"]["mean"].is_number());
        assert!(group["openmp_reference_loop"]["summary"]["mean"].is_number());
        let rows = group["rows"].as_array().unwrap();
        for name in baselines.iter().chain(&algorithms) {
            let row = rows
                .iter()
                .find(|row| row["barrier"] == name.as_str())
                .unwrap_or_else(|| panic!("no {name} row at {} threads", group["threads"]));
            assert!(row["error"].is_null(), "{row}");
            assert_eq!(row["samples_ns"].as_array().unwrap().len(), 3, "{row}");
            for stat in ["min", "median", "mean", "stddev"] {
                assert!(row["summary"][stat].is_number(), "{stat} of {row}");
            }
            assert!(row["reference_ns"].is_number(), "{row}");
        }
    }

    let table = std::fs::read_to_string(&csv).unwrap();
    let lines = table.lines().count();
    // Header, floor, and per group two reference loops plus every row.
    assert_eq!(
        lines,
        2 + groups.len() * (2 + baselines.len() + algorithms.len())
    );
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.contains("<svg") && plot.contains("omp barrier"));

    // The tables state their units, and the ratios section names our best.
    assert!(
        stdout.contains("÷ref") && stdout.contains("mean ± 95% CI"),
        "{stdout}"
    );
    assert!(stdout.contains("our best is"), "{stdout}");
}

#[test]
fn bad_options_fail_clearly_and_write_nothing() {
    let json = scratch("never.json");
    for (args, message) in [
        (&["--threads", "0"][..], "at least 1 thread"),
        (&["--threads", "x"], "not a thread count"),
        (&["--algorithms", "fastest"], "unknown barrier algorithm"),
        (&["--time", "-3"], "not a number of seconds"),
        (&["--mode", "quick"], "possible values"),
    ] {
        let mut argv = vec!["bench", "barrier", "--json", json.to_str().unwrap()];
        argv.extend_from_slice(args);
        let output = phasers(&argv);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    assert!(!json.exists());
}

#[test]
fn list_names_every_algorithm_and_baseline() {
    let output = phasers(&["list"]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for name in [
        "auto",
        "sense-reversing",
        "counting",
        "ticket",
        "combining-tree",
        "mcs",
        "dissemination",
        "tournament",
        "floor",
        "reference",
        "std::sync::Barrier",
        "pthread_barrier_t",
        "std::barrier (C++20)",
        "omp barrier",
    ] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    assert!(text.contains("profile"), "{text}");
}

#[test]
fn tune_writes_a_profile_the_library_reads() {
    let profile = scratch("profile.json");
    let output = phasers(&[
        "tune",
        "--threads",
        "1,2",
        "--time",
        "0.02",
        "--samples",
        "2",
        "--output",
        profile.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("what tuning changed"), "{stdout}");
    let text = std::fs::read_to_string(&profile).unwrap();
    let parsed = phasers::Profile::from_json(&text).unwrap();
    let threads: Vec<usize> = parsed.entries().iter().map(|entry| entry.threads).collect();
    assert_eq!(threads, vec![1, 2]);
    assert_eq!(parsed.cores(), phasers::available_cores());
}
