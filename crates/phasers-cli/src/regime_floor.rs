//! The floor row of each table: the least a barrier of that many threads can cost on this machine.
//!
//! While every thread has a core, an episode needs at least one cache-line round trip between
//! cores (`floor`). Once threads outnumber cores, the threads sharing a core must each get to run
//! before the episode completes, so an episode costs at least one yield hand-off per thread on a
//! core: `ceil(threads / cores)` of them (`phasers::Floors::yield_handoff`). Dividing an
//! oversubscribed barrier by the round trip would say "100x the floor" of a barrier that is as
//! good as the machine allows.

use serde::{Deserialize, Serialize};

use phasers_cli::harness::floor::Floor;
use phasers_cli::harness::noise;
use phasers_cli::harness::stats;

/// Which bound applies at a thread count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regime {
    /// Every thread has a core: one cache-line round trip.
    RoundTrip,
    /// Threads outnumber cores: this many yield hand-offs, `ceil(threads / cores)`.
    YieldHandoffs(usize),
}

impl Regime {
    /// The regime of `threads` threads on `cores` cores.
    pub fn of(threads: usize, cores: usize) -> Self {
        let cores = cores.max(1);
        if threads <= cores {
            Regime::RoundTrip
        } else {
            Regime::YieldHandoffs(threads.div_ceil(cores))
        }
    }

    /// What the table's note says: `round trip`, `4 yield hand-offs`.
    pub fn describe(self) -> String {
        match self {
            Regime::RoundTrip => "round trip".to_owned(),
            Regime::YieldHandoffs(1) => "1 yield hand-off".to_owned(),
            Regime::YieldHandoffs(count) => format!("{count} yield hand-offs"),
        }
    }
}

/// [`Regime`] as the JSON names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegimeName {
    /// [`Regime::RoundTrip`].
    RoundTrip,
    /// [`Regime::YieldHandoffs`].
    YieldHandoffs,
}

/// The floor row of one table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegimeFloor {
    /// The table's thread count.
    pub threads: usize,
    /// Which bound applies.
    pub regime: RegimeName,
    /// For `yield-handoffs`: how many, `ceil(threads / cores)`.
    pub yield_handoffs: Option<usize>,
    /// The floor in each round, in ns: the round trip's median in that round, or the hand-offs
    /// (`Floors::measure().yield_handoff()` taken in that round, times their count).
    pub round_medians_ns: Vec<f64>,
    /// The floor: the median of the round trips of every round, or the median over the rounds
    /// of the hand-offs.
    pub median_ns: Option<f64>,
    /// The smallest sample (round trip) or round (hand-offs).
    pub min_ns: Option<f64>,
    /// The slowest round over the fastest (see `noise::spread`).
    pub spread: Option<f64>,
    /// The regime in words, and the floor's own caveats (unpinned, samples cut).
    pub note: String,
}

impl RegimeFloor {
    /// The round-trip floor of `threads` threads: `merged` is the round trip over this table's
    /// rounds, `rounds` each round's own measurement.
    pub fn round_trip(threads: usize, merged: &Floor, rounds: &[Floor]) -> Self {
        let round_medians_ns: Vec<f64> = rounds.iter().filter_map(|f| f.median_ns).collect();
        let regime = Regime::RoundTrip;
        RegimeFloor {
            threads,
            regime: RegimeName::RoundTrip,
            yield_handoffs: None,
            spread: noise::spread(&round_medians_ns),
            round_medians_ns,
            median_ns: merged.median_ns,
            min_ns: merged.min_ns,
            note: match &merged.note {
                Some(note) => format!("{}; {note}", regime.describe()),
                None => regime.describe(),
            },
        }
    }

