//! The reduction people write by hand: a `Mutex<Vec<f32>>` each thread locks to add its array in,
//! and a count the root waits on (a `Condvar`), with `allreduce` letting every thread wait and
//! copy the sum out.
//!
//! The first thread in copies its array instead of adding it to zeros, as a careful hand-written
//! version does (no separate clearing pass). A generation number makes each call self-contained:
//! a thread that comes back for the next reduction before the last reader of this one has copied
//! the sum out waits for it, rather than adding into a sum still being read. (The harness's
//! barrier between iterations already prevents that; the generation keeps the type honest.)

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use super::workload::{Arrays, Collective};
use phasers_cli::harness::work::{Failure, Work};

/// The shared sum.
pub struct MutexMerged {
    state: Mutex<State>,
    changed: Condvar,
    parties: usize,
    /// Threads that copy each sum out: 1 (the root) for `reduce`, all for `allreduce`.
    readers: usize,
}

struct State {
    /// The reduction in progress; starts at 0 and counts up.
    generation: u64,
    sum: Vec<f32>,
    /// Threads that have added their array to this generation's sum.
    arrived: usize,
    /// Readers that have copied this generation's sum out.
    collected: usize,
}

/// One thread's handle on a [`MutexMerged`].
pub struct MutexParticipant {
    shared: Arc<MutexMerged>,
    generation: u64,
    arrays: Arrays,
}

/// The participants of a mutex-merged reduction of `len` floats among `threads`.
pub fn participants(
    threads: usize,
    len: usize,
    collective: Collective,
    expected: &Arc<[f32]>,
) -> Vec<MutexParticipant> {
    let shared = Arc::new(MutexMerged {
        state: Mutex::new(State {
            generation: 0,
            sum: vec![0.0; len],
            arrived: 0,
            collected: 0,
        }),
        changed: Condvar::new(),
        parties: threads,
        readers: match collective {
            Collective::Reduce => 1,
            Collective::Allreduce => threads,
        },
    });
    (0..threads)
        .map(|rank| MutexParticipant {
            shared: Arc::clone(&shared),
            generation: 0,
            arrays: Arrays::new(rank, collective, len, expected),
        })
        .collect()
}

impl MutexMerged {
    fn lock(&self) -> Result<MutexGuard<'_, State>, Failure> {
        self.state.lock().map_err(poisoned)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State>) -> Result<MutexGuard<'a, State>, Failure> {
        self.changed.wait(guard).map_err(poisoned)
    }
}

/// A thread panicked holding the lock: the sum may be half added.
fn poisoned<T>(_: PoisonError<T>) -> Failure {
    Failure::Echo("another thread panicked while adding its array in".to_owned())
}

impl MutexParticipant {
    /// Adds `input` in, and copies the sum to `output` if this thread receives it.
    fn merge(&mut self) -> Result<(), Failure> {
        let shared = &*self.shared;
        let generation = self.generation;
        self.generation += 1;
        let mut state = shared.lock()?;
        while state.generation != generation {
            state = shared.wait(state)?;
        }
        let arrays = &mut self.arrays;
        if state.arrived == 0 {
            state.sum.copy_from_slice(&arrays.input);
        } else {
            for (sum, value) in state.sum.iter_mut().zip(&arrays.input) {
                *sum += value;
            }
        }
        state.arrived += 1;
        if state.arrived == shared.parties {
            shared.changed.notify_all();
        }
        if !arrays.receives() {
            return Ok(());
        }
        while state.arrived < shared.parties {
            state = shared.wait(state)?;
        }
        arrays.output.copy_from_slice(&state.sum);
        state.collected += 1;
        if state.collected == shared.readers {
            state.generation += 1;
            state.arrived = 0;
            state.collected = 0;
            shared.changed.notify_all();
        }
        Ok(())
    }
}

impl Work for MutexParticipant {
    // A reduction's non-receivers may return before everyone has arrived.
    const SYNCHRONIZED: bool = false;

    fn prepare(&mut self) -> Result<(), Failure> {
        self.arrays.prepare()
    }

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        self.merge()?;
        Ok(None)
    }

    fn check(&mut self) -> Result<(), Failure> {
        self.arrays.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::workload;

    /// Many merges in a row with no barrier between them, every result checked: the generation
    /// keeps a fast thread out of a sum still being read.
    #[test]
    fn every_receiver_gets_the_sum_every_time_without_a_barrier() {
        for (threads, collective) in [(5, Collective::Reduce), (4, Collective::Allreduce)] {
            let expected: Arc<[f32]> = workload::expected(threads, 64).into();
            std::thread::scope(|s| {
                for mut participant in participants(threads, 64, collective, &expected) {
                    s.spawn(move || {
                        participant.prepare().unwrap();
                        for index in 0..200 {
                            participant.iteration(index).unwrap();
                            participant.check().unwrap();
                        }
                    });
                }
            });
        }
    }
}
