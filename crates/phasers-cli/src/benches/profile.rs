//! The tuning profile `bench barrier --write-profile` writes: from the sweep's rows, the fastest
//! algorithm at each thread count, with the machine's floors, in the file `Algorithm::Auto` reads
//! (see `phasers::Profile`).
//!
//! The rows run in interleaved rounds (`--rounds`). An algorithm replaces the built-in rule's
//! choice at a thread count only when it beat that choice's median in a strict majority of the
//! rounds and its overall median is at least [`MIN_GAIN`] faster: one lucky stretch of a drifting
//! machine must not rewrite the profile.

use std::path::{Path, PathBuf};

use phasers::{Algorithm, Floors, Profile, ProfileEntry};

use phasers_cli::harness::result::{Report, Row};
use phasers_cli::harness::table::{ratio, time};

/// A measured winner replaces the built-in rule's choice only when it is at least this much
/// faster: closer than that, the two are within the noise of a shared machine, and a profile that
/// flips between runs would help no one.
const MIN_GAIN: f64 = 1.05;

/// What tuning decided at one thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The thread count.
    pub threads: usize,
    /// What the built-in rule picks there, and its median cost when it was measured.
    pub builtin: (Algorithm, Option<f64>),
    /// What the profile will say, and its median cost.
    pub chosen: (Algorithm, f64),
    /// The algorithm that replaced the built-in choice or, when none did, the fastest other one;
    /// `None` when nothing else was measured or the built-in choice was not.
    pub challenger: Option<Challenger>,
}

/// An algorithm held against the built-in choice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Challenger {
    /// Which.
    pub algorithm: Algorithm,
    /// Its median cost.
    pub median_ns: f64,
    /// The rounds in which its median beat the built-in choice's.
    pub won: usize,
    /// The rounds compared.
    pub rounds: usize,
}

impl Challenger {
    fn against(algorithm: Algorithm, row: &Row, builtin: &Row) -> Option<Self> {
        let (won, rounds) = rounds_won(row, builtin);
        Some(Challenger {
            algorithm,
            median_ns: row.median()?,
            won,
            rounds,
        })
    }

    /// Whether it replaces a built-in choice of median `builtin_ns`: faster in a strict majority
    /// of rounds, and by [`MIN_GAIN`] overall. Costs near zero (EPCC's at 1 thread can even be
    /// slightly negative) have no meaningful ratio, so its cost is clamped at 0 for the comparison.
    fn replaces(&self, builtin_ns: f64) -> bool {
        2 * self.won > self.rounds && builtin_ns > self.median_ns.max(0.0) * MIN_GAIN
    }
}

/// How many rounds `row`'s median beat `builtin`'s in, and how many rounds there were. A row that
/// ran in one piece counts as one round.
pub fn rounds_won(row: &Row, builtin: &Row) -> (usize, usize) {
    let rounds_of = |row: &Row| match row.round_medians_ns.as_slice() {
        [] => row.median().into_iter().collect(),
        rounds => rounds.to_vec(),
    };
    let (ours, theirs) = (rounds_of(row), rounds_of(builtin));
    let won = ours.iter().zip(&theirs).filter(|(a, b)| a < b).count();
    (won, ours.len().max(theirs.len()))
}

/// Where the profile goes when no file is named: where `Algorithm::Auto` looks when
/// PHASERS_PROFILE is unset.
pub fn default_path() -> Result<PathBuf, String> {
    Profile::default_path().ok_or_else(|| {
        "there is no default profile path (neither XDG_CONFIG_HOME nor HOME is set): pass \
         --write-profile FILE, then point PHASERS_PROFILE at it"
            .to_owned()
    })
}

/// Decides the profile from `report`'s rows, prints what changed, and writes it to `path` with
/// the floors measured now.
pub fn write(report: &Report, path: &Path) -> Result<(), String> {
    let at = |threads: usize| -> Vec<&Row> {
        report
            .rows
            .iter()
            .filter(|row| row.threads == threads)
            .collect()
    };
    let decisions: Vec<Decision> = (report.settings.threads.iter())
        .filter_map(|&threads| decide(threads, &at(threads)))
        .collect();
    if decisions.is_empty() {
        return Err(
            "no algorithm completed at any thread count, so there is no profile to write; \
             the tables above say why"
                .to_owned(),
        );
    }
    // Measured now, on the machine the rows just ran on, so every process that reads the profile
    // can skip measuring them again.
    let floors = Floors::measure();
    println!("{}", changes(&decisions));
    println!("floors recorded in the profile: {floors}");
    let profile = profile(report, &decisions)
        .map_err(|error| error.to_string())?
        .with_floors(floors);
    profile.save(path).map_err(|error| error.to_string())?;
    println!("profile written to {}", path.display());
    if Profile::default_path().as_deref() == Some(path) {
        println!(
            "Algorithm::Auto reads it from there in every new process (unless {} says \
             otherwise; {0}=off ignores it)",
            Profile::ENV_VAR
        );
    } else {
        println!(
            "to use it, set {}={} (Algorithm::Auto reads it in every new process)",
            Profile::ENV_VAR,
            path.display()
        );
    }
    Ok(())
}

