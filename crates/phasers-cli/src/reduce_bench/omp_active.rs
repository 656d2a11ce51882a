//! OpenMP's array reduction as its users tune it, `OMP_WAIT_POLICY=active`: the row
//! `omp reduction(+:arr[:n]) (active)`.
//!
//! With libgomp's default policy a thread that waits long enough sleeps in the kernel, and under a
//! wide arrival spread the reduction then waits for a wake-up, sometimes for the next timer tick.
//! OpenMP users who care set `OMP_WAIT_POLICY=active`, so the tuned row stands next to the default
//! one. libgomp reads the variable only when it loads, so a child process measures the row (see
//! [`ACTIVE_WAIT_POLICY`]): the parent hands it the point on stdin (sizes, collective, spread, the
//! very stall table the other rows of the point read, and the stop rule), the child runs the
//! OpenMP row exactly as the parent would and prints the finished row as JSON.

use std::sync::Arc;
use std::time::{Duration, Instant};

use phasers_cli::harness::child;
use serde::{Deserialize, Serialize};

use crate::native::ACTIVE_WAIT_POLICY;

use super::config::Point;
use super::config::StopRule;
use super::contender::Contender;
use super::results::ReduceRow;
use super::workload::{self, Collective};
use phasers_cli::harness::stalls::{Spread, Stalls};

/// The kind of job the child runs (`phasers internal-child omp-reduce-row`; see
/// `harness::child`).
pub const KIND: &str = "omp-reduce-row";

/// One point, as the child needs it to measure the OpenMP row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Job {
    threads: usize,
    len: usize,
    collective: Collective,
    spread: Spread,
    /// The stall table, row by row: the same stalls every other row of the point meets.
    stalls: Vec<u64>,
    stop: StopRule,
    hang_after: Duration,
}

impl Job {
    fn of(point: &Point<'_>) -> Self {
        Job {
            threads: point.threads,
            len: point.len,
            collective: point.collective,
            spread: *point.spread,
            stalls: point.stalls.as_slice().to_vec(),
            stop: point.stop,
            hang_after: point.hang_after,
        }
    }
}

/// The parent's side: the OpenMP row of `point`, measured by a child under
/// `OMP_WAIT_POLICY=active`.
pub fn measure(point: &Point<'_>) -> ReduceRow {
    let start = Instant::now();
    // The child stops at the row budget; past that and the hang time, it is stuck.
    let limit = point.stop.budget + point.hang_after + Duration::from_secs(5);
    let name = Contender::OpenMpActive.name();
    match child::delegate::<_, ReduceRow>(KIND, ACTIVE_WAIT_POLICY, &Job::of(point), limit) {
        Ok(mut row) => {
            row.name = name.to_owned();
            // Process start and libgomp's loading included, as a row's thread start-up is.
            row.row_s = start.elapsed().as_secs_f64();
            row
        }
        Err(error) => {
            // The point's blank row, failed rather than skipped.
            let mut row = ReduceRow::skipped(Contender::OpenMpActive, point, None);
            row.error = Some(error);
            row
        }
    }
}

/// The child's side: reads the job from stdin, measures the OpenMP row with `measure` and prints
/// it.
pub fn child(measure: impl FnOnce(&Point<'_>) -> ReduceRow) -> Result<(), String> {
    child::serve(|job: Job| {
        let stalls = std::sync::Arc::new(Stalls::from_table(job.threads, job.stalls)?);
        let expected: Arc<[f32]> = workload::expected(job.threads, job.len).into();
        let point = Point {
            threads: job.threads,
            len: job.len,
            collective: job.collective,
            spread: &job.spread,
            stalls: &stalls,
            expected: &expected,
            stop: job.stop,
            hang_after: job.hang_after,
        };
        Ok(measure(&point))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::row::tests::{stop_rule, Owned};
    use phasers_cli::harness::stalls::Preset;

    #[test]
    fn a_job_keeps_the_stalls_and_a_failed_child_gives_a_failed_row() {
        let owned = Owned::new(Preset::Low, 3, 10, 7);
        let stop = stop_rule(1, 2, Duration::from_millis(1));
        let point = Point {
            hang_after: Duration::from_millis(1),
            ..owned.point(Collective::Allreduce, stop)
        };
        let job = Job::of(&point);
        let back: Job = serde_json::from_str(&serde_json::to_string(&job).unwrap()).unwrap();
        assert_eq!(back, job);
        assert_eq!(
            &Stalls::from_table(3, back.stalls).unwrap(),
            &**point.stalls
        );
        // The unit-test binary has no such command, so whatever it does gives no row.
        let row = measure(&point);
        assert_eq!(row.name, "omp reduction(+:arr[:n]) (active)");
        let error = row.error.unwrap();
        assert!(
            error.starts_with("the child process with OMP_WAIT_POLICY=active"),
            "{error}"
        );
        assert_eq!(row.iterations, 0);
    }
}
