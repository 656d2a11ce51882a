//! The C tests under sanitizers.
//!
//! AddressSanitizer and UndefinedBehaviorSanitizer: every C test program and example is compiled
//! with `-fsanitize=address,undefined -fno-omit-frame-pointer` (UBSan errors abort), linked
//! against the normal `libphasers.so`, and run. The executable links libasan itself, so no
//! `LD_PRELOAD` is needed. This checks the C side (the tests' own buffers, and what the library
//! does to them through the libc calls ASan intercepts, such as `memcpy`) and leaks: Rust code is
//! not instrumented (that needs a nightly compiler), so LeakSanitizer uses the slow unwinder to see
//! its frames, and `tests/c/lsan.supp` suppresses only the handles' tombstones.
//!
//! Valgrind's memcheck sees every access the Rust library makes to the C caller's buffers, which
//! ASan cannot; it runs the reduction and team programs when `valgrind` is installed, and is
//! ignored, with the reason, otherwise.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::{compile_with, crate_dir, run_captured, run_with_env, Link, Outcome};

/// Compiles `source` (under `tests/c/`) with ASan and UBSan.
fn compile_sanitized(source: &str, name: &str) -> PathBuf {
    compile_with(
        "cc",
        &[
            &support::C_FLAGS[..],
            &[
                "-fsanitize=address,undefined",
                "-fno-sanitize-recover=undefined",
                "-fno-omit-frame-pointer",
            ],
        ]
        .concat(),
        &[source],
        name,
        Link::Shared,
    )
}

/// Runs a sanitized program; fails on any sanitizer report.
fn run_sanitized(program: &Path, args: &[&str]) -> Outcome {
    let suppressions = format!(
        "suppressions={}",
        crate_dir().join("tests/c/lsan.supp").display()
    );
    let run = |leaks: &str| {
        let asan = format!("fast_unwind_on_malloc=0:detect_leaks={leaks}:halt_on_error=1");
        run_with_env(
            program,
            args,
            &[
                ("ASAN_OPTIONS", asan.as_str()),
                ("LSAN_OPTIONS", suppressions.as_str()),
                ("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
            ],
        )
    };
    let mut outcome = run("1");
    if !outcome.success
        && outcome
            .stderr
            .contains("LeakSanitizer has encountered a fatal error")
    {
        // LeakSanitizer cannot stop the world under some ptrace restrictions (containers): check
        // everything else rather than nothing.
        eprintln!("LeakSanitizer cannot run here; {program:?} runs without leak checks");
        outcome = run("0");
    }
    let label = program.display().to_string();
    let outcome = outcome.expect_success(&label);
    for report in [
        "ERROR: AddressSanitizer",
        "runtime error",
        "ERROR: LeakSanitizer",
    ] {
        assert!(
            !outcome.stderr.contains(report),
            "{label}: {report}\n{}",
            outcome.stderr
        );
    }
    outcome
}

#[test]
fn reduction_under_asan_and_ubsan() {
    let program = compile_sanitized("reduction.c", "asan_reduction");
    assert!(run_sanitized(&program, &[]).stdout.contains("reduction ok"));
}

#[test]
fn team_under_asan_and_ubsan() {
    let program = compile_sanitized("team.c", "asan_team");
    assert!(run_sanitized(&program, &[]).stdout.contains("team ok"));
}

#[test]
fn barriers_phasers_and_accumulators_under_asan_and_ubsan() {
    let invariant = compile_sanitized("barrier_invariant.c", "asan_barrier_invariant");
    for algorithm in ["0", "4", "7"] {
        run_sanitized(&invariant, &[algorithm, "3", "50"]);
    }
    for test in ["barrier_errors", "phaser", "accumulator"] {
        let program = compile_sanitized(&format!("{test}.c"), &format!("asan_{test}"));
        assert!(run_sanitized(&program, &[]).stdout.contains(" ok"));
    }
}

#[test]
fn examples_under_asan_and_ubsan() {
    for example in ["barrier", "phaser_accumulator", "allreduce_1m"] {
        let program = compile_sanitized(
            &format!("../../examples/c/{example}.c"),
            &format!("asan_example_{example}"),
        );
        run_sanitized(&program, &["1"]);
        if example == "allreduce_1m" {
            run_sanitized(&program, &["1", "team"]);
        }
    }
}

#[test]
#[cfg_attr(
    not(has_valgrind),
    ignore = "valgrind is not on PATH: apt-get install valgrind"
)]
fn reduction_and_team_under_valgrind() {
    for test in ["reduction", "team"] {
        let program = support::compile_c(
            &[&format!("{test}.c")],
            &format!("valgrind_{test}"),
            Link::Shared,
        );
        let mut command = Command::new("valgrind");
        command
            .args(["-q", "--error-exitcode=99", "--leak-check=no"])
            .arg(&program);
        let outcome = run_captured(
            command,
            &format!("valgrind_{test}"),
            Duration::from_secs(300),
        )
        .expect_success(&format!("{test} under valgrind"));
        assert!(
            outcome.stdout.contains(&format!("{test} ok")),
            "{}",
            outcome.stdout
        );
    }
}
