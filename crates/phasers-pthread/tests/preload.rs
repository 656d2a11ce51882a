//! Runs the C programs in `tests/c`, compiled with the system `cc` against the system's
//! `<pthread.h>` only, without and with `LD_PRELOAD=libphasers_pthread.so`:
//!
//! - `barrier_invariant.c`, also under every algorithm through `PHASERS_BARRIER_ALGORITHM`: the
//!   barrier invariant, one serial thread per episode, destroy right after wait,
//!   re-initialization, count 0, process-shared fallback across a fork, and (with the preload
//!   active) EBUSY and EINVAL after destroy. The test checks from the program's report which
//!   implementation each run used.
//! - `signal_release.c`, under every algorithm the preload accepts: the last arrival releases
//!   everyone, even while every other thread that has arrived runs a signal handler that waits
//!   for one thread of the episode to be released (glibc's guarantee).
//! - `deepbind.c` with `deepbind_lib.c`: a library loaded with `RTLD_DEEPBIND` calls glibc's
//!   `pthread_barrier_wait` on a barrier the preload initialized, and the process stops with
//!   glibc's futex message and `SIGABRT`, not `SIGFPE`.
//! - `barrier_memory.c`: what a barrier costs in memory, per barrier and per party (printed; run
//!   `cargo test -p phasers-pthread --test preload memory -- --nocapture` to see it).

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
        // Captured: cargo's progress lines would read as the test's own output in `cargo test`.
        let output = build.output().expect("run cargo build -p phasers-pthread");
        assert!(
            output.status.success(),
            "cargo build -p phasers-pthread failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(library.is_file(), "{} was not built", library.display());
        library
    })
}

/// Compiles `tests/c/<source>` with `cc` and `args` into `<name>` under cargo's temporary
/// directory for this test, once per test process.
fn compiled(
    cell: &'static OnceLock<PathBuf>,
    source: &str,
    name: &str,
    args: &[&str],
) -> &'static Path {
    cell.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/c")
            .join(source);
        let output_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        let output = Command::new("cc")
            .args(["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread"])
            .args(args)
            .arg(&source)
            .arg("-o")
            .arg(&output_path)
            .arg("-ldl")
            .output()
            .expect("run the system C compiler `cc`");
        assert!(
            output.status.success(),
            "cc failed to compile {}:\n{}",
            source.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        output_path
    })
}

/// The barrier invariant program.
fn program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    compiled(&PROGRAM, "barrier_invariant.c", "barrier_invariant", &[])
}

/// The signal-handler program; bound at load time, so that no waiter is still in the dynamic
/// linker when it is taken for arrived.
fn signal_program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    compiled(
        &PROGRAM,
        "signal_release.c",
        "signal_release",
        &["-Wl,-z,now"],
    )
}

/// The memory measurement program.
fn memory_program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    compiled(&PROGRAM, "barrier_memory.c", "barrier_memory", &[])
}

/// The `RTLD_DEEPBIND` program and its library, compiled together.
fn deepbind_program() -> (&'static Path, &'static Path) {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    let library = compiled(
        &LIBRARY,
        "deepbind_lib.c",
        "deepbind_lib.so",
        &["-shared", "-fPIC"],
    );
    (compiled(&PROGRAM, "deepbind.c", "deepbind", &[]), library)
}

