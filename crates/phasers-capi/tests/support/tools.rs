//! The programs some tests need besides the C toolchain, and how to tell whether they are here.
//!
//! libtest cannot skip a test once it runs, and a test that returns early reads `ok`. So
//! `build.rs` looks for these programs when the tests are built and sets a cfg for each one found;
//! a test that needs a missing one is `#[ignore]`d with the reason (`cargo test` lists it as
//! `ignored, <reason>`). `tests/tools.rs` looks again when the tests run and fails when the two
//! disagree, since a program installed or removed after the build would otherwise go unnoticed.
//! Both include this file, so they cannot look in different ways.

use std::process::Command;

/// A program that tests need, and the cfg `build.rs` sets when it runs.
pub struct Tool {
    /// The cfg, e.g. `has_cmake`.
    pub cfg: &'static str,
    /// The command, found on PATH.
    pub program: &'static str,
}

/// The programs looked for by name; the Fortran compiler has names of its own
/// ([`fortran_compiler`]).
pub const TOOLS: [Tool; 5] = [
    Tool {
        cfg: "has_cmake",
        program: "cmake",
    },
    Tool {
        cfg: "has_valgrind",
        program: "valgrind",
    },
    Tool {
        cfg: "has_pkg_config",
        program: "pkg-config",
    },
    Tool {
        cfg: "has_mpirun",
        program: "mpirun",
    },
    Tool {
        cfg: "has_mpifort",
        program: "mpifort",
    },
];

/// The cfg set when [`fortran_compiler`] finds one.
pub const FORTRAN_CFG: &str = "has_gfortran";

/// Whether `program --version` runs and succeeds.
pub fn runs(program: &str) -> bool {
    version(program).is_some()
}

/// What `program --version` prints, when it runs and succeeds.
fn version(program: &str) -> Option<String> {
    let output = Command::new(program).arg("--version").output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The GNU Fortran compiler the tests use: `$FC` when it is one, else `gfortran`, else the newest
/// `gfortran-NN` on PATH (Debian installs `gfortran-12` without `gfortran` when only the versioned
/// package is installed). Only GNU's: the tests pass gfortran's flags (`-J`, `-std=f2008`).
/// scripts/install-capi.sh looks in the same order, so the module it installs and the programs
/// the tests build come from the same compiler.
pub fn fortran_compiler() -> Option<String> {
    let mut candidates = Vec::new();
    if let Some(fc) = std::env::var("FC").ok().filter(|fc| !fc.is_empty()) {
        candidates.push(fc);
    }
    candidates.push("gfortran".to_string());
    candidates.extend(versioned_gfortran());
    candidates
        .into_iter()
        .find(|candidate| version(candidate).is_some_and(|text| text.starts_with("GNU Fortran")))
}

/// The `gfortran-NN` programs in PATH's directories, newest first.
fn versioned_gfortran() -> Vec<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut found: Vec<(u32, String)> = std::env::split_paths(&path)
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let number = name.strip_prefix("gfortran-")?.parse().ok()?;
            Some((number, name))
        })
        .collect();
    found.sort_by(|a, b| b.cmp(a));
    found.dedup();
    found.into_iter().map(|(_, name)| name).collect()
}

/// The names of the programs found, as `build.rs` records them (`PHASERS_TEST_FOUND`): the
/// [`TOOLS`] that run, then `fortran=<compiler>` or `fortran=`.
pub fn found() -> String {
    let mut names: Vec<String> = TOOLS
        .iter()
        .filter(|tool| runs(tool.program))
        .map(|tool| tool.program.to_string())
        .collect();
    names.push(format!(
        "fortran={}",
        fortran_compiler().unwrap_or_default()
    ));
    names.join(" ")
}
