//! Which collective a call is, and how its data moves.

use std::fmt;

/// The collective a member called; checked mode compares it across members.
///
/// ```
/// use phasers::team::Kind;
///
/// // Each variant is written as the method it stands for.
/// assert_eq!(Kind::Allreduce.to_string(), "allreduce");
/// assert_ne!(Kind::Barrier, Kind::BarrierChecked);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// [`Member::barrier`](super::Member::barrier).
    Barrier,
    /// [`Member::barrier_checked`](super::Member::barrier_checked).
    BarrierChecked,
    /// [`Member::broadcast`](super::Member::broadcast).
    Broadcast,
    /// [`Member::reduce`](super::Member::reduce).
    Reduce,
    /// [`Member::allreduce`](super::Member::allreduce).
    Allreduce,
    /// [`Member::gather`](super::Member::gather).
    Gather,
    /// [`Member::allgather`](super::Member::allgather).
    Allgather,
    /// [`Member::scatter`](super::Member::scatter).
    Scatter,
    /// [`Member::alltoall`](super::Member::alltoall).
    Alltoall,
    /// [`Member::scan_inclusive`](super::Member::scan_inclusive).
    ScanInclusive,
    /// [`Member::scan_exclusive`](super::Member::scan_exclusive).
    ScanExclusive,
    /// [`Member::split`](super::Member::split) and [`Member::split_grid`](super::Member::split_grid).
    Split,
}

impl Kind {
    /// The method's name.
    ///
    /// ```
    /// use phasers::team::Kind;
    ///
    /// assert_eq!(Kind::ScanExclusive.name(), "scan_exclusive");
    /// assert_eq!(Kind::Split.name(), "split"); // split_grid is a split too
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Kind::Barrier => "barrier",
            Kind::BarrierChecked => "barrier_checked",
            Kind::Broadcast => "broadcast",
            Kind::Reduce => "reduce",
            Kind::Allreduce => "allreduce",
            Kind::Gather => "gather",
            Kind::Allgather => "allgather",
            Kind::Scatter => "scatter",
            Kind::Alltoall => "alltoall",
            Kind::ScanInclusive => "scan_inclusive",
            Kind::ScanExclusive => "scan_exclusive",
            Kind::Split => "split",
        }
    }

    /// Whether the call names a root.
    pub(crate) fn has_root(self) -> bool {
        matches!(
            self,
            Kind::Broadcast | Kind::Reduce | Kind::Gather | Kind::Scatter
        )
    }

    /// Whether the call combines with an operator.
    pub(crate) fn combines(self) -> bool {
        matches!(
            self,
            Kind::Reduce | Kind::Allreduce | Kind::ScanInclusive | Kind::ScanExclusive
        )
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a call's data moves. Every member of a call must take the same path, because the number of
/// other members that touch a member's buffers (see [`readers`]) depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// No data: barriers and splits, and calls that failed at the meeting.
    None,
    /// At most [`INLINE_BYTES`](super::post::INLINE_BYTES) bytes, carried in the posts and the
    /// meeting's line; the meeting's completer combines or copies them.
    Inline,
    /// Members read each other's inputs (or their staged copies) and write only their own outputs.
    Pull,
    /// Seed 003's linear reduction: each member reduces its share of every input and writes it into
    /// the outputs of the others (blocking, unstaged `reduce`/`allreduce` only).
    Linear,
    /// As `Linear`, but the team's reduction group for the element type combines the data, with
    /// the team's `reduce_algorithm` (built-in ops only; see `reduce_group`). Every member uses
    /// every other's buffers, as on the linear path.
    Group,
}

/// How many other members touch `rank`'s buffers (or staged copy) in a call: each of them
/// increments `rank`'s `touched` count exactly once when done, and `rank` waits for that many.
pub(crate) fn readers(kind: Kind, path: Path, root: usize, rank: usize, size: usize) -> u64 {
    let others = size as u64 - 1;
    match path {
        Path::None | Path::Inline => 0,
        Path::Linear | Path::Group => others,
        Path::Pull => match kind {
            Kind::Broadcast | Kind::Scatter => {
                if rank == root {
                    others
                } else {
                    0
                }
            }
            Kind::Gather | Kind::Reduce => u64::from(rank != root),
            Kind::Allgather | Kind::Alltoall | Kind::Allreduce => others,
            Kind::ScanInclusive | Kind::ScanExclusive => (size - 1 - rank) as u64,
            Kind::Barrier | Kind::BarrierChecked | Kind::Split => 0,
        },
    }
}

/// Whether `reader` reads `owner`'s input (or writes its output) in a call on `path`: the other
/// side of [`readers`].
pub(crate) fn reads(kind: Kind, path: Path, root: usize, reader: usize, owner: usize) -> bool {
    if reader == owner {
        return false;
    }
    match path {
        Path::None | Path::Inline => false,
        Path::Linear | Path::Group => true,
        Path::Pull => match kind {
            Kind::Broadcast | Kind::Scatter => owner == root,
            Kind::Gather | Kind::Reduce => reader == root,
            Kind::Allgather | Kind::Alltoall | Kind::Allreduce => true,
            Kind::ScanInclusive | Kind::ScanExclusive => owner < reader,
            Kind::Barrier | Kind::BarrierChecked | Kind::Split => false,
        },
    }
}
