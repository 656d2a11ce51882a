//! What the end-to-end tests of the `phasers` binary share: running it, and a scratch directory
//! for the files it writes.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `phasers` binary with `args` and collects its output.
pub fn phasers(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phasers"))
        .args(args)
        // The library's choices must not depend on a profile the developer happens to have.
        .env("PHASERS_PROFILE", "off")
        .output()
        .expect("the phasers binary runs")
}

/// A path named `name` in a scratch directory of this test binary (`suite` keeps the binaries'
/// directories apart).
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phasers-{suite}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir.join(name)
}
