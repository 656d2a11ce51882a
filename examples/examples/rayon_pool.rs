//! Barriers and a team on a rayon pool: a 1-D heat stencil whose steps meet at a [`Barrier`], and
//! whose total heat is summed by a [`Team`] allreduce, run on the threads of a
//! `rayon::ThreadPool`.
//!
//! The pattern: [`ThreadPool::broadcast`] runs a closure once on every thread of the pool, and
//! `ctx.index()` (0 to `num_threads - 1`) is that thread's rank, so each thread takes
//! `barrier.participant(ctx.index())` and `team.participant(ctx.index())`. Every rank must run
//! on its own thread at the same time, so the pool must have exactly one thread per party:
//! [`heat_on_pool`] checks that first and returns [`Error::InvalidArgument`] otherwise, instead
//! of leaving ranks unclaimed and the threads that did start waiting for them for ever.
//!
//! Run it with `cargo run -p phasers-apps --example rayon_pool`; it asserts its results and
//! prints them. `docs/guide.md` (section "On a rayon pool") explains the pitfalls.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use phasers::{AnyThreadBarrier, Barrier, Error, Op, Team};
use rayon::{ThreadPool, ThreadPoolBuilder};

/// One explicit heat step for cell `i` of `cells`, with 0 outside the rod (the ends lose heat).
fn step_cell(cells: impl Fn(usize) -> f64, i: usize, len: usize) -> f64 {
    let left = if i == 0 { 0.0 } else { cells(i - 1) };
    let right = if i + 1 == len { 0.0 } else { cells(i + 1) };
    0.25 * left + 0.5 * cells(i) + 0.25 * right
}

/// The cells rank `rank` of `ranks` updates: a contiguous block, the blocks covering `0..len`.
fn block(rank: usize, ranks: usize, len: usize) -> std::ops::Range<usize> {
    rank * len / ranks..(rank + 1) * len / ranks
}

/// The stencil on one thread: `steps` steps from `initial`, and the total heat summed block by
/// block in rank order for `ranks` blocks (the order the team's allreduce combines them in).
pub fn heat_sequential(initial: &[f64], steps: usize, ranks: usize) -> (Vec<f64>, f64) {
    let mut cells = initial.to_vec();
    for _ in 0..steps {
        let old = cells.clone();
        for (i, cell) in cells.iter_mut().enumerate() {
            *cell = step_cell(|j| old[j], i, old.len());
        }
    }
    let total = (0..ranks)
        .map(|rank| {
            block(rank, ranks, cells.len())
                .map(|i| cells[i])
                .sum::<f64>()
        })
        .fold(0.0, |sum, part| sum + part);
    (cells, total)
}

/// The stencil on every thread of `pool`: rank `ctx.index()` updates its block of cells, the
/// ranks meet at `barrier` after each step, and `team` sums the heat at the end. Returns the
/// final cells and the total heat every rank got from the allreduce.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the pool does not have exactly one thread per party of
/// `barrier` and `team`, before any thread waits: with fewer threads some ranks would never be
/// claimed and the others would wait for them for ever; with more, the extra threads would find
/// no rank. Otherwise the first error a rank got ([`Error::Broken`] if one panicked, or
/// [`Error::InvalidArgument`] if a rank's handle was already taken).
pub fn heat_on_pool(
    pool: &ThreadPool,
    barrier: &Barrier,
    team: &Team,
    initial: &[f64],
    steps: usize,
) -> Result<(Vec<f64>, f64), Error> {
    let threads = pool.current_num_threads();
    if threads != barrier.parties() || threads != team.parties() {
        return Err(Error::InvalidArgument {
            message: format!(
                "the pool has {threads} threads but the barrier has {} parties and the team {}: \
                 broadcast runs one rank per pool thread, so build the pool with \
                 ThreadPoolBuilder::num_threads(parties)",
                barrier.parties(),
                team.parties()
            ),
        });
    }
    let len = initial.len();
    // Two grids of f64 bit patterns: step s reads grid s % 2 and writes the other. Relaxed
    // loads and stores suffice: the barrier orders each step's writes before the next's reads.
    let grids: [Vec<AtomicU64>; 2] = [
        initial
            .iter()
            .map(|x| AtomicU64::new(x.to_bits()))
            .collect(),
        initial
            .iter()
            .map(|x| AtomicU64::new(x.to_bits()))
            .collect(),
    ];
    let totals = pool.broadcast(|ctx| -> Result<f64, Error> {
        let rank = ctx.index();
        let mut participant = barrier.participant(rank)?;
        let mut member = team.participant(rank)?;
        let mine = block(rank, threads, len);
        for step in 0..steps {
            let (old, new) = (&grids[step % 2], &grids[(step + 1) % 2]);
            let cell = |j: usize| f64::from_bits(old[j].load(Ordering::Relaxed));
            for i in mine.clone() {
                new[i].store(step_cell(cell, i, len).to_bits(), Ordering::Relaxed);
            }
            // Nobody reads this step's cells, or overwrites the ones it read, before every rank
            // is done with it.
            participant.wait()?;
        }
        let last = &grids[steps % 2];
        let part: f64 = mine
            .map(|i| f64::from_bits(last[i].load(Ordering::Relaxed)))
            .sum();
        let mut total = [0.0];
        member.allreduce(&[part], &mut total, Op::Sum)?;
        Ok(total[0])
    });
    let totals = totals.into_iter().collect::<Result<Vec<f64>, Error>>()?;
    // Every rank got the same total from the allreduce.
    assert!(totals.iter().all(|t| t.to_bits() == totals[0].to_bits()));
    let cells = grids[steps % 2]
        .iter()
        .map(|x| f64::from_bits(x.load(Ordering::Relaxed)))
        .collect();
    Ok((cells, totals[0]))
}

