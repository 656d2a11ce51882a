//! Barriers: a family of algorithms behind one API.
//!
//! Build a [`Barrier`] for `n` parties, hand each thread its [`Participant`], and call
//! [`wait`](Participant::wait). Every algorithm has the same semantics:
//!
//! - `wait` returns the episode number and whether this participant was the **leader**; exactly one
//!   participant leads each episode, and it runs the completion action (see
//!   [`BarrierBuilder::on_completion`]) after the last arrival and before anyone is released.
//! - [`wait_timeout`](Participant::wait_timeout) and [`wait_deadline`](Participant::wait_deadline)
//!   return [`Error::Timeout`](crate::Error::Timeout) naming the ranks that have not arrived; the
//!   arrival stays in place, and waiting again completes the same episode.
//! - [`wait_async`](Participant::wait_async) is `wait` for an async task, on any executor: a
//!   [`BarrierFuture`] of the same result and errors, which never blocks its thread; tasks and
//!   blocking threads can share one barrier, with any algorithm.
//! - A participant that panics breaks the barrier: the others' waits return
//!   [`Error::Broken`](crate::Error::Broken) within milliseconds.
//! - A barrier of one party never blocks; zero parties, or more than [`MAX_PARTIES`], is an
//!   [`Error::InvalidArgument`](crate::Error::InvalidArgument).
//! - Every waiter spins, then yields, then parks (see [`crate::wait`]); nothing spins for ever when
//!   threads outnumber cores.
//!
//! # Choosing an algorithm
//!
//! `n` participants; "messages" counts the cache lines written that another participant must read.
//!
//! | algorithm | messages per episode | critical path | leader | leave | use it when |
//! |---|---|---|---|---|---|
//! | [`SenseReversing`] | n arrivals on one counter + 1 release | n serialized RMWs + 1 broadcast | last arrival | yes | participants must leave; 3 or 5 threads each with a core (`Auto`'s pick: its arrivals on a counter nobody polls cost 0.71 round trips each, against counting's 1.16); more threads than cores (one wake-up releases all) |
//! | [`Counting`] | n RMWs on one line, which is also the release | n serialized RMWs | last arrival | yes | 1 or 2 threads each on a core (`Auto`'s pick: 0.95 round trips at 2 threads on 16 cores, the lowest of every row), or more threads than cores (`Auto`'s pick: one wake-up pass releases all); beyond 2 threads with a core each, its waiters polling the arrivals' line make it the costliest central one |
//! | [`Ticket`] | n RMWs on the ticket line + 1 release | n serialized RMWs + 1 broadcast | last ticket | no | like sense-reversing (level with it on 16 cores), when a never-reset counter is wanted |
//! | [`CombiningTree`] | about n · k/(k−1) RMWs on counters of fan-in k | log_k n levels of k RMWs, and back down | last at the root | no | many threads on a machine where one counter line is contended; measured spinning only to 8 threads (behind dissemination there), so `Auto` does not pick it |
//! | [`McsTree`] | n − 1 bit flips + n − 1 wake-ups | log_4 n up, log_2 n down | rank 0 | no | many threads; each polls only its own lines; measured spinning only at 2 and 4 threads (our slowest there), so `Auto` does not pick it |
//! | [`Dissemination`] | n · ceil(log2 n) signals | ceil(log2 n) rounds, no release phase | rank 0 | no | 4 to 16 threads each with a core (`Auto`'s pick, not 5): shortest path; the fastest of every row at 4, 8 and 12 threads on 16 cores; its n · ceil(log2 n) signals contend beyond (seed 002) |
//! | [`Tournament`] | n − 1 arrivals + n − 1 wake-ups | ceil(log2 n) up, as many down | rank 0 | no | more than 16 threads each with a core (`Auto`'s pick): the best software barrier at 64 and 256 threads in seed 002 |
//!
//! [`Algorithm::Auto`] chooses among them from the party count and the cores: counting when
//! threads outnumber cores, else the cheapest by a cost model in cache-line round trips fitted to a
//! 16-core run and bounded by the seeds' measurements at scale; its rule and evidence are on
//! [`Algorithm`]. A tuning [profile](crate::Profile) written by `phasers bench barrier --write-profile`, which measured
//! every algorithm at several thread counts on this machine, overrides that rule; it is found
//! through `PHASERS_PROFILE` or at `~/.config/phasers/profile.json`. The profile needs the
//! `profile` feature (on by default); without it `Auto` follows its rule alone.
//!
//! # Threads without ranks
//!
//! [`AnyThreadBarrier`] wraps any of these algorithms for code written for `std::sync::Barrier` or
//! `pthread_barrier_t`: any `n` calls to its `wait` complete an episode, whichever threads make
//! them. Each call takes a rank from a ticket counter and waits as that rank's participant, which
//! costs one shared `fetch_add` and an uncontended lock more than a [`Participant`]'s wait. An
//! anonymous arrival cannot be resumed, so a timed wait that gives up breaks the barrier, as
//! `java.util.concurrent.CyclicBarrier`'s does. The `phasers-pthread` crate builds
//! its `LD_PRELOAD` replacement of `pthread_barrier_*` on it.
//!
//! Dissemination has no single release step, so with a completion action it adds one (rank 0 runs
//! the action, then releases the others through one word).
//!
//! # Static dispatch
//!
//! `Barrier` dispatches on [`AnyAlgorithm`] at run time; `Barrier<A>` for a concrete `A` does not:
//!
//! ```
//! use phasers::barrier::Tournament;
//! use phasers::{Algorithm, Barrier};
//!
//! let barrier = Barrier::builder(2).build_static::<Tournament>()?;
//! assert_eq!(barrier.algorithm(), Algorithm::Tournament);
//! std::thread::scope(|s| {
//!     for mut p in barrier.participants() {
//!         s.spawn(move || for _ in 0..100 { p.wait().unwrap(); });
//!     }
//! });
//! # Ok::<(), phasers::Error>(())
//! ```

mod algorithm;
mod any;
mod any_thread;
mod any_thread_future;
mod auto;
mod auto_cost;
mod barrier_future;
mod builder;
mod combining_tree;
mod completion;
mod counting;
mod description;
mod dissemination;
mod episode;
mod mcs_tree;
mod participant;
mod sense_reversing;
mod shared;
mod ticket;
mod tournament;

pub use crate::algorithm::Algorithm;
#[cfg(feature = "profile")]
pub use crate::tune::{Profile, ProfileEntry, ProfileStatus};
pub use algorithm::BarrierAlgorithm;
pub use any::AnyAlgorithm;
pub use any_thread::{AnyThreadBarrier, BarrierInUse};
pub use any_thread_future::AnyThreadFuture;
#[cfg(test)]
pub(crate) use auto_cost::builtin_choice;
pub use barrier_future::BarrierFuture;
pub use builder::{BarrierBuilder, MAX_FAN_IN, MAX_PARTIES};
pub use combining_tree::CombiningTree;
pub use counting::Counting;
pub use dissemination::Dissemination;
pub use mcs_tree::McsTree;
pub use participant::{Participant, WaitResult};
pub use sense_reversing::SenseReversing;
pub use shared::Barrier;
pub use ticket::Ticket;
pub use tournament::Tournament;
