//! Builds the native baselines in `baselines/` (pthread_barrier_t, C++20 std::barrier, OpenMP)
//! with the system GCC, after checking that GCC is there and can build them, so that a missing
//! toolchain fails with a message that says what to install rather than a wall of compiler output.
//!
//! The baselines are meant to be GNU's: glibc's pthread barrier, libstdc++'s std::barrier and
//! libgomp's OpenMP barrier and reductions, the ones Linux users get. So the compilers must be GCC
//! (Clang would bring libomp), and the target Linux with glibc.

use std::env;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The sources, relative to the crate; each is also a `rerun-if-changed`.
const HEADERS: [&str; 3] = [
    "baselines/baselines.h",
    "baselines/omp_common.h",
    "baselines/omp_affinity.h",
];
const C_SOURCES: [&str; 6] = [
    "baselines/pthread_barrier.c",
    "baselines/omp_barrier.c",
    "baselines/omp_dynamic.c",
    "baselines/omp_array_reduce.c",
    "baselines/omp_collectives.c",
    "baselines/versions.c",
];
const CXX_SOURCES: [&str; 1] = ["baselines/cxx_barrier.cpp"];

/// Rejects what would build but not be GNU's libraries, or a GCC whose std::barrier predates the
/// fixes to libstdc++'s atomic waits (GCC 12).
const GCC_CHECK: &str = r#"
#if !defined(__GNUC__) || defined(__clang__) || __GNUC__ < 12
#error "not GCC 12 or newer"
#endif
"#;

/// Links with -fopenmp, so libgomp must be installed, not only its header.
const C_PROBE: &str = r#"
#include <gnu/libc-version.h>
#include <omp.h>
#include <pthread.h>
int main(void)
{
    int threads = 0;
#pragma omp parallel reduction(+ : threads)
    threads += 1;
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, 0, 1);
    pthread_barrier_destroy(&barrier);
    return threads > 0 && gnu_get_libc_version() != 0 ? 0 : 1;
}
"#;

const CXX_PROBE: &str = r#"
#include <barrier>
#if !defined(__GLIBCXX__)
#error "not libstdc++"
#endif
int main()
{
    std::barrier<> barrier(1);
    barrier.arrive_and_wait();
    return 0;
}
"#;

fn main() {
    for path in C_SOURCES.iter().chain(&CXX_SOURCES).chain(&HEADERS) {
        println!("cargo:rerun-if-changed={path}");
    }
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=CXX");

    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" || target_env != "gnu" {
        panic!(
            "phasers-cli builds C/C++ baselines (pthread_barrier_t, C++20 std::barrier, OpenMP) \
             against glibc, libstdc++ and libgomp, so it needs a Linux target with glibc \
             (x86_64-unknown-linux-gnu or aarch64-unknown-linux-gnu), not {}",
            env::var("TARGET").unwrap_or_default()
        );
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let c = Toolchain::new(false);
    let cxx = Toolchain::new(true);
    c.check_version();
    cxx.check_version();
    c.probe(
        &out_dir,
        "probe.c",
        &format!("{GCC_CHECK}{C_PROBE}"),
        &["-fopenmp", "-pthread"],
    );
    cxx.probe(
        &out_dir,
        "probe.cpp",
        &format!("{GCC_CHECK}{CXX_PROBE}"),
        &["-std=c++20", "-pthread"],
    );

    // -O2 whatever the Cargo profile: these are the baselines' numbers, built the way their users
    // build them. -fopenmp only matters to the omp_*.c shims and versions.c (_OPENMP); it is harmless
    // to the pthread shim.
    c.build()
        .files(C_SOURCES)
        .std("gnu11")
        .flag("-fopenmp")
        .flag("-pthread")
        .try_compile("phasers_baselines_c")
        .unwrap_or_else(|error| c.fail(&format!("compiling the C baselines failed: {error}")));
    // cc links libstdc++ for a C++ build.
    cxx.build()
        .files(CXX_SOURCES)
        .cpp(true)
        .std("c++20")
        .flag("-pthread")
        .try_compile("phasers_baselines_cxx")
        .unwrap_or_else(|error| cxx.fail(&format!("compiling the C++ baseline failed: {error}")));

    // libgomp.so and libstdc++.so live in GCC's private library folder; the linker that links the
    // binary finds them only if it is that GCC, so say where they are.
    for (toolchain, library) in [(&c, "libgomp.so"), (&cxx, "libstdc++.so")] {
        if let Some(folder) = toolchain.library_folder(library) {
            println!("cargo:rustc-link-search=native={}", folder.display());
        }
    }
    println!("cargo:rustc-link-lib=dylib=gomp");
    println!("cargo:rustc-link-lib=dylib=pthread");
}

