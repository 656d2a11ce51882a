//! The options of `phasers app`, and the barrier kinds and sizes they name.

use std::collections::HashSet;
use std::str::FromStr;

use clap::Parser;
use phasers::Algorithm;
use phasers_apps::sync::SyncKind;
use phasers_apps::workload::{AppName, Size};
use phasers_cli::harness::args::sorted_unique;
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::result::{Fields, Settings};
use phasers_cli::harness::threads::parse_thread_count;
use serde_json::Value;

use super::factories;

/// Options of `phasers app`.
#[derive(Debug, Clone, Parser)]
#[command(name = "app")]
pub struct AppArgs {
    /// Applications, comma-separated: sor, lu, streamcluster, interp, or all.
    #[arg(value_name = "APP", value_delimiter = ',', required = true, value_parser = |text: &str| one_or_all(text, &AppName::ALL))]
    pub apps: Vec<Named<AppName>>,

    /// Problem sizes, comma-separated: small, medium, large, or all.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "all", value_parser = |text: &str| one_or_all(text, &Size::ALL))]
    pub size: Vec<Named<Size>>,

    /// Thread counts, comma-separated [default: 1,2,8]; the speedup over one thread needs 1.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_thread_count)]
    pub threads: Option<Vec<usize>>,

    /// Barrier kinds, comma-separated: auto or any algorithm of `phasers list`, phaser, std
    /// (std::sync::Barrier), pthread (pthread_barrier_t), cxx (C++20 std::barrier); ours (every
    /// algorithm and the phaser), baselines (std, pthread, cxx), or all.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "auto,std,pthread,cxx,phaser", value_parser = parse_sync)]
    pub sync: Vec<Named<SyncKind>>,

    /// Runs of each row; min and median are over them.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub repeat: u16,

    /// NOPs per run of the interpreter's NOP program (the cost of one instruction).
    #[arg(long, value_name = "N", default_value_t = 5_000, value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    pub nops: u32,

    /// `--json`, `--csv`, `--plot` (one file per application and size, `FILE-sor-small.svg`)
    /// and `--verbose`.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What one entry of a list names: one item, or a group (`all`, `ours`, `baselines`).
#[derive(Debug, Clone)]
pub struct Named<T>(pub Vec<T>);

/// One of `every` by name, or `all` of them.
fn one_or_all<T: FromStr<Err = String> + Copy>(
    text: &str,
    every: &[T],
) -> Result<Named<T>, String> {
    match text.trim() {
        "all" => Ok(Named(every.to_vec())),
        name => name
            .parse()
            .map(|one| Named(vec![one]))
            .map_err(|error| format!("{error} (or all)")),
    }
}

fn parse_sync(text: &str) -> Result<Named<SyncKind>, String> {
    let baselines = || vec![SyncKind::Std, factories::pthread(), factories::cxx()];
    Ok(Named(match text.trim() {
        "phaser" => vec![SyncKind::Phaser],
        "std" => vec![SyncKind::Std],
        "pthread" => vec![factories::pthread()],
        "cxx" | "c++" => vec![factories::cxx()],
        "ours" => SyncKind::ours(),
        "baselines" => baselines(),
        "all" => SyncKind::ours().into_iter().chain(baselines()).collect(),
        name => vec![SyncKind::Ours(name.parse::<Algorithm>().map_err(|_| {
            format!(
                "unknown barrier kind {name:?}: use auto or an algorithm of `phasers list`, \
                 phaser, std, pthread, cxx, ours, baselines or all"
            )
        })?)],
    }))
}

/// The items of `every` that `named` names, in the order of `every`.
fn chosen<T: PartialEq + Copy>(named: &[Named<T>], every: &[T]) -> Vec<T> {
    every
        .iter()
        .filter(|item| named.iter().any(|named| named.0.contains(item)))
        .copied()
        .collect()
}

/// What the options resolve to.
pub struct Config {
    /// Applications, in report order, each once.
    pub apps: Vec<AppName>,
    /// Sizes, smallest first, each once.
    pub sizes: Vec<Size>,
    /// Barrier kinds, each once, in the order given (`all`: ours first, then the baselines).
    pub kinds: Vec<SyncKind>,
    /// Thread counts, increasing, each once.
    pub threads: Vec<usize>,
    /// Runs per row.
    pub repeat: usize,
    /// NOPs per run of the NOP program.
    pub nops: u32,
}

impl Config {
    /// The run `args` ask for.
    pub fn from_args(args: &AppArgs) -> Self {
        let mut kinds: Vec<SyncKind> = args.sync.iter().flat_map(|named| named.0.clone()).collect();
        let mut seen = HashSet::new();
        kinds.retain(|kind| seen.insert(kind.name()));
        Config {
            apps: chosen(&args.apps, &AppName::ALL),
            sizes: chosen(&args.size, &Size::ALL),
            kinds,
            // 1 for the speedups, 2 the cores of our machines, 8 oversubscribed there (the scale
            // where barrier choice starts to matter elsewhere).
            threads: sorted_unique(args.threads.clone().unwrap_or_else(|| vec![1, 2, 8])),
            repeat: usize::from(args.repeat),
            nops: args.nops,
        }
    }

