//! The object behind a `phasers_barrier`: the core barrier, one lockable slot per rank, and what
//! `destroy` needs to tell a thread blocked in an unfinished episode (`PHASERS_EBUSY`) from one
//! that was released and is only returning (`destroy` waits for it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use phasers_core::{Algorithm, Barrier, Participant, WaitResult};

use crate::entry::DropOnUnwind;
use crate::status::{Failure, PHASERS_EPANIC};

/// One rank's participant and its progress, on its own cache lines: ranks are used by different
/// threads, and the progress word is written on every wait. 128 bytes because adjacent-line
/// prefetch pairs 64-byte lines (see DESIGN.md, memory layout).
#[repr(align(128))]
struct RankSlot {
    /// `None` once a panic inside a wait dropped the participant (which broke the barrier).
    participant: Mutex<Option<Participant>>,
    /// `2 * e + 1` while the holder waits for episode `e`; `2 * c` otherwise, where `c` episodes
    /// have completed as far as this rank knows. Read by `settle` only.
    progress: AtomicU64,
}

const fn waiting_for(episode: u64) -> u64 {
    episode * 2 + 1
}

const fn completed(episodes: u64) -> u64 {
    episodes * 2
}

/// A barrier whose ranks C threads name by number.
pub struct BarrierObject {
    barrier: Barrier,
    ranks: Box<[RankSlot]>,
}

impl BarrierObject {
    /// A barrier of `parties` ranks running `algorithm`.
    pub fn new(parties: usize, algorithm: Algorithm) -> Result<Self, Failure> {
        let barrier = Barrier::with_algorithm(parties, algorithm)?;
        let ranks = barrier
            .participants()
            .into_iter()
            .map(|participant| RankSlot {
                participant: Mutex::new(Some(participant)),
                progress: AtomicU64::new(completed(0)),
            })
            .collect();
        Ok(BarrierObject { barrier, ranks })
    }

    /// The number of ranks.
    pub fn parties(&self) -> usize {
        self.barrier.parties()
    }

    /// The algorithm `Auto` resolved to, or the one asked for.
    pub fn algorithm(&self) -> Algorithm {
        self.barrier.algorithm()
    }

    /// Waits as `rank`, giving up after `timeout` if one is given.
    pub fn wait(&self, rank: usize, timeout: Option<Duration>) -> Result<WaitResult, Failure> {
        let slot = self.ranks.get(rank).ok_or_else(|| {
            Failure::invalid(format!(
                "rank {rank} is out of range: this barrier has {} parties, so ranks are 0 to {}",
                self.parties(),
                self.parties() - 1
            ))
        })?;
        let mut guard = match slot.participant.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::WouldBlock) => {
                return Err(Failure::busy(format!(
                    "rank {rank} is already waiting in another thread (or being destroyed); each \
                     rank must be used by one thread at a time: give every thread its own rank"
                )))
            }
            // A panic inside an earlier wait poisoned the lock; DropOnUnwind emptied the slot.
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        };
        let unwind = DropOnUnwind(&mut *guard);
        let participant = unwind.0.as_mut().ok_or_else(|| {
            Failure::new(
                PHASERS_EPANIC,
                format!(
                    "an earlier wait of rank {rank} panicked inside the library, which broke the \
                     barrier; destroy it and create a new one"
                ),
            )
        })?;
        let episode = participant.episode();
        slot.progress.store(waiting_for(episode), Ordering::Release);
        let result = match timeout {
            None => participant.wait(),
            Some(timeout) => participant.wait_timeout(timeout),
        };
        let done = match &result {
            Ok(outcome) => outcome.episode() + 1,
            Err(_) => participant.episode(),
        };
        slot.progress.store(completed(done), Ordering::Release);
        drop(unwind);
        drop(guard);
        Ok(result?)
    }

    /// Takes every rank's lock, proving that no thread is inside a wait, for `destroy`.
    ///
    /// A rank whose lock is held by a thread released from a completed episode is waited for: it
    /// is only returning. This makes the usual pattern work, where one thread destroys the barrier
    /// right after its last wait returned while the others are still on their way out. A rank held
    /// by a thread waiting for an episode that has not completed gives `PHASERS_EBUSY` (destroying
    /// then would strand it), and the locks taken so far are released.
    pub fn settle(&self) -> Result<Vec<MutexGuard<'_, Option<Participant>>>, Failure> {
        let mut guards = Vec::with_capacity(self.ranks.len());
        for (rank, slot) in self.ranks.iter().enumerate() {
            let guard = loop {
                match slot.participant.try_lock() {
                    Ok(guard) => break guard,
                    Err(TryLockError::Poisoned(poisoned)) => break poisoned.into_inner(),
                    Err(TryLockError::WouldBlock) => {}
                }
                let progress = slot.progress.load(Ordering::Acquire);
                let waiting = progress % 2 == 1;
                if waiting && progress / 2 >= self.episodes_completed() {
                    return Err(Failure::busy(format!(
                        "rank {rank} is waiting for episode {} of this barrier, which has not \
                         completed; destroy it only when no thread waits on it",
                        progress / 2
                    )));
                }
                // The holder was released (or is between taking the lock and announcing its
                // episode, or between announcing its result and unlocking): it will unlock soon.
                std::thread::yield_now();
            };
            guards.push(guard);
        }
        Ok(guards)
    }

    /// How many episodes have completed, as far as any rank has reported: a rank that waits for
    /// episode `e`, or returned from `e - 1`, knows that `e` episodes have.
    fn episodes_completed(&self) -> u64 {
        self.ranks
            .iter()
            .map(|slot| slot.progress.load(Ordering::Acquire) / 2)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{PHASERS_EBUSY, PHASERS_EINVAL, PHASERS_ETIMEDOUT};

    #[test]
    fn ranks_out_of_range_and_timeouts() {
        let object = BarrierObject::new(2, Algorithm::SenseReversing).unwrap();
        assert_eq!(object.wait(2, None).unwrap_err().code, PHASERS_EINVAL);
        let timeout = object.wait(0, Some(Duration::from_millis(1))).unwrap_err();
        assert_eq!(timeout.code, PHASERS_ETIMEDOUT);
        assert!(timeout.message.contains("[1]"), "{timeout:?}");
        // Nobody is inside a wait: the pending arrival does not stop settle.
        drop(object.settle().unwrap());
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(object.wait(1, None).unwrap().episode(), 0));
            assert_eq!(object.wait(0, None).unwrap().episode(), 0);
        });
    }

    #[test]
    fn settle_refuses_while_a_rank_waits_for_an_unfinished_episode() {
        let object = BarrierObject::new(2, Algorithm::Counting).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| object.wait(0, None).unwrap());
            // Rank 0 is inside once its progress word says so.
            while object.ranks[0].progress.load(Ordering::Acquire) != waiting_for(0) {
                std::thread::yield_now();
            }
            assert_eq!(object.settle().unwrap_err().code, PHASERS_EBUSY);
            assert_eq!(object.wait(0, None).unwrap_err().code, PHASERS_EBUSY);
            object.wait(1, None).unwrap();
            // Rank 0 may still be returning: settle waits for it instead of refusing.
            drop(object.settle().unwrap());
        });
    }
}
