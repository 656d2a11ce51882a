//! A discrete-event model of a machine that runs the real wait policy: how its rules behave on
//! 16 to 256 cores, slow wakes and busy neighbours, machines this project does not have.
//!
//! # What it is
//!
//! A simulated machine of `C` cores runs `T` threads, the parties of one central counting
//! barrier (`barrier/counting.rs`), for a few hundred to a few thousand episodes. Each thread
//! works, arrives, and waits for the release the way `waiter.rs` waits: spin, yield, park. Every
//! decision comes from the library's own code, not a copy: the plan from
//! [`SpinPlan::derive`](crate::wait::plan::SpinPlan::derive) with the machine's floors, cores and
//! pause, the spin rounds from [`SpinBudget::rounds`](crate::wait::SpinBudget::rounds), the yields
//! from `take_yields`, and the end of every wait goes to `SpinBudget::record`, classified as
//! `waiter.rs` classifies it. Releases wake sleepers as the plan's `WakeFanout` says. So a
//! change to `plan.rs` or `budget.rs` changes what the model shows, and its tests say whether the
//! change still keeps issue 30's lock-in away.
//!
//! Beside the current rule it runs the rule before issue 30 (`legacy.rs`, frozen, only to show
//! the lock-in it had) and a **spinning reference**: the same barrier with waiters that spin
//! until released, never yield, never park, which is the best a wait policy can do when every
//! thread has a core.
//!
//! # What is modelled
//!
//! | part | how | file |
//! |---|---|---|
//! | the barrier | arrivals serialized on the counter's cache line, *R*/2 each; the last arrival releases; waiters see it *R*/2 later; sleepers queue on the counter's futex word in the order they parked | `barrier.rs` |
//! | spinning | computed, not stepped: a waiter sees the release at its first poll (one pause each) after the release reached it, if its rounds last that long | `simulation.rs` |
//! | yielding | with nobody else runnable on the core, a system call, then a check; with someone runnable, a hand-off (*Y*) to the next thread of the core's queue, and the yield lasts until the core comes back | `simulation.rs` |
//! | parking and waking | a wake call costs the waker *c* per sleeper, one after another; it reaches the `j`-th at `t + j c`; an idle core runs it `W - c` later, a busy core queues it at once. By tree, every woken sleeper first wakes up to *f* of those set aside | `release.rs` |
//! | cores | one run queue per core, first in first out, no migration; thread `i` on core `i % C`; a switch between threads costs *Y*; a thread that works or spins with others queued loses the core after a time slice | `cores.rs`, `simulation/scheduling.rs` |
//! | other processes | in about one episode in 50 a thread of another process takes one of the cores for 50 µs to 1 ms, at a random moment of its victim's episode | `machine.rs` |
//! | work | EPCC's 0.1 µs between barriers, plus up to 0.1 µs of jitter per thread and episode | `machine.rs` |
//!
//! Every draw (work, preemptions) comes from a stream keyed by what it is for (`rng.rs`), so
//! runs are reproducible and two rules on one machine meet exactly the same disturbances: the
//! rule is the only difference between their runs.
//!
//! # What is not
//!
//! - **The cache beyond one line.** Arrivals do not slow down while many waiters poll the same
//!   line (they do on real machines: each arrival invalidates every poller's copy). That favours
//!   the rules that park, so it cannot make spinning look better than it is.
//! - **The scheduler's cleverness.** No migration, no load balancing, no wake-up preemption of
//!   one of our threads by another. A woken thread on an idle core pays *W*; the kernel might
//!   have put it elsewhere.
//! - **Timeouts, broken objects, stall reports**, and the check of the broken state every
//!   thousand spin rounds: they cost nothing here.
//! - **Other algorithms.** Only the central counting barrier, whose one word every waiter sleeps
//!   on, is the case where the release's wake-ups are on one critical path.
//!
//! The model has been checked against two real measurements (`docs/machine-model.md`): the
//! 16-core Xeon VM of issue 30 (the old rule's 17.5 µs episodes against a spinning barrier's
//! 1.38 µs; the model gives 19.2 µs and 1.35 µs), and the 2-core EPYC VM oversubscribed (4 to 64
//! threads; the model is 1.2x to 1.7x faster than measured, in the same order).
//!
//! # Parameters
//!
//! A [`Machine`] holds them; `Machine::xeon_vm(cores, threads)` and `Machine::epyc_vm(cores,
//! threads)` give the two VMs' costs. The floors are those the library measures: *R* (cache-line
//! round trip), *Y* (yield hand-off), *W* (wake latency on an idle core); beside them *c* (a wake
//! call's serial cost per sleeper), a system call that returns at once (a lone yield, a wake
//! that finds nobody), the pause, the time slice, the work and its jitter, and the preemptions.
//! A [`Rule`] is what the waiters follow: `Current`, `CurrentWithMargin(m)` (the current rule
//! spinning `m` releases from sleep instead of 2, through the `PHASERS_SPIN` override),
//! `CurrentWithWake(f)` (through `PHASERS_WAKE`), `Legacy` or `SpinUntilReleased`.
//!
//! # Running it
//!
//! `cargo test -p phasers --lib wait::model` runs the tests in a few seconds; add
//! `-- --nocapture` for their tables. A run of your own, in a test:
//!
//! ```ignore
//! let report = simulate(&Machine::epyc_vm(64, 64), Rule::Current, 800);
//! println!("{report}");
//! ```
//!
//! # Reading a report
//!
//! A [`Report`] covers the steady state, the second half of the episodes (the first lets the
//! budgets settle from where they start): the **median** episode (release to release), which a
//! rule that recovers at once keeps at the reference's; the **mean**, which every preemption
//! raises by its length whatever the rule; the share of waits that **parked**, ended while
//! still **spinning**, or saw a yield **hand the core off**; the plan's spin rounds; and the
//! preemptions of the run. A rule locked into parking shows a median many times the reference's
//! and most waits parked; a rule that recovers shows the reference's median and parks only
//! around preemptions (a few percent of waits).

mod barrier;
mod cores;
mod events;
mod legacy;
mod machine;
mod release;
mod report;
mod rng;
mod rule;
mod simulation;
#[cfg(test)]
mod tests;

pub(crate) use machine::{Machine, Nanos, MICROSECOND};
pub(crate) use report::Report;
pub(crate) use rule::Rule;
pub(crate) use simulation::simulate;
