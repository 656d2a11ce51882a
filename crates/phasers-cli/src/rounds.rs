//! One thread count of a sweep, in interleaved rounds, and each row's rounds merged back into one
//! row.
//!
//! Round 1 of the floor, the reference loops and every row runs, then round 2 of each, and so on.
//! A shared machine can sit in a fast state (a cache-line round trip of about 60 ns) or a slow one
//! (about 300 ns) for minutes at a time. Measured one after another, two rows can land in
//! different states and their ratio say more about the machine than about the barriers; measured
//! in interleaved rounds, every row sees every state alike, and the rounds' disagreement says how
//! far the machine drifted (see `ratios`).
//!
//! Each round is a whole `bench::run` on a fresh barrier (warm-up and calibration included), so a
//! round's first sample in EPCC mode is dropped like a row's. The merged row keeps every raw
//! sample in the order taken, the median of each round, and their spread.

use indicatif::ProgressBar;
use phasers::Floors;
use phasers_cli::harness::floor::{self, Floor};
use phasers_cli::harness::noise;
use phasers_cli::harness::row::{Mode, Row};
use phasers_cli::harness::stats;

use crate::bench;
use crate::native::OmpWork;
use crate::openmp_row;
use crate::regime_floor::{Regime, RegimeFloor};
use crate::results::Group;
use crate::sweep::{needs_openmp_reference, Plan};

/// What one thread count measured.
pub struct Measured {
    /// The table, rounds merged.
    pub group: Group,
    /// Its floor row.
    pub floor: RegimeFloor,
    /// The round trip measured in each round, for the run's merged floor.
    pub round_trips: Vec<Floor>,
}

/// Measures every row of `plan` at `threads` threads in `plan.rounds()` interleaved rounds on a
/// machine of `cores` cores, counting each test on `progress`.
pub fn measure(plan: &Plan, threads: usize, cores: usize, progress: &ProgressBar) -> Measured {
    let contenders = plan.contenders_at(threads);
    let epcc = plan.row.mode == Mode::Epcc;
    let openmp = needs_openmp_reference(plan.row.mode, &contenders);
    let regime = Regime::of(threads, cores);
    let count = plan.rounds();
    let mut round_trips = Vec::with_capacity(count);
    let mut handoffs_ns = Vec::new();
    let mut loops: Vec<Row> = Vec::new();
    let mut openmp_loops: Vec<Row> = Vec::new();
    let mut rows: Vec<Vec<Row>> = vec![Vec::with_capacity(count); contenders.len()];
    for round in 0..count {
        let row_plan = plan.round(round);
        let step = |what: &str| {
            progress.set_message(format!(
                "{threads} threads, round {}/{count}: {what}",
                round + 1
            ));
        };
        step("floor");
        round_trips.push(floor::measure(row_plan.schedule));
        if let Regime::YieldHandoffs(_) = regime {
            // A few milliseconds; measured in every round so that it drifts with the rows.
            handoffs_ns.push(Floors::measure().yield_handoff().as_nanos() as f64);
        }
        progress.inc(1);
        if epcc {
            step("reference loop");
            loops.push(bench::reference_loop(threads, &row_plan));
            progress.inc(1);
        }
        if openmp {
            step("omp reference loop");
            openmp_loops.push(openmp_row::run(threads, &row_plan, OmpWork::Loop));
            progress.inc(1);
        }
        for (contender, rounds) in contenders.iter().zip(&mut rows) {
            step(&contender.name());
            rounds.push(bench::run(*contender, threads, &row_plan));
            progress.inc(1);
        }
    }

    let dropped = plan.dropped();
    // The reference loops are merged before subtraction, and each row subtracts the median over
    // all of its reference loop's rounds rather than its own round's: the loop is local computation
    // (the delay alone, no cache line crosses cores), which the machine's slow state barely
    // touches, and one value over every round is more precise than one round's. The median, not
    // EPCC's mean: one preempted sample of the loop (400 µs among 1 µs ones, seen on the 2-core
    // VMs) dragged the mean up so far that the OpenMP rows came out negative. The loop still runs
    // in every round, so that median covers the same states the rows saw.
    let reference_loop = epcc.then(|| merge(&loops, dropped, None));
    let openmp_reference_loop = openmp.then(|| merge(&openmp_loops, dropped, None));
    let rows = contenders
        .iter()
        .zip(&rows)
        .map(|(contender, rounds)| {
            let reference = if contender.runs_on_openmp() {
                openmp_reference_loop.as_ref()
            } else {
                reference_loop.as_ref()
            };
            merge_row(rounds, reference, dropped)
        })
        .collect();
    let merged = merge_floors(&round_trips);
    let floor = match regime {
        Regime::RoundTrip => RegimeFloor::round_trip(threads, &merged, &round_trips),
        Regime::YieldHandoffs(_) => RegimeFloor::yield_handoffs(threads, cores, &handoffs_ns),
    };
    Measured {
        group: Group {
            threads,
            oversubscribed: phasers::is_oversubscribed(threads),
            reference_loop,
            openmp_reference_loop,
            rows,
        },
        floor,
        round_trips,
    }
}

