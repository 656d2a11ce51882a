//! Software combining tree (Yew, Tzeng and Lawrie), with a configurable fan-in.

use crossbeam_utils::CachePadded;

use super::algorithm::{sealed::AlgorithmImpl, Params};
use super::episode::Episode;
use crate::error::Error;
use crate::primitive::{AtomicU64, Ordering};
use crate::wait::{Signal, Stop};
use crate::Algorithm;

/// Software combining tree (Yew, Tzeng and Lawrie), with a configurable fan-in.
///
/// Participants are grouped `fan_in` to a leaf node; the last to arrive at a node climbs to its
/// parent, so contention on any one counter is at most `fan_in`, and the last arrival at the root is
/// the leader. The release runs back down the same paths: a participant released at the node where
/// it stopped climbing releases, top-down, every node it won on the way up, so each waiter is woken
/// by a thread that is already running.
///
/// Node counters only grow (episode `e` completes a node of `k` members at count `(e + 1) * k`), so
/// nothing is reset.
///
/// # Memory ordering
///
/// Node arrivals are `AcqRel` increments: the climber acquires its node-mates' writes and carries
/// them up, so the leader has acquired everyone's. Each node's release word is published with
/// `Release` by the thread that won the node and read with `Acquire` by the node's other members.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use phasers::barrier::CombiningTree;
/// use phasers::Barrier;
///
/// let barrier = Barrier::builder(3).build_static::<CombiningTree>()?;
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
pub struct CombiningTree {
    nodes: Box<[Node]>,
    /// Index of the first node of each level; level 0 holds the leaves, the last level the root.
    level_start: Box<[usize]>,
    fan_in: usize,
}

struct Node {
    arrivals: CachePadded<AtomicU64>,
    release: CachePadded<Signal>,
    members: u64,
}

/// A participant's state: the level of the node where it stopped climbing and waits, if any.
#[derive(Debug, Default)]
pub struct CombiningLocal {
    waiting_at: Option<usize>,
}

impl CombiningTree {
    fn levels(&self) -> usize {
        self.level_start.len()
    }

    /// The node that `rank`'s path crosses at `level`.
    fn node(&self, rank: usize, level: usize) -> &Node {
        let index = rank / self.fan_in.pow(level as u32 + 1);
        &self.nodes[self.level_start[level] + index]
    }

    /// Releases the nodes this participant won below `level`, from the top down.
    fn release_below(&self, rank: usize, level: usize, number: u64) {
        for won in (0..level).rev() {
            self.node(rank, won).release.publish(number + 1);
        }
    }
}

impl AlgorithmImpl for CombiningTree {
    type Local = CombiningLocal;

    fn build(parties: usize, params: &Params) -> Self {
        let fan_in = params.fan_in;
        let mut nodes = Vec::new();
        let mut level_start = Vec::new();
        let mut below = parties; // participants (level 0) or nodes of the level below
        loop {
            level_start.push(nodes.len());
            let count = below.div_ceil(fan_in);
            for index in 0..count {
                let members = fan_in.min(below - index * fan_in) as u64;
                nodes.push(Node {
                    arrivals: CachePadded::new(AtomicU64::new(0)),
                    release: CachePadded::new(Signal::new(0)),
                    members,
                });
            }
            if count == 1 {
                break;
            }
            below = count;
        }
        CombiningTree {
            nodes: nodes.into_boxed_slice(),
            level_start: level_start.into_boxed_slice(),
            fan_in,
        }
    }

    fn kind(&self) -> Algorithm {
        Algorithm::CombiningTree
    }

    fn local(&self, _rank: usize) -> CombiningLocal {
        CombiningLocal::default()
    }

    fn wait(&self, local: &mut CombiningLocal, episode: &Episode<'_>) -> Result<bool, Stop> {
        let (rank, number) = (episode.rank(), episode.number());
        let level = match local.waiting_at {
            Some(level) => level,
            None => {
                let mut level = 0;
                loop {
                    let node = self.node(rank, level);
                    let count = node.arrivals.fetch_add(1, Ordering::AcqRel) + 1;
                    if count != (number + 1) * node.members {
                        break;
                    }
                    if level + 1 == self.levels() {
                        episode.complete();
                        self.release_below(rank, self.levels(), number);
                        return Ok(true);
                    }
                    level += 1;
                }
                local.waiting_at = Some(level);
                level
            }
        };
        let node = self.node(rank, level);
        episode.wait_until(&node.release, |released| released > number)?;
        local.waiting_at = None;
        self.release_below(rank, level, number);
        Ok(false)
    }

    fn leave(&self, _: &mut CombiningLocal, _: &Episode<'_>) -> Result<(), Error> {
        unreachable!(
            "Algorithm::CombiningTree does not support leaving; Participant::leave checks first"
        )
    }

    fn wake_all(&self) {
        self.nodes.iter().for_each(|node| node.release.wake_all());
    }
}
