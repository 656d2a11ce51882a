//! The `phasers` binary end to end: the quick suite with a tiny time budget writes valid JSON, CSV
//! and SVG with every row, and bad options fail with a clear message and no output files.

use std::path::PathBuf;

use serde_json::Value;

mod cli_support;
use cli_support::phasers;

fn scratch(name: &str) -> PathBuf {
    cli_support::scratch("smoke", name)
}

fn names(value: &Value, key: &str) -> Vec<String> {
    value[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not an array"))
        .iter()
        .map(|name| name.as_str().expect("a name").to_owned())
        .collect()
}

/// The thread counts of a row report, in the order run.
fn thread_counts(report: &Value) -> Vec<u64> {
    let mut threads: Vec<u64> = (report["rows"].as_array().unwrap().iter())
        .map(|row| row["threads"].as_u64().unwrap())
        .collect();
    threads.dedup();
    threads
}

/// The table of `threads` threads of a row report: its rows, as `{"rows": [...]}`.
fn at(report: &Value, threads: u64) -> Value {
    let rows = report["rows"].as_array().unwrap().iter();
    let rows: Vec<&Value> = rows.filter(|row| row["threads"] == threads).collect();
    serde_json::json!({ "rows": rows })
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
        // The detailed tables, whose columns this test reads (tests/widths.rs: the default ones).
        "--verbose",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["schema_version"], 4);
    assert_eq!(report["settings"]["mode"], "epcc");
    assert_eq!(report["settings"]["samples"], 3);
    assert_eq!(report["settings"]["dropped_samples"], 1);
    // 5 rounds by default, but no more than the samples: one sample each.
    assert_eq!(report["settings"]["rounds"], 3);
    assert!(report["machine"]["available_cores"].as_u64().unwrap() >= 1);
    assert!(report["machine"]["os"].is_string());
    assert!(report["machine"]["native"]["c_compiler"].is_string());
    assert!(report["floor"]["median_ns"].as_f64().unwrap() > 0.0);

    let algorithms = names(&report["settings"], "algorithms");
    assert_eq!(algorithms.len(), 8, "auto and the seven algorithms");
    let baselines = names(&report["settings"], "baselines");
    for baseline in [
        "reference",
        "bare counting",
        "std::sync::Barrier",
        "pthread_barrier_t",
        "std::barrier (C++20)",
        "omp barrier",
    ] {
        assert!(baselines.iter().any(|name| name == baseline), "{baseline}");
    }
    let threads = thread_counts(&report);
    assert_eq!(threads.first(), Some(&1), "the default sweep starts at 1");
    let cores = report["machine"]["available_cores"].as_u64().unwrap();
    for &count in &threads {
        let table = at(&report, count);
        for name in ["reference loop", "omp reference loop"] {
            let row = good_row(&table, name, "contender");
            assert_eq!(row["kind"], "loop", "{row}");
        }
        for name in baselines.iter().chain(&algorithms) {
            let row = good_row(&table, name, "contender");
            assert!(row["summary"]["stddev"].is_number(), "{row}");
            assert!(row["reference_ns"].is_number(), "{row}");
            assert_eq!(
                row["round_medians_ns"].as_array().unwrap().len(),
                3,
                "{row}"
            );
            if row["round_samples"] == serde_json::json!([2, 2, 2]) {
                assert_eq!(row["samples_ns"].as_array().unwrap().len(), 3, "{row}");
                assert_eq!(row["dropped"], 3, "one warm-up per round: {row}");
            } else {
                // A busy machine can stop a round at its budget (0.03 s here): the row keeps
                // the samples it has and says so, rather than running on.
                let note = row["note"].as_str().unwrap_or_default();
                assert!(note.contains("row stopped at its"), "{row}");
            }
            assert!(row["noisy"].is_boolean(), "{row}");
        }
        // A floor row per table: the round trip, or yield hand-offs past the cores.
        let floor = good_row(&table, "floor", "contender");
        let regime = if count <= cores {
            "round-trip"
        } else {
            "yield-handoffs"
        };
        assert_eq!(
            (floor["kind"].as_str(), floor["regime"].as_str()),
            (Some("floor"), Some(regime))
        );
        assert!(
            floor["summary"]["median"].as_f64().unwrap() > 0.0,
            "{floor}"
        );
    }
    let ratios = report["ratios"].as_array().unwrap();
    for label in ["auto / std::sync::Barrier", "auto / bare counting"] {
        assert!(
            ratios.iter().any(|ratio| ratio["label"] == label),
            "{label}: {ratios:?}"
        );
    }
    assert!(ratios.iter().all(|ratio| ratio["noisy"].is_boolean()));

    let table = std::fs::read_to_string(&csv).unwrap();
    let lines = table.lines().count();
    // Header, floor, and per table its floor row, two reference loops and every row.
    assert_eq!(
        lines,
        2 + threads.len() * (3 + baselines.len() + algorithms.len())
    );
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.contains("<svg") && plot.contains("omp barrier"));

    // The tables state their units, and the ratios section names our best.
    assert!(
        stdout.contains("÷ref") && stdout.contains("mean ± 95% CI"),
        "{stdout}"
    );
    assert!(stdout.contains("our best is"), "{stdout}");
    // Auto over its protocol by hand, at each thread count.
    let bare = stdout
        .lines()
        .skip_while(|line| !line.starts_with("auto ÷ bare protocol"));
    let bare: Vec<&str> = bare.skip(1).take(threads.len()).collect();
    for (line, count) in bare.iter().zip(&threads) {
        assert!(line.starts_with(&format!("  {count} thread")), "{stdout}");
    }
    assert_eq!(bare.len(), threads.len(), "{stdout}");
    assert!(
        stdout.contains("rounds") && stdout.contains("noisy: a ratio whose rows' rounds disagree"),
        "{stdout}"
    );
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
        "bare counting",
        "std::sync::Barrier",
        "pthread_barrier_t",
        "std::barrier (C++20)",
        "omp barrier",
        "omp reduction",
        "phaser flat",
        "phaser tree + sum i64",
        "phaser flat + sum f64 reproducible",
        "dynamic-pairs",
        "dynamic-group",
        "omp reduction(+:arr[:n])",
        "mutex-merged",
        "bandwidth floor",
        "phasers::Barrier auto",
        "omp reduction(+:x), read by all",
        "omp broadcast via shared buffer",
        "memcpy",
    ] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    assert!(text.contains("profile"), "{text}");
}

