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
//!   `PHASERS_WAIT` / `PHASERS_SPIN` environment overrides, and stall reports: a waiter that has
//!   waited past the stall time (`PHASERS_STALL`, 10 s by default) says which object, episode and
//!   members it waits for, once, on stderr or to [`set_stall_hook`]'s hook.
//! - [`Profile`]: what `phasers tune` measured on this machine. When a profile is in use,
//!   [`Algorithm::Auto`] takes the algorithm measured fastest instead of following its built-in
//!   table. It is read from the file named by `PHASERS_PROFILE`, else from
//!   `$XDG_CONFIG_HOME/phasers/profile.json` or `~/.config/phasers/profile.json`;
//!   `PHASERS_PROFILE=off` ignores it, and [`Profile::status`] says which applies.
//!
//! ```
//! use phasers::{Algorithm, Barrier};
//!
//! let barrier = Barrier::new(4, Algorithm::Auto)?;
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
//! # Ok::<(), phasers::Error>(())
//! ```

pub mod accumulator;
pub mod barrier;
mod error;
pub mod phaser;
mod primitive;
pub mod reduce;
pub mod team;
mod topology;
pub mod wait;

pub use accumulator::{Accumulator, Element, Op};
pub use barrier::{
    Algorithm, AnyThreadBarrier, Barrier, BarrierBuilder, Participant, Profile, ProfileEntry,
    ProfileStatus, WaitResult,
};
pub use error::{Error, Result};
pub use phaser::{Mode, Phaser, PhaserBuilder, Registration, WaitGroup};
pub use reduce::{ReduceAlgorithm, ReduceOutcome, Reducer, Reduction, ReductionBuilder};
pub use team::{Member, Pending, SyncMode, Team, TeamBuilder};
pub use topology::{available_cores, is_oversubscribed};
pub use wait::{clear_stall_hook, set_stall_hook, Floors, FloorsSource, StallReport, WaitPolicy};
