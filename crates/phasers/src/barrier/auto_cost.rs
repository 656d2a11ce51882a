//! The cost model behind `Auto`'s built-in rule when every party has a core of its own.
//!
//! A spinning barrier's episode costs about as many cache-line transfers as its critical path
//! holds, each about one round trip `R` of the floor that every report measures first (a line
//! moved between two cores and back). So the model counts an algorithm's critical path in round
//! trips, [`round_trips`], and the built-in rule, [`builtin_choice`], takes the cheapest of its
//! candidates. A machine's `R` ([`Floors::round_trip`](crate::Floors::round_trip)) turns round
//! trips into time.
//!
//! # Where the coefficients come from
//!
//! Every coefficient is fitted by least squares to `benchmarks/barrier-16core-scaling.txt` (and
//! `.json`, the same run): a 16-core Xeon VM, EPCC mode, 1 to 16 threads, each on a core. Its
//! medians are contaminated by a parking lock-in (waiters parked, and each release woke every
//! sleeper serially), so the fits use each row's **minimum**, which is the spinning cost, divided
//! by the minimum of its table's floor row (the round trip measured in the same rounds: 157, 164,
//! 154 and 142 ns at 2, 4, 8 and 12 threads). A minimum above 20 `R` is a parked sample, not a
//! spinning one, and is left out: sense-reversing, ticket and the combining tree at 12 threads, MCS
//! from 8, every algorithm at 16. Where the `auto` row (which ran counting) and the `counting` row
//! differ, the lower minimum is counting's. In round trips:
//!
//! | threads (floor) | counting | sense-reversing | ticket | combining tree | MCS | dissemination | tournament |
//! |---|---|---|---|---|---|---|---|
//! | 2 (157 ns) | **0.95** | 1.30 | 1.36 | 1.33 | 2.50 | 1.39 | 2.15 |
//! | 4 (164 ns) | 3.59 | 3.33 | 3.22 | 3.53 | 4.26 | **2.65** | 3.82 |
//! | 8 (154 ns) | 7.93 | 5.66 | 5.76 | 5.20 | parked | **4.35** | 7.20 |
//! | 12 (142 ns) | 12.93 | parked | parked | parked | parked | **5.91** | 7.75 |
//!
//! # What the model does not see
//!
//! - **One `R` for every pair of cores.** Every term is a multiple of `R`, so `R` scales every
//!   prediction alike and cannot change which algorithm is cheapest: the choice depends on the
//!   party count and the cores alone (a test checks it at round trips from 40 to 400 ns). A
//!   machine whose round trip differs between pairs of cores (sockets, NUMA nodes) would need a
//!   cost per tree level that nothing here measured.
//! - **Traffic that contends.** Dissemination sends `n · ceil(log2 n)` signals; the run's cost per
//!   round already rises from 1.32 `R` at 4 threads to 1.48 `R` at 12, and seed 002 measured it
//!   behind the tournament barrier at 28 to 256 threads. A cost per round fitted at 2 to 12
//!   threads cannot predict that, so the rule does not offer dissemination beyond the 16 parties
//!   (4 rounds) it was measured at ([`DISSEMINATION_MAX_PARTIES`]), rather than pretend the model
//!   says so: by the model alone it would stay the cheapest at any count.
//! - **Parked waiters.** The model is the spinning cost. When waiters sleep, a release costs
//!   wake-ups (the wake floor), which is why more parties than cores get `Counting` (one release
//!   word, one wake-up pass) whatever this model says.

use super::dissemination::rounds_for;
use crate::algorithm::Algorithm;

/// Counting: each arrival after the first is one RMW on the line that every waiter polls, so each
/// hands the line over while the pollers pull it back. Fitted through the origin (one party costs
/// nothing) to counting at 2, 4, 8 and 12 threads: 0.95, 3.59, 7.93, 12.93 `R` for 1, 3, 7, 11
/// arrivals after the first.
const COUNTING_PER_ARRIVAL: f64 = 1.16;

