//! The options of `phasers app`, and the barrier kinds and sizes they name.

use std::path::PathBuf;

use clap::Parser;
use phasers::Algorithm;
use phasers_apps::sync::SyncKind;
use phasers_apps::workload::{AppName, Size};

use crate::threads;

use super::factories;

/// The thread counts of a default run: 1 (for the speedups), 2 (the cores of our machines) and
/// 8 (oversubscribed there; the scale where barrier choice starts to matter elsewhere).
pub const DEFAULT_THREADS: [usize; 3] = [1, 2, 8];

/// The kinds of a default run: our `Auto`, every standard baseline and the phaser.
pub const DEFAULT_SYNC: [&str; 5] = ["auto", "std", "pthread", "cxx", "phaser"];

/// NOPs per run of the interpreter's NOP program.
pub const DEFAULT_NOPS: u32 = 5_000;

/// Options of `phasers app`.
#[derive(Debug, Clone, Parser)]
#[command(name = "app")]
pub struct AppArgs {
    /// Applications, comma-separated: sor, lu, streamcluster, interp, or all.
    #[arg(value_name = "APP", value_delimiter = ',', required = true, value_parser = parse_app)]
    pub apps: Vec<AppChoice>,

    /// Problem sizes, comma-separated: small, medium, large, or all [default: all].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_size)]
    pub size: Option<Vec<SizeChoice>>,

    /// Thread counts, comma-separated [default: 1,2,8]; the speedup over one thread needs 1.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = threads::parse_thread_count)]
    pub threads: Option<Vec<usize>>,

    /// Barrier kinds, comma-separated: auto or any algorithm of `phasers list`, phaser, std
    /// (std::sync::Barrier), pthread (pthread_barrier_t), cxx (C++20 std::barrier); ours (every
    /// algorithm and the phaser), baselines (std, pthread, cxx), or all [default:
    /// auto,std,pthread,cxx,phaser].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_sync)]
    pub sync: Option<Vec<SyncChoice>>,

    /// Runs of each row; min and median are over them.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub repeat: u16,

    /// NOPs per run of the interpreter's NOP program (the cost of one instruction).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_NOPS, value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    pub nops: u32,

    /// Write every result, with the machine and this command line, to FILE as JSON (schema:
    /// docs/benchmark-json.md, section phasers app).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// One entry of the application list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppChoice {
    /// One application.
    One(AppName),
    /// Every application.
    All,
}

/// One entry of `--size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeChoice {
    /// One size.
    One(Size),
    /// Every size.
    All,
}

/// One entry of `--sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncChoice {
    /// One of our algorithms.
    Algorithm(Algorithm),
    /// The phaser.
    Phaser,
    /// `std::sync::Barrier`.
    Std,
    /// `pthread_barrier_t`.
    Pthread,
    /// C++20 `std::barrier`.
    Cxx,
    /// Every algorithm and the phaser.
    Ours,
    /// std, pthread and cxx.
    Baselines,
    /// Everything.
    All,
}

fn parse_app(text: &str) -> Result<AppChoice, String> {
    match text.trim() {
        "all" => Ok(AppChoice::All),
        name => name
            .parse()
            .map(AppChoice::One)
            .map_err(|error: String| format!("{error} (or all)")),
    }
}

fn parse_size(text: &str) -> Result<SizeChoice, String> {
    match text.trim() {
        "all" => Ok(SizeChoice::All),
        name => name
            .parse()
            .map(SizeChoice::One)
            .map_err(|error: String| format!("{error} (or all)")),
    }
}

fn parse_sync(text: &str) -> Result<SyncChoice, String> {
    Ok(match text.trim() {
        "phaser" => SyncChoice::Phaser,
        "std" => SyncChoice::Std,
        "pthread" => SyncChoice::Pthread,
        "cxx" | "c++" => SyncChoice::Cxx,
        "ours" => SyncChoice::Ours,
        "baselines" => SyncChoice::Baselines,
        "all" => SyncChoice::All,
        name => name
            .parse::<Algorithm>()
            .map(SyncChoice::Algorithm)
            .map_err(|_| {
                format!(
                    "unknown barrier kind {name:?}: use auto or an algorithm of `phasers list`, \
                 phaser, std, pthread, cxx, ours, baselines or all"
                )
            })?,
    })
}

/// What the options resolve to.
pub struct Config {
    /// Applications, in report order, each once.
    pub apps: Vec<AppName>,
    /// Sizes, smallest first, each once.
    pub sizes: Vec<Size>,
    /// Thread counts, increasing, each once.
    pub threads: Vec<usize>,
    /// Barrier kinds, each once, in the order given (`all`: ours first, then the baselines).
    pub kinds: Vec<SyncKind>,
    /// Runs per row.
    pub repeat: usize,
    /// NOPs per interpreter NOP run.
    pub nops: u32,
}

