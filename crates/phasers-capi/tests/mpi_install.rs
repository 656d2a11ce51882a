//! The MPI install (`scripts/install-capi.sh --mpi`, cargo feature `mpi`), used the way
//! README.md's "MPI programs" section says: the README's blocks marked `<!-- tests/mpi_install.rs
//! runs this block: NAME -->` run as printed, as tests/readme.rs runs the others (in a shell with
//! a scratch HOME and none of cargo's variables, after the block `environment` that sets PREFIX,
//! PKG_CONFIG_PATH and CMAKE_PREFIX_PATH): the install from the repository's root, then, in a
//! directory where `prog.c` and `prog.f90` are `examples/c/mpi_hybrid.c` and
//! `examples/fortran/mpi_hybrid.f90`, a C program compiled with
//! `pkg-config --cflags --libs phasers-mpi` and against `libphasers.a`, a CMake project using the
//! component `mpi`, and the Fortran program compiled with `mpifort` and with CMake's
//! `mpi_fortran` component. Each program runs under `mpirun -np 2` and must print its "ok" line,
//! which it prints only when its allreduce results match MPI's own `MPI_Allreduce` and its
//! barrier episodes count as they should.
//!
//! ```text
//! cargo test -p phasers-capi --features mpi --test mpi_install
//! ```
//!
//! A test is ignored, with the reason, where a program it needs (pkg-config, mpirun, cmake,
//! mpifort, a GNU Fortran compiler) is missing; scripts/setup-mpi.sh installs them, and
//! scripts/test-mpi.sh runs this test.

#![cfg(feature = "mpi")]

mod support;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use support::readme::{block, repository, user_shell};
use support::{crate_dir, run_captured, Outcome};

/// A block compiles and runs two MPI jobs of 2 ranks; on 2 cores that takes seconds, CMake's
/// configure about ten. The limit only turns a hang into a failure with the output.
const LIMIT: Duration = Duration::from_secs(300);

/// A fresh directory `name` under the target's tmp directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = scratch(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the target's tmp directory is writable");
    dir
}

/// The directory `name` under the target's tmp directory.
fn scratch(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("phasers-capi-mpi-install")
        .join(name)
}

/// Open MPI jobs started together can race for their session directory under /tmp: one block
/// with mpirun at a time.
static MPIRUN: Mutex<()> = Mutex::new(());

/// Runs README.md's block `environment` (tests/readme.rs's), then `script`, in `dir` with bash
/// (`-e`: the first failing line fails it, `-x`: the lines it ran are in stderr).
fn run_script(script: &str, dir: &Path, label: &str) -> Outcome {
    let script = format!("{}{script}", block("readme.rs", "environment"));
    let mut bash = user_shell(&script, dir, &scratch("home"));
    // Open MPI refuses to run as root without these; harmless otherwise.
    bash.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env_remove("PHASERS_MPI_PKG");
    let _one = MPIRUN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let outcome = run_captured(bash, label, LIMIT);
    assert!(
        outcome.success,
        "README.md's block {label} failed:\n{script}\nstdout:\n{}\nstderr:\n{}",
        outcome.stdout, outcome.stderr
    );
    outcome
}

/// `expected` must be printed exactly `times` times (once per program run).
fn expect_lines(outcome: &Outcome, expected: &str, times: usize, label: &str) {
    let found = outcome
        .stdout
        .lines()
        .filter(|line| line.starts_with(expected))
        .count();
    assert_eq!(
        found, times,
        "{label}: expected {times} line(s) starting {expected:?}; stdout:\n{}\nstderr:\n{}",
        outcome.stdout, outcome.stderr
    );
}

/// The MPI install every test shares: README.md's block `install` of the MPI section, run from
/// the repository's root; PREFIX is `$HOME/.local` under the scratch HOME.
fn prefix() -> &'static Path {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let home = fresh_dir("home");
        run_script(
            &block("mpi_install.rs", "install"),
            &repository(),
            "install-capi-mpi",
        );
        let prefix = home.join(".local");
        for file in [
            "include/phasers.h",
            "include/phasers_mpi.h",
            "lib/libphasers.so",
            "lib/libphasers.a",
            "lib/pkgconfig/phasers.pc",
            "lib/pkgconfig/phasers-mpi.pc",
            "lib/cmake/phasers/phasersConfig.cmake",
            "share/phasers/fortran/phasers_mpi.f90",
        ] {
            assert!(
                prefix.join(file).is_file(),
                "{file} was not installed under {} (the block environment's PREFIX)",
                prefix.display()
            );
        }
        let pc = std::fs::read_to_string(prefix.join("lib/pkgconfig/phasers-mpi.pc")).unwrap();
        assert!(pc.contains("\nRequires: phasers = "), "{pc}");
        // This install's libphasers.a needs MPI: a static link through pkg-config gets it.
        let plain = std::fs::read_to_string(prefix.join("lib/pkgconfig/phasers.pc")).unwrap();
        assert!(plain.contains("\nRequires.private: "), "{plain}");
        prefix
    })
}

