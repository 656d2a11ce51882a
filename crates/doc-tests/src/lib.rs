//! Reads the code blocks of the workspace's Markdown files and builds their Rust blocks as
//! programs of their own, the way a reader who pastes one into `fn main()` of a new crate would.
//!
//! Doctests are not enough for that: rustdoc runs a block with its hidden `# ` lines, which a
//! reader never sees, so a block could pass as a doctest and fail when pasted (issue 34). The
//! tests of this crate build every Rust block in a scratch crate that depends on the workspace's
//! crates by path, with the workspace's `Cargo.lock` (offline: `cargo test` has fetched every
//! dependency already) and the workspace's target directory (the libraries are built once).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// One fenced code block of a Markdown file.
///
/// ```
/// let blocks = phasers_doc_tests::blocks("demo.md", "text\n\n```rust,ignore\nlet x = 1;\n```\n");
/// assert_eq!(blocks.len(), 1);
/// assert_eq!((blocks[0].line, blocks[0].language()), (3, "rust"));
/// assert_eq!(blocks[0].code, "let x = 1;\n");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The file, relative to the workspace root.
    pub file: String,
    /// The line of the opening fence, counted from 1.
    pub line: usize,
    /// What follows the opening fence: `rust`, `rust,ignore`, `sh`, ...
    pub info: String,
    /// The lines between the fences, each ending in a newline.
    pub code: String,
}

impl Block {
    /// The block's language: its info string up to the first comma or space.
    ///
    /// ```
    /// let block = &phasers_doc_tests::blocks("a.md", "```rust,no_run\n```\n")[0];
    /// assert_eq!(block.language(), "rust");
    /// ```
    pub fn language(&self) -> &str {
        self.info
            .split([',', ' '])
            .next()
            .unwrap_or_default()
            .trim()
    }

    /// `file:line`, for messages.
    ///
    /// ```
    /// let block = &phasers_doc_tests::blocks("docs/a.md", "\n```sh\n```\n")[0];
    /// assert_eq!(block.place(), "docs/a.md:2");
    /// ```
    pub fn place(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// A name for the block's program, unique within the workspace: the file's path and the
    /// fence's line, with everything but letters and digits turned into `_`.
    ///
    /// ```
    /// let block = &phasers_doc_tests::blocks("docs/guide.md", "```rust\n```\n")[0];
    /// assert_eq!(block.program_name(), "docs_guide_md_1");
    /// ```
    pub fn program_name(&self) -> String {
        let file: String = self
            .file
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("{file}_{}", self.line)
    }

    /// Whether the block uses the MPI crate, which needs Open MPI to build and `mpirun` to run.
    ///
    /// ```
    /// let block = &phasers_doc_tests::blocks("a.md", "```rust\nuse phasers_mpi::Mpi;\n```\n")[0];
    /// assert!(block.uses_mpi());
    /// ```
    pub fn uses_mpi(&self) -> bool {
        self.code.contains("phasers_mpi")
    }
}

/// The fenced code blocks of `markdown`, which was read from `file`.
///
/// A fence may be indented (a block inside a list item); its indentation is removed from the
/// block's lines.
///
/// ```
/// let text = "- item:\n\n  ```sh\n  cargo test\n  ```\n";
/// let blocks = phasers_doc_tests::blocks("a.md", text);
/// assert_eq!((blocks[0].info.as_str(), blocks[0].code.as_str()), ("sh", "cargo test\n"));
/// ```
pub fn blocks(file: &str, markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<(usize, Block)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match open.take() {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let block = Block {
                        file: file.to_string(),
                        line: index + 1,
                        info: info.trim().to_string(),
                        code: String::new(),
                    };
                    open = Some((indent, block));
                }
            }
            Some((fence_indent, mut block)) => {
                if trimmed.trim_end() == "```" {
                    found.push(block);
                } else {
                    let strip = indent.min(fence_indent);
                    block.code.push_str(&line[strip..]);
                    block.code.push('\n');
                    open = Some((fence_indent, block));
                }
            }
        }
    }
    found
}

/// The workspace's root directory.
///
/// ```
/// assert!(phasers_doc_tests::workspace_root().join("Cargo.lock").is_file());
/// ```
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists")
}

