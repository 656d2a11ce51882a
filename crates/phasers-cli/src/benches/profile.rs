//! The profile `bench barrier --write-profile` writes for `Algorithm::Auto` (`phasers::Profile`):
//! the fastest algorithm at each thread count, with the machine's floors. An algorithm replaces
//! the built-in rule's choice only when it beat that choice's median in a strict majority of the
//! rounds and by [`MIN_GAIN`] overall: one lucky stretch of a drifting machine must not count.

use std::path::{Path, PathBuf};

use phasers::{Algorithm, Floors, Profile, ProfileEntry};
use phasers_cli::harness::result::{Report, Row};
use phasers_cli::harness::table::{ratio, time};

/// Closer than this, two algorithms are within the noise of a shared machine, and a profile that
/// flips between runs would help no one.
const MIN_GAIN: f64 = 1.05;

/// What tuning decided at one thread count.
#[derive(Debug, Clone, PartialEq)]
struct Decision {
    threads: usize,
    /// The built-in rule's pick, and its median when measured.
    builtin: (Algorithm, Option<f64>),
    /// What the profile will say, and its median.
    chosen: (Algorithm, f64),
    /// What replaced the built-in choice, else the fastest other one (if both were measured).
    challenger: Option<Challenger>,
}

/// An algorithm held against the built-in choice: its median, the rounds in which its median beat
/// the built-in choice's, and the rounds compared.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Challenger {
    algorithm: Algorithm,
    median_ns: f64,
    won: usize,
    rounds: usize,
}

/// The rounds `row`'s median beat `builtin`'s in, and the rounds (a row in one piece is one).
fn rounds_won(row: &Row, builtin: &Row) -> (usize, usize) {
    let rounds_of = |row: &Row| match row.round_medians_ns.as_slice() {
        [] => row.median().into_iter().collect(),
        rounds => rounds.to_vec(),
    };
    let (ours, theirs) = (rounds_of(row), rounds_of(builtin));
    let won = ours.iter().zip(&theirs).filter(|(a, b)| a < b).count();
    (won, ours.len().max(theirs.len()))
}

/// Where the profile goes when no file is named: where `Algorithm::Auto` looks by default.
pub fn default_path() -> Result<PathBuf, String> {
    Profile::default_path().ok_or_else(|| {
        "there is no default profile path (neither XDG_CONFIG_HOME nor HOME is set): pass \
         --write-profile FILE, then point PHASERS_PROFILE at it"
            .to_owned()
    })
}

/// Decides the profile from `report`, prints what changed, and writes it with the floors to `path`.
pub fn write(report: &Report, path: &Path) -> Result<(), String> {
    let at = |threads| report.rows.iter().filter(move |row| row.threads == threads);
    let decide = |&threads: &usize| decide(threads, &at(threads).collect::<Vec<_>>());
    let decisions: Vec<Decision> = report.settings.threads.iter().filter_map(decide).collect();
    let none = "no algorithm completed at any thread count, so there is no profile to write; the \
                tables above say why";
    if decisions.is_empty() {
        return Err(none.to_owned());
    }
    // Measured now, on the machine the rows just ran on, so every process that reads the profile
    // can skip measuring them again.
    let floors = Floors::measure();
    println!("{}", changes(&decisions));
    println!("floors recorded in the profile: {floors}");
    let own = &report.settings.own;
    let mode = own
        .get("mode")
        .and_then(|mode| mode.as_str())
        .unwrap_or("epcc");
    let version = env!("CARGO_PKG_VERSION");
    let made_by = format!("phasers bench barrier --write-profile {version} ({mode} mode)");
    let entry = |decision: &Decision| ProfileEntry {
        threads: decision.threads,
        algorithm: decision.chosen.0,
        median_ns: Some(decision.chosen.1.max(0.0)),
    };
    let (machine, entries) = (&report.provenance.machine, decisions.iter().map(entry));
    let cpu = machine.cpu_model.clone();
    Profile::new(
        machine.available_cores,
        cpu,
        Some(made_by),
        entries.collect(),
    )
    .and_then(|profile| profile.with_floors(floors).save(path))
    .map_err(|error| error.to_string())?;
    println!("profile written to {}", path.display());
    let var = Profile::ENV_VAR;
    match Profile::default_path().as_deref() == Some(path) {
        true => println!(
            "Algorithm::Auto reads it from there in every new process (unless {var} says \
             otherwise; {var}=off ignores it)"
        ),
        false => println!(
            "to use it, set {var}={} (Algorithm::Auto reads it in every new process)",
            path.display()
        ),
    }
    Ok(())
}

