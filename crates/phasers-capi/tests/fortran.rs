//! The Fortran modules `fortran/phasers.f90` and `fortran/phasers_mpi.f90` (compiled only: it runs
//! in tests/mpi_install.rs, under mpirun) and the examples in `examples/fortran/` but
//! `mpi_hybrid.f90` (also tests/mpi_install.rs's): compiled
//! with `gfortran -std=f2008 -Wall -Wextra -Werror -fopenmp`, linked against `libphasers`, run
//! with OpenMP threads as the ranks. Skipped, with a message, only where gfortran is missing
//! (CI installs it).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use support::{crate_dir, library_dir, run, run_captured, Link};

/// Every Fortran file is compiled with these. `-std=f2008` holds for the module and the programs:
/// OpenMP directives are comments to the standard, and `omp_lib` is an ordinary module.
const FLAGS: [&str; 7] = [
    "-std=f2008",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-fopenmp",
    "-O1",
    "-g",
];

/// Whether `gfortran` runs; prints why the test is skipped when it does not.
fn have_gfortran(test: &str) -> bool {
    let found = Command::new("gfortran")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !found {
        eprintln!(
            "SKIPPED {test}: gfortran is not installed (apt-get install gfortran); CI installs it"
        );
    }
    found
}

/// This test binary's directory for Fortran objects, modules and programs.
fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("phasers-capi-fortran");
    std::fs::create_dir_all(&dir).expect("the target's tmp directory is writable");
    dir
}

/// Compiles `fortran/phasers.f90` once: `phasers.mod` and `phasers.o` in the work directory.
fn module() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = work_dir();
        let mut command = Command::new("gfortran");
        command
            .args(FLAGS)
            .arg("-J")
            .arg(&dir)
            .arg("-c")
            .arg(crate_dir().join("fortran/phasers.f90"))
            .arg("-o")
            .arg(dir.join("phasers.o"));
        run_captured(command, "fortran_module.compile", Duration::from_secs(300))
            .expect_success("compiling fortran/phasers.f90 with gfortran");
        dir
    })
}

/// Compiles `source` (relative to the crate) with the module into the program `name`.
fn compile(source: &str, name: &str, link: Link) -> PathBuf {
    let modules = module();
    let lib = library_dir();
    let output = work_dir().join(name);
    let mut command = Command::new("gfortran");
    command
        .args(FLAGS)
        .arg("-I")
        .arg(modules)
        .arg(crate_dir().join(source))
        .arg(modules.join("phasers.o"))
        .arg("-o")
        .arg(&output);
    match link {
        Link::Shared => {
            command
                .arg("-L")
                .arg(lib)
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .arg("-lphasers");
        }
        Link::Static => {
            command
                .arg(lib.join("libphasers.a"))
                .args(["-lpthread", "-ldl", "-lm"]);
        }
    }
    run_captured(
        command,
        &format!("{name}.compile"),
        Duration::from_secs(300),
    )
    .expect_success(&format!("compiling {source} with gfortran"));
    output
}

/// Compiles and runs `source`, which must print `expected`.
fn compile_and_run(source: &str, name: &str, link: Link, args: &[&str], expected: &str) -> String {
    let program = compile(source, name, link);
    let outcome = run(&program, args).expect_success(name);
    assert!(
        outcome.stdout.contains(expected),
        "{name} did not print {expected:?}; stdout:\n{}\nstderr:\n{}",
        outcome.stdout,
        outcome.stderr
    );
    outcome.stdout
}

/// The module `phasers_mpi` (`fortran/phasers_mpi.f90`) compiles with the strict flags against
/// the module `phasers`; it needs no MPI to compile (tests/mpi_install.rs runs it under mpirun).
#[test]
fn fortran_mpi_module_compiles() {
    if !have_gfortran("fortran_mpi_module_compiles") {
        return;
    }
    let modules = module();
    let mut command = Command::new("gfortran");
    command
        .args(FLAGS)
        .arg("-I")
        .arg(modules)
        .arg("-J")
        .arg(modules)
        .arg("-c")
        .arg(crate_dir().join("fortran/phasers_mpi.f90"))
        .arg("-o")
        .arg(modules.join("phasers_mpi.o"));
    run_captured(
        command,
        "fortran_mpi_module.compile",
        Duration::from_secs(300),
    )
    .expect_success("compiling fortran/phasers_mpi.f90 with gfortran");
    assert!(modules.join("phasers_mpi.mod").is_file());
}

#[test]
fn fortran_barriers_and_phasers() {
    if !have_gfortran("fortran_barriers_and_phasers") {
        return;
    }
    compile_and_run(
        "tests/fortran/core.f90",
        "fortran_core",
        Link::Shared,
        &[],
        "fortran core ok",
    );
}

#[test]
fn fortran_reductions() {
    if !have_gfortran("fortran_reductions") {
        return;
    }
    compile_and_run(
        "tests/fortran/reduction.f90",
        "fortran_reduction",
        Link::Static,
        &[],
        "fortran reduction ok",
    );
}

#[test]
fn fortran_teams() {
    if !have_gfortran("fortran_teams") {
        return;
    }
    compile_and_run(
        "tests/fortran/team.f90",
        "fortran_team",
        Link::Shared,
        &[],
        "fortran team ok",
    );
}

#[test]
fn fortran_failure_without_stat_stops_with_the_message() {
    if !have_gfortran("fortran_failure_without_stat_stops_with_the_message") {
        return;
    }
    let program = compile(
        "tests/fortran/error_stop.f90",
        "fortran_error_stop",
        Link::Shared,
    );
    let outcome = run(&program, &[]);
    assert!(!outcome.success, "a failed call without stat= must stop");
    assert!(
        !outcome.stdout.contains("not reached"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome
            .stderr
            .contains("phasers: phasers_barrier_create: invalid argument")
            && outcome.stderr.contains("at least 1 party")
            && outcome.stderr.contains("ERROR STOP"),
        "stderr lacks the C function and phasers_last_error():\n{}",
        outcome.stderr
    );
}

#[test]
fn fortran_example_jacobi_matches_serial() {
    if !have_gfortran("fortran_example_jacobi_matches_serial") {
        return;
    }
    let stdout = compile_and_run(
        "examples/fortran/jacobi.f90",
        "fortran_jacobi",
        Link::Shared,
        &[],
        "largest difference from the serial run:  0.000E+00",
    );
    assert!(stdout.ends_with("ok\n"), "{stdout}");
}

#[test]
fn fortran_example_allreduce_1m() {
    if !have_gfortran("fortran_example_allreduce_1m") {
        return;
    }
    // A few calls: this checks the program, the time of a debug build means little.
    let stdout = compile_and_run(
        "examples/fortran/allreduce_1m.f90",
        "fortran_allreduce_1m",
        Link::Shared,
        &["5"],
        "allreduce of 1048576 doubles across 2 threads: ",
    );
    assert!(
        stdout.contains(" ns per call") && stdout.ends_with("ok\n"),
        "{stdout}"
    );
}
