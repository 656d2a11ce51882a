//! Part 4: every hybrid team collective, as users get it (`HybridTeam::new`: checked) and
//! unchecked, at every ranks x threads shape with 2 or more members that fits the world and the
//! machine, against the MPI collective over as many ranks as the shape has members (R x T
//! against R*T ranks, "MPI everywhere"), in the same run. A shape with more members than the
//! world has ranks has no baseline (its ratios are empty).
//!
//! Each collective at each size and shape is one row group: its three contenders share `--time`
//! and run in interleaved rounds (see `rounds`) on the first R*T ranks (R without a baseline); the teams run
//! on the first R of them while the others idle. Both teams and their threads live for the whole
//! group, so a later round finds its team warm. Every call's result is checked (see `expect`).

use std::time::{Duration, Instant};

use phasers_mpi::mpi::topology::SimpleCommunicator;
use phasers_mpi::mpi::traits::Communicator;
use phasers_mpi::{HybridMember, HybridTeam, Mpi};
use serde::Serialize;

use crate::calls;
use crate::check::hold_back_each;
use crate::collective::{cases, Case, Collective, Element};
use crate::crew::{with_crew, Task};
use crate::error::{BenchError, Result};
use crate::expect::{Call, Side, Value};
use crate::harness::{measure_round, Schedule};
use crate::hybrid_group::{Contender, HybridGroup, Measured};
use crate::rounds::{self, RoundTiming};
use crate::stats::Timing;
use crate::subset::{first, idle_until_all_arrive, on_first};

/// The most contenders of a group (see [`Contender::of_group`]).
const CONTENDERS: u32 = 3;

/// The hybrid part's groups.
#[derive(Debug, Clone, Serialize)]
pub struct HybridPart {
    /// The collectives measured, in table order.
    pub collectives: Vec<Collective>,
    /// The ranks x threads shapes, in table order.
    pub shapes: Vec<(usize, usize)>,
    /// Rounds per contender (`--rounds`, at most `--samples`).
    pub rounds: usize,
    /// One per collective, size and shape.
    pub groups: Vec<HybridGroup>,
}

/// The shapes measured: ranks x threads with at least 2 members, at most max(world, cores)
/// members, threads a power of two.
pub fn shapes(world: usize, cores: usize) -> Vec<(usize, usize)> {
    let most = world.max(cores);
    let mut shapes = Vec::new();
    for ranks in 1..=world {
        let mut threads = 1;
        while ranks * threads <= most {
            if ranks * threads >= 2 {
                shapes.push((ranks, threads));
            }
            threads *= 2;
        }
    }
    shapes
}

/// The ranks the MPI baseline of `shape` runs on: one per member, where the world has that many.
pub fn baseline_ranks((ranks, threads): (usize, usize), world: usize) -> Option<usize> {
    Some(ranks * threads).filter(|&members| members <= world)
}

/// The world ranks a group of `shape` runs on: the baseline's, or the teams' without one.
pub fn group_ranks(shape: (usize, usize), world: usize) -> usize {
    baseline_ranks(shape, world).unwrap_or(shape.0)
}

/// Each contender's schedule: a group's three contenders share a row's time, so that the part's
/// twelve cases at every shape take about as long as a row each (a couple of minutes at np 2 on 2
/// cores).
pub fn contender_schedule(row: Schedule) -> Schedule {
    Schedule {
        sample: row.sample / CONTENDERS,
        samples: row.samples,
    }
}

/// Runs the part; collective over the world, groups are rank 0's.
pub fn run(
    mpi: &Mpi,
    schedule: Schedule,
    rounds: usize,
    collectives: &[Collective],
    mut report: impl FnMut(&HybridGroup),
) -> Result<HybridPart> {
    let world = mpi.world();
    let size = mpi.size();
    let shapes = shapes(size, phasers::available_cores());
    let rounds = rounds::count(rounds, schedule.samples);
    let schedule = contender_schedule(schedule);
    let cases = cases(collectives);
    let mut groups = Vec::new();
    for &case in &cases {
        for &shape in &shapes {
            let has_baseline = baseline_ranks(shape, size).is_some();
            let measured = on_first(world, group_ranks(shape, size), |comm| {
                let group = Group {
                    mpi,
                    comm,
                    case,
                    shape,
                    has_baseline,
                    schedule,
                    rounds,
                };
                match case.element {
                    Element::U64 => group.measure::<u64>(),
                    Element::F64 => group.measure::<f64>(),
                }
            })?;
            let group = measured
                .filter(|_| mpi.rank() == 0)
                .and_then(|measured| HybridGroup::pair(case, shape, measured));
            if let Some(group) = group {
                report(&group);
                groups.push(group);
            }
        }
    }
    let mut measured: Vec<Collective> = cases.iter().map(|case| case.collective).collect();
    measured.dedup();
    Ok(HybridPart {
        collectives: measured,
        shapes,
        rounds,
        groups,
    })
}

