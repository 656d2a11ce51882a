//! One row group of the hybrid part: a collective at one size and one ranks x threads shape, its
//! three contenders (the MPI collective over ranks x threads processes, the default team, the
//! unchecked team) and the ratios that pair them.

use serde::Serialize;

use crate::collective::Case;
use crate::rounds::RoundTiming;
use crate::stats::Ratio;

/// The contenders of a group, in the order of the first round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contender {
    /// The MPI collective among `ranks * threads` single-threaded processes.
    Mpi,
    /// The team users get: `HybridTeam::new` (checked, unless `PHASERS_CHECKED=off`).
    Default,
    /// `HybridTeam::builder(..).unchecked().build()`.
    Unchecked,
}

impl Contender {
    /// The contenders of a group with a baseline or without one (more members than the world
    /// has ranks).
    pub fn of_group(has_baseline: bool) -> &'static [Contender] {
        if has_baseline {
            &[Contender::Mpi, Contender::Default, Contender::Unchecked]
        } else {
            &[Contender::Default, Contender::Unchecked]
        }
    }
}

/// What a group measured, merged over its rounds (rank 0's).
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub mpi: Option<RoundTiming>,
    pub default: Option<RoundTiming>,
    pub unchecked: Option<RoundTiming>,
    /// Whether the default team is checked (rank 0's `is_checked`, which every process follows).
    pub default_is_checked: bool,
}

/// One group, as the report holds it.
#[derive(Debug, Clone, Serialize)]
pub struct HybridGroup {
    /// `barrier`, `broadcast`, ..., `scan-exclusive`.
    pub collective: &'static str,
    /// The baseline: `MPI_Barrier`, `MPI_Bcast`, ..., `MPI_Exscan`.
    pub mpi_collective: &'static str,
    /// `u64` or `f64`.
    pub element: &'static str,
    /// Elements per member (per block for gather, scatter, allgather, alltoall).
    pub length: usize,
    /// MPI ranks of the teams.
    pub ranks: usize,
    /// Threads (members) per rank.
    pub threads: usize,
    /// Processes of the baseline: `ranks * threads`.
    pub mpi_ranks: usize,
    /// The baseline; `None` where the world has fewer than `mpi_ranks` ranks.
    pub mpi: Option<RoundTiming>,
    /// The default team (`HybridTeam::new`).
    pub default: RoundTiming,
    /// Whether the default team was checked (it is, unless `PHASERS_CHECKED=off`).
    pub default_is_checked: bool,
    /// The unchecked team.
    pub unchecked: RoundTiming,
    /// `default / mpi`; `None` without a baseline.
    pub default_to_mpi: Option<Ratio>,
    /// `unchecked / mpi`; `None` without a baseline.
    pub unchecked_to_mpi: Option<Ratio>,
    /// `default / unchecked`: what the check costs.
    pub default_to_unchecked: Ratio,
}

impl HybridGroup {
    /// The group of `case` at `shape` from what rank 0 measured; `None` if a team contender has
    /// no timing (which only a rank other than 0 sees).
    pub fn pair(case: Case, (ranks, threads): (usize, usize), measured: Measured) -> Option<Self> {
        let default = measured.default?;
        let unchecked = measured.unchecked?;
        let to_mpi = |ours: &RoundTiming| {
            measured
                .mpi
                .as_ref()
                .map(|mpi| Ratio::of(&ours.timing, &mpi.timing))
        };
        Some(HybridGroup {
            collective: case.collective.name(),
            mpi_collective: case.collective.mpi_name(),
            element: case.element.name(),
            length: case.length,
            ranks,
            threads,
            mpi_ranks: ranks * threads,
            default_to_mpi: to_mpi(&default),
            unchecked_to_mpi: to_mpi(&unchecked),
            default_to_unchecked: Ratio::of(&default.timing, &unchecked.timing),
            mpi: measured.mpi,
            default,
            default_is_checked: measured.default_is_checked,
            unchecked,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::{Collective, Element};
    use crate::stats::Timing;

    fn timing(samples: &[f64]) -> RoundTiming {
        RoundTiming::merge(&[Timing::new(4, samples.to_vec()).unwrap()]).unwrap()
    }

    const CASE: Case = Case {
        collective: Collective::Gather,
        element: Element::U64,
        length: 1,
    };

    #[test]
    fn each_team_meets_the_baseline_and_the_default_meets_the_unchecked() {
        let measured = Measured {
            mpi: Some(timing(&[100.0, 200.0, 300.0])),
            default: Some(timing(&[150.0, 300.0, 600.0])),
            unchecked: Some(timing(&[50.0, 100.0, 400.0])),
            default_is_checked: true,
        };
        let group = HybridGroup::pair(CASE, (2, 2), measured).unwrap();
        assert_eq!(
            (group.collective, group.mpi_collective),
            ("gather", "MPI_Gather")
        );
        assert_eq!((group.ranks, group.threads, group.mpi_ranks), (2, 2, 4));
        let ratio = |r: Option<Ratio>| r.map(|r| (r.min, r.median));
        assert_eq!(ratio(group.default_to_mpi), Some((1.5, 1.5)));
        assert_eq!(ratio(group.unchecked_to_mpi), Some((0.5, 0.5)));
        assert_eq!(ratio(Some(group.default_to_unchecked)), Some((3.0, 3.0)));
    }

    #[test]
    fn without_a_baseline_only_the_teams_pair() {
        let measured = Measured {
            mpi: None,
            default: Some(timing(&[20.0])),
            unchecked: Some(timing(&[10.0])),
            default_is_checked: true,
        };
        let group = HybridGroup::pair(CASE, (1, 8), measured).unwrap();
        assert!(group.default_to_mpi.is_none() && group.unchecked_to_mpi.is_none());
        assert_eq!(group.default_to_unchecked.median, 2.0);
        assert_eq!(group.mpi_ranks, 8);
        // A rank without the teams' timings has no group.
        assert!(HybridGroup::pair(CASE, (1, 2), Measured::default()).is_none());
    }

    #[test]
    fn contenders_per_group() {
        assert_eq!(Contender::of_group(true)[0], Contender::Mpi);
        assert_eq!(Contender::of_group(true).len(), 3);
        assert_eq!(
            Contender::of_group(false),
            [Contender::Default, Contender::Unchecked]
        );
    }
}
