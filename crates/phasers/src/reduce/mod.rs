//! Array reductions across threads (seed 003): every participant brings an array, and the
//! element-wise reduction lands at the root ([`Reducer::reduce`], with quick return) or at
//! everyone ([`Reducer::allreduce`]).
//!
//! ```
//! use phasers::{Op, Reduction};
//!
//! let group = Reduction::<f32>::new(4, Op::Sum)?;
//! std::thread::scope(|s| {
//!     for mut p in group.participants() {
//!         s.spawn(move || {
//!             let mine = vec![p.rank() as f32; 1000];
//!             let mut sum = vec![0.0; 1000];
//!             for _ in 0..10 {
//!                 p.allreduce(&mine, &mut sum).unwrap();
//!                 assert!(sum.iter().all(|&x| x == 6.0));
//!             }
//!         });
//!     }
//! });
//! # Ok::<(), phasers::Error>(())
//! ```
//!
//! # Algorithms
//!
//! | [`ReduceAlgorithm`] | how | order | returns |
//! |---|---|---|---|
//! | `Linear` | everyone meets; each reduces 1/N of the array across all inputs | fixed | when all are done |
//! | `StaticTree` | pairs by rank, distance doubling; each pair splits its work | fixed | the slave, once consumed |
//! | `DynamicPairs` | pairs in arrival order through one compare-and-swap word | arrival | the slave, once consumed |
//! | `DynamicGroup` | as `DynamicPairs`, consumed participants help later pairs | arrival | when all are done |
//! | `Auto` | picks per call; see [`ReduceAlgorithm::resolve`] | | |
//!
//! Seed 003 found no algorithm best everywhere: the linear algorithm has the bandwidth for large
//! arrays, the static tree the least contention for small ones when everyone arrives together,
//! and dynamic pairs win when arrivals spread, because most of the tree is reduced before the
//! last participant arrives. BENCHMARKS.md has the measurements on our machines.
//!
//! # Floating point
//!
//! `Linear` and `StaticTree` combine each element in an order fixed by the ranks, so their
//! floating-point results are the same bits on every call for a fixed N (the two orders differ
//! from each other). The dynamic algorithms combine in arrival order, so results may differ in
//! the last bits from call to call. [`ReductionBuilder::deterministic`] forces a fixed order:
//! the dynamic algorithms and `Auto` then run `StaticTree` on every call.
//!
//! # Operators
//!
//! The built-in [`Op`](crate::Op)s for `i32`, `i64`, `u32`, `u64`, `f32` and `f64` run as plain
//! loops the compiler vectorizes. Any `Copy` type reduces with a function of your own
//! ([`Reduction::with_fn`]), which must be associative and commutative: pairs combine in either
//! order. It must not panic either; if it does, the group breaks, the others get
//! [`Error::Broken`](crate::Error::Broken), and the panic goes on in the participant where it
//! happened once no other thread uses its buffers.
//!
//! # Failure
//!
//! - Participants that pass different lengths, call `reduce` and `allreduce` in the same call,
//!   or pass an output of the wrong length, all get
//!   [`Error::Mismatch`](crate::Error::Mismatch) naming both sides, and the group is failed from
//!   then on; the check is always on and costs a matched call no cache-line transfer. See
//!   [`Reduction`'s docs](crate::Reduction#mismatched-calls) for what is compared, when each
//!   participant learns of it, and what the outputs hold.
//! - A handle dropped before the group's last call (its thread panicked, or simply left) breaks
//!   the group: every call from then on returns [`Error::Broken`](crate::Error::Broken) instead
//!   of waiting forever. A participant never returns while another may still use its buffers,
//!   even then: an offer of its data is withdrawn or served (see the `slot` module).
//! - Reductions have no timeout: a participant that never calls leaves the others waiting (parked
//!   after a short spin) until its handle is dropped.
//!
//! # In async tasks
//!
//! [`Reducer::reduce_async`] and [`Reducer::allreduce_async`] are the same calls for a task, on
//! any executor: a task that would wait stores its waker and returns `Pending`, so thousands of
//! participants can share a few threads, and tasks and threads can share a group. A task's call
//! works on copies of its buffers that the group owns (its input copied in at the first poll, the
//! result copied out when the call completes: the price is those copies), so that dropping the
//! future is safe at any point. Dropped before its first poll, it did nothing; dropped after, it
//! breaks the group at that call, as a dropped handle does: nobody waits for it for ever.

mod algorithm;
mod auto;
mod builder;
mod call;
mod dynamic_group;
mod dynamic_pairs;
mod embedded;
mod handle;
mod job;
mod kernel;
mod linear;
mod reduce_future;
mod reducer;
mod shared;
mod signature;
mod slot;
mod staging;
mod static_tree;
mod task_wait;

pub use algorithm::ReduceAlgorithm;
pub use builder::{Reduction, ReductionBuilder, MAX_PARTIES};
pub(crate) use embedded::EmbeddedGroup;
pub use handle::Reducer;
pub(crate) use kernel::{accumulate_with, combine_with, ElementWise, Kernel};
pub(crate) use linear::{reduce_share, share_of};
pub use reducer::ReduceOutcome;
