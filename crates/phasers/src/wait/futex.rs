//! Where the sleepers of a [`Signal`](super::Signal) sleep, and how a release wakes them: all
//! with one system call, or through a tree in which every woken sleeper wakes the next ones.
//!
//! # The words
//!
//! - **epoch**: a 31-bit counter that every wake bumps, above a `SLEEPERS` bit (bit 0). A sleeper
//!   reads it before it validates its condition and sleeps only while it is unchanged (`wait(e)`
//!   is the kernel's compare and queue, atomically), so a wake between the two is never lost.
//!
//! # Why a release may skip the system call
//!
//! Async tasks mark a signal's word as threads do (see `signal.rs`), so a release that finds the
//! word marked does not know whether a thread sleeps. With only tasks waiting, the `FUTEX_WAKE`
//! it made anyway was a system call for nobody: with 2 tasks on 2 tokio workers, about 10% of
//! the phaser's samples (2-core AMD EPYC VM, 2026-12-01). So the first sleeper sets `SLEEPERS`
//! before it queues, by a compare-and-swap from the epoch it read, and queues on the marked value;
//! a release bumps the counter by an add that leaves the bit as it is, and calls the kernel only if
//! the bit was set. Both are read-modify-writes of one word, so they are ordered: if the mark comes
//! first, the release reads it and wakes; if the release comes first, the mark's compare-and-swap
//! fails on the new counter and the sleeper does not queue. Once set, the bit stays: a word that
//! a thread ever slept on calls the kernel on every release, as every word did before. Clearing it
//! would need the release's bump to be a compare-and-swap loop, and the loom models of sleeping
//! threads ran 2.4 times longer with one (`loom_async`: 123 s against 292 s, 2-core Xeon VM,
//! 2026-12-01) for objects whose waiters change from threads to tasks, which few programs do.
//! - **set aside**: a second word nobody waits on directly. A release by tree moves the sleepers
//!   it does not wake itself here (`FUTEX_REQUEUE`), and from here every woken sleeper wakes the
//!   next ones.
//!
//! # Why a tree, and why it cannot lose a sleeper
//!
//! The kernel wakes the sleepers of one `FUTEX_WAKE` one at a time, each with an inter-processor
//! interrupt (on a VM, through the hypervisor): waking `k` sleepers costs the releaser `k` serial
//! wake calls, and the last sleeper runs `k` of them after the release. By tree, the releaser
//! wakes `f` sleepers and moves the rest aside in the same call; every sleeper that returns from
//! its sleep after the epoch moved wakes `f` of the set-aside ones before it goes on. So `k`
//! sleepers all run after about `log_f k` wakes in sequence.
//!
//! Nobody is left asleep: the set-aside word only ever receives sleepers whose epoch has moved
//! (the move happens after the bump, and a sleeper that compares after the bump does not queue),
//! so every sleeper there is owed a wake. Each wake call that finds it non-empty wakes at least
//! one, which makes one more call; the calls therefore stop only at a call that found it empty.
//! Sleepers that come later for the next epoch queue on the epoch word, never there, so they
//! cannot take a wake meant for a set-aside one. A sleeper woken by a timeout, a signal or its
//! own race with the bump also passes a wake on: a wasted call at worst.
//!
//! Outside Linux and loom, the platform has no requeue: every release wakes all at once.
//!
//! # Under loom
//!
//! Loom cannot run the kernel, so under `--cfg phasers_loom` the two queues are a loom mutex and
//! condition variable with the kernel's contract: a queue per word in arrival order, `wake(n)`
//! takes the first `n`, a requeue relabels the rest. Sleepers are blocked in loom's eyes, so loom
//! checks that no wake is lost, on every interleaving, in both kinds of release.

#[cfg(not(phasers_loom))]
use std::sync::atomic::{AtomicU32, Ordering};

/// Bit 0 of the epoch word: some thread may be queued on it (see the module docs).
const SLEEPERS: u32 = 1;

#[cfg(phasers_loom)]
use loom::sync::atomic::{AtomicU32, Ordering};

/// The word sleepers wait on: `linux_futex`'s on Linux, for its timed waits and requeue
/// (`atomic_wait` has neither), a plain atomic elsewhere. Both are an `AtomicU32` in memory.
#[cfg(all(target_os = "linux", not(phasers_loom)))]
type Word = linux_futex::Futex<linux_futex::Private>;
#[cfg(not(all(target_os = "linux", not(phasers_loom))))]
type Word = AtomicU32;

/// A 32-bit epoch that every wake bumps, and the word a release by tree sets sleepers aside on.
pub(crate) struct Futex {
    word: Word,
    /// Sleepers a release by tree did not wake itself; only `wake` calls reach them. (Loom's
    /// model of the kernel keeps its own queue for them.)
    #[cfg(all(target_os = "linux", not(phasers_loom)))]
    set_aside: Word,
    /// The fanout the latest sleeper asked for (see `WakeFanout`): 0 wakes all at once.
    fanout: AtomicU32,
    #[cfg(phasers_loom)]
    kernel: loom_kernel::Kernel,
}

