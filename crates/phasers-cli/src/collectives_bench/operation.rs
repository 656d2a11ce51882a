//! What one row times per iteration: a collective of some size, or the memcpy that broadcasts are
//! held against.

use serde::{Deserialize, Serialize};

/// The timed operation and its size, as the report names them (`"op"`, with `"words"` or
/// `"block"` where it has a size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Operation {
    /// `member.barrier()` and the barriers it is compared with.
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

/// Bytes per word.
pub const WORD_BYTES: usize = std::mem::size_of::<u64>();

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
