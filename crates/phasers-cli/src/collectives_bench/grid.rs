//! The teams a row runs on: the team of all members, or the row or column sub-teams that
//! `split_grid` makes (seed 004's figure 13), all of whose teams run the collective at once.
//!
//! The grid is near square by default, so rows and columns have about √N members each, as in the
//! seed's figure 12 (64 x 64 for 4,096 threads); `--columns` sets it.

use clap::ValueEnum;
use phasers::{Member, Team};
use phasers_cli::harness::watchdog::panic_message;
use serde::{Deserialize, Serialize};

/// Which teams a row's members call the collective on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// One team of every member.
    All,
    /// `split_grid`'s row teams: the members with the same `rank / columns`.
    Row,
    /// `split_grid`'s column teams: the members with the same `rank % columns`.
    Column,
}

impl Shape {
    /// Every shape, in table order.
    pub const ALL: [Shape; 3] = [Shape::All, Shape::Row, Shape::Column];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Shape::All => "all",
            Shape::Row => "row",
            Shape::Column => "column",
        }
    }
}

/// The default number of columns for `members` members: the smallest power of two whose square
/// holds them, so rows have that many members and columns as many or fewer (8 x 8 for 64, rows of
/// 8 and columns of 4 for 32).
pub fn default_columns(members: usize) -> usize {
    let mut columns = 1;
    while columns * columns < members {
        columns *= 2;
    }
    columns
}

/// The size of each team of `shape` when `members` members are laid out in rows of `columns`
/// (the last row may be short).
pub fn team_sizes(shape: Shape, members: usize, columns: usize) -> Vec<usize> {
    let columns = columns.max(1);
    match shape {
        Shape::All => vec![members],
        Shape::Row => (0..members.div_ceil(columns))
            .map(|row| columns.min(members - row * columns))
            .collect(),
        Shape::Column => (0..columns.min(members))
            .map(|column| (members - column).div_ceil(columns))
            .collect(),
    }
}

/// A member of the team a row runs on. A sub-team's member keeps the member of the team of all
/// that it was split from, so the parent team outlives the row whatever the library does with it.
pub struct Placed {
    /// The member whose collectives are timed.
    pub member: Member,
    _parent: Option<Member>,
}

/// One member per rank of `team` (the team of all), on the teams of `shape`, in the order of the
/// ranks in `team`. `split_grid` is collective, so each member splits on a thread of its own.
pub fn place(team: &Team, shape: Shape, columns: usize) -> Result<Vec<Placed>, String> {
    let members = team.participants();
    if members.len() != team.parties() {
        return Err(format!(
            "the team of {} handed out {} members",
            team.parties(),
            members.len()
        ));
    }
    if shape == Shape::All {
        return Ok(members
            .into_iter()
            .map(|member| Placed {
                member,
                _parent: None,
            })
            .collect());
    }
    let outcomes: Vec<Result<Placed, String>> = std::thread::scope(|scope| {
        let threads: Vec<_> = members
            .into_iter()
            .map(|mut member| {
                scope.spawn(move || {
                    let (row, column) = member
                        .split_grid(columns)
                        .map_err(|error| format!("split_grid({columns}) failed: {error}"))?;
                    Ok(Placed {
                        member: if shape == Shape::Row { row } else { column },
                        _parent: Some(member),
                    })
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|thread| {
                thread.join().unwrap_or_else(|panic| {
                    Err(format!("split_grid panicked: {}", panic_message(&*panic)))
                })
            })
            .collect()
    });
    outcomes.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_grid_is_near_square() {
        let shape = |members| {
            let columns = default_columns(members);
            (columns, members.div_ceil(columns))
        };
        assert_eq!(shape(2), (2, 1));
        assert_eq!(shape(4), (2, 2));
        assert_eq!(shape(8), (4, 2));
        assert_eq!(shape(16), (4, 4));
        assert_eq!(shape(32), (8, 4));
        assert_eq!(shape(64), (8, 8));
        assert_eq!(shape(4096), (64, 64));
    }

    #[test]
    fn team_sizes_follow_split_grid() {
        assert_eq!(team_sizes(Shape::All, 6, 4), vec![6]);
        // Ranks 0-3 and 4-5.
        assert_eq!(team_sizes(Shape::Row, 6, 4), vec![4, 2]);
        // Ranks {0, 4}, {1, 5}, {2}, {3}.
        assert_eq!(team_sizes(Shape::Column, 6, 4), vec![2, 2, 1, 1]);
        assert_eq!(team_sizes(Shape::Column, 2, 8), vec![1, 1]);
        assert_eq!(team_sizes(Shape::Row, 64, 8), vec![8; 8]);
    }

    #[test]
    fn every_rank_gets_a_member_of_the_right_team() {
        for shape in Shape::ALL {
            let team = Team::new(6).unwrap();
            let placed = place(&team, shape, 4).unwrap();
            let sizes: Vec<usize> = placed.iter().map(|p| p.member.parties()).collect();
            let expected: Vec<usize> = (0..6)
                .map(|rank| match shape {
                    Shape::All => 6,
                    Shape::Row => team_sizes(shape, 6, 4)[rank / 4],
                    Shape::Column => team_sizes(shape, 6, 4)[rank % 4],
                })
                .collect();
            assert_eq!(sizes, expected, "{shape:?}");
            let ranks: Vec<usize> = placed.iter().map(|p| p.member.rank()).collect();
            let expected: Vec<usize> = (0..6)
                .map(|rank| match shape {
                    Shape::All => rank,
                    Shape::Row => rank % 4,
                    Shape::Column => rank / 4,
                })
                .collect();
            assert_eq!(ranks, expected, "{shape:?}");
        }
    }
}
