//! `phasers bench collectives`: the team collectives as seed 004's MPP suite measures them,
//! against the barriers and copies users have without them, in one run.
//!
//! At each member count N, every part (see [`Part`]) runs its rows: the library's collective on a
//! fresh team of N members, on the team of all and on `split_grid`'s row and column teams (all of
//! which run at once), and, on the team of all, the baselines: `std::sync::Barrier`, our
//! `Barrier`, OpenMP's barrier, reduction and a broadcast through a shared buffer, and a memcpy
//! of each broadcast length. Every row times back-to-back operations in rounds between two
//! meetings of its threads (see [`baselines::looped`]); every result is checked. The run ends with the
//! figures the issue asks for (see [`figures`]).

mod baselines;
mod config;
mod csv_file;
mod figures;
mod grid;
mod operation;
mod results;
mod table;
mod team;

use std::collections::HashMap;

use phasers::SyncMode;
use phasers_cli::harness::args::command_line;
use phasers_cli::harness::failures::failed_rows;
use phasers_cli::harness::floor;
use phasers_cli::harness::header::{warn_if_debug_build, Header};
use phasers_cli::harness::memory;
use phasers_cli::harness::outputs::write_csv_lines;
use phasers_cli::harness::progress;
use phasers_cli::harness::provenance::Provenance;

pub use config::CollectivesArgs;

use config::Config;
use figures::FigureInput;
use grid::Shape;
use operation::{Operation, Part, CHECKED_OPERATIONS, WORD_BYTES};
use results::{CollectiveRow, CollectivesReport, Kind};
use team::TeamSetup;

/// Runs `phasers bench collectives`.
pub fn run(args: &CollectivesArgs) -> Result<(), String> {
    let config = Config::from_args(args);
    let outputs = args.run.open(Vec::new())?;
    let provenance = Provenance::now("bench collectives", command_line());
    let floor = floor::measure(floor::BRIEFLY);
    let what = "team collectives (seed 004's MPP suite) against std::sync::Barrier, our Barrier, \
                OpenMP and memcpy";
    let header = Header::with_floors(&provenance, what, &config.settings.method, &floor).line(
        "units",
        "per operation, min and median over the samples; GB/s: the payload each receiver gets \
         over the median; of memcpy: a one-thread memcpy's median over the row's; ÷omp: the \
         median over the OpenMP row's (below 1: ours is faster)",
    );
    println!("{}", header.finish());
    warn_if_debug_build(Some("teams check every call"));
    let mut sweep = Sweep {
        config: &config,
        available: memory::available(),
        rows: Vec::new(),
        memcpy: HashMap::new(),
    };
    let bar = progress::bar(
        config.settings.members.len() * config.settings.parts.len(),
        "parts",
    );
    for &members in &config.settings.members {
        let mut shown = Vec::new();
        for &part in &config.settings.parts {
            bar.set_message(format!("N = {members}, {}", part.name()));
            shown.extend(sweep.part(part, members));
            bar.inc(1);
        }
        let cores = provenance.machine.available_cores;
        let table = table::table(members, cores, config.columns_for(members), &shown);
        bar.suspend(|| println!("{table}"));
    }
    bar.finish_and_clear();
    let rows = sweep.rows;
    println!(
        "{}",
        figures::summary(&FigureInput {
            rows: &rows,
            settings: &config.settings,
        })
    );
    let failures = failures(&rows);
    let report = CollectivesReport {
        provenance,
        settings: config.settings,
        floor,
        rows,
    };
    let csv = |out| write_csv_lines(out, csv_file::lines(&report.floor, &report.rows));
    outputs.write(&report, csv, |_, _| Ok(()))?;
    failures
}

/// The rows of a run, and the memcpy of each broadcast length, measured the first time it is
/// needed.
struct Sweep<'a> {
    config: &'a Config,
    /// The memory the kernel says is available, for skipping rows that would not fit.
    available: Option<u64>,
    rows: Vec<CollectiveRow>,
    memcpy: HashMap<usize, CollectiveRow>,
}