/// The choice at `threads` threads: the built-in rule's, unless others beat it in a strict majority
/// of rounds and by [`MIN_GAIN`] overall (then the fastest of those); else the fastest measured.
fn decide(threads: usize, rows: &[&Row]) -> Option<Decision> {
    let median = |row: &Row| row.median().unwrap_or(f64::INFINITY);
    let measured: Vec<(Algorithm, &Row)> = (Algorithm::CONCRETE.into_iter())
        .filter_map(|algorithm| {
            let row = rows.iter().find(|row| row.contender == algorithm.name())?;
            (row.error.is_none() && row.median().is_some()).then_some((algorithm, *row))
        })
        .collect();
    let builtin = Algorithm::Auto.resolve_builtin(threads);
    let Some(&(_, builtin_row)) = measured.iter().find(|(algorithm, _)| *algorithm == builtin)
    else {
        let fastest = measured
            .iter()
            .min_by(|a, b| median(a.1).total_cmp(&median(b.1)));
        let &(fastest, row) = fastest?;
        return Some(Decision {
            threads,
            builtin: (builtin, None),
            chosen: (fastest, median(row)),
            challenger: None,
        });
    };
    let builtin_ns = median(builtin_row);
    let challenger = |&(algorithm, row): &(Algorithm, &Row)| {
        let (won, rounds) = rounds_won(row, builtin_row);
        let median_ns = median(row);
        (algorithm != builtin).then_some(Challenger {
            algorithm,
            median_ns,
            won,
            rounds,
        })
    };
    let mut challengers: Vec<Challenger> = measured.iter().filter_map(challenger).collect();
    challengers.sort_by(|a, b| a.median_ns.total_cmp(&b.median_ns));
    // Costs near zero (EPCC's at 1 thread can even be slightly negative) have no meaningful
    // ratio, so a challenger's cost is clamped at 0 for the comparison.
    let winner = (challengers.iter().copied())
        .find(|c| 2 * c.won > c.rounds && builtin_ns > c.median_ns.max(0.0) * MIN_GAIN);
    Some(Decision {
        threads,
        builtin: (builtin, Some(builtin_ns)),
        chosen: winner.map_or((builtin, builtin_ns), |c| (c.algorithm, c.median_ns)),
        challenger: winner.or_else(|| challengers.first().copied()),
    })
}

