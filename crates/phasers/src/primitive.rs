//! The one switch between `std` and `loom`.
//!
//! Every atomic, cell, `Arc` and thread operation of the crate goes through this module, so the loom
//! models (`--cfg phasers_loom`) explore exactly the code that ships. Outside loom these are plain
//! re-exports with no cost.

#[cfg(not(phasers_loom))]
mod imp {
    pub(crate) use std::hint::spin_loop;
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    pub(crate) use std::sync::{Arc, Mutex, MutexGuard, RwLock};
    pub(crate) use std::thread::yield_now;

    /// A 128-bit atomic: `lock cmpxchg16b` on x86-64 (detected at run time), a lock elsewhere.
    pub(crate) use portable_atomic::AtomicU128;

    /// An `UnsafeCell` with loom's closure-based API, so call sites read the same in both builds.
    #[derive(Debug)]
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(std::cell::UnsafeCell::new(value))
        }

        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
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
    pub(crate) use loom::sync::{Arc, Mutex, MutexGuard, RwLock};
    pub(crate) use loom::thread::yield_now;

    /// Loom has no 128-bit atomic; a loom mutex gives the same atomicity, and loom explores every
    /// order of the operations on it.
    #[derive(Debug)]
    pub(crate) struct AtomicU128(loom::sync::Mutex<u128>);

    impl AtomicU128 {
        pub(crate) fn new(value: u128) -> Self {
            Self(loom::sync::Mutex::new(value))
        }

        pub(crate) fn load(&self, _: Ordering) -> u128 {
            *self.0.lock().expect("no loom thread panics holding a word")
        }

        pub(crate) fn store(&self, value: u128, _: Ordering) {
            *self.0.lock().expect("no loom thread panics holding a word") = value;
        }

        pub(crate) fn compare_exchange(
            &self,
            current: u128,
            new: u128,
            _: Ordering,
            _: Ordering,
        ) -> Result<u128, u128> {
            let mut word = self.0.lock().expect("no loom thread panics holding a word");
            if *word == current {
                *word = new;
                Ok(current)
            } else {
                Err(*word)
            }
        }
    }
}

pub(crate) use imp::*;
