//! What every OpenMP row shares, whichever shim call it times: its rounds are sized by the same
//! sampler as every other row ([`engine::calls`]), libgomp's idle threads are given time to stop spinning after
//! it, and its tuned twin runs under `OMP_WAIT_POLICY=active`.

use std::time::Duration;

use phasers_cli::harness::engine;
use phasers_cli::harness::row::{into_row, Row, RowKind, RowPlan};

use super::openmp::OmpRound;

/// How long libgomp's idle threads may keep spinning after a region: up to 300,000 spins by
/// default (`GOMP_SPINCOUNT`), some milliseconds. The next row waits this long, so on a small
/// machine it does not share the cores with them.
pub const SETTLE: Duration = Duration::from_millis(100);

/// The variable and value of OpenMP as its users tune it: libgomp's waiting threads spin rather
/// than sleep in the kernel. libgomp reads it once, when it loads, so the rows that use it are
/// measured by a child process started with it set.
pub const ACTIVE_WAIT_POLICY: (&str, &str) = ("OMP_WAIT_POLICY", "active");

/// Runs the rounds of an OpenMP row, each one call of `round(episodes, deadline)`, sized by the
/// same sampler as every other row, then lets libgomp's threads settle (see [`SETTLE`]).
pub fn sample_rounds(
    name: &str,
    kind: RowKind,
    plan: &RowPlan,
    mut round: impl FnMut(u64, Duration) -> Result<OmpRound, String>,
) -> Row {
    let measured = engine::calls(&plan.engine(), |planned, deadline| {
        round(planned, deadline).map(|round| (round.ran, round.elapsed))
    });
    std::thread::sleep(SETTLE);
    into_row(name, kind, plan.schedule, measured)
}