    /// The hand-off floor of `threads` threads on `cores` cores, from the yield hand-off measured
    /// in each round (ns). The median over the rounds, since each is one measurement.
    pub fn yield_handoffs(threads: usize, cores: usize, handoff_ns: &[f64]) -> Self {
        let regime = Regime::of(threads, cores);
        let count = match regime {
            Regime::YieldHandoffs(count) => count,
            Regime::RoundTrip => 1,
        };
        let round_medians_ns: Vec<f64> = handoff_ns.iter().map(|ns| ns * count as f64).collect();
        RegimeFloor {
            threads,
            regime: RegimeName::YieldHandoffs,
            yield_handoffs: Some(count),
            median_ns: stats::median(&round_medians_ns),
            min_ns: stats::min(&round_medians_ns),
            spread: noise::spread(&round_medians_ns),
            note: match handoff_ns {
                [] => format!("{}: not measured", regime.describe()),
                _ => format!(
                    "{} of {} each",
                    regime.describe(),
                    phasers_cli::harness::table::time(stats::median(handoff_ns).unwrap_or(0.0))
                ),
            },
            round_medians_ns,
        }
    }

    /// As one side of a ratio.
    pub fn side(&self) -> Option<noise::Side> {
        Some(noise::Side {
            name: "floor".to_owned(),
            median_ns: self.median_ns?,
            spread: self.spread,
        })
    }

    /// Which bound it is.
    pub fn regime(&self) -> Regime {
        match (self.regime, self.yield_handoffs) {
            (RegimeName::YieldHandoffs, Some(count)) => Regime::YieldHandoffs(count),
            _ => Regime::RoundTrip,
        }
    }

    /// The name ratio lines give it: `floor (round trip)`.
    pub fn label(&self) -> String {
        format!("floor ({})", self.regime().describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::floor;

    #[test]
    fn each_thread_count_has_its_regime() {
        assert_eq!(Regime::of(1, 2), Regime::RoundTrip);
        assert_eq!(Regime::of(2, 2), Regime::RoundTrip);
        assert_eq!(Regime::of(3, 2), Regime::YieldHandoffs(2));
        assert_eq!(Regime::of(4, 2), Regime::YieldHandoffs(2));
        assert_eq!(Regime::of(5, 2), Regime::YieldHandoffs(3));
        assert_eq!(Regime::of(64, 2), Regime::YieldHandoffs(32));
        assert_eq!(
            Regime::of(3, 0),
            Regime::YieldHandoffs(3),
            "0 cores counts as 1"
        );
        assert_eq!(Regime::YieldHandoffs(4).describe(), "4 yield hand-offs");
        assert_eq!(Regime::RoundTrip.describe(), "round trip");
    }

    #[test]
    fn oversubscribed_floors_are_hand_offs_per_thread_on_a_core() {
        // 8 threads on 2 cores: 4 hand-offs of about 1 µs, measured in three rounds.
        let floor = RegimeFloor::yield_handoffs(8, 2, &[1000.0, 1200.0, 1100.0]);
        assert_eq!(floor.regime(), Regime::YieldHandoffs(4));
        assert_eq!(floor.yield_handoffs, Some(4));
        let json = serde_json::to_string(&floor).unwrap();
        assert!(json.contains(r#""regime":"yield-handoffs""#), "{json}");
        assert_eq!(floor.round_medians_ns, vec![4000.0, 4800.0, 4400.0]);
        assert_eq!(floor.median_ns, Some(4400.0));
        assert_eq!(floor.min_ns, Some(4000.0));
        assert_eq!(floor.spread, Some(1.2));
        assert_eq!(floor.note, "4 yield hand-offs of 1100 ns each");
        assert_eq!(floor.label(), "floor (4 yield hand-offs)");
        assert_eq!(floor.side().unwrap().median_ns, 4400.0);
        let unmeasured = RegimeFloor::yield_handoffs(8, 2, &[]);
        assert_eq!(unmeasured.median_ns, None);
        assert!(unmeasured.side().is_none());
    }

    #[test]
    fn a_round_trip_floor_is_the_merged_measurement() {
        let rounds = [floor(&[60.0, 70.0]), floor(&[300.0, 320.0])];
        let merged = floor(&[60.0, 70.0, 300.0, 320.0]);
        let regime = RegimeFloor::round_trip(2, &merged, &rounds);
        assert_eq!(regime.round_medians_ns, vec![65.0, 310.0]);
        assert_eq!(regime.median_ns, Some(185.0));
        assert_eq!(regime.spread, Some(310.0 / 65.0));
        assert_eq!(regime.note, "round trip");
    }
}
