//! `phasers bench async` end to end, as small as it runs: two task counts, one round of one
//! sample, every row measured and its phases checked (a wrong phase fails the run).

mod cli_support;
use cli_support::{json_file, phasers, scratch, succeeded};

#[test]
fn bench_async_measures_every_contender_at_each_task_count() {
    let json = scratch("async", "async.json");
    let output = phasers(&[
        "bench",
        "async",
        "--tasks",
        "2,64",
        "--phases",
        "20",
        "--rounds",
        "1",
        "--samples",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = succeeded(&output);
    for title in [
        "2 tasks on 2 worker threads",
        "64 tasks on 2 worker threads",
    ] {
        assert!(stdout.contains(title), "no table {title:?}:\n{stdout}");
    }
    for row in [
        "floor: a yield_now per task, no sync",
        "phaser next_async, tasks → tiers 1 (flat)",
        "Barrier wait_async, tasks → Auto → ",
        "tokio::sync::Barrier, tasks",
        "phaser next(), OS threads → tiers 1 (flat)",
    ] {
        assert_eq!(
            stdout.matches(row).count(),
            2,
            "{row:?} at each N:\n{stdout}"
        );
    }
    assert!(stdout.contains("ours / tokio::sync::Barrier, per task per phase"));
    assert!(stdout.contains("Barrier wait_async (to 16,384)"));

    let report = json_file(&json);
    assert_eq!(report["benchmark"], "bench async");
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        10,
        "the floor and 4 contenders at 2 task counts"
    );
    for row in rows {
        assert!(row["error"].is_null(), "{row}");
        // One dropped sample and one kept, of 20 phases of every task.
        assert_eq!(row["raw_ns"].as_array().unwrap().len(), 2, "{row}");
        let tasks = row["threads"].as_u64().unwrap();
        assert_eq!(row["iterations_per_sample"].as_u64(), Some(20 * tasks));
        let median = row["summary"]["median"].as_f64().unwrap();
        let phase = row["phase_ns"].as_f64().unwrap();
        assert!(median > 0.0, "{row}");
        assert!(
            (phase / (median * tasks as f64) - 1.0).abs() < 1e-9,
            "{row}"
        );
    }
    // Phaser and barrier over tokio, at each N.
    assert_eq!(report["ratios"].as_array().unwrap().len(), 4);
}

#[test]
fn bench_async_caps_the_blocking_threads() {
    let output = phasers(&[
        "bench",
        "async",
        "--tasks",
        "3",
        "--phases",
        "4",
        "--rounds",
        "1",
        "--samples",
        "1",
        "--max-threads",
        "2",
    ]);
    let stdout = succeeded(&output);
    assert!(stdout.contains("no OS threads above 2"), "{stdout}");
    assert!(!stdout.contains("OS threads →"), "{stdout}");
    assert!(stdout.contains("tokio::sync::Barrier, tasks"), "{stdout}");
}