/// Sense-reversing: arrivals on a counter line that nobody polls are cheaper than counting's, and
/// a separate release word costs one broadcast. Fitted (intercept and slope) to sense-reversing at
/// 2, 4, 8 threads: 1.30, 3.33, 5.66 `R`.
const SENSE_RELEASE: f64 = 0.84;
/// See [`SENSE_RELEASE`].
const SENSE_PER_ARRIVAL: f64 = 0.71;

/// Ticket: the same shape as sense-reversing (a counter, a separate word that serves episodes).
/// Fitted to ticket at 2, 4, 8 threads: 1.36, 3.22, 5.76 `R`.
const TICKET_RELEASE: f64 = 0.81;
/// See [`TICKET_RELEASE`].
const TICKET_PER_ARRIVAL: f64 = 0.72;

/// The fan-in of the combining tree that `Auto` would build and the run measured: the builder's
/// default.
const COMBINING_TREE_FAN_IN: usize = 4;

/// Combining tree: at each level up, the fullest node's arrivals are RMWs on its counter (the last
/// arrival climbs), and each level costs a release on the way back down. Fitted (per level and per
/// arrival) to the combining tree at 2, 4, 8 threads: 1.33, 3.53, 5.20 `R` (1, 1, 2 levels; 1, 3,
/// 4 arrivals on the critical path).
const COMBINING_TREE_PER_LEVEL: f64 = 0.23;
/// See [`COMBINING_TREE_PER_LEVEL`].
const COMBINING_TREE_PER_ARRIVAL: f64 = 1.10;

/// MCS tree: one step per level up the 4-ary arrival tree and down the binary wake-up tree. Fitted
/// through the origin to MCS at 2 and 4 threads (2 and 3 steps): 2.50, 4.26 `R`; it parked at 8
/// threads and above, so nothing measured it spinning at scale.
const MCS_PER_STEP: f64 = 1.37;

/// Dissemination: one signal and one poll per round, `ceil(log2 n)` rounds. Fitted through the
/// origin to dissemination at 2, 4, 8, 12 threads (1 to 4 rounds): 1.39, 2.65, 4.35, 5.91 `R`.
const DISSEMINATION_PER_ROUND: f64 = 1.45;

/// Tournament: `ceil(log2 n)` matches up and as many wake-ups down, each a flag with one writer
/// and one reader. Fitted through the origin to tournament at 2, 4, 8, 12 threads (2 to 8 steps):
/// 2.15, 3.82, 7.20, 7.75 `R`.
const TOURNAMENT_PER_STEP: f64 = 1.04;

/// The most parties the rule offers dissemination to: `2^4`, the most rounds (4) the 16-core run
/// measured it spinning at (12 threads), where it was the fastest of every row. Beyond, seed 002
/// measured the software barriers at 28 threads (HARP: OpenMP best, "the tournament and counting
/// barriers follow closely behind", dissemination and tournament "no better"), 64 (NUMA-4:
/// tournament best) and 256 (Xeon Phi: tournament best): dissemination's `n · ceil(log2 n)`
/// signals contend there, which its fitted cost per round cannot see.
const DISSEMINATION_MAX_PARTIES: usize = 16;

/// An algorithm the rule may choose, and the most parties it may choose it for.
struct Candidate {
    algorithm: Algorithm,
    max_parties: usize,
}

/// The rule's candidates, in the order that settles an exact tie (only one party, where every
/// algorithm costs nothing, ties). The others are modeled but never chosen:
///
/// - ticket: the shape and the cost of sense-reversing (level with it in every measured row,
///   within 0.11 `R`), without its support for [`leave`](crate::Participant::leave);
/// - the combining tree: measured spinning only up to 8 threads, and never the cheapest there, by
///   measurement or by the model; above, its fit is unchecked, and would undercut the tournament
///   barrier above 16 parties (8.4 `R` against 10.4 at 17), where nothing measured it;
/// - MCS: measured spinning only at 2 and 4 threads, the slowest of ours at both; seed 001 found it
///   no faster than a centralized barrier up to 16 threads (false sharing of the children's
///   flags). Its fit, from two points, would undercut the tournament barrier above 16 parties
///   (8.2 `R` against 10.4 at 17), where only the tournament barrier was measured (seed 002).
const CANDIDATES: [Candidate; 4] = [
    // Measured the fastest at 2 threads (0.95 R, against 1.30 for the next central one).
    Candidate {
        algorithm: Algorithm::Counting,
        max_parties: usize::MAX,
    },
    Candidate {
        algorithm: Algorithm::SenseReversing,
        max_parties: usize::MAX,
    },
    Candidate {
        algorithm: Algorithm::Dissemination,
        max_parties: DISSEMINATION_MAX_PARTIES,
    },
    // Seed 002's best software barrier at 64 (NUMA-4) and 256 threads (Xeon Phi).
    Candidate {
        algorithm: Algorithm::Tournament,
        max_parties: usize::MAX,
    },
];

