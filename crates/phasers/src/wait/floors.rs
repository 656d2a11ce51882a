//! The machine's floors: the three costs every waiting decision is weighed against.
//!
//! A waiter chooses between spinning, yielding its core and sleeping in the kernel. Which is right
//! depends on what each costs on the machine at hand, and those costs differ tenfold between the
//! machines we run on (a cache-line round trip is ~190 ns on one Xeon VM and ~55 ns on an EPYC VM; a
//! futex wake a few µs on the first and ~22 µs on the second). So the budgets are not constants:
//! they are derived from three floors measured once per process, the first time an object needs
//! them, in a few milliseconds (see `floors_measure.rs`).
//!
//! Where the floors come from, first match wins:
//!
//! 1. `PHASERS_FLOORS` ([`Floors::ENV_VAR`]): `round_trip=55ns,yield=1.1us,wake=22us`, any
//!    subset; the floors it leaves out are measured.
//! 2. The tuning [`Profile`](crate::Profile) in use, when `phasers tune` recorded floors in it.
//! 3. A measurement, once per process.

use std::sync::OnceLock;
use std::time::Duration;

use super::floors_measure;
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
    /// Recorded in the tuning profile by `phasers tune`.
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

/// The floors of the loom models, which cannot measure anything (and never spin: see
/// `Tuning::plan`). Their values are the EPYC VM's, so that derived budgets stay sane.
const FIXED: Floors = Floors {
    round_trip: Duration::from_nanos(55),
    yield_handoff: Duration::from_nanos(1_100),
    wake: Duration::from_micros(22),
    source: FloorsSource::Fixed,
};

impl Floors {
    /// The environment variable that overrides the measured floors.
    ///
    /// ```
    /// assert_eq!(phasers::Floors::ENV_VAR, "PHASERS_FLOORS");
    /// ```
    pub const ENV_VAR: &'static str = "PHASERS_FLOORS";

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

