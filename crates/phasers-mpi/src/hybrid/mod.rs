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
//! member 0, then a broadcast or a scatter from it), non-blocking too (`iallgather`, ...: their
//! [`HybridPending`] starts the second step when it finds the first over).
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
//! # The direct path
//!
//! A blocking [`allreduce`](HybridMember::allreduce) or [`reduce`](HybridMember::reduce) with a
//! built-in op, and a blocking [`barrier`](HybridMember::barrier) or
//! [`broadcast`](HybridMember::broadcast) of a checked team (or of a team of one process), skip
//! the engine where no process set a timeout and the team has no node hierarchy: see
//! `direct.rs` and `direct_sync.rs`. Nothing is allocated once its buffers have grown, no input
//! is copied before it is combined, and the processes meet in polled point-to-point messages,
//! faster here than both `MPI_Allreduce` and `MPI_Iallreduce` (see `exchange.rs`). A team of
//! one process makes no MPI call for it. Small arrays are combined by the last member to
//! arrive; large ones by seed 003's reduction group ([`phasers::Reduction`]). A team with a
//! timeout keeps the engine, whose MPI requests can be abandoned when the timeout passes.
//!
//! Members of one process that called differently may take different paths (an `allreduce`
//! and an `iallreduce`, say): every member counts in at one place, and the one that completes
//! the count sends the direct path's members to the engine, where every call is compared
//! (`DirectShared::count_in`).
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
//! 2. The cross-process step opens with the **envelope** (`envelope.rs`): a record per process
//!    holding the call's signature (5 words, merged by maximum, and a flag set wherever two
//!    merged signatures differed: every process learns whether all were equal), flags (an
//!    error; a process on the engine's path), and the call's data where it fits (reduced with the call's
//!    op, or placed at the process's offset and merged by OR). On a flat team without a timeout
//!    the records travel point to point by recursive doubling, up to 3,984 bytes of data inside
//!    (`record_exchange.rs`), and the direct path and the engine send the same messages;
//!    otherwise the envelope is one `MPI_Iallreduce` of 256-byte records (208 bytes of data)
//!    with an MPI operation of ours (node-aware: node reduce, leaders' allreduce, node
//!    broadcast). Either way its shape never depends on the call, so processes that called
//!    differently still make matching MPI calls.
//! 3. Every process reads the same merged envelope. All agree and the data was inside: the call
//!    is over, one exchange as unchecked. All agree and the data was too large: the data
//!    follows, one small round trip later (point to point where every process called from the
//!    direct path, else the call's own stages). Some differ: each process's 1 KiB
//!    detailed record goes to every process (`MPI_Iallgather`), and each draws the same error
//!    from them; no data moves.
//!
//! So a matched small call costs what it costs unchecked plus the envelope's extra bytes and
//! work, and a barrier or a broadcast becomes that exchange too, since a check needs every
//! process to hear from every other. Measured with `phasers-mpi bench --parts floor,hybrid`
//! (2 processes x 1 thread of a 2-core AMD EPYC VM, Open MPI 4.1.4, medians of 5 interleaved
//! rounds; `benchmarks/mpi-hybrid-2core-np2.txt`): a one-word allreduce 279 ns checked, 233 ns
//! unchecked, 253 ns for `MPI_Allreduce`; 1M `f64` 1.28 ms, 1.27 ms and 1.53 ms; a barrier
//! 289 ns checked, 735 ns unchecked (`MPI_Ibarrier` through the engine), 221 ns for
//! `MPI_Barrier`; a one-word broadcast 273 ns checked, 574 ns unchecked, 140 ns for back-to-back
//! `MPI_Bcast`, which needs no round trip.
//!
//! Unchecked, processes that call differently make an erroneous MPI program: an
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
//! 5. `request.rs`: the non-blocking MPI collectives started through `mpi::ffi`.
//! 6. `exchange.rs`: the direct path's data between processes (point-to-point).
//! 7. `options.rs`: the options every process agrees on, inherited by split teams.
//! 8. `layout.rs`: where the members are (counts, global ranks, node communicators) and
//!    [`MAX_THREADS_PER_PROCESS`].
//! 9. `envelope.rs`: the record a checked call starts with, and how records merge.
//! 10. `record_exchange.rs`: a flat team's envelope exchange, point to point.
//! 11. `arrivals.rs`: where a process's members count in at a direct call, whichever path
//!     each took.
//! 12. `direct_state.rs`: what the direct path keeps, per process and per member, and which
//!     teams take it.
//! 13. `stage.rs`: the kinds of cross-process stage and the communicator each runs on.
//! 14. `spare.rs`: the buffers, stage queue and post list a call slot keeps between calls.
//! 15. `plan.rs`: which stages each collective runs, flat or node-aware.
//! 16. `checked.rs`: a checked call's envelope and what follows it, on the engine.
//! 17. `flight.rs`: a call's cross-process step in progress, stage after stage.
//! 18. `shared.rs`: what a process's members share (layout, options, broken flag, two call
//!     slots holding flights, the direct path's state), and building it collectively.
//! 19. `direct_checked.rs`: a checked call's envelope from the direct path, and what follows.
//! 20. `split_teams.rs`: the split's entries, and the new teams a process makes from them.
//! 21. `engine.rs`: the life of a call in a process: arrive, combine, advance, wait, depart.
//! 22. `member.rs`: [`HybridMember`], a thread's handle, and what dropping it does.
//! 23. `pending.rs`: [`HybridPending`], a non-blocking call's handle, and where outputs go.
//! 24. `direct.rs`: the direct allreduce and reduce, beside the engine (it opens the engine's
//!     slots for the calls after it).
//! 25. `direct_sync.rs`: the direct barrier and broadcast.
//! 26. `collectives.rs`: the member's collectives, blocking and non-blocking, and their
//!     argument checks.
//! 27. `composed.rs`: allgather, alltoall and the scans, composed of two collectives.
//! 28. `split.rs`: [`HybridMember::split`].
//! 29. `team.rs`: [`HybridTeam`] and [`HybridTeamBuilder`], which build the team and hand out
//!     its members.

pub(crate) mod arrivals;
mod bytes;
mod checked;
mod collectives;
mod composed;
mod direct;
mod direct_checked;
mod direct_state;
mod direct_sync;
pub(crate) mod doubling;
mod engine;
mod envelope;
mod exchange;
mod flight;
mod layout;
pub(crate) mod mailbox;
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