/// The choice at `threads` threads, from its `rows`: the built-in rule's, unless another algorithm beat it in a
/// strict majority of rounds and by [`MIN_GAIN`] overall (the fastest such one, by median); the
/// fastest algorithm when the built-in choice was not measured.
pub fn decide(threads: usize, rows: &[&Row]) -> Option<Decision> {
    let row = |algorithm: Algorithm| {
        let named = rows.iter().find(|row| row.contender == algorithm.name());
        named
            .copied()
            .filter(|row| row.error.is_none() && row.median().is_some())
    };
    let measured: Vec<(Algorithm, &Row)> = (Algorithm::CONCRETE.into_iter())
        .filter_map(|algorithm| Some((algorithm, row(algorithm)?)))
        .collect();
    let median = |row: &Row| row.median().unwrap_or(f64::INFINITY);
    let (fastest, fastest_row) = measured
        .iter()
        .copied()
        .min_by(|a, b| median(a.1).total_cmp(&median(b.1)))?;
    let builtin = Algorithm::Auto.resolve_builtin(threads);
    let Some(&(_, builtin_row)) = measured.iter().find(|(algorithm, _)| *algorithm == builtin)
    else {
        return Some(Decision {
            threads,
            builtin: (builtin, None),
            chosen: (fastest, median(fastest_row)),
            challenger: None,
        });
    };
    let builtin_ns = median(builtin_row);
    let mut challengers: Vec<Challenger> = measured
        .iter()
        .filter(|(algorithm, _)| *algorithm != builtin)
        .filter_map(|&(algorithm, row)| Challenger::against(algorithm, row, builtin_row))
        .collect();
    challengers.sort_by(|a, b| a.median_ns.total_cmp(&b.median_ns));
    let winner = challengers.iter().find(|c| c.replaces(builtin_ns)).copied();
    Some(Decision {
        threads,
        builtin: (builtin, Some(builtin_ns)),
        chosen: winner.map_or((builtin, builtin_ns), |c| (c.algorithm, c.median_ns)),
        challenger: winner.or_else(|| challengers.first().copied()),
    })
}

/// The table of what tuning changed.
pub fn changes(decisions: &[Decision]) -> String {
    let mut text = format!(
        "what tuning changed (median cost per barrier; a measured winner must beat the built-in \
         choice by {:.0}% overall and in a strict majority of the rounds to replace it):\n",
        (MIN_GAIN - 1.0) * 100.0
    );
    let changed = decisions
        .iter()
        .filter(|decision| decision.chosen.0 != decision.builtin.0)
        .count();
    for decision in decisions {
        let (builtin, builtin_ns) = decision.builtin;
        let (chosen, chosen_ns) = decision.chosen;
        let builtin_cost = builtin_ns.map_or_else(|| "not measured".to_owned(), time);
        let rounds = |c: Challenger| format!("{} of {} rounds", c.won, c.rounds);
        // The closest call is worth a word: the fastest other algorithm, when it was faster.
        let rival = decision
            .challenger
            .filter(|c| c.median_ns < builtin_ns.unwrap_or(f64::INFINITY));
        let line = if chosen != builtin {
            format!(
                "{builtin} ({builtin_cost}) → {chosen} ({}), {} faster{}",
                time(chosen_ns),
                ratio(builtin_ns, Some(chosen_ns)),
                decision
                    .challenger
                    .map(|c| format!(", in {}", rounds(c)))
                    .unwrap_or_default()
            )
        } else if let Some(c) = rival {
            format!(
                "{builtin} ({builtin_cost}), unchanged: {} ({}) beat it in {}",
                c.algorithm,
                time(c.median_ns),
                rounds(c)
            )
        } else {
            format!("{builtin} ({builtin_cost}), unchanged")
        };
        let plural = if decision.threads == 1 { "" } else { "s" };
        text.push_str(&format!(
            "  {:>5} thread{plural}: {line}\n",
            decision.threads
        ));
    }
    text.push_str(&format!(
        "{changed} of {} thread counts changed",
        decisions.len()
    ));
    text
}

