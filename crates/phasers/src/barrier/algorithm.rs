//! The trait every barrier algorithm implements, and the parameters they are built with.
//!
//! The [`Algorithm`] enum that names them lives in `src/algorithm.rs`, below the tuning profile;
//! what `Auto` stands for is in `auto.rs`.

use crate::algorithm::Algorithm;

/// A barrier algorithm usable with static dispatch, as in `Barrier<McsTree>`.
///
/// The trait is sealed: the algorithms are this crate's product, and their internals (how a
/// participant arrives, waits and resumes after a timeout) are not a stable interface.
///
/// ```
/// use phasers::barrier::Dissemination;
/// use phasers::Barrier;
///
/// let barrier: Barrier<Dissemination> = Barrier::builder(3).build_static()?;
/// assert_eq!(barrier.algorithm(), phasers::Algorithm::Dissemination);
/// # Ok::<(), phasers::Error>(())
/// ```
pub trait BarrierAlgorithm: sealed::AlgorithmImpl {}

impl<T: sealed::AlgorithmImpl> BarrierAlgorithm for T {}

/// Construction parameters shared by all algorithms; each reads what concerns it.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub(crate) fan_in: usize,
    pub(crate) has_completion: bool,
}

pub(crate) mod sealed {
    use super::{Algorithm, Params};
    use crate::barrier::episode::Episode;
    use crate::error::Error;
    use crate::wait::Stop;

    /// What an algorithm provides. `wait` must be resumable: when it returns
    /// `Err(Stop::TimedOut)`, `local` records where the participant stopped, and the next call
    /// continues from there in the same episode. Timeouts rely on it, and so do async tasks,
    /// whose every poll is a call that stops this way where it would wait (see `episode.rs`);
    /// `wait` must therefore wait only through [`Episode::wait_until`].
    pub trait AlgorithmImpl: Send + Sync + Sized + 'static {
        /// A participant's private state: its position in the structure, and where to resume.
        type Local: Send + 'static;

        /// Builds the shared state for `parties` (at least 1, at most `MAX_PARTIES`).
        fn build(parties: usize, params: &Params) -> Self;

        /// Checks what `build` depends on beyond its arguments, so that the builder can return
        /// an error where `build` itself cannot (for `AnyAlgorithm`: the tuning profile).
        fn prerequisites() -> Result<(), Error> {
            Ok(())
        }

        /// Which algorithm this is.
        fn kind(&self) -> Algorithm;

        /// The private state of the participant with `rank`.
        fn local(&self, rank: usize) -> Self::Local;

        /// Arrives (unless already arrived) and waits for the release of `episode.number()`.
        /// Returns whether this participant is the episode's leader, who ran the completion action.
        fn wait(&self, local: &mut Self::Local, episode: &Episode<'_>) -> Result<bool, Stop>;

        /// Arrives at `episode.number()` without waiting, and takes this participant out of every
        /// later episode. Only called when `kind().supports_leave()`.
        fn leave(&self, local: &mut Self::Local, episode: &Episode<'_>) -> Result<(), Error>;

        /// Wakes every parked waiter, so each re-checks the broken state.
        fn wake_all(&self);
    }
}
