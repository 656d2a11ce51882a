//! `scripts/install-capi.sh` installs a CMake package: these tests install into a temporary
//! PREFIX (and, staged, with DESTDIR), then configure, build and run small CMake projects that use
//! `find_package(phasers REQUIRED)` and `target_link_libraries(app phasers::phasers)` (C, C++,
//! the static library, and the Fortran module through `phasers::fortran`; the MPI components are
//! refused, since this install has no MPI, and files of an earlier MPI install are removed; the
//! MPI install is tests/mpi_install.rs's). Ignored, with the reason, where cmake (or for the
//! Fortran project, a GNU Fortran compiler) is missing; CI installs both.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use support::{crate_dir, library_dir, run, run_captured, Outcome};

/// A fresh directory `name` under the target's tmp directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("phasers-capi-cmake")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the target's tmp directory is writable");
    dir
}

/// Runs `scripts/install-capi.sh prefix` with `destdir`, installing the library these tests
/// built (its profile and target directory, so that the script's cargo build has nothing to do).
fn install(prefix: &Path, destdir: Option<&Path>, label: &str) -> Outcome {
    let lib = library_dir();
    let profile = match lib.file_name().and_then(|name| name.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(other) => other.to_string(),
        None => panic!("the library directory has no name"),
    };
    let mut command = Command::new("bash");
    command
        .arg(crate_dir().join("../../scripts/install-capi.sh"))
        .arg(prefix)
        .env("PHASERS_CAPI_PROFILE", profile)
        .env("CARGO_TARGET_DIR", lib.parent().expect("target/<profile>"))
        .env(
            "CARGO",
            std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
        );
    // The compiler the Fortran tests use builds the installed module too: a .mod file is read only
    // by the compiler that wrote it.
    if cfg!(has_gfortran) {
        command.env("FC", support::fortran_compiler());
    }
    match destdir {
        Some(destdir) => command.env("DESTDIR", destdir),
        None => command.env_remove("DESTDIR"),
    };
    run_captured(command, label, Duration::from_secs(600)).expect_success("install-capi.sh")
}

/// The install shared by the tests that do not stage: PREFIX = `<tmp>/prefix`.
fn prefix() -> &'static Path {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let prefix = fresh_dir("prefix");
        // What an earlier `install-capi.sh --mpi` leaves: a plain install removes it, since its
        // library lacks the functions these files declare.
        let stale = [
            "include/phasers_mpi.h",
            "lib/pkgconfig/phasers-mpi.pc",
            "share/phasers/fortran/phasers_mpi.f90",
            "lib/fortran/modules/phasers_mpi.mod",
            "lib/libphasers_mpi_fortran.a",
        ];
        for file in stale {
            let path = prefix.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "stale").unwrap();
        }
        install(&prefix, None, "install-capi");
        for file in stale {
            assert!(
                !prefix.join(file).exists(),
                "{file} of an MPI install was left"
            );
        }
        let pc = std::fs::read_to_string(prefix.join("lib/pkgconfig/phasers.pc")).unwrap();
        assert!(
            !pc.contains("Requires"),
            "a plain install's phasers.pc needs nothing: {pc}"
        );
        prefix
    })
}

const MAIN_C: &str = r#"/* Built through the installed CMake package: two threads meet at a barrier 100 times. */
#include <phasers.h>
#include <pthread.h>
#include <stdio.h>

static phasers_barrier *barrier;

static void *work(void *arg) {
    size_t rank = (size_t)arg;
    for (int i = 0; i < 100; i++) {
        if (phasers_barrier_wait(barrier, rank, NULL) != PHASERS_OK) {
            fprintf(stderr, "%s\n", phasers_last_error());
            return (void *)1;
        }
    }
    return NULL;
}

int main(void) {
    if (phasers_barrier_create(2, PHASERS_ALGORITHM_AUTO, &barrier) != PHASERS_OK) {
        return 1;
    }
    pthread_t other;
    void *status = NULL;
    pthread_create(&other, NULL, work, (void *)1);
    int failed = work((void *)0) != NULL;
    pthread_join(other, &status);
    failed |= status != NULL;
    failed |= phasers_barrier_destroy(barrier) != PHASERS_OK;
    printf(failed ? "FAILED\n" : "cmake c ok\n");
    return failed;
}
"#;

