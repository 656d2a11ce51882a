//! OpenMP as its users tune it: `OMP_WAIT_POLICY=active`, which makes libgomp's waiting threads
//! spin rather than sleep in the kernel.
//!
//! libgomp reads `OMP_WAIT_POLICY` (and `GOMP_SPINCOUNT`) once, when it is loaded, so this process
//! cannot measure both policies. The tuned rows are measured by a child: this very program,
//! re-executed with the variable set, running the hidden subcommand `internal-omp-row`, which
//! measures one OpenMP row with the parent's plan (the same schedule, mode, pinning and calibrated
//! delay) and prints the [`Row`] as JSON on stdout. The parent parses it back, so the tuned row
//! sits in the same table as the default one, and no ratio against OpenMP flatters us.
//!
//! The child's samples are raw, like every row's: the sweep subtracts the OpenMP reference loop
//! it measured itself. That loop is a parallel region of delays alone; its cost per iteration is
//! the delay under either policy, since the region's fork and join are spread over thousands of
//! iterations.
//!
//! A child that fails, prints something other than a row, or outlives its row budget by
//! `--hang-seconds` (it is then killed) gives a failed row that says why, never a crash.

use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};

use crate::bench::RowPlan;
use crate::child_process;
use crate::contender::Contender;
use crate::native::OmpWork;
use crate::openmp_row::{self, SETTLE};
use crate::results::{Mode, Row};
use crate::schedule::Schedule;

/// The subcommand the child runs; hidden from `--help`, since only this module calls it.
pub const SUBCOMMAND: &str = "internal-omp-row";

/// The variable and value the child runs with.
pub const WAIT_POLICY: (&str, &str) = ("OMP_WAIT_POLICY", "active");

/// Which OpenMP row the child measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ActiveWork {
    /// `#pragma omp barrier`: the row `omp barrier (active)`.
    Barrier,
    /// `#pragma omp for reduction(+:a)`: the row `omp reduction (active)`.
    Reduction,
}

impl ActiveWork {
    /// The row of the parent's table.
    pub fn contender(self) -> Contender {
        match self {
            ActiveWork::Barrier => Contender::OpenMpActive,
            ActiveWork::Reduction => Contender::OmpReductionActive,
        }
    }

    fn omp(self) -> OmpWork {
        match self {
            ActiveWork::Barrier => OmpWork::Barrier,
            ActiveWork::Reduction => OmpWork::Reduction,
        }
    }
}

/// The options of `phasers internal-omp-row`: one OpenMP row's plan, spelled out.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct ChildArgs {
    /// OpenMP threads.
    #[arg(long)]
    threads: usize,
    /// The row.
    #[arg(long, value_enum)]
    work: ActiveWork,
    /// How iterations are timed.
    #[arg(long, value_enum)]
    mode: Mode,
    /// Iterations per sample, when fixed.
    #[arg(long)]
    episodes: Option<u64>,
    /// Samples wanted, dropped ones included.
    #[arg(long)]
    samples: usize,
    /// How long a calibrated sample should last, in ns.
    #[arg(long)]
    target_sample_ns: u64,
    /// The row's time budget, in ns.
    #[arg(long)]
    row_budget_ns: u64,
    /// When a row counts as hung, in ns.
    #[arg(long)]
    hang_after_ns: u64,
    /// Pin OpenMP thread t to the t-th allowed CPU.
    #[arg(long)]
    pin: bool,
    /// Iterations of the delay loop before each barrier, as the parent calibrated them.
    #[arg(long)]
    delay_iterations: u64,
}

impl ChildArgs {
    /// The options that make a child measure `work` on `threads` threads with `plan`.
    pub fn new(threads: usize, plan: &RowPlan, work: ActiveWork) -> Self {
        let schedule = plan.schedule;
        ChildArgs {
            threads,
            work,
            mode: plan.mode,
            episodes: schedule.episodes,
            samples: schedule.samples,
            target_sample_ns: nanos(schedule.target_sample),
            row_budget_ns: nanos(schedule.row_budget),
            hang_after_ns: nanos(plan.hang_after),
            pin: plan.pin,
            delay_iterations: plan.delay,
        }
    }

    /// The plan these options spell out.
    fn plan(&self) -> RowPlan {
        RowPlan {
            mode: self.mode,
            schedule: Schedule {
                episodes: self.episodes,
                samples: self.samples,
                target_sample: Duration::from_nanos(self.target_sample_ns),
                row_budget: Duration::from_nanos(self.row_budget_ns),
            },
            hang_after: Duration::from_nanos(self.hang_after_ns),
            pin: self.pin,
            delay: self.delay_iterations,
        }
    }

