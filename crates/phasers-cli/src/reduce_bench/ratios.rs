//! The ratios a run ends with, the three the issue asks for:
//!
//! 1. does the seed's headline reproduce: at the largest spread, dynamic pairs against the static
//!    tree and linear on the time from the last arrival to completion, for arrays up to 10,000
//!    floats (seed 003: "the dynamic algorithm outperforms all other for sizes up to at least 10k
//!    floats");
//! 2. large arrays: allreduce's bandwidth as a fraction of the floor's (the goal is 70% or more);
//! 3. against OpenMP's array reduction at 1,000, 64,000 and 16 M floats.

use phasers::ReduceAlgorithm;

use phasers_cli::harness::footnotes::fit;
use phasers_cli::harness::table::{aligned, ratio, Last};
use phasers_cli::harness::verbosity;

use super::config::ReduceSettings;
use super::contender::{Contender, Kind, OPENMP_ACTIVE_NAME, OPENMP_NAME};
use super::metrics::Metric;
use super::results::ReduceRow;
use super::workload::Collective;

/// The largest array of the seed's headline claim.
pub const HEADLINE_MAX_LEN: usize = 10_000;
/// Where "large arrays" start for the bandwidth goal: the seed's largest size, 800 KB per array,
/// beyond the caches that a core has to itself on common machines.
pub const LARGE_FROM: usize = 200_000;
/// The bandwidth goal, as a fraction of the floor.
pub const BANDWIDTH_GOAL: f64 = 0.70;
/// The sizes of the OpenMP comparison.
pub const OPENMP_SIZES: [usize; 3] = [1_000, 64_000, 16_000_000];

/// What the ratios are drawn from.
pub struct RatioInput<'a> {
    /// Every row of the run.
    pub rows: &'a [ReduceRow],
    /// The run's participant counts, spreads, collectives and metric.
    pub settings: &'a ReduceSettings,
}

impl RatioInput<'_> {
    fn find(
        &self,
        name: &str,
        threads: usize,
        len: usize,
        mode: Collective,
        spread: &str,
    ) -> Option<&ReduceRow> {
        self.rows
            .iter()
            .find(|row| row.error.is_none() && row.is_at(name, threads, len, mode, Some(spread)))
    }

    fn sizes(&self, keep: impl Fn(usize) -> bool) -> Vec<usize> {
        let mut sizes: Vec<usize> = self
            .rows
            .iter()
            .map(|row| row.len)
            .filter(|&len| keep(len))
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    fn header(&self, first: &str) -> Vec<String> {
        std::iter::once(first.to_owned())
            .chain(
                self.settings
                    .threads
                    .iter()
                    .map(|threads| format!("N={threads}")),
            )
            .collect()
    }
}

/// All three, as printed after the tables (by default with long lines wrapped to 100 columns).
pub fn summary(input: &RatioInput<'_>) -> String {
    let text = [headline(input), bandwidth(input), openmp(input)].join("\n");
    match verbosity::verbose() {
        true => text,
        false => fit(&text),
    }
}

/// (1): static tree ÷ dynamic pairs and linear ÷ dynamic pairs at the largest spread.
pub fn headline(input: &RatioInput<'_>) -> String {
    let title = "(1) the seed's headline: at the largest spread, dynamic pairs against the static \
                 tree and linear, time from the last arrival to completion, arrays up to 10,000 \
                 floats";
    let settings = input.settings;
    let Some(spread) = settings
        .spreads
        .iter()
        .filter(|setting| !setting.spread.is_none())
        .max_by(|a, b| a.spread.max_ns.total_cmp(&b.spread.max_ns))
    else {
        return format!("{title}: not measured (no spread other than none)\n");
    };
    let spread = &spread.name;
    let [pairs, tree, linear] = [
        ReduceAlgorithm::DynamicPairs,
        ReduceAlgorithm::StaticTree,
        ReduceAlgorithm::Linear,
    ]
    .map(|algorithm| Contender::Ours(algorithm).name());
    let sizes = input.sizes(|len| len <= HEADLINE_MAX_LEN);
    let mut out = format!(
        "{title}\n    spread {spread}; each cell: static-tree ÷ dynamic-pairs / linear ÷ \
         dynamic-pairs of the medians (above 1: dynamic pairs is faster)\n"
    );
    let (mut wins, mut cells_measured) = (0, 0);
    for &mode in &settings.modes {
        let mut cells = vec![input.header(&format!("{} floats", mode.name()))];
        for &len in &sizes {
            let mut line = vec![len.to_string()];
            for &threads in &settings.threads {
                let median = |name: &str| {
                    input
                        .find(name, threads, len, mode, spread)
                        .and_then(|row| row.median(Metric::LastArrival))
                };
                let (p, t, l) = (median(pairs), median(tree), median(linear));
                if let (Some(p), Some(t), Some(l)) = (p, t, l) {
                    cells_measured += 1;
                    wins += usize::from(p < t && p < l);
                }
                line.push(format!("{} / {}", ratio(t, p), ratio(l, p)));
            }
            cells.push(line);
        }
        out.push_str(&aligned(&cells, Last::Number));
    }
    if cells_measured == 0 {
        out.push_str("    not measured: needs dynamic-pairs, static-tree and linear rows\n");
    } else {
        out.push_str(&format!(
            "    dynamic pairs was faster than both in {wins} of {cells_measured} cells; the seed \
             found it faster than every other algorithm up to at least 10k floats at its largest \
             spread\n"
        ));
    }
    out
}

