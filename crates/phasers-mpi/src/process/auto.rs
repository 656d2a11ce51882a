//! `ProcessAlgorithm::Auto`: at build time, every candidate runs a few short batches of episodes
//! on the real communicator, the ranks agree on each batch's time (the slowest rank's, by
//! `MPI_Allreduce` max), and the fastest candidate wins. Every rank computes the choice from the
//! same reduced numbers, so all ranks choose alike. docs/mpi-auto-model.md gives the model the
//! measurement stands for and how it projects to many nodes.

use std::time::{Duration, Instant};

use mpi::collective::SystemOperation;
use mpi::traits::CommunicatorCollectives;

use crate::channel::Channel;
use crate::progress::{poll_until, WaitFor};
use crate::threading::mpi_call;

use super::algorithm::ProcessAlgorithm;
use super::step::{describe_ranks, ProcessStep};
use crate::error::Result;

/// What Auto measures, in this order (ties go to the first).
pub(crate) const CANDIDATES: [ProcessAlgorithm; 4] = [
    ProcessAlgorithm::NodeShm,
    ProcessAlgorithm::Dissemination,
    ProcessAlgorithm::McsTree,
    ProcessAlgorithm::Library,
];

/// A batch is long enough once the slowest rank took this long. The slowest candidate in
/// BENCHMARKS.md ("Across processes": MCS tree, 6.3 us an episode at 4 ranks on 2 cores) still
/// runs about 80 episodes in it, the fastest (node-shm, about 0.2 us at 2 ranks in the runs of
/// docs/mpi-auto-model.md) about 2500, and four candidates times (about 1 ms of calibration plus
/// `BATCHES` batches) cost 10 to 20 ms of build time (the MPI suite's Auto case: 20 ms).
const BATCH: Duration = Duration::from_micros(500);
/// Timed batches per candidate after calibration; the fastest counts, because a batch on a
/// shared machine is only ever slowed down by others, never sped up.
const BATCHES: usize = 3;
/// Episodes of the first calibration batch (doubles as warm-up: the first episodes touch the
/// shared pages and MPI's connection state).
const FIRST_EPISODES: u64 = 8;
/// Calibration stops growing batches here even if they stay short (a barrier faster than 4 ns
/// an episode does not exist; this only bounds the loop).
const MOST_EPISODES: u64 = 1 << 17;

/// One candidate ready to run: its step and the channel it runs on.
pub(crate) struct Candidate {
    /// Declared before the channel, so its posted receives are freed first.
    pub(crate) step: Box<dyn ProcessStep>,
    pub(crate) channel: Channel,
}

/// What a build resolved: the algorithm that runs, Auto's measurements, and the step ready to run.
pub(crate) struct Choice {
    pub(crate) chosen: ProcessAlgorithm,
    pub(crate) calibration: Vec<(ProcessAlgorithm, Duration)>,
    pub(crate) candidate: Candidate,
}

/// Measures every candidate on `channel`'s ranks and keeps the fastest. Collective; every rank
/// chooses alike. With one rank there is nothing to wait for, and dissemination (no rounds)
/// makes no MPI call at all, so it is taken without measuring.
pub(crate) fn choose(
    channel: Channel,
    ranks_per_node: Option<usize>,
    oversubscribed: bool,
) -> Result<Choice> {
    if channel.size() == 1 {
        let step = ProcessAlgorithm::Dissemination.step(&channel, None)?;
        return Ok(Choice {
            chosen: ProcessAlgorithm::Dissemination,
            calibration: Vec::new(),
            candidate: Candidate { step, channel },
        });
    }
    let mut measured = Vec::new();
    let mut kept: Vec<Candidate> = Vec::new();
    for algorithm in CANDIDATES {
        // Each candidate on its own duplicate, so one's tags never meet another's posted
        // receives. A candidate that cannot be built (shared memory refused) fails on every rank
        // alike, and is left out.
        let own = Channel::duplicate(channel.comm());
        let Ok(step) = algorithm.step(&own, ranks_per_node) else {
            continue;
        };
        let mut candidate = Candidate { step, channel: own };
        let seconds = measure(algorithm, &mut candidate, oversubscribed);
        measured.push((algorithm, seconds));
        kept.push(candidate);
    }
    let times: Vec<f64> = measured.iter().map(|&(_, t)| t).collect();
    let best = fastest(&times);
    let chosen = measured[best].0;
    let candidate = kept.swap_remove(best);
    // The losers' receives are cancelled and their channels freed here.
    drop(kept);
    drop(channel);
    Ok(Choice {
        chosen,
        calibration: measured
            .into_iter()
            .map(|(a, t)| (a, Duration::from_secs_f64(t)))
            .collect(),
        candidate,
    })
}

