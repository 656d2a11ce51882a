//! The compilers and runtime libraries of the native baselines (built by `build.rs` from
//! `crates/phasers-cli/baselines/`), for the machine description of every report.

use std::ffi::{c_char, CStr};

use serde::{Deserialize, Serialize};

extern "C" {
    fn phasers_c_compiler_version() -> *const c_char;
    fn phasers_glibc_version() -> *const c_char;
    fn phasers_openmp_spec() -> i64;
    fn phasers_libstdcxx_release() -> i32;
    fn phasers_libstdcxx_date() -> i64;
}

/// What the native baselines were built with and ran on: their numbers mean little without it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NativeVersions {
    /// The compiler that built the C baselines, e.g. `GCC 12.2.0`.
    pub c_compiler: String,
    /// The glibc the process runs on (read at run time), e.g. `2.36`.
    pub glibc: String,
    /// The libstdc++ headers `std::barrier` was compiled from: release and date, e.g.
    /// `12 (20220819)`.
    pub libstdcxx: String,
    /// The OpenMP specification libgomp implements, e.g. `201511 (OpenMP 4.5)`.
    pub openmp: String,
    /// `OMP_WAIT_POLICY` if set: `active` makes libgomp spin without bound, `passive` sleep at once.
    pub omp_wait_policy: Option<String>,
    /// `GOMP_SPINCOUNT` if set: how long libgomp spins before it sleeps.
    pub gomp_spincount: Option<String>,
}

/// The versions the baselines were built with and run on, and this process's OpenMP variables.
pub fn versions() -> NativeVersions {
    // SAFETY: both functions return pointers to NUL-terminated strings that live for the whole
    // program (a string literal, and glibc's static version string).
    let (c_compiler, glibc) = unsafe {
        (
            CStr::from_ptr(phasers_c_compiler_version()),
            CStr::from_ptr(phasers_glibc_version()),
        )
    };
    // SAFETY: these functions take nothing and return constants.
    let (openmp, release, date) = unsafe {
        (
            phasers_openmp_spec(),
            phasers_libstdcxx_release(),
            phasers_libstdcxx_date(),
        )
    };
    let env = |name: &str| std::env::var_os(name).map(|value| value.to_string_lossy().into_owned());
    NativeVersions {
        c_compiler: c_compiler.to_string_lossy().into_owned(),
        glibc: glibc.to_string_lossy().into_owned(),
        libstdcxx: format!("{release} ({date})"),
        openmp: match openmp_release(openmp) {
            Some(name) => format!("{openmp} (OpenMP {name})"),
            None => openmp.to_string(),
        },
        omp_wait_policy: env("OMP_WAIT_POLICY"),
        gomp_spincount: env("GOMP_SPINCOUNT"),
    }
}

/// The specification release a value of `_OPENMP` stands for (the dates are the specs' own).
fn openmp_release(spec: i64) -> Option<&'static str> {
    Some(match spec {
        200505 => "2.5",
        200805 => "3.0",
        201107 => "3.1",
        201307 => "4.0",
        201511 => "4.5",
        201811 => "5.0",
        202011 => "5.1",
        202111 => "5.2",
        202411 => "6.0",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    // tests/smoke.rs and tests/measurements.rs: every report carries them.
    #[test]
    fn versions_name_gnu_tools() {
        let versions = super::versions();
        let gnu = versions.c_compiler.starts_with("GCC ") && versions.glibc.starts_with("2.");
        let openmp = versions.openmp.contains("OpenMP") && versions.libstdcxx.contains(" (20");
        assert!(gnu && openmp, "{versions:?}");
    }
}
