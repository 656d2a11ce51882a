//! # phasers
//!
//! Fast, scalable synchronization for parallel programs: barriers that sit near the hardware floor
//! when every thread has a core, degrade gracefully when threads outnumber cores, and never hang
//! silently.
//!
//! - [`barrier`]: seven barrier algorithms behind one [`Barrier`] type, with per-participant
//!   handles, timeouts that name who is missing, completion actions, and breaking on panic;
//!   [`AnyThreadBarrier`] for threads without ranks, as with `std::sync::Barrier` or
//!   `pthread_barrier_t`.
//! - [`phaser`]: Habanero-style [`Phaser`]s: signal-only and wait-only modes, registration and
//!   deregistration in any phase, split phases, a once-per-phase action, several phasers advanced
//!   together, and a tree of sub-phasers (tiers, degree) for scale.
//! - [`accumulator`]: reductions tied to a phaser's phases, combined up its tree, optionally
//!   bit-reproducible for floating point.
//! - [`reduce`]: array reductions across threads ([`Reduction`]): linear, static tree, dynamic
//!   pair generation and dynamic group, reduce-to-root with quick return or allreduce.
//! - [`team`]: [`Team`]s of [`Member`]s running collectives (barrier, broadcast, reduce,
//!   allreduce, gather, allgather, scatter, alltoall, scans), blocking or non-blocking, on
//!   sub-teams made by `split`, with checked matching of members' calls.
//! - [`wait`]: the single spin-then-yield-then-park mechanism every primitive uses, the
//!   `PHASERS_WAIT` / `PHASERS_SPIN` / `PHASERS_WAKE` environment overrides, and stall reports: a
//!   waiter that has waited past the stall time (`PHASERS_STALL`, 10 s by default) says which
//!   object, episode and members it waits for, once, on stderr or to [`set_stall_hook`]'s hook.
//! - `Profile` (with the `profile` feature): what `phasers bench barrier --write-profile` measured on this machine. When a
//!   profile is in use, [`Algorithm::Auto`] takes the algorithm measured fastest instead of
//!   following its built-in table. It is read from the file named by `PHASERS_PROFILE`, else from
//!   `$XDG_CONFIG_HOME/phasers/profile.json` or `~/.config/phasers/profile.json`;
//!   `PHASERS_PROFILE=off` ignores it, and `Profile::status` says which applies.
//!
//! # Features
//!
//! - `profile` (on by default): the tuning profile (`Profile`, `ProfileEntry`, `ProfileStatus`),
//!   read and written as JSON with serde and serde_json. With it, building a barrier with
//!   [`Algorithm::Auto`] looks the profile up once per process (`PHASERS_PROFILE`,
//!   `XDG_CONFIG_HOME`, `HOME` and the file), and [`Floors::current`] uses the floors it recorded.
//!   Without it (`default-features = false`, for an embedded user or a small build) the crate
//!   depends on no serde, `Auto` follows its built-in rule, and no file is read. The operator's
//!   environment overrides (`PHASERS_WAIT`, `PHASERS_SPIN`, `PHASERS_WAKE`, `PHASERS_STALL`,
//!   `PHASERS_FLOORS`, `PHASERS_CHECKED`) are read in both builds: they need no dependency, and
//!   they are how a deployed program is tuned or made to report a hang without recompiling.
//!
//! # Sources
//!
//! The docs cite five sources by number ("seed 000" to "seed 004"); `docs/references.md` in the
//! repository gives each in full and says what we took from it.
//!
//! | cited as | source |
//! |---|---|
//! | seed 000 | J. Shirako and V. Sarkar, "Hierarchical Phasers for Scalable Synchronization and Reductions in Dynamic Parallelism", IPDPS 2010 |
//! | seed 001 | H. Seyedroudbari and D. K. Kadiyala, "Barrier Synchronization with OpenMP and MPI", project report, Georgia Institute of Technology |
//! | seed 002 | K. Hetland et al., "Paths to Fast Barrier Synchronization on the Node", HPDC 2019 |
//! | seed 003 | P. Falkman, "Efficient reduction over threads", thesis, KTH Royal Institute of Technology, 2011 |
//! | seed 004 | an evaluation of the UPC collectives of IBM's xlUPC compiler on Power7 IH (title and authors not in the copy we hold) |
//!
//! # Names
//!
//! Every type uses the same words for the same things, here and in `phasers-mpi`. When you add
//! an item, take its name from this table.
//!
//! | What | Name | Where |
//! |---|---|---|
//! | Build with the defaults | `X::new(..)` | [`Barrier::new`] and [`AnyThreadBarrier::new`] return a ready object, like `std::sync::Barrier::new`; the others return `Result` |
//! | Choose the algorithm, get a `Result` | `X::with_algorithm(parties, algorithm)` | [`Barrier`], [`AnyThreadBarrier`] |
//! | Use what another owner started, without taking it over | `X::adopt()` | `phasers_mpi::Mpi::adopt`, for an MPI that rsmpi or C code initialized (it never finalizes it) |
//! | Build with options | `X::builder(..)` → `XBuilder`, one setter per option named after it, then `.build()` → `Result<X>` | [`BarrierBuilder`], [`PhaserBuilder`], [`ReductionBuilder`], [`TeamBuilder`] |
//! | Hand out every handle | `participants()` → `Vec` in rank order, each rank once | [`Barrier`], [`Reduction`], [`Team`], and the MPI types |
//! | Hand out one handle | `participant(rank)` → `Result` | [`Barrier`], [`Reduction`], [`Team`] |
//! | How many take part | `parties()` | every object, and every handle |
//! | A handle's place | `rank()` | [`Participant`], [`Reducer`], [`Member`]; a phaser's [`Registration::id`] is not a rank, since registrations come and go |
//! | Block until the others arrive | `wait()`, and `wait_timeout(Duration)` / `wait_deadline(Instant)`, which return [`Error::Timeout`] instead of waiting on | [`Participant`], [`AnyThreadBarrier`], [`Pending`], [`WaitGroup`] |
//! | A phaser's arrive-and-wait | `next()`, `next_timeout`, `next_deadline`; split: `signal()`, then `wait()`, `wait_timeout`, `wait_deadline` | [`Registration`] (Habanero's names: `wait` alone is the second half of a split phase) |
//! | Wait in an async task, without blocking its thread | the blocking name + `_async` (`next_async`, `wait_async`, `next_single_async`, `await_phase_async`, `reduce_async`, `allreduce_async`), returning a `Future` of the blocking call's `Result`, named for what it completes ([`PhaseFuture`](phaser::PhaseFuture), [`SingleFuture`](phaser::SingleFuture), [`AwaitPhaseFuture`](phaser::AwaitPhaseFuture), [`WaitGroupFuture`](phaser::WaitGroupFuture), [`BarrierFuture`](barrier::BarrierFuture), [`AnyThreadFuture`](barrier::AnyThreadFuture), [`CollectiveFuture`](team::CollectiveFuture); a reduction's, which borrows its buffers, is an `impl Future`); built on `std::task::Waker` alone, for any executor; the first poll does what the blocking call does before it waits; dropping the future cancels the wait, never what the first poll did, except where nobody else could finish it: a `next_single_async` runner that has not run its action, an unfinished `AnyThreadBarrier::wait_async`, and a reduction's call dropped after its first poll, break the object, as a panic or a timed wait that gives up does | [`Registration`], [`Phaser`], [`WaitGroup`], [`Participant`], [`AnyThreadBarrier`], [`Pending`] (every team collective through its `i`-form: `member.iallreduce(..)?.wait_async().await`), [`Reducer`] (on the group's copies of its buffers, so that a drop is safe at any point) |
//! | Bound an async wait | the future's `.timeout(Duration)` / `.deadline(Instant)` (`reg.next_async().timeout(d).await`): completes with the blocking `_timeout` form's [`Error::Timeout`] and leaves the handle as that form does; one timer thread (`futures-timer`) per process, started only by a timed wait that has to wait | [`PhaseFuture`](phaser::PhaseFuture), [`AwaitPhaseFuture`](phaser::AwaitPhaseFuture), [`WaitGroupFuture`](phaser::WaitGroupFuture), [`BarrierFuture`](barrier::BarrierFuture), [`CollectiveFuture`](team::CollectiveFuture) (the call stays pending), [`AnyThreadFuture`](barrier::AnyThreadFuture) (breaks the barrier, as `wait_timeout` does); not [`SingleFuture`](phaser::SingleFuture), whose runner could only give up by breaking the phaser: drop it at the deadline instead (cancellation) |
//! | Wait for a phase without taking part | `await_phase(phase)`, `await_phase_timeout`, `await_phase_deadline` | [`Phaser`] |
//! | Collectives | MPI's names (`barrier`, `broadcast`, `allreduce`, ...); the non-blocking form adds an `i` (`iallreduce`) and returns a [`Pending`], whose `wait_timeout` bounds the call | [`Member`], and the MPI hybrid team |
//! | What a wait returns | a value read by methods, never public fields: `episode()`, `is_leader()` | [`WaitResult`], `phasers_mpi::CombinedWait`; a phaser returns its phase, a `u64` |
//! | Broken by a panic or a dropped handle | `is_broken()`, and [`Error::Broken`] from every later wait | every object that can break |
//! | How waiters wait | builder `.wait_policy(policy)`, getter `wait_policy()` | every builder and object |
//! | When a stall is reported | builder `.stall_after(duration)`, getter `stall_after()` | every builder and object |
//! | Checked calls | builder `.checked(bool)` / `.unchecked()`, getter `is_checked()` | [`Team`], the MPI hybrid team |
//! | Bounds | `MAX_*` constants in the module, refused above with [`Error::InvalidArgument`] | [`barrier::MAX_PARTIES`], [`team::MAX_MEMBERS`], ... |
//!
//! The names these replaced (`Team::members`, `Team::member`, `Team::size`, `Member::size`, and
//! in `phasers-mpi` `HybridTeam::members`, the `size()` methods and `CombinedWait`'s public
//! fields) still work for one release, deprecated. `Barrier::new(parties, algorithm)` is now
//! [`Barrier::with_algorithm`].
//!
//! ```
//! use phasers::Barrier;
//!
//! let barrier = Barrier::new(4);
//! std::thread::scope(|s| {
//!     for mut p in barrier.participants() {
//!         s.spawn(move || {
//!             for _ in 0..1000 {
//!                 // ... this step's work ...
//!                 p.wait().unwrap();
//!             }
//!         });
//!     }
//! });
//! assert_eq!(barrier.parties(), 4);
//! ```

