//! The MPI install (`scripts/install-capi.sh --mpi`, cargo feature `mpi`), used the way
//! README.md's "MPI programs" section says: the test installs into a temporary PREFIX with the
//! README's install line, then runs the README's blocks marked `<!-- tests/mpi_install.rs runs
//! this block: NAME -->` as printed (PREFIX replaced by the temporary one; `prog.c` and `prog.f90`
//! are `examples/c/mpi_hybrid.c` and `examples/fortran/mpi_hybrid.f90`): a C program compiled with
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
//! Each test says it skipped where a tool it needs (pkg-config, mpirun, cmake, mpifort) is
//! missing; scripts/setup-mpi.sh installs them, and scripts/test-mpi.sh runs this test.

#![cfg(feature = "mpi")]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use support::{crate_dir, library_dir, run_captured, Outcome};

/// A block compiles and runs two MPI jobs of 2 ranks; on 2 cores that takes seconds, CMake's
/// configure about ten. The limit only turns a hang into a failure with the output.
const LIMIT: Duration = Duration::from_secs(300);

/// Whether `program --version` runs; prints why `test` is skipped when it does not.
fn have(program: &str, test: &str) -> bool {
    support::have(program, test, "scripts/setup-mpi.sh, or apt-get install it")
}

/// Whether every tool of `programs` is here, saying which is missing otherwise.
fn have_all(programs: &[&str], test: &str) -> bool {
    programs.iter().all(|program| have(program, test))
}

/// A fresh directory `name` under the target's tmp directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("phasers-capi-mpi-install")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the target's tmp directory is writable");
    dir
}

/// README.md's "MPI programs" section.
fn readme_mpi_section() -> String {
    let readme = std::fs::read_to_string(crate_dir().join("README.md")).unwrap();
    let start = readme
        .find("## MPI programs")
        .expect("README.md has a section \"## MPI programs\"");
    let rest = &readme[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |end| end + 3);
    rest[..end].to_string()
}

/// The code block after the marker `<!-- tests/mpi_install.rs runs this block: NAME -->`.
fn readme_block(name: &str) -> String {
    let section = readme_mpi_section();
    let marker = format!("<!-- tests/mpi_install.rs runs this block: {name} -->");
    let at = section
        .find(&marker)
        .unwrap_or_else(|| panic!("README.md's MPI section lacks the marker {marker}"));
    let after = &section[at + marker.len()..];
    let open = after.find("```").expect("a code block follows the marker");
    let body = &after[open..];
    let body = &body[body.find('\n').expect("the fence ends its line") + 1..];
    let close = body.find("\n```").expect("the code block is closed");
    body[..close + 1].to_string()
}

/// `text` with each word `PREFIX` (not CMAKE_PREFIX_PATH) replaced by `prefix`.
fn with_prefix(text: &str, prefix: &Path) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let prefix = prefix.to_str().expect("the temporary prefix is UTF-8");
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("PREFIX") {
        out.push_str(&rest[..at]);
        let before = out.chars().last();
        let after = rest[at + "PREFIX".len()..].chars().next();
        out.push_str(if word(before) || word(after) {
            "PREFIX"
        } else {
            prefix
        });
        rest = &rest[at + "PREFIX".len()..];
    }
    out.push_str(rest);
    out
}

/// Open MPI jobs started together can race for their session directory under /tmp: one block
/// with mpirun at a time.
static MPIRUN: Mutex<()> = Mutex::new(());