impl Config {
    /// The run `args` ask for.
    pub fn from_args(args: &AppArgs) -> Self {
        let mut apps: Vec<AppName> = Vec::new();
        for choice in &args.apps {
            match choice {
                AppChoice::One(app) => apps.push(*app),
                AppChoice::All => apps.extend(AppName::ALL),
            }
        }
        apps = AppName::ALL
            .into_iter()
            .filter(|app| apps.contains(app))
            .collect();
        let mut sizes: Vec<Size> = Vec::new();
        for choice in args.size.as_deref().unwrap_or(&[SizeChoice::All]) {
            match choice {
                SizeChoice::One(size) => sizes.push(*size),
                SizeChoice::All => sizes.extend(Size::ALL),
            }
        }
        sizes.sort_unstable();
        sizes.dedup();
        let threads = crate::sorted_unique(
            args.threads
                .clone()
                .unwrap_or_else(|| DEFAULT_THREADS.to_vec()),
        );
        let default_sync: Vec<SyncChoice> = DEFAULT_SYNC
            .iter()
            .map(|name| parse_sync(name).expect("the default kinds parse"))
            .collect();
        let mut kinds: Vec<SyncKind> = Vec::new();
        for choice in args.sync.as_deref().unwrap_or(&default_sync) {
            for kind in expand(*choice) {
                if !kinds.iter().any(|known| known.name() == kind.name()) {
                    kinds.push(kind);
                }
            }
        }
        Config {
            apps,
            sizes,
            threads,
            kinds,
            repeat: usize::from(args.repeat),
            nops: args.nops,
        }
    }
}

fn baselines() -> Vec<SyncKind> {
    vec![SyncKind::Std, factories::pthread(), factories::cxx()]
}

fn expand(choice: SyncChoice) -> Vec<SyncKind> {
    match choice {
        SyncChoice::Algorithm(algorithm) => vec![SyncKind::Ours(algorithm)],
        SyncChoice::Phaser => vec![SyncKind::Phaser],
        SyncChoice::Std => vec![SyncKind::Std],
        SyncChoice::Pthread => vec![factories::pthread()],
        SyncChoice::Cxx => vec![factories::cxx()],
        SyncChoice::Ours => SyncKind::ours(),
        SyncChoice::Baselines => baselines(),
        SyncChoice::All => SyncKind::ours().into_iter().chain(baselines()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[&str]) -> Result<AppArgs, clap::Error> {
        AppArgs::try_parse_from(["app"].iter().chain(extra))
    }

    fn names(config: &Config) -> Vec<String> {
        config.kinds.iter().map(SyncKind::name).collect()
    }

    #[test]
    fn defaults() {
        let config = Config::from_args(&parse(&["all"]).unwrap());
        assert_eq!(config.apps, AppName::ALL.to_vec());
        assert_eq!(config.sizes, Size::ALL.to_vec());
        assert_eq!(config.threads, vec![1, 2, 8]);
        assert_eq!(config.repeat, 3);
        assert_eq!(
            names(&config),
            [
                "auto",
                "std::sync::Barrier",
                "pthread_barrier_t",
                "std::barrier (C++20)",
                "phaser"
            ]
        );
    }

    #[test]
    fn lists_expand_and_repeat_once() {
        let args = parse(&[
            "interp,sor,sor",
            "--size",
            "large,small,large",
            "--threads",
            "8,2",
            "--sync",
            "mcs,ours,std,baselines",
            "--repeat",
            "5",
            "--json",
            "x.json",
        ])
        .unwrap();
        let config = Config::from_args(&args);
        assert_eq!(config.apps, vec![AppName::Sor, AppName::Interp]);
        assert_eq!(config.sizes, vec![Size::Small, Size::Large]);
        assert_eq!(config.threads, vec![2, 8]);
        let kinds = names(&config);
        assert_eq!(kinds[0], phasers::Algorithm::McsTree.name());
        // mcs once, auto and the six other algorithms, the phaser, three baselines.
        assert_eq!(kinds.len(), 8 + 1 + 3);
        let all = Config::from_args(&parse(&["sor", "--sync", "all"]).unwrap());
        assert_eq!(all.kinds.len(), 12);
    }

    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        for (extra, message) in [
            (vec!["fft"], "unknown application"),
            (vec!["sor", "--size", "huge"], "unknown size"),
            (vec!["sor", "--sync", "bogus"], "unknown barrier kind"),
            (vec!["sor", "--threads", "0"], "at least 1 thread"),
            (vec!["sor", "--repeat", "0"], "0"),
            (vec![], "required"),
        ] {
            let error = parse(&extra).unwrap_err().to_string();
            assert!(error.contains(message), "{extra:?}: {error}");
        }
    }
}
