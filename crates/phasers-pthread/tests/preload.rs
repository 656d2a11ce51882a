//! Runs `tests/c/barrier_invariant.c`, compiled with the system `cc` against the system's
//! `<pthread.h>` only, without and with `LD_PRELOAD=libphasers_pthread.so`, and under every
//! algorithm through `PHASERS_BARRIER_ALGORITHM`; the program checks the barrier invariant, one
//! serial thread per episode, destroy right after wait, re-initialization, count 0, process-shared
//! fallback across a fork, and (with the preload active) EBUSY and EINVAL after destroy. The test
//! checks from the program's report which implementation each run used.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use phasers::Algorithm;

/// How long one run of the program may take before the test calls it a hang.
const HANG: Duration = Duration::from_secs(120);

/// Episodes per run (64 threads run a tenth): enough to interleave, small enough for 2 cores.
const EPISODES: &str = "1000";

/// The directory cargo builds this package's outputs into (`target/<profile>`): this test binary
/// lives in its `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary lies in target/<profile>/deps")
        .to_path_buf()
}

/// The preload library, built first if cargo has not built it for this test (cargo builds a
/// package's library before its integration tests only when they can link to it, which a
/// cdylib-only package's cannot).
fn library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let dir = profile_dir();
        let library = dir.join("libphasers_pthread.so");
        let profile_name = dir.file_name().and_then(|name| name.to_str()).unwrap();
        let target_dir = dir.parent().expect("target/<profile> has a parent");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut build = Command::new(cargo);
        build
            .args(["build", "-p", "phasers-pthread", "--lib"])
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        match profile_name {
            "debug" => {}
            "release" => {
                build.arg("--release");
            }
            other => {
                build.args(["--profile", other]);
            }
        }
        let status = build.status().expect("run cargo build -p phasers-pthread");
        assert!(status.success(), "cargo build -p phasers-pthread failed");
        assert!(library.is_file(), "{} was not built", library.display());
        library
    })
}

/// The C program, compiled once.
fn program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/barrier_invariant.c");
        let program = Path::new(env!("CARGO_TARGET_TMPDIR")).join("barrier_invariant");
        let output = Command::new("cc")
            .args(["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread"])
            .arg(&source)
            .arg("-o")
            .arg(&program)
            .arg("-ldl")
            .output()
            .expect("run the system C compiler `cc`");
        assert!(
            output.status.success(),
            "cc failed to compile {}:\n{}",
            source.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        program
    })
}

/// Runs the program with `env`, with or without the preload, failing on a hang; returns its
/// standard output after checking that it passed.
fn run(preload: bool, env: &[(&str, &str)]) -> String {
    let mut command = Command::new(program());
    command
        .arg(EPISODES)
        .env_remove("LD_PRELOAD")
        .env_remove("PHASERS_PTHREAD")
        .env_remove("PHASERS_BARRIER_ALGORITHM")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if preload {
        command.env("LD_PRELOAD", library());
    }
    let what = format!("barrier_invariant (preload: {preload}, env: {env:?})");
    let mut child = command.spawn().expect("start barrier_invariant");
    let started = Instant::now();
    while child.try_wait().expect("poll barrier_invariant").is_none() {
        if started.elapsed() > HANG {
            let _ = child.kill();
            let output = child
                .wait_with_output()
                .expect("collect the killed program");
            panic!(
                "{what}: still running after {HANG:?}; it hangs. Output so far:\n{}",
                String::from_utf8_lossy(&output.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output: Output = child.wait_with_output().expect("collect barrier_invariant");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "{what} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    stdout
}

/// The value the program reported for `key`.
fn reported<'a>(stdout: &'a str, key: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("the program did not report {key}:\n{stdout}"))
}

#[test]
fn without_the_preload_the_system_barrier_passes() {
    let stdout = run(false, &[]);
    assert!(
        !reported(&stdout, "implementation").contains("phasers_pthread"),
        "{stdout}"
    );
    assert_eq!(reported(&stdout, "phasers_pthread_active"), "-1");
    assert_eq!(reported(&stdout, "private_magic"), "0");
}

#[test]
fn with_the_preload_our_barrier_passes() {
    let stdout = run(true, &[]);
    assert!(
        reported(&stdout, "implementation").ends_with("libphasers_pthread.so"),
        "pthread_barrier_wait must resolve to the preload:\n{stdout}"
    );
    assert_eq!(reported(&stdout, "phasers_pthread_active"), "1");
    assert_eq!(reported(&stdout, "private_magic"), "1", "{stdout}");
    // Process-shared barriers are left to glibc.
    assert_eq!(reported(&stdout, "shared_magic"), "0", "{stdout}");
    assert!(stdout.contains("ok: destroy while a thread waits gives EBUSY"));
    assert!(stdout.contains("ok: wait and destroy after destroy give EINVAL"));
}

#[test]
fn every_algorithm_passes_through_the_preload() {
    for algorithm in Algorithm::CONCRETE {
        let stdout = run(true, &[("PHASERS_BARRIER_ALGORITHM", algorithm.name())]);
        assert_eq!(reported(&stdout, "private_magic"), "1", "{algorithm}");
    }
}

#[test]
fn off_forwards_everything_to_the_system() {
    let stdout = run(true, &[("PHASERS_PTHREAD", "off")]);
    // Loaded, so its symbols win, but every barrier is glibc's.
    assert_eq!(reported(&stdout, "phasers_pthread_active"), "0");
    assert_eq!(reported(&stdout, "private_magic"), "0", "{stdout}");
}

#[test]
fn an_unknown_algorithm_warns_and_uses_auto() {
    let mut command = Command::new(program());
    let output = command
        .arg("10")
        .env("LD_PRELOAD", library())
        .env("PHASERS_BARRIER_ALGORITHM", "fastest-please")
        .env_remove("PHASERS_PTHREAD")
        .output()
        .expect("run barrier_invariant");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(reported(&stdout, "private_magic"), "1");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("PHASERS_BARRIER_ALGORITHM"))
        .collect();
    assert_eq!(warnings.len(), 1, "exactly one warning line:\n{stderr}");
    assert!(
        warnings[0].contains("fastest-please") && warnings[0].contains("using auto"),
        "{stderr}"
    );
}
