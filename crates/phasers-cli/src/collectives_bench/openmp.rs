//! The OpenMP rows (libgomp), through `baselines/omp_collectives.c`: `#pragma omp barrier`, an
//! allreduce of one u64 that every thread reads (`omp for reduction(+:total)`), and a broadcast
//! through a shared buffer and two barriers. OpenMP has no sub-teams short of nested parallel
//! regions, so these run on the team of all only.
//!
//! Each round is one parallel region, timed inside it between two barriers as the Rust rows are
//! timed between two meetings, and sized by the same sampler.

use crate::bench::RowPlan;
use crate::native::{omp_collective_round, OmpCollective};
use crate::openmp_row::sample_rounds;
use crate::results::{Row, RowKind};

use super::operation::Operation;

/// The name of the OpenMP barrier row.
pub const BARRIER_NAME: &str = "omp barrier";
/// The name of the OpenMP allreduce row.
pub const ALLREDUCE_NAME: &str = "omp reduction(+:x), read by all";
/// The name of the OpenMP broadcast row.
pub const BROADCAST_NAME: &str = "omp broadcast via shared buffer";

/// The OpenMP counterpart of `operation`, if it has one, with its row name.
pub fn counterpart(operation: Operation) -> Option<(OmpCollective, &'static str)> {
    match operation {
        Operation::Barrier => Some((OmpCollective::Barrier, BARRIER_NAME)),
        Operation::Allreduce => Some((OmpCollective::AllreduceOne, ALLREDUCE_NAME)),
        Operation::Broadcast { words } => {
            Some((OmpCollective::Broadcast { words }, BROADCAST_NAME))
        }
        Operation::Alltoall { .. } | Operation::Memcpy { .. } => None,
    }
}

/// Measures the OpenMP counterpart of `operation` on `threads` OpenMP threads; `None` when it has
/// none.
pub fn measure(operation: Operation, threads: usize, plan: &RowPlan) -> Option<Row> {
    let (work, name) = counterpart(operation)?;
    Some(sample_rounds(
        name,
        RowKind::Baseline,
        plan.schedule,
        |planned, _deadline| omp_collective_round(threads, planned, work, plan.pin),
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::results::Mode;
    use crate::schedule::Schedule;

    #[test]
    fn every_counterpart_measures() {
        let plan = RowPlan {
            mode: Mode::BackToBack,
            schedule: Schedule {
                episodes: Some(200),
                samples: 2,
                target_sample: Duration::from_millis(1),
                row_budget: Duration::from_secs(10),
            },
            hang_after: Duration::from_secs(60),
            pin: false,
            delay: 0,
        };
        for operation in [
            Operation::Barrier,
            Operation::Allreduce,
            Operation::Broadcast { words: 100 },
        ] {
            let row = measure(operation, 3, &plan).unwrap();
            assert_eq!(row.error, None, "{operation:?}");
            assert_eq!(row.samples_ns.len(), 2, "{operation:?}");
            assert!(row.min().unwrap() > 0.0, "{operation:?}");
        }
        assert!(measure(Operation::Alltoall { block: 1 }, 3, &plan).is_none());
    }
}
