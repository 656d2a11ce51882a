//! The library's rows: a fresh team of N members per row, placed on the teams of the row's shape,
//! each member calling the row's collective back to back on a thread of its own and checking
//! what it received.
//!
//! Every collective is a [`Collective`]: a member's buffers, its call in one iteration, and the
//! check of that iteration's result. The check costs a compare or two per call (one word per
//! block), so a stale or misplaced result is caught without timing a full comparison; the first
//! iteration (the harness's warm-up) checks every word.

use phasers::{Member, Op, SyncMode, Team};
use phasers_cli::harness::row::{Row, RowKind, RowPlan};
use phasers_cli::harness::work::{Failure, Work, WrongResult};

use super::baselines::looped;
use super::grid::{self, Placed, Shape};
use super::operation::{Operation, Part};
use super::results::{CollectiveRow, Kind, TEAM_NAME};

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
    /// The sync mode of the members (only broadcasts differ between modes).
    pub sync: SyncMode,
}

impl TeamSetup {
    /// The row of `operation` on these teams, nothing measured yet.
    pub fn row(&self, part: Part, operation: Operation) -> CollectiveRow {
        let mut row = CollectiveRow::blank(part, operation, TEAM_NAME, Kind::Ours, self.members);
        row.team = Some(self.shape);
        row.columns = (self.shape != Shape::All).then_some(self.columns);
        row.team_sizes = grid::team_sizes(self.shape, self.members, self.columns);
        row.sync_mode = Some(self.sync.name().to_owned());
        row
    }
}

/// Measures `operation` on the teams `setup` describes.
pub fn measure(
    part: Part,
    operation: Operation,
    setup: &TeamSetup,
    plan: &RowPlan,
) -> CollectiveRow {
    let mut row = setup.row(part, operation);
    let team = match setup.checked {
        Some(checked) => Team::builder(setup.members).checked(checked).build(),
        None => Team::new(setup.members),
    };
    let placed = team
        .map_err(|error| format!("cannot build the team: {error}"))
        .and_then(|team| {
            row.checked = Some(team.is_checked());
            grid::place(&team, setup.shape, setup.columns)
        });
    let mut placed = match placed {
        Ok(placed) => placed,
        Err(error) => {
            row.error = Some(error);
            return row;
        }
    };
    for member in &mut placed {
        member.member.set_sync_mode(setup.sync);
    }
    let wrong = WrongResult::default();
    let measured = match operation {
        Operation::Barrier => drive(placed, &wrong, plan, |_| BarrierCall),
        Operation::Allreduce => drive(placed, &wrong, plan, |_| Allreduce([0])),
        Operation::Broadcast { words } => drive(placed, &wrong, plan, |member| {
            Broadcast::new(member.rank(), words)
        }),
        Operation::Alltoall { block } => drive(placed, &wrong, plan, |member| {
            Alltoall::new(member.rank(), member.parties(), block)
        }),
        Operation::Memcpy { .. } => {
            row.error = Some("a memcpy is not a team collective".to_owned());
            return row;
        }
    };
    row.record(measured);
    // The wrong result is the root cause of anything that followed.
    if let Some(message) = wrong.into_message() {
        row.error = Some(message);
    }
    // Every member of a team but its root receives each broadcast.
    row.set_receivers(setup.members - row.team_sizes.len());
    row
}

/// Times one collective per placed member, each made by `make` from its member.
fn drive<C: Collective>(
    placed: Vec<Placed>,
    wrong: &WrongResult,
    plan: &RowPlan,
    make: impl Fn(&Member) -> C,
) -> Row {
    let timed = placed
        .into_iter()
        .map(|placed| Timed {
            work: make(&placed.member),
            placed,
            wrong,
        })
        .collect();
    looped(TEAM_NAME, RowKind::Ours, timed, plan)
}

/// One member's side of a collective under test.
trait Collective: Send {
    /// The call of iteration `iteration`.
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error>;

    /// What is wrong with what member `rank` of a team of `size` received in `iteration`.
    fn check(&self, rank: usize, size: usize, iteration: u64) -> Option<String>;
}

/// A member's collective, timed: the call, then the check, once per iteration.
struct Timed<'a, C> {
    placed: Placed,
    work: C,
    wrong: &'a WrongResult,
}

