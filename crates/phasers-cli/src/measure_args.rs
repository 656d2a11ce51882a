//! How a sweep's rows are measured: the options `bench barrier` and `bench phaser` share, and the
//! [`Plan`] they make.

use std::time::Duration;

use clap::Args;
use phasers_cli::harness::args::{command_line, parse_delay, parse_seconds, sorted_unique};
use phasers_cli::harness::delay;
use phasers_cli::harness::row::{Mode, RowPlan};
use phasers_cli::harness::schedule::Schedule;

use crate::contender::Contender;
use crate::ratios::Ratios;
use crate::sweep::{self, Benchmark, Plan, EPCC_DROPPED};

/// How each test is measured; shared by the sweeps.
#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    /// How each iteration is timed.
    #[arg(long, value_enum, default_value = "epcc")]
    pub mode: Mode,

    /// Pin each test's threads to the available CPUs, round robin.
    #[arg(long)]
    pub pin: bool,

    /// Seconds each test (one barrier at one thread count) aims to take.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub time: Duration,

    /// Timed samples per test (EPCC's outer repetitions); in EPCC mode one more is taken first
    /// and dropped.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub samples: u16,

    /// Split each test's samples into N rounds, interleaved: round 1 of the floor and of every
    /// row at a thread count, then round 2 of each, and so on, so a machine that drifts between
    /// fast and slow states hits every row alike. Each round runs on a fresh barrier with its own
    /// warm-up (in EPCC mode, its own dropped sample); tables show how much the rounds disagree,
    /// and mark "noisy" the ratios that disagreement could reverse. At most --samples, since each
    /// round needs a sample [default: 5, or --samples when fewer].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub rounds: Option<u16>,

    /// EPCC mode: the delay before each barrier, in microseconds (EPCC's default is 0.1).
    #[arg(long, value_name = "MICROSECONDS", default_value = "0.1", value_parser = parse_delay, allow_negative_numbers = true)]
    pub delay: Duration,

    /// Iterations per sample (EPCC's inner repetitions) [default: sized so the test takes
    /// --time].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub episodes: Option<u64>,

    /// Stop the whole run when a test completes no round for this many seconds: it is hung.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub hang_seconds: Duration,
}

/// Rounds per row when --rounds is not given: enough to tell a drifting machine from a real
/// difference (each round is one vote), few enough that each round still has several samples at
/// the default --samples 20.
const DEFAULT_ROUNDS: u16 = 5;

impl MeasureArgs {
    /// Refuses options that contradict each other; run before anything is measured.
    pub fn check(&self) -> Result<(), String> {
        match self.rounds {
            Some(rounds) if rounds > self.samples => Err(format!(
                "--rounds {rounds} is more than --samples {}: each round needs at least one \
                 sample; ask for at most {0} rounds, or more samples",
                self.samples
            )),
            _ => Ok(()),
        }
    }

    /// The plan of `benchmark` over `threads` and `contenders` measured this way.
    pub fn plan(
        &self,
        benchmark: Benchmark,
        threads: Vec<usize>,
        contenders: Vec<Contender>,
    ) -> Plan {
        let dropped = match self.mode {
            Mode::Epcc => EPCC_DROPPED,
            Mode::BackToBack => 0,
        };
        let samples = usize::from(self.samples) + dropped;
        let delay = (self.mode == Mode::Epcc).then_some(self.delay);
        Plan {
            benchmark,
            threads: sorted_unique(threads),
            contenders,
            keep: sweep::keep_all,
            ratios: if benchmark == Benchmark::BARRIER {
                Ratios::Barrier
            } else {
                Ratios::None
            },
            row: RowPlan {
                mode: self.mode,
                schedule: Schedule {
                    episodes: self.episodes,
                    samples,
                    target_sample: self.time / samples as u32,
                    // Warm-up, calibration and a slow barrier may overrun the aim; beyond this a
                    // test stops with the samples it has, and says so.
                    row_budget: self.time * 3 + Duration::from_secs(1),
                },
                hang_after: self.hang_seconds,
                pin: self.pin,
                delay: delay.map_or(0, delay::calibrate),
            },
            rounds: usize::from(self.rounds.unwrap_or(DEFAULT_ROUNDS).min(self.samples)),
            delay,
            time_per_test: self.time,
            print_tables: true,
            command_line: command_line(),
        }
    }
}