// docs.rs builds with `--cfg docsrs` (see Cargo.toml) and marks the items of the `profile` feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod accumulator;
mod algorithm;
pub mod barrier;
mod environment;
mod error;
mod mode;
#[cfg(test)]
mod phase_wrap_tests;
pub mod phaser;
mod primitive;
pub mod reduce;
pub mod team;
mod topology;
mod tune;
pub mod wait;

pub use accumulator::{Accumulator, Element, Op};
pub use barrier::{Algorithm, AnyThreadBarrier, Barrier, BarrierBuilder, Participant, WaitResult};
pub use environment::check_environment;
pub use error::{Error, Result};
pub use phaser::{Mode, Phaser, PhaserBuilder, Registration, WaitGroup};
pub use reduce::{ReduceAlgorithm, ReduceOutcome, Reducer, Reduction, ReductionBuilder};
pub use team::{Member, Pending, SyncMode, Team, TeamBuilder};
pub use topology::{available_cores, is_oversubscribed};
#[cfg(feature = "profile")]
pub use tune::{Profile, ProfileEntry, ProfileStatus};
pub use wait::{clear_stall_hook, set_stall_hook, Floors, FloorsSource, StallReport, WaitPolicy};

// The README's Rust blocks run as doctests, so the first code a newcomer copies always compiles.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

// The guide's Rust blocks run as doctests too.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide.md")]
struct GuideDoctests;
