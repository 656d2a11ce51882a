//! The vocabulary of a call's cross-process step: the stages a flight runs one after the other,
//! and the communicator each runs on.

use super::request::Blocks;

/// Which communicator a stage runs on.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Net {
    /// All processes of the team.
    Flat,
    /// The processes of this node.
    Node,
    /// One leader per node; processes that lead no node skip the stage.
    Leaders,
}

/// One step of a call's cross-process part, run by its flight (`flight.rs`). `data` is the
/// process's current value; results arrive in `recv` and replace `data` where the stage says so.
pub(crate) enum Stage {
    /// A flat team's checked call: every process's envelope record to every process, point to
    /// point (`record_exchange.rs`); `data` is the record, then the merged record.
    Envelope,
    /// A checked call whose envelopes disagree: every process's detailed record (see `wire.rs`)
    /// to every process, which draws the call's error from them.
    Details,
    Barrier(Net),
    /// `data` from `root` to all, in place.
    Bcast {
        net: Net,
        root: usize,
    },
    /// Reduction of `data` with the flight's MPI operation (a built-in op, or the envelope's
    /// merge) to `root`, which takes the result.
    Reduce {
        net: Net,
        root: usize,
    },
    /// As `Reduce`; everyone takes the result.
    Allreduce(Net),
    /// Custom reduction to all: gather every process's partial, combine in process order.
    AllgatherFold,
    /// Custom reduction to `root`: gather the partials there, combine in process order.
    GatherFold {
        root: usize,
        blocks: Blocks,
    },
    /// Concatenation of every process's `data` at `root`.
    Gatherv {
        root: usize,
        blocks: Blocks,
    },
    /// Concatenation of every process's `data` at every process.
    Allgatherv(Blocks),
    /// `root`'s `data`, cut into one block per process.
    Scatterv {
        root: usize,
        blocks: Blocks,
    },
    /// A split's new communicators and teams, from the gathered (color, key, rank) entries in
    /// `data`: no MPI request of the flight's; the flight lands with the entries, and the
    /// engine makes the teams (`split_teams.rs`).
    Split,
}
