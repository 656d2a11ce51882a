//! Hybrid teams: seed 004's teams and collectives over MPI processes × threads.
//!
//! A [`HybridTeam`] is built by every process of a communicator together, each with its own
//! number of threads; [`HybridTeam::participants`] hands out that process's [`HybridMember`]s.
//! Ranks are global and process-major: process 0's members first, then process 1's, ... Members
//! call [`barrier`](HybridMember::barrier), [`broadcast`](HybridMember::broadcast),
//! [`reduce`](HybridMember::reduce), [`allreduce`](HybridMember::allreduce),
//! [`gather`](HybridMember::gather) and [`scatter`](HybridMember::scatter), each also
//! non-blocking (`ibarrier`, ...) with a [`HybridPending`] handle, and
//! [`split`](HybridMember::split) into sub-teams. [`allgather`](HybridMember::allgather),
//! [`alltoall`](HybridMember::alltoall), [`scan_inclusive`](HybridMember::scan_inclusive) and
//! [`scan_exclusive`](HybridMember::scan_exclusive) are composed of two of those (a gather to
//! member 0, then a broadcast or a scatter from it) and blocking only for now.
//!
//! ```
//! use phasers::Op;
//! use phasers_mpi::{HybridTeam, Mpi, Threading};
//!
//! # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
//! let mpi = Mpi::init(Threading::Serialized)?;
//! let team = HybridTeam::new(&mpi, mpi.world(), 4)?;
//! let size = team.parties();
//! std::thread::scope(|s| {
//!     for mut member in team.participants() {
//!         s.spawn(move || {
//!             let mut all = vec![0usize; size];
//!             member.gather(0, &[member.rank()], &mut all).unwrap();
//!             let mut sum = [0.0f64];
//!             member.allreduce(&[1.0], &mut sum, Op::Sum).unwrap();
//!             assert_eq!(sum[0], size as f64);
//!         });
//!     }
//! });
//! # Ok::<(), phasers_mpi::Error>(())
//! ```
//!
//! # How a call works (seed 004's hierarchical algorithms)
//!
//! Each process holds one shared state per team. Calls alternate between two slots (double
//! buffering, as the thread team), so a member may start call `k + 1` while others still copy
//! their outputs from call `k`; call `k` waits only until every member left call `k - 2`.
//!
//! 1. **Local gather.** A member copies its input into its post in the slot, with the call's
//!    signature (collective, element type, length, root, op) and its own argument errors, and
//!    counts itself in. Nothing the engine holds ever points into a member's buffers.
//! 2. **Local combine.** The member whose arrival completes the gather, whichever it is,
//!    compares the posts, then combines them: reductions in local rank order, gathers by
//!    concatenation, the root's buffer for broadcast and scatter. It then starts the
//!    cross-process step as non-blocking MPI collectives on buffers owned by the slot.
//! 3. **Cross-process step.** A short list of stages (see `plan.rs`): for a built-in op's
//!    allreduce, one `MPI_Iallreduce`, or where the team spans several nodes with several
//!    processes each, a node `Ireduce`, a leaders' `Iallreduce` and a node `Ibcast`.
//!    [`Op::Custom`](phasers::Op::Custom) never enters MPI: the processes' partial results are
//!    gathered and combined in Rust in process order.
//! 4. **Progress and departure.** Only members' polls move a call: whoever polls takes the
//!    slot's lock if it is free, tests the active MPI request and starts the next stage. When
//!    the call is over, each member copies its own output from the result and departs.
//!
//! So a one-word allreduce costs one shared-memory meeting and one `MPI_Iallreduce`.
//!
//! # The direct allreduce
//!
//! A blocking [`allreduce`](HybridMember::allreduce) with a built-in op skips the engine where
//! no process set a timeout and the team is unchecked or has one process (and runs on one
//! node's processes): see `direct.rs`. Nothing is allocated once its buffers have grown, no
//! input is copied before it is combined, and the processes meet in an exchange of polled
//! point-to-point messages, faster here than both `MPI_Allreduce` and `MPI_Iallreduce` (see
//! `exchange.rs`). A team of one process makes no MPI call for it. Small arrays are combined by
//! the last member to arrive; large ones by seed 003's reduction group
//! ([`phasers::Reduction`]). A team with a timeout keeps the engine, whose MPI requests can be
//! abandoned when the timeout passes; a checked team of several processes keeps it for its
//! envelope.
//!
//! # Checked mode (the default)
//!
//! Every member of every process must make the same call: the same collective, element type,
//! length, root and op. Checked, which teams are unless built with
//! [`HybridTeamBuilder::unchecked`], members that differ get the same
//! [`Error::Mismatch`](crate::Error::Mismatch) on every member of every process, naming both
//! sides (global ranks, processes, and each one's call), and a member's bad argument reaches
//! every member as the same [`Error::InvalidArgument`](crate::Error::InvalidArgument): never a
//! hang, an MPI error or garbage, in every build profile.
//!
//! 1. The members of a process are compared in step 2 above, as always.
//! 2. The cross-process step opens with the **envelope** (`envelope.rs`): 256 bytes per
//!    process holding the call's signature (each word and its complement, merged by maximum:
//!    every process learns whether all words' maximum equals their minimum), an error flag, and
//!    the call's data where it fits in 136 bytes (reduced with the call's op, or placed at the
//!    process's offset and merged by OR). It is one `MPI_Iallreduce` with an MPI operation of
//!    ours (node-aware: node reduce, leaders' allreduce, node broadcast), whose shape never
//!    depends on the call, so processes that called differently still make matching MPI calls.
//! 3. Every process reads the same merged envelope. All agree and the data was inside: the call
//!    is over, one reduction as unchecked. All agree and the data was too large: the call's
//!    own stages follow, one small round trip later. Some differ: each process's 1 KiB
//!    detailed record goes to every process (`MPI_Iallgather`), and each draws the same error
//!    from them; no data moves.
//!
//! So a matched small call costs what it costs unchecked plus the envelope's extra bytes (Open
//! MPI 4.1, 2 processes of one node: the envelope's reduction took 0.67 us, a one-word
//! `MPI_Iallreduce` 0.55 us); a barrier or a broadcast becomes that reduction too, since a
//! check needs every process to hear from every other. End to end (`examples/hybrid_allreduce`,
//! 2 processes x 1 thread, 2-core AMD EPYC), checked against unchecked: a one-word allreduce
//! 1.27 us against 1.04 us, 17 `f64` (the most inside the envelope) 1.37 us against 1.15 us,
//! 18 `f64` (the first sent after it) 2.11 us against 1.15 us, 1024 `f64` 10.2 us against
//! 8.6 us, 1M `f64` alike (15 ms), a barrier 1.2 us against 0.67 us. Unchecked, processes that call differently make an erroneous MPI program: an
//! allreduce of 2 elements against one of 102 aborts the job with `MPI_ERR_TRUNCATE`, a
//! broadcast against an allreduce hangs, and broadcasts of different lengths or roots, or
//! reductions with different ops or element types, return garbage without an error.
//!
//! # Failures
//!
//! - A member dropped between calls, or panicking, breaks the team in its process: the local
//!   members' calls return [`Error::Broken`](crate::Error::Broken) instead of waiting for it.
//!   The other processes cannot learn of it (MPI has no way to interrupt them); they wait, with
//!   stall warnings, until their own timeout.
//! - A call past the team's timeout returns [`Error::Timeout`](crate::Error::Timeout) to every
//!   member of the process waiting for it, and breaks the team in that process (later calls
//!   return [`Error::Broken`](crate::Error::Broken)): an MPI collective cannot be cancelled. Its
//!   buffers and the team's communicators stay allocated for MPI to finish with, so the other
//!   processes can still complete that call when they arrive.
//! - A non-blocking call's own deadline, [`HybridPending::wait_timeout`] or
//!   [`HybridPending::wait_deadline`], breaks nothing: the wait returns
//!   [`Error::Timeout`](crate::Error::Timeout), the call stays pending, and a later wait or test
//!   completes it.
//!
//! # Threads and MPI
//!
//! Any member may drive MPI, so a team with more than one thread per process needs
//! [`Threading::Serialized`](crate::Threading::Serialized).
//!
//! # Layers of the code
//!
//! Each file imports only files above it in this list (bottom first): shared state at the
//! bottom, the engine below the member, the public handles on top.
//!
//! 1. `bytes.rs`: the pointer-free, aligned byte buffer that inputs, MPI buffers and results
//!    live in.
//! 2. `reducer.rs`: how a reduction combines bytes, and the MPI operation of a built-in op.
//! 3. `signature.rs`: a member's post (the call's signature, its argument error, its input)
//!    and how one process's posts are compared.
//! 4. `wire.rs`: the detailed record that names what differs when a checked call disagrees.
//! 5. `envelope.rs`: the fixed-size envelope a checked call starts with, and its MPI merge.
//! 6. `request.rs`: the non-blocking MPI collectives started through `mpi::ffi`.
//! 7. `exchange.rs`: the direct allreduce's exchange between processes (point-to-point).
//! 8. `options.rs`: the options every process agrees on, inherited by split teams.
//! 9. `layout.rs`: where the members are (counts, global ranks, node communicators) and
//!    [`MAX_THREADS_PER_PROCESS`].
//! 10. `direct_state.rs`: what the direct allreduce keeps, per process and per member, and
//!     which teams take it.
//! 11. `stage.rs`: the kinds of cross-process stage and the communicator each runs on.
//! 12. `plan.rs`: which stages each collective runs, flat or node-aware.
//! 13. `checked.rs`: a checked call's envelope and what follows it.
//! 14. `flight.rs`: a call's cross-process step in progress, stage after stage.
//! 15. `shared.rs`: what a process's members share (layout, options, broken flag, two call
//!     slots holding flights, the direct allreduce's state), and building it collectively.
//! 16. `split_teams.rs`: the split's entries, and the new teams a process makes from them.
//! 17. `engine.rs`: the life of a call in a process: arrive, combine, advance, wait, depart.
//! 18. `member.rs`: [`HybridMember`], a thread's handle, and what dropping it does.
//! 19. `pending.rs`: [`HybridPending`], a non-blocking call's handle, and where outputs go.
//! 20. `direct.rs`: the direct allreduce, beside the engine (it opens the engine's slots for
//!     the calls after it).
//! 21. `collectives.rs`: the member's collectives, blocking and non-blocking, and their
//!     argument checks.
//! 22. `composed.rs`: allgather, alltoall and the scans, composed of two collectives.
//! 23. `split.rs`: [`HybridMember::split`].
//! 24. `team.rs`: [`HybridTeam`] and [`HybridTeamBuilder`], which build the team and hand out
//!     its members.

mod bytes;
mod checked;
mod collectives;
mod composed;
mod direct;
mod direct_checked;
mod direct_state;
mod direct_sync;
mod engine;
mod envelope;
mod exchange;
mod flight;
mod layout;
mod member;
mod options;
mod pending;
mod plan;
mod record_exchange;
mod reducer;
mod request;
mod shared;
mod signature;
mod spare;
mod split;
mod split_teams;
mod stage;
mod team;
mod wire;

pub use layout::MAX_THREADS_PER_PROCESS;
pub use member::HybridMember;
pub use pending::HybridPending;
pub use team::{HybridTeam, HybridTeamBuilder};