    /// The settings as the report states them.
    pub fn settings(&self) -> Settings {
        let names = |names: Vec<&str>| Value::from(names);
        Settings {
            method: format!(
                "each row runs the application {} time(s) on fresh data and a fresh barrier; a \
                 run is timed from the first thread's start to the last thread's end, after the \
                 threads met on a control barrier (thread start-up and set-up are not timed); \
                 every barrier is one virtual call through the same handle type for every kind; \
                 the result is checked against the sequential run after the clock stops. \
                 Speedups divide medians",
                self.repeat
            ),
            threads: self.threads.clone(),
            contenders: self.kinds.iter().map(SyncKind::name).collect(),
            pinned: false,
            debug_build: cfg!(debug_assertions),
            own: Fields::default()
                .with(
                    "apps",
                    names(self.apps.iter().map(|app| app.name()).collect()),
                )
                .with(
                    "sizes",
                    names(self.sizes.iter().map(|size| size.name()).collect()),
                )
                .with("repeat", self.repeat)
                .with("nops", self.nops),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Config, clap::Error> {
        let args = AppArgs::try_parse_from(["app"].into_iter().chain(line.split_whitespace()))?;
        Ok(Config::from_args(&args))
    }

    #[test]
    fn defaults() {
        let config = parse("all").unwrap();
        assert_eq!(config.apps, AppName::ALL.to_vec());
        assert_eq!(config.sizes, Size::ALL.to_vec());
        let sync = config.settings().contenders;
        let Config {
            threads,
            repeat,
            nops,
            ..
        } = config;
        assert_eq!((threads, repeat, nops), (vec![1, 2, 8], 3, 5_000));
        let baselines = [
            "std::sync::Barrier",
            "pthread_barrier_t",
            "std::barrier (C++20)",
        ];
        assert_eq!(sync, [&["auto"][..], &baselines, &["phaser"]].concat());
    }

    #[test]
    fn lists_expand_and_repeat_once() {
        let config = parse(
            "interp,sor,sor --size large,small,large --threads 8,2 --sync mcs,ours,std,baselines \
             --repeat 5 --json x.json",
        )
        .unwrap();
        assert_eq!(config.apps, vec![AppName::Sor, AppName::Interp]);
        assert_eq!(config.sizes, vec![Size::Small, Size::Large]);
        assert_eq!(config.threads, vec![2, 8]);
        let kinds = config.settings().contenders;
        assert_eq!(kinds[0], Algorithm::McsTree.name());
        // mcs once, auto and the six other algorithms, the phaser, three baselines.
        assert_eq!(kinds.len(), 8 + 1 + 3);
        assert_eq!(parse("sor --sync all").unwrap().kinds.len(), 12);
    }

    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        for (line, message) in [
            ("fft", "unknown application"),
            ("sor --size huge", "unknown size"),
            ("sor --sync bogus", "unknown barrier kind"),
            ("sor --threads 0", "at least 1 thread"),
            ("sor --repeat 0", "0"),
            ("", "required"),
        ] {
            let error = parse(line).err().unwrap().to_string();
            assert!(error.contains(message), "{line:?}: {error}");
        }
    }
}
