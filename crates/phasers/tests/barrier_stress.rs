//! Stress tests of the barrier invariant, for every algorithm and a range of party counts.
//!
//! The invariant: no participant leaves episode `k` before every participant has arrived at `k`.
//! Each participant stores `k + 1` in its own slot before waiting for episode `k`, and checks every
//! slot right after the wait returns. The same run also checks that the wait reports episode `k`,
//! that exactly one participant leads each episode, and that the completion action ran exactly once
//! per episode, after every arrival, and that its effect is visible to everyone released.
//!
//! Party counts 1, 2, 3, 8, 33 and 64 run on whatever the machine has; on the 2-core CI machines the
//! larger ones are heavily oversubscribed, which exercises the park path rather than the spin path.
//! Episode counts keep the whole file within a few minutes in a debug build on 2 cores.

mod barrier_support;

use barrier_support::{builder_with_record, run_checked, Record};
use phasers::barrier::{
    BarrierAlgorithm, CombiningTree, Counting, Dissemination, McsTree, SenseReversing, Ticket,
    Tournament,
};
use phasers::{Algorithm, Barrier};

/// Episodes per run: many where an episode is cheap, a few hundred where 33 or 64 threads must be
/// parked and woken on 2 cores every episode.
fn episodes_for(parties: usize) -> u64 {
    match parties {
        1 => 50_000,
        2 | 3 => 10_000,
        4..=8 => 5_000,
        _ => 2_000,
    }
}

/// The dynamically dispatched barrier (`Barrier` built from an `Algorithm`).
fn stress(algorithm: Algorithm, parties: usize) {
    let episodes = episodes_for(parties);
    let record = Record::new(parties, episodes);
    let barrier = builder_with_record(parties, &record)
        .algorithm(algorithm)
        .build()
        .expect("valid barrier");
    assert_eq!(barrier.algorithm(), algorithm.resolve(parties));
    let what = format!("{algorithm} ({}) with {parties}", barrier.algorithm());
    run_checked(&what, &barrier, &record, episodes);
}

/// The statically dispatched barrier (`Barrier<A>`), which must behave exactly the same.
fn stress_static<A: BarrierAlgorithm>(parties: usize, episodes: u64) {
    let record = Record::new(parties, episodes);
    let barrier: Barrier<A> = builder_with_record(parties, &record)
        .build_static::<A>()
        .expect("valid barrier");
    let what = format!("static {} with {parties}", barrier.algorithm());
    run_checked(&what, &barrier, &record, episodes);
}

/// One `#[test]` per (algorithm, party count), so a failure names both.
macro_rules! stress_tests {
    ($algorithm:expr => $($name:ident: $parties:expr),+ $(,)?) => {
        $(
            #[test]
            fn $name() {
                stress($algorithm, $parties);
            }
        )+
    };
}

stress_tests!(Algorithm::SenseReversing =>
    sense_reversing_1: 1, sense_reversing_2: 2, sense_reversing_3: 3,
    sense_reversing_8: 8, sense_reversing_33: 33, sense_reversing_64: 64);
stress_tests!(Algorithm::Counting =>
    counting_1: 1, counting_2: 2, counting_3: 3,
    counting_8: 8, counting_33: 33, counting_64: 64);
stress_tests!(Algorithm::Ticket =>
    ticket_1: 1, ticket_2: 2, ticket_3: 3,
    ticket_8: 8, ticket_33: 33, ticket_64: 64);
stress_tests!(Algorithm::CombiningTree =>
    combining_tree_1: 1, combining_tree_2: 2, combining_tree_3: 3,
    combining_tree_8: 8, combining_tree_33: 33, combining_tree_64: 64);
stress_tests!(Algorithm::McsTree =>
    mcs_tree_1: 1, mcs_tree_2: 2, mcs_tree_3: 3,
    mcs_tree_8: 8, mcs_tree_33: 33, mcs_tree_64: 64);
stress_tests!(Algorithm::Dissemination =>
    dissemination_1: 1, dissemination_2: 2, dissemination_3: 3,
    dissemination_8: 8, dissemination_33: 33, dissemination_64: 64);
stress_tests!(Algorithm::Tournament =>
    tournament_1: 1, tournament_2: 2, tournament_3: 3,
    tournament_8: 8, tournament_33: 33, tournament_64: 64);
stress_tests!(Algorithm::Auto =>
    auto_1: 1, auto_2: 2, auto_3: 3,
    auto_8: 8, auto_33: 33, auto_64: 64);

/// Static dispatch for every concrete algorithm, at a size with partial tree levels (5) and an
/// oversubscribed one that is not a power of two (17).
#[test]
fn static_dispatch_every_algorithm() {
    for parties in [5, 17] {
        let episodes = episodes_for(parties).min(500);
        stress_static::<SenseReversing>(parties, episodes);
        stress_static::<Counting>(parties, episodes);
        stress_static::<Ticket>(parties, episodes);
        stress_static::<CombiningTree>(parties, episodes);
        stress_static::<McsTree>(parties, episodes);
        stress_static::<Dissemination>(parties, episodes);
        stress_static::<Tournament>(parties, episodes);
    }
}

/// The combining tree at the extremes of its fan-in: 2 gives the deepest tree (6 levels for 33
/// parties), `MAX_FAN_IN` a single node; 33 also leaves the last node of each level partly filled.
#[test]
fn combining_tree_fan_in_extremes() {
    for fan_in in [2, 3, phasers::barrier::MAX_FAN_IN] {
        for parties in [7, 33] {
            let episodes = 300;
            let record = Record::new(parties, episodes);
            let barrier = builder_with_record(parties, &record)
                .algorithm(Algorithm::CombiningTree)
                .fan_in(fan_in)
                .build()
                .expect("valid barrier");
            let what = format!("combining tree, fan-in {fan_in}, {parties} parties");
            run_checked(&what, &barrier, &record, episodes);
        }
    }
}