/// A fresh work directory holding `source` (relative to the crate) as `name`.
fn work_with(dir: &str, source: &str, name: &str) -> PathBuf {
    let work = fresh_dir(dir);
    std::fs::copy(crate_dir().join(source), work.join(name))
        .unwrap_or_else(|error| panic!("copy {source}: {error}"));
    work
}

#[test]
#[cfg_attr(
    not(all(has_pkg_config, has_mpirun)),
    ignore = "needs pkg-config, mpirun on PATH: scripts/setup-mpi.sh installs them"
)]
fn c_program_builds_with_pkg_config_and_runs_on_2_ranks() {
    let test = "c_program_builds_with_pkg_config_and_runs_on_2_ranks";
    prefix();
    let work = work_with("c", "examples/c/mpi_hybrid.c", "prog.c");
    let outcome = run_script(&block("mpi_install.rs", "c"), &work, "mpi-install-c");
    // The shared and the static build: both ran, and both agreed with MPI_Allreduce.
    expect_lines(&outcome, "mpi_hybrid ok on 2 ranks: ", 2, test);
}

#[test]
#[cfg_attr(
    not(all(has_cmake, has_mpirun)),
    ignore = "needs cmake, mpirun on PATH: scripts/setup-mpi.sh installs them"
)]
fn cmake_project_with_the_mpi_component_runs_on_2_ranks() {
    let test = "cmake_project_with_the_mpi_component_runs_on_2_ranks";
    prefix();
    let work = work_with("cmake", "examples/c/mpi_hybrid.c", "prog.c");
    std::fs::write(
        work.join("CMakeLists.txt"),
        block("mpi_install.rs", "cmake"),
    )
    .unwrap();
    let outcome = run_script(
        &block("mpi_install.rs", "cmake-build"),
        &work,
        "mpi-install-cmake",
    );
    expect_lines(&outcome, "mpi_hybrid ok on 2 ranks: ", 2, test);
}

#[test]
#[cfg_attr(
    not(all(has_gfortran, has_mpifort, has_mpirun)),
    ignore = "needs a GNU Fortran compiler, mpifort, mpirun on PATH: scripts/setup-mpi.sh installs them"
)]
fn fortran_program_builds_with_mpifort_and_runs_on_2_ranks() {
    let test = "fortran_program_builds_with_mpifort_and_runs_on_2_ranks";
    prefix();
    let work = work_with("fortran", "examples/fortran/mpi_hybrid.f90", "prog.f90");
    let outcome = run_script(
        &block("mpi_install.rs", "fortran"),
        &work,
        "mpi-install-fortran",
    );
    expect_lines(&outcome, "fortran mpi_hybrid ok on 2 ranks: ", 1, test);
}

#[test]
#[cfg_attr(
    not(all(has_cmake, has_gfortran, has_mpifort, has_mpirun)),
    ignore = "needs cmake, a GNU Fortran compiler, mpifort, mpirun on PATH: scripts/setup-mpi.sh installs them"
)]
fn cmake_fortran_project_with_the_mpi_fortran_component_runs_on_2_ranks() {
    let test = "cmake_fortran_project_with_the_mpi_fortran_component_runs_on_2_ranks";
    prefix();
    let work = work_with(
        "cmake-fortran",
        "examples/fortran/mpi_hybrid.f90",
        "prog.f90",
    );
    std::fs::write(
        work.join("CMakeLists.txt"),
        block("mpi_install.rs", "cmake-fortran"),
    )
    .unwrap();
    let outcome = run_script(
        &block("mpi_install.rs", "cmake-fortran-build"),
        &work,
        "mpi-install-cmake-fortran",
    );
    expect_lines(&outcome, "fortran mpi_hybrid ok on 2 ranks: ", 1, test);
}