/// The Markdown files a reader follows: the README, docs/, and every crate's README, as paths
/// relative to the workspace root, sorted.
///
/// ```
/// let files = phasers_doc_tests::documents();
/// assert!(files.iter().any(|f| f == "README.md"));
/// assert!(files.iter().any(|f| f == "docs/guide.md"));
/// ```
pub fn documents() -> Vec<String> {
    let root = workspace_root();
    let mut files = vec!["README.md".to_string(), "examples/README.md".to_string()];
    for (dir, only) in [("docs", None), ("crates", Some("README.md"))] {
        let entries = fs::read_dir(root.join(dir)).expect("docs/ and crates/ can be listed");
        for entry in entries {
            let path = entry.expect("a directory entry can be read").path();
            let name = path
                .file_name()
                .expect("an entry has a name")
                .to_string_lossy();
            let file = match only {
                None if name.ends_with(".md") => format!("{dir}/{name}"),
                Some(readme) if root.join(dir).join(&*name).join(readme).is_file() => {
                    format!("{dir}/{name}/{readme}")
                }
                _ => continue,
            };
            files.push(file);
        }
    }
    files.retain(|file| root.join(file).is_file());
    files.sort();
    files
}

/// Every fenced block of every file [`documents`] lists.
///
/// ```
/// let all = phasers_doc_tests::all_blocks();
/// assert!(all.iter().any(|b| b.file == "README.md" && b.language() == "rust"));
/// ```
pub fn all_blocks() -> Vec<Block> {
    let root = workspace_root();
    documents()
        .iter()
        .flat_map(|file| {
            let text = fs::read_to_string(root.join(file)).expect("a listed document can be read");
            blocks(file, &text)
        })
        .collect()
}

/// The program a reader gets from a Rust block: the block as printed when it has its own
/// `fn main`, else the block pasted into `fn main() { ... }`.
///
/// A line that rustdoc hides (`# ...` or a lone `#`) is an error: the reader does not see it, so
/// a block that needs one does not compile as printed.
///
/// ```
/// use phasers_doc_tests::{blocks, rust_program};
///
/// let pasted = &blocks("a.md", "```rust\nlet x = 1;\nassert_eq!(x, 1);\n```\n")[0];
/// assert_eq!(rust_program(pasted).unwrap(), "fn main() {\nlet x = 1;\nassert_eq!(x, 1);\n}\n");
/// let hidden = &blocks("a.md", "```rust\nlet x = f()?;\n# Ok::<(), E>(())\n```\n")[0];
/// assert!(rust_program(hidden).unwrap_err().contains("a.md:3"));
/// ```
pub fn rust_program(block: &Block) -> Result<String, String> {
    for (offset, line) in block.code.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed == "#" || trimmed.starts_with("# ") {
            return Err(format!(
                "{}:{}: `{trimmed}` is a line rustdoc hides, so a reader does not see it; show it \
                 (for `?`, write `fn main() -> Result<(), E>` in the block)",
                block.file,
                block.line + 1 + offset
            ));
        }
    }
    if block.code.contains("fn main(") {
        Ok(block.code.clone())
    } else {
        Ok(format!("fn main() {{\n{}}}\n", block.code))
    }
}

/// Builds `programs` (name, source) as binaries of one scratch crate named `name` with
/// `dependencies` (lines of a `[dependencies]` table), and returns each binary's path, in order.
///
/// The crate lies under the target directory of the running test (`doc-tests/<name>`) and builds
/// Every block of `blocks` as a program, named after its place ([`Block::program_name`]); fails
/// the test, naming each, when a block hides lines from its reader (see [`rust_program`]).
pub fn programs(blocks: &[Block]) -> Vec<(String, String)> {
    let mut failures = Vec::new();
    let mut programs = Vec::new();
    for block in blocks {
        match rust_program(block) {
            Ok(source) => programs.push((block.program_name(), source)),
            Err(hidden) => failures.push(hidden),
        }
    }
    assert_none(&failures, "Rust blocks with lines a reader cannot see");
    programs
}

