//! `AnyAlgorithm`: run-time choice between the algorithms, for `Barrier` without a type parameter.

use super::algorithm::{sealed::AlgorithmImpl, Params};
use super::auto::check_auto_prerequisites;
use super::episode::Episode;
use super::{CombiningTree, Counting, Dissemination, McsTree, SenseReversing, Ticket, Tournament};
use crate::error::Error;
use crate::wait::Stop;
use crate::Algorithm;

/// Any of the algorithms, chosen when the barrier is built; the default of [`Barrier`](super::Barrier).
///
/// Each call dispatches with one `match`, which the branch predictor learns at once; name a
/// concrete algorithm type (`Barrier<McsTree>`) to avoid even that.
///
/// ```
/// use phasers::barrier::AnyAlgorithm;
/// use phasers::{Algorithm, Barrier};
///
/// // `Barrier` is `Barrier<AnyAlgorithm>`: the algorithm is a value, chosen at run time.
/// let name = std::env::var("MY_APP_BARRIER").unwrap_or_else(|_| "dissemination".into());
/// let barrier: Barrier<AnyAlgorithm> = Barrier::with_algorithm(8, name.parse::<Algorithm>()?)?;
/// assert_eq!(barrier.algorithm(), Algorithm::Dissemination);
/// # Ok::<(), phasers::Error>(())
/// ```
pub enum AnyAlgorithm {
    /// See [`Algorithm::SenseReversing`].
    SenseReversing(SenseReversing),
    /// See [`Algorithm::Counting`].
    Counting(Counting),
    /// See [`Algorithm::Ticket`].
    Ticket(Ticket),
    /// See [`Algorithm::CombiningTree`].
    CombiningTree(CombiningTree),
    /// See [`Algorithm::McsTree`].
    McsTree(McsTree),
    /// See [`Algorithm::Dissemination`].
    Dissemination(Dissemination),
    /// See [`Algorithm::Tournament`].
    Tournament(Tournament),
}

/// The private state of an [`AnyAlgorithm`] participant: the state of the algorithm chosen.
pub enum AnyLocal {
    /// See [`SenseReversing`].
    SenseReversing(<SenseReversing as AlgorithmImpl>::Local),
    /// See [`Counting`].
    Counting(<Counting as AlgorithmImpl>::Local),
    /// See [`Ticket`].
    Ticket(<Ticket as AlgorithmImpl>::Local),
    /// See [`CombiningTree`].
    CombiningTree(<CombiningTree as AlgorithmImpl>::Local),
    /// See [`McsTree`].
    McsTree(<McsTree as AlgorithmImpl>::Local),
    /// See [`Dissemination`].
    Dissemination(<Dissemination as AlgorithmImpl>::Local),
    /// See [`Tournament`].
    Tournament(<Tournament as AlgorithmImpl>::Local),
}

/// Expands `$body` once per algorithm with `$inner` bound to the concrete algorithm (and `$local`
/// to its state). The two values always hold the same variant: a participant's state is made by
/// its own barrier's `local`.
macro_rules! dispatch {
    ($algorithm:expr, $local:expr, |$inner:ident, $state:ident| $body:expr) => {
        match ($algorithm, $local) {
            (AnyAlgorithm::SenseReversing($inner), AnyLocal::SenseReversing($state)) => $body,
            (AnyAlgorithm::Counting($inner), AnyLocal::Counting($state)) => $body,
            (AnyAlgorithm::Ticket($inner), AnyLocal::Ticket($state)) => $body,
            (AnyAlgorithm::CombiningTree($inner), AnyLocal::CombiningTree($state)) => $body,
            (AnyAlgorithm::McsTree($inner), AnyLocal::McsTree($state)) => $body,
            (AnyAlgorithm::Dissemination($inner), AnyLocal::Dissemination($state)) => $body,
            (AnyAlgorithm::Tournament($inner), AnyLocal::Tournament($state)) => $body,
            _ => unreachable!("a participant's state always matches its barrier's algorithm"),
        }
    };
}

