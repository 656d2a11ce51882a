//! Which collective a row calls: `reduce` (the result at the root) or `allreduce` (everywhere).

use serde::{Deserialize, Serialize};

use super::metrics::Completion;

/// The collective, as `--mode` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Collective {
    /// Only the root (rank 0) receives the sum.
    Reduce,
    /// Every participant receives the sum.
    Allreduce,
}

impl Collective {
    /// Both, in the order a default run measures them.
    pub const ALL: [Collective; 2] = [Collective::Reduce, Collective::Allreduce];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Collective::Reduce => "reduce",
            Collective::Allreduce => "allreduce",
        }
    }

    /// Whether participant `rank` receives the result, and so needs an output array.
    pub fn receives(self, rank: usize) -> bool {
        self == Collective::Allreduce || rank == ROOT
    }

    /// Whose return completes an iteration.
    pub fn completion(self) -> Completion {
        match self {
            Collective::Reduce => Completion::Root(ROOT),
            Collective::Allreduce => Completion::Last,
        }
    }

    /// The bytes an optimal reduction of `threads` arrays of `len` f32 moves: every input read
    /// once, and the result written once (at the root) or once per participant.
    pub fn bytes(self, threads: usize, len: usize) -> u64 {
        let array = len as u64 * std::mem::size_of::<f32>() as u64;
        let threads = threads as u64;
        match self {
            Collective::Reduce => threads * array + array,
            Collective::Allreduce => 2 * threads * array,
        }
    }
}

/// The rank that receives `reduce`'s result in every contender: the library's default root.
pub const ROOT: usize = 0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_reads_plus_writes() {
        // 4 inputs of 1000 floats read, one result written.
        assert_eq!(Collective::Reduce.bytes(4, 1000), 4 * 4000 + 4000);
        // ... or four results written.
        assert_eq!(Collective::Allreduce.bytes(4, 1000), 8 * 4000);
    }

    #[test]
    fn who_receives() {
        assert!(Collective::Reduce.receives(0));
        assert!(!Collective::Reduce.receives(1));
        assert!(Collective::Allreduce.receives(3));
        assert_eq!(Collective::Reduce.completion(), Completion::Root(0));
        assert_eq!(Collective::Allreduce.completion(), Completion::Last);
    }
}
