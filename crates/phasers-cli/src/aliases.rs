//! The commands that merged into others: `bench reduction` and `bench tree` are figures of
//! `bench phaser`, and `tune` is `bench barrier --write-profile`. The old names keep working for
//! one release, hidden from `--help`, and each says its new form in one line on stderr.

use std::path::PathBuf;

use clap::Args;
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::threads;

use crate::benches::barrier::{BarrierArgs, MeasureArgs};
use crate::benches::phaser::{Figure, PhaserArgs};

/// The line an old name prints: what to type instead.
pub fn renamed(old: &str, new: &str) -> String {
    format!(
        "note: `phasers {old}` is now `phasers {new}`; the old name works until the next release"
    )
}

/// `bench reduction` and `bench tree`: `bench phaser` with `figure`, which the old name fixes.
pub fn phaser_figure(
    old: &str,
    figure: Figure,
    mut args: PhaserArgs,
) -> Result<PhaserArgs, String> {
    let name = figure.name();
    if args.figure.is_some_and(|asked| asked != figure) {
        return Err(format!(
            "`phasers {old}` is `phasers bench phaser --figure {name}`; it takes no other \
             --figure (run `phasers bench phaser` for the others)"
        ));
    }
    eprintln!("{}", renamed(old, &format!("bench phaser --figure {name}")));
    args.figure = Some(figure);
    Ok(args)
}

/// Options of the old `phasers tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Thread counts, comma-separated [default: the `bench barrier` sweep, then 4x the cores and
    /// 64].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = threads::parse_thread_count)]
    threads: Option<Vec<usize>>,

    #[command(flatten)]
    measure: MeasureArgs,

    /// Where to write the profile (now `bench barrier --write-profile FILE`).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Also write the measurements to FILE as JSON (the `bench barrier` schema).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// `tune`: `bench barrier --write-profile`, which measures the standard barriers too, so the
/// tables the profile came from show them.
pub fn tune(args: TuneArgs) -> BarrierArgs {
    let mut new = String::from("bench barrier --write-profile");
    if let Some(path) = &args.output {
        new.push_str(&format!(" {}", path.display()));
    }
    if let Some(path) = &args.json {
        new.push_str(&format!(" --json {}", path.display()));
    }
    eprintln!("{}", renamed("tune", &new));
    BarrierArgs {
        threads: args.threads,
        algorithms: None,
        write_profile: Some(args.output),
        measure: args.measure,
        output: OutputArgs {
            json: args.json,
            ..OutputArgs::default()
        },
    }
}
