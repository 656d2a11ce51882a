//! A member's handle: who it is in its team, and what dropping it does. Its collectives are in
//! `collectives.rs`, `composed.rs` and `split.rs`.

use std::sync::Arc;

use super::direct_state::DirectMember;
use super::reducer::Reducers;
use super::shared::ProcessShared;

/// One member of a [`HybridTeam`](super::HybridTeam): a thread's handle, `Send`, used through
/// `&mut self`.
///
/// Ranks are global: the members of process 0 of the team's communicator come first, then
/// those of process 1, and so on; within a process, by local rank. Every collective has the
/// semantics of [`phasers::Member`]'s, across all members of all processes: every member calls
/// it, with arguments that agree (the same collective, element type, length, root and op).
///
/// Dropping a member between calls breaks the team in its process: the other local members'
/// calls return [`Error::Broken`](crate::Error::Broken) instead of waiting for it.
///
/// Element types travel between processes as bytes, so `T` must be plain data: numbers, arrays
/// and structs of them, never references, pointers or types that own memory.
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
///             // Ranks are process-major: every process brings 2 members here.
///             assert_eq!(member.rank(), 2 * member.process_rank() + member.local_rank());
///             member.barrier().unwrap();
///         });
///     }
/// });
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub struct HybridMember {
    pub(crate) shared: Arc<ProcessShared>,
    pub(crate) local_rank: usize,
    pub(crate) rank: usize,
    /// The number of this member's next call.
    pub(crate) next_call: u64,
    /// This member's reduction handles and exchange buffer for direct allreduces.
    pub(crate) direct: DirectMember,
    /// The reducers of the built-in ops of this member's engine calls.
    pub(crate) reducers: Reducers,
}

impl HybridMember {
    /// This member's rank among all members of all processes.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let members = team.participants();
    /// let ranks: Vec<usize> = members.iter().map(|m| m.rank()).collect();
    /// // This process's members, consecutive from its first global rank.
    /// let first = 2 * team.process_rank();
    /// assert_eq!(ranks, [first, first + 1]);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Members over all processes.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let members = team.participants();
    /// assert_eq!(members[0].parties(), team.parties());
    /// assert_eq!(members[0].parties(), 2 * mpi.size());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.shared.layout.size
    }

    /// Members over all processes.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let members = team.participants();
    /// assert_eq!(members[0].size(), members[0].parties());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    #[deprecated(
        since = "0.2.0",
        note = "use `parties()`: one name for the count on every type"
    )]
    pub fn size(&self) -> usize {
        self.parties()
    }

    /// This member's rank among its process's members.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let members = team.participants();
    /// assert_eq!(members[1].local_rank(), 1);
    /// assert_eq!(members[1].rank() - members[0].rank(), 1);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    /// The number of members in this process.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// let members = team.participants();
    /// assert_eq!(members[0].local_size(), 3);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn local_size(&self) -> usize {
        self.shared.local
    }

    /// This process's rank in the team's communicator.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let members = team.participants();
    /// // Built on the world, the team ranks processes as the world does.
    /// assert_eq!(members[0].process_rank(), mpi.rank());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn process_rank(&self) -> usize {
        self.shared.process()
    }

    /// The number of processes in the team.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let members = team.participants();
    /// assert_eq!(members[0].processes(), mpi.size());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn processes(&self) -> usize {
        self.shared.layout.counts.len()
    }

    /// Whether calls are checked (see [`HybridTeamBuilder::checked`](super::HybridTeamBuilder::checked)).
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let members = team.participants();
    /// // Checked is the default.
    /// assert!(members[0].is_checked());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn is_checked(&self) -> bool {
        self.shared.options.checked
    }
}

impl Drop for HybridMember {
    fn drop(&mut self) {
        let rank = self.rank;
        if std::thread::panicking() {
            self.shared
                .mark_broken(|| format!("member {rank} panicked"));
        } else {
            self.shared.mark_broken(|| {
                format!("member {rank} was dropped; every member must take part in every call")
            });
        }
    }
}
