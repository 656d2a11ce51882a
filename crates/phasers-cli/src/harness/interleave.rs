//! One table of rows measured in interleaved rounds: round 1 of the floor and of every row, then
//! round 2 of each, and so on; then each row's rounds merged back into one row, the loop it
//! subtracts taken off, and the table's floor row added.
//!
//! A shared machine can sit in a fast state (a cache-line round trip of about 60 ns) or a slow one
//! (about 300 ns) for minutes at a time. Measured one after another, two rows can land in
//! different states and their ratio say more about the machine than about the rows; measured in
//! interleaved rounds, every row sees every state alike, and the rounds' disagreement says how
//! far the machine drifted (see [`super::noise`]).
//!
//! The floor row is the least one iteration of that many threads can cost here ([`Regime`]): the
//! threads sharing a core must each get to run, so dividing an oversubscribed barrier by the round
//! trip would call "100x the floor" a barrier that is as good as the machine allows.

use indicatif::ProgressBar;
use phasers::Floors;

use super::floor::{self, Floor};
use super::noise;
use super::resolution::{clock_step_ns, interquartile_range};
use super::result::{Fields, Kind, Row};
use super::schedule::Schedule;
use super::stats;
use super::table::time;

/// One row of a table to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct RowPlan<C> {
    /// What the benchmark measures for it.
    pub contender: C,
    /// Its name in the table and the JSON.
    pub name: String,
    /// What it is.
    pub kind: Kind,
    /// The rest of its parameter point.
    pub at: Fields,
    /// The index in the table of the loop whose median it subtracts, if any.
    pub subtracts: Option<usize>,
}

/// One table: its rows at one thread count, in the order run and shown.
#[derive(Debug, Clone, PartialEq)]
pub struct TablePlan<C> {
    /// Threads of every row.
    pub threads: usize,
    /// The rows; a loop another row subtracts comes before it.
    pub rows: Vec<RowPlan<C>>,
    /// Rounds each row's samples are split into.
    pub rounds: usize,
    /// Samples each round drops at its start as warm-up.
    pub dropped: usize,
    /// Whether each round measures the floor too, for a floor row.
    pub floor: bool,
}

impl<C> TablePlan<C> {
    /// The tests it runs: every row and the floor, in every round.
    pub fn tests(&self) -> usize {
        self.rounds * (self.rows.len() + usize::from(self.floor))
    }
}

/// What a table measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Its floor row (if it measured one), then its rows in order, rounds merged.
    pub rows: Vec<Row>,
    /// The round trip of each round, for the run's merged floor.
    pub round_trips: Vec<Floor>,
}

/// Measures `table` in interleaved rounds, each running the rows in the order `order(round)`
/// gives as indices (twins measured back to back alternate which goes first): `row(plan, round)`
/// measures one round of a row as a raw row, `floor_schedule(round)` how the round's floor is
/// sampled; each test counts on `progress`.
pub fn measure<C>(
    table: &TablePlan<C>,
    order: impl Fn(usize) -> Vec<usize>,
    progress: &ProgressBar,
    mut row: impl FnMut(&RowPlan<C>, usize) -> Row,
    floor_schedule: impl Fn(usize) -> Schedule,
) -> Measured {
    let threads = table.threads;
    let regime = Regime::of(threads, phasers::available_cores());
    let (mut round_trips, mut handoffs_ns) = (Vec::new(), Vec::new());
    let mut rounds: Vec<Vec<Row>> = vec![Vec::with_capacity(table.rounds); table.rows.len()];
    for round in 0..table.rounds {
        let step = |what: &str| {
            let count = table.rounds;
            progress.set_message(format!(
                "{threads} threads, round {}/{count}: {what}",
                round + 1
            ));
        };
        if table.floor {
            step("floor");
            round_trips.push(floor::measure(floor_schedule(round)));
            if regime != Regime::RoundTrip {
                // A few milliseconds; measured in every round so that it drifts with the rows.
                handoffs_ns.push(Floors::measure().yield_handoff().as_nanos() as f64);
            }
            progress.inc(1);
        }
        for index in order(round) {
            step(&table.rows[index].name);
            rounds[index].push(row(&table.rows[index], round));
            progress.inc(1);
        }
    }
    let mut merged: Vec<Option<Row>> = vec![None; table.rows.len()];
    // The loops first: the rows after them subtract their merged median.
    for pass in [false, true] {
        for (index, plan) in table.rows.iter().enumerate() {
            if plan.subtracts.is_some() != pass {
                continue;
            }
            let reference = plan.subtracts.and_then(|at| merged[at].as_ref());
            let mut row = merge_row(&rounds[index], reference, table.dropped);
            let scatter = reference.and_then(|loop_row| interquartile_range(&loop_row.samples_ns));
            let clock = match row.iterations_per_sample {
                0 => 0.0,
                iterations => clock_step_ns() / iterations as f64,
            };
            row.resolution_ns = Some(clock.max(scatter.unwrap_or(0.0)));
            merged[index] = Some(row);
        }
    }
    let floor = table.floor.then(|| match regime {
        Regime::RoundTrip => round_trip_row(threads, &round_trips),
        Regime::YieldHandoffs(count) => handoffs_row(threads, count, &handoffs_ns),
    });
    Measured {
        rows: floor
            .into_iter()
            .chain(merged.into_iter().flatten())
            .collect(),
        round_trips,
    }
}

