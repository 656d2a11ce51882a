//! What the end-to-end tests of the `phasers` binary share: running it, and a scratch directory
//! for the files it writes.

#![allow(dead_code)] // each test file uses its part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `phasers` binary with `args` and collects its output.
pub fn phasers(args: &[&str]) -> Output {
    phasers_with(&[], args)
}

/// As [`phasers`], with the environment variables `env` set as well.
pub fn phasers_with(env: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phasers"))
        .args(args)
        // The library's choices must not depend on a profile the developer happens to have.
        .env("PHASERS_PROFILE", "off")
        .envs(env.iter().copied())
        .output()
        .expect("the phasers binary runs")
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The stdout of a run that must have succeeded; otherwise fails showing both streams.
pub fn succeeded(output: &Output) -> String {
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    stdout
}

/// The JSON document the binary wrote at `path`.
pub fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the JSON file was written"))
        .expect("the file is JSON")
}

/// A path named `name` in a scratch directory of this test binary (`suite` keeps the binaries'
/// directories apart). It lies under Cargo's `target/tmp`, so the reports every run writes (about
/// a megabyte) go with `cargo clean` instead of piling up in the system's temporary directory.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("phasers-{suite}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir.join(name)
}
