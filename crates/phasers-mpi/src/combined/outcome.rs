//! What a combined barrier's wait returns.

/// What a [`CombinedParticipant::wait`](crate::CombinedParticipant::wait) returns: the episode, and whether this thread led it.
///
/// ```
/// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
/// let waits = std::thread::scope(|s| {
///     let handles: Vec<_> = barrier.participants().into_iter()
///         .map(|mut p| s.spawn(move || p.wait().unwrap()))
///         .collect();
///     handles.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
/// });
/// assert!(waits.iter().all(|w| w.episode() == 0));
/// assert_eq!(waits.iter().filter(|w| w.is_leader()).count(), 1);
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CombinedWait {
    /// The episode completed across every rank, from 0.
    #[deprecated(
        since = "0.2.0",
        note = "use `episode()`: wait results are read by methods"
    )]
    pub episode: u64,
    /// Whether this thread ran the process step for its rank.
    #[deprecated(
        since = "0.2.0",
        note = "use `is_leader()`: wait results are read by methods"
    )]
    pub leader: bool,
}

// The fields stay public, deprecated, for one release; the methods are the names table's.
#[allow(deprecated)]
impl CombinedWait {
    pub(crate) fn new(episode: u64, leader: bool) -> Self {
        CombinedWait { episode, leader }
    }

    /// The episode completed across every rank, from 0.
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 1).build()?;
    /// let mut only = barrier.participants().pop().unwrap();
    /// assert_eq!(only.wait()?.episode(), 0);
    /// assert_eq!(only.wait()?.episode(), 1);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// Whether this thread ran the process step for its rank (one thread per rank leads).
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 1).build()?;
    /// let mut only = barrier.participants().pop().unwrap();
    /// // The only thread of its rank leads every episode.
    /// assert!(only.wait()?.is_leader());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn is_leader(&self) -> bool {
        self.leader
    }
}
