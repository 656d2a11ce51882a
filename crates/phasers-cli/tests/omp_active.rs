//! The `OMP_WAIT_POLICY=active` rows end to end: the child subcommand prints a row the parent can
//! read, `bench barrier` shows the tuned row next to the default one, and a child whose OpenMP
//! fails gives a failed row, not a crash.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

mod cli_support;
use cli_support::{json_file, phasers, phasers_with, scratch, succeeded, text};

/// Runs the child subcommand under `OMP_WAIT_POLICY=active` with `job` on its stdin.
fn child(job: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_phasers"))
        .args(["internal-child", "bench barrier"])
        .env("PHASERS_PROFILE", "off")
        .env("OMP_WAIT_POLICY", "active")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the phasers binary runs");
    let mut stdin = child.stdin.take().expect("a pipe");
    stdin.write_all(job.as_bytes()).expect("the job is sent");
    drop(stdin);
    child.wait_with_output().expect("the child finishes")
}

#[test]
fn the_child_prints_one_row_as_json() {
    for contender in ["omp barrier", "omp reduction"] {
        let job = serde_json::json!({
            "threads": 2,
            "contender": contender,
            "timing": {
                "mode": "epcc",
                "schedule": {
                    "episodes": 50,
                    "samples": 3,
                    "target_sample": { "secs": 0, "nanos": 1_000_000 },
                    "row_budget": { "secs": 5, "nanos": 0 },
                },
                "hang_after": { "secs": 60, "nanos": 0 },
                "pin": false,
                "delay": 10,
            },
        });
        let output = child(&job.to_string());
        let stdout = succeeded(&output);
        assert_eq!(stdout.lines().count(), 1, "one line of JSON: {stdout}");
        let row: Value = serde_json::from_str(&stdout).unwrap();
        assert!(row["error"].is_null(), "{row}");
        assert_eq!(row["raw_ns"].as_array().unwrap().len(), 3, "{row}");
        assert_eq!(row["iterations_per_sample"], 50, "{row}");
    }
    // Anything else is refused with a message, not a panic.
    let output = child("{\"threads\": 2}");
    assert!(!output.status.success());
    assert!(text(&output.stderr).contains("the job is not one"));
}

#[test]
fn bench_barrier_has_the_tuned_row_next_to_the_default() {
    let json = scratch("omp-active", "barrier.json");
    let output = phasers(&[
        "bench",
        "barrier",
        "--threads",
        "2",
        "--algorithms",
        "auto",
        "--time",
        "0.05",
        "--samples",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = succeeded(&output);
    let report: Value = json_file(&json);
    let rows = report["rows"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|row| row["contender"] == name)
            .unwrap_or_else(|| panic!("no {name} row"))
    };
    let (default, active) = (row("omp barrier"), row("omp barrier (active)"));
    for row in [default, active] {
        assert!(row["error"].is_null(), "{row}");
        assert_eq!(row["kind"], "baseline");
        assert_eq!(row["samples_ns"].as_array().unwrap().len(), 3, "{row}");
        assert!(row["summary"]["median"].is_number(), "{row}");
    }
    // Both subtract the OpenMP reference loop.
    assert_eq!(
        active["reference_ns"],
        row("omp reference loop")["summary"]["median"]
    );
    assert!(stdout.contains("omp barrier (active)"), "{stdout}");
}

#[test]
fn a_child_whose_openmp_fails_gives_a_failed_row() {
    // OpenMP gives teams of one thread only, in the parent and so in the child.
    let output = phasers_with(
        &[("OMP_THREAD_LIMIT", "1")],
        &[
            "bench",
            "barrier",
            "--threads",
            "2",
            "--algorithms",
            "auto",
            "--time",
            "0.03",
            "--samples",
            "2",
        ],
    );
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("omp barrier (active) with 2 threads"),
        "{stderr}"
    );
    // The other rows ran.
    assert!(stdout.contains("auto"), "{stdout}");
}

#[test]
fn bench_reduce_has_the_tuned_row_on_the_same_stalls() {
    let json = scratch("omp-active", "reduce.json");
    let output = phasers(&[
        "bench",
        "reduce",
        "--threads",
        "2",
        "--sizes",
        "1k",
        "--spread",
        "low",
        "--mode",
        "reduce",
        "--algorithms",
        "omp,omp-active",
        "--min-time",
        "0.001",
        "--min-iterations",
        "2",
        "--max-iterations",
        "4",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = succeeded(&output);
    let report: Value = json_file(&json);
    let rows = report["rows"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|row| row["contender"] == name)
            .unwrap_or_else(|| panic!("no {name} row"))
    };
    let default = row("omp reduction(+:arr[:n])");
    let active = row("omp reduction(+:arr[:n]) (active)");
    for row in [default, active] {
        assert!(row["error"].is_null(), "{row}");
        assert!(row["summary"]["count"].as_u64().unwrap() >= 2, "{row}");
        assert!(
            row["last_arrival_to_completion_ns"]["median"].is_number(),
            "{row}"
        );
    }
    // The child read the very stall table of the point.
    assert_eq!(active["realized_spread"], default["realized_spread"]);
    assert_eq!(active["arrival_spread"], "low");
    assert!(stdout.contains("(active)"), "{stdout}");
}
