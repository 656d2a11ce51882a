//! Dissemination barrier (Hensgen, Finkel and Manber; seed 001, §1.2.2).

use crossbeam_utils::CachePadded;

use super::algorithm::{sealed::AlgorithmImpl, Params};
use super::episode::Episode;
use crate::error::Error;
use crate::wait::{Signal, Stop};
use crate::Algorithm;

/// Dissemination barrier (Hensgen, Finkel and Manber; seed 001, §1.2.2).
///
/// In round `r` of `ceil(log2 n)`, participant `i` signals `(i + 2^r) mod n` and waits for the
/// signal of `(i - 2^r) mod n`. After the last round every participant has heard, directly or
/// through others, from everyone, so there is no tree, no central word and no separate release.
///
/// Each flag has exactly one writer and one reader and sits on its own line. A flag holds the
/// number of episodes its writer has signalled in that round; it only grows, so a fast writer that
/// is already one episode ahead cannot erase a signal its reader has not consumed yet.
///
/// The leader is rank 0. With a completion action there is one extra step: rank 0 runs the action
/// after its last round and then publishes a release word that the others wait on, because the
/// action must finish before anyone is released. Without an action that step does not exist.
///
/// # Memory ordering
///
/// Flags are published with `Release` and read with `Acquire`. Round `r`'s signal is sent after
/// acquiring rounds `0..r`, so after the last round each participant has acquired the writes of all.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use phasers::barrier::Dissemination;
/// use phasers::Barrier;
///
/// let barrier = Barrier::builder(3).build_static::<Dissemination>()?;
/// let leaders = AtomicUsize::new(0);
/// std::thread::scope(|s| {
///     for mut p in barrier.participants() {
///         let leaders = &leaders;
///         s.spawn(move || {
///             for _ in 0..50 {
///                 if p.wait().unwrap().is_leader() {
///                     leaders.fetch_add(1, Ordering::Relaxed);
///                 }
///             }
///         });
///     }
/// });
/// assert_eq!(leaders.into_inner(), 50); // exactly one leader per episode
/// # Ok::<(), phasers::Error>(())
/// ```
pub struct Dissemination {
    /// `flags[rank * rounds + r]` is what `rank` waits on in round `r`.
    flags: Box<[CachePadded<Signal>]>,
    rounds: usize,
    parties: usize,
    /// Present only when a completion action must run before anyone is released.
    release: Option<CachePadded<Signal>>,
}

/// A participant's state: the next round to play in the current episode.
#[derive(Debug, Default)]
pub struct DisseminationLocal {
    round: usize,
}

impl Dissemination {
    fn flag(&self, rank: usize, round: usize) -> &Signal {
        &self.flags[rank * self.rounds + round]
    }
}

/// `ceil(log2 n)`: the rounds after which everyone has heard from everyone.
pub(crate) fn rounds_for(parties: usize) -> usize {
    parties.next_power_of_two().trailing_zeros() as usize
}

impl AlgorithmImpl for Dissemination {
    type Local = DisseminationLocal;

    fn build(parties: usize, params: &Params) -> Self {
        let rounds = rounds_for(parties);
        Dissemination {
            flags: (0..parties * rounds)
                .map(|_| CachePadded::new(Signal::new(0)))
                .collect(),
            rounds,
            parties,
            release: params
                .has_completion
                .then(|| CachePadded::new(Signal::new(0))),
        }
    }

    fn kind(&self) -> Algorithm {
        Algorithm::Dissemination
    }

    fn local(&self, _rank: usize) -> DisseminationLocal {
        DisseminationLocal::default()
    }

    fn wait(&self, local: &mut DisseminationLocal, episode: &Episode<'_>) -> Result<bool, Stop> {
        let (rank, number) = (episode.rank(), episode.number());
        while local.round < self.rounds {
            let round = local.round;
            let partner = (rank + (1 << round)) % self.parties;
            // Publishing `number + 1` again after a timeout is harmless: the value is the same.
            self.flag(partner, round).publish(number + 1);
            episode.wait_until(self.flag(rank, round), |signalled| signalled > number)?;
            local.round += 1;
        }
        let leader = rank == 0;
        if let Some(release) = &self.release {
            if leader {
                episode.complete_and_publish(release, number + 1);
            } else {
                episode.wait_until(release, |released| released > number)?;
            }
        }
        local.round = 0;
        Ok(leader)
    }

    fn leave(&self, _: &mut DisseminationLocal, _: &Episode<'_>) -> Result<(), Error> {
        unreachable!(
            "Algorithm::Dissemination does not support leaving; Participant::leave checks first"
        )
    }

    fn wake_all(&self) {
        self.flags.iter().for_each(|flag| flag.wake_all());
        if let Some(release) = &self.release {
            release.wake_all();
        }
    }
}
