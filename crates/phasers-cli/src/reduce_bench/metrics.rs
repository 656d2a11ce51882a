//! The seed's two metrics, per iteration, from a row's stamps:
//!
//! - **last arrival to completion**: from the moment the last participant called until the result
//!   was ready: for `reduce`, when the root's call returned; for `allreduce`, when the last
//!   participant's did. What the application waits for once everyone has arrived;
//! - **total time in the reduction**: each participant's return minus its own arrival, summed over
//!   the participants. What the reduction costs the application in thread time, waiting included,
//!   which is where a quick return or an algorithm that works while others are still stalling
//!   shows.
//!
//! Also the **arrival window** (last arrival minus first), which shows the spread actually
//! injected, scheduling included, and the time from the **first arrival to completion**, the
//! reduction's whole wall time, which the bandwidth is computed from: from the last arrival, a
//! reduction whose early arrivals had already combined their data would seem to move all the bytes
//! in the time of the last step.

use serde::{Deserialize, Serialize};

use phasers_cli::harness::stats::{self, Summary};

use phasers_cli::harness::engine::Timeline;

/// Whose return completes an iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// The root's (rank given): `reduce`, whose result only the root receives.
    Root(usize),
    /// The last participant's: `allreduce`, and the bandwidth floor.
    Last,
}

/// Which metric the plots, the `÷omp` column and the OpenMP ratios use (both are always measured
/// and written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Time from the last arrival to completion.
    LastArrival,
    /// Time in the reduction summed over participants.
    Total,
}

impl Metric {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Metric::LastArrival => "last-arrival",
            Metric::Total => "total",
        }
    }

    /// What it measures, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Metric::LastArrival => "time from the last arrival to completion",
            Metric::Total => "time in the reduction summed over participants",
        }
    }
}

/// Each metric summarized over the measured iterations, in nanoseconds, as reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summaries {
    /// Last arrival to completion.
    pub last_arrival_to_completion_ns: Option<Summary>,
    /// Total time in the reduction, summed over participants.
    pub total_in_reduction_ns: Option<Summary>,
    /// Last arrival minus first arrival.
    pub arrival_window_ns: Option<Summary>,
    /// First arrival to completion: the time of a reduction's bandwidth.
    pub first_arrival_to_completion_ns: Option<Summary>,
    /// The longest participant's own time: the time of the bandwidth floor's bandwidth.
    pub longest_call_ns: Option<Summary>,
}

impl Summaries {
    /// The summary of `metric`.
    pub fn of(&self, metric: Metric) -> Option<Summary> {
        match metric {
            Metric::LastArrival => self.last_arrival_to_completion_ns,
            Metric::Total => self.total_in_reduction_ns,
        }
    }
}

impl Summaries {
    /// The metrics of every iteration of `timeline` after the first `skip` (the warm-up).
    pub fn of_timeline(timeline: &Timeline, completion: Completion, skip: usize) -> Self {
        // Per iteration, in the order of the fields.
        let mut samples: [Vec<f64>; 5] = Default::default();
        let threads = timeline.threads.max(1);
        let stamps = timeline
            .arrive_ns
            .chunks(threads)
            .zip(timeline.return_ns.chunks(threads));
        for (arrive, ret) in stamps.skip(skip) {
            let (Some(&first), Some(&last)) = (arrive.iter().min(), arrive.iter().max()) else {
                continue;
            };
            let done = match completion {
                Completion::Root(rank) => ret[rank.min(ret.len() - 1)],
                Completion::Last => ret.iter().copied().max().unwrap_or(last),
            };
            let calls = ret
                .iter()
                .zip(arrive)
                .map(|(&ret, &arrive)| ret as f64 - arrive as f64);
            // Signed: a negative time would be a bug worth seeing, not one to clamp away.
            let iteration = [
                done as f64 - last as f64,
                calls.clone().sum(),
                last as f64 - first as f64,
                done as f64 - first as f64,
                calls.fold(0.0, f64::max),
            ];
            for (samples, value) in samples.iter_mut().zip(iteration) {
                samples.push(value);
            }
        }
        let [last, total, window, first, longest] = samples.map(|s| stats::summarize(&s));
        Summaries {
            last_arrival_to_completion_ns: last,
            total_in_reduction_ns: total,
            arrival_window_ns: window,
            first_arrival_to_completion_ns: first,
            longest_call_ns: longest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two iterations of three participants.
    fn timeline() -> Timeline {
        Timeline {
            threads: 3,
            iterations: 2,
            // Iteration 0 (warm-up): arrivals 0, 5, 10. Iteration 1: 100, 130, 120.
            arrive_ns: vec![0, 5, 10, 100, 130, 120],
            // Iteration 1: rank 0 (root) returns at 170, rank 1 at 150, rank 2 at 125.
            return_ns: vec![50, 20, 30, 170, 150, 125],
            chose: Vec::new(),
        }
    }

    /// The one value of a summary (`min`, `median` and `max` alike with one iteration).
    fn only(summary: Option<Summary>) -> f64 {
        let summary = summary.unwrap();
        assert_eq!(summary.count, 1);
        summary.min
    }

    #[test]
    fn reduce_completes_when_the_root_returns() {
        let summaries = Summaries::of_timeline(&timeline(), Completion::Root(0), 1);
        assert_eq!(only(summaries.last_arrival_to_completion_ns), 40.0);
        // (170 - 100) + (150 - 130) + (125 - 120)
        assert_eq!(only(summaries.total_in_reduction_ns), 95.0);
        assert_eq!(only(summaries.arrival_window_ns), 30.0);
        assert_eq!(only(summaries.first_arrival_to_completion_ns), 70.0);
        assert_eq!(only(summaries.longest_call_ns), 70.0);
        // Another root: rank 2 returned before the last arrival, and the sign shows it.
        let early = Summaries::of_timeline(&timeline(), Completion::Root(2), 1);
        assert_eq!(only(early.last_arrival_to_completion_ns), -5.0);
    }

    #[test]
    fn allreduce_completes_when_the_last_returns() {
        let summaries = Summaries::of_timeline(&timeline(), Completion::Last, 0);
        // Iteration 0: last arrival 10, last return 50; iteration 1: 130 and 170.
        let last = summaries.of(Metric::LastArrival).unwrap();
        assert_eq!((last.count, last.min, last.median), (2, 40.0, 40.0));
        // Iteration 0: (50 - 0) + (20 - 5) + (30 - 10); iteration 1: 95.
        let total = summaries.of(Metric::Total).unwrap();
        assert_eq!((total.min, total.median), (85.0, 90.0));
        assert_eq!(summaries.arrival_window_ns.unwrap().min, 10.0);
    }
}