/// Merges the rounds of a row and subtracts the median of the loop `reference`, if it has one.
/// The loop's rounds are merged first, and each row subtracts the median over all of them rather
/// than its own round's: the loop is local computation, which the machine's slow state barely
/// touches, and one value over every round is more precise. The median, not EPCC's mean: one
/// preempted sample of the loop (400 µs among 1 µs ones, seen on 2-core VMs) dragged the mean so
/// far that the OpenMP rows came out negative. A loop that failed leaves the row without numbers.
fn merge_row(rounds: &[Row], reference: Option<&Row>, dropped: usize) -> Row {
    let Some(reference) = reference else {
        return merge(rounds, dropped, None);
    };
    if let (None, Some(median)) = (&reference.error, reference.median()) {
        return merge(rounds, dropped, Some(median));
    }
    let mut row = merge(rounds, dropped, None);
    (row.summary, row.spread) = (None, None);
    row.samples_ns.clear();
    row.round_medians_ns.clear();
    if row.error.is_none() {
        row.error = Some(format!(
            "its reference loop failed ({}), so there is nothing to subtract",
            reference.error.as_deref().unwrap_or("no samples")
        ));
    }
    row
}

/// Merges the raw rounds of one row, in the order run: drops the first `dropped` samples of each
/// round (keeping at least one), subtracts `reference_ns` from the rest and summarizes them all,
/// with each round's median and their spread. The rounds must not be empty.
pub fn merge(rounds: &[Row], dropped: usize, reference_ns: Option<f64>) -> Row {
    let first = &rounds[0];
    let mut merged = Row::new(
        &first.contender,
        first.kind,
        first.threads,
        first.at.clone(),
    );
    merged.oversubscribed = first.oversubscribed;
    merged.resolved.clone_from(&first.resolved);
    merged.wait_policy.clone_from(&first.wait_policy);
    // Each round sizes its own samples; the first round's plan stands for the row's.
    merged.iterations_per_sample = first.iterations_per_sample;
    merged.reference_ns = reference_ns;
    let minus = reference_ns.unwrap_or(0.0);
    for round in rounds {
        let drop = dropped.min(round.raw_ns.len().saturating_sub(1));
        let kept: Vec<f64> = round.raw_ns[drop..].iter().map(|raw| raw - minus).collect();
        merged.round_medians_ns.extend(stats::median(&kept));
        merged.samples_ns.extend(kept);
        merged.dropped += drop;
        merged.round_samples.push(round.raw_ns.len());
        merged.raw_ns.extend(&round.raw_ns);
        merged.sample_iterations.extend(&round.sample_iterations);
        merged.samples_wanted += round.samples_wanted;
        merged.row_s += round.row_s;
    }
    // What the rows measured besides time (barriers per run, say) is the last round's.
    merged.extra.clone_from(&rounds[rounds.len() - 1].extra);
    merged.summary = stats::summarize(&merged.samples_ns);
    merged.spread = noise::spread(&merged.round_medians_ns);
    // The first failure is the root cause of any later round's.
    let texts = |text: fn(&Row) -> Option<&str>| by_round(rounds.iter().map(text), rounds.len());
    merged.error = texts(|round| round.error.as_deref()).into_iter().next();
    let notes = texts(|round| round.note.as_deref());
    merged.note = (!notes.is_empty()).then(|| notes.join("; "));
    merged
}