/// Merges the rounds of a row and subtracts its reference loop's median, if it has one. A reference
/// loop that failed leaves the row without numbers rather than with wrong ones.
pub fn merge_row(rounds: &[Row], reference: Option<&Row>, dropped: usize) -> Row {
    let Some(reference) = reference else {
        return merge(rounds, dropped, None);
    };
    if let (None, Some(summary)) = (&reference.error, reference.summary) {
        return merge(rounds, dropped, Some(summary.median));
    }
    let mut row = merge(rounds, dropped, None);
    row.summary = None;
    row.samples_ns.clear();
    row.round_medians_ns.clear();
    row.spread = None;
    if row.error.is_none() {
        row.error = Some(format!(
            "its reference loop failed ({}), so there is nothing to subtract",
            reference.error.as_deref().unwrap_or("no samples")
        ));
    }
    row
}

/// Merges the raw rounds of one row (as `bench::run` returns them, in the order run): drops the
/// first `dropped` samples of each round (keeping at least one, as [`Row::finish`] does),
/// subtracts `reference_ns` from the rest, and summarizes them all. The rounds must not be empty.
pub fn merge(rounds: &[Row], dropped: usize, reference_ns: Option<f64>) -> Row {
    let first = &rounds[0];
    let mut merged = Row::measured(&first.barrier, first.kind, 0, Vec::new());
    merged.resolved.clone_from(&first.resolved);
    merged.wait_policy.clone_from(&first.wait_policy);
    // Each round sizes its own samples; the first round's plan stands for the row's.
    merged.episodes_per_sample = first.episodes_per_sample;
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
        merged.sample_episodes.extend(&round.sample_episodes);
        merged.samples_wanted += round.samples_wanted;
        merged.row_s += round.row_s;
    }
    merged.summary = stats::summarize(&merged.samples_ns);
    merged.spread = noise::spread(&merged.round_medians_ns);
    // The first failure is the root cause of any later round's; the first round's notes say
    // what every round's would.
    merged.error = by_round(
        rounds.iter().map(|round| round.error.as_deref()),
        rounds.len(),
    )
    .into_iter()
    .next();
    let notes = by_round(
        rounds.iter().map(|round| round.note.as_deref()),
        rounds.len(),
    );
    if !notes.is_empty() {
        merged.note = Some(notes.join("; "));
    }
    merged
}

/// Each distinct text of `texts` (one per round, in order), once, saying which rounds it came from
/// unless it came from every round: `rounds 2, 4: 3 of 4 samples`.
fn by_round<'a>(texts: impl Iterator<Item = Option<&'a str>>, rounds: usize) -> Vec<String> {
    let mut seen: Vec<(&str, Vec<usize>)> = Vec::new();
    for (index, text) in texts.enumerate() {
        let Some(text) = text else { continue };
        match seen.iter_mut().find(|(earlier, _)| *earlier == text) {
            Some((_, which)) => which.push(index + 1),
            None => seen.push((text, vec![index + 1])),
        }
    }
    seen.into_iter()
        .map(|(text, which)| match which.as_slice() {
            all if all.len() == rounds => text.to_owned(),
            [one] => format!("round {one}: {text}"),
            many => {
                let list: Vec<String> = many.iter().map(usize::to_string).collect();
                format!("rounds {}: {text}", list.join(", "))
            }
        })
        .collect()
}