/// One row group, on the ranks of `comm`.
struct Group<'a> {
    mpi: &'a Mpi,
    comm: &'a SimpleCommunicator,
    case: Case,
    shape: (usize, usize),
    has_baseline: bool,
    schedule: Schedule,
    rounds: usize,
}

/// A team contender on this rank: its kind and its crew's dispatch (as a closure, so that two
/// crews of different lifetimes fit one array).
type TeamSide<'d> = (Contender, &'d mut dyn FnMut(Task) -> Result<Duration>);

impl Group<'_> {
    fn what(&self, contender: Contender) -> String {
        let (ranks, threads) = self.shape;
        let collective = self.case.collective;
        let size = self.case.size_label();
        match contender {
            Contender::Mpi => format!(
                "{} of {size} at {} ranks",
                collective.mpi_name(),
                ranks * threads
            ),
            Contender::Default => format!(
                "hybrid {} of {size} (default team) at {ranks} ranks x {threads} threads",
                collective.name()
            ),
            Contender::Unchecked => format!(
                "hybrid {} of {size} (unchecked team) at {ranks} ranks x {threads} threads",
                collective.name()
            ),
        }
    }

    /// Builds both teams on the first R ranks, starts their crews and runs the rounds; every
    /// rank of `comm` takes part.
    fn measure<T: Value>(&self) -> Result<Measured> {
        let (ranks, threads) = self.shape;
        let Some(team_comm) = first(self.comm, ranks) else {
            return self.rounds::<T>(None);
        };
        // What users get by default, and the same without the cross-process check. Built in
        // the same order on every rank: each build is collective.
        let default = HybridTeam::new(self.mpi, &team_comm, threads)?;
        let unchecked = HybridTeam::builder(self.mpi, &team_comm, threads)
            .unchecked()
            .build()?;
        let default_is_checked = default.is_checked();
        let what_default = self.what(Contender::Default);
        let what_unchecked = self.what(Contender::Unchecked);
        let mut measured = with_crew(self.workers::<T>(&default, &what_default), |on_default| {
            with_crew(
                self.workers::<T>(&unchecked, &what_unchecked),
                |on_unchecked| {
                    on_default.run(Task::Check)?;
                    on_unchecked.run(Task::Check)?;
                    self.rounds::<T>(Some((
                        &team_comm,
                        [
                            (Contender::Default, &mut |task| on_default.run(task)),
                            (Contender::Unchecked, &mut |task| on_unchecked.run(task)),
                        ],
                    )))
                },
            )
        })?;
        measured.default_is_checked = default_is_checked;
        Ok(measured)
    }

    /// One worker per member of `team` on this rank: each runs the case's call on its own
    /// buffers and checks every result.
    fn workers<'w, T: Value>(
        &self,
        team: &HybridTeam,
        what: &'w str,
    ) -> Vec<impl FnMut(Task) -> Result<()> + Send + 'w> {
        let collective = self.case.collective;
        let case = self.case;
        team.participants()
            .into_iter()
            .map(move |member| {
                let parties = member.parties();
                let index = member.rank();
                let mut call = Call::<T>::new(case, index, parties, Side::Hybrid);
                let mut handle: Option<HybridMember> = Some(member);
                move |task| {
                    let member = handle.as_mut().ok_or_else(|| {
                        BenchError::check(what, "an earlier error already ended this thread's part")
                    })?;
                    let mut once = || -> Result<()> {
                        call.clear();
                        calls::hybrid(member, collective, &mut call)?;
                        call.verify(what)
                    };
                    let result = match task {
                        // A barrier has no result to check: it must hold everyone until the
                        // last arrives, as every barrier row checks.
                        Task::Check if collective == Collective::Barrier => {
                            hold_back_each(what, index, parties, once)
                        }
                        Task::Check => once(),
                        Task::Run(n) => (0..n).try_for_each(|_| once()),
                    };
                    if result.is_err() {
                        // A dropped member breaks the team, so its siblings return instead of
                        // waiting.
                        handle = None;
                    }
                    result
                }
            })
            .collect()
    }

    /// The interleaved rounds, on every rank of `comm`; `teams` on the ranks that run them.
    fn rounds<T: Value>(
        &self,
        mut teams: Option<(&SimpleCommunicator, [TeamSide<'_>; 2])>,
    ) -> Result<Measured> {
        let contenders = Contender::of_group(self.has_baseline);
        let what_mpi = self.what(Contender::Mpi);
        let collective = self.case.collective;
        let mut mpi_call = Call::<T>::new(
            self.case,
            self.comm.rank() as usize,
            self.comm.size() as usize,
            Side::Mpi,
        );
        let mut mpi_batch = |n: u64| -> Result<Duration> {
            let start = Instant::now();
            for _ in 0..n {
                mpi_call.clear();
                calls::mpi(self.comm, collective, &mut mpi_call);
                mpi_call.verify(&what_mpi)?;
            }
            Ok(start.elapsed())
        };
        // Per contender, in `contenders` order: the calibrated count and each round's timing.
        let mut iterations: Vec<Option<u64>> = vec![None; contenders.len()];
        let mut timings: Vec<Vec<Timing>> = vec![Vec::new(); contenders.len()];
        for round in 0..self.rounds {
            let schedule = Schedule {
                sample: self.schedule.sample,
                samples: rounds::samples_in(round, self.rounds, self.schedule.samples),
            };
            for index in rounds::order(round, contenders.len()) {
                let timing = match contenders[index] {
                    Contender::Mpi => Some(measure_round(
                        self.comm,
                        schedule,
                        iterations[index],
                        &mut mpi_batch,
                    )?),
                    team => {
                        let timing = match teams.as_mut() {
                            Some((team_comm, sides)) => {
                                let (_, run) = sides
                                    .iter_mut()
                                    .find(|(kind, _)| *kind == team)
                                    .ok_or_else(|| {
                                        BenchError::check(self.what(team), "no crew for this team")
                                    })?;
                                Some(measure_round(
                                    team_comm,
                                    schedule,
                                    iterations[index],
                                    |n| run(Task::Run(n)),
                                )?)
                            }
                            None => None,
                        };
                        // The ranks beyond the teams' wait here, napping.
                        idle_until_all_arrive(self.comm);
                        timing
                    }
                };
                if let Some(timing) = timing {
                    iterations[index] = Some(timing.iterations_per_sample);
                    timings[index].push(timing);
                }
            }
        }
        let merged = |contender: Contender| {
            contenders
                .iter()
                .position(|&c| c == contender)
                .and_then(|index| RoundTiming::merge(&timings[index]))
        };
        Ok(Measured {
            mpi: merged(Contender::Mpi),
            default: merged(Contender::Default),
            unchecked: merged(Contender::Unchecked),
            default_is_checked: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_on_two_cores() {
        assert_eq!(shapes(2, 2), vec![(1, 2), (2, 1)]);
        assert_eq!(
            shapes(4, 2),
            vec![(1, 2), (1, 4), (2, 1), (2, 2), (3, 1), (4, 1)]
        );
        assert_eq!(shapes(1, 1), Vec::<(usize, usize)>::new());
    }

    #[test]
    fn each_shape_meets_mpi_over_as_many_ranks() {
        // np 2: 1x2 and 2x1 against 2 ranks.
        let at = |world| -> Vec<Option<usize>> {
            shapes(world, 2)
                .into_iter()
                .map(|shape| baseline_ranks(shape, world))
                .collect()
        };
        assert_eq!(at(2), [Some(2), Some(2)]);
        // np 4 on 2 cores: 1x2, 1x4, 2x1, 2x2, 3x1, 4x1.
        assert_eq!(
            at(4),
            [Some(2), Some(4), Some(2), Some(4), Some(3), Some(4)]
        );
        // A shape larger than the world has no baseline; its group runs on the teams' ranks.
        assert_eq!(baseline_ranks((1, 8), 2), None);
        assert_eq!(group_ranks((1, 8), 2), 1);
        assert_eq!(baseline_ranks((2, 4), 4), None);
        assert_eq!(group_ranks((2, 4), 4), 2);
        // With one, on the baseline's ranks, which include the teams'.
        assert_eq!(group_ranks((2, 2), 4), 4);
        for world in 1..9 {
            for cores in 1..9 {
                for shape in shapes(world, cores) {
                    assert!(group_ranks(shape, world) <= world);
                    assert!(group_ranks(shape, world) >= shape.0);
                }
            }
        }
    }
}