/// The seconds per episode of `candidate` on its ranks (the slowest rank's, the fastest of
/// [`BATCHES`] batches). Collective over the candidate's channel; every rank gets the same value.
pub(crate) fn measure(
    algorithm: ProcessAlgorithm,
    candidate: &mut Candidate,
    oversubscribed: bool,
) -> f64 {
    let mut episodes = FIRST_EPISODES;
    let mut first = 0u64;
    let mut batch = |episodes: u64, first: &mut u64| -> f64 {
        let took = run(algorithm, candidate, oversubscribed, episodes, *first);
        *first += episodes;
        slowest(&candidate.channel, took.as_secs_f64())
    };
    let mut seconds = batch(episodes, &mut first);
    while seconds < BATCH.as_secs_f64() && episodes < MOST_EPISODES {
        episodes = (episodes * 2).min(MOST_EPISODES);
        seconds = batch(episodes, &mut first);
    }
    let mut best = seconds / episodes as f64;
    for _ in 0..BATCHES {
        best = best.min(batch(episodes, &mut first) / episodes as f64);
    }
    best
}

/// The index of the smallest time; the first on ties. `times` is the same on every rank.
pub(crate) fn fastest(times: &[f64]) -> usize {
    let mut best = 0;
    for (i, &t) in times.iter().enumerate() {
        if t < times[best] {
            best = i;
        }
    }
    best
}

/// Runs `episodes` episodes as a wait would (poll, yield, sleep, stall warning); returns this
/// rank's time.
fn run(
    algorithm: ProcessAlgorithm,
    candidate: &mut Candidate,
    oversubscribed: bool,
    episodes: u64,
    first: u64,
) -> Duration {
    let Candidate { step, channel } = candidate;
    let start = Instant::now();
    for episode in first..first + episodes {
        let step = std::cell::RefCell::new(&mut *step);
        let missing = || {
            format!(
                "{} (measuring {} for auto)",
                describe_ranks(&step.borrow().waiting_for(channel)),
                algorithm.name()
            )
        };
        let wait = WaitFor {
            what: ProcessAlgorithm::Auto.name(),
            episode,
            rank: channel.rank(),
            oversubscribed,
            missing: &missing,
        };
        poll_until(&wait, None, || step.borrow_mut().advance(channel));
    }
    start.elapsed()
}

/// The largest of every rank's `seconds`.
fn slowest(channel: &Channel, seconds: f64) -> f64 {
    let mut max = 0.0f64;
    let _call = mpi_call();
    channel
        .comm()
        .all_reduce_into(&seconds, &mut max, SystemOperation::max());
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fastest_takes_the_first_of_equals() {
        assert_eq!(fastest(&[3.0, 1.0, 2.0, 1.0]), 1);
        assert_eq!(fastest(&[1.0, 1.0]), 0);
        assert_eq!(fastest(&[5.0]), 0);
    }

    #[test]
    fn candidates_are_concrete_and_distinct() {
        for (i, a) in CANDIDATES.iter().enumerate() {
            assert_ne!(*a, ProcessAlgorithm::Auto);
            assert!(!CANDIDATES[..i].contains(a));
        }
    }
}
