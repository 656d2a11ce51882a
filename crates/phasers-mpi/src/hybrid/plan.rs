//! Which stages each collective runs across processes, flat or node-aware, and what the
//! process contributes and gets back.
//!
//! | collective | process contributes | node-aware stages | flat stages | outcome |
//! |---|---|---|---|---|
//! | barrier | nothing | node barrier, leaders' barrier, node barrier | `Ibarrier` | — |
//! | broadcast | root's buffer (root's process) | node `Ibcast` on the root's node, leaders' `Ibcast`, node `Ibcast` elsewhere | `Ibcast` | the buffer |
//! | allreduce (built-in op) | its members' inputs reduced in rank order | node `Ireduce`, leaders' `Iallreduce`, node `Ibcast` | `Iallreduce` | the result |
//! | reduce (built-in op) | as allreduce | node `Ireduce`, leaders' `Ireduce`, node `Ibcast` if the root leads no node | `Ireduce` | the result (root's process) |
//! | (all)reduce, `Op::Custom` | as allreduce | flat | `Iallgather` / `Igatherv`, then combined in process order | the result |
//! | gather | its members' inputs, concatenated | flat | `Igatherv` | all inputs (root's process) |
//! | scatter | root's input (root's process) | flat | `Iscatterv` | its members' blocks |
//! | split | its members' (color, key, rank) | flat | `Iallgatherv`, then `MPI_Comm_split` | every member's entry, the new teams |

use std::collections::VecDeque;

use super::layout::Layout;
use super::request::Blocks;
use super::signature::{Kind, Signature};
use super::stage::{Net, Stage};

/// The stages of a call whose members agree on `sig`; `builtin` says whether the op maps to an
/// MPI operation.
pub(crate) fn stages(layout: &Layout, sig: &Signature, builtin: bool) -> VecDeque<Stage> {
    if layout.counts.len() == 1 {
        // One process: the local part is the whole call.
        return if sig.kind == Kind::Split {
            VecDeque::from([Stage::Split])
        } else {
            VecDeque::new()
        };
    }
    let me = layout.process();
    let block = sig.block();
    let root = layout.process_of(sig.root.min(layout.size.saturating_sub(1)));
    let hier = layout.hierarchy.as_ref();
    let stages = match (sig.kind, hier) {
        (Kind::Barrier, Some(_)) => vec![
            Stage::Barrier(Net::Node),
            Stage::Barrier(Net::Leaders),
            Stage::Barrier(Net::Node),
        ],
        (Kind::Barrier, None) => vec![Stage::Barrier(Net::Flat)],
        (Kind::Broadcast, Some(h)) => {
            let leaders = Stage::Bcast {
                net: Net::Leaders,
                root: h.node_of[root],
            };
            if h.node_of[root] == h.node_of[me] {
                let node = Stage::Bcast {
                    net: Net::Node,
                    root: h.node_rank_of[root],
                };
                vec![node, leaders]
            } else {
                let node = Stage::Bcast {
                    net: Net::Node,
                    root: 0,
                };
                vec![leaders, node]
            }
        }
        (Kind::Broadcast, None) => vec![Stage::Bcast {
            net: Net::Flat,
            root,
        }],
        (Kind::Allreduce, Some(_)) if builtin => vec![
            Stage::Reduce {
                net: Net::Node,
                root: 0,
            },
            Stage::Allreduce(Net::Leaders),
            Stage::Bcast {
                net: Net::Node,
                root: 0,
            },
        ],
        (Kind::Allreduce, None) if builtin => vec![Stage::Allreduce(Net::Flat)],
        (Kind::Allreduce, _) => vec![Stage::AllgatherFold],
        (Kind::Reduce, Some(h)) if builtin => {
            let mut stages = vec![
                Stage::Reduce {
                    net: Net::Node,
                    root: 0,
                },
                Stage::Reduce {
                    net: Net::Leaders,
                    root: h.node_of[root],
                },
            ];
            if h.node_of[root] == h.node_of[me] && h.node_rank_of[root] != 0 {
                stages.push(Stage::Bcast {
                    net: Net::Node,
                    root: 0,
                });
            }
            stages
        }
        (Kind::Reduce, None) if builtin => vec![Stage::Reduce {
            net: Net::Flat,
            root,
        }],
        (Kind::Reduce, _) => vec![Stage::GatherFold {
            root,
            blocks: Blocks::new(&vec![1; layout.counts.len()], block),
        }],
        (Kind::Gather, _) => vec![Stage::Gatherv {
            root,
            blocks: Blocks::new(&layout.counts, block),
        }],
        (Kind::Scatter, _) => vec![Stage::Scatterv {
            root,
            blocks: Blocks::new(&layout.counts, block),
        }],
        (Kind::Split, _) => vec![
            Stage::Allgatherv(Blocks::new(&layout.counts, block)),
            Stage::Split,
        ],
    };
    VecDeque::from(stages)
}

/// The stages of a checked call's envelope (see `envelope.rs`), the same for every call: one
/// `MPI_Iallreduce`, or where the team is node-aware a node `Ireduce`, a leaders' `Iallreduce`
/// and a node `Ibcast`, each with the envelope's datatype and merge.
pub(crate) fn envelope_stages(layout: &Layout) -> VecDeque<Stage> {
    match layout.hierarchy {
        Some(_) => VecDeque::from([
            Stage::Reduce {
                net: Net::Node,
                root: 0,
            },
            Stage::Allreduce(Net::Leaders),
            Stage::Bcast {
                net: Net::Node,
                root: 0,
            },
        ]),
        None => VecDeque::from([Stage::Allreduce(Net::Flat)]),
    }
}

/// Bytes this process contributes to a call whose members agree on `sig`: what a process sends
/// in place of its members' data when they got the call wrong (unchecked mode), so that the
/// other processes' MPI calls still match.
pub(crate) fn contribution_len(layout: &Layout, sig: &Signature) -> usize {
    let block = sig.block();
    match sig.kind {
        Kind::Barrier => 0,
        Kind::Broadcast | Kind::Reduce | Kind::Allreduce => block,
        Kind::Gather | Kind::Split => layout.local() * block,
        Kind::Scatter => {
            if root_is_local(layout, sig.root) {
                layout.size * block
            } else {
                0
            }
        }
    }
}

/// Whether global rank `root` is one of this process's members.
pub(crate) fn root_is_local(layout: &Layout, root: usize) -> bool {
    let first = layout.first_rank();
    (first..first + layout.local()).contains(&root)
}
