//! MCS tree barrier (Mellor-Crummey and Scott; seed 001, §1.1.2).

use crossbeam_utils::CachePadded;

use super::algorithm::{sealed::AlgorithmImpl, Params};
use super::episode::Episode;
use crate::error::Error;
use crate::wait::{Signal, Stop};
use crate::Algorithm;

const ARRIVAL_FAN_IN: usize = 4;

/// MCS tree barrier (Mellor-Crummey and Scott; seed 001, §1.1.2).
///
/// Arrival climbs a 4-ary tree: participant `i`'s arrival children are `4i + 1 ..= 4i + 4`, and the
/// four children's flags are bits of **one word** on `i`'s own line, so a parent polls a single word
/// for all of them. A child reports by flipping its bit, which doubles as sense reversal: after
/// episode `e` every existing child's bit equals `(e + 1) mod 2`, so nothing is ever reset.
/// When the root (rank 0, the leader) has heard from all its children, the release runs down a
/// binary wake-up tree: `i` wakes `2i + 1` and `2i + 2`. Every flag a participant polls sits on a
/// 128-byte line of its own; seed 001 measured a 60x slowdown when they shared lines.
///
/// # Memory ordering
///
/// A child flips its bit with an `AcqRel` RMW after acquiring its own children's bits, so the root,
/// reading with `Acquire`, has acquired the writes of the whole tree. Wake-up flags are published
/// with `Release` and read with `Acquire`, carrying the root's view down the tree.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use phasers::barrier::McsTree;
/// use phasers::Barrier;
///
/// let barrier = Barrier::builder(3).build_static::<McsTree>()?;
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
pub struct McsTree {
    nodes: Box<[McsNode]>,
}

struct McsNode {
    /// Bit `j` is flipped by arrival child `4i + 1 + j` each episode.
    children_arrived: CachePadded<Signal>,
    /// Set to `e + 1` by the wake-up parent when episode `e` is released.
    wakeup: CachePadded<Signal>,
    /// Which of the four child bits exist.
    children_mask: u64,
}

/// Where a participant is in the episode.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum McsLocal {
    /// Has not started the episode, or is waiting for its arrival children.
    #[default]
    AwaitingChildren,
    /// Has reported to its parent and waits to be woken.
    AwaitingWakeup,
}

impl McsTree {
    fn wake_children(&self, rank: usize, number: u64) {
        for child in [2 * rank + 1, 2 * rank + 2] {
            if let Some(node) = self.nodes.get(child) {
                node.wakeup.publish(number + 1);
            }
        }
    }
}

impl AlgorithmImpl for McsTree {
    type Local = McsLocal;

    fn build(parties: usize, _: &Params) -> Self {
        let nodes = (0..parties)
            .map(|rank| {
                let first_child = ARRIVAL_FAN_IN * rank + 1;
                let children = parties.saturating_sub(first_child).min(ARRIVAL_FAN_IN);
                McsNode {
                    children_arrived: CachePadded::new(Signal::new(0)),
                    wakeup: CachePadded::new(Signal::new(0)),
                    children_mask: (1 << children) - 1,
                }
            })
            .collect();
        McsTree { nodes }
    }

    fn kind(&self) -> Algorithm {
        Algorithm::McsTree
    }

    fn local(&self, _rank: usize) -> McsLocal {
        McsLocal::default()
    }

    fn wait(&self, local: &mut McsLocal, episode: &Episode<'_>) -> Result<bool, Stop> {
        let (rank, number) = (episode.rank(), episode.number());
        let node = &self.nodes[rank];
        if *local == McsLocal::AwaitingChildren {
            let mask = node.children_mask;
            let expected = if number % 2 == 0 { mask } else { 0 };
            episode.wait_until(&node.children_arrived, |bits| bits & mask == expected)?;
            if rank == 0 {
                episode.complete();
                self.wake_children(rank, number);
                return Ok(true);
            }
            let parent = &self.nodes[(rank - 1) / ARRIVAL_FAN_IN];
            parent
                .children_arrived
                .fetch_xor_notify(1 << ((rank - 1) % ARRIVAL_FAN_IN));
            *local = McsLocal::AwaitingWakeup;
        }
        episode.wait_until(&node.wakeup, |released| released > number)?;
        *local = McsLocal::AwaitingChildren;
        self.wake_children(rank, number);
        Ok(false)
    }

    fn leave(&self, _: &mut McsLocal, _: &Episode<'_>) -> Result<(), Error> {
        unreachable!("Algorithm::McsTree does not support leaving; Participant::leave checks first")
    }

    fn wake_all(&self) {
        for node in self.nodes.iter() {
            node.children_arrived.wake_all();
            node.wakeup.wake_all();
        }
    }
}
