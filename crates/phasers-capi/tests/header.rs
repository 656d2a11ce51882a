//! The header is the C user's reference: it must compile cleanly as C99 and as C++, and declare
//! exactly the functions the library exports.

mod support;

use std::collections::BTreeSet;

use support::{compile_with, declared, exported, run, Link};

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

#[test]
fn header_declares_exactly_the_exported_functions() {
    let declared = declared("phasers.h");
    // The `mpi` feature's functions are declared by phasers_mpi.h and checked in tests/mpi.rs.
    let exported: BTreeSet<String> = exported()
        .into_iter()
        .filter(|symbol| !symbol.starts_with("phasers_mpi_"))
        .collect();
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