impl<C: Collective> Work for Timed<'_, C> {
    const SYNCHRONIZED: bool = false;

    #[inline]
    fn iteration(&mut self, index: u64) -> Result<Option<&'static str>, Failure> {
        let member = &mut self.placed.member;
        self.work.call(member, index)?;
        let (rank, size) = (member.rank(), member.parties());
        if let Some(message) = self.work.check(rank, size, index) {
            self.wrong.record(|| message);
        }
        Ok(None)
    }
}

/// `member.barrier()`: nothing to check.
struct BarrierCall;

impl Collective for BarrierCall {
    #[inline]
    fn call(&mut self, member: &mut Member, _: u64) -> Result<(), phasers::Error> {
        member.barrier()
    }

    fn check(&self, _: usize, _: usize, _: u64) -> Option<String> {
        None
    }
}

/// The MPP suite's `mpp_accum_long` (seed 004's figure 1): a sum of one u64 per member, returned
/// to all. Each member contributes `rank + 1 + iteration`, so every iteration has a different sum
/// and a stale one is caught.
struct Allreduce([u64; 1]);

/// What the member of rank `rank` contributes to the allreduce of `iteration`.
fn contribution(rank: usize, iteration: u64) -> u64 {
    rank as u64 + 1 + iteration
}

/// The sum of every contribution of a team of `size` in `iteration`.
fn expected_sum(size: usize, iteration: u64) -> u64 {
    let size = size as u64;
    size * (size + 1) / 2 + size * iteration
}

impl Collective for Allreduce {
    #[inline]
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error> {
        let mine = [contribution(member.rank(), iteration)];
        member.allreduce(&mine, &mut self.0, Op::Sum)
    }

    fn check(&self, rank: usize, size: usize, iteration: u64) -> Option<String> {
        let (got, expected) = (self.0[0], expected_sum(size, iteration));
        (got != expected).then(|| {
            format!(
                "wrong result: rank {rank}'s allreduce of iteration {iteration} was {got}, not \
                 {expected}"
            )
        })
    }
}

/// The MPP suite's broadcast (seed 004's figure 2) from root `iteration % size`. Every member
/// starts with a buffer of its own; the root stamps word 0 with the iteration before each call,
/// as a program's root would have produced new data.
struct Broadcast(Vec<u64>);

impl Broadcast {
    fn new(rank: usize, words: usize) -> Self {
        Broadcast((0..words.max(1)).map(|i| broadcast_word(rank, i)).collect())
    }
}