/// The table of what tuning changed.
fn changes(decisions: &[Decision]) -> String {
    let mut text = format!(
        "what tuning changed (median cost per barrier; a measured winner must beat the built-in \
         choice by {:.0}% overall and in a strict majority of the rounds to replace it):\n",
        (MIN_GAIN - 1.0) * 100.0
    );
    for decision in decisions {
        let ((builtin, builtin_ns), (chosen, chosen_ns)) = (decision.builtin, decision.chosen);
        let builtin_cost = builtin_ns.map_or_else(|| "not measured".to_owned(), time);
        let rounds = |c: Challenger| format!("{} of {} rounds", c.won, c.rounds);
        // The closest call is worth a word: the fastest other algorithm, when it was faster.
        let faster = |c: &Challenger| c.median_ns < builtin_ns.unwrap_or(f64::INFINITY);
        let line = match decision.challenger {
            _ if chosen != builtin => format!(
                "{builtin} ({builtin_cost}) → {chosen} ({}), {} faster{}",
                time(chosen_ns),
                ratio(builtin_ns, Some(chosen_ns)),
                (decision.challenger.map(|c| format!(", in {}", rounds(c)))).unwrap_or_default()
            ),
            Some(c) if faster(&c) => format!(
                "{builtin} ({builtin_cost}), unchanged: {} ({}) beat it in {}",
                c.algorithm,
                time(c.median_ns),
                rounds(c)
            ),
            _ => format!("{builtin} ({builtin_cost}), unchanged"),
        };
        let plural = if decision.threads == 1 { "" } else { "s" };
        let threads = decision.threads;
        text.push_str(&format!("  {threads:>5} thread{plural}: {line}\n"));
    }
    let changed = decisions.iter().filter(|d| d.chosen.0 != d.builtin.0);
    let (changed, all) = (changed.count(), decisions.len());
    text + &format!("{changed} of {all} thread counts changed")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benches::barrier::rounds_row;
    use phasers_cli::harness::result::Kind;

    /// The decision at `threads` threads from rows with these round medians, and its table.
    fn decided(threads: usize, rounds: &[(Algorithm, &[f64])]) -> Option<(Decision, String)> {
        let row = |&(algorithm, medians): &(Algorithm, &[f64])| {
            rounds_row(algorithm.name(), Kind::Ours, threads, medians)
        };
        let rows: Vec<Row> = rounds.iter().map(row).collect();
        let decision = decide(threads, &rows.iter().collect::<Vec<_>>())?;
        let text = changes(std::slice::from_ref(&decision));
        Some((decision, text))
    }

    /// The built-in rule's choice at `threads`, and some other algorithm.
    fn builtin_and_another(threads: usize) -> (Algorithm, Algorithm) {
        let builtin = Algorithm::Auto.resolve_builtin(threads);
        let other = Algorithm::CONCRETE.into_iter().find(|a| *a != builtin);
        (builtin, other.expect("there are seven algorithms"))
    }

    #[test]
    fn a_winner_must_be_clearly_faster_and_win_most_rounds() {
        let (builtin, other) = builtin_and_another(2);
        let lucky = [50.0, 60.0, 110.0, 105.0, 55.0];
        for (theirs, ours, says) in [
            (
                &[200.0][..],
                &[100.0][..],
                "(200 ns) → {other} (100 ns), 2.00x faster, in 1 of 1",
            ),
            // 3% faster is within the noise.
            (&[103.0], &[100.0], "(100 ns) beat it in 1 of 1 rounds"),
            // Median 60 against 100, thanks to rounds 1, 2 and 5 of 5.
            (&[100.0; 5], &lucky, "(60.0 ns), 1.67x faster, in 3 of 5"),
            // 2 of 4 is no majority, however fast its median (82.5).
            (&[100.0; 4], &lucky[..4], "unchanged: {other} (82.5 ns)"),
        ] {
            let (decision, text) = decided(2, &[(builtin, theirs), (other, ours)]).unwrap();
            let replaced = says.contains("faster");
            assert_eq!(decision.chosen.0 == other, replaced, "{text}");
            assert!(
                text.contains(&says.replace("{other}", other.name())),
                "{text}"
            );
            let changed = format!("{} of 1 thread counts changed", usize::from(replaced));
            assert!(text.ends_with(&changed), "{text}");
        }
    }

    #[test]
    fn an_unmeasured_builtin_choice_is_replaced_and_nothing_measured_decides_nothing() {
        let (builtin, other) = builtin_and_another(4);
        let (decision, text) = decided(4, &[(other, &[100.0])]).unwrap();
        assert_eq!(
            (decision.builtin, decision.chosen),
            ((builtin, None), (other, 100.0))
        );
        assert!(text.contains("not measured"), "{text}");
        assert_eq!(decided(4, &[]), None);
    }
}
