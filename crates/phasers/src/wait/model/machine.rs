//! The simulated machine: its costs, its cores and threads, the work between barriers and the
//! other processes that take a core now and then.
//!
//! Every time is in whole nanoseconds ([`Nanos`]): the smallest cost modelled, a pause, is tens
//! of them, and integers keep the event order exact and the runs reproducible.

use std::time::Duration;

use super::rng::Stream;
use crate::tune::{Floors, FloorsSource};
use crate::wait::plan::PlanInputs;
use crate::wait::WaitPolicy;

/// Simulated time, in nanoseconds since the run began.
pub(crate) type Nanos = u64;

/// A microsecond in [`Nanos`], for writing costs legibly.
pub(crate) const MICROSECOND: Nanos = 1_000;

/// A machine and the program it runs: `threads` participants of one barrier on `cores` cores.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Machine {
    /// What the reports call it ("Xeon VM", "EPYC VM").
    pub(crate) name: &'static str,
    pub(crate) cores: usize,
    /// The barrier's parties, one thread each; thread `i` runs on core `i % cores` (no migration).
    pub(crate) threads: usize,
    /// *R*: a cache line from one core to another and back. An arrival on the barrier's line
    /// costs half of it (the line comes over once), and a waiter sees the release half of it
    /// after the releaser wrote it.
    pub(crate) round_trip: Nanos,
    /// *Y*: a core passed from one thread to another. Every switch between two threads on a core
    /// costs this (a yield that hands over, a park, a preemption, the end of a time slice).
    pub(crate) yield_handoff: Nanos,
    /// *W*: from a futex wake to the sleeper running on an idle core, the first wake of a call
    /// included.
    pub(crate) wake: Nanos,
    /// *c*: what each sleeper of one wake call costs the waker, one after another (an
    /// inter-processor interrupt, through the hypervisor on a VM). The `j`-th sleeper of a call
    /// made at `t` runs at `t + j c + (W - c)`.
    pub(crate) wake_call: Nanos,
    /// A system call that returns at once: a `sched_yield` with nothing else to run on the core,
    /// a futex wake that finds nobody asleep. Must stay below half a hand-off, or the waiter would
    /// take every lone yield for a hand-off (see `SpinPlan::handoff`).
    pub(crate) syscall: Nanos,
    /// One spin round: a load and one `spin_loop` pause.
    pub(crate) pause: Nanos,
    /// How long a thread runs before the scheduler gives its core to another runnable thread.
    pub(crate) time_slice: Nanos,
    /// The work of every thread between two barriers.
    pub(crate) work: Nanos,
    /// Each thread's work is longer by a uniform draw from `0..work_jitter`, every episode.
    pub(crate) work_jitter: Nanos,
    pub(crate) preemption: Preemption,
    /// Seeds every draw; the same seed gives the same work and preemptions whatever the rule.
    pub(crate) seed: u64,
}

/// Threads of other processes that take a core for a while: what triggers a slow episode.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Preemption {
    /// The chance that, in a given episode, one of the barrier's threads (any of them, equally
    /// likely) has its core taken. Per episode rather than per thread, so that the disturbance is
    /// the same at 16 and 256 threads and the rules are compared on equal terms.
    pub(crate) chance_per_episode: f64,
    /// The other thread wakes on the core at a uniform moment within this long after the
    /// victim starts its episode: during its work, its arrival or its wait.
    pub(crate) window: Nanos,
    /// It then runs for a uniform time between these two, and the victim waits for the core.
    pub(crate) shortest: Nanos,
    pub(crate) longest: Nanos,
}

/// A preemption drawn for one episode: which thread, when after its episode starts, how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Intrusion {
    pub(crate) thread: usize,
    pub(crate) after: Nanos,
    pub(crate) runs_for: Nanos,
}

/// The draws of a run are keyed streams (see [`Stream::keyed`]): these tell them apart.
const WORK_STREAM: u64 = 1;
const PREEMPTION_STREAM: u64 = 2;

/// EPCC's `syncbench` delay between barriers, 0.1 µs, the work of the episodes measured in
/// issue 30.
const EPCC_WORK: Nanos = 100;
/// Up to this much more work per thread and episode: enough that arrivals come in a different
/// order every episode, far less than any cost of waiting.
const WORK_JITTER: Nanos = 100;
/// Other processes take one of the barrier's cores in about one episode in 50: rare enough that
/// a rule which recovers at once keeps its median, common enough that every run of a few
/// hundred episodes has several.
const PREEMPTION_CHANCE: f64 = 0.02;
/// A preemption falls within 20 µs of its victim's episode start: from the work to well into a
/// long wait.
const PREEMPTION_WINDOW: Nanos = 20 * MICROSECOND;
/// A preempting thread runs from 50 µs (a short burst of another process) to 1 ms (a time
/// slice of a busy one).
const PREEMPTION_SHORTEST: Nanos = 50 * MICROSECOND;
const PREEMPTION_LONGEST: Nanos = 1_000 * MICROSECOND;
/// Linux gives a thread 0.75 ms to 3 ms before another runnable thread gets its core, depending
/// on the core count; 1 ms stands for it.
const TIME_SLICE: Nanos = 1_000 * MICROSECOND;
/// A system call that finds nothing to do, on either VM: a few hundred ns with the mitigations
/// of a guest kernel.
const SYSCALL: Nanos = 200;
/// The seed of the runs the tests print (issue 30's number). Seeds 1, 2, 3, 7 and 11 gave the
/// same conclusions, with medians within 1% and parked shares within a few points.
const SEED: u64 = 30;