/// Word `index` of rank `rank`'s buffer before the first broadcast: different for every rank, so
/// data from the wrong root shows.
fn broadcast_word(rank: usize, index: usize) -> u64 {
    ((rank as u64) << 40) ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// What the root of `iteration` writes into word 0: far from every initial word 0 of a plausible
/// rank.
fn broadcast_stamp(iteration: u64) -> u64 {
    u64::MAX - iteration
}

impl Collective for Broadcast {
    #[inline]
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error> {
        let root = (iteration % member.parties() as u64) as usize;
        if member.rank() == root {
            self.0[0] = broadcast_stamp(iteration);
        }
        member.broadcast(root, &mut self.0)
    }

    fn check(&self, rank: usize, size: usize, iteration: u64) -> Option<String> {
        let index = if self.0[0] != broadcast_stamp(iteration) {
            Some(0)
        } else if iteration == 0 {
            (1..self.0.len()).find(|&i| self.0[i] != broadcast_word(0, i))
        } else {
            None
        }?;
        let root = iteration % size as u64;
        Some(format!(
            "wrong result: rank {rank} received a wrong word {index} from root {root} in \
             iteration {iteration}"
        ))
    }
}

/// The MPP suite's global transpose: input block `j` of rank `r` goes to rank `j`, where it
/// becomes output block `r`. Before each call every member stamps word 0 of each input block with
/// the iteration, sender and receiver.
struct Alltoall {
    block: usize,
    input: Vec<u64>,
    output: Vec<u64>,
}

impl Alltoall {
    fn new(rank: usize, size: usize, block: usize) -> Self {
        let block = block.max(1);
        Alltoall {
            block,
            input: (0..size * block)
                .map(|i| alltoall_word(rank, i / block, i % block))
                .collect(),
            output: vec![0; size * block],
        }
    }
}

/// Word `index` of the block that rank `from` sends to rank `to`, before any stamp.
fn alltoall_word(from: usize, to: usize, index: usize) -> u64 {
    ((from as u64) << 48) ^ ((to as u64) << 32) ^ index as u64
}

/// Word 0 of the block `from` sends to `to` in `iteration`: different for every iteration (below
/// 2^32), sender and receiver (below 2^16, a team's limit).
fn alltoall_stamp(iteration: u64, from: usize, to: usize) -> u64 {
    (iteration << 32) ^ ((from as u64) << 16) ^ to as u64
}

impl Collective for Alltoall {
    #[inline]
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error> {
        let rank = member.rank();
        for (to, block) in self.input.chunks_exact_mut(self.block).enumerate() {
            block[0] = alltoall_stamp(iteration, rank, to);
        }
        member.alltoall(&self.input, &mut self.output)
    }

    fn check(&self, rank: usize, _: usize, iteration: u64) -> Option<String> {
        let (from, index) =
            self.output
                .chunks_exact(self.block)
                .enumerate()
                .find_map(|(from, block)| {
                    if block[0] != alltoall_stamp(iteration, from, rank) {
                        return Some((from, 0));
                    }
                    if iteration != 0 {
                        return None;
                    }
                    (1..block.len())
                        .find(|&i| block[i] != alltoall_word(from, rank, i))
                        .map(|index| (from, index))
                })?;
        Some(format!(
            "wrong result: rank {rank}'s word {index} from rank {from} was wrong in iteration \
             {iteration}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::collectives_bench::tests::plan;

    fn setup(shape: Shape, checked: Option<bool>, sync: SyncMode) -> TeamSetup {
        TeamSetup {
            members: 4,
            shape,
            columns: 2,
            checked,
            sync,
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
                let setup = setup(shape, None, SyncMode::AllSync);
                let row = measure(part, operation, &setup, &plan(100, 2));
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
            let setup = setup(Shape::All, Some(checked), SyncMode::AllSync);
            let row = measure(Part::Checked, Operation::Allreduce, &setup, &plan(100, 2));
            assert_eq!(row.error, None, "{row:?}");
            assert_eq!(row.checked, Some(checked));
        }
        for sync in [SyncMode::AllSync, SyncMode::MySync, SyncMode::NoSync] {
            let operation = Operation::Broadcast { words: 64 };
            let row = measure(
                Part::SyncModes,
                operation,
                &setup(Shape::All, None, sync),
                &plan(100, 2),
            );
            assert_eq!(row.error, None, "{sync:?}: {row:?}");
            assert_eq!(row.sync_mode.as_deref(), Some(sync.name()));
        }
    }

    #[test]
    fn checks_catch_stale_and_misplaced_results() {
        for size in 1..6 {
            for iteration in [0, 1, 17] {
                let sum: u64 = (0..size).map(|rank| contribution(rank, iteration)).sum();
                assert_eq!(sum, expected_sum(size, iteration));
            }
        }
        let stale = Allreduce([expected_sum(3, 4)]);
        assert!(stale
            .check(0, 3, 5)
            .is_some_and(|m| m.starts_with("wrong result:")));
        assert_eq!(stale.check(0, 3, 4), None);

        for index in 0..100 {
            assert_ne!(broadcast_word(0, index), broadcast_word(1, index));
        }
        // A receiver that kept its own buffer, and one that got the wrong root's first call.
        assert!(Broadcast::new(1, 8).check(1, 2, 0).is_some());
        let mut from_wrong_root = Broadcast::new(1, 8);
        from_wrong_root.0[0] = broadcast_stamp(0);
        assert!(from_wrong_root.check(1, 2, 0).unwrap().contains("word 1"));
        from_wrong_root.0 = Broadcast::new(0, 8).0;
        from_wrong_root.0[0] = broadcast_stamp(0);
        assert_eq!(from_wrong_root.check(1, 2, 0), None);

        let mut seen = HashSet::new();
        for iteration in 0..4 {
            for from in 0..5 {
                for to in 0..5 {
                    assert!(seen.insert(alltoall_stamp(iteration, from, to)));
                }
            }
        }
        // Rank 1 of 2 receiving rank 0's block with the sender's initial words in place.
        let mut received = Alltoall::new(1, 2, 3);
        for from in 0..2 {
            let block = &mut received.output[from * 3..(from + 1) * 3];
            block[0] = alltoall_stamp(0, from, 1);
            block[1] = alltoall_word(from, 1, 1);
            block[2] = alltoall_word(from, 1, 2);
        }
        assert_eq!(received.check(1, 2, 0), None);
        assert!(received
            .check(1, 2, 1)
            .unwrap()
            .contains("word 0 from rank 0"));
        received.output[5] = 0;
        assert!(received
            .check(1, 2, 0)
            .unwrap()
            .contains("word 2 from rank 1"));
    }
}
