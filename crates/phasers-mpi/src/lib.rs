//! # phasers-mpi
//!
//! The concepts of [`phasers`] across MPI processes, each holding threads:
//!
//! - [`ProcessBarrier`]: dissemination and MCS-tree barriers over point-to-point messages, a
//!   barrier that meets in shared memory on each node, the MPI library's own barrier, and `Auto`,
//!   which measures them at build time and keeps the fastest ([`ProcessAlgorithm`]).
//! - [`CombinedBarrier`]: the threads of a rank meet in shared memory; whichever thread
//!   completes the local gather leads the process step, then releases its threads (seed 001).
//! - [`HybridTeam`]: teams of ranks × threads with barrier, broadcast, reduce, allreduce,
//!   gather, scatter (blocking and non-blocking) and split, over hierarchical shared-memory and
//!   MPI algorithms (seed 004).
//!
//! Start with [`Mpi::init`]; the program must be launched by `mpirun` (or set
//! `PHASERS_MPI_SINGLETON=1`).
//!
//! # Adopting from an existing MPI program
//!
//! A program that already initializes MPI itself (rsmpi's `mpi::initialize_with_threading`, or C
//! and Fortran code through the C ABI's `mpi` feature) keeps doing so and calls [`Mpi::adopt`],
//! which uses that MPI and never finalizes it. Every constructor takes the communicator to run
//! on as `&impl Communicator`: the world, a duplicate, or a split the program already has. The
//! objects duplicate it, so their messages never meet the program's own.
//!
//! ```
//! use phasers::Op;
//! use phasers_mpi::mpi::traits::Communicator;
//! use phasers_mpi::{mpi, CombinedBarrier, HybridTeam, Mpi, ProcessAlgorithm, ProcessBarrier};
//!
//! // The existing program: rsmpi owns MPI, and the ranks are split in halves.
//! let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Serialized).unwrap();
//! let world = universe.world();
//! let half = world.split_by_color(mpi::topology::Color::with_value(world.rank() % 2)).unwrap();
//!
//! // Added: a context for this crate, then objects on the program's own communicators.
//! let phasers = Mpi::adopt()?;
//! let mut barrier = ProcessBarrier::new(&phasers, &half, ProcessAlgorithm::McsTree)?;
//! barrier.wait()?;
//! let combined = CombinedBarrier::builder(&phasers, &world, 2).build()?;
//! assert_eq!(combined.parties(), 2 * world.size() as usize);
//! let team = HybridTeam::new(&phasers, &half, 2)?;
//! std::thread::scope(|s| {
//!     for mut member in team.participants() {
//!         s.spawn(move || {
//!             let mut sum = [0u64];
//!             member.allreduce(&[1], &mut sum, Op::Sum).unwrap();
//!             assert_eq!(sum[0], member.parties() as u64);
//!         });
//!     }
//! });
//! // This crate's objects and the program's communicators go first; the owner finalizes MPI
//! // when its Universe drops.
//! drop((barrier, combined, team, phasers, half));
//! drop(universe);
//! # Ok::<(), phasers_mpi::Error>(())
//! ```
//!
//! `examples/adopt_rsmpi.rs` is a whole program, and the C ABI's `phasers_mpi.h` does the same
//! from an `MPI_Comm`.
//!
//! # Waiting
//!
//! MPI cannot wake a sleeping thread, so waits on messages poll, then yield, then sleep for
//! growing naps (up to 1 ms); the shared-memory parts use [`phasers`]' spin, yield, park. A
//! wait that lasts longer than `PHASERS_MPI_STALL_WARN` seconds (10 by default, `off` disables)
//! prints the operation and the ranks it waits for to stderr, so a stuck job never hangs
//! silently. A rank that dies makes `mpirun` end the whole job with its own message.
//!
//! # Threads and MPI
//!
//! Objects whose MPI step may run on any thread need [`Threading::Serialized`] and say so with
//! [`Error::Threading`]. Under `Serialized` this crate serializes its own MPI calls with one
//! process-wide lock; if your code calls MPI from other threads at the same time, ask for
//! [`Threading::Multiple`].

mod channel;
mod combined;
mod error;
mod hybrid;
#[cfg(phasers_loom)]
#[doc(hidden)]
pub mod loom_api;
mod mpi_env;
mod node;
mod node_memory;
mod process;
mod progress;
mod sync;
mod threading;

pub use combined::{CombinedBarrier, CombinedBuilder, CombinedParticipant, CombinedWait};
pub use error::{Error, Result};
pub use hybrid::{
    HybridMember, HybridPending, HybridTeam, HybridTeamBuilder, MAX_THREADS_PER_PROCESS,
};
pub use mpi_env::{launched_by_mpirun, CommDuplicate, Mpi, SINGLETON_ENV};
pub use process::{ProcessAlgorithm, ProcessBarrier};
pub use progress::STALL_WARN_ENV;
pub use threading::Threading;

/// The MPI bindings this crate is built on, for communicators and datatypes.
pub use mpi;
