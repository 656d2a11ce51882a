//! The library's rows: a fresh team of N members per row, placed on the teams of the row's shape,
//! each member calling the row's collective back to back on a thread of its own.

use phasers::{SyncMode, Team};

use crate::bench::RowPlan;
use crate::results::{Row, RowKind};
use crate::wrong_result::WrongResult;

use super::grid::{self, Shape};
use super::looped;
use super::operation::Operation;
use super::part::Part;
use super::results::{CollectiveRow, Kind, TEAM_NAME};
use super::row;
use super::team_allreduce::TeamAllreduce;
use super::team_alltoall::TeamAlltoall;
use super::team_barrier::TeamBarrier;
use super::team_broadcast::TeamBroadcast;

/// The team a row runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamSetup {
    /// N, the members of the team of all.
    pub members: usize,
    /// Which teams call the collective.
    pub shape: Shape,
    /// The grid's columns, for row and column teams.
    pub columns: usize,
    /// Whether the team checks each call; `None` for the library's default (checked, unless
    /// `PHASERS_CHECKED` says otherwise).
    pub checked: Option<bool>,
    /// The sync mode of broadcasts.
    pub sync: SyncMode,
}

/// Measures `operation` on the teams `setup` describes.
pub fn measure(
    part: Part,
    operation: Operation,
    setup: &TeamSetup,
    plan: &RowPlan,
) -> CollectiveRow {
    let mut row = row::blank(part, operation, TEAM_NAME, Kind::Ours, setup.members);
    describe(&mut row, setup);
    let team = match setup.checked {
        Some(checked) => Team::builder(setup.members).checked(checked).build(),
        None => Team::new(setup.members),
    };
    let team = match team {
        Ok(team) => team,
        Err(error) => {
            row.error = Some(format!("cannot build the team: {error}"));
            return row;
        }
    };
    row.checked = Some(team.is_checked());
    let placed = match grid::place(&team, setup.shape, setup.columns) {
        Ok(placed) => placed,
        Err(error) => {
            row.error = Some(error);
            return row;
        }
    };
    let wrong = WrongResult::default();
    let mut measured = run(operation, placed, setup.sync, &wrong, plan);
    if let Some(message) = wrong.into_message() {
        // The wrong result is the root cause of anything that followed.
        measured.error = Some(message);
    }
    let mut measured_row = row::from_measured(
        part,
        operation,
        TEAM_NAME,
        Kind::Ours,
        setup.members,
        measured,
    );
    describe(&mut measured_row, setup);
    measured_row.checked = row.checked;
    // Every member of a team but its root receives each broadcast.
    let receivers = setup.members - measured_row.team_sizes.len();
    row::set_receivers(&mut measured_row, receivers);
    measured_row
}

/// Fills in which teams a row ran on.
fn describe(row: &mut CollectiveRow, setup: &TeamSetup) {
    row.team = Some(setup.shape);
    row.columns = (setup.shape != Shape::All).then_some(setup.columns);
    row.team_sizes = grid::team_sizes(setup.shape, setup.members, setup.columns);
    row.sync_mode = Some(setup.sync.name().to_owned());
}

/// Times `operation` on the members in `placed`.
fn run(
    operation: Operation,
    placed: Vec<grid::Placed>,
    sync: SyncMode,
    wrong: &WrongResult,
    plan: &RowPlan,
) -> Row {
    let kind = RowKind::Ours;
    match operation {
        Operation::Barrier => {
            let ops = placed.into_iter().map(TeamBarrier).collect();
            looped::measure(TEAM_NAME, kind, ops, plan)
        }
        Operation::Allreduce => {
            let ops = placed
                .into_iter()
                .map(|placed| TeamAllreduce::new(placed, wrong))
                .collect();
            looped::measure(TEAM_NAME, kind, ops, plan)
        }
        Operation::Broadcast { words } => {
            let ops = placed
                .into_iter()
                .map(|placed| TeamBroadcast::new(placed, words, sync, wrong))
                .collect();
            looped::measure(TEAM_NAME, kind, ops, plan)
        }
        Operation::Alltoall { block } => {
            let ops = placed
                .into_iter()
                .map(|placed| TeamAlltoall::new(placed, block, wrong))
                .collect();
            looped::measure(TEAM_NAME, kind, ops, plan)
        }
        Operation::Memcpy { .. } => Row::failed(
            TEAM_NAME,
            kind,
            plan.schedule.samples,
            "a memcpy is not a team collective".to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::results::Mode;
    use crate::schedule::Schedule;

    fn plan() -> RowPlan {
        RowPlan {
            mode: Mode::BackToBack,
            schedule: Schedule {
                episodes: Some(100),
                samples: 2,
                target_sample: Duration::from_millis(1),
                row_budget: Duration::from_secs(20),
            },
            hang_after: Duration::from_secs(60),
            pin: false,
            delay: 0,
        }
    }

    #[test]
    fn every_collective_runs_and_checks_on_every_shape() {
        let operations = [
            (Part::Barrier, Operation::Barrier),
            (Part::Allreduce, Operation::Allreduce),
            (Part::Broadcast, Operation::Broadcast { words: 300 }),
            (Part::Alltoall, Operation::Alltoall { block: 3 }),
        ];
        for shape in Shape::ALL {
            for (part, operation) in operations {
                let setup = TeamSetup {
                    members: 4,
                    shape,
                    columns: 2,
                    checked: None,
                    sync: SyncMode::AllSync,
                };
                let row = measure(part, operation, &setup, &plan());
                assert_eq!(row.error, None, "{shape:?} {operation:?}: {row:?}");
                assert_eq!(row.samples_ns.len(), 2, "{shape:?} {operation:?}");
                assert_eq!(row.team, Some(shape));
                assert_eq!(row.team_sizes.iter().sum::<usize>(), 4);
            }
        }
    }

    #[test]
    fn checking_and_sync_modes_are_what_was_asked() {
        for checked in [true, false] {
            let setup = TeamSetup {
                members: 3,
                shape: Shape::All,
                columns: 2,
                checked: Some(checked),
                sync: SyncMode::AllSync,
            };
            let row = measure(Part::Checked, Operation::Allreduce, &setup, &plan());
            assert_eq!(row.error, None, "{row:?}");
            assert_eq!(row.checked, Some(checked));
        }
        for sync in [SyncMode::AllSync, SyncMode::MySync, SyncMode::NoSync] {
            let setup = TeamSetup {
                members: 3,
                shape: Shape::All,
                columns: 2,
                checked: None,
                sync,
            };
            let operation = Operation::Broadcast { words: 64 };
            let row = measure(Part::SyncModes, operation, &setup, &plan());
            assert_eq!(row.error, None, "{sync:?}: {row:?}");
            assert_eq!(row.sync_mode.as_deref(), Some(sync.name()));
        }
    }
}
