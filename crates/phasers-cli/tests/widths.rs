//! Every part of the quick suite, with a tiny time budget, prints lines of at most 100 characters
//! by default and keeps its wide detail under `--verbose`. (The suite itself takes a minute or
//! two on two cores; its parts with these budgets take seconds.)

mod cli_support;
use cli_support::{phasers, succeeded};

const WIDTH: usize = 100;

/// The quick suite's parts, each shortened: fewer samples and shorter rows.
const PARTS: [&[&str]; 5] = [
    &["bench", "barrier", "--time", "0.03", "--samples", "3"],
    &[
        "bench",
        "phaser",
        "--threads",
        "2",
        "--time",
        "0.03",
        "--samples",
        "3",
    ],
    &[
        "bench",
        "reduce",
        "--threads",
        "2",
        "--sizes",
        "1000",
        "--spread",
        "none,high",
        "--mode",
        "reduce",
        "--max-iterations",
        "50",
    ],
    &[
        "bench",
        "collectives",
        "--threads",
        "2",
        "--words",
        "8",
        "--blocks",
        "64",
        "--sync-words",
        "8",
        "--time",
        "0.01",
        "--samples",
        "2",
        "--teams",
        "all,row",
    ],
    &[
        "app",
        "sor,interp",
        "--size",
        "small",
        "--threads",
        "1,2",
        "--sync",
        "auto,std,pthread",
        "--repeat",
        "1",
        "--nops",
        "200",
    ],
];

/// The lines of `stdout` wider than [`WIDTH`] characters.
fn too_wide(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|line| line.chars().count() > WIDTH)
        .collect()
}

#[test]
fn every_part_fits_100_columns_and_verbose_keeps_the_detail() {
    let mut verbose_wider = false;
    for part in PARTS {
        let stdout = succeeded(&phasers(part));
        assert!(stdout.lines().count() > 5, "{part:?} printed\n{stdout}");
        let wide = too_wide(&stdout);
        assert!(wide.is_empty(), "{part:?}: {wide:#?}\nin\n{stdout}");
        assert!(
            !stdout.contains("noisy ("),
            "{part:?} spells its noise out\n{stdout}"
        );
        let verbose = succeeded(&phasers(&[part, &["--verbose"]].concat()));
        verbose_wider |= !too_wide(&verbose).is_empty();
        // The columns only --verbose shows: the sweeps' mean, reduce's other metrics.
        let detail = match part[1] {
            "barrier" => Some("mean ± 95% CI"),
            "reduce" => Some("last→done min"),
            _ => None,
        };
        if let Some(detail) = detail {
            assert!(verbose.contains(detail), "{verbose}");
            assert!(!stdout.contains(detail), "{stdout}");
        }
    }
    assert!(verbose_wider, "--verbose keeps today's wide tables");
}

#[test]
fn the_quick_suite_takes_verbose() {
    // Parsing only: `--help` after the flag shows it is accepted where the suite runs.
    let output = phasers(&["--verbose", "--help"]);
    let stdout = succeeded(&output);
    assert!(stdout.contains("--verbose"), "{stdout}");
}
