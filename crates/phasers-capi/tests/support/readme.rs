//! README.md's fenced blocks, and a shell to run them in as a new user would: the tests that run
//! the README's command lines as printed (tests/readme.rs, tests/mpi_install.rs) share these.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{crate_dir, library_dir};

/// A fenced block of README.md.
pub struct Block {
    /// The fence's info string: `sh`, `cmake`, `c`, ...
    pub info: String,
    /// The line before the fence, when it is an HTML comment.
    pub marker: Option<String>,
    /// The lines between the fences, each ending in a newline.
    pub body: String,
    /// The fence's line number, from 1.
    pub line: usize,
}

pub fn readme() -> String {
    std::fs::read_to_string(crate_dir().join("README.md")).expect("README.md is readable")
}

/// README.md's fenced blocks, in order.
pub fn blocks() -> Vec<Block> {
    let text = readme();
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let Some(info) = lines[at].strip_prefix("```") else {
            at += 1;
            continue;
        };
        let marker = at
            .checked_sub(1)
            .map(|before| lines[before].trim())
            .filter(|before| before.starts_with("<!--") && before.ends_with("-->"))
            .map(str::to_string);
        let close = (at + 1..lines.len())
            .find(|&end| lines[end].trim_end() == "```")
            .unwrap_or_else(|| panic!("README.md:{}: the block is never closed", at + 1));
        let body = lines[at + 1..close]
            .iter()
            .map(|line| format!("{line}\n"))
            .collect();
        blocks.push(Block {
            info: info.trim().to_string(),
            marker,
            body,
            line: at + 1,
        });
        at = close + 1;
    }
    blocks
}

/// The block after the marker `<!-- tests/<test> runs this block: NAME -->`.
pub fn block(test: &str, name: &str) -> String {
    let marker = format!("<!-- tests/{test} runs this block: {name} -->");
    blocks()
        .into_iter()
        .find(|block| block.marker.as_deref() == Some(marker.as_str()))
        .unwrap_or_else(|| panic!("README.md has no block marked {marker}"))
        .body
}

/// bash running `script` in `dir` as a new user's shell would: HOME is `home`, and the variables
/// the README sets, or that cargo sets for tests, are unset. Cargo and rustup keep their real
/// homes, and the install reuses the library these tests built (its profile and target
/// directory), so that the script's cargo build has nothing to do.
pub fn user_shell(script: &str, dir: &Path, home: &Path) -> Command {
    let real_home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let cargo_home =
        std::env::var_os("CARGO_HOME").map_or_else(|| real_home.join(".cargo"), PathBuf::from);
    let rustup_home =
        std::env::var_os("RUSTUP_HOME").map_or_else(|| real_home.join(".rustup"), PathBuf::from);
    let lib = library_dir();
    let profile = match lib.file_name().and_then(|name| name.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(other) => other.to_string(),
        None => panic!("the library directory has no name"),
    };
    let mut bash = Command::new("bash");
    bash.args(["-e", "-x", "-c", script])
        .current_dir(dir)
        .env("HOME", home)
        .env("CARGO_HOME", cargo_home)
        .env("RUSTUP_HOME", rustup_home)
        .env("PHASERS_CAPI_PROFILE", profile)
        .env("CARGO_TARGET_DIR", lib.parent().expect("target/<profile>"))
        .env(
            "CARGO",
            std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
        );
    for variable in [
        "LD_LIBRARY_PATH",
        "LIBRARY_PATH",
        "CPATH",
        "C_INCLUDE_PATH",
        "PKG_CONFIG_PATH",
        "CMAKE_PREFIX_PATH",
        "PREFIX",
        "DESTDIR",
    ] {
        bash.env_remove(variable);
    }
    // As the README says: FC only where the compiler is not called gfortran.
    let fc = env!("PHASERS_TEST_FC");
    if fc.is_empty() || fc == "gfortran" {
        bash.env_remove("FC");
    } else {
        bash.env("FC", fc);
    }
    bash
}

/// The repository's root, where the install block runs.
pub fn repository() -> PathBuf {
    crate_dir()
        .join("../..")
        .canonicalize()
        .expect("the repository's root exists")
}
