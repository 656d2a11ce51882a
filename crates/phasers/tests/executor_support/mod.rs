//! The executors the async tests run tasks on, with no runtime: `block_on` parks the polling
//! thread until the waker unparks it, and `Pool` runs many tasks on a few threads, each task
//! re-queued by its waker. Every wait that could hang is bounded by `within`, which fails the
//! test instead.

#![allow(dead_code)] // each file uses its part

use std::collections::VecDeque;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

/// How long any one test may wait for something before it counts as hung.
pub const HANG: Duration = Duration::from_secs(60);

/// Wakes the thread that polls.
pub struct Unpark(pub std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` on this thread until it completes, parking between polls.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::park();
    }
}

/// Counts its wakes: a waker whose wakes a test checks for.
pub struct Count(pub AtomicUsize);

impl Count {
    /// A fresh count of 0.
    pub fn new() -> Arc<Count> {
        Arc::new(Count(AtomicUsize::new(0)))
    }

    /// The wakes so far.
    pub fn wakes(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A waker that does nothing, for polls whose wake is not needed (`Waker::noop` needs Rust 1.85).
pub fn nothing() -> Waker {
    struct Nothing;
    impl Wake for Nothing {
        fn wake(self: Arc<Self>) {}
    }
    Waker::from(Arc::new(Nothing))
}

/// Polls `future` once.
pub fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(&nothing()))
}

/// Polls each of `futures` once with `waker`, each of which must then wait (`Pending`).
pub fn poll_each_pending<F: Future + Unpin>(futures: &mut [F], waker: &Waker) {
    for future in futures {
        let polled = Pin::new(future).poll(&mut Context::from_waker(waker));
        assert!(polled.is_pending(), "a future that should wait completed");
    }
}

/// Polls `future` with a waker of its own until it completes, for a task that pays the wakes its
/// release owes a batch per poll: each `Pending` must have woken the task itself, and
/// `each_pending` checks what else holds then. Returns the output and the number of polls.
pub fn poll_while_paying<F: Future + Unpin>(
    future: &mut F,
    mut each_pending: impl FnMut(),
) -> (F::Output, usize) {
    let itself = Count::new();
    let waker = Waker::from(itself.clone());
    let mut polls = 0;
    loop {
        polls += 1;
        match Pin::new(&mut *future).poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(output) => return (output, polls),
            Poll::Pending => {
                assert_eq!(
                    itself.wakes(),
                    polls,
                    "a paying task wakes itself each poll"
                );
                each_pending();
            }
        }
    }
}

/// Runs `f` on a thread of its own and returns its result, failing the test if it takes longer
/// than [`HANG`].
pub fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || sender.send(f()));
    receiver
        .recv_timeout(HANG)
        .expect("a wait hung (or its thread panicked)")
}

pub type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One task of a [`Pool`]: its future, and whether it is queued.
struct Job {
    future: Mutex<Option<Task>>,
    queued: AtomicBool,
    pool: Arc<Shared>,
}

struct Shared {
    queue: Mutex<VecDeque<Arc<Job>>>,
    ready: Condvar,
    /// Tasks not yet complete.
    left: AtomicUsize,
}

impl Wake for Job {
    fn wake(self: Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            let pool = self.pool.clone();
            pool.queue.lock().unwrap().push_back(self);
            pool.ready.notify_one();
        }
    }
}

/// Many tasks on a few threads: enough of an executor to run thousands of tasks on two threads.
pub struct Pool;

impl Pool {
    /// Runs every task to completion on `threads` threads.
    pub fn run(threads: usize, tasks: Vec<Task>) {
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            left: AtomicUsize::new(tasks.len()),
        });
        for task in tasks {
            let job = Arc::new(Job {
                future: Mutex::new(Some(task)),
                queued: AtomicBool::new(true),
                pool: shared.clone(),
            });
            shared.queue.lock().unwrap().push_back(job);
        }
        std::thread::scope(|s| {
            for _ in 0..threads {
                let shared = &shared;
                s.spawn(move || Pool::work(shared));
            }
        });
    }

    fn work(shared: &Arc<Shared>) {
        loop {
            let job = {
                let mut queue = shared.queue.lock().unwrap();
                loop {
                    if shared.left.load(Ordering::Acquire) == 0 {
                        return;
                    }
                    if let Some(job) = queue.pop_front() {
                        break job;
                    }
                    queue = shared.ready.wait_timeout(queue, HANG).unwrap().0;
                }
            };
            job.queued.store(false, Ordering::Release);
            let waker = Waker::from(job.clone());
            let mut slot = job.future.lock().unwrap();
            let Some(future) = slot.as_mut() else {
                continue; // completed already; a late wake queued it again
            };
            if future
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_ready()
            {
                *slot = None;
                if shared.left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    let _queue = shared.queue.lock().unwrap();
                    shared.ready.notify_all();
                }
            }
        }
    }
}