/// (2): allreduce's bandwidth as a fraction of the floor's, for large arrays.
pub fn bandwidth(input: &RatioInput<'_>) -> String {
    let title = format!(
        "(2) large arrays (from {LARGE_FROM} floats): allreduce bandwidth as a fraction of the \
         floor's (goal: {:.0}% or more)",
        BANDWIDTH_GOAL * 100.0
    );
    let sizes = input.sizes(|len| len >= LARGE_FROM);
    // The smallest spread run: with none, every participant arrives at once and the time is the
    // reduction's own.
    let settings = input.settings;
    let spread = settings
        .spreads
        .iter()
        .min_by(|a, b| a.spread.max_ns.total_cmp(&b.spread.max_ns));
    let (Some(spread), false, true) = (
        spread,
        sizes.is_empty(),
        settings.modes.contains(&Collective::Allreduce),
    ) else {
        return format!(
            "{title}: not measured (needs allreduce and a size of {LARGE_FROM} or more)\n"
        );
    };
    let mut names: Vec<&str> = Vec::new();
    for row in input.rows.iter().filter(|row| row.kind != Kind::Floor) {
        if !names.contains(&row.name.as_str()) {
            names.push(&row.name);
        }
    }
    let spread = &spread.name;
    let mut header = vec!["spread ".to_owned() + spread];
    for &len in &sizes {
        for &threads in &settings.threads {
            header.push(format!("{len} N={threads}"));
        }
    }
    let mut cells = vec![header];
    let mut meeting = Vec::new();
    for name in names {
        let mut line = vec![name.to_owned()];
        let mut all_meet = true;
        let mut any = false;
        for &len in &sizes {
            for &threads in &settings.threads {
                let fraction = input
                    .find(name, threads, len, Collective::Allreduce, spread)
                    .and_then(|row| row.fraction_of_floor);
                if let Some(fraction) = fraction {
                    any = true;
                    all_meet &= fraction >= BANDWIDTH_GOAL;
                }
                line.push(
                    fraction.map_or_else(|| "-".to_owned(), |f| format!("{:.0}%", f * 100.0)),
                );
            }
        }
        if any && all_meet {
            meeting.push(name.to_owned());
        }
        cells.push(line);
    }
    format!(
        "{title}\n{}    meeting the goal everywhere measured: {}\n",
        aligned(&cells, Last::Number),
        if meeting.is_empty() {
            "none".to_owned()
        } else {
            meeting.join(", ")
        }
    )
}

