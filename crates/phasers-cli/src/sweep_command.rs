//! What every sweep command does around [`sweep::run`]: open the output files first, print the
//! ratio lines after the tables, write the files, and name every row that failed.

use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::verbosity;

use crate::csv_out;
use crate::ratios::Ratios;
use crate::report;
use crate::results::{Group, Report};
use crate::sweep::{self, Plan};

/// Runs `plan`, prints its ratio lines and what `summary` makes of the report after the tables,
/// and writes the output files (created before the run, so a bad path fails first). `Err` only
/// when a file cannot be written: the caller reports failed rows with [`failures`] once it has
/// used the report.
pub fn run(
    plan: &Plan,
    output: &OutputArgs,
    summary: impl Fn(&Report) -> Vec<String>,
) -> Result<Report, String> {
    let outputs = output.open()?;
    let report = sweep::run(plan);
    // By default a barrier sweep ends with the verdict instead (see `barrier_bench`), which says
    // the same for every thread count in one table.
    let verdict_instead = plan.ratios == Ratios::Barrier && !verbosity::verbose();
    let ratios = (report.groups.iter())
        .filter(|_| !verdict_instead)
        .filter_map(|group| plan.ratios.lines(group, report.regime_floor(group.threads)));
    for text in ratios.chain(summary(&report)) {
        println!("{text}");
    }
    outputs.write(
        &report,
        |out| csv_out::write(out, &report),
        |_, path| report::write_plot(path, &report),
    )?;
    Ok(report)
}

/// An error naming every row that failed, if any did.
pub fn failures<'a>(groups: impl IntoIterator<Item = &'a Group>) -> Result<(), String> {
    phasers_cli::harness::failures::failures(groups.into_iter().flat_map(|group| {
        group
            .rows
            .iter()
            .chain(&group.reference_loop)
            .chain(&group.openmp_reference_loop)
            .filter(|row| row.error.is_some())
            .map(move |row| format!("{} with {} threads", row.barrier, group.threads))
    }))
}
