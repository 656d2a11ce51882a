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

/// A 32-bit epoch that every wake bumps.
pub(crate) struct Futex {
    epoch: AtomicU32,
    #[cfg(phasers_loom)]
    lock: loom::sync::Mutex<()>,
    #[cfg(phasers_loom)]
    sleepers: loom::sync::Condvar,
}

impl Futex {
    pub(crate) fn new() -> Self {
        Futex {
            epoch: AtomicU32::new(0),
            #[cfg(phasers_loom)]
            lock: loom::sync::Mutex::new(()),
            #[cfg(phasers_loom)]
            sleepers: loom::sync::Condvar::new(),
        }
    }

    /// The current epoch, to be read before the sleeper validates its condition (`Acquire`, so a
    /// sleeper that reads a wake's bump also sees what the waker wrote before it).
    #[inline]
    pub(crate) fn epoch(&self) -> u32 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Sleeps while the epoch is still `epoch`. May return spuriously.
    pub(crate) fn wait(&self, epoch: u32) {
        #[cfg(not(phasers_loom))]
        atomic_wait::wait(&self.epoch, epoch);
        #[cfg(phasers_loom)]
        {
            let guard = self
                .lock
                .lock()
                .expect("no loom thread panics while holding the futex lock");
            if self.epoch.load(Ordering::Relaxed) == epoch {
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
        // A relative timeout, measured by the kernel on CLOCK_MONOTONIC, the clock of `Instant`.
        let timeout = libc::timespec {
            tv_sec: left.as_secs().min(libc::time_t::MAX as u64) as libc::time_t,
            tv_nsec: left.subsec_nanos() as _,
        };
        // SAFETY: `FUTEX_WAIT` reads the 32-bit word at the address of `self.epoch`, which lives
        // as long as `self`, and the timespec on this stack frame; it writes neither. It returns
        // at once if the word no longer holds `epoch`, on a wake, a signal or the timeout.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                &self.epoch as *const AtomicU32,
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                epoch,
                &timeout as *const libc::timespec,
            );
        }
    }

    /// Bumps the epoch (`Release`, after whatever the waker changed), then wakes every sleeper.
    pub(crate) fn wake_all(&self) {
        self.epoch.fetch_add(1, Ordering::Release);
        #[cfg(not(phasers_loom))]
        atomic_wait::wake_all(&self.epoch);
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