impl Futex {
    pub(crate) fn new() -> Self {
        Futex {
            word: Word::new(0),
            #[cfg(all(target_os = "linux", not(phasers_loom)))]
            set_aside: Word::new(0),
            fanout: AtomicU32::new(0),
            #[cfg(phasers_loom)]
            kernel: loom_kernel::Kernel::new(),
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

    /// Sets `SLEEPERS` on the epoch word if it still holds `epoch`, for a sleeper about to queue:
    /// the value to queue on, or `None` if a release bumped the counter since `epoch` was read.
    fn mark_sleeper(&self, epoch: u32) -> Option<u32> {
        if epoch & SLEEPERS != 0 {
            return Some(epoch);
        }
        let marked = epoch | SLEEPERS;
        match self.epoch_word().compare_exchange(
            epoch,
            marked,
            Ordering::Acquire,
            Ordering::Acquire,
        ) {
            Ok(_) => Some(marked),
            // Another sleeper marked this same epoch first.
            Err(now) if now == marked => Some(marked),
            Err(_) => None,
        }
    }

    /// Bumps the counter, leaving `SLEEPERS` as it is (`Release`, after whatever the waker
    /// changed). Returns whether the bit is set: whether a thread may be queued.
    fn bump(&self) -> bool {
        let old = self
            .epoch_word()
            .fetch_add(SLEEPERS << 1, Ordering::Release);
        old & SLEEPERS != 0
    }

    /// Records how the next release should wake this word's sleepers: the sleeper's own plan.
    /// Every sleeper of a word belongs to one object, so they ask for the same; where two differ,
    /// either is correct (see the module docs), only the speed differs. Written only when it
    /// changes, so sleepers do not take the line from each other every time.
    pub(crate) fn ask_fanout(&self, fanout: u32) {
        if self.fanout.load(Ordering::Relaxed) != fanout {
            self.fanout.store(fanout, Ordering::Relaxed);
        }
    }

    /// Sleeps while the epoch is still `epoch`, then passes the release on (see
    /// [`pass_on`](Self::pass_on)). May return spuriously.
    pub(crate) fn wait(&self, epoch: u32, fanout: u32) {
        let Some(epoch) = self.mark_sleeper(epoch) else {
            return self.pass_on(epoch, fanout);
        };
        #[cfg(all(not(phasers_loom), target_os = "linux"))]
        let _ = self.word.wait(epoch);
        #[cfg(all(not(phasers_loom), not(target_os = "linux")))]
        atomic_wait::wait(self.epoch_word(), epoch);
        #[cfg(phasers_loom)]
        self.kernel.wait(self.epoch_word(), epoch);
        self.pass_on(epoch, fanout);
    }

    /// Sleeps while the epoch is still `epoch`, until `deadline` at the latest, then passes the
    /// release on. May return spuriously.
    #[cfg(all(target_os = "linux", not(phasers_loom)))]
    pub(crate) fn wait_until(&self, epoch: u32, fanout: u32, deadline: std::time::Instant) {
        let Some(epoch) = self.mark_sleeper(epoch) else {
            return self.pass_on(epoch, fanout);
        };
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if !left.is_zero() {
            // The same futex word as the untimed sleep, so one wake reaches timed and untimed
            // sleepers alike. Every outcome (woken, timed out, interrupted, the epoch already
            // moved) sends the caller back to check its condition, so the result carries nothing
            // to act on.
            let _ = self.word.wait_for(epoch, left);
        }
        self.pass_on(epoch, fanout);
    }

    /// A sleeper back from `wait(epoch)`: if the epoch moved, a release happened, and some of
    /// its sleepers may be set aside; wake `fanout` of them. Nothing when the release woke all.
    #[inline]
    fn pass_on(&self, epoch: u32, fanout: u32) {
        if fanout != 0 && self.epoch() | SLEEPERS != epoch | SLEEPERS {
            self.wake_set_aside(fanout);
        }
    }

    #[cfg(all(target_os = "linux", not(phasers_loom)))]
    fn wake_set_aside(&self, count: u32) {
        self.set_aside.wake(as_count(count));
    }

    #[cfg(phasers_loom)]
    fn wake_set_aside(&self, count: u32) {
        self.kernel.wake(loom_kernel::Queue::SetAside, count);
    }

    #[cfg(not(any(target_os = "linux", phasers_loom)))]
    fn wake_set_aside(&self, _count: u32) {}

    /// Bumps the epoch (`Release`, after whatever the waker changed), then, if a thread may be
    /// queued on it, wakes the sleepers as the latest of them asked: all at once, or `fanout` of
    /// them with the rest set aside for those woken to wake. Sleepers set aside by an earlier
    /// release are woken by the sleepers that release woke, not here.
    pub(crate) fn release(&self) {
        if !self.bump() {
            return;
        }
        let fanout = self.fanout.load(Ordering::Relaxed);
        #[cfg(all(target_os = "linux", not(phasers_loom)))]
        if fanout == 0 {
            self.word.wake(i32::MAX);
        } else {
            self.word
                .requeue(as_count(fanout), &self.set_aside, i32::MAX);
        }
        #[cfg(phasers_loom)]
        self.kernel.release(fanout);
        #[cfg(not(any(target_os = "linux", phasers_loom)))]
        {
            let _ = fanout;
            atomic_wait::wake_all(self.epoch_word());
        }
    }

    /// Bumps the epoch and wakes every sleeper, set aside or not: for an object that breaks, whose
    /// waiters must all look at it now.
    pub(crate) fn wake_all(&self) {
        // Cold, so it wakes whatever the bit says.
        self.bump();
        #[cfg(all(target_os = "linux", not(phasers_loom)))]
        {
            self.word.wake(i32::MAX);
            self.set_aside.wake(i32::MAX);
        }
        #[cfg(phasers_loom)]
        {
            self.kernel.wake(loom_kernel::Queue::Epoch, 0);
            self.kernel.wake(loom_kernel::Queue::SetAside, 0);
        }
        #[cfg(not(any(target_os = "linux", phasers_loom)))]
        atomic_wait::wake_all(self.epoch_word());
    }
}

/// A fanout as the kernel's count (at most `WakeFanout::MAX_FANOUT`, so it always fits).
#[cfg(all(target_os = "linux", not(phasers_loom)))]
fn as_count(fanout: u32) -> i32 {
    i32::try_from(fanout).unwrap_or(i32::MAX)
}

/// The kernel's futex queues, modelled for loom: the contract `Futex` relies on, and no more.
#[cfg(phasers_loom)]
mod loom_kernel {
    use loom::sync::atomic::{AtomicU32, Ordering};
    use loom::sync::{Condvar, Mutex};

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) enum Queue {
        Epoch,
        SetAside,
    }

    /// Sleepers in arrival order, each with a ticket and the queue it is on.
    #[derive(Default)]
    struct Queues {
        next_ticket: u64,
        sleeping: Vec<(u64, Queue)>,
    }

    pub(super) struct Kernel {
        queues: Mutex<Queues>,
        woken: Condvar,
    }

    impl Kernel {
        pub(super) fn new() -> Self {
            Kernel {
                queues: Mutex::new(Queues::default()),
                woken: Condvar::new(),
            }
        }

        fn lock(&self) -> loom::sync::MutexGuard<'_, Queues> {
            self.queues
                .lock()
                .expect("no loom thread panics while holding the futex queues")
        }

        /// Queues on the epoch word if it still holds `epoch` (compared under the lock, as the
        /// kernel compares under its bucket lock), and blocks until some wake takes the ticket.
        pub(super) fn wait(&self, word: &AtomicU32, epoch: u32) {
            let mut queues = self.lock();
            if word.load(Ordering::Relaxed) != epoch {
                return;
            }
            let ticket = queues.next_ticket;
            queues.next_ticket += 1;
            queues.sleeping.push((ticket, Queue::Epoch));
            while queues.sleeping.iter().any(|&(held, _)| held == ticket) {
                queues = self
                    .woken
                    .wait(queues)
                    .expect("no loom thread panics while holding the futex queues");
            }
        }

        /// Wakes the first `count` sleepers of `queue` (all of them for 0).
        pub(super) fn wake(&self, queue: Queue, count: u32) {
            let mut queues = self.lock();
            let woken = take(&mut queues, queue, count);
            drop(queues);
            if woken > 0 {
                self.woken.notify_all();
            }
        }

        /// A release: all of the epoch queue for 0; else its first `fanout`, and the rest moved
        /// to the set-aside queue.
        pub(super) fn release(&self, fanout: u32) {
            let mut queues = self.lock();
            let woken = take(&mut queues, Queue::Epoch, fanout);
            if fanout != 0 {
                for (_, queue) in queues.sleeping.iter_mut() {
                    if *queue == Queue::Epoch {
                        *queue = Queue::SetAside;
                    }
                }
            }
            drop(queues);
            if woken > 0 {
                self.woken.notify_all();
            }
        }
    }

    /// Removes the first `count` sleepers of `queue` (all for 0); returns how many.
    fn take(queues: &mut Queues, queue: Queue, count: u32) -> usize {
        let limit = if count == 0 {
            usize::MAX
        } else {
            count as usize
        };
        let mut taken = 0;
        queues.sleeping.retain(|&(_, on)| {
            if on == queue && taken < limit {
                taken += 1;
                false
            } else {
                true
            }
        });
        taken
    }
}