/// The C and C++ consumer project; its version checks run at configure time.
const C_CXX_PROJECT: &str = r#"cmake_minimum_required(VERSION 3.14)
project(phasers_consumer LANGUAGES C CXX)

# The version file: 0.y.z answers requests for 0.y only, up to itself, and ranges around it.
foreach(refused 99 0.2 0.0 1 "0.2...0.3")
    find_package(phasers ${refused} QUIET)
    if(phasers_FOUND)
        message(FATAL_ERROR "find_package(phasers ${refused}) accepted ${phasers_VERSION}")
    endif()
endforeach()
foreach(accepted 0.1 "0.0.1...0.1.0" "0.1...<0.2")
    find_package(phasers ${accepted} QUIET)
    if(NOT phasers_FOUND)
        message(FATAL_ERROR "find_package(phasers ${accepted}) refused ${phasers_VERSION}")
    endif()
endforeach()
find_package(phasers 0.1 QUIET COMPONENTS no_such_component)
if(phasers_FOUND)
    message(FATAL_ERROR "an unknown component was accepted")
endif()
# An install without --mpi: the MPI components are refused, and say how to get them.
find_package(phasers 0.1 QUIET COMPONENTS mpi)
if(phasers_FOUND OR NOT phasers_NOT_FOUND_MESSAGE MATCHES "install-capi.sh --mpi")
    message(FATAL_ERROR "component mpi without an MPI install: ${phasers_NOT_FOUND_MESSAGE}")
endif()
find_package(phasers 0.1 QUIET OPTIONAL_COMPONENTS mpi mpi_fortran)
if(NOT phasers_FOUND OR phasers_mpi_FOUND OR phasers_mpi_fortran_FOUND OR TARGET phasers::mpi)
    message(FATAL_ERROR "optional MPI components without an MPI install")
endif()

find_package(phasers REQUIRED)
find_package(Threads REQUIRED)
message(STATUS "phasers ${phasers_VERSION}, include ${phasers_INCLUDE_DIR}")

add_executable(app_c main.c)
target_link_libraries(app_c PRIVATE phasers::phasers Threads::Threads)

add_executable(app_cxx main.cpp)
target_compile_features(app_cxx PRIVATE cxx_std_17)
target_link_libraries(app_cxx PRIVATE phasers::phasers Threads::Threads)

add_executable(app_cxx_static main.cpp)
target_compile_features(app_cxx_static PRIVATE cxx_std_17)
target_link_libraries(app_cxx_static PRIVATE phasers::static Threads::Threads)
"#;

const FORTRAN_PROJECT: &str = r#"cmake_minimum_required(VERSION 3.14)
project(phasers_fortran_consumer LANGUAGES Fortran)
find_package(phasers 0.1 REQUIRED COMPONENTS fortran)
add_executable(app_f app.f90)
target_link_libraries(app_f PRIVATE phasers::fortran)
"#;

/// Writes `files` into a fresh source directory, configures it with CMAKE_PREFIX_PATH=`prefix`,
/// builds it, and returns the build directory.
fn configure_and_build(name: &str, prefix: &Path, files: &[(&str, String)]) -> PathBuf {
    let root = fresh_dir(name);
    let source = root.join("src");
    let build = root.join("build");
    std::fs::create_dir_all(&source).unwrap();
    for (file, text) in files {
        std::fs::write(source.join(file), text).unwrap();
    }
    let mut configure = Command::new("cmake");
    configure
        .arg("-S")
        .arg(&source)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()));
    if cfg!(has_gfortran) {
        // CMake's own search knows `gfortran` but not `gfortran-12`; FC names the compiler that
        // built the installed module.
        configure.env("FC", support::fortran_compiler());
    }
    let outcome = run_captured(
        configure,
        &format!("{name}.configure"),
        Duration::from_secs(300),
    );
    assert!(
        outcome.success,
        "cmake could not configure {name}:\n{}\n{}",
        outcome.stdout, outcome.stderr
    );
    let mut compile = Command::new("cmake");
    compile.arg("--build").arg(&build);
    let outcome = run_captured(compile, &format!("{name}.build"), Duration::from_secs(300));
    assert!(
        outcome.success,
        "cmake could not build {name}:\n{}\n{}",
        outcome.stdout, outcome.stderr
    );
    build
}

