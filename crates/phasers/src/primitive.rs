//! The one switch between `std` and `loom`.
//!
//! Every atomic, cell, `Arc` and thread operation of the crate goes through this module, so the loom
//! models (`--cfg phasers_loom`) explore exactly the code that ships. Outside loom these are plain
//! re-exports with no cost.

#[cfg(not(phasers_loom))]
mod imp {
    pub(crate) use std::hint::spin_loop;
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
    pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
    pub(crate) use std::thread::yield_now;

    /// A small number that tells this thread from the others: threads get 0, 1, 2, ... in the
    /// order they first ask, so the first threads to ask get distinct numbers (a hash of the
    /// thread's id would make two of a few threads collide as often as not).
    pub(crate) fn thread_index() -> usize {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        std::thread_local! {
            static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed);
        }
        INDEX.with(|index| *index)
    }

    /// The atomic behind a sub-phaser's word (`phaser/word.rs`); see the loom build's.
    pub(crate) use std::sync::atomic::AtomicU64 as WordAtomic;

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
    pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
    pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
    pub(crate) use loom::thread::yield_now;

    /// The std build's thread number, from loom's thread id: the same in every execution of a
    /// model, as loom's replay needs (a process-wide counter would go on counting across them).
    /// The id's number is read from its `Debug` form, `ThreadId(N)`: the id itself also holds
    /// the execution's number, so hashing it made the models nondeterministic.
    pub(crate) fn thread_index() -> usize {
        let id = format!("{:?}", loom::thread::current().id());
        id.bytes()
            .filter(u8::is_ascii_digit)
            .fold(0, |number, digit| number * 10 + usize::from(digit - b'0'))
    }

    /// A sub-phaser's word (`phaser/word.rs`) under loom: a loom mutex, as atomic as the word, on
    /// which loom explores every order of the operations, each one sequentially consistent. With
    /// loom's own `AtomicU64`, whose loads may return any store not yet overwritten for them, the
    /// phaser's models ran 17 to 50 times longer (3.5 s to 61 s for
    /// `accumulator_phases_do_not_mix::flat`, 2026-11-30), too long for CI with the tree models,
    /// which already take minutes. The models therefore check the protocol's interleavings, not
    /// the weaker orderings the word's `Acquire`/`Release` operations allow: the same coverage as
    /// when the word was 128 bits, which loom has no atomic for.
    #[derive(Debug)]
    pub(crate) struct WordAtomic(loom::sync::Mutex<u64>);

    impl WordAtomic {
        pub(crate) fn new(value: u64) -> Self {
            Self(loom::sync::Mutex::new(value))
        }

        pub(crate) fn load(&self, _: Ordering) -> u64 {
            *self.0.lock().expect("no loom thread panics holding a word")
        }

        pub(crate) fn store(&self, value: u64, _: Ordering) {
            *self.0.lock().expect("no loom thread panics holding a word") = value;
        }

        pub(crate) fn compare_exchange(
            &self,
            current: u64,
            new: u64,
            _: Ordering,
            _: Ordering,
        ) -> Result<u64, u64> {
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
