//! README.md's command lines, run as printed. Every `sh` and `cmake` block of README.md carries a
//! marker on the line before it: `<!-- tests/FILE.rs runs this block: NAME -->` names the test
//! that runs it, `<!-- not run by the tests: REASON -->` says why none can. This file runs the
//! blocks of the sections "Build and install", "Compile and link" and "Fortran" the way a new
//! user would: in a shell with a scratch HOME and none of the variables these tests inherit from
//! cargo (`LD_LIBRARY_PATH` above all, which would find `libphasers.so` for a program that cannot),
//! the block `environment` first (PREFIX under that HOME, PKG_CONFIG_PATH, CMAKE_PREFIX_PATH),
//! then the block itself, with bash `-e` (a failing line fails it). `install` runs from the
//! repository's root, the others in a directory holding `prog.c`, `prog.cpp` and `prog.f90`
//! (`examples/c/barrier.c`, `examples/cxx/team.cpp`, `examples/fortran/jacobi.f90`), and each of
//! them runs the programs it builds. A block that needs a missing program is ignored, with the
//! reason.
//!
//! The install into a directory the loader searches, which runs `ldconfig`, needs root and would
//! change the machine: `install_runs_ldconfig_only_for_a_directory_the_loader_searches` checks
//! the script's decision with an `ldconfig` of its own on PATH.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use support::readme::{block, blocks, repository, user_shell};
use support::{crate_dir, run_captured, Outcome};

/// An install and a build with CMake take seconds to a minute on 2 cores; the limit only turns a
/// hang into a failure with the output.
const LIMIT: Duration = Duration::from_secs(600);

#[test]
fn every_shell_and_cmake_block_is_run_by_a_test_or_says_why_not() {
    let mut problems = Vec::new();
    for block in blocks() {
        if block.info != "sh" && block.info != "cmake" {
            continue;
        }
        let Some(marker) = &block.marker else {
            problems.push(format!(
                "README.md:{}: a {} block without a marker: put \
                 `<!-- tests/FILE.rs runs this block: NAME -->` on the line before it and run it \
                 there, or `<!-- not run by the tests: REASON -->`",
                block.line, block.info
            ));
            continue;
        };
        let inner = marker
            .trim_start_matches("<!--")
            .trim_end_matches("-->")
            .trim();
        if let Some(reason) = inner.strip_prefix("not run by the tests:") {
            if reason.trim().is_empty() {
                problems.push(format!("README.md:{}: say why it is not run", block.line));
            }
            continue;
        }
        let Some((file, name)) = inner
            .strip_prefix("tests/")
            .and_then(|rest| rest.split_once(" runs this block: "))
        else {
            problems.push(format!(
                "README.md:{}: the marker {marker} is neither `tests/FILE.rs runs this block: \
                 NAME` nor `not run by the tests: REASON`",
                block.line
            ));
            continue;
        };
        let test =
            std::fs::read_to_string(crate_dir().join("tests").join(file)).unwrap_or_default();
        if !test.contains(&format!("\"{name}\"")) {
            problems.push(format!(
                "README.md:{}: tests/{file} does not name the block \"{name}\"",
                block.line
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The directory `name` under the target's tmp directory.
fn scratch(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("phasers-capi-readme")
        .join(name)
}

/// A fresh directory `name` under the target's tmp directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = scratch(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the target's tmp directory is writable");
    dir
}

/// The scratch HOME of the install every block shares.
fn home() -> PathBuf {
    scratch("home")
}

/// Runs the block `environment`, then `block`, in `dir`; fails with the script and its output
/// unless every line succeeded.
fn run_block(name: &str, dir: &Path) -> Outcome {
    let script = format!(
        "{}{}",
        block("readme.rs", "environment"),
        block("readme.rs", name)
    );
    let outcome = run_captured(
        user_shell(&script, dir, &home()),
        &format!("readme-{name}"),
        LIMIT,
    );
    assert!(
        outcome.success,
        "README.md's block {name} failed:\n{script}\nstdout:\n{}\nstderr:\n{}",
        outcome.stdout, outcome.stderr
    );
    outcome
}

/// PREFIX as the block `environment` sets it: `$HOME/.local` under the scratch HOME, installed by
/// the block `install` once for every test.
fn installed() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let home = home();
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).expect("the target's tmp directory is writable");
        run_block("install", &repository());
        let prefix = home.join(".local");
        assert!(
            prefix.join("lib/pkgconfig/phasers.pc").is_file(),
            "the block environment's PREFIX is no longer $HOME/.local: update this test"
        );
        prefix
    })
}

/// A fresh directory holding the programs the blocks compile: `prog.c`, `prog.cpp`, `prog.f90`.
fn work_dir(name: &str) -> PathBuf {
    let dir = fresh_dir(name);
    for (source, file) in [
        ("examples/c/barrier.c", "prog.c"),
        ("examples/cxx/team.cpp", "prog.cpp"),
        ("examples/fortran/jacobi.f90", "prog.f90"),
    ] {
        std::fs::copy(crate_dir().join(source), dir.join(file))
            .unwrap_or_else(|error| panic!("copy {source}: {error}"));
    }
    dir
}

/// Each of `expected` is printed exactly `times` times.
fn expect(outcome: &Outcome, expected: &[(&str, usize)], name: &str) {
    for &(line, times) in expected {
        let found = outcome.stdout.matches(line).count();
        assert_eq!(
            found, times,
            "block {name}: {line:?} printed {found} times, not {times}; stdout:\n{}\nstderr:\n{}",
            outcome.stdout, outcome.stderr
        );
    }
}

