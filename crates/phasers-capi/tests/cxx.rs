//! `include/phasers.hpp`, the header-only C++17 layer: the programs in `tests/cxx/` compile with
//! `g++ -std=c++17 -Wall -Wextra -Werror -pedantic` (and stricter conversion warnings), link
//! against `libphasers.so` and run (also under ASan and UBSan); unsupported element types and
//! temporaries given to non-blocking calls fail to compile with the header's messages. The
//! programs check that destructors release the C handles: a stale handle reads
//! `PHASERS_EDESTROYED`.

mod support;

use std::process::Command;
use std::time::Duration;

use support::{compile_with, crate_dir, run, run_captured, run_with_env, Link};

/// The flags every C++ test program is built with.
fn flags(standard: &'static str) -> Vec<&'static str> {
    vec![
        standard,
        "-O1",
        "-g",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-Wshadow",
        "-Wconversion",
        "-Wsign-conversion",
        "-pthread",
    ]
}

/// Compiles `tests/cxx/<source>` as `standard` and runs it; it must print `<expected> ok`.
fn compile_and_run(source: &str, standard: &'static str, name: &str, link: Link, expected: &str) {
    let path = format!("../cxx/{source}");
    let program = compile_with("g++", &flags(standard), &[&path], name, link);
    let outcome = run(&program, &[]).expect_success(name);
    assert!(
        outcome.stdout.contains(&format!("{expected} ok")),
        "{name} printed:\n{}\nstderr:\n{}",
        outcome.stdout,
        outcome.stderr
    );
}

#[test]
fn cxx_core_wrappers() {
    compile_and_run(
        "core.cpp",
        "-std=c++17",
        "cxx_core",
        Link::Shared,
        "cxx core",
    );
}

#[test]
fn cxx_core_wrappers_cpp20_static() {
    // The header under a later standard (char8_t exists there), linked with the static library.
    compile_and_run(
        "core.cpp",
        "-std=c++20",
        "cxx_core_cpp20",
        Link::Static,
        "cxx core",
    );
}

#[test]
fn cxx_reduction_wrappers() {
    compile_and_run(
        "reduction.cpp",
        "-std=c++17",
        "cxx_reduction",
        Link::Shared,
        "cxx reduction",
    );
}

#[test]
fn cxx_team_member_request_wrappers() {
    compile_and_run(
        "team.cpp",
        "-std=c++17",
        "cxx_team",
        Link::Shared,
        "cxx team",
    );
}

#[test]
fn cxx_example_team() {
    let program = compile_with(
        "g++",
        &flags("-std=c++17"),
        &["../../examples/cxx/team.cpp"],
        "cxx_example_team",
        Link::Shared,
    );
    let outcome = run(&program, &[]).expect_success("examples/cxx/team.cpp");
    assert!(
        outcome.stdout.contains("every member: 10 (6 + 3 + 1)")
            && outcome
                .stdout
                .contains("3 members were released with PHASERS_EBROKEN")
            && outcome.stdout.ends_with("ok\n"),
        "{}",
        outcome.stdout
    );
}

/// Compiles `tests/cxx/unsupported.cpp` with `-DCASE=case` (syntax only); returns whether it
/// compiled and what the compiler said.
fn compile_case(case: u32) -> (bool, String) {
    let mut command = Command::new("g++");
    command
        .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-DCASE={case}"))
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("tests/cxx/unsupported.cpp"));
    let outcome = run_captured(
        command,
        &format!("cxx_unsupported_{case}"),
        Duration::from_secs(120),
    );
    (outcome.success, outcome.stderr)
}

#[test]
fn cxx_unsupported_element_types_do_not_compile() {
    let (ok, stderr) = compile_case(0);
    assert!(ok, "the control case must compile:\n{stderr}");
    let accumulator = "T must be float, double or a 32- or 64-bit integer";
    let reduction = "T must be float, double, or a 32- or 64-bit signed integer";
    for (case, message) in [
        (1, accumulator),
        (2, accumulator),
        (3, accumulator),
        (4, reduction),
        (
            5,
            "the element type must be float, double or a 32- or 64-bit integer",
        ),
        (6, "a non-blocking call's buffers must outlive its Request"),
    ] {
        let (ok, stderr) = compile_case(case);
        assert!(
            !ok,
            "case {case} compiled, but its element type is unsupported"
        );
        assert!(
            stderr.contains(message),
            "case {case} failed without the header's static_assert message:\n{stderr}"
        );
    }
}

/// The three test programs under AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer,
/// with the options and suppressions `tests/sanitizers.rs` uses for the C programs: the C++
/// layer's own memory (spans, moved-from handles, exceptions crossing threads) is checked.
#[test]
fn cxx_wrappers_under_asan_and_ubsan() {
    let suppressions = format!(
        "suppressions={}",
        crate_dir().join("tests/c/lsan.supp").display()
    );
    for (source, expected) in [
        ("core.cpp", "cxx core ok"),
        ("reduction.cpp", "cxx reduction ok"),
        ("team.cpp", "cxx team ok"),
    ] {
        let mut sanitized = flags("-std=c++17");
        sanitized.extend([
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=undefined",
            "-fno-omit-frame-pointer",
        ]);
        let name = format!("asan_cxx_{}", source.trim_end_matches(".cpp"));
        let program = compile_with(
            "g++",
            &sanitized,
            &[&format!("../cxx/{source}")],
            &name,
            Link::Shared,
        );
        let run = |leaks: &str| {
            let asan = format!("fast_unwind_on_malloc=0:detect_leaks={leaks}:halt_on_error=1");
            run_with_env(
                &program,
                &[],
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
            // LeakSanitizer cannot stop the world under some ptrace restrictions (containers).
            eprintln!("LeakSanitizer cannot run here; {name} runs without leak checks");
            outcome = run("0");
        }
        let outcome = outcome.expect_success(&name);
        assert!(outcome.stdout.contains(expected), "{}", outcome.stdout);
        for report in [
            "ERROR: AddressSanitizer",
            "runtime error",
            "ERROR: LeakSanitizer",
        ] {
            assert!(
                !outcome.stderr.contains(report),
                "{name}: {report}\n{}",
                outcome.stderr
            );
        }
    }
}