impl Sweep<'_> {
    /// Measures `part` at `members`; returns the rows its table shows (with the memcpy rows of
    /// its broadcasts, which are measured once per run).
    fn part(&mut self, part: Part, members: usize) -> Vec<CollectiveRow> {
        let mut shown = Vec::new();
        let plan = &self.config.plan;
        match part {
            Part::Barrier => {
                shown.extend(self.teams(part, Operation::Barrier, members));
                let ours = (Kind::OurBarrier, baselines::our_barrier(members, plan));
                let std = (Kind::Baseline, baselines::std_barrier(members, plan));
                shown.extend([ours, std].map(|(kind, measured)| {
                    CollectiveRow::measured(part, Operation::Barrier, kind, members, measured)
                }));
                shown.extend(self.openmp(part, Operation::Barrier, members));
            }
            Part::Allreduce => {
                shown.extend(self.teams(part, Operation::Allreduce, members));
                shown.extend(self.openmp(part, Operation::Allreduce, members));
            }
            Part::Broadcast => {
                for &words in &self.config.settings.broadcast_words {
                    let operation = Operation::Broadcast { words };
                    let copy = self.memcpy(words);
                    let mut rows = self.teams(part, operation, members);
                    rows.extend(self.openmp(part, operation, members));
                    for row in &mut rows {
                        row.compare_with_memcpy(&copy);
                    }
                    shown.push(copy);
                    shown.extend(rows);
                }
            }
            Part::Alltoall => {
                for &block in &self.config.settings.alltoall_blocks {
                    shown.extend(self.teams(part, Operation::Alltoall { block }, members));
                }
            }
            Part::Checked => {
                // What checking costs is a few nanoseconds, far below how much a shared machine
                // drifts between two rows measured a second apart. So each round measures a
                // checked row and its unchecked twin back to back, alternating which goes first,
                // and figure (d) divides their medians round by round.
                let mut twins = vec![[Vec::new(), Vec::new()]; CHECKED_OPERATIONS.len()];
                for round in 0..self.config.settings.rounds {
                    for (operation, twin) in CHECKED_OPERATIONS.into_iter().zip(&mut twins) {
                        for checked in [round % 2 == 0, round % 2 != 0] {
                            let setup =
                                self.setup(members, Shape::All, Some(checked), SyncMode::AllSync);
                            twin[usize::from(!checked)].push(self.team(part, operation, &setup));
                        }
                    }
                }
                let twins = twins.into_iter().flatten();
                shown.extend(twins.filter_map(CollectiveRow::merge_rounds));
            }
            Part::SyncModes => {
                for &words in &self.config.settings.sync_mode_words {
                    for sync in [SyncMode::AllSync, SyncMode::MySync, SyncMode::NoSync] {
                        let setup = self.setup(members, Shape::All, None, sync);
                        let operation = Operation::Broadcast { words };
                        shown.push(self.team(part, operation, &setup));
                    }
                }
            }
        }
        self.rows
            .extend(shown.iter().filter(|row| row.kind != Kind::Memcpy).cloned());
        shown
    }

    /// The teams of `shape` among `members`.
    fn setup(
        &self,
        members: usize,
        shape: Shape,
        checked: Option<bool>,
        sync: SyncMode,
    ) -> TeamSetup {
        TeamSetup {
            members,
            shape,
            columns: self.config.columns_for(members),
            checked,
            sync,
        }
    }

    /// `operation` on every team shape of the run.
    fn teams(&self, part: Part, operation: Operation, members: usize) -> Vec<CollectiveRow> {
        let setups = self.config.settings.teams.iter();
        setups
            .map(|&shape| {
                let setup = self.setup(members, shape, None, SyncMode::AllSync);
                self.team(part, operation, &setup)
            })
            .collect()
    }

    /// One library row, unless its teams have one member each or it would not fit in memory.
    fn team(&self, part: Part, operation: Operation, setup: &TeamSetup) -> CollectiveRow {
        let mut row = setup.row(part, operation);
        let why = if row.team_sizes.iter().all(|&size| size < 2) {
            Some(format!(
                "split_grid({}) makes {} teams of one member: nothing to synchronize",
                setup.columns,
                setup.shape.name()
            ))
        } else {
            memory::too_big(bytes_needed(operation, setup.members), self.available)
        };
        match why {
            Some(why) => {
                row.skip(&why);
                row
            }
            None => team::measure(part, operation, setup, &self.config.plan),
        }
    }

    /// The OpenMP counterpart of `operation` at `members`, if it has one.
    fn openmp(&self, part: Part, operation: Operation, members: usize) -> Option<CollectiveRow> {
        let (_, name) = baselines::openmp_counterpart(operation)?;
        let mut row = CollectiveRow::blank(part, operation, name, Kind::Baseline, members);
        match memory::too_big(bytes_needed(operation, members), self.available) {
            Some(why) => row.skip(&why),
            None => {
                row.record(baselines::openmp(operation, members, &self.config.plan)?);
                row.set_receivers(members - 1);
            }
        }
        Some(row)
    }

    /// The memcpy of `words` u64, measured the first time it is asked for.
    fn memcpy(&mut self, words: usize) -> CollectiveRow {
        let plan = &self.config.plan;
        let rows = &mut self.rows;
        self.memcpy
            .entry(words)
            .or_insert_with(|| {
                let operation = Operation::Memcpy { words };
                let measured = baselines::memcpy(words, plan);
                let mut row =
                    CollectiveRow::measured(Part::Broadcast, operation, Kind::Memcpy, 1, measured);
                row.set_receivers(1);
                rows.push(row.clone());
                row
            })
            .clone()
    }
}

/// A generous estimate of the bytes a row of `operation` among `members` needs at once: every
/// member's buffers, as much again for whatever the library or OpenMP keeps, and OpenMP's shared
/// buffer.
fn bytes_needed(operation: Operation, members: usize) -> u64 {
    let members = members as u64;
    let words = match operation {
        Operation::Barrier | Operation::Allreduce => 0,
        Operation::Broadcast { words } => (2 * members + 1) * words as u64,
        Operation::Alltoall { block } => 4 * members * members * block as u64,
        Operation::Memcpy { words } => 2 * words as u64,
    };
    words.saturating_mul(WORD_BYTES as u64)
}

