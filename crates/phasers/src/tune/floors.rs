//! The machine's floors as values: the three costs every waiting decision is weighed against.
//!
//! A waiter chooses between spinning, yielding its core and sleeping in the kernel. Which is right
//! depends on what each costs on the machine at hand, and those costs differ tenfold between the
//! machines we run on (a cache-line round trip is ~190 ns on one Xeon VM and ~55 ns on an EPYC VM; a
//! futex wake a few µs on the first and ~22 µs on the second). So the wait budgets are derived from
//! three measured floors rather than constants.
//!
//! This file holds the value and its bounds; it imports nothing of the crate but the error, so the
//! tuning profile can record floors and the wait layer can use them. Where the floors of this
//! process come from (`PHASERS_FLOORS`, the profile, a measurement) is decided in
//! `wait/floors/current.rs`, which sits above the profile.

use std::time::Duration;

use crate::error::{Error, Result};

/// What a waiter weighs its choices against: this machine's cost of a cache-line round trip, of
/// handing a core to another thread with a yield, and of waking a thread that sleeps in the kernel.
///
/// The library reads [`Floors::current`] once per process, the first time an object is built, and
/// derives every spin and yield budget from it (see the [module docs](crate::wait)). The `phasers
/// floors` command prints them with what they mean for barriers.
///
/// ```
/// use phasers::Floors;
///
/// let floors = Floors::current()?;
/// assert!(floors.round_trip() > std::time::Duration::ZERO);
/// // Asking again returns the cached values: the measurement runs once per process.
/// assert_eq!(Floors::current()?, floors);
/// println!("{floors}");
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Floors {
    round_trip: Duration,
    yield_handoff: Duration,
    wake: Duration,
    source: FloorsSource,
}

/// Where a [`Floors`] came from.
///
/// ```
/// use phasers::{Floors, FloorsSource};
///
/// let floors = Floors::from_env_text("round_trip=60ns,yield=1us,wake=20us")?;
/// assert_eq!(floors.source(), FloorsSource::Environment);
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloorsSource {
    /// Measured in this process.
    Measured,
    /// All three set by `PHASERS_FLOORS`.
    Environment,
    /// Some set by `PHASERS_FLOORS`, the others measured.
    EnvironmentAndMeasured,
    /// Recorded in the tuning profile by `phasers bench barrier --write-profile` (never without the `profile` feature,
    /// which reads no profile).
    Profile,
    /// Fixed values, where nothing can be measured (the loom models).
    Fixed,
}

impl FloorsSource {
    /// A short name for reports and JSON: `measured`, `environment`, `environment+measured`,
    /// `profile` or `fixed`.
    ///
    /// ```
    /// assert_eq!(phasers::FloorsSource::Measured.name(), "measured");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            FloorsSource::Measured => "measured",
            FloorsSource::Environment => "environment",
            FloorsSource::EnvironmentAndMeasured => "environment+measured",
            FloorsSource::Profile => "profile",
            FloorsSource::Fixed => "fixed",
        }
    }
}

impl Floors {
    /// Floors with the given values, for a program that knows its machine (or a test).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when a value is zero or above one second: no machine's round
    /// trip, yield or wake is, so it is a unit mistake.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::Floors;
    ///
    /// let floors = Floors::new(
    ///     Duration::from_nanos(190),
    ///     Duration::from_micros(1),
    ///     Duration::from_micros(4),
    /// )?;
    /// assert_eq!(floors.wake(), Duration::from_micros(4));
    /// assert!(Floors::new(Duration::ZERO, Duration::from_micros(1), Duration::from_micros(4)).is_err());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn new(round_trip: Duration, yield_handoff: Duration, wake: Duration) -> Result<Floors> {
        for (name, value) in [
            ("round trip", round_trip),
            ("yield hand-off", yield_handoff),
            ("wake", wake),
        ] {
            check_floor(name, value)?;
        }
        Ok(Floors {
            round_trip,
            yield_handoff,
            wake,
            source: FloorsSource::Fixed,
        })
    }

    /// Floors from values already checked (or fixed), with where they came from.
    pub(crate) const fn from_parts(
        round_trip: Duration,
        yield_handoff: Duration,
        wake: Duration,
        source: FloorsSource,
    ) -> Floors {
        Floors {
            round_trip,
            yield_handoff,
            wake,
            source,
        }
    }

    /// A cache line's round trip between two cores: the least any barrier among threads on two
    /// cores can cost per episode.
    ///
    /// ```
    /// let floors = phasers::Floors::from_env_text("round_trip=190ns,yield=1us,wake=4us")?;
    /// assert_eq!(floors.round_trip(), std::time::Duration::from_nanos(190));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn round_trip(&self) -> Duration {
        self.round_trip
    }

    /// One hand-off of a core from a thread that yields to another runnable thread on it: what
    /// each of the `threads / cores` threads sharing a core costs a barrier per episode when
    /// threads outnumber cores.
    ///
    /// ```
    /// let floors = phasers::Floors::from_env_text("round_trip=190ns,yield=1us,wake=4us")?;
    /// assert_eq!(floors.yield_handoff(), std::time::Duration::from_micros(1));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn yield_handoff(&self) -> Duration {
        self.yield_handoff
    }

    /// One wake-up: from a thread's wake call to the sleeping thread running again on another
    /// core. What parking costs a waiter that is released soon after it sleeps.
    ///
    /// ```
    /// let floors = phasers::Floors::from_env_text("round_trip=190ns,yield=1us,wake=4us")?;
    /// assert_eq!(floors.wake(), std::time::Duration::from_micros(4));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wake(&self) -> Duration {
        self.wake
    }

    /// Where these values came from.
    ///
    /// ```
    /// use phasers::{Floors, FloorsSource};
    /// let floors = Floors::from_env_text("round_trip=190ns,yield=1us,wake=4us")?;
    /// assert_eq!(floors.source(), FloorsSource::Environment);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn source(&self) -> FloorsSource {
        self.source
    }

    /// The same values, recorded as coming from the tuning profile.
    #[cfg(feature = "profile")]
    pub(crate) fn recorded_in_profile(self) -> Floors {
        Floors {
            source: FloorsSource::Profile,
            ..self
        }
    }
}

impl std::fmt::Display for Floors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cache-line round trip {:?}, yield hand-off {:?}, wake {:?} ({})",
            self.round_trip,
            self.yield_handoff,
            self.wake,
            self.source.name()
        )
    }
}

/// The longest floor accepted: a second is no machine's round trip, yield or wake.
const MAX_FLOOR: Duration = Duration::from_secs(1);

/// Refuses a floor no machine has (zero, or above [`MAX_FLOOR`]): a unit mistake.
pub(crate) fn check_floor(name: &str, value: Duration) -> Result<()> {
    if value.is_zero() || value > MAX_FLOOR {
        return Err(Error::invalid(format!(
            "the {name} floor must be above 0 and at most 1 s, got {value:?}"
        )));
    }
    Ok(())
}
