//! Seed 000's barrier with dynamic parallelism (Habanero-Java hierarchical phasers, figure 16b,
//! the EPCC Syncbench extended the way figure 1 grows a team) on async tasks, one task per
//! participant:
//!
//! ```text
//! finish {
//!   final phaser ph = new phaser(SIG_WAIT);
//!   for (int nth = 2; nth <= 64; nth++) {
//!     async phased (ph<SIG_WAIT>) {
//!       for (int n = nth; n <= 64; n++) { next; delay(delaylength); }
//!     }
//!     next; delay(delaylength);
//!   }
//! }
//! ```
//!
//! The parent task, itself running on the runtime, registers one child per iteration of its
//! loop (`async phased`: the child joins in the parent's phase) and spawns it as a task of its
//! own; each child takes part in the phases from there to the last, then drops its
//! registration (it deregisters, as an HJ activity does when it terminates). So phase `p` has
//! `p + 2` participants. Every participant sends 1 to a sum accumulator and calls
//! `next_single_async`, whose action (run by exactly one of them, between the phases) records the
//! phase's sum; each also checks, once released, that the sum it reads is its phase's team. The
//! `delay` is a `yield_now`, so the tasks take turns on the runtime's two worker threads.
//!
//! The phasers library needs no runtime: tokio (rt-multi-thread and macros only) is this
//! example's executor, a 2-worker multi-thread runtime. Run it with
//! `cargo run --release -p phasers-apps --example async_phased`; it asserts its results and
//! prints them.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use phasers::{Accumulator, Error, Mode, Op, Phaser};

/// The figure's largest team: the parent and 63 children.
pub const MAX_THREADS: u64 = 64;

/// What one run of the dynamic team did.
#[derive(Debug)]
pub struct Outcome {
    /// The participants of each phase, as the phase's `next_single` action read them from the sum.
    pub team_sizes: Vec<i64>,
    /// `(nth, phases)` for each child: the iteration that created it, and the phases it took
    /// part in.
    pub children: Vec<(u64, u64)>,
    /// The phaser's phase once every registration was dropped.
    pub final_phase: u64,
    /// Whether the phaser terminated (the last registration's drop ends it).
    pub terminated: bool,
    /// The wall time of the whole team, task creation included.
    pub elapsed: Duration,
}

/// One participant's phases: from the one it joined in, `phases` of them, each a signal of its
/// share, a `next_single_async`, and a check of the phase's team.
async fn take_part(
    registration: &mut phasers::Registration,
    parties: &Accumulator<i64>,
    team_sizes: &Mutex<Vec<i64>>,
    phases: u64,
) -> Result<(), Error> {
    for _ in 0..phases {
        let phase = registration.phase();
        parties.send(registration, 1)?;
        let record = || team_sizes.lock().unwrap().push(parties.result());
        registration.next_single_async(record).await?;
        // Phase `p` had the parent and the `p + 1` children created so far.
        assert_eq!(
            parties.result(),
            phase as i64 + 2,
            "the team of phase {phase}"
        );
        tokio::task::yield_now().await; // the figure's `delay(delaylength)`
    }
    Ok(())
}

/// Figure 16b with teams growing from 2 to `max_threads` participants, on the runtime it is
/// called from (spawning a task per participant).
pub async fn dynamic_team(max_threads: u64) -> Result<Outcome, Error> {
    assert!(max_threads >= 2, "the figure starts with a team of 2");
    let start = Instant::now();
    let (phaser, parent) = Phaser::new(Mode::SigWaitSingle)?;
    let parties = Arc::new(Accumulator::<i64>::new(&phaser, Op::Sum)?);
    let team_sizes = Arc::new(Mutex::new(Vec::new()));
    let (sizes, sums) = (team_sizes.clone(), parties.clone());
    // The parent is a task too: it registers its children while it runs.
    let parent = tokio::spawn(async move {
        let mut parent = parent;
        let mut children = Vec::new();
        for nth in 2..=max_threads {
            // `async phased (ph<SIG_WAIT>)`: registered by the running parent, in its phase.
            let mut child = parent.register(Mode::SigWaitSingle)?;
            let (parties, team_sizes) = (sums.clone(), sizes.clone());
            let phases = max_threads - nth + 1;
            children.push(tokio::spawn(async move {
                take_part(&mut child, &parties, &team_sizes, phases).await?;
                Ok::<_, Error>((nth, phases))
                // `child` is dropped here: the task deregisters.
            }));
            take_part(&mut parent, &sums, &sizes, 1).await?;
        }
        drop(parent); // the last one out terminates the phaser
        let mut done = Vec::new();
        for child in children {
            done.push(child.await.expect("a child task panicked")?);
        }
        Ok::<_, Error>(done)
    });
    let children = parent.await.expect("the parent task panicked")?;
    let team_sizes = team_sizes.lock().unwrap().clone();
    Ok(Outcome {
        team_sizes,
        children,
        final_phase: phaser.phase(),
        terminated: phaser.is_terminated(),
        elapsed: start.elapsed(),
    })
}

/// Checks an outcome of [`dynamic_team`]`(max_threads)`.
pub fn check(outcome: &Outcome, max_threads: u64) {
    // One action per phase, in phase order, each seeing that phase's whole team: 2, 3, ... .
    let expected: Vec<i64> = (2..=max_threads as i64).collect();
    assert_eq!(outcome.team_sizes, expected);
    // Child `nth` took part in the phases `nth - 2 ..= max_threads - 2`.
    let children: Vec<(u64, u64)> = (2..=max_threads)
        .map(|nth| (nth, max_threads - nth + 1))
        .collect();
    assert_eq!(outcome.children, children);
    // Every phase the team ran completed; the last drop completed the one it was in, and ended
    // the phaser.
    assert_eq!(outcome.final_phase, max_threads);
    assert!(outcome.terminated);
}

/// Runs figure 16b with teams of 2 to [`MAX_THREADS`] tasks on a 2-worker runtime, checks it,
/// and prints what it did.
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
pub async fn main() -> Result<(), Error> {
    let outcome = dynamic_team(MAX_THREADS).await?;
    check(&outcome, MAX_THREADS);
    let barriers = MAX_THREADS - 1;
    println!(
        "figure 16b on 2 worker threads: teams of 2 to {MAX_THREADS} tasks, {barriers} phases, \
         {} child tasks registered while running and dropped when done",
        outcome.children.len()
    );
    println!(
        "team per phase (read by each phase's next_single action): {:?} ... {:?}",
        &outcome.team_sizes[..3],
        &outcome.team_sizes[outcome.team_sizes.len() - 3..]
    );
    println!(
        "{:.1} us per phase, task creation included (seed 000's Table II: 23.8 us on 64 Niagara-2 threads)",
        outcome.elapsed.as_secs_f64() * 1e6 / barriers as f64
    );
    Ok(())
}
