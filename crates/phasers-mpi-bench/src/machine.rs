//! What the run ran on, for the report.

use phasers_cli::harness;
use phasers_mpi::Mpi;
use serde::Serialize;

/// The machine and the MPI library.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// Cores this process may use (`phasers::available_cores`).
    pub available_cores: usize,
    /// Ranks in the world.
    pub world_ranks: usize,
    /// The thread support MPI provides.
    pub mpi_threading: String,
    /// The first line of `MPI_Get_library_version`.
    pub mpi_library: Option<String>,
}

impl Machine {
    pub fn describe(mpi: &Mpi) -> Machine {
        Machine {
            cpu_model: cpu_model(),
            available_cores: phasers::available_cores(),
            world_ranks: mpi.size(),
            mpi_threading: format!("{:?}", mpi.threading()),
            mpi_library: phasers_mpi::mpi::environment::library_version()
                .ok()
                .and_then(|version| short_version(&version)),
        }
    }
}

/// `Open MPI v4.1.4` out of `Open MPI v4.1.4, package: ..., May 26, 2022\0`.
fn short_version(version: &str) -> Option<String> {
    let first = version.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    let name = first.split([',', '\n']).next()?.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// `model name` from /proc/cpuinfo, read as the `phasers` command reads it.
fn cpu_model() -> Option<String> {
    harness::machine::cpu_model(&std::fs::read_to_string("/proc/cpuinfo").ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(
            short_version("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4\0").as_deref(),
            Some("Open MPI v4.1.4")
        );
        assert_eq!(
            short_version("MPICH Version: 4.0\nMPICH Release date").as_deref(),
            Some("MPICH Version: 4.0")
        );
        assert_eq!(short_version("\0"), None);
    }
}
