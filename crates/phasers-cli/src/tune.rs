//! `phasers tune`: measure every algorithm at several thread counts, keep the fastest at each, and
//! write the profile `Algorithm::Auto` reads (see `phasers::Profile`).

use std::path::PathBuf;

use clap::Args;
use phasers::{Algorithm, Profile, ProfileEntry};

use crate::contender::Contender;
use crate::outputs;
use crate::report::{ratio, time};
use crate::results::{Group, Report};
use crate::sweep::{self, Benchmark};
use crate::threads;
use crate::MeasureArgs;

/// A measured winner replaces the built-in rule's choice only when it is at least this much
/// faster: closer than that, the two are within the noise of a shared machine, and a profile that
/// flips between runs would help no one.
const MIN_GAIN: f64 = 1.05;

/// Options of `phasers tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Thread counts, comma-separated [default: the `bench barrier` sweep, then 4x the cores and
    /// 64].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = threads::parse_thread_count)]
    threads: Option<Vec<usize>>,

    #[command(flatten)]
    measure: MeasureArgs,

    /// Where to write the profile [default: the path `Algorithm::Auto` reads when
    /// PHASERS_PROFILE is unset: $XDG_CONFIG_HOME/phasers/profile.json, else
    /// ~/.config/phasers/profile.json].
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Also write the measurements to FILE as JSON (the `bench barrier` schema).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// What tuning decided at one thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The thread count.
    pub threads: usize,
    /// What the built-in rule picks there, and its median cost when it was measured.
    pub builtin: (Algorithm, Option<f64>),
    /// What the profile will say, and its median cost.
    pub chosen: (Algorithm, f64),
}

/// Runs `phasers tune`.
pub fn run(args: &TuneArgs) -> Result<(), String> {
    let output = match &args.output {
        Some(path) => path.clone(),
        None => Profile::default_path().ok_or(
            "there is no default profile path (neither XDG_CONFIG_HOME nor HOME is set): pass \
             --output FILE, then point PHASERS_PROFILE at it",
        )?,
    };
    let threads = args
        .threads
        .clone()
        .unwrap_or_else(|| threads::tune_thread_counts(phasers::available_cores()));
    let contenders = Algorithm::CONCRETE.map(Contender::Phasers).to_vec();
    let plan = args.measure.plan(Benchmark::Barrier, threads, contenders);
    let json = outputs::open(args.json.as_deref())?;

    let report = sweep::run(&plan);

    if let Some((path, out)) = json {
        outputs::write_json(out, &path, &report)?;
        eprintln!("measurements written to {}", path.display());
    }
    let decisions: Vec<Decision> = report.groups.iter().filter_map(decide).collect();
    if decisions.is_empty() {
        return Err(
            "no algorithm completed at any thread count, so there is nothing to tune; \
                    the tables above say why"
                .to_owned(),
        );
    }
    println!("{}", changes(&decisions));
    let profile = profile(&report, &decisions).map_err(|error| error.to_string())?;
    profile.save(&output).map_err(|error| error.to_string())?;
    println!("profile written to {}", output.display());
    let default = Profile::default_path();
    if default.as_deref() == Some(output.as_path()) {
        println!(
            "Algorithm::Auto reads it from there in every new process (unless {} says \
             otherwise; {0}=off ignores it)",
            Profile::ENV_VAR
        );
    } else {
        println!(
            "to use it, set {}={} (Algorithm::Auto reads it in every new process)",
            Profile::ENV_VAR,
            output.display()
        );
    }
    Ok(())
}

/// The choice at one thread count: the fastest algorithm by median, unless the built-in rule's
/// choice is within [`MIN_GAIN`] of it.
pub fn decide(group: &Group) -> Option<Decision> {
    let median_of = |algorithm: Algorithm| group.row(algorithm.name()).and_then(|row| row.median());
    let (fastest, fastest_ns) = Algorithm::CONCRETE
        .into_iter()
        .filter_map(|algorithm| Some((algorithm, median_of(algorithm)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let builtin = Algorithm::Auto.resolve_builtin(group.threads);
    let builtin_ns = median_of(builtin);
    // Costs near zero (EPCC's at 1 thread can even be slightly negative) have no meaningful
    // ratio, so the winner's cost is clamped at 0 for the comparison.
    let chosen = match builtin_ns {
        Some(ns) if ns <= fastest_ns.max(0.0) * MIN_GAIN => (builtin, ns),
        _ => (fastest, fastest_ns),
    };
    Some(Decision {
        threads: group.threads,
        builtin: (builtin, builtin_ns),
        chosen,
    })
}

/// The table of what tuning changed.
pub fn changes(decisions: &[Decision]) -> String {
    let mut text = format!(
        "what tuning changed (median cost per barrier; a measured winner must beat the built-in \
         choice by {:.0}% to replace it):\n",
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
        let line = if chosen == builtin {
            format!("{builtin} ({builtin_cost}), unchanged")
        } else {
            format!(
                "{builtin} ({builtin_cost}) → {chosen} ({}), {} faster",
                time(chosen_ns),
                ratio(builtin_ns, Some(chosen_ns))
            )
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
            "phasers tune {} ({} mode)",
            env!("CARGO_PKG_VERSION"),
            report.settings.mode.name()
        )),
        entries,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Row, RowKind};

    fn group(threads: usize, medians: &[(Algorithm, f64)]) -> Group {
        Group {
            threads,
            oversubscribed: false,
            reference_loop: None,
            openmp_reference_loop: None,
            rows: medians
                .iter()
                .map(|(algorithm, median)| {
                    let mut row = Row::measured(algorithm.name(), RowKind::Ours, 1, vec![*median]);
                    row.finish(0, None);
                    row
                })
                .collect(),
        }
    }

    /// The built-in rule's choice at `threads`, and some other algorithm.
    fn builtin_and_another(threads: usize) -> (Algorithm, Algorithm) {
        let builtin = Algorithm::Auto.resolve_builtin(threads);
        let other = Algorithm::CONCRETE
            .into_iter()
            .find(|algorithm| *algorithm != builtin)
            .expect("there are seven algorithms");
        (builtin, other)
    }

    #[test]
    fn a_clear_winner_replaces_the_builtin_choice() {
        let (builtin, other) = builtin_and_another(2);
        let decision = decide(&group(2, &[(builtin, 200.0), (other, 100.0)])).unwrap();
        assert_eq!(decision.builtin, (builtin, Some(200.0)));
        assert_eq!(decision.chosen, (other, 100.0));
        let text = changes(&[decision]);
        assert!(text.contains(&format!(
            "{builtin} (200 ns) → {other} (100 ns), 2.00x faster"
        )));
        assert!(text.ends_with("1 of 1 thread counts changed"), "{text}");
    }

    #[test]
    fn a_win_within_the_noise_keeps_the_builtin_choice() {
        let (builtin, other) = builtin_and_another(2);
        let decision = decide(&group(2, &[(builtin, 103.0), (other, 100.0)])).unwrap();
        assert_eq!(decision.chosen, (builtin, 103.0));
        assert!(changes(&[decision]).contains("unchanged"));
    }

    #[test]
    fn an_unmeasured_builtin_choice_is_replaced() {
        let (builtin, other) = builtin_and_another(4);
        let decision = decide(&group(4, &[(other, 100.0)])).unwrap();
        assert_eq!(decision.builtin, (builtin, None));
        assert_eq!(decision.chosen, (other, 100.0));
        assert!(changes(&[decision]).contains("not measured"));
    }

    #[test]
    fn nothing_measured_decides_nothing() {
        assert_eq!(decide(&group(4, &[])), None);
    }
}