/// there too, so the workspace's libraries are not built again; warnings are errors.
pub fn build_programs(
    name: &str,
    dependencies: &str,
    programs: &[(String, String)],
) -> Result<Vec<PathBuf>, String> {
    let target = target_dir();
    let dir = target.join("doc-tests").join(name);
    let bin = dir.join("src/bin");
    // Programs of blocks that no longer exist must not be built again.
    if bin.exists() {
        fs::remove_dir_all(&bin).map_err(|e| format!("removing {}: {e}", bin.display()))?;
    }
    fs::create_dir_all(&bin).map_err(|e| format!("creating {}: {e}", bin.display()))?;
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\n{dependencies}\n\
         [lints.rust]\nwarnings = \"deny\"\n\n\
         # A workspace of its own: under target/ it lies inside the phasers checkout.\n\
         [workspace]\n"
    );
    write(&dir.join("Cargo.toml"), &manifest)?;
    // The workspace's lock file pins every dependency at the versions the workspace tested (and
    // that its rust-version builds).
    let lock = fs::read(workspace_root().join("Cargo.lock")).map_err(|e| e.to_string())?;
    fs::write(dir.join("Cargo.lock"), lock).map_err(|e| e.to_string())?;
    for (program, source) in programs {
        write(&bin.join(format!("{program}.rs")), source)?;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args(["build", "--offline", "--bins", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target);
    let output = run(&mut build, Duration::from_secs(1200))?;
    if !output.status.success() {
        return Err(format!(
            "cargo build of the scratch crate {} failed ({}):\n{}",
            dir.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(programs
        .iter()
        .map(|(program, _)| target.join("debug").join(program))
        .collect())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// The target directory the running test binary was built in (`<target>/<profile>/deps/<test>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    exe.ancestors()
        .nth(3)
        .expect("a test binary lies in <target>/<profile>/deps")
        .to_path_buf()
}

/// Runs `command` to the end with its output captured, killing it after `limit`.
///
/// ```
/// use std::process::Command;
/// use std::time::Duration;
///
/// let output = phasers_doc_tests::run(Command::new("echo").arg("hi"), Duration::from_secs(10));
/// assert_eq!(output.unwrap().stdout, b"hi\n");
/// let slow = phasers_doc_tests::run(Command::new("sleep").arg("10"), Duration::from_millis(100));
/// assert!(slow.unwrap_err().contains("killed after"));
/// ```
pub fn run(command: &mut Command, limit: Duration) -> Result<Output, String> {
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {shown}: {e}"))?;
    // Read both pipes while waiting: a child that fills one would otherwise block for ever.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                // A read error ends the capture; the exit status still tells what happened.
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > limit {
            // Killing fails only when it has exited meanwhile, which `wait` then reports.
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{shown} killed after {limit:?}"));
        }
        thread::sleep(Duration::from_millis(20));
    };
    Ok(Output {
        status,
        stdout: stdout.join().expect("the stdout reader does not panic"),
        stderr: stderr.join().expect("the stderr reader does not panic"),
    })
}

/// Panics with every failure, one per line, if there is any.
///
/// ```
/// phasers_doc_tests::assert_none(&[], "examples that fail");
/// ```
#[track_caller]
pub fn assert_none(failures: &[String], what: &str) {
    assert!(
        failures.is_empty(),
        "{} {what}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_lines_and_languages() {
        let text =
            "# Title\n\n```toml\n[dependencies]\n```\n\ntext\n\n```rust\nfn main() {}\n```\n";
        let found = blocks("x.md", text);
        let summary: Vec<_> = found
            .iter()
            .map(|b| (b.line, b.language().to_string(), b.code.clone()))
            .collect();
        assert_eq!(
            summary,
            [
                (3, "toml".to_string(), "[dependencies]\n".to_string()),
                (9, "rust".to_string(), "fn main() {}\n".to_string()),
            ]
        );
    }

    #[test]
    fn a_block_with_main_is_kept_as_printed() {
        let block = &blocks("x.md", "```rust\nuse std::fmt;\n\nfn main() {}\n```\n")[0];
        assert_eq!(
            rust_program(block).unwrap(),
            "use std::fmt;\n\nfn main() {}\n"
        );
    }

    #[test]
    fn attributes_are_not_hidden_lines() {
        let block = &blocks("x.md", "```rust\n#[derive(Debug)]\nstruct S;\n```\n")[0];
        assert!(rust_program(block).is_ok());
        let lone = &blocks("x.md", "```rust\nlet x = 1;\n#\n```\n")[0];
        assert!(rust_program(lone).unwrap_err().starts_with("x.md:3:"));
    }

    #[test]
    fn the_workspace_documents_include_the_crate_readmes() {
        let files = documents();
        assert!(files.contains(&"crates/phasers-capi/README.md".to_string()));
        assert!(files.windows(2).all(|pair| pair[0] < pair[1]));
    }
}