/// (3): OpenMP ÷ auto and OpenMP ÷ our best, at 1,000, 64,000 and 16 M floats. OpenMP is the
/// faster of its two rows, default and `OMP_WAIT_POLICY=active`, so that no ratio flatters us.
pub fn openmp(input: &RatioInput<'_>) -> String {
    let title = format!(
        "(3) against OpenMP's array reduction: omp ÷ auto / omp ÷ our best (which), medians of \
         the {}, omp the faster of its default and OMP_WAIT_POLICY=active rows (above 1: ours \
         is faster)",
        input.settings.metric.describe()
    );
    let sizes = input.sizes(|len| OPENMP_SIZES.contains(&len));
    if sizes.is_empty() {
        return format!("{title}: not measured (none of 1000, 64000, 16M floats ran)\n");
    }
    let auto = Contender::Ours(ReduceAlgorithm::Auto).name();
    let (settings, metric) = (input.settings, input.settings.metric);
    let mut out = format!("{title}\n");
    for len in sizes {
        let mut cells = vec![input.header(&format!("{len} floats"))];
        for &mode in &settings.modes {
            for spread in settings.spreads.iter().map(|setting| &setting.name) {
                let mut line = vec![format!("{} {spread}", mode.name())];
                for &threads in &settings.threads {
                    let omp = [OPENMP_NAME, OPENMP_ACTIVE_NAME]
                        .into_iter()
                        .filter_map(|name| input.find(name, threads, len, mode, spread))
                        .filter_map(|row| row.median(metric))
                        .min_by(f64::total_cmp);
                    let auto = input
                        .find(auto, threads, len, mode, spread)
                        .and_then(|row| row.median(metric));
                    let best = input
                        .rows
                        .iter()
                        .filter(|row| {
                            row.kind == Kind::Ours
                                && row.error.is_none()
                                && row.is_at(&row.name, threads, len, mode, Some(spread))
                        })
                        .filter_map(|row| Some((row, row.median(metric)?)))
                        .min_by(|a, b| a.1.total_cmp(&b.1));
                    line.push(match best {
                        Some((row, median)) => format!(
                            "{} / {} ({})",
                            ratio(omp, auto),
                            ratio(omp, Some(median)),
                            row.name
                        ),
                        None => "-".to_owned(),
                    });
                }
                cells.push(line);
            }
        }
        out.push_str(&aligned(&cells, Last::Number));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::config::ReduceArgs;
    use crate::reduce_bench::results::tests::row;
    use clap::Parser;

    /// A row at N = 2 with median `last` from the last arrival (and twice that in total).
    fn at(name: &str, len: usize, mode: Collective, spread: &str, last: f64) -> ReduceRow {
        row(name, 2, len, mode, Some(spread), (last, 2.0 * last))
    }

    fn rows() -> Vec<ReduceRow> {
        let (reduce, all) = (Collective::Reduce, Collective::Allreduce);
        let mut rows = vec![
            at("dynamic-pairs", 1000, reduce, "high", 100.0),
            at("static-tree", 1000, reduce, "high", 200.0),
            at("linear", 1000, reduce, "high", 400.0),
            at("auto", 1000, reduce, "high", 150.0),
            at(OPENMP_NAME, 1000, reduce, "high", 300.0),
            at("auto", 200_000, all, "none", 1.0),
            at("linear", 200_000, all, "none", 1.0),
        ];
        rows[5].fraction_of_floor = Some(0.75);
        rows[6].fraction_of_floor = Some(0.5);
        rows
    }

    /// The settings of a run at N = 2 over both collectives and `spreads`.
    fn settings(spreads: &str) -> ReduceSettings {
        let spread = format!("--spread={spreads}");
        let args = ReduceArgs::try_parse_from(["reduce", "--threads=2", &spread]).unwrap();
        ReduceSettings::from_args(&args).unwrap()
    }

    fn input<'a>(rows: &'a [ReduceRow], settings: &'a ReduceSettings) -> RatioInput<'a> {
        RatioInput { rows, settings }
    }

    #[test]
    fn the_headline_compares_dynamic_pairs_at_the_largest_spread() {
        let text = headline(&input(&rows(), &settings("none,high")));
        assert!(
            text.contains("spread high") && text.contains("2.00x / 4.00x"),
            "{text}"
        );
        assert!(text.contains("faster than both in 1 of 1 cells"), "{text}");
        let only_none = settings("none");
        assert!(headline(&input(&rows(), &only_none)).contains("not measured"));
    }

    #[test]
    fn large_allreduce_bandwidth_against_the_goal() {
        let text = bandwidth(&input(&rows(), &settings("none,high")));
        assert!(text.contains("200000 N=2") && text.contains("75%") && text.contains("50%"));
        assert!(
            text.contains("meeting the goal everywhere measured: auto\n"),
            "{text}"
        );
    }

    #[test]
    fn openmp_is_the_faster_of_its_two_wait_policies_against_auto_and_our_best() {
        let spreads = settings("high");
        let mut rows = rows();
        // omp 300 over auto 150 and over dynamic-pairs' 100.
        let text = openmp(&input(&rows, &spreads));
        assert!(text.contains("1000 floats") && text.contains("2.00x / 3.00x (dynamic-pairs)"));
        // A slower active row changes nothing; a faster one is what ours is held to.
        rows.push(at(
            OPENMP_ACTIVE_NAME,
            1000,
            Collective::Reduce,
            "high",
            450.0,
        ));
        assert!(openmp(&input(&rows, &spreads)).contains("2.00x / 3.00x"));
        rows.last_mut().unwrap().summaries = at("", 1, Collective::Reduce, "", 240.0).summaries;
        let text = openmp(&input(&rows, &spreads));
        assert!(text.contains("1.60x / 2.40x (dynamic-pairs)"), "{text}");
        assert!(summary(&input(&rows, &spreads)).contains("(2) large arrays"));
    }
}
