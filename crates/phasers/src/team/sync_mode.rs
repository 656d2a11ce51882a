//! How much a collective synchronizes beyond moving its data: the seed's IN/OUT sync flags.

use std::fmt;

/// When other members may touch a member's buffers, and when a collective call returns.
///
/// ```
/// use phasers::{SyncMode, Team};
///
/// let team = Team::new(2)?;
/// std::thread::scope(|s| {
///     for mut m in team.participants() {
///         s.spawn(move || {
///             m.set_sync_mode(SyncMode::NoSync); // every member, for the same calls
///             let mut all = [0u32; 2];
///             m.allgather(&[m.rank() as u32 + 5], &mut all).unwrap();
///             assert_eq!(all, [5, 6]);
///         });
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
///
/// Seed 004's collectives take `IN` and `OUT` flags (`ALLSYNC`, `MYSYNC`, `NOSYNC`). Here buffers
/// belong to each member (the seed's multi-valued arguments), and their addresses travel through
/// the call's opening meeting, so no buffer is ever touched before every member has entered: the
/// entry side is always `ALLSYNC`. The modes differ in when a call returns.
///
/// | mode | a member's call returns when | others touch its buffers |
/// |---|---|---|
/// | `AllSync` | every member has finished with every buffer of the call | only during the call |
/// | `MySync` | every other member has finished with *its* buffers, and its outputs are written | only during the call |
/// | `NoSync` | its own outputs are written: its inputs were copied into the team's memory on entry | never: they read the copy |
///
/// - `AllSync` is also a barrier: when any member's call returns, every member has entered and
///   finished. It costs a second meeting at the end.
/// - `MySync` lets a member leave as soon as nobody needs it any more: a broadcast's non-root
///   leaves once it has its copy, while the root waits for every copy of its buffer.
/// - `NoSync` adds one copy of the inputs (into the member's staging area in the team), so that a
///   root never waits for its readers. A later call on the same member waits, if it must, until
///   the readers of the previous copy are done before it overwrites it.
///
/// Small reductions and broadcasts (at most 64 bytes) travel inside the meeting itself, and return
/// as soon as the meeting completes in every mode: no buffer of any member is touched after it.
/// `reduce` and `allreduce` of larger arrays write into other members' outputs under `AllSync` and
/// `MySync`, so they also return only when every member is done with them.
///
/// Every member of a team must use the same mode for the same call; checked mode verifies it.
/// Non-blocking calls ([`Pending`](super::Pending)) always copy their inputs, as `NoSync` does, so
/// that nothing another member does depends on the caller's borrowed buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SyncMode {
    /// Barrier semantics at both ends (`UPC_IN_ALLSYNC | UPC_OUT_ALLSYNC`). The default.
    #[default]
    AllSync,
    /// Each member returns once its own buffers are finished with (`UPC_OUT_MYSYNC`).
    MySync,
    /// Inputs are copied on entry; each member returns once its own outputs are written
    /// (`UPC_OUT_NOSYNC`, made safe by the copy).
    NoSync,
}

impl SyncMode {
    /// Every mode, strongest first.
    ///
    /// ```
    /// use phasers::SyncMode;
    ///
    /// assert_eq!(SyncMode::ALL.len(), 3);
    /// assert_eq!(SyncMode::ALL[0], SyncMode::default()); // AllSync, the strongest
    /// ```
    pub const ALL: [SyncMode; 3] = [SyncMode::AllSync, SyncMode::MySync, SyncMode::NoSync];

    /// The mode's name as written in code.
    ///
    /// ```
    /// use phasers::SyncMode;
    ///
    /// assert_eq!(SyncMode::MySync.name(), "MySync");
    /// assert_eq!(SyncMode::NoSync.to_string(), SyncMode::NoSync.name());
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::AllSync => "AllSync",
            SyncMode::MySync => "MySync",
            SyncMode::NoSync => "NoSync",
        }
    }
}

impl fmt::Display for SyncMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