/// The C or the C++ compiler: whatever `CC`/`CXX` name (as the cc crate reads them), else GCC.
struct Toolchain {
    cxx: bool,
    /// A cc build that knows only the compiler: the start of every build with it.
    base: cc::Build,
    tool: cc::Tool,
}

impl Toolchain {
    fn new(cxx: bool) -> Self {
        let mut base = cc::Build::new();
        base.cpp(cxx);
        if !user_chose_compiler(if cxx { "CXX" } else { "CC" }) {
            // cc's own default on Linux is `cc`/`c++`, which may be Clang.
            base.compiler(if cxx { "g++" } else { "gcc" });
        }
        let tool = base.try_get_compiler().unwrap_or_else(|error| {
            fail(
                cxx,
                if cxx { "g++" } else { "gcc" },
                &format!("was not found: {error}"),
            )
        });
        Toolchain { cxx, base, tool }
    }

    /// A cc build with this compiler and the flags every baseline gets.
    fn build(&self) -> cc::Build {
        let mut build = self.base.clone();
        build.opt_level(2).warnings(true).extra_warnings(true);
        build
    }

    fn check_version(&self) {
        match self.tool.to_command().arg("--version").output() {
            Ok(output) if output.status.success() => {}
            Ok(output) => self.fail(&format!(
                "failed: `--version` exited with {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )),
            Err(error) if error.kind() == ErrorKind::NotFound => self.fail("was not found"),
            Err(error) => self.fail(&format!("failed to start: {error}")),
        }
    }

    /// Compiles and links a small program that needs what the baselines need.
    fn probe(&self, out_dir: &Path, name: &str, source: &str, flags: &[&str]) {
        let path = out_dir.join(name);
        fs::write(&path, source).expect("writing a probe into OUT_DIR");
        let output = self
            .tool
            .to_command()
            .args(flags)
            .arg(&path)
            .arg("-o")
            .arg(out_dir.join(format!("{name}.out")))
            .output();
        match output {
            Ok(output) if output.status.success() => {}
            Ok(output) => self.fail(&format!(
                "failed to build a {} test program with {}: {}",
                if self.cxx {
                    "C++20 std::barrier"
                } else {
                    "OpenMP and pthread"
                },
                flags.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            )),
            Err(error) => self.fail(&format!("failed to start: {error}")),
        }
    }

    /// The folder of `library` in the compiler's search path, if it has one there.
    fn library_folder(&self, library: &str) -> Option<PathBuf> {
        let output = self
            .tool
            .to_command()
            .arg(format!("-print-file-name={library}"))
            .output()
            .ok()?;
        // GCC echoes the bare name back when the library is not in its folders.
        let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
        path.is_absolute()
            .then(|| path.parent().map(Path::to_path_buf))
            .flatten()
    }

    fn fail(&self, problem: &str) -> ! {
        fail(self.cxx, &self.tool.path().display().to_string(), problem)
    }
}

/// Whether the user named a compiler in any of the variables cc reads for this target.
fn user_chose_compiler(variable: &str) -> bool {
    let target = env::var("TARGET").unwrap_or_default();
    let host = env::var("HOST").unwrap_or_default();
    let kind = if target == host { "HOST" } else { "TARGET" };
    [
        format!("{variable}_{target}"),
        format!("{variable}_{}", target.replace('-', "_")),
        format!("{kind}_{variable}"),
        variable.to_owned(),
    ]
    .iter()
    .any(|name| {
        println!("cargo:rerun-if-env-changed={name}");
        env::var_os(name).is_some_and(|value| !value.is_empty())
    })
}

fn fail(cxx: bool, compiler: &str, problem: &str) -> ! {
    let variable = if cxx { "CXX" } else { "CC" };
    panic!(
        "\n\nphasers-cli builds C/C++ baselines (pthread_barrier_t, C++20 std::barrier, OpenMP) \
         and needs gcc and g++ (12 or newer, with OpenMP): `{compiler}` ({variable}) {problem}\n\
         On Debian/Ubuntu: `apt-get install build-essential`; elsewhere install GCC, or point \
         CC/CXX at a GCC.\n\n"
    )
}
