//! Which floors this process uses, and the `PHASERS_FLOORS` form that overrides them.
//!
//! The value type, [`Floors`], lives with the tuning data in `tune/floors.rs`; this file decides
//! where this process's floors come from, first match wins:
//!
//! 1. `PHASERS_FLOORS` ([`Floors::ENV_VAR`]): `round_trip=55ns,yield=1.1us,wake=22us`, any
//!    subset; the floors it leaves out are measured.
//! 2. The tuning [`Profile`](crate::Profile) in use, when `phasers tune` recorded floors in it
//!    (with the `profile` feature only: without it no profile is read).
//! 3. A measurement, once per process, the first time an object needs them, in a few milliseconds
//!    (see `measure.rs`).
//!
//! It consults the profile, so it sits above `tune/` and `tune/` never imports it.

use std::sync::OnceLock;
use std::time::Duration;

use super::measure;
use crate::error::{Error, Result};
use crate::tune::check_floor;
pub use crate::tune::{Floors, FloorsSource};

/// The floors of the loom models, which cannot measure anything (and never spin: see
/// `Tuning::plan`). Their values are the EPYC VM's, so that derived budgets stay sane.
const FIXED: Floors = Floors::from_parts(
    Duration::from_nanos(55),
    Duration::from_nanos(1_100),
    Duration::from_micros(22),
    FloorsSource::Fixed,
);

impl Floors {
    /// The environment variable that overrides the measured floors.
    ///
    /// ```
    /// assert_eq!(phasers::Floors::ENV_VAR, "PHASERS_FLOORS");
    /// ```
    pub const ENV_VAR: &'static str = "PHASERS_FLOORS";

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
        let measured = measure::measure();
        Floors::from_parts(
            measured.round_trip,
            measured.yield_handoff,
            measured.wake,
            FloorsSource::Measured,
        )
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
        Ok(Floors::from_parts(
            pick(parsed.round_trip, Floors::round_trip),
            pick(parsed.yield_handoff, Floors::yield_handoff),
            pick(parsed.wake, Floors::wake),
            if measured.is_some() {
                FloorsSource::EnvironmentAndMeasured
            } else {
                FloorsSource::Environment
            },
        ))
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
        #[cfg(feature = "profile")]
        if let Some(floors) = crate::tune::Profile::active().and_then(crate::tune::Profile::floors)
        {
            return Ok(floors);
        }
        Ok(Floors::measure())
    }
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
