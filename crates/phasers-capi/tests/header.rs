//! The header is the C user's reference: it must compile cleanly as C99 and as C++, and declare
//! exactly the functions the library exports.

mod support;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use support::{compile_with, crate_dir, library_dir, run, run_captured, Link};

const STRICT: [&str; 4] = ["-Wall", "-Wextra", "-Werror", "-pedantic"];

#[test]
fn header_compiles_and_links_as_c99() {
    let flags: Vec<&str> = ["-std=c99"].into_iter().chain(STRICT).collect();
    let program = compile_with("cc", &flags, &["header_use.c"], "header_c99", Link::Shared);
    let outcome = run(&program, &[]).expect_success("header use from C99");
    assert!(
        outcome.stdout.starts_with("header ok: "),
        "{}",
        outcome.stdout
    );
}

#[test]
fn header_compiles_and_links_as_cpp() {
    // The same program, compiled as C++ (`-x c++`).
    let flags: Vec<&str> = ["-x", "c++", "-std=c++11"]
        .into_iter()
        .chain(STRICT)
        .collect();
    let program = compile_with("c++", &flags, &["header_use.c"], "header_cpp", Link::Shared);
    let outcome = run(&program, &[]).expect_success("header use from C++");
    assert!(
        outcome.stdout.starts_with("header ok: "),
        "{}",
        outcome.stdout
    );
}

/// The `phasers_*` functions the header declares: identifiers followed by `(`, outside comments.
fn declared() -> BTreeSet<String> {
    let header = std::fs::read_to_string(crate_dir().join("include/phasers.h")).unwrap();
    let mut code = String::new();
    let mut rest = header.as_str();
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
fn exported() -> BTreeSet<String> {
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

#[test]
fn header_declares_exactly_the_exported_functions() {
    let declared = declared();
    let exported = exported();
    assert!(
        declared.len() > 30,
        "the header parse found only {declared:?}"
    );
    let undeclared: Vec<_> = exported.difference(&declared).collect();
    let missing: Vec<_> = declared.difference(&exported).collect();
    assert!(
        undeclared.is_empty() && missing.is_empty(),
        "exported but not in phasers.h: {undeclared:?}; in phasers.h but not exported: {missing:?}"
    );
}
