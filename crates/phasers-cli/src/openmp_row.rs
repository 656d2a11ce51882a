//! The OpenMP rows: `#pragma omp barrier` and `#pragma omp for reduction` must run on OpenMP's own
//! threads inside a parallel region, so each round is one call into the C shim, which times the
//! whole region, fork and join included, exactly as EPCC syncbench does. The rounds and samples
//! are decided by the same sampler as every other row ([`sample_rounds`]).

use crate::contender::Contender;
use crate::native::openmp::OmpRound;
use crate::native::{omp_round, sample_rounds, Delay, OmpWork};
use phasers_cli::harness::delay::delay;
use phasers_cli::harness::row::{Mode, Row, RowKind, RowPlan};

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
    sample_rounds(&name, kind, plan, |planned, deadline| {
        omp_round(threads, planned, delay, work, plan.pin, deadline)
            .and_then(|round| checked(round, threads, work))
    })
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