    /// The floors every object of this process uses: `PHASERS_FLOORS`, else the tuning profile's,
    /// else measured, for the floors each leaves out. Measured once, the first time it is called,
    /// then cached; a few milliseconds.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `PHASERS_FLOORS` cannot be parsed; the message names the
    /// variable and the expected form. (Every builder returns this error too.)
    ///
    /// ```
    /// let floors = phasers::Floors::current()?;
    /// assert!(floors.wake() > std::time::Duration::ZERO);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn current() -> Result<Floors> {
        static CURRENT: OnceLock<Result<Floors>> = OnceLock::new();
        CURRENT.get_or_init(Floors::resolve).clone()
    }

    /// Measures the floors now, ignoring the environment, the profile and the cache: what
    /// `phasers floors` and `phasers tune` print and record. A few milliseconds; more on a machine
    /// busy with other work.
    ///
    /// ```
    /// let floors = phasers::Floors::measure();
    /// assert_eq!(floors.source(), phasers::FloorsSource::Measured);
    /// assert!(floors.wake() >= floors.round_trip() / 2);
    /// ```
    pub fn measure() -> Floors {
        if cfg!(phasers_loom) {
            return FIXED;
        }
        let measured = floors_measure::measure();
        Floors {
            round_trip: measured.round_trip,
            yield_handoff: measured.yield_handoff,
            wake: measured.wake,
            source: FloorsSource::Measured,
        }
    }

    /// Parses the `PHASERS_FLOORS` form, `round_trip=55ns,yield=1.1us,wake=22us`. Each of the three
    /// keys may be left out; the missing ones are measured. Units: `ns`, `us` (or `µs`), `ms`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the part that could not be read.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::Floors;
    ///
    /// let floors = Floors::from_env_text("wake=40us, round_trip=200ns, yield=2us")?;
    /// assert_eq!(floors.round_trip(), Duration::from_nanos(200));
    /// assert!(Floors::from_env_text("wake=fast").is_err());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn from_env_text(text: &str) -> Result<Floors> {
        let parsed = parse_overrides(text)?;
        let measured = if parsed.is_complete() {
            None
        } else {
            Some(Floors::measure())
        };
        let pick = |set: Option<Duration>, measured_value: fn(&Floors) -> Duration| {
            set.or_else(|| measured.as_ref().map(measured_value))
                .expect("a floor not set in the text is measured")
        };
        Ok(Floors {
            round_trip: pick(parsed.round_trip, Floors::round_trip),
            yield_handoff: pick(parsed.yield_handoff, Floors::yield_handoff),
            wake: pick(parsed.wake, Floors::wake),
            source: if measured.is_some() {
                FloorsSource::EnvironmentAndMeasured
            } else {
                FloorsSource::Environment
            },
        })
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
    pub(crate) fn recorded_in_profile(self) -> Floors {
        Floors {
            source: FloorsSource::Profile,
            ..self
        }
    }

    /// `PHASERS_FLOORS`, else the profile's floors, else a measurement.
    fn resolve() -> Result<Floors> {
        if cfg!(phasers_loom) {
            return Ok(FIXED);
        }
        if let Ok(text) = std::env::var(Floors::ENV_VAR) {
            if !text.trim().is_empty() {
                return Floors::from_env_text(&text).map_err(|error| {
                    Error::invalid(format!(
                        "{}={text:?} cannot be used: {}; write it as \
                         round_trip=55ns,yield=1.1us,wake=22us (any subset), or unset it",
                        Floors::ENV_VAR,
                        message_of(&error)
                    ))
                });
            }
        }
        if let Some(floors) = crate::barrier::profile_floors() {
            return Ok(floors);
        }
        Ok(Floors::measure())
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

fn check_floor(name: &str, value: Duration) -> Result<()> {
    if value.is_zero() || value > MAX_FLOOR {
        return Err(Error::invalid(format!(
            "the {name} floor must be above 0 and at most 1 s, got {value:?}"
        )));
    }
    Ok(())
}

fn message_of(error: &Error) -> String {
    match error {
        Error::InvalidArgument { message } => message.clone(),
        other => other.to_string(),
    }
}

/// The floors a `PHASERS_FLOORS` text sets.
#[derive(Debug, Default)]
struct Overrides {
    round_trip: Option<Duration>,
    yield_handoff: Option<Duration>,
    wake: Option<Duration>,
}

impl Overrides {
    fn is_complete(&self) -> bool {
        self.round_trip.is_some() && self.yield_handoff.is_some() && self.wake.is_some()
    }
}

fn parse_overrides(text: &str) -> Result<Overrides> {
    let mut overrides = Overrides::default();
    for part in text
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
    {
        let (key, value) = part.split_once('=').ok_or_else(|| {
            Error::invalid(format!("{part:?} is not key=value, such as wake=22us"))
        })?;
        let duration = parse_duration(value.trim())?;
        let slot = match key.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "round_trip" | "roundtrip" | "rtt" => &mut overrides.round_trip,
            "yield" | "yield_handoff" => &mut overrides.yield_handoff,
            "wake" | "park" => &mut overrides.wake,
            other => {
                return Err(Error::invalid(format!(
                    "unknown floor {other:?}; the floors are round_trip, yield and wake"
                )))
            }
        };
        check_floor(key.trim(), duration)?;
        *slot = Some(duration);
    }
    Ok(overrides)
}

fn parse_duration(text: &str) -> Result<Duration> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| Error::invalid(format!("{text:?} is not a duration such as 55ns or 22us")))?;
    let scale = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        other => {
            return Err(Error::invalid(format!(
                "{text:?} has the unit {other:?}; use ns, us or ms"
            )))
        }
    };
    Duration::try_from_secs_f64(value * scale)
        .map_err(|_| Error::invalid(format!("{text:?} is out of range")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_text_needs_no_measurement() {
        let floors = Floors::from_env_text("round_trip=55ns,yield=1.1us,wake=22us").unwrap();
        assert_eq!(floors.round_trip(), Duration::from_nanos(55));
        assert_eq!(floors.yield_handoff(), Duration::from_nanos(1100));
        assert_eq!(floors.wake(), Duration::from_micros(22));
        assert_eq!(floors.source(), FloorsSource::Environment);
    }

    #[test]
    fn bad_texts_say_what_is_wrong() {
        for (text, says) in [
            ("wake", "key=value"),
            ("wake=3", "unit"),
            ("wake=3s", "unit"),
            ("speed=3ns", "unknown floor"),
            ("wake=0ns", "above 0"),
            ("wake=2000ms", "at most 1 s"),
            ("wake=-1us", "not a duration"),
        ] {
            let error = Floors::from_env_text(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text:?} gave {error:?}");
        }
    }

    #[test]
    fn a_partial_text_measures_the_rest() {
        let floors = Floors::from_env_text("wake=30us").unwrap();
        assert_eq!(floors.wake(), Duration::from_micros(30));
        assert_eq!(floors.source(), FloorsSource::EnvironmentAndMeasured);
        assert!(floors.round_trip() > Duration::ZERO);
    }
}
