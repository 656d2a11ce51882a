//! A contender at a point made a row: run it, compute the metrics, note anything odd.

use std::sync::Arc;
use std::time::Instant;

use phasers_cli::harness::engine::{self, Measured, Timeline};
use phasers_cli::harness::stalls::StallPolicy;
use phasers_cli::harness::stats::Summary;
use phasers_cli::harness::watchdog::Watch;

use super::bandwidth_floor;
// Defined with the settings: `omp_active` and `openmp` take a point and are called from here.
use super::config::WARM_UP;
pub use super::config::{Point, StopRule};
use super::contender::{Contender, Kind, FLOOR_NAME};
use super::metrics::{Completion, Summaries};
use super::mutex;
use super::omp_active;
use super::openmp;
use super::ours;
use super::results::{add_note, ReduceRow};

/// Measures `contender` at `point`.
pub fn measure(contender: Contender, point: &Point<'_>) -> ReduceRow {
    let (threads, len, collective) = (point.threads, point.len, point.collective);
    let watch = Watch::new(contender.name(), threads, point.hang_after);
    let policy = StallPolicy::for_threads(threads);
    let plan = point
        .stop
        .plan(Some(Arc::clone(point.stalls)), point.hang_after);
    let start = Instant::now();
    let timeline = match contender {
        Contender::Ours(algorithm) => {
            ours::participants(algorithm, threads, len, collective, point.expected)
                .and_then(|works| stamps(engine::threads(works, &plan, &watch)))
        }
        Contender::Mutex => {
            let works = mutex::participants(threads, len, collective, point.expected);
            stamps(engine::threads(works, &plan, &watch))
        }
        // A child process measures it and computes the whole row.
        Contender::OpenMpActive => return omp_active::measure(point),
        Contender::OpenMp => openmp::run(point, policy, &watch),
    };
    let mut row = ReduceRow::skipped(contender, point, None);
    row.realized_spread = Some(point.stalls.realized());
    row.stall_policy = Some(policy);
    fill(&mut row, timeline, collective.completion(), point.stop);
    row.row_s = start.elapsed().as_secs_f64();
    row
}

/// The stamps of a row, or why it has none.
fn stamps(measured: Measured) -> Result<Timeline, String> {
    match (measured.error, measured.timeline) {
        (Some(error), _) => Err(error),
        (None, Some(timeline)) => Ok(timeline),
        (None, None) => Err("the row ran no iteration".to_owned()),
    }
}

/// Measures the bandwidth floor of `point`'s participants, length and collective (it does not
/// stall, so the spread plays no part).
pub fn measure_floor(point: &Point<'_>) -> ReduceRow {
    let works = bandwidth_floor::participants(point.threads, point.len, point.collective);
    let watch = Watch::new(FLOOR_NAME, works.len(), point.hang_after);
    let plan = point.stop.plan(None, point.hang_after);
    let start = Instant::now();
    let mut row = skipped_floor(point, None);
    let timeline = stamps(engine::threads(works, &plan, &watch));
    fill(&mut row, timeline, Completion::Last, point.stop);
    row.row_s = start.elapsed().as_secs_f64();
    // The longest worker's own time, not the time from the first start: a worker that leaves
    // the barrier late (woken from a park, or kept off its core) has not slowed the memory
    // system, and should not lower the floor the reductions are held to.
    row.bandwidth_gb_s = per_ns(row.bytes, row.summaries.longest_call_ns);
    row.fraction_of_floor = row.bandwidth_gb_s.map(|_| 1.0);
    row
}

/// The bandwidth-floor row of `point`, not run (yet), saying why when `why` is given.
pub fn skipped_floor(point: &Point<'_>, why: Option<&str>) -> ReduceRow {
    let (threads, len) = (point.threads, point.len);
    let workers = bandwidth_floor::workers(threads);
    let kind = Kind::Floor;
    let mut row = ReduceRow::new(FLOOR_NAME, kind, threads, workers, len, point.collective);
    row.note = why.map(|why| format!("not run: {why}"));
    row
}

/// Sets the row's bandwidth as a fraction of `floor`'s (the floor row of the same point). A
/// reduction's time is from the first arrival to completion: all of its data movement, where the
/// time from the last arrival may only hold the last step.
pub fn compare_with_floor(row: &mut ReduceRow, floor: &ReduceRow) {
    row.bandwidth_gb_s = per_ns(row.bytes, row.summaries.first_arrival_to_completion_ns);
    row.fraction_of_floor = match (row.bandwidth_gb_s, floor.bandwidth_gb_s) {
        (Some(ours), Some(floor)) if floor > 0.0 => Some(ours / floor),
        _ => None,
    };
}

/// `bytes` over the median of `time`, in GB/s (bytes per ns).
fn per_ns(bytes: u64, time: Option<Summary>) -> Option<f64> {
    let ns = time?.median;
    (ns > 0.0).then(|| bytes as f64 / ns)
}

