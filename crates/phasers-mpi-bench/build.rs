//! Builds the EPCC mixed-mode baseline (`baselines/omp_mpi_barrier.c`: OpenMP barrier, then
//! `MPI_Barrier` on the master thread, then an OpenMP barrier) for the `phasers-mpi` benchmark,
//! with the MPI flags Open MPI's compiler wrapper reports and GCC's `-fopenmp`.

use std::env;
use std::process::Command;

const SOURCE: &str = "baselines/omp_mpi_barrier.c";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo:rerun-if-env-changed=CC");

    let wrapper = env::var("MPICC").unwrap_or_else(|_| "mpicc".to_owned());
    let compile = mpi_flags(&wrapper, "--showme:compile");
    let link = mpi_flags(&wrapper, "--showme:link");

    let mut build = cc::Build::new();
    build
        .file(SOURCE)
        .std("gnu11")
        .opt_level(2)
        .warnings(true)
        .flag("-fopenmp");
    for flag in &compile {
        match flag.strip_prefix("-I") {
            Some(dir) => {
                build.include(dir);
            }
            None => {
                build.flag(flag);
            }
        }
    }
    build
        .try_compile("phasers_mpi_baselines")
        .unwrap_or_else(|error| {
            fail(&format!(
                "compiling {SOURCE} with -fopenmp failed: {error}\nInstall GCC with OpenMP \
                 (`apt-get install build-essential`)"
            ))
        });

    // mpi-sys links libmpi already; repeat its folder and add libgomp for the OpenMP runtime.
    for flag in &link {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={lib}");
        }
    }
    if let Some(dir) = gomp_folder(&build) {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=gomp");
}

/// The flags `mpicc --showme:compile` or `--showme:link` prints (Open MPI), else what
/// `pkg-config ompi-c` (or `mpi`) says.
fn mpi_flags(wrapper: &str, query: &str) -> Vec<String> {
    let from_wrapper = Command::new(wrapper)
        .arg(query)
        .output()
        .ok()
        .filter(|out| out.status.success());
    let output = from_wrapper.or_else(|| {
        let kind = if query.ends_with("compile") {
            "--cflags"
        } else {
            "--libs"
        };
        ["ompi-c", "mpi"].iter().find_map(|package| {
            Command::new("pkg-config")
                .args([kind, package])
                .output()
                .ok()
                .filter(|out| out.status.success())
        })
    });
    match output {
        Some(out) => String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
        None => fail(&format!(
            "neither `{wrapper} {query}` nor `pkg-config ompi-c` works; install Open MPI's \
             development files (`apt-get install openmpi-bin libopenmpi-dev pkg-config`) or point \
             MPICC at your MPI compiler wrapper"
        )),
    }
}

/// Where the compiler keeps libgomp.so, when it is not in the linker's default path.
fn gomp_folder(build: &cc::Build) -> Option<String> {
    let compiler = build.try_get_compiler().ok()?;
    let out = compiler
        .to_command()
        .arg("-print-file-name=libgomp.so")
        .output()
        .ok()?;
    let path = std::path::PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    path.is_absolute()
        .then(|| path.parent().map(|p| p.display().to_string()))
        .flatten()
}

fn fail(problem: &str) -> ! {
    panic!("\n\nphasers-mpi builds an OpenMP + MPI baseline for its benchmark: {problem}\n\n")
}
