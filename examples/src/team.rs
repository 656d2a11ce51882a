//! Running one application's threads and timing them, the same way for every barrier kind.
//!
//! Each thread gets its rank and a [`Waiter`]. Threads first meet at a control barrier
//! (`std::sync::Barrier`, outside the timed region, so thread start-up is not timed); each then
//! reads the clock, runs its part and reads the clock again. The run's time is from the earliest
//! start to the latest end: the last thread to finish is when the result is ready.

use std::any::Any;
use std::time::{Duration, Instant};

use crate::sync::{Handles, Waiter};

/// What the threads of a run returned, and how long the run took.
pub(crate) struct TeamRun<R> {
    /// Each thread's result, in rank order.
    pub results: Vec<R>,
    /// From the earliest thread's start to the latest thread's end.
    pub elapsed: Duration,
    /// Barrier waits made by rank 0.
    pub waits: u64,
}

/// Runs `body(rank, waiter)` on one thread per handle; `Err` names the first thread that
/// panicked and its message.
pub(crate) fn run<R, F>(handles: Handles<'_>, body: F) -> Result<TeamRun<R>, String>
where
    R: Send,
    F: Fn(usize, &mut Waiter<'_>) -> R + Sync,
{
    let threads = handles.len();
    let control = std::sync::Barrier::new(threads);
    let outcomes: Vec<std::thread::Result<(R, Instant, Instant, u64)>> = std::thread::scope(|s| {
        let spawned: Vec<_> = handles
            .into_iter()
            .enumerate()
            .map(|(rank, handle)| {
                let (control, body) = (&control, &body);
                s.spawn(move || {
                    let mut waiter = Waiter::new(handle);
                    control.wait();
                    let start = Instant::now();
                    let result = body(rank, &mut waiter);
                    (result, start, Instant::now(), waiter.waits())
                })
            })
            .collect();
        spawned.into_iter().map(|thread| thread.join()).collect()
    });
    let mut results = Vec::with_capacity(threads);
    let mut first_start: Option<Instant> = None;
    let mut last_end: Option<Instant> = None;
    let mut waits = 0;
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            Ok((result, start, end, thread_waits)) => {
                results.push(result);
                first_start = Some(first_start.map_or(start, |first| first.min(start)));
                last_end = Some(last_end.map_or(end, |last| last.max(end)));
                if rank == 0 {
                    waits = thread_waits;
                }
            }
            Err(payload) => {
                return Err(format!(
                    "thread {rank} panicked: {}",
                    panic_message(&*payload)
                ))
            }
        }
    }
    let elapsed = match (first_start, last_end) {
        (Some(start), Some(end)) => end.saturating_duration_since(start),
        _ => return Err("a run needs at least 1 thread".to_owned()),
    };
    Ok(TeamRun {
        results,
        elapsed,
        waits,
    })
}

/// The text of a panic's payload.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with no message".to_owned()
    }
}

/// The first and one-past-last index of `rank`'s block when `items` are split among `threads`
/// in contiguous blocks whose sizes differ by at most one.
pub(crate) fn block(items: usize, threads: usize, rank: usize) -> std::ops::Range<usize> {
    let base = items / threads;
    let extra = items % threads;
    let start = rank * base + rank.min(extra);
    let len = base + usize::from(rank < extra);
    start..start + len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::SyncKind;

    #[test]
    fn blocks_cover_every_item_once() {
        for items in [0, 1, 7, 100] {
            for threads in 1..6 {
                let mut next = 0;
                for rank in 0..threads {
                    let range = block(items, threads, rank);
                    assert_eq!(range.start, next);
                    assert!(range.len() <= items / threads + 1);
                    next = range.end;
                }
                assert_eq!(next, items);
            }
        }
    }

    #[test]
    fn results_come_back_in_rank_order_with_waits() {
        let run = SyncKind::Std
            .with_handles(3, |handles| {
                run(handles, |rank, waiter| {
                    waiter.wait();
                    waiter.wait();
                    rank * 10
                })
            })
            .unwrap()
            .unwrap();
        assert_eq!(run.results, vec![0, 10, 20]);
        assert_eq!(run.waits, 2);
    }

    #[test]
    fn a_panicking_thread_fails_the_run_and_breaks_our_barrier() {
        let kind = SyncKind::Ours(phasers::Algorithm::Auto);
        let error = kind
            .with_handles(2, |handles| {
                run(handles, |rank, waiter| {
                    if rank == 1 {
                        panic!("injected");
                    }
                    waiter.wait();
                })
            })
            .unwrap()
            .err()
            .unwrap();
        assert!(error.contains("panicked"), "{error}");
    }
}
