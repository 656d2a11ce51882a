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

/// Pushes onto `out` the stages of a call whose members agree on `sig`; `builtin` says
/// whether the op maps to an MPI operation. `out` is the slot's queue, kept between calls, so
/// its storage is reused.
pub(crate) fn stages(layout: &Layout, sig: &Signature, builtin: bool, out: &mut VecDeque<Stage>) {
    if layout.counts.len() == 1 {
        // One process: the local part is the whole call.
        if sig.kind == Kind::Split {
            out.push_back(Stage::Split);
        }
        return;
    }
    let me = layout.process();
    let block = sig.block();
    let root = layout.process_of(sig.root.min(layout.size.saturating_sub(1)));
    let hier = layout.hierarchy.as_ref();
    match (sig.kind, hier) {
        (Kind::Barrier, Some(_)) => out.extend([
            Stage::Barrier(Net::Node),
            Stage::Barrier(Net::Leaders),
            Stage::Barrier(Net::Node),
        ]),
        (Kind::Barrier, None) => out.push_back(Stage::Barrier(Net::Flat)),
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
                out.extend([node, leaders]);
            } else {
                let node = Stage::Bcast {
                    net: Net::Node,
                    root: 0,
                };
                out.extend([leaders, node]);
            }
        }
        (Kind::Broadcast, None) => out.push_back(Stage::Bcast {
            net: Net::Flat,
            root,
        }),
        (Kind::Allreduce, Some(_)) if builtin => out.extend([
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
        (Kind::Allreduce, None) if builtin => out.push_back(Stage::Allreduce(Net::Flat)),
        (Kind::Allreduce, _) => out.push_back(Stage::AllgatherFold),
        (Kind::Reduce, Some(h)) if builtin => {
            out.extend([
                Stage::Reduce {
                    net: Net::Node,
                    root: 0,
                },
                Stage::Reduce {
                    net: Net::Leaders,
                    root: h.node_of[root],
                },
            ]);
            if h.node_of[root] == h.node_of[me] && h.node_rank_of[root] != 0 {
                out.push_back(Stage::Bcast {
                    net: Net::Node,
                    root: 0,
                });
            }
        }
        (Kind::Reduce, None) if builtin => out.push_back(Stage::Reduce {
            net: Net::Flat,
            root,
        }),
        // The `v` collectives' count arrays are still made per call (allocated; MPI reads them
        // until the request completes): unlike the buffers, the slot does not keep them yet.
        (Kind::Reduce, _) => out.push_back(Stage::GatherFold {
            root,
            blocks: Blocks::new(&vec![1; layout.counts.len()], block),
        }),
        (Kind::Gather, _) => out.push_back(Stage::Gatherv {
            root,
            blocks: Blocks::new(&layout.counts, block),
        }),
        (Kind::Scatter, _) => out.push_back(Stage::Scatterv {
            root,
            blocks: Blocks::new(&layout.counts, block),
        }),
        (Kind::Split, _) => out.extend([
            Stage::Allgatherv(Blocks::new(&layout.counts, block)),
            Stage::Split,
        ]),
    }
}

/// The stages of a checked call's envelope (see `envelope.rs`), the same for every call: the
/// point-to-point exchange of a flat team, or where the team is node-aware a node `Ireduce`, a
/// leaders' `Iallreduce` and a node `Ibcast`, each with the envelope's datatype and merge.
pub(crate) fn envelope_stages(layout: &Layout, out: &mut VecDeque<Stage>) {
    if layout.envelope_p2p {
        out.push_back(Stage::Envelope);
        return;
    }
    match layout.hierarchy {
        Some(_) => out.extend([
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
        None => out.push_back(Stage::Allreduce(Net::Flat)),
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
