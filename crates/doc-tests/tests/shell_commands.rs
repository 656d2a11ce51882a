//! Every command line a reader is told to run in the `sh` blocks of README.md, docs/guide.md and
//! crates/phasers-mpi/README.md, with where it runs exactly as printed. Each takes minutes, a
//! release build, root or MPI, so none runs in `cargo test`: either `.ci/run` runs the very line,
//! or `scripts/walkthrough.sh` (which CI runs too) does, and the list says why it is not a test.
//! A command added to those files, or changed there, fails this test until it is listed, and a
//! listed command must stand in the script that runs it.

use std::fs;

use phasers_doc_tests::{all_blocks, assert_none, workspace_root};

/// The files whose commands are listed.
const FILES: &[&str] = &["README.md", "docs/guide.md", "crates/phasers-mpi/README.md"];

/// Where a listed command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runs {
    /// `.ci/run` runs this line as printed.
    Ci,
    /// `scripts/walkthrough.sh` runs it, rather than a test, for this reason.
    Walkthrough(&'static str),
}

/// Every command of [`FILES`], without its trailing comment.
const COMMANDS: &[(&str, Runs)] = &[
    ("cargo test", Runs::Ci),
    ("bash scripts/test-mpi.sh", Runs::Ci),
    ("bash scripts/loom.sh", Runs::Ci),
    (
        "cargo run --release",
        Runs::Walkthrough(
            "a release build of the whole workspace, then about a minute of measuring; its output \
             is BENCHMARKS.md's, not something a test can check",
        ),
    ),
    (
        "sudo bash scripts/setup-mpi.sh",
        Runs::Walkthrough(
            "installs system packages; .ci/run runs `bash scripts/setup-mpi.sh` as root, without \
             sudo, which CI's machine does not have",
        ),
    ),
    (
        "cargo build --release -p phasers-mpi-bench",
        Runs::Walkthrough("a release build with MPI (minutes on 2 cores)"),
    ),
    (
        "mpirun -np 2 --bind-to none target/release/phasers-mpi bench",
        Runs::Walkthrough(
            "the whole MPI benchmark (minutes); scripts/test-mpi.sh runs the same command with \
             short rows on a debug build",
        ),
    ),
    (
        "scripts/install-capi.sh \"$HOME/.local\"",
        Runs::Walkthrough(
            "a release build of the C library, installed into the reader's home; \
             crates/phasers-capi's tests install it into a scratch prefix",
        ),
    ),
    (
        "scripts/install-capi.sh --mpi \"$HOME/.local\"",
        Runs::Walkthrough(
            "as without --mpi, with MPI; tests/mpi_install.rs of crates/phasers-capi installs it \
             into a scratch prefix",
        ),
    ),
    (
        "export PKG_CONFIG_PATH=\"$HOME/.local/lib/pkgconfig\"",
        Runs::Walkthrough("needs the install above"),
    ),
    (
        "cc  prog.c   $(pkg-config --cflags --libs phasers) -lpthread -Wl,-rpath,\"$HOME/.local/lib\"",
        Runs::Walkthrough("the reader's prog.c, against the install above"),
    ),
    (
        "c++ prog.cpp $(pkg-config --cflags --libs phasers) -lpthread -Wl,-rpath,\"$HOME/.local/lib\"",
        Runs::Walkthrough("the reader's prog.cpp, against the install above"),
    ),
    (
        "cargo build --release -p phasers-pthread",
        Runs::Walkthrough("a release build (minutes on 2 cores); crates/phasers-pthread's tests build it"),
    ),
    (
        "LD_PRELOAD=$PWD/target/release/libphasers_pthread.so ./program",
        Runs::Walkthrough(
            "the reader's program; crates/phasers-pthread's tests preload the library into C programs",
        ),
    ),
    (
        "PHASERS_BARRIER_ALGORITHM=ticket LD_PRELOAD=$PWD/target/release/libphasers_pthread.so ./program",
        Runs::Walkthrough("as above, with the algorithm chosen"),
    ),
];

/// The command lines of a shell block: lines joined across a trailing `\`, without comments
/// and blank lines, each without its trailing `# ...` comment.
fn command_lines(code: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in code.lines() {
        let line = match line.find(" #") {
            Some(comment) => &line[..comment],
            None => line,
        };
        let line = line.trim_end();
        if let Some(start) = line.strip_suffix('\\') {
            pending.push_str(start);
            continue;
        }
        pending.push_str(line);
        let command = pending.trim().to_string();
        pending.clear();
        if !command.is_empty() && !command.starts_with('#') {
            lines.push(command);
        }
    }
    lines
}

#[test]
fn every_printed_command_says_where_it_runs() {
    let printed: Vec<(String, String)> = all_blocks()
        .into_iter()
        .filter(|block| FILES.contains(&block.file.as_str()) && block.language() == "sh")
        .flat_map(|block| {
            command_lines(&block.code)
                .into_iter()
                .map(move |command| (block.place(), command))
        })
        .collect();
    assert!(printed
        .iter()
        .any(|(place, _)| place.starts_with("README.md:")));
    let unlisted: Vec<String> = printed
        .iter()
        .filter(|(_, command)| !COMMANDS.iter().any(|(listed, _)| listed == command))
        .map(|(place, command)| format!("{place}: `{command}`"))
        .collect();
    assert_none(&unlisted, "printed commands missing from COMMANDS");
    let stale: Vec<String> = COMMANDS
        .iter()
        .filter(|(listed, _)| !printed.iter().any(|(_, command)| command == listed))
        .map(|(listed, _)| format!("`{listed}`"))
        .collect();
    assert_none(&stale, "COMMANDS that no file prints any more");
}

#[test]
fn the_commands_ci_runs_are_in_ci_as_printed() {
    let ci = fs::read_to_string(workspace_root().join(".ci/run")).expect(".ci/run can be read");
    let missing: Vec<String> = COMMANDS
        .iter()
        .filter(|(_, runs)| *runs == Runs::Ci)
        .filter(|(command, _)| !ci.lines().any(|line| line.trim() == *command))
        .map(|(command, _)| format!("`{command}`"))
        .collect();
    assert_none(
        &missing,
        "commands said to run in CI that .ci/run does not run",
    );
}

#[test]
fn the_walkthrough_runs_its_commands_as_printed() {
    let path = workspace_root().join("scripts/walkthrough.sh");
    let script = fs::read_to_string(path).expect("scripts/walkthrough.sh can be read");
    let missing: Vec<String> = COMMANDS
        .iter()
        .filter(|(_, runs)| matches!(runs, Runs::Walkthrough(_)))
        .filter(|(command, _)| !script.contains(command))
        .map(|(command, _)| format!("`{command}`"))
        .collect();
    assert_none(
        &missing,
        "commands said to run in the walk-through that it does not run",
    );
}

#[test]
fn commands_lose_comments_and_join_continued_lines() {
    let code = "# a comment line\ncargo test   # the tests\ncc a.c \\\n    -o a\n\n";
    assert_eq!(command_lines(code), ["cargo test", "cc a.c     -o a"]);
}
