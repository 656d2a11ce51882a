//! The command line: `phasers-mpi bench [options]`, parsed by clap, which answers bad input with
//! a usage message and exit code 2 before MPI starts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use phasers_cli::harness;

use crate::collective::Collective;

/// Benchmarks of phasers-mpi's barriers and hybrid collectives against MPI's own and the EPCC
/// mixed-mode (OpenMP + MPI) baseline. Run under mpirun, e.g.
/// `mpirun --allow-run-as-root -np 2 --bind-to none phasers-mpi bench`.
#[derive(Debug, Parser)]
#[command(name = "phasers-mpi", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure the floor, the process barriers, the combined barrier grid and the hybrid
    /// collectives; rank 0 prints the tables and writes the files.
    Bench(BenchArgs),
}

/// Options of `phasers-mpi bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Seconds of measurement per row, split into --samples samples (calibration and the
    /// correctness check come on top); in the hybrid part, per group of three contenders.
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = parse_seconds)]
    pub time: f64,

    /// Timed samples per row; min and median are taken over them.
    #[arg(long, value_name = "N", default_value_t = 11,
          value_parser = clap::value_parser!(u32).range(3..=1000))]
    pub samples: u32,

    /// Threads per rank of the combined barrier grid, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "1,2,4",
          value_parser = parse_threads)]
    pub threads: Vec<usize>,

    /// Parts to run, comma-separated [default: all].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub parts: Option<Vec<Part>>,

    /// Hybrid collectives to measure, comma-separated [default: all].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub collectives: Option<Vec<Collective>>,

    /// Hybrid part: split each contender's samples into N rounds, interleaved: round 1 of the
    /// MPI baseline, the default team and the unchecked team, then round 2 of each (in a rotated
    /// order), and so on, so that a machine that drifts hits all three alike. At most --samples.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: u32,

    /// Write every measurement as JSON (schema: crates/phasers-mpi-bench/docs/bench-json.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write the combined barrier grid as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write the hybrid collectives as CSV, one line per collective, size and shape.
    #[arg(long, value_name = "FILE")]
    pub hybrid_csv: Option<PathBuf>,

    /// Draw the combined barrier grid as a heat map (SVG), one panel per algorithm.
    #[arg(long, value_name = "FILE.svg", value_parser = phasers_cli::harness::args::parse_svg_path)]
    pub plot: Option<PathBuf>,
}

/// The parts of the benchmark.
#[derive(Debug, Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum Part {
    /// MPI one-byte ping-pong and the cache-line round trip.
    Floor,
    /// Process barriers against MPI_Barrier at every rank count.
    Process,
    /// The combined barrier grid (ranks x threads).
    Combined,
    /// Hybrid team collectives (default and unchecked teams) against MPI's.
    Hybrid,
}

impl BenchArgs {
    /// Whether `part` is to run.
    pub fn runs(&self, part: Part) -> bool {
        self.parts
            .as_ref()
            .map_or(true, |parts| parts.contains(&part))
    }

    /// The hybrid collectives to measure: those asked for, or all.
    pub fn collectives(&self) -> Vec<Collective> {
        self.collectives
            .clone()
            .unwrap_or_else(|| Collective::ALL.to_vec())
    }
}

/// Most threads per rank a row may ask for; beyond it a row would take minutes on a laptop.
const MAX_THREADS: usize = 256;

/// Seconds above 0 and at most a day, as every `phasers` benchmark takes them.
fn parse_seconds(text: &str) -> Result<f64, String> {
    harness::args::parse_seconds(text).map(|time| time.as_secs_f64())
}

fn parse_threads(text: &str) -> Result<usize, String> {
    let threads: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a thread count"))?;
    if (1..=MAX_THREADS).contains(&threads) {
        Ok(threads)
    } else {
        Err(format!(
            "{threads} threads per rank: give 1 to {MAX_THREADS}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        let cli = Cli::try_parse_from(["phasers-mpi", "bench"]).unwrap();
        let Command::Bench(args) = cli.command;
        assert_eq!(args.threads, vec![1, 2, 4]);
        assert_eq!(args.samples, 11);
        assert!(args.runs(Part::Hybrid));
        assert_eq!(args.collectives(), Collective::ALL);
        assert_eq!(args.rounds, 5);
        assert!(args.hybrid_csv.is_none());
    }

    #[test]
    fn bad_input_is_refused_by_clap() {
        for bad in [
            &["phasers-mpi", "bench", "--time", "0"][..],
            &["phasers-mpi", "bench", "--time", "nan"],
            &["phasers-mpi", "bench", "--threads", "0"],
            &["phasers-mpi", "bench", "--threads", "1,x"],
            &["phasers-mpi", "bench", "--samples", "1"],
            &["phasers-mpi", "bench", "--parts", "everything"],
            &["phasers-mpi", "bench", "--collectives", "allreduce,sort"],
            &["phasers-mpi", "bench", "--collectives", ""],
            &["phasers-mpi", "bench", "--rounds", "0"],
            &["phasers-mpi", "bench", "--rounds", "-3"],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parts_select() {
        let cli =
            Cli::try_parse_from(["phasers-mpi", "bench", "--parts", "floor,combined"]).unwrap();
        let Command::Bench(args) = cli.command;
        assert!(args.runs(Part::Floor) && args.runs(Part::Combined));
        assert!(!args.runs(Part::Process) && !args.runs(Part::Hybrid));
    }

    #[test]
    fn collectives_select() {
        let cli = Cli::try_parse_from([
            "phasers-mpi",
            "bench",
            "--collectives",
            "scan-exclusive,allreduce",
        ])
        .unwrap();
        let Command::Bench(args) = cli.command;
        assert_eq!(
            args.collectives(),
            [Collective::ScanExclusive, Collective::Allreduce]
        );
    }
}
