//! A wait word all sleepers of a [`Signal`](super::Signal) share, so one system call wakes them
//! all.
//!
//! Outside loom this is the kernel's futex (through `atomic_wait`): `wait(e)` sleeps only while
//! the word still holds `e`, compared atomically with the queueing, and `wake_all` bumps the word
//! and then wakes every sleeper. On Linux, `wait_until` is the same futex wait with a timeout
//! (`atomic_wait` has none), so timed sleepers share the one wake-up system call. Under loom it is
//! a mutex and condition variable with that same contract, so the loom models check the protocol
//! built on it rather than trust it.

#[cfg(not(phasers_loom))]
use std::sync::atomic::{AtomicU32, Ordering};

#[cfg(phasers_loom)]
use loom::sync::atomic::{AtomicU32, Ordering};

/// The word sleepers wait on: `linux_futex`'s on Linux, for its timed waits (`atomic_wait` has
/// none), a plain atomic elsewhere. Both are an `AtomicU32` in memory.
#[cfg(all(target_os = "linux", not(phasers_loom)))]
type Word = linux_futex::Futex<linux_futex::Private>;
#[cfg(not(all(target_os = "linux", not(phasers_loom))))]
type Word = AtomicU32;

/// A 32-bit epoch that every wake bumps.
pub(crate) struct Futex {
    word: Word,
    #[cfg(phasers_loom)]
    lock: loom::sync::Mutex<()>,
    #[cfg(phasers_loom)]
    sleepers: loom::sync::Condvar,
}

impl Futex {
    pub(crate) fn new() -> Self {
        Futex {
            word: Word::new(0),
            #[cfg(phasers_loom)]
            lock: loom::sync::Mutex::new(()),
            #[cfg(phasers_loom)]
            sleepers: loom::sync::Condvar::new(),
        }
    }

    /// The epoch as an atomic, whatever wraps it.
    #[inline]
    fn epoch_word(&self) -> &AtomicU32 {
        #[cfg(all(target_os = "linux", not(phasers_loom)))]
        return &self.word.value;
        #[cfg(not(all(target_os = "linux", not(phasers_loom))))]
        return &self.word;
    }

    /// The current epoch, to be read before the sleeper validates its condition (`Acquire`, so a
    /// sleeper that reads a wake's bump also sees what the waker wrote before it).
    #[inline]
    pub(crate) fn epoch(&self) -> u32 {
        self.epoch_word().load(Ordering::Acquire)
    }

    /// Sleeps while the epoch is still `epoch`. May return spuriously.
    pub(crate) fn wait(&self, epoch: u32) {
        #[cfg(not(phasers_loom))]
        atomic_wait::wait(self.epoch_word(), epoch);
        #[cfg(phasers_loom)]
        {
            let guard = self
                .lock
                .lock()
                .expect("no loom thread panics while holding the futex lock");
            if self.epoch_word().load(Ordering::Relaxed) == epoch {
                drop(self.sleepers.wait(guard));
            }
        }
    }

    /// Sleeps while the epoch is still `epoch`, until `deadline` at the latest. May return
    /// spuriously.
    #[cfg(all(target_os = "linux", not(phasers_loom)))]
    pub(crate) fn wait_until(&self, epoch: u32, deadline: std::time::Instant) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return;
        }
        // The same futex word `atomic_wait` sleeps on, so one wake reaches timed and untimed
        // sleepers alike. Every outcome (woken, timed out, interrupted, the epoch already moved)
        // sends the caller back to check its condition, so the result carries nothing to act on.
        let _ = self.word.wait_for(epoch, left);
    }

    /// Bumps the epoch (`Release`, after whatever the waker changed), then wakes every sleeper.
    pub(crate) fn wake_all(&self) {
        self.epoch_word().fetch_add(1, Ordering::Release);
        #[cfg(not(phasers_loom))]
        atomic_wait::wake_all(self.epoch_word());
        #[cfg(phasers_loom)]
        {
            let _guard = self
                .lock
                .lock()
                .expect("no loom thread panics while holding the futex lock");
            self.sleepers.notify_all();
        }
    }
}