/// Reads the profile at `path` and checks it covers `threads` on this machine.
fn check_profile(path: &std::path::Path, threads: &[usize]) {
    let text = std::fs::read_to_string(path).unwrap();
    let parsed = phasers::Profile::from_json(&text).unwrap();
    let written: Vec<usize> = parsed.entries().iter().map(|entry| entry.threads).collect();
    assert_eq!(written, threads);
    assert_eq!(parsed.cores(), phasers::available_cores());
}

#[test]
fn bench_barrier_writes_a_profile_the_library_reads() {
    let profile = scratch("profile.json");
    let args = ["bench", "barrier", "--threads", "1,2", "--write-profile"];
    let mut argv = args.to_vec();
    argv.extend([
        profile.to_str().unwrap(),
        "--time",
        "0.02",
        "--samples",
        "2",
    ]);
    let stdout = run_ok(&argv);
    assert!(stdout.contains("what tuning changed"), "{stdout}");
    check_profile(&profile, &[1, 2]);
}

/// `tune` is `bench barrier --write-profile` now; the old name still works and says so.
#[test]
fn the_old_tune_command_still_writes_a_profile_and_names_its_new_form() {
    let profile = scratch("tune-profile.json");
    let output = phasers(&[
        "tune",
        "--threads",
        "1",
        "--time",
        "0.02",
        "--samples",
        "2",
        "--output",
        profile.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let note = stderr.lines().next().unwrap_or_default();
    assert!(
        note.starts_with("note: `phasers tune` is now `phasers bench barrier --write-profile "),
        "{stderr}"
    );
    check_profile(&profile, &[1]);
}

/// Runs `args` and returns stdout, failing the test with both streams if the run failed.
fn run_ok(args: &[&str]) -> String {
    let output = phasers(args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{args:?}\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Runs `args` with a tiny budget (for a sweep) and `--json`, and returns stdout and the report.
fn run_json(args: &[&str], tiny: bool) -> (String, Value) {
    // Named after the command and its first options, so tests running at once never share one.
    let json = scratch(&format!("{}.json", args[1..args.len().min(4)].join("-")));
    let mut argv = args.to_vec();
    if tiny {
        argv.extend(["--time", "0.03", "--samples", "2"]);
    }
    argv.extend(["--json", json.to_str().unwrap()]);
    let stdout = run_ok(&argv);
    let report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (stdout, report)
}

/// The row named `name` of `group`, which must have run without error and have every statistic.
fn good_row<'a>(group: &'a Value, name: &str, key: &str) -> &'a Value {
    let row = group["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row[key] == name)
        .unwrap_or_else(|| panic!("no {name} row in {group}"));
    assert!(row["error"].is_null(), "{row}");
    for stat in ["min", "median", "mean"] {
        assert!(row["summary"][stat].is_number(), "{stat} of {row}");
    }
    row
}

#[test]
fn bench_phaser_compares_phasers_with_our_best_barrier_and_openmp() {
    let (stdout, report) = run_json(&["bench", "phaser", "--threads", "1,4"], true);
    assert_eq!(report["benchmark"], "bench phaser");
    assert!(report["floor"]["median_ns"].as_f64().unwrap() > 0.0);
    let groups: Vec<Value> = thread_counts(&report)
        .into_iter()
        .map(|t| at(&report, t))
        .collect();
    assert_eq!(groups.len(), 2);
    for group in &groups {
        for name in ["reference", "omp barrier", "auto", "sense-reversing"] {
            good_row(group, name, "contender");
        }
        assert_eq!(
            good_row(group, "phaser flat", "contender")["resolved"],
            "tiers 1 (flat)"
        );
        good_row(group, "phaser tree", "contender");
    }
    // The seed's Table I gives 4 threads two tiers of degree 2.
    assert_eq!(
        good_row(&groups[1], "phaser tree", "contender")["resolved"],
        "tiers 2, degree 2"
    );
    assert!(
        stdout.contains("phaser flat / best barrier")
            && stdout.contains("omp barrier / phaser tree"),
        "{stdout}"
    );
}

#[test]
fn bench_phaser_reduction_checks_every_sum_and_compares_with_openmp() {
    let csv = scratch("reduction.csv");
    let stdout = run_ok(&[
        "bench",
        "phaser",
        "--figure",
        "reduction",
        "--threads",
        "3",
        "--time",
        "0.03",
        "--samples",
        "2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let table = std::fs::read_to_string(&csv).unwrap();
    let head = table.lines().next().unwrap().split(',');
    let column = head
        .clone()
        .position(|column| column == "contender")
        .unwrap();
    for name in [
        "omp reduction",
        "phaser flat + sum i64",
        "phaser tree + sum i64",
        "phaser flat + sum f64 reproducible",
    ] {
        let line = table
            .lines()
            .find(|line| line.split(',').nth(column) == Some(name))
            .unwrap_or_else(|| panic!("no {name} line in\n{table}"));
        // No error: the line ends with an empty error column.
        assert!(line.ends_with(','), "{line}");
    }
    for ratio in [
        "phaser flat + sum i64 / best barrier",
        "omp reduction / phaser flat + sum i64",
    ] {
        assert!(stdout.contains(ratio), "{ratio} missing from\n{stdout}");
    }
}

#[test]
fn bench_collectives_checks_every_result_against_openmp_and_memcpy() {
    let csv = scratch("collectives.csv");
    let (stdout, report) = run_json(
        &[
            "bench",
            "collectives",
            "--threads",
            "4",
            "--words",
            "8,1000",
            "--blocks",
            "3",
            "--sync-words",
            "8",
            "--rounds",
            "2",
            "--csv",
            csv.to_str().unwrap(),
        ],
        true,
    );
    assert_eq!(report["benchmark"], "bench collectives");
    assert_eq!(report["settings"]["threads"][0], 4);
    let rows = report["rows"].as_array().unwrap();
    for row in rows {
        assert!(row["error"].is_null(), "{row}");
        assert!(row["summary"]["median"].is_number(), "{row}");
    }
    let has = |op: &str, name: &str, team: Option<&str>| {
        rows.iter().any(|row| {
            row["op"] == op
                && row["contender"] == name
                && team.map_or(row["team"].is_null(), |team| row["team"] == team)
        })
    };
    for team in ["all", "row", "column"] {
        for op in ["barrier", "allreduce", "broadcast", "alltoall"] {
            assert!(has(op, "team", Some(team)), "no {op} on {team}");
        }
    }
    for (op, name) in [
        ("barrier", "std::sync::Barrier"),
        ("barrier", "phasers::Barrier auto"),
        ("barrier", "omp barrier"),
        ("allreduce", "omp reduction(+:x), read by all"),
        ("broadcast", "omp broadcast via shared buffer"),
        ("memcpy", "memcpy"),
    ] {
        assert!(has(op, name, None), "no {name}");
    }
    let broadcast = rows
        .iter()
        .find(|row| row["op"] == "broadcast" && row["words"] == 1000 && row["team"] == "all")
        .unwrap();
    assert!(broadcast["fraction_of_memcpy"].as_f64().unwrap() > 0.0);
    assert!(broadcast["bandwidth_gb_s"].as_f64().unwrap() > 0.0);
    let checked: Vec<&Value> = rows.iter().filter(|row| row["part"] == "checked").collect();
    // Barrier, allreduce and 8-word broadcast, each checked and unchecked, in two rounds.
    assert_eq!(checked.len(), 6);
    assert!(checked.iter().any(|row| row["checked"] == true));
    assert!(checked.iter().any(|row| row["checked"] == false));
    for row in &checked {
        assert_eq!(
            row["round_medians_ns"].as_array().unwrap().len(),
            2,
            "{row}"
        );
    }
    let modes: Vec<&str> = rows
        .iter()
        .filter(|row| row["part"] == "sync-modes")
        .map(|row| row["sync_mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["AllSync", "MySync", "NoSync"]);
    for figure in [
        "(a) allreduce",
        "(b) broadcast of 1000 words",
        "(c) ours ÷ OpenMP",
        "(d) checked ÷ unchecked",
    ] {
        assert!(stdout.contains(figure), "{figure} missing from\n{stdout}");
    }
    let table = std::fs::read_to_string(&csv).unwrap();
    // Header, floor, every row.
    assert_eq!(table.lines().count(), 2 + rows.len());
}

#[test]
fn bench_dynamic_grows_the_team_with_openmp_and_phasers() {
    let (stdout, report) = run_json(
        &["bench", "dynamic", "--threads", "3", "--samples", "3"],
        false,
    );
    assert_eq!(report["benchmark"], "bench dynamic");
    assert_eq!(report["settings"]["max_threads"], 3);
    assert_eq!(report["settings"]["steps"], 2);
    for name in ["omp parallel for, re-forked", "phaser flat", "phaser tree"] {
        let row = good_row(&report, name, "contender");
        assert_eq!(row["samples_ns"].as_array().unwrap().len(), 3, "{row}");
        assert_eq!(
            (row["dropped"].as_u64(), row["threads"].as_u64()),
            (Some(1), Some(3))
        );
    }
    assert_eq!(report["ratios"].as_array().unwrap().len(), 2, "{report}");
    assert!(
        stdout.contains("omp parallel for, re-forked / phaser flat"),
        "{stdout}"
    );
}

#[test]
fn bench_phaser_tree_sweeps_tiers_and_degrees() {
    let args = [
        "bench",
        "phaser",
        "--figure",
        "tree",
        "--threads",
        "2,4",
        "--tiers",
        "1,2",
        "--degrees",
        "2,16",
    ];
    let (stdout, report) = run_json(&args, true);
    assert_eq!(report["benchmark"], "bench tree");
    let groups: Vec<Value> = thread_counts(&report)
        .into_iter()
        .map(|t| at(&report, t))
        .collect();
    for group in &groups {
        for name in [
            "reference",
            "phaser flat",
            "phaser flat + sum i64",
            "phaser (2,2)",
            "phaser (2,2) + sum i64",
        ] {
            good_row(group, name, "contender");
        }
    }
    // (2,16) has 16 leaves: too many for 2 threads, run at 4.
    let has = |group: &Value, name: &str| {
        group["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["contender"] == name)
    };
    assert!(!has(&groups[0], "phaser (2,16)"));
    assert_eq!(
        good_row(&groups[1], "phaser (2,16)", "contender")["resolved"],
        "tiers 2, degree 16"
    );
    assert!(
        stdout.contains("median cost per phase by (tiers, degree)"),
        "{stdout}"
    );
    assert!(stdout.contains("(2,16)"), "{stdout}");
}

/// Issue 34: a bad PHASERS_* variable is refused before anything is measured, naming the
/// variable, instead of failing in every row after seconds of measuring.
#[test]
fn bad_environment_is_refused_before_measuring() {
    let json = scratch("never-env.json");
    for (variable, value) in [
        ("PHASERS_STALL", "soon"),
        ("PHASERS_WAIT", "fast"),
        ("PHASERS_CHECKED", "maybe"),
        ("PHASERS_PROFILE", "/nonexistent/profile.json"),
    ] {
        let args = [
            "bench",
            "barrier",
            "--threads",
            "2",
            "--json",
            json.to_str().unwrap(),
        ];
        let output = cli_support::phasers_with(&[(variable, value)], &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{variable}: {stderr}");
        assert!(
            stderr.contains(variable) && stderr.contains("checked before measuring anything"),
            "{variable}: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{variable}");
        assert!(!json.exists(), "{variable}");
    }
}

#[test]
fn bad_phaser_options_fail_clearly() {
    for (args, message) in [
        (
            &["bench", "phaser", "--tiers", "0"][..],
            "number of tiers from 1",
        ),
        (&["bench", "phaser", "--degrees", "1"], "degree from 2"),
        (&["bench", "tree", "--degrees", "1"], "degree from 2"),
        (&["bench", "dynamic", "--threads", "1"], "at least 2"),
        (
            &["bench", "reduction", "--threads", "0"],
            "at least 1 thread",
        ),
        (&["bench", "phaser", "--samples", "0"], "0"),
    ] {
        let output = phasers(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn bench_reduce_writes_every_contender_and_the_floors() {
    let (json, csv) = (scratch("reduce.json"), scratch("reduce.csv"));
    let plot = scratch("reduce.svg");
    let stdout = run_ok(&[
        "bench",
        "reduce",
        "--threads",
        "2,3",
        "--sizes",
        "1k,200000",
        "--spread",
        "none,low",
        "--min-time",
        "0.001",
        "--min-iterations",
        "2",
        "--max-iterations",
        "4",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["benchmark"], "bench reduce");
    assert_eq!(report["schema_version"], 4);
    assert!(report["floor"]["median_ns"].as_f64().unwrap() > 0.0);
    assert!(report["machine"]["native"]["openmp"].is_string());
    let contenders = names(&report["settings"], "contenders");
    assert_eq!(contenders.len(), 8, "{contenders:?}");
    let rows = report["rows"].as_array().unwrap();
    // Per N (2), size (2) and mode (2): a floor, and every contender per spread (2).
    assert_eq!(rows.len(), 2 * 2 * 2 * (1 + 2 * 8));
    for row in rows {
        assert!(row["error"].is_null(), "{row}");
        assert!(row["summary"]["count"].as_u64().unwrap() >= 2, "{row}");
        assert!(row["floats"].is_u64() && row["mode"].is_string(), "{row}");
        for metric in [
            "last_arrival_to_completion_ns",
            "total_in_reduction_ns",
            "arrival_window_ns",
        ] {
            assert!(row[metric]["median"].is_number(), "{metric} of {row}");
        }
        assert!(row["fraction_of_floor"].as_f64().unwrap() > 0.0, "{row}");
    }
    let auto = rows
        .iter()
        .find(|row| row["contender"] == "auto")
        .expect("an auto row");
    assert!(!auto["chose"].as_object().unwrap().is_empty(), "{auto}");
    assert!(["none", "low"].contains(&auto["arrival_spread"].as_str().unwrap()));
    let samples = auto["samples_ns"].as_array().unwrap().len() as u64;
    assert_eq!(Some(samples), auto["summary"]["count"].as_u64(), "{auto}");

    let table = std::fs::read_to_string(&csv).unwrap();
    // A header, the cache-line floor, and a line per row.
    assert_eq!(table.lines().count(), 2 + rows.len());
    assert!(table.contains("omp reduction(+:arr[:n])") && table.contains("mutex-merged"));
    assert!(table.contains("omp reduction(+:arr[:n]) (active)"));
    // One plot per mode, spread and size, beside the name given.
    for name in [
        "reduce-reduce-none-1000.svg",
        "reduce-allreduce-low-200000.svg",
    ] {
        let svg = std::fs::read_to_string(plot.with_file_name(name)).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("dynamic-pairs"),
            "{name}"
        );
    }
    for section in [
        "(1) the seed's headline",
        "(2) large arrays",
        "(3) against OpenMP's array reduction",
        "bandwidth floor",
        "cache-line round trip",
    ] {
        assert!(stdout.contains(section), "{section} missing from\n{stdout}");
    }
}

#[test]
fn bad_reduce_options_fail_clearly() {
    for (args, message) in [
        (&["--threads", "1"][..], "at least 2 participants"),
        (&["--sizes", "0"], "starts at 1 float"),
        (&["--sizes", "big"], "not an array size"),
        (&["--spread", "wild"], "not a spread"),
        (&["--mode", "scan"], "possible values"),
        (&["--algorithms", "fastest"], "not a reduction algorithm"),
        (&["--min-time", "0"], "not a number of seconds"),
    ] {
        let mut argv = vec!["bench", "reduce"];
        argv.extend_from_slice(args);
        let output = phasers(&argv);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    let output = phasers(&[
        "bench",
        "reduce",
        "--min-iterations",
        "9",
        "--max-iterations",
        "3",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("more than --max-iterations"), "{stderr}");
}
