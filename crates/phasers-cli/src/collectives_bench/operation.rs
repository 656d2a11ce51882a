//! What a row times per iteration: a collective of some size, or the memcpy that broadcasts are
//! held against; and the part of a run (`--ops`) it belongs to.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// The timed operation and its size, as the report names them (`"op"`, with `"words"` or
/// `"block"` where it has a size).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Operation {
    /// `member.barrier()` and the barriers it is compared with.
    #[default]
    Barrier,
    /// An allreduce of one u64 whose sum every member receives (`Op::Sum`).
    Allreduce,
    /// A broadcast of `words` u64 from a root that rotates: the iteration number modulo the team
    /// size.
    Broadcast {
        /// The length, in u64.
        words: usize,
    },
    /// An alltoall in which every member sends `block` u64 to every member.
    Alltoall {
        /// u64 per block; each member's input and output hold one block per member.
        block: usize,
    },
    /// `copy_from_slice` of `words` u64 on one thread: what a broadcast's bandwidth is a fraction
    /// of.
    Memcpy {
        /// The length, in u64.
        words: usize,
    },
}

/// One part of a run.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// `member.barrier()`, with std::sync::Barrier, our `Barrier` (auto) and OpenMP's barrier.
    #[default]
    Barrier,
    /// Allreduce of one u64 received by every member, with OpenMP's reduction read by every
    /// thread.
    Allreduce,
    /// Broadcast from a rotating root at each `--words`, with a memcpy of the same length and
    /// OpenMP's broadcast through a shared buffer.
    Broadcast,
    /// Alltoall at each `--blocks`.
    Alltoall,
    /// Barrier, one-u64 allreduce and 8-word broadcast on a checked team and on an unchecked one.
    Checked,
    /// Broadcast at each `--sync-words` with every sync mode (AllSync, MySync, NoSync).
    SyncModes,
}

impl Part {
    /// Every part, in the order a run measures them.
    pub const ALL: [Part; 6] = [
        Part::Barrier,
        Part::Allreduce,
        Part::Broadcast,
        Part::Alltoall,
        Part::Checked,
        Part::SyncModes,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Part::Barrier => "barrier",
            Part::Allreduce => "allreduce",
            Part::Broadcast => "broadcast",
            Part::Alltoall => "alltoall",
            Part::Checked => "checked",
            Part::SyncModes => "sync-modes",
        }
    }
}

/// Bytes per word.
pub const WORD_BYTES: usize = std::mem::size_of::<u64>();

/// What `--ops checked` runs on a checked and an unchecked team: the calls issue 18 sets the
/// checked ÷ unchecked target for.
pub const CHECKED_OPERATIONS: [Operation; 3] = [
    Operation::Barrier,
    Operation::Allreduce,
    Operation::Broadcast { words: 8 },
];

impl Operation {
    /// Its name in tables and files.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Barrier => "barrier",
            Operation::Allreduce => "allreduce",
            Operation::Broadcast { .. } => "broadcast",
            Operation::Alltoall { .. } => "alltoall",
            Operation::Memcpy { .. } => "memcpy",
        }
    }

    /// Its size in u64, where it has one: the length of a broadcast or memcpy, the block of an
    /// alltoall.
    pub fn words(self) -> Option<usize> {
        match self {
            Operation::Barrier | Operation::Allreduce => None,
            Operation::Broadcast { words } | Operation::Memcpy { words } => Some(words),
            Operation::Alltoall { block } => Some(block),
        }
    }

    /// What a table says it is: `broadcast 4096 words`, `alltoall 64 words/block`.
    pub fn label(self) -> String {
        match self {
            Operation::Barrier => "barrier".to_owned(),
            Operation::Allreduce => "allreduce 1 u64".to_owned(),
            Operation::Broadcast { words } => format!("broadcast {}", count(words)),
            Operation::Alltoall { block } => format!("alltoall {}/block", count(block)),
            Operation::Memcpy { words } => format!("memcpy {}", count(words)),
        }
    }

    /// The bytes one operation delivers to one receiver, which its bandwidth counts: the payload
    /// of a broadcast or memcpy; `None` for the others.
    pub fn payload_bytes(self) -> Option<u64> {
        match self {
            Operation::Broadcast { words } | Operation::Memcpy { words } => {
                Some((words * WORD_BYTES) as u64)
            }
            _ => None,
        }
    }
}

/// `1 word`, `8 words`.
fn count(words: usize) -> String {
    match words {
        1 => "1 word".to_owned(),
        words => format!("{words} words"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_name_their_size_in_the_report() {
        let text = serde_json::to_string(&Operation::Broadcast { words: 4096 }).unwrap();
        assert_eq!(text, r#"{"op":"broadcast","words":4096}"#);
        let text = serde_json::to_string(&Operation::Alltoall { block: 64 }).unwrap();
        assert_eq!(text, r#"{"op":"alltoall","block":64}"#);
        assert_eq!(
            serde_json::to_string(&Operation::Barrier).unwrap(),
            r#"{"op":"barrier"}"#
        );
        let back: Operation = serde_json::from_str(r#"{"op":"memcpy","words":8}"#).unwrap();
        assert_eq!(back, Operation::Memcpy { words: 8 });
    }

    #[test]
    fn part_names_match_the_command_line_and_the_report() {
        for part in Part::ALL {
            assert_eq!(Part::from_str(part.name(), false), Ok(part));
            let json = serde_json::to_string(&part).unwrap();
            assert_eq!(json, format!("\"{}\"", part.name()));
        }
    }

    #[test]
    fn sizes_and_labels() {
        assert_eq!(Operation::Barrier.words(), None);
        assert_eq!(Operation::Alltoall { block: 3 }.words(), Some(3));
        assert_eq!(
            Operation::Broadcast { words: 100_000 }.payload_bytes(),
            Some(800_000)
        );
        assert_eq!(Operation::Allreduce.payload_bytes(), None);
        assert_eq!(
            Operation::Alltoall { block: 64 }.label(),
            "alltoall 64 words/block"
        );
        assert_eq!(
            Operation::Alltoall { block: 1 }.label(),
            "alltoall 1 word/block"
        );
        assert_eq!(Operation::Memcpy { words: 1 }.label(), "memcpy 1 word");
    }
}
