//! What a run measured: episode times over the steady state, and how the waits ended.

use std::fmt;

use super::machine::{Nanos, MICROSECOND};
use crate::wait::plan::SpinPlan;

/// One run's results.
#[derive(Debug, Clone)]
pub(crate) struct Report {
    pub(crate) machine: String,
    pub(crate) rule: String,
    pub(crate) plan: SpinPlan,
    /// The time between consecutive releases, over the steady state (the second half of the
    /// episodes: the first half lets the budgets settle from where they start).
    pub(crate) median: Nanos,
    pub(crate) mean: Nanos,
    /// The share of the steady state's waits that went to sleep in the kernel.
    pub(crate) parked: f64,
    /// The share of the steady state's waits that ended while spinning.
    pub(crate) caught_spinning: f64,
    /// The share of the steady state's waits in which a yield handed the core to another
    /// thread (`Ended::AfterHandingOff`).
    pub(crate) handed_off: f64,
    /// The preemptions over the whole run.
    pub(crate) preemptions: u64,
}

/// The steady state's counts, gathered while the run goes.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tally {
    pub(crate) waits: u64,
    pub(crate) parked: u64,
    pub(crate) caught_spinning: u64,
    pub(crate) handed_off: u64,
    pub(crate) preemptions: u64,
}

impl Report {
    /// The report of a run whose releases were `releases`, steady from episode `steady_from`.
    pub(crate) fn new(
        machine: String,
        rule: String,
        plan: SpinPlan,
        releases: &[Nanos],
        steady_from: usize,
        tally: Tally,
    ) -> Report {
        let mut episodes: Vec<Nanos> = releases[steady_from.max(1)..]
            .iter()
            .zip(&releases[steady_from.max(1) - 1..])
            .map(|(release, previous)| release - previous)
            .collect();
        episodes.sort_unstable();
        let share = |count: u64| count as f64 / tally.waits.max(1) as f64;
        Report {
            machine,
            rule,
            plan,
            median: episodes[episodes.len() / 2],
            mean: episodes.iter().sum::<Nanos>() / episodes.len() as Nanos,
            parked: share(tally.parked),
            caught_spinning: share(tally.caught_spinning),
            handed_off: share(tally.handed_off),
            preemptions: tally.preemptions,
        }
    }

    /// The median in µs, for printing.
    pub(crate) fn median_us(&self) -> f64 {
        self.median as f64 / MICROSECOND as f64
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<34} {:<20} median {:>8.2} µs  mean {:>8.2} µs  parked {:>5.1}%  \
             caught spinning {:>5.1}%  handed off {:>5.1}%  spin {} rounds  ({} preemptions)",
            self.machine,
            self.rule,
            self.median_us(),
            self.mean as f64 / MICROSECOND as f64,
            self.parked * 100.0,
            self.caught_spinning * 100.0,
            self.handed_off * 100.0,
            self.plan.spins,
            self.preemptions,
        )
    }
}