    /// The command-line words after the subcommand.
    fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("--threads={}", self.threads),
            format!("--work={}", value_name(self.work)),
            format!("--mode={}", self.mode.name()),
            format!("--samples={}", self.samples),
            format!("--target-sample-ns={}", self.target_sample_ns),
            format!("--row-budget-ns={}", self.row_budget_ns),
            format!("--hang-after-ns={}", self.hang_after_ns),
            format!("--delay-iterations={}", self.delay_iterations),
        ];
        args.extend(
            self.episodes
                .map(|episodes| format!("--episodes={episodes}")),
        );
        args.extend(self.pin.then(|| "--pin".to_owned()));
        args
    }
}

/// The child's side: measures the row and prints it as one line of JSON.
pub fn child(args: &ChildArgs) -> Result<(), String> {
    let row = openmp_row::run(args.threads, &args.plan(), args.work.omp());
    let text =
        serde_json::to_string(&row).map_err(|error| format!("cannot encode the row: {error}"))?;
    println!("{text}");
    Ok(())
}

/// The parent's side: measures `work` on `threads` threads with `plan` in a child process under
/// `OMP_WAIT_POLICY=active`. The row is raw, as [`openmp_row::run`]'s is.
pub fn run(threads: usize, plan: &RowPlan, work: ActiveWork) -> Row {
    let contender = work.contender();
    let (name, kind) = (contender.name(), contender.kind());
    let start = Instant::now();
    // The child stops itself at its row budget; past that and the hang time, it is stuck.
    let limit = plan.schedule.row_budget + plan.hang_after + SETTLE;
    let measured = child_process::this_program(SUBCOMMAND).and_then(|mut command| {
        command
            .args(ChildArgs::new(threads, plan, work).to_args())
            .env(WAIT_POLICY.0, WAIT_POLICY.1);
        child_process::run::<Row>(command, None, limit)
    });
    match measured {
        Ok(mut row) => {
            row.barrier = name.into_owned();
            row.kind = kind;
            // Process start and libgomp's loading included, as a row's thread start-up is.
            row.row_s = start.elapsed().as_secs_f64();
            row
        }
        Err(error) => Row::failed(&name, kind, plan.schedule.samples, failure(&error)),
    }
}

/// A failed row's error: what went wrong in the child, saying which child it was.
pub fn failure(error: &str) -> String {
    format!(
        "the child process with {}={} {error}",
        WAIT_POLICY.0, WAIT_POLICY.1
    )
}

fn value_name(value: impl ValueEnum) -> String {
    value
        .to_possible_value()
        .map(|possible| possible.get_name().to_owned())
        .unwrap_or_default()
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: ChildArgs,
    }

    fn plan(pin: bool, episodes: Option<u64>) -> RowPlan {
        RowPlan {
            mode: Mode::Epcc,
            schedule: Schedule {
                episodes,
                samples: 4,
                target_sample: Duration::from_micros(2500),
                row_budget: Duration::from_millis(1500),
            },
            hang_after: Duration::from_secs(60),
            pin,
            delay: 37,
        }
    }

    #[test]
    fn the_plan_survives_the_command_line() {
        for (pin, episodes) in [(false, None), (true, Some(50))] {
            let plan = plan(pin, episodes);
            let args = ChildArgs::new(3, &plan, ActiveWork::Reduction);
            let words = std::iter::once(SUBCOMMAND.to_owned()).chain(args.to_args());
            let parsed = Wrapper::try_parse_from(words).unwrap().args;
            assert_eq!(parsed, args);
            assert_eq!(parsed.plan(), plan);
        }
    }

    #[test]
    fn a_failed_child_gives_a_failed_row() {
        let mut plan = plan(false, Some(10));
        plan.schedule.row_budget = Duration::from_millis(1);
        plan.hang_after = Duration::from_millis(1);
        // The unit-test binary has no such subcommand, so whatever it does gives no row.
        let row = run(2, &plan, ActiveWork::Barrier);
        assert_eq!(row.barrier, "omp barrier (active)");
        let error = row.error.unwrap();
        assert!(
            error.starts_with("the child process with OMP_WAIT_POLICY=active"),
            "{error}"
        );
        assert!(row.summary.is_none());
    }
}
