//! What a benchmark compares: the baselines, every barrier algorithm of the library, and its
//! phasers.

use std::borrow::Cow;

use phasers::Algorithm;

use crate::native::{CxxBarrier, PthreadBarrier};
use crate::phaser_config::PhaserConfig;
use phasers_cli::harness::row::RowKind;

/// A row of the barrier table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contender {
    /// The hand-written sense-reversing barrier of [`crate::reference`]: the yardstick.
    Reference,
    /// `std::sync::Barrier`: what a Rust user gets without this library.
    Std,
    /// POSIX `pthread_barrier_t` (glibc), through the C shim.
    Pthread,
    /// C++20 `std::barrier` (libstdc++), through the C++ shim.
    CxxBarrier,
    /// OpenMP `#pragma omp barrier` (libgomp), on OpenMP's own threads.
    OpenMp,
    /// OpenMP `#pragma omp for reduction(+:a)` (libgomp): EPCC's reduction test.
    OmpReduction,
    /// [`Contender::OpenMp`] as OpenMP users tune it, `OMP_WAIT_POLICY=active`, measured in a
    /// child process (see [`crate::omp_active`]).
    OpenMpActive,
    /// [`Contender::OmpReduction`] under `OMP_WAIT_POLICY=active`, in a child process.
    OmpReductionActive,
    /// One of the library's barrier algorithms, `Auto` included.
    Phasers(Algorithm),
    /// One of the library's phasers, with or without an accumulator.
    Phaser(PhaserConfig),
}

impl Contender {
    /// The reference and the baselines, in table order; they head every table. OpenMP comes
    /// with its default wait policy and tuned (`OMP_WAIT_POLICY=active`), so that whichever is
    /// faster here is the one our barriers are held against.
    pub const BASELINES: [Contender; 6] = [
        Contender::Reference,
        Contender::Std,
        Contender::Pthread,
        Contender::CxxBarrier,
        Contender::OpenMp,
        Contender::OpenMpActive,
    ];

    /// Every row any benchmark has that runs in this process, for tests that must cover them
    /// all. The `OMP_WAIT_POLICY=active` rows re-execute the `phasers` binary, which a unit test
    /// is not; `tests/omp_active.rs` runs them end to end.
    #[cfg(test)]
    pub fn every() -> Vec<Contender> {
        Contender::BASELINES
            .into_iter()
            .filter(|contender| !contender.runs_in_child())
            .chain([Contender::OmpReduction])
            .chain(
                std::iter::once(Algorithm::Auto)
                    .chain(Algorithm::CONCRETE)
                    .map(Contender::Phasers),
            )
            .chain(crate::benches::phaser::PHASER_ROWS.map(Contender::Phaser))
            .collect()
    }

    /// What the row is.
    pub fn kind(self) -> RowKind {
        match self {
            Contender::Reference => RowKind::Reference,
            Contender::Std
            | Contender::Pthread
            | Contender::CxxBarrier
            | Contender::OpenMp
            | Contender::OmpReduction
            | Contender::OpenMpActive
            | Contender::OmpReductionActive => RowKind::Baseline,
            Contender::Phasers(_) | Contender::Phaser(_) => RowKind::Ours,
        }
    }

    /// Whether the row runs on OpenMP's threads, and so subtracts OpenMP's reference loop.
    pub fn runs_on_openmp(self) -> bool {
        matches!(
            self,
            Contender::OpenMp
                | Contender::OmpReduction
                | Contender::OpenMpActive
                | Contender::OmpReductionActive
        )
    }

    /// Whether the row is measured by a child process (the `OMP_WAIT_POLICY=active` rows).
    #[cfg(test)]
    pub fn runs_in_child(self) -> bool {
        matches!(
            self,
            Contender::OpenMpActive | Contender::OmpReductionActive
        )
    }

    /// The name in tables, JSON and `phasers list`.
    pub fn name(self) -> Cow<'static, str> {
        match self {
            Contender::Reference => "reference".into(),
            Contender::Std => "std::sync::Barrier".into(),
            Contender::Pthread => PthreadBarrier::NAME.into(),
            Contender::CxxBarrier => CxxBarrier::NAME.into(),
            Contender::OpenMp => "omp barrier".into(),
            Contender::OmpReduction => "omp reduction".into(),
            Contender::OpenMpActive => "omp barrier (active)".into(),
            Contender::OmpReductionActive => "omp reduction (active)".into(),
            Contender::Phasers(algorithm) => algorithm.name().into(),
            Contender::Phaser(config) => config.name(),
        }
    }

    /// A one-line description for `phasers list`.
    pub fn description(self) -> &'static str {
        match self {
            Contender::Reference => {
                "hand-written centralized sense-reversing barrier (spin, yield every 64 spins): \
                 the yardstick every ratio divides by"
            }
            Contender::Std => "Rust's std::sync::Barrier (mutex + condition variable)",
            Contender::Pthread => "POSIX pthread_barrier_wait (glibc: futex-based, sleeps)",
            Contender::CxxBarrier => {
                "C++20 std::barrier::arrive_and_wait (libstdc++: tree of atomics, atomic wait)"
            }
            Contender::OpenMp => {
                "#pragma omp barrier (libgomp, on OpenMP's own threads; spins GOMP_SPINCOUNT, \
                 then futex)"
            }
            Contender::OmpReduction => {
                "#pragma omp for reduction(+:a) over one iteration per thread, the delay and \
                 a += 1 inside (libgomp): EPCC's reduction test; the sum is checked"
            }
            Contender::OpenMpActive => {
                "omp barrier with OMP_WAIT_POLICY=active, as OpenMP users tune it (waiting threads \
                 spin instead of sleeping); libgomp reads it at load, so a child process measures it"
            }
            Contender::OmpReductionActive => {
                "omp reduction with OMP_WAIT_POLICY=active, measured by a child process"
            }
            Contender::Phasers(algorithm) => algorithm.description(),
            Contender::Phaser(config) => config.description(),
        }
    }
}

/// The description of the hardware floor, which is measured once per run rather than per row.
pub const FLOOR_DESCRIPTION: &str =
    "cache-line round trip between two threads pinned to different cores: the hardware floor";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct() {
        let mut names: Vec<Cow<'static, str>> = Contender::every()
            .into_iter()
            .chain([Contender::OpenMpActive, Contender::OmpReductionActive])
            .map(Contender::name)
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all);
    }
}
