//! The barriers a team's barrier and allreduce are held against, on Rust threads through the same
//! harness: `std::sync::Barrier`, what a Rust program has without this library, and our own
//! `Barrier` with `Algorithm::Auto`, the fastest barrier the library offers (a team barrier pays
//! for more: checking, sync modes, sub-teams).

use phasers::{Algorithm, Barrier};

use crate::bench::RowPlan;
use crate::contender::StdHandle;
use crate::results::{Row, RowKind};

use super::looped;

/// The name of the `std::sync::Barrier` row.
pub const STD_NAME: &str = "std::sync::Barrier";
/// The name of our `Barrier` row.
pub const OURS_NAME: &str = "phasers::Barrier auto";

/// `std::sync::Barrier` among `threads` threads.
pub fn std_barrier(threads: usize, plan: &RowPlan) -> Row {
    let barrier = std::sync::Barrier::new(threads);
    looped::measure(
        STD_NAME,
        RowKind::Baseline,
        vec![StdHandle(&barrier); threads],
        plan,
    )
}

/// Our `Barrier` with `Algorithm::Auto` among `threads` threads, with what `auto` resolved to.
pub fn our_barrier(threads: usize, plan: &RowPlan) -> Row {
    match Barrier::with_algorithm(threads, Algorithm::Auto) {
        Ok(barrier) => {
            let mut row = looped::measure(OURS_NAME, RowKind::Ours, barrier.participants(), plan);
            row.resolved = Some(barrier.algorithm().name().to_owned());
            row.wait_policy = Some(barrier.wait_policy().name().to_owned());
            row
        }
        Err(error) => Row::failed(
            OURS_NAME,
            RowKind::Ours,
            plan.schedule.samples,
            format!("cannot build: {error}"),
        ),
    }
}
