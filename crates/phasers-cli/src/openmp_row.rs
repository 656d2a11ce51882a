//! The OpenMP rows: `#pragma omp barrier` and `#pragma omp for reduction` must run on OpenMP's own
//! threads inside a parallel region, so each round is one call into the C shim, which times the
//! whole region, fork and join included, exactly as EPCC syncbench does. The rounds and samples
//! are decided here by the same [`Sampler`] as every other row.

use std::time::{Duration, Instant};

use crate::contender::Contender;
use crate::native::openmp::OmpRound;
use crate::native::{omp_round, Delay, OmpWork};
use phasers_cli::harness::delay::delay;
use phasers_cli::harness::row::{into_row, Mode, Row, RowKind, RowPlan};
use phasers_cli::harness::schedule::{Sampler, Schedule};
use phasers_cli::harness::threaded_row::Measured;

/// How long libgomp's idle threads may keep spinning after a region: up to 300,000 spins by
/// default (`GOMP_SPINCOUNT`), some milliseconds. The next row waits this long, so on a small
/// machine it does not share the cores with them.
pub const SETTLE: Duration = Duration::from_millis(100);

/// Measures `work` on `threads` OpenMP threads: the OpenMP barrier, the OpenMP reduction, or
/// EPCC's reference loop for both ([`OmpWork::Loop`]: the same parallel region and delays alone).
pub fn run(threads: usize, plan: &RowPlan, work: OmpWork) -> Row {
    let (name, kind) = match work {
        OmpWork::Loop => ("omp reference loop".into(), RowKind::Loop),
        OmpWork::Barrier => (Contender::OpenMp.name(), Contender::OpenMp.kind()),
        OmpWork::Reduction => (
            Contender::OmpReduction.name(),
            Contender::OmpReduction.kind(),
        ),
    };
    let delay = match plan.mode {
        Mode::Epcc => Some(Delay {
            function: delay,
            arg: plan.delay,
        }),
        Mode::BackToBack => None,
    };
    sample_rounds(&name, kind, plan.schedule, |planned, deadline| {
        omp_round(threads, planned, delay, work, plan.pin, deadline)
            .and_then(|round| checked(round, threads, work))
    })
}

/// Runs the rounds of an OpenMP row, each one call of `round(episodes, deadline)`, sized by the
/// same [`Sampler`] as every other row, then lets libgomp's threads settle (see [`SETTLE`]).
pub fn sample_rounds(
    name: &str,
    kind: RowKind,
    schedule: Schedule,
    mut round: impl FnMut(u64, Duration) -> Result<OmpRound, String>,
) -> Row {
    let start = Instant::now();
    let mut sampler = Sampler::new(schedule);
    let mut next = Some(sampler.first_round());
    let mut error = None;
    while let Some(planned) = next {
        let deadline = sampler.round_deadline(start.elapsed());
        match round(planned, deadline) {
            Ok(round) => {
                next = sampler.after_round(planned, round.ran, round.elapsed, start.elapsed());
            }
            Err(message) => {
                error = Some(message);
                next = None;
            }
        }
    }
    let elapsed = start.elapsed();
    std::thread::sleep(SETTLE);
    into_row(
        name,
        kind,
        schedule,
        Measured {
            sampler,
            error,
            elapsed,
            pin_note: None,
        },
    )
}

/// The round, unless it is a reduction whose result is wrong: a fast wrong answer is a failure,
/// as EPCC's own check of the reduction variable says.
fn checked(round: OmpRound, threads: usize, work: OmpWork) -> Result<OmpRound, String> {
    let expected = u64::try_from(threads)
        .ok()
        .and_then(|threads| threads.checked_mul(round.ran))
        .and_then(|sum| i64::try_from(sum).ok());
    match work {
        OmpWork::Reduction if expected != Some(round.sum) => Err(format!(
            "wrong result: the reduction of {} iterations on {threads} threads summed to {}, \
             not {threads} x {}",
            round.ran, round.sum, round.ran
        )),
        _ => Ok(round),
    }
}