/// Each distinct text of `texts` (one per round, in order), once, saying which rounds it came from
/// unless it came from every round: `rounds 2, 4: 3 of 4 samples`.
fn by_round<'a>(texts: impl Iterator<Item = Option<&'a str>>, rounds: usize) -> Vec<String> {
    let mut seen: Vec<(&str, Vec<String>)> = Vec::new();
    for (index, text) in texts.enumerate() {
        let Some(text) = text else { continue };
        match seen.iter_mut().find(|(earlier, _)| *earlier == text) {
            Some((_, which)) => which.push((index + 1).to_string()),
            None => seen.push((text, vec![(index + 1).to_string()])),
        }
    }
    let said = |(text, which): (&str, Vec<String>)| match which.len() {
        all if all == rounds => text.to_owned(),
        1 => format!("round {}: {text}", which[0]),
        _ => format!("rounds {}: {text}", which.join(", ")),
    };
    seen.into_iter().map(said).collect()
}

/// The round trip measured in several rounds as one: every sample, each distinct caveat once.
pub fn merge_floors(parts: &[Floor]) -> Floor {
    let samples_ns: Vec<f64> = parts.iter().flat_map(|f| f.samples_ns.clone()).collect();
    let mut notes: Vec<&str> = Vec::new();
    for note in parts.iter().filter_map(|f| f.note.as_deref()) {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    let first = parts.first();
    let pinned_to = first.and_then(|f| f.pinned_to);
    Floor {
        // Every round picks the same CPUs; if one could not pin, the merged floor was not pinned.
        pinned_to: pinned_to.filter(|_| parts.iter().all(|f| f.pinned_to == pinned_to)),
        round_trips_per_sample: first.map_or(0, |f| f.round_trips_per_sample),
        min_ns: stats::min(&samples_ns),
        median_ns: stats::median(&samples_ns),
        samples_ns,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

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
        match cores.max(1) {
            cores if threads <= cores => Regime::RoundTrip,
            cores => Regime::YieldHandoffs(threads.div_ceil(cores)),
        }
    }

    /// The regime of a floor row, from its point.
    pub fn of_row(row: &Row) -> Self {
        match row.value("yield_handoffs") {
            Some(count) => Regime::YieldHandoffs(count as usize),
            None => Regime::RoundTrip,
        }
    }

    /// In words: `round trip`, `4 yield hand-offs`.
    pub fn describe(self) -> String {
        match self {
            Regime::RoundTrip => "round trip".to_owned(),
            Regime::YieldHandoffs(1) => "1 yield hand-off".to_owned(),
            Regime::YieldHandoffs(count) => format!("{count} yield hand-offs"),
        }
    }
}

/// A floor row of `threads` threads with one sample per `samples` (`round_medians` each round's).
fn floor_row(threads: usize, at: Fields, samples: Vec<f64>, round_medians: Vec<f64>) -> Row {
    let mut row = Row::new("floor", Kind::Floor, threads, at);
    row.summary = stats::summarize(&samples);
    row.samples_wanted = samples.len();
    (row.raw_ns, row.samples_ns) = (samples.clone(), samples);
    row.spread = noise::spread(&round_medians);
    row.round_medians_ns = round_medians;
    row
}

/// The round-trip floor row of `threads` threads: every sample of `rounds`, each round's median.
pub fn round_trip_row(threads: usize, rounds: &[Floor]) -> Row {
    let merged = merge_floors(rounds);
    let medians = rounds.iter().filter_map(|f| f.median_ns).collect();
    let at = Fields::default().with("regime", "round-trip");
    let at = at.with("yield_handoffs", serde_json::Value::Null);
    let mut row = floor_row(threads, at, merged.samples_ns, medians);
    row.iterations_per_sample = merged.round_trips_per_sample;
    row.round_samples = rounds.iter().map(|f| f.samples_ns.len()).collect();
    let note = merged.note.map(|more| format!("; {more}"));
    row.note = Some(format!("round trip{}", note.unwrap_or_default()));
    row
}

/// The hand-off floor row: `count` hand-offs of `handoff_ns` (one per round), a sample per round.
pub fn handoffs_row(threads: usize, count: usize, handoff_ns: &[f64]) -> Row {
    let per_round: Vec<f64> = handoff_ns.iter().map(|ns| ns * count as f64).collect();
    let at = (Fields::default().with("regime", "yield-handoffs")).with("yield_handoffs", count);
    let mut row = floor_row(threads, at, per_round.clone(), per_round);
    let regime = Regime::YieldHandoffs(count).describe();
    row.note = Some(match stats::median(handoff_ns) {
        Some(each) => format!("{regime} of {} each", time(each)),
        None => format!("{regime}: not measured"),
    });
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(raw: &[f64]) -> Row {
        let at = Fields::default().with("mode", "epcc");
        let mut row = Row::new("auto", Kind::Ours, 2, at);
        row.raw_ns = raw.to_vec();
        row.resolved = Some("counting".into());
        row.sample_iterations = vec![10; raw.len()];
        (row.samples_wanted, row.row_s) = (raw.len(), 0.5);
        row
    }

    #[test]
    fn rounds_merge_into_one_row_with_a_median_per_round() {
        // EPCC: the first sample of each round is a warm-up; the reference costs 10.
        let rounds = [round(&[900.0, 110.0, 130.0]), round(&[800.0, 310.0, 330.0])];
        let row = merge(&rounds, 1, Some(10.0));
        assert_eq!(row.field("mode"), Some(&"epcc".into()));
        assert_eq!(row.raw_ns, vec![900.0, 110.0, 130.0, 800.0, 310.0, 330.0]);
        assert_eq!((row.round_samples.clone(), row.dropped), (vec![3, 3], 2));
        assert_eq!(row.samples_ns, vec![100.0, 120.0, 300.0, 320.0]);
        assert_eq!(row.round_medians_ns, vec![110.0, 310.0]);
        assert_eq!(
            (row.spread, row.median()),
            (Some(310.0 / 110.0), Some(210.0))
        );
        assert_eq!((row.samples_wanted, row.sample_iterations.len()), (6, 6));
        assert_eq!((row.row_s, row.reference_ns), (1.0, Some(10.0)));
        // A round of one sample keeps it; one round has no spread.
        let row = merge(&[round(&[50.0]), round(&[70.0, 60.0])], 1, None);
        assert_eq!((row.samples_ns, row.dropped), (vec![50.0, 60.0], 1));
        assert_eq!(merge(&[round(&[50.0, 70.0])], 0, None).spread, None);
        // Errors and notes say which rounds they came from.
        let mut rounds = [round(&[1.0]), round(&[2.0]), round(&[3.0])];
        rounds
            .iter_mut()
            .for_each(|row| row.note = Some("pinned".into()));
        rounds[1].add_note("cut".into());
        rounds[2].note = Some("pinned; cut".into());
        rounds[2].error = Some("broken".into());
        let row = merge(&rounds, 0, None);
        assert_eq!(row.error.as_deref(), Some("round 3: broken"));
        let note = "round 1: pinned; rounds 2, 3: pinned; cut";
        assert_eq!(row.note.as_deref(), Some(note));
        assert_eq!(merge(&rounds[..1], 0, None).note.as_deref(), Some("pinned"));
    }

    #[test]
    fn a_table_runs_its_rows_in_rounds_and_subtracts_its_loop_unless_it_failed() {
        let plan = |name: &str, kind, subtracts| RowPlan {
            contender: (),
            name: name.into(),
            kind,
            at: Fields::default(),
            subtracts,
        };
        let rows = vec![
            plan("loop", Kind::Loop, None),
            plan("auto", Kind::Ours, Some(0)),
        ];
        let (rounds, dropped, floor) = (2, 0, false);
        let table = TablePlan {
            threads: 1,
            rows,
            rounds,
            dropped,
            floor,
        };
        let mut order = Vec::new();
        let measured = measure(
            &table,
            |round| if round == 1 { vec![1, 0] } else { vec![0, 1] },
            &ProgressBar::hidden(),
            |row, index| {
                order.push(format!("{}{index}", row.name));
                let mut raw = round(&[if row.kind == Kind::Loop { 10.0 } else { 25.0 }; 2]);
                (raw.contender, raw.kind, raw.iterations_per_sample) =
                    (row.name.clone(), row.kind, 1);
                raw
            },
            |_| unreachable!("no floor"),
        );
        assert_eq!(order, ["loop0", "auto0", "auto1", "loop1"]);
        assert_eq!(measured.rows[1].median(), Some(15.0));
        let resolution = measured.rows[1].resolution_ns;
        assert_eq!(resolution, Some(clock_step_ns().max(0.0)));
        assert_eq!(table.tests(), 4);
        let mut failed = round(&[]);
        failed.error = Some("boom".into());
        let row = merge_row(&[round(&[5000.0, 300.0, 400.0])], Some(&failed), 1);
        assert!(row.summary.is_none() && row.samples_ns.is_empty() && row.spread.is_none());
        assert!(row.error.unwrap().contains("boom"));
    }

    #[test]
    fn each_thread_count_has_its_floor_row() {
        // 0 cores counts as 1.
        for (threads, cores, regime) in [
            (2, 2, None),
            (3, 2, Some(2)),
            (5, 2, Some(3)),
            (3, 0, Some(3)),
        ] {
            let expected = regime.map_or(Regime::RoundTrip, Regime::YieldHandoffs);
            assert_eq!(Regime::of(threads, cores), expected);
        }
        // 8 threads on 2 cores: 4 hand-offs of about 1 µs, measured in three rounds.
        let row = handoffs_row(8, 4, &[1000.0, 1200.0, 1100.0]);
        assert_eq!(Regime::of_row(&row), Regime::YieldHandoffs(4));
        assert_eq!(row.round_medians_ns, vec![4000.0, 4800.0, 4400.0]);
        let stats = (row.median(), row.min(), row.spread);
        assert_eq!(stats, (Some(4400.0), Some(4000.0), Some(1.2)));
        assert_eq!(
            row.note.as_deref(),
            Some("4 yield hand-offs of 1100 ns each")
        );
        assert_eq!(handoffs_row(8, 4, &[]).median(), None);
        let floor = |samples: &[f64]| Floor {
            pinned_to: Some([0, 1]),
            round_trips_per_sample: 1000,
            samples_ns: samples.to_vec(),
            min_ns: stats::min(samples),
            median_ns: stats::median(samples),
            note: Some("cut".into()),
        };
        let row = round_trip_row(2, &[floor(&[60.0, 70.0]), floor(&[300.0, 320.0])]);
        assert_eq!(row.round_medians_ns, vec![65.0, 310.0]);
        assert_eq!(
            (row.median(), row.spread),
            (Some(185.0), Some(310.0 / 65.0))
        );
        assert_eq!(row.note.as_deref(), Some("round trip; cut"));
        let merged = merge_floors(&[floor(&[60.0, 64.0]), floor(&[300.0])]);
        assert_eq!(merged.samples_ns, vec![60.0, 64.0, 300.0]);
        assert_eq!(
            (merged.median_ns, merged.pinned_to),
            (Some(64.0), Some([0, 1]))
        );
        assert_eq!(merged.note.as_deref(), Some("cut"));
    }
}