/// An error naming every row that failed, if any did.
fn failures(rows: &[CollectiveRow]) -> Result<(), String> {
    failed_rows(rows, |row| {
        let error = row.error.as_ref()?;
        let (label, operation) = (row.label(), row.operation.label());
        Some(format!(
            "{label} ({operation}) with N = {}: {error}",
            row.members
        ))
    })
}

/// Every row of `bench collectives` with a line about it, for `phasers list`.
pub fn list() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            results::TEAM_NAME,
            "a Team member per thread: barrier(), allreduce of one u64 (Op::Sum), broadcast from \
             root iteration % size, alltoall; on the team of all and split_grid's row and column \
             teams; checked and unchecked; AllSync, MySync, NoSync",
        ),
        (
            baselines::OURS_NAME,
            "our Barrier with Algorithm::Auto on N threads: what a team's barrier and allreduce \
             are held against",
        ),
        (
            baselines::STD_NAME,
            "Rust's std::sync::Barrier on N threads",
        ),
        (
            baselines::OMP_BARRIER_NAME,
            "OpenMP #pragma omp barrier (libgomp), back to back in one parallel region",
        ),
        (
            baselines::OMP_ALLREDUCE_NAME,
            "OpenMP omp for reduction(+:x) of one u64 per thread, then every thread reads the sum",
        ),
        (
            baselines::OMP_BROADCAST_NAME,
            "OpenMP: the root copies into a shared buffer, barrier, the others copy it out, \
             barrier",
        ),
        (
            baselines::MEMCPY_NAME,
            "copy_from_slice of a broadcast's length on one thread: broadcast bandwidth is a \
             fraction of its",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use phasers_cli::harness::row::{Mode, RowPlan};
    use phasers_cli::harness::schedule::Schedule;

    use super::*;
    use crate::collectives_bench::results::tests::team;

    /// A plan of `samples` samples of `episodes` iterations each, for tests.
    pub fn plan(episodes: u64, samples: usize) -> RowPlan {
        let schedule = Schedule {
            episodes: Some(episodes),
            samples,
            target_sample: Duration::from_millis(1),
            row_budget: Duration::from_secs(20),
        };
        let (hang_after, pin, delay) = (Duration::from_secs(60), false, 0);
        RowPlan {
            mode: Mode::BackToBack,
            schedule,
            hang_after,
            pin,
            delay,
        }
    }

    #[test]
    fn failures_name_the_row() {
        assert_eq!(failures(&[]), Ok(()));
        let operation = Operation::Broadcast { words: 8 };
        let mut bad = team(Part::Broadcast, operation, 4, Shape::All, 1.0);
        bad.error = Some("boom".into());
        assert_eq!(
            failures(&[bad]).unwrap_err(),
            "1 row(s) failed: team all (broadcast 8 words) with N = 4: boom"
        );
    }

    #[test]
    fn memory_estimates_grow_with_the_data() {
        assert_eq!(bytes_needed(Operation::Barrier, 64), 0);
        assert_eq!(
            bytes_needed(Operation::Broadcast { words: 100 }, 2),
            5 * 100 * 8
        );
        assert_eq!(
            bytes_needed(Operation::Alltoall { block: 1024 }, 64),
            4 * 64 * 64 * 1024 * 8
        );
    }

    #[test]
    fn the_list_names_every_row() {
        let names: Vec<&str> = list().into_iter().map(|(name, _)| name).collect();
        assert_eq!(names.len(), 7);
        assert!(names.contains(&"team") && names.contains(&"memcpy"));
    }

    #[test]
    fn a_small_run_measures_every_part() {
        let options = "--threads 3 --words 5 --blocks 2 --sync-words 4 --time 0.02 --samples 2 \
                       --columns 2";
        let args = crate::collectives_bench::config::tests::parse(options).unwrap();
        let config = Config::from_args(&args);
        let mut sweep = Sweep {
            config: &config,
            available: None,
            rows: Vec::new(),
            memcpy: HashMap::new(),
        };
        for part in Part::ALL {
            let shown = sweep.part(part, 3);
            assert!(!shown.is_empty(), "{part:?}");
            for row in &shown {
                assert_eq!(row.error, None, "{row:?}");
                assert!(row.summary.is_some() || row.note.is_some(), "{row:?}");
            }
        }
        // The memcpy is measured once, and is a row of the report.
        let copies = sweep.rows.iter().filter(|row| row.kind == Kind::Memcpy);
        assert_eq!(copies.count(), 1);
        let broadcast = sweep
            .rows
            .iter()
            .find(|row| row.part == Part::Broadcast && row.team == Some(Shape::All))
            .unwrap();
        assert!(broadcast.fraction_of_memcpy.is_some_and(|f| f > 0.0));
    }
}
