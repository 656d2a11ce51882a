//! Looks for the programs some of the tests need besides the C toolchain (a GNU Fortran compiler,
//! cmake, valgrind, pkg-config, and MPI's mpirun and mpifort) and sets a cfg for each one found.
//! A test that needs a missing one is marked `#[ignore]` with the reason, so that `cargo test`
//! reports it as ignored rather than as passed: libtest has no way to skip a test at run time.
//! The library itself uses none of these cfgs.

#[path = "tests/support/tools.rs"]
mod tools;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=tests/support/tools.rs");
    // A program installed later in a directory already on PATH changes neither: tests/tools.rs
    // notices that at run time and says how to look again.
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=FC");
    for tool in tools::TOOLS {
        println!("cargo::rustc-check-cfg=cfg({})", tool.cfg);
        if tools::runs(tool.program) {
            println!("cargo::rustc-cfg={}", tool.cfg);
        }
    }
    println!("cargo::rustc-check-cfg=cfg({})", tools::FORTRAN_CFG);
    let fortran = tools::fortran_compiler();
    if fortran.is_some() {
        println!("cargo::rustc-cfg={}", tools::FORTRAN_CFG);
    }
    println!(
        "cargo::rustc-env=PHASERS_TEST_FC={}",
        fortran.unwrap_or_default()
    );
    println!("cargo::rustc-env=PHASERS_TEST_FOUND={}", tools::found());
}