/// What `Auto` stands for by the built-in rule with `parties` participants and `cores` cores:
/// [`Counting`](Algorithm::Counting) when the parties outnumber the cores (one release word, so one
/// wake-up pass releases every sleeper), else the candidate the model predicts cheapest.
///
/// With a core for each party this gives: counting at 1 and 2 parties, sense-reversing at 3 and 5,
/// dissemination at 4 and at 6 to 16, tournament above 16. (Dissemination needs a second round at 3
/// parties and a third at 5, each for one party more, which costs more than that party's arrival
/// on a central counter.)
pub(crate) fn builtin_choice(parties: usize, cores: usize) -> Algorithm {
    if parties > cores {
        return Algorithm::Counting;
    }
    CANDIDATES
        .iter()
        .filter(|candidate| parties <= candidate.max_parties)
        .map(|candidate| candidate.algorithm)
        // `min_by` keeps the first of equal costs: the candidates' order settles ties.
        .min_by(|a, b| round_trips(*a, parties).total_cmp(&round_trips(*b, parties)))
        .expect("counting is a candidate at every party count")
}

/// The predicted cost of one episode of `algorithm` with `parties` participants, each spinning on
/// a core of its own, in cache-line round trips. `Auto` costs what the rule picks with a core for
/// each party. One party costs nothing: its barrier never waits.
pub(crate) fn round_trips(algorithm: Algorithm, parties: usize) -> f64 {
    if parties <= 1 {
        return 0.0;
    }
    let arrivals = (parties - 1) as f64;
    let rounds = rounds_for(parties) as f64;
    match algorithm {
        Algorithm::Auto => round_trips(builtin_choice(parties, usize::MAX), parties),
        Algorithm::Counting => COUNTING_PER_ARRIVAL * arrivals,
        Algorithm::SenseReversing => SENSE_RELEASE + SENSE_PER_ARRIVAL * arrivals,
        Algorithm::Ticket => TICKET_RELEASE + TICKET_PER_ARRIVAL * arrivals,
        Algorithm::CombiningTree => combining_tree(parties, COMBINING_TREE_FAN_IN),
        Algorithm::McsTree => {
            let steps = heap_depth(parties, 4) + heap_depth(parties, 2);
            MCS_PER_STEP * steps as f64
        }
        Algorithm::Dissemination => DISSEMINATION_PER_ROUND * rounds,
        Algorithm::Tournament => TOURNAMENT_PER_STEP * 2.0 * rounds,
    }
}

/// A combining tree of `fan_in`: at each level, the fullest node has up to `fan_in` members, the
/// last of whom climbs; each level is released on the way back down.
fn combining_tree(parties: usize, fan_in: usize) -> f64 {
    let mut cost = 0.0;
    let mut members = parties;
    while members > 1 {
        let at_node = members.min(fan_in);
        cost += COMBINING_TREE_PER_LEVEL + COMBINING_TREE_PER_ARRIVAL * (at_node - 1) as f64;
        members = members.div_ceil(fan_in);
    }
    cost
}

