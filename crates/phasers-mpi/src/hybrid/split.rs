//! `split(color, key)`: a member's part of splitting its team into new hybrid teams, one per
//! color, with their own communicators (how the teams are made: `split_teams.rs`).

use std::sync::Arc;

use super::bytes::Source;
use super::direct_state::DirectMember;
use super::engine;
use super::member::HybridMember;
use super::reducer::Reducers;
use super::signature::{Kind, Post, Signature};
use super::split_teams::{decode, encode, Entry, SplitEntry, ENTRY_BYTES, NONE};
use crate::error::{Error, Result};

impl HybridMember {
    /// Splits the team: members that pass the same `color` form a new team, ranked by `key`
    /// (ties broken by their rank here), as far as the process-major rank order allows (see
    /// below). A member passing [`phasers::team::NONE`] joins no new team and gets `Ok(None)`.
    ///
    /// Collective over the whole team, in every process, and synchronizing, like
    /// `MPI_Comm_split` (which it calls): every member calls it. The new teams have their own
    /// communicators and are independent of this one and of each other; they inherit checked
    /// mode, node awareness and the timeout. In a checked team (the default), members of any
    /// process that call a different collective get [`Error::Mismatch`]; in an unchecked team,
    /// only the members of one process are compared (see
    /// [`HybridTeamBuilder::unchecked`](super::HybridTeamBuilder::unchecked)).
    ///
    /// A hybrid team's ranks are process-major. So the new team's processes come in the order
    /// of their first member by `(key, old rank)`, and each process's members by `(key, old
    /// rank)`; where keys follow the process order (equal keys, say), that is exactly
    /// `(key, old rank)`.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             // One team of the local rank 0 members, one of the local rank 1 members.
    ///             let color = member.local_rank() as u32;
    ///             let mut column = member.split(color, 0).unwrap().unwrap();
    ///             assert_eq!(column.rank(), member.process_rank());
    ///             column.barrier().unwrap();
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mismatch`] when another member called a different collective,
    /// [`Error::Broken`] when the team is broken, [`Error::Timeout`] after the team's timeout.
    pub fn split(&mut self, color: u32, key: i64) -> Result<Option<HybridMember>> {
        let shared = Arc::clone(&self.shared);
        if shared.is_broken() {
            return Err(shared.broken_error());
        }
        let post = Post {
            sig: Signature::new::<SplitEntry>(Kind::Split, 1, 0),
            invalid: None,
            input: encode((color, key, self.rank)),
            reducer: None,
        };
        // `SplitEntry` has no size; the entries travel as 24 bytes each.
        let mut post = post;
        post.sig.elem_size = ENTRY_BYTES;
        let call = self.next_call;
        let deadline = shared
            .options
            .timeout
            .and_then(|t| std::time::Instant::now().checked_add(t));
        engine::arrive(
            &shared,
            self.local_rank,
            call,
            post,
            Source::none(),
            deadline,
            false,
        )?;
        self.next_call += 1;
        let outcome = engine::wait(&shared, Kind::Split, call, deadline)?;
        if color == NONE {
            return Ok(None);
        }
        let entries = decode(&outcome.data);
        let Some((_, child)) = outcome.split.iter().find(|(c, _)| *c == color) else {
            return Err(Error::Broken {
                what: "hybrid team",
                reason: format!("split color {color}: no new team was made for it"),
            });
        };
        let first = shared.first_rank();
        let mut mine: Vec<Entry> = entries
            .into_iter()
            .filter(|e| e.0 == color && (first..first + shared.local).contains(&e.2))
            .collect();
        mine.sort_by_key(|&(_, key, rank)| (key, rank));
        let local_rank = mine.iter().position(|e| e.2 == self.rank).unwrap_or(0);
        Ok(Some(HybridMember {
            rank: child.first_rank() + local_rank,
            shared: Arc::clone(child),
            local_rank,
            next_call: 0,
            direct: DirectMember::default(),
            reducers: Reducers::default(),
        }))
    }
}