fn profile(report: &Report, decisions: &[Decision]) -> phasers::Result<Profile> {
    let entries = decisions
        .iter()
        .map(|decision| ProfileEntry {
            threads: decision.threads,
            algorithm: decision.chosen.0,
            median_ns: Some(decision.chosen.1.max(0.0)),
        })
        .collect();
    Profile::new(
        report.provenance.machine.available_cores,
        report.provenance.machine.cpu_model.clone(),
        Some(format!(
            "phasers bench barrier --write-profile {} ({} mode)",
            env!("CARGO_PKG_VERSION"),
            report
                .settings
                .own
                .get("mode")
                .and_then(|mode| mode.as_str())
                .unwrap_or("epcc")
        )),
        entries,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benches::barrier::rounds_row;
    use phasers_cli::harness::result::Kind;

    /// The rows of `threads` threads with these round medians.
    fn rows(threads: usize, rounds: &[(Algorithm, Vec<f64>)]) -> Vec<Row> {
        let row = |(algorithm, medians): &(Algorithm, Vec<f64>)| {
            rounds_row(algorithm.name(), Kind::Ours, threads, medians)
        };
        rounds.iter().map(row).collect()
    }

    fn decided(threads: usize, rounds: &[(Algorithm, Vec<f64>)]) -> Option<Decision> {
        decide(threads, &rows(threads, rounds).iter().collect::<Vec<_>>())
    }

    /// The built-in rule's choice at `threads`, and some other algorithm.
    fn builtin_and_another(threads: usize) -> (Algorithm, Algorithm) {
        let builtin = Algorithm::Auto.resolve_builtin(threads);
        let other = Algorithm::CONCRETE
            .into_iter()
            .find(|algorithm| *algorithm != builtin);
        (builtin, other.expect("there are seven algorithms"))
    }

    #[test]
    fn a_clear_winner_replaces_the_builtin_choice_and_a_close_one_does_not() {
        let (builtin, other) = builtin_and_another(2);
        let decision = decided(2, &[(builtin, vec![200.0]), (other, vec![100.0])]).unwrap();
        assert_eq!(
            (decision.builtin, decision.chosen),
            ((builtin, Some(200.0)), (other, 100.0))
        );
        let text = changes(&[decision]);
        let line = format!("{builtin} (200 ns) → {other} (100 ns), 2.00x faster");
        assert!(
            text.contains(&line) && text.ends_with("1 of 1 thread counts changed"),
            "{text}"
        );
        let decision = decided(2, &[(builtin, vec![103.0]), (other, vec![100.0])]).unwrap();
        assert_eq!(decision.chosen, (builtin, 103.0));
        assert!(changes(&[decision]).contains("unchanged"));
    }

    #[test]
    fn an_unmeasured_builtin_choice_is_replaced_and_nothing_measured_decides_nothing() {
        let (builtin, other) = builtin_and_another(4);
        let decision = decided(4, &[(other, vec![100.0])]).unwrap();
        assert_eq!(
            (decision.builtin, decision.chosen),
            ((builtin, None), (other, 100.0))
        );
        assert!(changes(&[decision]).contains("not measured"));
        assert_eq!(decided(4, &[]), None);
    }

    #[test]
    fn a_winner_must_win_most_rounds() {
        let (builtin, other) = builtin_and_another(2);
        // Much faster overall (median 60 against 100), thanks to rounds 1, 2 and 5 of 5.
        let lucky = [
            (builtin, vec![100.0; 5]),
            (other, vec![50.0, 60.0, 110.0, 105.0, 55.0]),
        ];
        let decision = decided(2, &lucky).unwrap();
        assert_eq!(decision.chosen, (other, 60.0));
        assert_eq!(decision.challenger.map(|c| (c.won, c.rounds)), Some((3, 5)));
        assert!(changes(&[decision]).contains("in 3 of 5 rounds"));
        // 2 of 4 is no majority, however fast its median (82.5).
        let split = [
            (builtin, vec![100.0; 4]),
            (other, vec![50.0, 60.0, 110.0, 105.0]),
        ];
        let decision = decided(2, &split).unwrap();
        assert_eq!(decision.chosen, (builtin, 100.0));
        let text = changes(&[decision]);
        assert!(
            text.contains("unchanged:") && text.contains("beat it in 2 of 4 rounds"),
            "{text}"
        );
        let rows = rows(2, &split);
        assert_eq!(rounds_won(&rows[1], &rows[0]), (2, 4));
    }
}
