//! The executor of the async loom models: one future at a time per loom thread, polled by hand,
//! the thread parked between polls and unparked by the future's waker.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::thread;

/// Wakes a loom thread parked in [`Poller::block_on`], and counts its wakes.
///
/// A wake sets `notified` before it unparks, and the poller parks only while `notified` is
/// clear, as executors keep a task's "notified" state: loom drops an unpark that reaches a thread
/// blocked on a loom mutex (it makes the thread runnable and saves no token, where `std` would
/// save one), so a wake landing while the task stores its waker under a lock left it parked
/// forever in the models, a deadlock of the harness and not of the library.
struct Unpark {
    thread: thread::Thread,
    woken: AtomicUsize,
    notified: AtomicBool,
}

impl Wake for Unpark {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.woken.fetch_add(1, Ordering::Release);
        // A swap, not a store: under loom the poller's swap could miss a plain store that came
        // before it (a load right after the store, in the waking thread, read the old value).
        self.notified.swap(true, Ordering::AcqRel);
        self.thread.unpark();
    }
}

/// The executor of one loom thread: polls one future at a time by hand, parking between polls.
pub struct Poller {
    unpark: std::sync::Arc<Unpark>,
    waker: Waker,
    /// How often the thread resumed on a wake's notice, over all its futures (a notice outlives
    /// a future: a wake may land in a poll that then completes, its notice left for the next
    /// future's first wait).
    resumes: usize,
}

impl Poller {
    pub fn new() -> Self {
        let unpark = std::sync::Arc::new(Unpark {
            thread: thread::current(),
            woken: AtomicUsize::new(0),
            notified: AtomicBool::new(false),
        });
        Poller {
            waker: Waker::from(unpark.clone()),
            unpark,
            resumes: 0,
        }
    }

    /// Polls `future` until it completes.
    pub fn block_on<F: Future + Unpin>(&mut self, mut future: F) -> F::Output {
        let mut context = Context::from_waker(&self.waker);
        loop {
            match Pin::new(&mut future).poll(&mut context) {
                Poll::Ready(output) => return output,
                Poll::Pending => {
                    while !self.unpark.notified.swap(false, Ordering::Acquire) {
                        thread::park();
                    }
                    // Every resume consumes a distinct wake's notice, and a waker counts before
                    // it notifies: the thread cannot have resumed more often than woken.
                    self.resumes += 1;
                    let woken = self.unpark.woken.load(Ordering::Acquire);
                    assert!(
                        woken >= self.resumes,
                        "a pending task resumed without a wake"
                    );
                }
            }
        }
    }
}