/// Runs a README `sh` block in `dir` with bash (`-e`: the first failing line fails it, `-x`: the
/// lines it ran are in stderr), PREFIX replaced by `prefix`.
fn run_block(block: &str, dir: &Path, prefix: &Path, label: &str) -> Outcome {
    let script = with_prefix(block, prefix);
    let mut bash = Command::new("bash");
    bash.args(["-e", "-x", "-c", &script])
        .current_dir(dir)
        // Open MPI refuses to run as root without these; harmless otherwise.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
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

/// The MPI install every test shares: README.md's install line, run from the repository root
/// with PREFIX = `<tmp>/prefix`, installing the library these tests built (its profile and
/// target directory, so that the script's cargo build has nothing to do).
fn prefix() -> &'static Path {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let prefix = fresh_dir("prefix");
        let line = readme_mpi_section()
            .lines()
            .find(|line| line.starts_with("scripts/install-capi.sh --mpi"))
            .expect("README.md's MPI section has the line scripts/install-capi.sh --mpi PREFIX")
            .split('#')
            .next()
            .unwrap()
            .trim()
            .to_string();
        let lib = library_dir();
        let profile = match lib.file_name().and_then(|name| name.to_str()) {
            Some("debug") => "dev".to_string(),
            Some(other) => other.to_string(),
            None => panic!("the library directory has no name"),
        };
        let mut bash = Command::new("bash");
        bash.args(["-e", "-x", "-c", &with_prefix(&line, &prefix)])
            .current_dir(crate_dir().join("../.."))
            .env("PHASERS_CAPI_PROFILE", profile)
            .env("CARGO_TARGET_DIR", lib.parent().expect("target/<profile>"))
            .env(
                "CARGO",
                std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
            )
            .env_remove("DESTDIR")
            .env_remove("PHASERS_MPI_PKG");
        let outcome = run_captured(bash, "install-capi-mpi", LIMIT);
        assert!(
            outcome.success,
            "{line} failed:\n{}\n{}",
            outcome.stdout, outcome.stderr
        );
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
            assert!(prefix.join(file).is_file(), "{file} was not installed");
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
fn c_program_builds_with_pkg_config_and_runs_on_2_ranks() {
    let test = "c_program_builds_with_pkg_config_and_runs_on_2_ranks";
    if !have_all(&["pkg-config", "mpirun"], test) {
        return;
    }
    let prefix = prefix();
    let work = work_with("c", "examples/c/mpi_hybrid.c", "prog.c");
    let outcome = run_block(&readme_block("c"), &work, prefix, "mpi-install-c");
    // The shared and the static build: both ran, and both agreed with MPI_Allreduce.
    expect_lines(&outcome, "mpi_hybrid ok on 2 ranks: ", 2, test);
}

#[test]
fn cmake_project_with_the_mpi_component_runs_on_2_ranks() {
    let test = "cmake_project_with_the_mpi_component_runs_on_2_ranks";
    if !have_all(&["cmake", "mpirun"], test) {
        return;
    }
    let prefix = prefix();
    let work = work_with("cmake", "examples/c/mpi_hybrid.c", "prog.c");
    std::fs::write(work.join("CMakeLists.txt"), readme_block("cmake")).unwrap();
    let outcome = run_block(
        &readme_block("cmake-build"),
        &work,
        prefix,
        "mpi-install-cmake",
    );
    expect_lines(&outcome, "mpi_hybrid ok on 2 ranks: ", 2, test);
}

#[test]
fn fortran_program_builds_with_mpifort_and_runs_on_2_ranks() {
    let test = "fortran_program_builds_with_mpifort_and_runs_on_2_ranks";
    if !have_all(&["gfortran", "mpifort", "mpirun"], test) {
        return;
    }
    let prefix = prefix();
    let work = work_with("fortran", "examples/fortran/mpi_hybrid.f90", "prog.f90");
    let outcome = run_block(
        &readme_block("fortran"),
        &work,
        prefix,
        "mpi-install-fortran",
    );
    expect_lines(&outcome, "fortran mpi_hybrid ok on 2 ranks: ", 1, test);
}

#[test]
fn cmake_fortran_project_with_the_mpi_fortran_component_runs_on_2_ranks() {
    let test = "cmake_fortran_project_with_the_mpi_fortran_component_runs_on_2_ranks";
    if !have_all(&["cmake", "gfortran", "mpifort", "mpirun"], test) {
        return;
    }
    let prefix = prefix();
    let work = work_with(
        "cmake-fortran",
        "examples/fortran/mpi_hybrid.f90",
        "prog.f90",
    );
    std::fs::write(work.join("CMakeLists.txt"), readme_block("cmake-fortran")).unwrap();
    // The configure and build lines of the C project's block, then this project's one program.
    let lines = "cmake -S . -B build -DCMAKE_PREFIX_PATH=PREFIX\ncmake --build build\n";
    assert!(
        readme_block("cmake-build").starts_with(lines),
        "README.md's cmake-build block no longer starts with {lines:?}; update this test"
    );
    let build = format!("{lines}mpirun -np 2 --bind-to none build/app_f\n");
    let outcome = run_block(&build, &work, prefix, "mpi-install-cmake-fortran");
    expect_lines(&outcome, "fortran mpi_hybrid ok on 2 ranks: ", 1, test);
}

#[test]
fn prefix_replaces_the_word_only() {
    let replaced = with_prefix(
        "-DCMAKE_PREFIX_PATH=PREFIX PREFIX/lib PREFIX_X",
        Path::new("/p"),
    );
    assert_eq!(replaced, "-DCMAKE_PREFIX_PATH=/p /p/lib PREFIX_X");
}