impl Machine {
    /// A VM on Xeon cores like the 16-core one of issue 30: fast wakes but a slow cache line and
    /// a dear wake call per sleeper.
    pub(crate) fn xeon_vm(cores: usize, threads: usize) -> Machine {
        Machine {
            name: "Xeon VM",
            cores,
            threads,
            // The 16-core Xeon VM measured 134-164 ns (BENCHMARKS.md), the 2-core one ~190 ns.
            round_trip: 150,
            // Both Xeon VMs measured ~1 µs.
            yield_handoff: MICROSECOND,
            // The 16-core Xeon VM measured 5.8 µs.
            wake: 6 * MICROSECOND,
            // Not measured by the library: 1 µs per sleeper (an interrupt through the
            // hypervisor) makes the model's old-rule episodes at 16 threads 19 µs, against the
            // 17.5 µs measured.
            wake_call: MICROSECOND,
            syscall: SYSCALL,
            // Skylake-SP's `pause` takes about 140 cycles, 30 to 40 ns; 30 as in plan.rs's tests.
            pause: 30,
            time_slice: TIME_SLICE,
            work: EPCC_WORK,
            work_jitter: WORK_JITTER,
            preemption: Preemption::occasional(),
            seed: SEED,
        }
    }

    /// A VM on EPYC cores like the 2-core one of BENCHMARKS.md: a fast cache line but slow
    /// wakes.
    pub(crate) fn epyc_vm(cores: usize, threads: usize) -> Machine {
        Machine {
            name: "EPYC VM",
            cores,
            threads,
            // The 2-core EPYC VM measured 55-65 ns in its fast state.
            round_trip: 60,
            // Measured 1.1-1.9 µs; the low end, which gives the most yields.
            yield_handoff: 1_100,
            // Measured 15-22 µs (and sometimes a 4 ms timer tick, not modelled).
            wake: 22 * MICROSECOND,
            // A guess: twice the Xeon VM's, as every wake on this VM is slower. The fanout test
            // sweeps the ratio to the wake instead of trusting it.
            wake_call: 2 * MICROSECOND,
            syscall: SYSCALL,
            // The 2-core EPYC VM's `pause` (BENCHMARKS.md), the low end of waiter.rs's 24-40 ns.
            pause: 24,
            time_slice: TIME_SLICE,
            work: EPCC_WORK,
            work_jitter: WORK_JITTER,
            preemption: Preemption::occasional(),
            seed: SEED,
        }
    }

    /// The floors the library would measure on this machine.
    pub(crate) fn floors(&self) -> Floors {
        Floors::from_parts(
            Duration::from_nanos(self.round_trip),
            Duration::from_nanos(self.yield_handoff),
            Duration::from_nanos(self.wake),
            FloorsSource::Fixed,
        )
    }

    /// What `SpinPlan::derive` reads on this machine, for the `Auto` policy.
    pub(crate) fn plan_inputs(&self) -> PlanInputs {
        PlanInputs {
            policy: WaitPolicy::Auto,
            floors: self.floors(),
            participants: self.threads,
            cores: self.cores,
            pause: Duration::from_nanos(self.pause),
            spin_override: None,
            wake_override: None,
        }
    }

    /// The work of `thread` in `episode`.
    pub(crate) fn work_of(&self, thread: usize, episode: u64) -> Nanos {
        let mut draws = Stream::keyed(self.seed, &[WORK_STREAM, thread as u64, episode]);
        self.work + draws.below(self.work_jitter.max(1))
    }

    /// The preemption of `episode`, if it has one.
    pub(crate) fn intrusion_in(&self, episode: u64) -> Option<Intrusion> {
        let mut draws = Stream::keyed(self.seed, &[PREEMPTION_STREAM, episode]);
        let preemption = self.preemption;
        if draws.unit() >= preemption.chance_per_episode {
            return None;
        }
        Some(Intrusion {
            thread: draws.below(self.threads as u64) as usize,
            after: draws.below(preemption.window.max(1)),
            runs_for: preemption.shortest
                + draws.below((preemption.longest - preemption.shortest).max(1)),
        })
    }

    /// A short description for reports: "Xeon VM, 16 threads on 16 cores".
    pub(crate) fn describe(&self) -> String {
        format!(
            "{}, {} threads on {} cores",
            self.name, self.threads, self.cores
        )
    }
}

impl Preemption {
    /// Now and then, as on a machine shared with a few other processes (see the constants).
    pub(crate) fn occasional() -> Preemption {
        Preemption {
            chance_per_episode: PREEMPTION_CHANCE,
            window: PREEMPTION_WINDOW,
            shortest: PREEMPTION_SHORTEST,
            longest: PREEMPTION_LONGEST,
        }
    }
}
