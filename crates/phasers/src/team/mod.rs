//! Teams and collectives for threads (seed 004: UPC collectives 2.0 brought to threads).
//!
//! A [`Team`] hands out [`Member`]s with ranks. Members call collectives, each passing its own
//! buffers (the seed's multi-valued arguments): [`barrier`](Member::barrier),
//! [`barrier_checked`](Member::barrier_checked), [`broadcast`](Member::broadcast),
//! [`reduce`](Member::reduce), [`allreduce`](Member::allreduce), [`gather`](Member::gather),
//! [`allgather`](Member::allgather), [`scatter`](Member::scatter),
//! [`alltoall`](Member::alltoall), [`scan_inclusive`](Member::scan_inclusive) and
//! [`scan_exclusive`](Member::scan_exclusive). Each has a non-blocking form (`ibroadcast`, ...)
//! that returns a [`Pending`] handle with `test()` and `wait()`. [`Member::split`] and
//! [`Member::split_grid`] make sub-teams whose collectives run independently.
//!
//! ```
//! use phasers::{Op, Team};
//!
//! let team = Team::new(4)?;
//! std::thread::scope(|s| {
//!     for mut member in team.participants() {
//!         s.spawn(move || {
//!             let (mut row, mut column) = member.split_grid(2).unwrap();
//!             let mut sum = [0u64];
//!             row.allreduce(&[member.rank() as u64], &mut sum, Op::Sum).unwrap();
//!             assert_eq!(sum[0], if member.rank() < 2 { 1 } else { 5 });
//!             column.barrier().unwrap();
//!         });
//!     }
//! });
//! # Ok::<(), phasers::Error>(())
//! ```
//!
//! # How a call works
//!
//! Every call opens with a meeting of all members (a counting barrier whose last arrival does
//! the call's checks). Before arriving, each member posts its arguments and buffer addresses in
//! its own slot; small reductions and broadcasts (up to 64 bytes) carry their data in the post,
//! and the last arrival combines them into the meeting's line. A one-word allreduce of a checked
//! team goes further: each member leaves its input in the meeting's own cache line (the one its
//! arrival and the release use) and the result comes back in it, so it moves the lines a barrier
//! moves. Blocking calls that end at the meeting (barriers, and these small data calls) take a
//! light path that keeps no state in the member and skips the steps after the meeting. Larger data moves after the meeting: each member reads what it
//! needs from the others' buffers and writes its own outputs, then tells each owner it is done.
//! Blocking reductions of larger arrays use seed 003's algorithms, through the
//! [`reduce`](crate::reduce) module's code: by default the linear one, inside the team's own
//! protocol (each member writes its share into the others' outputs); with
//! [`TeamBuilder::reduce_algorithm`], any other, run by a reduction group the team keeps per
//! element type. See [`SyncMode`] for when calls return.
//!
//! # Why nothing hangs and nothing dangles
//!
//! - A member's buffers are used by others only between the opening meeting, which it attended,
//!   and the moment each user says it is done; a call returns only after every user said so (or,
//!   for copied inputs, reuses the copy only then). Those users never wait for anyone in between,
//!   so this wait always ends, and a call never returns while its buffers are in use.
//! - Bad arguments of a member's own are recorded before it arrives, so the meeting fails for
//!   all. A member whose partner's post describes a different call never touches that partner's
//!   buffers; a checked team (the default) turns every such difference into an error for
//!   all before any data moves, and a stall report names members that never come.
//! - A dropped member breaks the team: the others' waits for it return [`Error::Broken`], for the
//!   call they are in or at the latest for their next. It can only be dropped outside a call (a
//!   forgotten pending call is finished first, moving no data), so it never leaves others'
//!   buffers in use. Whatever its last call was, its drop ends every wait of the others in it:
//!   where that call differed from theirs (possible only in an unchecked team), it first
//!   releases every owner whose own post counts it as a reader, though it read nothing of theirs,
//!   and breaks the team from that call, so that a closing meeting it never attended gives up
//!   too. Only the wait for a member's own readers never gives up; it ends because every live
//!   reader finishes without waiting for anyone, and a dropped one released it.
//! - An operator that panics is caught; the member finishes its duties to the others, every
//!   member gets [`Error::Broken`], and the panic then continues in its own thread.
//!
//! [`Error::Broken`]: crate::Error::Broken

mod arguments;
mod builder;
mod call;
mod check;
mod collective_future;
mod collectives;
mod combiner;
mod complete;
mod engine;
mod kind;
mod light;
mod meeting;
mod member;
mod movement;
mod nonblocking;
mod pending;
mod post;
mod reduce_group;
mod shared;
mod signature;
mod slot;
mod split;
mod sync_mode;

pub(crate) use builder::checked_from_env;
pub use builder::{Team, TeamBuilder, CHECKED_ENV, MAX_MEMBERS};
pub use collective_future::CollectiveFuture;
pub use kind::Kind;
pub use member::Member;
pub use pending::Pending;
pub use split::NONE;
pub use sync_mode::SyncMode;