/// The cache-line round trip measured in several rounds, as one measurement: every sample, and
/// each distinct caveat once.
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
        // Each round sizes its own samples; the first round's plan stands for the floor's.
        round_trips_per_sample: first.map_or(0, |f| f.round_trips_per_sample),
        min_ns: stats::min(&samples_ns),
        median_ns: stats::median(&samples_ns),
        samples_ns,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::floor;
    use phasers_cli::harness::row::RowKind;

    fn round(raw: &[f64]) -> Row {
        let mut row = Row::measured("auto", RowKind::Ours, raw.len(), raw.to_vec());
        row.resolved = Some("counting".into());
        row.sample_episodes = vec![10; raw.len()];
        row.row_s = 0.5;
        row.finish(0, None);
        row
    }

    #[test]
    fn rounds_merge_into_one_row_with_a_median_per_round() {
        // EPCC: the first sample of each round is a warm-up; the reference costs 10.
        let rounds = [round(&[900.0, 110.0, 130.0]), round(&[800.0, 310.0, 330.0])];
        let row = merge(&rounds, 1, Some(10.0));
        assert_eq!(row.barrier, "auto");
        assert_eq!(row.resolved.as_deref(), Some("counting"));
        assert_eq!(row.raw_ns, vec![900.0, 110.0, 130.0, 800.0, 310.0, 330.0]);
        assert_eq!(row.round_samples, vec![3, 3]);
        assert_eq!(row.dropped, 2);
        assert_eq!(row.samples_ns, vec![100.0, 120.0, 300.0, 320.0]);
        assert_eq!(row.round_medians_ns, vec![110.0, 310.0]);
        assert_eq!(row.spread, Some(310.0 / 110.0));
        assert_eq!(row.median(), Some(210.0));
        assert_eq!(row.samples_wanted, 6);
        assert_eq!(row.sample_episodes.len(), 6);
        assert_eq!(row.row_s, 1.0);
        assert_eq!(row.reference_ns, Some(10.0));
        assert!(row.error.is_none() && row.note.is_none());
    }

    #[test]
    fn a_round_of_one_sample_keeps_it() {
        let row = merge(&[round(&[50.0]), round(&[70.0, 60.0])], 1, None);
        assert_eq!(row.samples_ns, vec![50.0, 60.0]);
        assert_eq!(row.dropped, 1);
        assert_eq!(row.round_medians_ns, vec![50.0, 60.0]);
    }

    #[test]
    fn one_round_has_no_spread() {
        let row = merge(&[round(&[50.0, 70.0])], 0, None);
        assert_eq!(row.round_medians_ns, vec![60.0]);
        assert_eq!(row.spread, None);
    }

    #[test]
    fn errors_and_notes_say_which_rounds() {
        let mut rounds = [round(&[1.0]), round(&[2.0]), round(&[3.0])];
        for row in &mut rounds {
            row.note = Some("pinned".into());
        }
        rounds[1].add_note("cut".into());
        rounds[2].note = Some("pinned; cut".into());
        rounds[2].error = Some("broken".into());
        let row = merge(&rounds, 0, None);
        assert_eq!(row.error.as_deref(), Some("round 3: broken"));
        assert_eq!(
            row.note.as_deref(),
            Some("round 1: pinned; rounds 2, 3: pinned; cut")
        );
        let every = merge(&rounds[..1], 0, None);
        assert_eq!(
            every.note.as_deref(),
            Some("pinned"),
            "one round: no prefix"
        );
    }

    #[test]
    fn floors_merge_every_sample() {
        let part = |samples: &[f64]| Floor {
            note: Some("cut".into()),
            ..floor(samples)
        };
        let merged = merge_floors(&[part(&[60.0, 64.0]), part(&[300.0])]);
        assert_eq!(merged.samples_ns, vec![60.0, 64.0, 300.0]);
        assert_eq!(merged.median_ns, Some(64.0));
        assert_eq!(merged.min_ns, Some(60.0));
        assert_eq!(merged.pinned_to, Some([0, 1]));
        assert_eq!(merged.note.as_deref(), Some("cut"));
    }

    #[test]
    fn every_round_subtracts_the_merged_reference_mean() {
        let reference = merge(&[round(&[1000.0, 90.0]), round(&[1000.0, 110.0])], 1, None);
        let row = merge_row(
            &[round(&[5000.0, 300.0]), round(&[5000.0, 400.0])],
            Some(&reference),
            1,
        );
        assert_eq!(row.reference_ns, Some(100.0));
        assert_eq!(row.samples_ns, vec![200.0, 300.0]);
        assert_eq!(row.round_medians_ns, vec![200.0, 300.0]);
    }

    #[test]
    fn a_failed_reference_leaves_no_numbers() {
        let reference = Row::failed("loop", RowKind::Loop, 3, "boom".into());
        let row = merge_row(&[round(&[5000.0, 300.0, 400.0])], Some(&reference), 1);
        assert!(row.summary.is_none() && row.samples_ns.is_empty() && row.spread.is_none());
        assert!(row.error.unwrap().contains("boom"));
    }
}