/// Runs `command` to its end, killing it and failing after [`HANG`]; returns its output.
fn finish(mut command: Command, what: &str) -> Output {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("start {what}: {e}"));
    let started = Instant::now();
    while child.try_wait().expect("poll the child").is_none() {
        if started.elapsed() > HANG {
            let _ = child.kill();
            let output = child
                .wait_with_output()
                .expect("collect the killed program");
            panic!(
                "{what}: still running after {HANG:?}; it hangs. Output so far:\n{}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
        .wait_with_output()
        .expect("collect the child's output")
}

/// `program`, with the preload or not, with none of the preload's variables but `env`.
fn command(program: &Path, preload: bool, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(program);
    command
        .env_remove("LD_PRELOAD")
        .env_remove("PHASERS_PTHREAD")
        .env_remove("PHASERS_BARRIER_ALGORITHM")
        .envs(env.iter().copied());
    if preload {
        command.env("LD_PRELOAD", library());
    }
    command
}

/// Runs the program with `env`, with or without the preload, failing on a hang; returns its
/// standard output after checking that it passed.
fn run(preload: bool, env: &[(&str, &str)]) -> String {
    let mut command = command(program(), preload, env);
    command.arg(EPISODES);
    let what = format!("barrier_invariant (preload: {preload}, env: {env:?})");
    let output = finish(command, &what);
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

/// How long, in milliseconds, the awaited thread of `signal_release` may take to return after the
/// last arrival before the round counts as hung. Releases take microseconds; a hang is for ever.
const RELEASE_TIMEOUT_MS: &str = "3000";

/// The party counts `signal_release` runs, every arrival position of the awaited thread each.
const SIGNAL_PARTIES: [&str; 6] = ["2", "3", "4", "5", "8", "16"];

/// Runs `signal_release` in `mode` for `parties`; returns its stderr after checking that no round
/// hung.
fn signal_release(preload: bool, env: &[(&str, &str)], mode: &str, parties: &[&str]) -> String {
    let mut command = command(signal_program(), preload, env);
    command.arg(RELEASE_TIMEOUT_MS).arg(mode).args(parties);
    let what = format!("signal_release {mode} (preload: {preload}, env: {env:?})");
    let output = finish(command, &what);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success() && stdout.contains("all rounds passed"),
        "{what}: the last arrival did not release everyone while the other arrived threads ran \
         signal handlers ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let implementation = reported(&stdout, "implementation");
    assert_eq!(
        implementation.ends_with("libphasers_pthread.so"),
        preload,
        "{what}: {implementation}"
    );
    stderr
}

#[test]
fn glibc_releases_everyone_on_the_last_arrival() {
    // The guarantee the preload must keep, and a check that the test program is right: with
    // glibc, every other arrived thread (mode all), or any one of them (mode one), may wait in a
    // signal handler for the awaited thread's release.
    signal_release(false, &[], "all", &SIGNAL_PARTIES);
    signal_release(false, &[], "one", &["3", "4", "5"]);
}

#[test]
fn the_last_arrival_releases_everyone_under_every_algorithm() {
    // Every name PHASERS_BARRIER_ALGORITHM accepts. Before the preload refused them,
    // combining-tree, mcs, dissemination and tournament hung here (mcs and tournament from 2
    // parties on: rank 0 must act after the last arrival).
    signal_release(true, &[], "all", &SIGNAL_PARTIES);
    signal_release(true, &[], "one", &["3", "4", "5"]);
    let names = std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE);
    for algorithm in names {
        signal_release(
            true,
            &[("PHASERS_BARRIER_ALGORITHM", algorithm.name())],
            "all",
            &SIGNAL_PARTIES,
        );
    }
}

#[test]
fn auto_never_runs_an_algorithm_that_needs_arrived_threads() {
    // A tuning profile for this machine that picks an algorithm needing the arrived threads'
    // help at every thread count: `auto` must not follow it (and says nothing: it was not asked
    // for by name).
    for chosen in [Algorithm::Tournament, Algorithm::McsTree] {
        let profile =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("profile-{}.json", chosen.name()));
        std::fs::write(
            &profile,
            format!(
                r#"{{"format": "phasers-profile", "version": 1, "cores": {}, "barrier": [{{"threads": 1, "algorithm": "{}"}}]}}"#,
                phasers::available_cores(),
                chosen.name()
            ),
        )
        .expect("write the profile");
        let profile = profile.to_str().expect("a UTF-8 temporary path");
        let stderr = signal_release(
            true,
            &[("PHASERS_PROFILE", profile)],
            "all",
            &SIGNAL_PARTIES,
        );
        assert!(stderr.trim().is_empty(), "{chosen}: {stderr}");
    }
}

#[test]
fn refused_algorithms_warn_once_and_run_counting() {
    for algorithm in Algorithm::CONCRETE {
        let output = command(
            program(),
            true,
            &[("PHASERS_BARRIER_ALGORITHM", algorithm.name())],
        )
        .arg("10")
        .output()
        .expect("run barrier_invariant");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{algorithm}: {stdout}\n{stderr}");
        assert_eq!(reported(&stdout, "private_magic"), "1", "{algorithm}");
        let refused = matches!(
            algorithm,
            Algorithm::CombiningTree
                | Algorithm::McsTree
                | Algorithm::Dissemination
                | Algorithm::Tournament
        );
        let lines: Vec<&str> = stderr.lines().collect();
        if !refused {
            assert!(
                lines.is_empty(),
                "{algorithm} runs as asked, silently:\n{stderr}"
            );
            continue;
        }
        assert_eq!(
            lines.len(),
            1,
            "{algorithm}: exactly one warning line:\n{stderr}"
        );
        let line = lines[0];
        for part in [
            format!("PHASERS_BARRIER_ALGORITHM={}", algorithm.name()),
            format!("refusing {}", algorithm.name()),
            "last arrival".to_string(),
            "signal handler".to_string(),
            "POSIX".to_string(),
            "using counting instead".to_string(),
        ] {
            assert!(
                line.contains(&part),
                "{algorithm}: {part:?} missing from:\n{line}"
            );
        }
    }
}

#[test]
fn a_deepbind_library_calling_glibc_aborts_cleanly_instead_of_sigfpe() {
    use std::os::unix::process::ExitStatusExt;

    let (program, deepbind_library) = deepbind_program();
    let run = |preload: bool| {
        // Older glibc versions write fatal messages to the terminal unless this is set.
        let mut command = command(program, preload, &[("LIBC_FATAL_STDERR_", "1")]);
        command.arg(deepbind_library);
        let output = finish(command, &format!("deepbind (preload: {preload})"));
        (
            output.status,
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };

    // Without the preload every call is glibc's.
    let (status, stdout, stderr) = run(false);
    assert!(status.success(), "{status}:\n{stdout}\n{stderr}");
    assert_eq!(reported(&stdout, "library wait"), "-1", "{stdout}");

    let (status, stdout, stderr) = run(true);
    let what = format!("{status}:\n{stdout}\n{stderr}");
    // glibc's wait stops the process with its message and abort(): no SIGFPE, and no return.
    assert_ne!(status.signal(), Some(libc::SIGFPE), "{what}");
    assert_eq!(status.signal(), Some(libc::SIGABRT), "{what}");
    assert!(
        stderr.contains("The futex facility returned an unexpected error code."),
        "{what}"
    );
    assert!(
        reported(&stdout, "implementation").ends_with("libphasers_pthread.so"),
        "{what}"
    );
    // The library really reaches glibc's function, not the preload's.
    assert!(
        reported(&stdout, "library binds pthread_barrier_wait to").contains("libc.so"),
        "{what}"
    );
    // glibc's destroy on the preload's layout does nothing, and the preload's still works.
    assert_eq!(reported(&stdout, "library destroy"), "0", "{what}");
    assert_eq!(
        reported(&stdout, "program destroy after library destroy"),
        "0",
        "{what}"
    );
    assert!(stdout.contains("calling the library's wait"), "{what}");
    assert!(!stdout.contains("all calls returned"), "{what}");
}

/// One run of `barrier_memory`: the bytes per barrier it measured.
fn memory(preload: bool, env: &[(&str, &str)], count: u32, barriers: u32) -> f64 {
    let output = command(memory_program(), preload, env)
        .arg(count.to_string())
        .arg(barriers.to_string())
        .output()
        .expect("run barrier_memory");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "barrier_memory {count} {barriers}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let field = |key: &str| {
        stdout
            .split_whitespace()
            .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("no {key} in {stdout}"))
    };
    println!(
        "preload={preload:<5} {:<32} count={count:<5} barriers={barriers:<5} bytes/barrier={:>9} \
         bytes/party={:>7}",
        env.iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(" "),
        field("bytes_per_barrier"),
        field("bytes_per_party"),
    );
    field("bytes_per_barrier").parse().expect("a number")
}

