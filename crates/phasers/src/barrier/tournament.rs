//! Tournament barrier (Hensgen, Finkel and Manber; seed 002).

use crossbeam_utils::CachePadded;

use super::algorithm::{sealed::AlgorithmImpl, Params};
use super::dissemination::rounds_for;
use super::episode::Episode;
use crate::error::Error;
use crate::wait::{Signal, Stop};
use crate::Algorithm;

/// Tournament barrier (Hensgen, Finkel and Manber; seed 002).
///
/// Matches are fixed in advance. In round `r`, participant `i` with `i mod 2^(r+1) == 0` is the
/// winner of its match against `i + 2^r` (if that rank exists) and waits for the loser's arrival
/// flag; the loser signals it and drops out to wait for its wake-up flag. Rank 0, the champion, is
/// the leader: it runs the completion action and then wakes the losers it beat, each of whom wakes
/// the losers it beat, back down the bracket.
///
/// Every flag has one writer and one reader and its own line, and the critical path is
/// `ceil(log2 n)` steps up and as many down. Flags hold episode counts and only grow.
///
/// # Memory ordering
///
/// Arrival flags and wake-up flags are published with `Release` and read with `Acquire`; a loser
/// signals after acquiring everything its own won matches carried, so the champion has acquired the
/// writes of all, and the wake-ups carry its view back down.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use phasers::barrier::Tournament;
/// use phasers::Barrier;
///
/// let barrier = Barrier::builder(3).build_static::<Tournament>()?;
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
pub struct Tournament {
    /// `arrivals[rank * rounds + r]`: written by the rank `rank` beats in round `r`.
    arrivals: Box<[CachePadded<Signal>]>,
    /// `wakeups[rank]`: written by the rank that beat `rank`.
    wakeups: Box<[CachePadded<Signal>]>,
    rounds: usize,
    parties: usize,
}

/// A participant's state: the round it is playing in the current episode.
#[derive(Debug, Default)]
pub struct TournamentLocal {
    round: usize,
}

impl Tournament {
    fn arrival(&self, winner: usize, round: usize) -> &Signal {
        &self.arrivals[winner * self.rounds + round]
    }

    /// Wakes, from the latest round down, every rank this participant beat before `round`.
    fn wake_beaten(&self, rank: usize, round: usize, number: u64) {
        for won in (0..round).rev() {
            let beaten = rank + (1 << won);
            if beaten < self.parties {
                self.wakeups[beaten].publish(number + 1);
            }
        }
    }
}

impl AlgorithmImpl for Tournament {
    type Local = TournamentLocal;

    fn build(parties: usize, _: &Params) -> Self {
        let rounds = rounds_for(parties);
        let padded = |count: usize| -> Box<[CachePadded<Signal>]> {
            (0..count)
                .map(|_| CachePadded::new(Signal::new(0)))
                .collect()
        };
        Tournament {
            arrivals: padded(parties * rounds),
            wakeups: padded(parties),
            rounds,
            parties,
        }
    }

    fn kind(&self) -> Algorithm {
        Algorithm::Tournament
    }

    fn local(&self, _rank: usize) -> TournamentLocal {
        TournamentLocal::default()
    }

    fn wait(&self, local: &mut TournamentLocal, episode: &Episode<'_>) -> Result<bool, Stop> {
        let (rank, number) = (episode.rank(), episode.number());
        while local.round < self.rounds {
            let round = local.round;
            let stride = 1 << round;
            if rank % (stride << 1) == 0 {
                let opponent = rank + stride;
                if opponent < self.parties {
                    episode.wait_until(self.arrival(rank, round), |arrived| arrived > number)?;
                }
                local.round += 1;
            } else {
                // Publishing `number + 1` again after a timeout is harmless: the value is the same.
                self.arrival(rank - stride, round).publish(number + 1);
                episode.wait_until(&self.wakeups[rank], |woken| woken > number)?;
                local.round = 0;
                self.wake_beaten(rank, round, number);
                return Ok(false);
            }
        }
        // Only rank 0 wins every round.
        episode.complete();
        local.round = 0;
        self.wake_beaten(rank, self.rounds, number);
        Ok(true)
    }

    fn leave(&self, _: &mut TournamentLocal, _: &Episode<'_>) -> Result<(), Error> {
        unreachable!(
            "Algorithm::Tournament does not support leaving; Participant::leave checks first"
        )
    }

    fn wake_all(&self) {
        self.arrivals.iter().for_each(|flag| flag.wake_all());
        self.wakeups.iter().for_each(|flag| flag.wake_all());
    }
}