/// The levels below the root of a `k`-ary tree laid out as a heap (node `i`'s children are
/// `k·i + 1 ..= k·i + k`) with `nodes` nodes: the depth of the last node.
fn heap_depth(nodes: usize, k: usize) -> usize {
    let mut depth = 0;
    let mut node = nodes - 1;
    while node > 0 {
        node = (node - 1) / k;
        depth += 1;
    }
    depth
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::barrier::MAX_PARTIES;

    /// The spinning minima of `benchmarks/barrier-16core-scaling.json` the coefficients are fitted
    /// to: (algorithm, threads, the row's minimum in ns, its table's floor minimum in ns).
    /// The reference row (a hand-written sense-reversing barrier) is not ours to choose.
    const MEASURED_16_CORES: [(Algorithm, usize, f64, f64); 23] = [
        (Algorithm::Counting, 2, 149.6, 157.2),
        (Algorithm::Counting, 4, 588.4, 164.0),
        (Algorithm::Counting, 8, 1223.6, 154.3),
        (Algorithm::Counting, 12, 1833.1, 141.8),
        (Algorithm::SenseReversing, 2, 204.1, 157.2),
        (Algorithm::SenseReversing, 4, 546.3, 164.0),
        (Algorithm::SenseReversing, 8, 872.8, 154.3),
        (Algorithm::Ticket, 2, 213.4, 157.2),
        (Algorithm::Ticket, 4, 527.9, 164.0),
        (Algorithm::Ticket, 8, 888.9, 154.3),
        (Algorithm::CombiningTree, 2, 209.4, 157.2),
        (Algorithm::CombiningTree, 4, 578.1, 164.0),
        (Algorithm::CombiningTree, 8, 802.5, 154.3),
        (Algorithm::McsTree, 2, 392.5, 157.2),
        (Algorithm::McsTree, 4, 698.8, 164.0),
        (Algorithm::Dissemination, 2, 218.6, 157.2),
        (Algorithm::Dissemination, 4, 433.8, 164.0),
        (Algorithm::Dissemination, 8, 671.3, 154.3),
        (Algorithm::Dissemination, 12, 837.5, 141.8),
        (Algorithm::Tournament, 2, 337.6, 157.2),
        (Algorithm::Tournament, 4, 626.8, 164.0),
        (Algorithm::Tournament, 8, 1110.7, 154.3),
        (Algorithm::Tournament, 12, 1098.7, 141.8),
    ];

    fn measured_round_trips() -> impl Iterator<Item = (Algorithm, usize, f64)> {
        MEASURED_16_CORES
            .into_iter()
            .map(|(algorithm, threads, min, floor)| (algorithm, threads, min / floor))
    }

    /// The expected choice with a core for each party, written out as the docs state it.
    fn documented(parties: usize, cores: usize) -> Algorithm {
        match parties {
            _ if parties > cores => Algorithm::Counting,
            0..=2 => Algorithm::Counting,
            3 | 5 => Algorithm::SenseReversing,
            4 | 6..=16 => Algorithm::Dissemination,
            _ => Algorithm::Tournament,
        }
    }

    #[test]
    fn every_fit_predicts_its_measured_minima_within_a_quarter() {
        for (algorithm, threads, measured) in measured_round_trips() {
            let model = round_trips(algorithm, threads);
            let error = model / measured - 1.0;
            // The worst is counting at 2 threads (+22%): its cost per arrival is fitted where
            // the arrivals queue (4 to 12 threads), and two threads barely do.
            assert!(
                error.abs() <= 0.25,
                "{algorithm} at {threads} threads: model {model:.2} R, measured {measured:.2} R"
            );
        }
    }

    #[test]
    fn the_rule_picks_the_measured_winner_at_every_measured_count() {
        for threads in [2, 4, 8, 12] {
            let spinning: Vec<(Algorithm, f64)> = measured_round_trips()
                .filter(|&(_, t, _)| t == threads)
                .map(|(algorithm, _, measured)| (algorithm, measured))
                .collect();
            let (winner, _) = spinning
                .iter()
                .copied()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            assert_eq!(builtin_choice(threads, 16), winner, "{threads} threads");
        }
        // Counting at 2 parties is what the data says, not a default.
        assert_eq!(builtin_choice(2, 16), Algorithm::Counting);
    }

    #[test]
    fn choices_on_simulated_many_core_machines() {
        for cores in [16, 64, 256] {
            for parties in (0..=300).chain([1000, MAX_PARTIES]) {
                assert_eq!(
                    builtin_choice(parties, cores),
                    documented(parties, cores),
                    "{parties} parties on {cores} cores"
                );
            }
        }
        // Spot checks of the table on `Algorithm`'s docs.
        assert_eq!(builtin_choice(8, 16), Algorithm::Dissemination);
        assert_eq!(builtin_choice(16, 16), Algorithm::Dissemination);
        assert_eq!(builtin_choice(17, 16), Algorithm::Counting);
        assert_eq!(builtin_choice(17, 64), Algorithm::Tournament);
        assert_eq!(builtin_choice(64, 64), Algorithm::Tournament);
        assert_eq!(builtin_choice(256, 256), Algorithm::Tournament);
        assert_eq!(builtin_choice(257, 256), Algorithm::Counting);
    }

    /// The 2-core machines we measure on: up to 2 parties each has a core and counting is the
    /// cheapest; above, the parties outnumber the cores. Counting everywhere, as before.
    #[test]
    fn two_cores_keep_counting_at_every_count() {
        for parties in 0..=64 {
            assert_eq!(builtin_choice(parties, 2), Algorithm::Counting, "{parties}");
        }
        assert_eq!(builtin_choice(1, 1), Algorithm::Counting);
        assert_eq!(builtin_choice(2, 1), Algorithm::Counting);
    }

    /// What the model predicts on a machine whose round trip is `round_trip`.
    fn predicted(algorithm: Algorithm, parties: usize, round_trip: Duration) -> Duration {
        round_trip.mul_f64(round_trips(algorithm, parties))
    }

    /// Every term is a multiple of the round trip, so the machine's round trip cannot reorder the
    /// candidates: the choice is the cheapest prediction at any round trip.
    #[test]
    fn the_choice_is_the_cheapest_prediction_at_any_round_trip() {
        for nanos in [40, 55, 148, 190, 400] {
            let round_trip = Duration::from_nanos(nanos);
            for parties in 2..=256 {
                let chosen = builtin_choice(parties, 256);
                let chosen_cost = predicted(chosen, parties, round_trip);
                for candidate in CANDIDATES.iter().filter(|c| parties <= c.max_parties) {
                    assert!(
                        chosen_cost <= predicted(candidate.algorithm, parties, round_trip),
                        "{parties} parties at R = {nanos} ns: {chosen} over {}",
                        candidate.algorithm
                    );
                }
            }
        }
        assert_eq!(
            predicted(Algorithm::Tournament, 64, Duration::from_nanos(100)),
            Duration::from_nanos(1248) // 1.04 R per step, 12 steps
        );
    }

    /// Dissemination's limit comes from seed 002, not from the model: by the model alone it would
    /// stay the cheapest above 16 parties.
    #[test]
    fn above_16_parties_tournament_is_the_seeds_choice_not_the_models() {
        for parties in [17, 28, 64, 256, 384] {
            assert!(
                round_trips(Algorithm::Dissemination, parties)
                    < round_trips(Algorithm::Tournament, parties)
            );
            assert_eq!(builtin_choice(parties, parties), Algorithm::Tournament);
        }
    }

    #[test]
    fn costs_never_fall_as_parties_grow() {
        for algorithm in std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE) {
            assert_eq!(round_trips(algorithm, 1), 0.0, "{algorithm}");
            for parties in 2..=1024 {
                assert!(
                    round_trips(algorithm, parties) >= round_trips(algorithm, parties - 1),
                    "{algorithm} at {parties}"
                );
            }
        }
    }

    #[test]
    fn tree_shapes() {
        assert_eq!(heap_depth(1, 2), 0);
        assert_eq!(heap_depth(2, 4), 1);
        assert_eq!(heap_depth(5, 4), 1); // root and four children
        assert_eq!(heap_depth(6, 4), 2);
        assert_eq!(heap_depth(3, 2), 1);
        assert_eq!(heap_depth(4, 2), 2);
        // Combining tree of fan-in 4: one node of 2; one of 4; leaves of 4 under a root of 2.
        let node =
            |members: f64| COMBINING_TREE_PER_LEVEL + COMBINING_TREE_PER_ARRIVAL * (members - 1.0);
        assert_eq!(combining_tree(2, 4), node(2.0));
        assert_eq!(combining_tree(4, 4), node(4.0));
        assert_eq!(combining_tree(8, 4), node(4.0) + node(2.0));
    }
}