/// Fills `row` from what its run produced.
fn fill(
    row: &mut ReduceRow,
    timeline: Result<Timeline, String>,
    completion: Completion,
    stop: StopRule,
) {
    let timeline = match timeline {
        Ok(timeline) => timeline,
        Err(error) => return row.error = Some(error),
    };
    let measured = timeline.iterations.saturating_sub(WARM_UP);
    row.iterations = measured;
    row.summaries = Summaries::of_timeline(&timeline, completion, WARM_UP);
    for algorithm in timeline.chose.iter().skip(WARM_UP) {
        *row.chose.entry((*algorithm).to_owned()).or_insert(0) += 1;
    }
    if measured < stop.min_iterations && measured < stop.max_iterations {
        let budget = stop.budget.as_secs_f64();
        let note = format!(
            "{measured} of {} iterations: the row's {budget} s budget ran out",
            stop.min_iterations
        );
        add_note(&mut row.note, note);
    }
    let early = row
        .summaries
        .last_arrival_to_completion_ns
        .is_some_and(|s| s.min < 0.0);
    if early {
        let note = "a completion stamped before the last arrival: clocks disagree".to_owned();
        add_note(&mut row.note, note);
    }
}

/// Points for the tests of what measures rows.
#[cfg(test)]
pub mod tests {
    use std::time::Duration;

    use super::*;
    use crate::reduce_bench::metrics::Metric;
    use crate::reduce_bench::workload;
    use crate::reduce_bench::workload::Collective;
    use phasers_cli::harness::stalls::{Preset, Spread, Stalls};

    /// What a test's [`Point`] borrows: its spread, stalls and sequential sum.
    pub struct Owned {
        threads: usize,
        len: usize,
        spread: Spread,
        stalls: Arc<Stalls>,
        expected: Arc<[f32]>,
    }

    impl Owned {
        /// `threads` participants reducing `len` floats, with `iterations` rows of stalls drawn
        /// from `preset`.
        pub fn new(preset: Preset, threads: usize, len: usize, iterations: usize) -> Self {
            let spread = preset.spread();
            let stalls = Arc::new(Stalls::generate(&spread, threads, iterations, 1));
            let expected = workload::expected(threads, len).into();
            Owned {
                threads,
                len,
                spread,
                stalls,
                expected,
            }
        }

        /// Its point for `collective` and `stop`; hung after a minute.
        pub fn point(&self, collective: Collective, stop: StopRule) -> Point<'_> {
            Point {
                threads: self.threads,
                len: self.len,
                collective,
                spread: &self.spread,
                stalls: &self.stalls,
                expected: &self.expected,
                stop,
                hang_after: Duration::from_secs(60),
            }
        }
    }

    /// Rows of `min` to `max` measured iterations and at least a millisecond, within `budget`.
    pub fn stop_rule(min: usize, max: usize, budget: Duration) -> StopRule {
        StopRule {
            min_iterations: min,
            min_time: Duration::from_millis(1),
            max_iterations: max,
            budget,
        }
    }

    fn stop() -> StopRule {
        stop_rule(3, 10, Duration::from_secs(10))
    }

    #[test]
    fn every_contender_and_the_floor_make_complete_rows() {
        let owned = Owned::new(Preset::Low, 3, 500, 11);
        for collective in Collective::ALL {
            let point = owned.point(collective, stop());
            let floor = measure_floor(&point);
            assert_eq!(
                (floor.error.as_deref(), floor.fraction_of_floor),
                (None, Some(1.0))
            );
            assert!(floor.bandwidth_gb_s.unwrap() > 0.0);
            // The child's row needs the phasers binary (see tests/omp_active.rs).
            for contender in Contender::all()
                .into_iter()
                .filter(|c| *c != Contender::OpenMpActive)
            {
                let mut row = measure(contender, &point);
                assert_eq!(row.error, None, "{row:?}");
                assert!((3..=10).contains(&row.iterations), "{row:?}");
                assert_eq!(row.spread.as_deref(), Some("low"));
                assert!(row.median(Metric::Total).is_some());
                assert!(row.median(Metric::LastArrival).unwrap() >= 0.0);
                compare_with_floor(&mut row, &floor);
                assert!(row.fraction_of_floor.unwrap() > 0.0);
            }
        }
    }

    #[test]
    fn a_failed_or_short_row_says_so() {
        let mut row = ReduceRow::new("x", Kind::Ours, 2, 2, 1, Collective::Reduce);
        fill(&mut row, Err("boom".into()), Completion::Last, stop());
        assert_eq!((row.error.as_deref(), row.iterations), (Some("boom"), 0));
        let mut row = ReduceRow::new("x", Kind::Ours, 1, 1, 1, Collective::Reduce);
        let timeline = Timeline {
            threads: 1,
            iterations: 2,
            arrive_ns: vec![0, 10],
            return_ns: vec![5, 20],
            chose: Vec::new(),
        };
        fill(&mut row, Ok(timeline), Completion::Last, stop());
        assert_eq!(row.iterations, 1);
        assert!(row.note.as_deref().unwrap().contains("1 of 3 iterations"));
    }
}