#[test]
fn memory_per_barrier_and_per_party() {
    // Printed for the README's table; each measurement runs in a fresh process.
    let glibc = memory(false, &[], 2, 10_000);
    let small = memory(true, &[], 2, 10_000);
    let medium = memory(true, &[], 64, 1_000);
    let large = memory(true, &[], 16_384, 1);
    // Asked for by name, a tournament is refused, and the counting barrier that runs instead
    // costs what auto's does: 16384 tournament parties took 35 MB when they were allowed.
    let refused = memory(
        true,
        &[("PHASERS_BARRIER_ALGORITHM", "tournament")],
        16_384,
        1,
    );
    let per_party = (large - small) / (16_384.0 - 2.0);
    let fixed = small - 2.0 * per_party;
    println!(
        "preload: about {fixed:.0} bytes per barrier plus {per_party:.0} bytes per party \
         (glibc: {glibc:.0} bytes measured per barrier, that is nothing beyond the \
         pthread_barrier_t)"
    );
    // Loose bounds, to catch a regression by a multiple, not to pin the allocator.
    assert!(small < 4096.0, "{small} bytes per 2-party barrier");
    assert!(per_party < 512.0, "{per_party} bytes per party");
    assert!(
        medium < 64.0 * 512.0 + 4096.0,
        "{medium} bytes per 64-party barrier"
    );
    assert!(
        refused < 2.0 * large,
        "{refused} bytes for a refused tournament of 16384"
    );
}
