//! The one switch between `std` and `loom` for the memory this crate's threads and ranks share.
//!
//! The lock-free protocols of phasers-mpi (the node-shm counters, the combined barrier's failure
//! record) take their atomics, locks, `Arc`s and thread-locals from here, so the loom models
//! (`tests/loom_*.rs`, built with `--cfg phasers_loom` by `scripts/loom.sh`) explore exactly the
//! code that ships. Outside loom everything is a plain re-export of `std`, at no cost.
//!
//! A protocol joins the models in three steps:
//!
//! 1. Take `crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering}` (and [`Arc`], [`Mutex`],
//!    [`const_thread_local!`](const_thread_local)) from here instead of `std`. `Ordering` is `std`'s in both
//!    builds (loom re-exports it).
//! 2. In every loop that spins on shared memory, call [`spin_loop`] (a CPU hint outside loom; under
//!    loom a yield, so that the model schedules the thread that will change the value instead of
//!    reporting the spin as an endless execution), or [`yield_now`] where the real code yields.
//! 3. Keep whatever talks to MPI out of the protocol: loom cannot run MPI, so a model drives the
//!    protocol with a stub in place of the network step (see `process/node_gather.rs` and
//!    `combined/process_side.rs`), and `loom_api.rs` hands the protocol to the models.
//!
//! Memory that is not this process's heap stays on `std`'s atomics in both builds: the counters
//! that `node_memory.rs` maps from a file live in another process too, and a loom atomic cannot.
//! The protocols reach such memory through a trait they are generic over (e.g.
//! `node_gather::NodeSlots`), which the models implement with loom atomics.
//!
//! Under loom, `std::thread_local!` would be one variable for every loom thread (loom runs them
//! all on one OS thread), so thread-locals that a protocol reads go through
//! [`const_thread_local!`](const_thread_local) here too: `std`'s with a `const` initializer, or
//! loom's, which takes none.

#[cfg(not(phasers_loom))]
mod imp {
    /// Atomics: `std`'s.
    pub(crate) mod atomic {
        // AtomicUsize is for the hybrid team's shared-memory meeting, whose model comes next.
        #[allow(unused_imports)]
        pub(crate) use std::sync::atomic::AtomicUsize;
        pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
    }
    pub(crate) use std::hint::spin_loop;
    pub(crate) use std::sync::{Arc, Mutex};
    pub(crate) use std::thread::yield_now;
}

#[cfg(phasers_loom)]
mod imp {
    /// Atomics: loom's, which explore every value a load may return under the memory model.
    pub(crate) mod atomic {
        #[allow(unused_imports)]
        pub(crate) use loom::sync::atomic::AtomicUsize;
        pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
    }
    pub(crate) use loom::hint::spin_loop;
    pub(crate) use loom::sync::{Arc, Mutex};
    pub(crate) use loom::thread::yield_now;
}

/// `thread_local! { static NAME: Type = init; }` with a `const` initializer outside loom (no lazy
/// initialization on each access); under loom, loom's thread-local, one per loom thread, whose
/// macro takes no `const` block.
macro_rules! const_thread_local {
    ($(#[$attribute:meta])* static $name:ident: $ty:ty = $init:expr;) => {
        #[cfg(not(phasers_loom))]
        std::thread_local! { $(#[$attribute])* static $name: $ty = const { $init }; }
        #[cfg(phasers_loom)]
        loom::thread_local! { $(#[$attribute])* static $name: $ty = $init; }
    };
}

pub(crate) use const_thread_local;
pub(crate) use imp::{atomic, Arc, Mutex};
// The hooks for protocols that spin or yield themselves (the hybrid meeting's). None of today's
// does: the node-shm counters are polled by `progress.rs`, which the models replace by their own
// loops, and the failure record never waits.
#[allow(unused_imports)]
pub(crate) use imp::{spin_loop, yield_now};
