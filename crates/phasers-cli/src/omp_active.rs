//! OpenMP as its users tune it: `OMP_WAIT_POLICY=active`, which makes libgomp's waiting threads
//! spin rather than sleep in the kernel.
//!
//! libgomp reads `OMP_WAIT_POLICY` (and `GOMP_SPINCOUNT`) once, when it is loaded, so this process
//! cannot measure both policies. The tuned rows are measured by a child: this very program,
//! re-executed with the variable set, running the hidden command's job [`KIND`]
//! (`phasers internal-child omp-row`), which reads a [`Job`] on stdin (one OpenMP row with the parent's plan: the same schedule, mode,
//! pinning and calibrated delay) and prints the [`Row`] as JSON on stdout. The parent parses it back, so the tuned row
//! sits in the same table as the default one, and no ratio against OpenMP flatters us.
//!
//! The child's samples are raw, like every row's: the sweep subtracts the OpenMP reference loop
//! it measured itself. That loop is a parallel region of delays alone; its cost per iteration is
//! the delay under either policy, since the region's fork and join are spread over thousands of
//! iterations.
//!
//! A child that fails, prints something other than a row, or outlives its row budget by
//! `--hang-seconds` (it is then killed) gives a failed row that says why, never a crash.

use std::time::Instant;

use phasers_cli::harness::child;
use serde::{Deserialize, Serialize};

use crate::contender::Contender;
use crate::native::{OmpWork, ACTIVE_WAIT_POLICY, SETTLE};
use crate::openmp_row;
use phasers_cli::harness::row::{Row, RowPlan};

/// The kind of job the child runs (see `harness::child`).
pub const KIND: &str = "omp-row";

/// Which OpenMP row the child measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActiveWork {
    /// `#pragma omp barrier`: the row `omp barrier (active)`.
    Barrier,
    /// `#pragma omp for reduction(+:a)`: the row `omp reduction (active)`.
    Reduction,
}

impl ActiveWork {
    /// The row of the parent's table.
    pub fn contender(self) -> Contender {
        match self {
            ActiveWork::Barrier => Contender::OpenMpActive,
            ActiveWork::Reduction => Contender::OmpReductionActive,
        }
    }

    fn omp(self) -> OmpWork {
        match self {
            ActiveWork::Barrier => OmpWork::Barrier,
            ActiveWork::Reduction => OmpWork::Reduction,
        }
    }
}

/// What the child measures, as the parent hands it over on the child's stdin: the row, its
/// threads and the parent's plan (the same schedule, mode, pinning and calibrated delay).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// OpenMP threads.
    pub threads: usize,
    /// The row.
    pub work: ActiveWork,
    /// How the row is measured.
    pub plan: RowPlan,
}

/// The child's side: reads the [`Job`] from stdin, measures the row and prints it as one line
/// of JSON.
pub fn child() -> Result<(), String> {
    child::serve(|job: Job| Ok(openmp_row::run(job.threads, &job.plan, job.work.omp())))
}

/// The parent's side: measures `work` on `threads` threads with `plan` in a child process under
/// `OMP_WAIT_POLICY=active`. The row is raw, as [`openmp_row::run`]'s is.
pub fn run(threads: usize, plan: &RowPlan, work: ActiveWork) -> Row {
    let contender = work.contender();
    let (name, kind) = (contender.name(), contender.kind());
    let start = Instant::now();
    // The child stops itself at its row budget; past that and the hang time, it is stuck.
    let limit = plan.schedule.row_budget + plan.hang_after + SETTLE;
    let job = Job {
        threads,
        work,
        plan: *plan,
    };
    match child::delegate::<_, Row>(KIND, ACTIVE_WAIT_POLICY, &job, limit) {
        Ok(mut row) => {
            row.barrier = name.into_owned();
            row.kind = kind;
            // Process start and libgomp's loading included, as a row's thread start-up is.
            row.row_s = start.elapsed().as_secs_f64();
            row
        }
        Err(error) => Row::failed(&name, kind, plan.schedule.samples, error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use phasers_cli::harness::row::Mode;
    use phasers_cli::harness::schedule::Schedule;

    fn plan(pin: bool, episodes: Option<u64>) -> RowPlan {
        RowPlan {
            mode: Mode::Epcc,
            schedule: Schedule {
                episodes,
                samples: 4,
                target_sample: Duration::from_micros(2500),
                row_budget: Duration::from_millis(1500),
            },
            hang_after: Duration::from_secs(60),
            pin,
            delay: 37,
        }
    }

    #[test]
    fn the_job_survives_its_trip_to_the_child() {
        for (pin, episodes) in [(false, None), (true, Some(50))] {
            let job = Job {
                threads: 3,
                work: ActiveWork::Reduction,
                plan: plan(pin, episodes),
            };
            let text = serde_json::to_string(&job).unwrap();
            assert_eq!(serde_json::from_str::<Job>(&text).unwrap(), job);
        }
    }

    #[test]
    fn a_failed_child_gives_a_failed_row() {
        let mut plan = plan(false, Some(10));
        plan.schedule.row_budget = Duration::from_millis(1);
        plan.hang_after = Duration::from_millis(1);
        // The unit-test binary has no such command, so whatever it does gives no row.
        let row = run(2, &plan, ActiveWork::Barrier);
        assert_eq!(row.barrier, "omp barrier (active)");
        let error = row.error.unwrap();
        assert!(
            error.starts_with("the child process with OMP_WAIT_POLICY=active"),
            "{error}"
        );
        assert!(row.summary.is_none());
    }
}
