//! `phasers-mpi bench`: the parts in order, every rank taking part in every row; rank 0 prints
//! and writes the files.

use std::time::Duration;

use phasers_mpi::mpi::traits::{Communicator, Root};
use phasers_mpi::Mpi;

use crate::check::HOLD_BACK;
use crate::cli::{BenchArgs, Part};
use crate::error::Result;
use crate::harness::Schedule;
use crate::machine::Machine;
use crate::outputs::Outputs;
use crate::report::{Report, Settings, SCHEMA};
use crate::{combined_grid, floor, hybrid, process_rows, rounds, table};

/// How a run ended on this rank.
pub enum Outcome {
    /// Every part ran and rank 0 wrote its files.
    Done,
    /// Rank 0 could not create an output file; it has said why, nothing was measured.
    OutputRefused,
}

pub fn run(mpi: &Mpi, args: &BenchArgs) -> Result<Outcome> {
    let world = mpi.world();
    let root = mpi.rank() == 0;
    // Rank 0 opens the files; every rank learns whether that worked.
    let outputs = root.then(|| Outputs::open(args));
    let mut opened = [u8::from(outputs.as_ref().map_or(true, |o| o.is_ok()))];
    world.process_at_rank(0).broadcast_into(&mut opened[..]);
    let outputs = match outputs.transpose() {
        Err(error) => {
            eprintln!("phasers-mpi: {error}");
            return Ok(Outcome::OutputRefused);
        }
        Ok(_) if opened[0] == 0 => return Ok(Outcome::OutputRefused),
        Ok(outputs) => outputs,
    };

    let samples = args.samples as usize;
    let schedule = Schedule {
        sample: Duration::from_secs_f64(args.time / samples as f64),
        samples,
    };
    let machine = Machine::describe(mpi);
    if root {
        println!(
            "phasers-mpi bench: {} ranks on {} ({} cores available), {}; MPI thread support {}",
            machine.world_ranks,
            machine.cpu_model.as_deref().unwrap_or("an unknown CPU"),
            machine.available_cores,
            machine.mpi_library.as_deref().unwrap_or("unknown MPI"),
            machine.mpi_threading,
        );
        println!(
            "{} samples of {:?} per row; every barrier row first passes a check that holds \
             participants back {HOLD_BACK:?}",
            schedule.samples, schedule.sample
        );
    }

    let floor = if args.runs(Part::Floor) {
        let floors = floor::measure_floors(world, schedule)?;
        if root {
            table::floors(&floors);
        }
        Some(floors)
    } else {
        None
    };
    let process = if args.runs(Part::Process) {
        if root {
            table::process_header();
        }
        Some(process_rows::run(mpi, schedule, table::process_row)?)
    } else {
        None
    };
    let combined = if args.runs(Part::Combined) {
        if root {
            table::grid_header();
        }
        Some(combined_grid::run(
            mpi,
            &args.threads,
            schedule,
            table::grid_row,
        )?)
    } else {
        None
    };
    let hybrid = if args.runs(Part::Hybrid) {
        if root {
            table::hybrid_header(
                hybrid::contender_schedule(schedule),
                rounds::count(args.rounds as usize, schedule.samples),
            );
        }
        Some(hybrid::run(
            mpi,
            schedule,
            args.rounds as usize,
            &args.collectives(),
            table::hybrid_group,
        )?)
    } else {
        None
    };
    if let (Some(outputs), true) = (outputs, root) {
        let report = Report {
            schema: SCHEMA,
            command: std::env::args().collect(),
            machine,
            settings: Settings {
                time_s: args.time,
                samples,
                threads: args.threads.clone(),
                rounds: args.rounds as usize,
                check_hold_back_ms: HOLD_BACK.as_secs_f64() * 1e3,
            },
            floor,
            process_barriers: process,
            combined,
            hybrid,
        };
        outputs.write(&report)?;
    }
    Ok(Outcome::Done)
}