impl AnyAlgorithm {
    pub(crate) fn new(algorithm: Algorithm, parties: usize, params: &Params) -> Self {
        match algorithm {
            Algorithm::Auto => Self::new(algorithm.resolve(parties), parties, params),
            Algorithm::SenseReversing => {
                AnyAlgorithm::SenseReversing(SenseReversing::build(parties, params))
            }
            Algorithm::Counting => AnyAlgorithm::Counting(Counting::build(parties, params)),
            Algorithm::Ticket => AnyAlgorithm::Ticket(Ticket::build(parties, params)),
            Algorithm::CombiningTree => {
                AnyAlgorithm::CombiningTree(CombiningTree::build(parties, params))
            }
            Algorithm::McsTree => AnyAlgorithm::McsTree(McsTree::build(parties, params)),
            Algorithm::Dissemination => {
                AnyAlgorithm::Dissemination(Dissemination::build(parties, params))
            }
            Algorithm::Tournament => AnyAlgorithm::Tournament(Tournament::build(parties, params)),
        }
    }
}

impl AnyAlgorithm {
    /// [`AlgorithmImpl::wait`] for every algorithm but counting.
    #[inline(never)]
    fn wait_out_of_line(&self, local: &mut AnyLocal, episode: &Episode<'_>) -> Result<bool, Stop> {
        dispatch!(self, local, |inner, state| inner.wait(state, episode))
    }
}

impl AlgorithmImpl for AnyAlgorithm {
    type Local = AnyLocal;

    fn build(parties: usize, params: &Params) -> Self {
        AnyAlgorithm::new(Algorithm::Auto, parties, params)
    }

    fn prerequisites() -> Result<(), Error> {
        // `build` resolves `Auto`, which may follow the tuning profile.
        check_auto_prerequisites()
    }

    fn kind(&self) -> Algorithm {
        match self {
            AnyAlgorithm::SenseReversing(inner) => inner.kind(),
            AnyAlgorithm::Counting(inner) => inner.kind(),
            AnyAlgorithm::Ticket(inner) => inner.kind(),
            AnyAlgorithm::CombiningTree(inner) => inner.kind(),
            AnyAlgorithm::McsTree(inner) => inner.kind(),
            AnyAlgorithm::Dissemination(inner) => inner.kind(),
            AnyAlgorithm::Tournament(inner) => inner.kind(),
        }
    }

    fn local(&self, rank: usize) -> AnyLocal {
        match self {
            AnyAlgorithm::SenseReversing(inner) => AnyLocal::SenseReversing(inner.local(rank)),
            AnyAlgorithm::Counting(inner) => AnyLocal::Counting(inner.local(rank)),
            AnyAlgorithm::Ticket(inner) => AnyLocal::Ticket(inner.local(rank)),
            AnyAlgorithm::CombiningTree(inner) => AnyLocal::CombiningTree(inner.local(rank)),
            AnyAlgorithm::McsTree(inner) => AnyLocal::McsTree(inner.local(rank)),
            AnyAlgorithm::Dissemination(inner) => AnyLocal::Dissemination(inner.local(rank)),
            AnyAlgorithm::Tournament(inner) => AnyLocal::Tournament(inner.local(rank)),
        }
    }

    /// Counting inline, every other algorithm through one call: counting is `Auto`'s pick at 1-2
    /// threads and whenever threads outnumber cores, where a call costs most (see `episode.rs`);
    /// elsewhere a wait takes a cache-line transfer or more, which dwarfs the call.
    #[inline(always)]
    fn wait(&self, local: &mut AnyLocal, episode: &Episode<'_>) -> Result<bool, Stop> {
        if let (AnyAlgorithm::Counting(inner), AnyLocal::Counting(state)) = (self, &mut *local) {
            return inner.wait(state, episode);
        }
        // A copy: the call takes its address, not that of the episode the counting path keeps
        // in registers.
        self.wait_out_of_line(local, &{ *episode })
    }

    fn leave(&self, local: &mut AnyLocal, episode: &Episode<'_>) -> Result<(), Error> {
        dispatch!(self, local, |inner, state| inner.leave(state, episode))
    }

    fn wake_all(&self) {
        match self {
            AnyAlgorithm::SenseReversing(inner) => inner.wake_all(),
            AnyAlgorithm::Counting(inner) => inner.wake_all(),
            AnyAlgorithm::Ticket(inner) => inner.wake_all(),
            AnyAlgorithm::CombiningTree(inner) => inner.wake_all(),
            AnyAlgorithm::McsTree(inner) => inner.wake_all(),
            AnyAlgorithm::Dissemination(inner) => inner.wake_all(),
            AnyAlgorithm::Tournament(inner) => inner.wake_all(),
        }
    }
}
