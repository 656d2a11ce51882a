//! The threads of one rank in a threaded row: they live for the whole row and run one task at a
//! time when the row's main thread asks, which times the task and waits for all of them. Between
//! tasks they sleep on a `std::sync::Barrier`, so the main thread may call MPI safely (nobody else
//! is in MPI) and the cores stay free.
//!
//! [`with_led_crew`] makes the main thread the first worker, as an OpenMP master is a member of
//! its team: only the others are woken for each task. Waking every worker while the caller sleeps
//! lets the scheduler put two freshly woken workers on one core, and a sample can then run with
//! threads taking turns there (on the 2-core VM the combined grid's 1 x 2 cell went from about
//! 0.4 to 2.5 µs a barrier in half the runs).

use std::sync::{Barrier, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error::{BenchError, Result};

/// What the threads do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// The correctness check (see `check`).
    Check,
    /// `n` operations.
    Run(u64),
}

struct Shared {
    /// The next task; `None` tells the threads to finish.
    task: Mutex<Option<Task>>,
    go: Barrier,
    done: Barrier,
    failure: Mutex<Option<BenchError>>,
}

/// A worker run by the calling thread.
type CallerWorker<'a> = &'a mut (dyn FnMut(Task) -> Result<()> + 'a);

/// Hands tasks to the crew.
pub struct Dispatch<'a> {
    shared: &'a Shared,
    /// The worker the calling thread runs itself, if it leads the crew.
    caller: Option<CallerWorker<'a>>,
}

impl Dispatch<'_> {
    /// Runs `task` on every thread and returns how long the slowest took, from this thread's
    /// view; the first error of any thread.
    pub fn run(&mut self, task: Task) -> Result<Duration> {
        *lock(&self.shared.task) = Some(task);
        let start = Instant::now();
        self.shared.go.wait();
        if let Some(worker) = self.caller.as_mut() {
            if let Err(error) = worker(task) {
                lock(&self.shared.failure).get_or_insert(error);
            }
        }
        self.shared.done.wait();
        let took = start.elapsed();
        match lock(&self.shared.failure).take() {
            Some(error) => Err(error),
            None => Ok(took),
        }
    }
}

/// Starts one thread per worker, gives `body` the dispatcher, and ends the threads when `body`
/// returns. A worker that fails should give up its handle on the object under test (so that
/// its siblings see a broken barrier rather than hang) and keep answering with errors.
pub fn with_crew<W, T>(
    workers: Vec<W>,
    body: impl FnOnce(&mut Dispatch<'_>) -> Result<T>,
) -> Result<T>
where
    W: FnMut(Task) -> Result<()> + Send,
{
    crew(None, workers, body)
}

/// [`with_crew`], with the calling thread running `caller` as one more worker; a worker per
/// other thread. The calling thread is then in the task when `body`'s dispatch returns control
/// only after every worker, itself included, is done.
pub fn with_led_crew<W, T>(
    mut caller: W,
    others: Vec<W>,
    body: impl FnOnce(&mut Dispatch<'_>) -> Result<T>,
) -> Result<T>
where
    W: FnMut(Task) -> Result<()> + Send,
{
    crew(Some(&mut caller), others, body)
}

fn crew<W, T>(
    caller: Option<CallerWorker<'_>>,
    workers: Vec<W>,
    body: impl FnOnce(&mut Dispatch<'_>) -> Result<T>,
) -> Result<T>
where
    W: FnMut(Task) -> Result<()> + Send,
{
    let shared = Shared {
        task: Mutex::new(None),
        go: Barrier::new(workers.len() + 1),
        done: Barrier::new(workers.len() + 1),
        failure: Mutex::new(None),
    };
    std::thread::scope(|s| {
        for mut worker in workers {
            let shared = &shared;
            s.spawn(move || loop {
                shared.go.wait();
                let Some(task) = *lock(&shared.task) else {
                    return;
                };
                if let Err(error) = worker(task) {
                    lock(&shared.failure).get_or_insert(error);
                }
                shared.done.wait();
            });
        }
        let result = body(&mut Dispatch {
            shared: &shared,
            // Coerced to the dispatch's shorter lifetime.
            caller: caller.map(|worker| worker as CallerWorker<'_>),
        });
        *lock(&shared.task) = None;
        shared.go.wait();
        result
    })
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The guarded values stay valid whatever a panicking holder did.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn runs_tasks_on_every_thread_and_reports_errors() {
        let count = AtomicU64::new(0);
        let workers: Vec<_> = (0..3)
            .map(|i| {
                let count = &count;
                move |task| match task {
                    Task::Run(n) => {
                        count.fetch_add(n, Ordering::Relaxed);
                        Ok(())
                    }
                    Task::Check if i == 1 => Err(BenchError::check("t", "boom")),
                    Task::Check => Ok(()),
                }
            })
            .collect();
        let checked = with_crew(workers, |d| {
            d.run(Task::Run(5))?;
            d.run(Task::Run(2))?;
            Ok(d.run(Task::Check).is_err())
        })
        .unwrap();
        assert!(checked);
        assert_eq!(count.load(Ordering::Relaxed), 21);
    }

    #[test]
    fn a_led_crew_runs_the_caller_too() {
        let caller_thread = std::thread::current().id();
        let on_caller = AtomicU64::new(0);
        let elsewhere = AtomicU64::new(0);
        let workers: Vec<_> = (0..3)
            .map(|_| {
                let (on_caller, elsewhere) = (&on_caller, &elsewhere);
                move |task| {
                    let Task::Run(n) = task else {
                        return Err(BenchError::check("t", "no check here"));
                    };
                    let mine = if std::thread::current().id() == caller_thread {
                        on_caller
                    } else {
                        elsewhere
                    };
                    mine.fetch_add(n, Ordering::Relaxed);
                    Ok(())
                }
            })
            .collect();
        let mut workers = workers.into_iter();
        let first = workers.next().unwrap();
        let failed = with_led_crew(first, workers.collect(), |d| {
            d.run(Task::Run(4))?;
            Ok(d.run(Task::Check).is_err())
        })
        .unwrap();
        assert!(failed, "every worker's error reaches the dispatcher");
        assert_eq!(on_caller.load(Ordering::Relaxed), 4);
        assert_eq!(elsewhere.load(Ordering::Relaxed), 8);
    }
}
