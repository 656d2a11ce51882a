//! The hybrid team's collectives the benchmark measures, the MPI collective each is read against,
//! and the sizes each runs at.

use clap::ValueEnum;
use serde::Serialize;

/// One collective of `phasers_mpi::HybridMember` (the blocking form users call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Collective {
    Barrier,
    Broadcast,
    Reduce,
    Allreduce,
    Gather,
    Scatter,
    Allgather,
    Alltoall,
    ScanInclusive,
    ScanExclusive,
}

impl Collective {
    /// Every collective, in the order the tables list them.
    pub const ALL: [Collective; 10] = [
        Collective::Barrier,
        Collective::Broadcast,
        Collective::Reduce,
        Collective::Allreduce,
        Collective::Gather,
        Collective::Scatter,
        Collective::Allgather,
        Collective::Alltoall,
        Collective::ScanInclusive,
        Collective::ScanExclusive,
    ];

    /// The name `--collectives` takes and the report prints: the method's, in kebab case.
    pub fn name(self) -> &'static str {
        match self {
            Collective::Barrier => "barrier",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::Allreduce => "allreduce",
            Collective::Gather => "gather",
            Collective::Scatter => "scatter",
            Collective::Allgather => "allgather",
            Collective::Alltoall => "alltoall",
            Collective::ScanInclusive => "scan-inclusive",
            Collective::ScanExclusive => "scan-exclusive",
        }
    }

    /// The MPI collective that does the same among single-threaded processes: the baseline.
    pub fn mpi_name(self) -> &'static str {
        match self {
            Collective::Barrier => "MPI_Barrier",
            Collective::Broadcast => "MPI_Bcast",
            Collective::Reduce => "MPI_Reduce",
            Collective::Allreduce => "MPI_Allreduce",
            Collective::Gather => "MPI_Gather",
            Collective::Scatter => "MPI_Scatter",
            Collective::Allgather => "MPI_Allgather",
            Collective::Alltoall => "MPI_Alltoall",
            Collective::ScanInclusive => "MPI_Scan",
            Collective::ScanExclusive => "MPI_Exscan",
        }
    }
}

/// The element type of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Element {
    U64,
    F64,
}

impl Element {
    pub fn name(self) -> &'static str {
        match self {
            Element::U64 => "u64",
            Element::F64 => "f64",
        }
    }
}

/// One collective at one size: what a row group measures at every shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    pub collective: Collective,
    pub element: Element,
    /// Elements per member (for gather, scatter, allgather and alltoall: per block, one block
    /// per member).
    pub length: usize,
}

impl Case {
    /// `1xu64`, `1048576xf64`; `-` for the barrier, which moves no data.
    pub fn size_label(&self) -> String {
        if self.collective == Collective::Barrier {
            "-".to_owned()
        } else {
            format!("{}x{}", self.length, self.element.name())
        }
    }
}

/// The long buffer: 1M f64 (8 MiB), where a collective's bandwidth rather than its latency
/// counts.
pub const LONG: usize = 1 << 20;

/// The cases of `selected`, in the order of [`Collective::ALL`] whatever the order asked: each at
/// one `u64` per member (a block of one for the collectives with a block per member), and
/// broadcast and allreduce also at [`LONG`] `f64`, the two whose large-message cost users meet
/// most (a model's parameters broadcast, its gradients reduced).
pub fn cases(selected: &[Collective]) -> Vec<Case> {
    let mut cases = Vec::new();
    for collective in Collective::ALL {
        if !selected.contains(&collective) {
            continue;
        }
        cases.push(Case {
            collective,
            element: Element::U64,
            length: 1,
        });
        if matches!(collective, Collective::Broadcast | Collective::Allreduce) {
            cases.push(Case {
                collective,
                element: Element::F64,
                length: LONG,
            });
        }
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_collective_has_its_mpi_baseline() {
        let pairs: Vec<(&str, &str)> = Collective::ALL
            .iter()
            .map(|c| (c.name(), c.mpi_name()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("barrier", "MPI_Barrier"),
                ("broadcast", "MPI_Bcast"),
                ("reduce", "MPI_Reduce"),
                ("allreduce", "MPI_Allreduce"),
                ("gather", "MPI_Gather"),
                ("scatter", "MPI_Scatter"),
                ("allgather", "MPI_Allgather"),
                ("alltoall", "MPI_Alltoall"),
                ("scan-inclusive", "MPI_Scan"),
                ("scan-exclusive", "MPI_Exscan"),
            ]
        );
        // The names the command line takes are the ones printed and written.
        for c in Collective::ALL {
            assert_eq!(Collective::from_str(c.name(), false), Ok(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
        }
    }

    #[test]
    fn sizes_per_collective() {
        let all = cases(&Collective::ALL);
        assert_eq!(all.len(), 12);
        let long: Vec<Collective> = all
            .iter()
            .filter(|c| c.length == LONG)
            .map(|c| c.collective)
            .collect();
        assert_eq!(long, [Collective::Broadcast, Collective::Allreduce]);
        assert!(all
            .iter()
            .filter(|c| c.length == 1)
            .all(|c| c.element == Element::U64));
        assert!(all
            .iter()
            .filter(|c| c.length == LONG)
            .all(|c| c.element == Element::F64));
        // The order is the table's, whatever the order asked.
        let some = cases(&[Collective::Allreduce, Collective::Barrier]);
        let names: Vec<String> = some
            .iter()
            .map(|c| format!("{} {}", c.collective.name(), c.size_label()))
            .collect();
        assert_eq!(
            names,
            ["barrier -", "allreduce 1xu64", "allreduce 1048576xf64"]
        );
        assert!(cases(&[]).is_empty());
    }
}
