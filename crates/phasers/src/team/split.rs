//! Making sub-teams: `split(color, key)` as `MPI_Comm_split`, and the seed's rows and columns.

use super::call::Call;
use super::engine::Until;
use super::kind::Kind;
use super::member::Member;
use super::shared::{SplitSeat, TeamShared};
use crate::error::{Error, Result};
use crate::primitive::Arc;

/// The color that opts a member out of a split: [`Member::split`] returns `Ok(None)` for it.
///
/// ```
/// use phasers::{team::NONE, Team};
///
/// let team = Team::new(2)?;
/// std::thread::scope(|s| {
///     for mut m in team.participants() {
///         s.spawn(move || {
///             let color = if m.rank() == 1 { NONE } else { 0 };
///             let new_team = m.split(color, 0).unwrap();
///             assert_eq!(new_team.is_some(), m.rank() == 0); // member 1 opted out
///         });
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
pub const NONE: u32 = u32::MAX;

impl Member {
    /// Splits the team: members that pass the same `color` form a new team, ranked by `key`
    /// (ties broken by their rank here). A member passing [`NONE`] joins no new team and gets
    /// `Ok(None)`.
    ///
    /// Collective and synchronizing, like `MPI_Comm_split`: every member of the team calls it,
    /// and no member uses its new team before every member has its own. The new teams are
    /// independent of this one and of each other: their collectives run at the same time, and
    /// this member stays usable. They inherit checked mode and the wait policy.
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(4)?;
    /// let halves: Vec<_> = std::thread::scope(|s| {
    ///     let handles: Vec<_> = team
    ///         .participants()
    ///         .into_iter()
    ///         .map(|mut m| s.spawn(move || {
    ///             let half = m.split((m.rank() % 2) as u32, 0).unwrap().unwrap();
    ///             (m.rank(), half.rank(), half.parties())
    ///         }))
    ///         .collect();
    ///     handles.into_iter().map(|h| h.join().unwrap()).collect()
    /// });
    /// assert_eq!(halves, vec![(0, 0, 2), (1, 0, 2), (2, 1, 2), (3, 1, 2)]);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mismatch`] when another member called a different collective (always checked
    /// for splits), [`Error::Broken`] when the team is broken.
    pub fn split(&mut self, color: u32, key: i64) -> Result<Option<Member>> {
        self.split_checked(color, key, 0, None)
    }

    /// Splits the team into rows and columns of `columns` members, as seed 004's Figure 13:
    /// member `r` is at row `r / columns` and column `r % columns`. Returns `(row team, column
    /// team)`; in its row team a member's rank is its column, in its column team its row.
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(6)?;
    /// let seats: Vec<_> = std::thread::scope(|s| {
    ///     let handles: Vec<_> = team
    ///         .participants()
    ///         .into_iter()
    ///         .map(|mut m| s.spawn(move || {
    ///             let (row, column) = m.split_grid(3).unwrap();
    ///             (row.parties(), row.rank(), column.parties(), column.rank())
    ///         }))
    ///         .collect();
    ///     handles.into_iter().map(|h| h.join().unwrap()).collect()
    /// });
    /// assert_eq!(seats[4], (3, 1, 2, 1)); // member 4: row 1, column 1
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] on every member when a member passes 0 columns;
    /// [`Error::Mismatch`] on every member when members pass different column counts.
    pub fn split_grid(&mut self, columns: usize) -> Result<(Member, Member)> {
        let invalid = (columns == 0).then(|| {
            Error::invalid(format!(
                "split_grid on member {}: 0 columns; pass at least 1 (at most the team's size, \
                 {}, for more than one row)",
                self.rank,
                self.parties()
            ))
        });
        let rank = self.rank;
        let columns_or_one = columns.max(1);
        let row = (rank / columns_or_one) as u32;
        let column = (rank % columns_or_one) as u32;
        let check = columns as u64;
        let rows = self.split_checked(row, i64::from(column), check, invalid)?;
        let cols = self.split_checked(column, i64::from(row), check, None)?;
        match (rows, cols) {
            (Some(rows), Some(cols)) => Ok((rows, cols)),
            _ => unreachable!("split_grid never passes NONE"),
        }
    }

    fn split_checked(
        &mut self,
        color: u32,
        key: i64,
        check: u64,
        invalid: Option<Error>,
    ) -> Result<Option<Member>> {
        let mut call = Call::<()>::new(Kind::Split);
        call.color = color;
        call.key = key;
        call.value = check;
        if let Some(error) = invalid {
            call.fail(error);
        }
        self.start(&call, false)?;
        self.progress(&call, Until::END)
            .expect("a blocking call runs to its end")?;
        let mut seats = self.shared.splits.lock().unwrap_or_else(|e| e.into_inner());
        let seat = seats.get_mut(self.rank).and_then(Option::take);
        Ok(seat.map(|(shared, rank)| Member::new(shared, rank)))
    }

    /// The completer's part of a split: forms the new teams and seats every member.
    pub(crate) fn assign_splits(&self, seq: u64) {
        let shared = &*self.shared;
        let mut wanted: Vec<(u32, i64, usize)> = (0..shared.size)
            .filter_map(|rank| {
                // SAFETY: the completer runs while the meeting of `seq` is full and unreleased.
                let post = unsafe { shared.slots[rank].read_post(seq) };
                (post.color != NONE).then_some((post.color, post.key, rank))
            })
            .collect();
        wanted.sort_unstable();
        let mut seats: Vec<Option<SplitSeat>> = vec![None; shared.size];
        for group in wanted.chunk_by(|a, b| a.0 == b.0) {
            // Every member of this team keeps running beside the sub-teams' members.
            let team = Arc::new(TeamShared::new(
                group.len(),
                shared.checked,
                shared.tuning.with_waiting_threads(shared.size),
                shared.reduce_algorithm,
            ));
            for (new_rank, &(_, _, old_rank)) in group.iter().enumerate() {
                team.claimed[new_rank].store(true, crate::primitive::Ordering::Relaxed);
                seats[old_rank] = Some((Arc::clone(&team), new_rank));
            }
        }
        *shared.splits.lock().unwrap_or_else(|e| e.into_inner()) = seats;
    }
}