/// Runs a built program (found through its build RPATH, no LD_LIBRARY_PATH) and checks it says
/// `expected`.
fn run_app(program: &Path, expected: &str) {
    let outcome = run(program, &[]).expect_success(&program.display().to_string());
    assert!(outcome.stdout.contains(expected), "{}", outcome.stdout);
}

fn source(path: &str) -> String {
    std::fs::read_to_string(crate_dir().join(path)).unwrap()
}

#[test]
#[cfg_attr(not(has_cmake), ignore = "cmake is not on PATH: apt-get install cmake")]
fn cmake_package_builds_c_and_cxx_consumers() {
    let prefix = prefix();
    for file in [
        "include/phasers.h",
        "include/phasers.hpp",
        "lib/libphasers.so",
        "lib/libphasers.a",
        "lib/pkgconfig/phasers.pc",
        "lib/cmake/phasers/phasersConfig.cmake",
        "lib/cmake/phasers/phasersConfigVersion.cmake",
        "share/phasers/fortran/phasers.f90",
    ] {
        assert!(prefix.join(file).is_file(), "{file} was not installed");
    }
    let build = configure_and_build(
        "consumer",
        prefix,
        &[
            ("CMakeLists.txt", C_CXX_PROJECT.to_string()),
            ("main.c", MAIN_C.to_string()),
            ("main.cpp", source("tests/cxx/cmake_app.cpp")),
        ],
    );
    run_app(&build.join("app_c"), "cmake c ok");
    run_app(&build.join("app_cxx"), "cmake cxx ok");
    run_app(&build.join("app_cxx_static"), "cmake cxx ok");
}

#[test]
#[cfg_attr(
    not(all(has_cmake, has_gfortran)),
    ignore = "needs cmake and a GNU Fortran compiler (FC, gfortran, gfortran-NN) on PATH: apt-get install cmake gfortran"
)]
fn cmake_package_fortran_module() {
    let prefix = prefix();
    for file in [
        "lib/fortran/modules/phasers.mod",
        "lib/libphasers_fortran.a",
    ] {
        assert!(
            prefix.join(file).is_file(),
            "{file} was not installed, though {} is here",
            support::fortran_compiler()
        );
    }
    let build = configure_and_build(
        "fortran-consumer",
        prefix,
        &[
            ("CMakeLists.txt", FORTRAN_PROJECT.to_string()),
            ("app.f90", source("tests/fortran/cmake_app.f90")),
        ],
    );
    run_app(&build.join("app_f"), "cmake fortran ok");
}

#[test]
#[cfg_attr(not(has_cmake), ignore = "cmake is not on PATH: apt-get install cmake")]
fn cmake_package_staged_with_destdir_is_relocatable() {
    // Installed for /opt/phasers, staged under DESTDIR: the pkg-config file names the final
    // prefix, and the CMake package works from where the files are.
    let stage = fresh_dir("stage");
    install(
        Path::new("/opt/phasers"),
        Some(&stage),
        "install-capi-destdir",
    );
    let staged = stage.join("opt/phasers");
    let pc = std::fs::read_to_string(staged.join("lib/pkgconfig/phasers.pc")).unwrap();
    assert!(pc.contains("prefix=/opt/phasers\n"), "{pc}");
    let build = configure_and_build(
        "staged-consumer",
        &staged,
        &[
            ("CMakeLists.txt", C_CXX_PROJECT.to_string()),
            ("main.c", MAIN_C.to_string()),
            ("main.cpp", source("tests/cxx/cmake_app.cpp")),
        ],
    );
    run_app(&build.join("app_c"), "cmake c ok");
}
