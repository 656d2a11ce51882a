//! The OpenMP rows: `#pragma omp barrier` must run on OpenMP's own threads inside a parallel
//! region, so each round is one call into the C shim, which times the whole region, fork and join
//! included, exactly as EPCC syncbench does. The rounds and samples are decided here by the same
//! [`Sampler`] as every other row.

use std::time::{Duration, Instant};

use crate::bench::{into_row, Measured, RowPlan};
use crate::contender::Contender;
use crate::delay::delay;
use crate::native::{omp_round, Delay};
use crate::results::{Mode, Row, RowKind};
use crate::schedule::Sampler;

/// How long libgomp's idle threads may keep spinning after a region: up to 300,000 spins by
/// default (`GOMP_SPINCOUNT`), some milliseconds. The next row waits this long, so on a small
/// machine it does not share the cores with them.
const SETTLE: Duration = Duration::from_millis(100);

/// Measures the OpenMP barrier on `threads` OpenMP threads (`with_barrier`), or EPCC's reference
/// loop for it: the same parallel region and delays with no barrier (not `with_barrier`).
pub fn run(threads: usize, plan: &RowPlan, with_barrier: bool) -> Row {
    let (name, kind) = if with_barrier {
        (Contender::OpenMp.name(), Contender::OpenMp.kind())
    } else {
        ("omp reference loop", RowKind::Loop)
    };
    let schedule = plan.schedule;
    let start = Instant::now();
    let mut sampler = Sampler::new(schedule);
    let delay = match plan.mode {
        Mode::Epcc => Some(Delay {
            function: delay,
            arg: plan.delay,
        }),
        Mode::BackToBack => None,
    };
    let mut next = Some(sampler.first_round());
    let mut error = None;
    while let Some(planned) = next {
        let deadline = sampler.round_deadline(start.elapsed());
        match omp_round(threads, planned, delay, with_barrier, plan.pin, deadline) {
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
