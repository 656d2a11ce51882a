//! The Fortran modules `fortran/phasers.f90` and `fortran/phasers_mpi.f90` (compiled only: it runs
//! in tests/mpi_install.rs, under mpirun) and the examples in `examples/fortran/` but
//! `mpi_hybrid.f90` (also tests/mpi_install.rs's): compiled
//! with `gfortran -std=f2008 -Wall -Wextra -Werror -fopenmp`, linked against `libphasers`, run
//! with OpenMP threads as the ranks. The compiler is `$FC`, `gfortran` or `gfortran-NN`
//! (`tests/support/tools.rs`); where there is none, every test here is ignored with the reason
//! (CI installs gfortran).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use support::{crate_dir, fortran_compiler, library_dir, run, run_captured, Link};

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
        let mut command = Command::new(fortran_compiler());
        command
            .args(FLAGS)
            .arg("-J")
            .arg(&dir)
            .arg("-c")
            .arg(crate_dir().join("fortran/phasers.f90"))
            .arg("-o")
            .arg(dir.join("phasers.o"));
        run_captured(command, "fortran_module.compile", Duration::from_secs(300)).expect_success(
            &format!("compiling fortran/phasers.f90 with {}", fortran_compiler()),
        );
        dir
    })
}

/// Compiles `source` (relative to the crate) with the module into the program `name`.
fn compile(source: &str, name: &str, link: Link) -> PathBuf {
    let modules = module();
    let lib = library_dir();
    let output = work_dir().join(name);
    let mut command = Command::new(fortran_compiler());
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
    .expect_success(&format!("compiling {source} with {}", fortran_compiler()));
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
#[cfg_attr(
    not(has_gfortran),
    ignore = "no GNU Fortran compiler on PATH (FC, gfortran, gfortran-NN): apt-get install gfortran"
)]
fn fortran_mpi_module_compiles() {
    let modules = module();
    let mut command = Command::new(fortran_compiler());
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
    .expect_success(&format!(
        "compiling fortran/phasers_mpi.f90 with {}",
        fortran_compiler()
    ));
    assert!(modules.join("phasers_mpi.mod").is_file());
}

#[test]
#[cfg_attr(
    not(has_gfortran),
    ignore = "no GNU Fortran compiler on PATH (FC, gfortran, gfortran-NN): apt-get install gfortran"
)]
fn fortran_barriers_and_phasers() {
    compile_and_run(
        "tests/fortran/core.f90",
        "fortran_core",
        Link::Shared,
        &[],
        "fortran core ok",
    );
}

#[test]
#[cfg_attr(
    not(has_gfortran),
    ignore = "no GNU Fortran compiler on PATH (FC, gfortran, gfortran-NN): apt-get install gfortran"
)]
fn fortran_reductions() {
    compile_and_run(
        "tests/fortran/reduction.f90",
        "fortran_reduction",
        Link::Static,
        &[],
        "fortran reduction ok",
    );
}

#[test]
#[cfg_attr(
    not(has_gfortran),
    ignore = "no GNU Fortran compiler on PATH (FC, gfortran, gfortran-NN): apt-get install gfortran"
)]
fn fortran_teams() {
    compile_and_run(
        "tests/fortran/team.f90",
        "fortran_team",
        Link::Shared,
        &[],
        "fortran team ok",
    );
}

#[test]
#[cfg_attr(
    not(has_gfortran),
    ignore = "no GNU Fortran compiler on PATH (FC, gfortran, gfortran-NN): apt-get install gfortran"
)]
fn fortran_failure_without_stat_stops_with_the_message() {
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
#[cfg_attr(
    not(has_gfortran),
    ignore = "no GNU Fortran compiler on PATH (FC, gfortran, gfortran-NN): apt-get install gfortran"
)]
fn fortran_example_jacobi_matches_serial() {
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
#[cfg_attr(
    not(has_gfortran),
    ignore = "no GNU Fortran compiler on PATH (FC, gfortran, gfortran-NN): apt-get install gfortran"
)]
fn fortran_example_allreduce_1m() {
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
