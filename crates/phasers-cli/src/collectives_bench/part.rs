//! The parts of `bench collectives`, as `--ops` names them: the six measurements of the issue.

use serde::{Deserialize, Serialize};

/// One part of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// `member.barrier()`, with std::sync::Barrier, our `Barrier` (auto) and OpenMP's barrier.
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn names_match_the_command_line_and_the_report() {
        for part in Part::ALL {
            let parsed = Part::from_str(part.name(), false).unwrap();
            assert_eq!(parsed, part);
            let json = serde_json::to_string(&part).unwrap();
            assert_eq!(json, format!("\"{}\"", part.name()));
        }
    }
}
