//! The one switch between `std` and `loom`.
//!
//! Every atomic, cell, `Arc` and thread operation of the crate goes through this module, so the loom
//! models (`--cfg phasers_loom`) explore exactly the code that ships. Outside loom these are plain
//! re-exports with no cost.

#[cfg(not(phasers_loom))]
mod imp {
    pub(crate) use std::hint::spin_loop;
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    pub(crate) use std::sync::Arc;
    pub(crate) use std::thread::yield_now;

    /// An `UnsafeCell` with loom's closure-based API, so call sites read the same in both builds.
    #[derive(Debug)]
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(std::cell::UnsafeCell::new(value))
        }

        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

#[cfg(phasers_loom)]
mod imp {
    pub(crate) use loom::cell::UnsafeCell;
    pub(crate) use loom::hint::spin_loop;
    pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    pub(crate) use loom::sync::Arc;
    pub(crate) use loom::thread::yield_now;
}

pub(crate) use imp::*;
