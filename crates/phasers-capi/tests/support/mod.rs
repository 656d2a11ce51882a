//! Shared by the tests that compile C programs against the library: finding (and building)
//! `libphasers.so` / `libphasers.a`, compiling with the system C compiler, running with a time
//! limit so that a hang fails with a message.

#![allow(dead_code)] // each test file uses its own part of this module

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub mod readme;
pub mod tools;

/// How a test program links the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// Against `libphasers.so`, found at run time through an rpath.
    Shared,
    /// Against `libphasers.a`, with the system libraries the README lists.
    Static,
}

/// The crate's directory (where `include/` and `tests/c/` are).
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `target/<profile>`: the directory above this test executable's `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable knows its path");
    exe.parent()
        .and_then(Path::parent)
        .expect("test executables live in target/<profile>/deps")
        .to_path_buf()
}

/// The directory holding `libphasers.so` and `libphasers.a`, built by this call if needed.
///
/// Cargo builds a package's library before its integration tests only when the tests can link it
/// (an rlib); this library is a cdylib and staticlib only, so the tests run `cargo build` for it,
/// with the same profile and target directory. When it is up to date, that costs a fraction of a
/// second, and it rebuilds a stale library, so the tests never run against old code.
pub fn library_dir() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = profile_dir();
        let profile = dir
            .file_name()
            .and_then(|name| name.to_str())
            .expect("the profile directory has a name")
            .to_string();
        let target = dir.parent().expect("target/<profile> has a parent");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "-p", "phasers-capi", "--manifest-path"])
            .arg(crate_dir().join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", target);
        match profile.as_str() {
            "debug" => {}
            "release" => {
                build.arg("--release");
            }
            other => {
                build.args(["--profile", other]);
            }
        }
        // Built as the tests were: `cargo test --features mpi` tests the library with its MPI
        // entry points.
        if cfg!(feature = "mpi") {
            build.args(["--features", "mpi"]);
        }
        // Captured, so a passing run prints nothing of the nested build (its "Compiling" and
        // "Finished" lines read like the test's own); shown in full when it fails.
        let output = build
            .output()
            .expect("cargo runs (it is running these tests)");
        assert!(
            output.status.success(),
            "building libphasers failed: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        for file in ["libphasers.so", "libphasers.a"] {
            assert!(
                dir.join(file).exists(),
                "{file} is missing from {} after cargo build",
                dir.display()
            );
        }
        dir
    })
}

/// A directory for this test's programs.
fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("phasers-capi");
    std::fs::create_dir_all(&dir).expect("the target's tmp directory is writable");
    dir
}

/// Runs `command` to completion within `limit`, with stdout and stderr captured in files (a pipe
/// could fill and block the child). Panics, with what the child printed, when it runs too long.
pub fn run_captured(mut command: Command, label: &str, limit: Duration) -> Outcome {
    let dir = work_dir();
    let stdout_path = dir.join(format!("{label}.stdout"));
    let stderr_path = dir.join(format!("{label}.stderr"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).expect("create stdout file"))
        .stderr(File::create(&stderr_path).expect("create stderr file"))
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {label} ({command:?}): {error}"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    let outcome = Outcome {
        success: status.is_some_and(|status| status.success()),
        stdout: read(&stdout_path),
        stderr: read(&stderr_path),
    };
    assert!(
        status.is_some(),
        "{label} did not finish within {limit:?} (a hang?); stdout:\n{}\nstderr:\n{}",
        outcome.stdout,
        outcome.stderr
    );
    outcome
}

/// What a finished program printed, and whether it exited with 0.
pub struct Outcome {
    /// Exit status 0.
    pub success: bool,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Outcome {
    /// Panics with the output unless the program succeeded.
    pub fn expect_success(self, label: &str) -> Self {
        assert!(
            self.success,
            "{label} failed; stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Compiles `sources` (paths under `tests/c/`) with `compiler` and `flags` into the program
/// `name`, linked as `link`; panics with the compiler's messages on failure.
pub fn compile_with(
    compiler: &str,
    flags: &[&str],
    sources: &[&str],
    name: &str,
    link: Link,
) -> PathBuf {
    let lib = library_dir();
    let output = work_dir().join(name);
    let mut command = Command::new(compiler);
    command
        .args(flags)
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg("-I")
        .arg(crate_dir().join("tests/c"));
    for source in sources {
        command.arg(crate_dir().join("tests/c").join(source));
    }
    command.arg("-o").arg(&output);
    match link {
        Link::Shared => {
            command
                .arg("-L")
                .arg(lib)
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .arg("-lphasers")
                .arg("-lpthread");
        }
        Link::Static => {
            // The line README.md gives for static linking.
            command
                .arg(lib.join("libphasers.a"))
                .args(["-lpthread", "-ldl", "-lm"]);
        }
    }
    run_captured(
        command,
        &format!("{name}.compile"),
        Duration::from_secs(120),
    )
    .expect_success(&format!("compiling {name} with {compiler}"));
    output
}

/// The flags every C test program is built with: C11, warnings as errors.
pub const C_FLAGS: [&str; 8] = [
    "-std=c11",
    "-O1",
    "-g",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-pthread",
];

/// Compiles a C test program with [`C_FLAGS`].
pub fn compile_c(sources: &[&str], name: &str, link: Link) -> PathBuf {
    compile_with("cc", &C_FLAGS, sources, name, link)
}

/// Runs a compiled test program with `args`, giving it two minutes.
pub fn run(program: &Path, args: &[&str]) -> Outcome {
    run_with_env(program, args, &[])
}

/// As [`run`], with the environment variables `env` set for the program.
pub fn run_with_env(program: &Path, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut command = Command::new(program);
    command.args(args);
    command.envs(env.iter().copied());
    let label = format!(
        "{}{}",
        program.file_name().unwrap().to_string_lossy(),
        args.iter().map(|arg| format!("-{arg}")).collect::<String>()
    );
    run_captured(command, &label, Duration::from_secs(120))
}

/// The `phasers_*` functions the header `include/<header>` declares: identifiers followed by
/// `(`, outside comments.
pub fn declared(header: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(crate_dir().join("include").join(header)).unwrap();
    let mut code = String::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("comments are closed") + start + 2;
        rest = &rest[end..];
    }
    code.push_str(rest);
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("phasers_") {
        let name: String = code[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let after = code[at + name.len()..].trim_start();
        if after.starts_with('(') {
            names.insert(name);
        }
    }
    names
}

/// The `phasers_*` symbols `libphasers.so` exports, from `nm -D --defined-only`.
pub fn exported() -> BTreeSet<String> {
    let mut nm = Command::new("nm");
    nm.args(["-D", "--defined-only"])
        .arg(library_dir().join("libphasers.so"));
    let outcome = run_captured(nm, "nm-libphasers", Duration::from_secs(60)).expect_success("nm");
    outcome
        .stdout
        .lines()
        .filter_map(|line| line.split_whitespace().last())
        .filter(|symbol| symbol.starts_with("phasers_"))
        .map(str::to_string)
        .collect()
}

/// The GNU Fortran compiler `build.rs` found (`$FC`, `gfortran` or `gfortran-NN`). The tests
/// that call this are ignored where there is none; run with `--ignored`, they stop here.
pub fn fortran_compiler() -> &'static str {
    let fc = env!("PHASERS_TEST_FC");
    assert!(
        !fc.is_empty(),
        "no GNU Fortran compiler was on PATH when the tests were built (FC, gfortran, \
         gfortran-NN): apt-get install gfortran, or set FC, and rebuild the tests"
    );
    fc
}
