//! The threads of one rank in a threaded row: they live for the whole row and run one task at a
//! time when the row's main thread asks, which times the task and waits for all of them. Between
//! tasks they sleep on a `std::sync::Barrier`, so the main thread may call MPI safely (nobody else
//! is in MPI) and the cores stay free.

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

/// Hands tasks to the crew.
pub struct Dispatch<'a> {
    shared: &'a Shared,
}

impl Dispatch<'_> {
    /// Runs `task` on every thread and returns how long the slowest took, from this thread's
    /// view; the first error of any thread.
    pub fn run(&mut self, task: Task) -> Result<Duration> {
        *lock(&self.shared.task) = Some(task);
        let start = Instant::now();
        self.shared.go.wait();
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
        let result = body(&mut Dispatch { shared: &shared });
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
}