/// What `examples/c/barrier.c` prints.
const C_OK: &str = "every rank did 1000 steps";
/// What `examples/cxx/team.cpp` prints.
const CXX_OK: &str = "3 members were released with PHASERS_EBROKEN";
/// What `examples/fortran/jacobi.f90` prints.
const FORTRAN_OK: &str = "largest difference from the serial run:  0.000E+00";

#[test]
fn install_keeps_the_pkg_config_comment() {
    let prefix = installed();
    let installed = std::fs::read_to_string(prefix.join("lib/pkgconfig/phasers.pc")).unwrap();
    let template = std::fs::read_to_string(crate_dir().join("phasers.pc.in")).unwrap();
    let comment = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| line.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(comment(&installed), comment(&template), "{installed}");
    let prefix_line = format!("prefix={}\n", prefix.display());
    assert!(installed.contains(&prefix_line), "{installed}");
    assert!(!installed.contains("\nVersion: @"), "{installed}");
}

#[test]
#[cfg_attr(
    not(has_pkg_config),
    ignore = "pkg-config is not on PATH: apt-get install pkg-config"
)]
fn c_and_cxx_with_pkg_config() {
    installed();
    let outcome = run_block("c", &work_dir("c"));
    expect(&outcome, &[(C_OK, 1), (CXX_OK, 1)], "c");
}

#[test]
#[cfg_attr(
    not(has_pkg_config),
    ignore = "pkg-config is not on PATH: apt-get install pkg-config"
)]
fn static_c_with_pkg_config() {
    installed();
    let outcome = run_block("static", &work_dir("static"));
    expect(&outcome, &[(C_OK, 2)], "static");
}

#[test]
#[cfg_attr(not(has_cmake), ignore = "cmake is not on PATH: apt-get install cmake")]
fn c_and_cxx_with_cmake() {
    installed();
    let dir = work_dir("cmake");
    std::fs::write(dir.join("CMakeLists.txt"), block("readme.rs", "cmake")).unwrap();
    let outcome = run_block("cmake-build", &dir);
    expect(&outcome, &[(C_OK, 2), (CXX_OK, 1)], "cmake-build");
}

#[test]
#[cfg_attr(
    not(has_gfortran),
    ignore = "no GNU Fortran compiler on PATH (FC, gfortran, gfortran-NN): apt-get install gfortran"
)]
fn fortran_by_hand() {
    installed();
    let outcome = run_block("fortran", &work_dir("fortran"));
    expect(&outcome, &[(FORTRAN_OK, 2)], "fortran");
}

#[test]
#[cfg_attr(
    not(all(has_cmake, has_gfortran)),
    ignore = "needs cmake and a GNU Fortran compiler (FC, gfortran, gfortran-NN) on PATH: apt-get install cmake gfortran"
)]
fn fortran_with_cmake() {
    installed();
    let dir = work_dir("cmake-fortran");
    std::fs::write(
        dir.join("CMakeLists.txt"),
        block("readme.rs", "cmake-fortran"),
    )
    .unwrap();
    let outcome = run_block("cmake-fortran-build", &dir);
    expect(&outcome, &[(FORTRAN_OK, 1)], "cmake-fortran-build");
}

/// Runs `scripts/install-capi.sh` into a fresh PREFIX, with an `ldconfig` on PATH that lists
/// `loader_dir` as the loader's only directory and records every other call; returns the
/// script's output and the calls.
fn install_with_fake_ldconfig(name: &str, loader_dir: &str, destdir: bool) -> (Outcome, String) {
    let root = fresh_dir(name);
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let calls = root.join("ldconfig.calls");
    let fake = bin.join("ldconfig");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\n\
             # tests/readme.rs: lists one loader directory, records every other call\n\
             if [ \"$1\" = -v ]; then echo '{loader_dir}: (from tests/readme.rs)'; exit 0; fi\n\
             echo \"ldconfig $*\" >> '{}'\n",
            calls.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755))
        .expect("the fake ldconfig can be made executable");
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let prefix = root.join("prefix");
    let script = format!(
        "scripts/install-capi.sh '{}'",
        prefix.to_str().expect("the temporary prefix is UTF-8")
    );
    let mut shell = user_shell(&script, &repository(), &root);
    shell.env("PATH", path);
    if destdir {
        shell.env("DESTDIR", root.join("stage"));
    }
    let outcome = run_captured(shell, &format!("readme-{name}"), LIMIT)
        .expect_success("scripts/install-capi.sh");
    let calls = std::fs::read_to_string(calls).unwrap_or_default();
    (outcome, calls)
}

#[test]
fn install_runs_ldconfig_only_for_a_directory_the_loader_searches() {
    let searched = scratch("ldconfig-searched").join("prefix/lib");
    let (outcome, calls) =
        install_with_fake_ldconfig("ldconfig-searched", searched.to_str().unwrap(), false);
    assert_eq!(
        calls, "ldconfig \n",
        "an install into a loader directory must run ldconfig once; stdout:\n{}",
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("ldconfig ran"),
        "{}",
        outcome.stdout
    );

    let (outcome, calls) = install_with_fake_ldconfig("ldconfig-private", "/usr/local/lib", false);
    assert_eq!(calls, "", "a private prefix needs no ldconfig");
    assert!(
        outcome
            .stdout
            .contains("is not a directory the loader searches: link with -Wl,-rpath,"),
        "{}",
        outcome.stdout
    );

    let staged = scratch("ldconfig-staged").join("prefix/lib");
    let (_, calls) = install_with_fake_ldconfig("ldconfig-staged", staged.to_str().unwrap(), true);
    assert_eq!(
        calls, "",
        "a DESTDIR install stages files: ldconfig has no business there"
    );
}