/// A pool of exactly `threads` threads.
pub fn pool_of(threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool of a few threads")
}

/// Runs the stencil on a pool of 4 threads and checks it against the sequential run, then shows
/// that a pool of 2 threads for 4 parties is refused (a `Barrier` and a `Team`) or gives up (an
/// `AnyThreadBarrier` with `wait_timeout`) instead of hanging. `pub` for `tests/rayon_pool.rs`.
pub fn main() -> Result<(), Error> {
    const RANKS: usize = 4;
    const STEPS: usize = 200;
    // A rod of 1,000 cells, hot in the middle.
    let initial: Vec<f64> = (0..1000)
        .map(|i| if (400..600).contains(&i) { 100.0 } else { 0.0 })
        .collect();

    // One thread per party: the stencil runs and matches the sequential run cell for cell.
    let pool = pool_of(RANKS);
    let (barrier, team) = (Barrier::new(RANKS), Team::new(RANKS)?);
    let (cells, total) = heat_on_pool(&pool, &barrier, &team, &initial, STEPS)?;
    let (expected_cells, expected_total) = heat_sequential(&initial, STEPS, RANKS);
    assert!(cells
        .iter()
        .zip(&expected_cells)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!((total - expected_total).abs() <= 1e-9 * expected_total.abs());
    // 200 hot cells of 100: the heat has not reached the ends yet, so none was lost.
    assert!((total - 20_000.0).abs() < 1e-6, "total heat {total}");
    println!(
        "{RANKS} pool threads, {STEPS} steps: total heat {total:.6}, as computed sequentially"
    );

    // A pool with fewer threads than parties is refused before any thread waits.
    let small = pool_of(2);
    let (barrier, team) = (Barrier::new(RANKS), Team::new(RANKS)?);
    let refused = heat_on_pool(&small, &barrier, &team, &initial, STEPS);
    assert!(matches!(refused, Err(Error::InvalidArgument { .. })));
    println!(
        "2 pool threads, 4 parties: refused: {}",
        refused.unwrap_err()
    );

    // An AnyThreadBarrier has no ranks to check: with 2 threads for 4 parties, a plain wait
    // would wait for ever. A timed wait gives up, which breaks the barrier, so every call returns.
    let anonymous = AnyThreadBarrier::new(RANKS);
    let results = small.broadcast(|_| anonymous.wait_timeout(Duration::from_millis(200)));
    assert!(results
        .iter()
        .all(|r| matches!(r, Err(Error::Timeout { .. } | Error::Broken { .. }))));
    assert!(anonymous.is_broken());
    println!("2 pool threads, AnyThreadBarrier of 4: every wait_timeout gave up: {results:?}");
    Ok(())
}
