//! What a sweep runs ([`Plan`]): which benchmark, the rows, the thread counts, how each row is
//! measured and split into rounds. `sweep` runs it; the report and the rounds read it.

use std::time::Duration;

use crate::contender::Contender;
use crate::ratios::Ratios;
use phasers_cli::harness::row::{Mode, RowPlan};

/// EPCC drops its first outer repetition: it pays for waking threads and warming caches.
pub const EPCC_DROPPED: usize = 1;

/// Which benchmark a sweep is, for its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Benchmark {
    /// The name in reports, as on the command line.
    pub name: &'static str,
    /// What one iteration of its rows costs, for the header of its report.
    pub measures: &'static str,
}

impl Benchmark {
    /// Every barrier algorithm against the baselines.
    pub const BARRIER: Benchmark = Benchmark {
        name: "bench barrier",
        measures: "the cost of one barrier episode",
    };
    /// Phasers over a grid of tiers and degrees.
    pub const TREE: Benchmark = Benchmark {
        name: "bench tree",
        measures: "the cost of one phaser phase, with and without a sum, by tiers and degree",
    };
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Which benchmark this is.
    pub benchmark: Benchmark,
    /// Thread counts, in the order to run them.
    pub threads: Vec<usize>,
    /// The rows of every table, in order.
    pub contenders: Vec<Contender>,
    /// Whether a row runs at a thread count (`bench tree` leaves out trees far too big for it).
    pub keep: fn(Contender, usize) -> bool,
    /// The ratios the report ends with.
    pub ratios: Ratios,
    /// How each row is measured, all rounds together: `round` splits it.
    pub row: RowPlan,
    /// `--rounds`: how many interleaved rounds each row's samples are split into.
    pub rounds: usize,
    /// EPCC mode: the delay before each barrier.
    pub delay: Option<Duration>,
    /// The time each test aims to take.
    pub time_per_test: Duration,
    /// Whether to print each table as it completes (`phasers tune` prints its own).
    pub print_tables: bool,
    /// The command line, recorded in the report.
    pub command_line: Vec<String>,
}

impl Plan {
    /// Timed samples dropped from the front of each row.
    pub fn dropped(&self) -> usize {
        match self.row.mode {
            Mode::Epcc => EPCC_DROPPED,
            Mode::BackToBack => 0,
        }
    }

    /// Rounds per row: as asked, but at least one and no more than the samples kept, so that every
    /// round keeps at least one sample.
    pub fn rounds(&self) -> usize {
        let kept = self.row.schedule.samples - self.dropped();
        self.rounds.clamp(1, kept.max(1))
    }

    /// How round `index` of each row is measured: its share of the kept samples (the first rounds
    /// take one more when they do not divide evenly), its own warm-up samples to drop, and its
    /// share of the time and the budget, so a row still takes about `time_per_test` in all.
    pub fn round(&self, index: usize) -> RowPlan {
        let rounds = self.rounds();
        let kept = self.row.schedule.samples - self.dropped();
        let samples = kept / rounds + usize::from(index < kept % rounds) + self.dropped();
        let mut plan = self.row;
        plan.schedule.samples = samples;
        plan.schedule.target_sample = self.time_per_test / (rounds * samples) as u32;
        plan.schedule.row_budget = self.row.schedule.row_budget / rounds as u32;
        plan
    }

    /// The rows of the table of `threads` threads.
    pub fn contenders_at(&self, threads: usize) -> Vec<Contender> {
        self.contenders
            .iter()
            .copied()
            .filter(|&contender| (self.keep)(contender, threads))
            .collect()
    }

    /// The tests run at `threads` threads: the floor, the rows and the reference loops they need,
    /// in every round.
    pub(crate) fn tests_at(&self, threads: usize) -> usize {
        let contenders = self.contenders_at(threads);
        let epcc = self.row.mode == Mode::Epcc;
        self.rounds()
            * (1 + contenders.len()
                + usize::from(epcc)
                + usize::from(needs_openmp_reference(self.row.mode, &contenders)))
    }
}

/// Every row runs at every thread count.
pub fn keep_all(_: Contender, _: usize) -> bool {
    true
}

/// Whether the rows need OpenMP's own reference loop subtracted (EPCC mode with an OpenMP row).
pub fn needs_openmp_reference(mode: Mode, contenders: &[Contender]) -> bool {
    mode == Mode::Epcc && contenders.iter().any(|c| c.runs_on_openmp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers_cli::harness::schedule::Schedule;

    fn plan(mode: Mode, kept: usize, rounds: usize) -> Plan {
        let dropped = usize::from(mode == Mode::Epcc);
        Plan {
            benchmark: Benchmark::BARRIER,
            threads: vec![2],
            contenders: vec![Contender::Std],
            keep: keep_all,
            ratios: Ratios::Barrier,
            row: RowPlan {
                mode,
                schedule: Schedule {
                    episodes: None,
                    samples: kept + dropped,
                    target_sample: Duration::from_millis(50),
                    row_budget: Duration::from_secs(4),
                },
                hang_after: Duration::from_secs(60),
                pin: false,
                delay: 0,
            },
            rounds,
            delay: None,
            time_per_test: Duration::from_secs(1),
            print_tables: false,
            command_line: Vec::new(),
        }
    }

    #[test]
    fn samples_split_into_rounds_each_with_its_warm_up() {
        let plan = plan(Mode::Epcc, 20, 5);
        assert_eq!(plan.rounds(), 5);
        let round = plan.round(0);
        // 4 kept and 1 dropped per round, a fifth of the time and of the budget.
        assert_eq!(round.schedule.samples, 5);
        assert_eq!(round.schedule.target_sample, Duration::from_millis(40));
        assert_eq!(round.schedule.row_budget, Duration::from_millis(800));
        // Std, the floor and the reference loop, in every round.
        assert_eq!(plan.tests_at(2), 5 * 3);
    }

    #[test]
    fn uneven_samples_go_to_the_first_rounds() {
        let plan = plan(Mode::BackToBack, 7, 3);
        let samples: Vec<usize> = (0..3).map(|i| plan.round(i).schedule.samples).collect();
        assert_eq!(samples, [3, 2, 2]);
    }

    #[test]
    fn every_round_keeps_a_sample() {
        assert_eq!(plan(Mode::BackToBack, 3, 5).rounds(), 3);
        assert_eq!(plan(Mode::Epcc, 3, 0).rounds(), 1);
        let one = plan(Mode::Epcc, 1, 5);
        assert_eq!(one.rounds(), 1);
        assert_eq!(one.round(0).schedule.samples, 2);
    }
}
