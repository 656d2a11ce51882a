//! The tuning profile's value: which algorithm measured fastest at each thread count on this
//! machine, and the rules every profile keeps.
//!
//! `phasers bench barrier --write-profile` writes it; [`Algorithm::Auto`] reads it (see [`ProfileStatus`](crate::ProfileStatus) for where it is
//! looked up and when it is set aside). This file holds the type, its validation and its choice;
//! it imports none of its neighbours. `profile_file.rs` (the JSON form, load and save),
//! `profile_path.rs` (where to look) and `profile_status.rs` (the lookup) build on it.

use super::floors::Floors;
use crate::algorithm::Algorithm;
use crate::error::{Error, Result};

/// The measured choice of [`Algorithm::Auto`] on one machine, written by `phasers bench barrier --write-profile`.
///
/// Only with the `profile` feature (on by default), which also brings its JSON form (serde).
///
/// A profile lists, for a few thread counts, the algorithm that was fastest there. With `n`
/// parties, `Auto` takes the entry with the largest thread count not above `n` (the first entry
/// when `n` is below all of them; see [`choose`](Self::choose)). Where no profile is in use, `Auto`
/// follows its built-in rule, the table on [`Algorithm`].
///
/// # Where it is looked up
///
/// Once per process, the first time `Auto` is resolved:
///
/// 1. `PHASERS_PROFILE` ([`Profile::ENV_VAR`]) set to a path: that file. A missing or invalid file
///    is an error.
/// 2. `PHASERS_PROFILE` set to `off`, `none` (any case) or to nothing: no profile.
/// 3. `PHASERS_PROFILE` unset: the [default path](Self::default_path),
///    `$XDG_CONFIG_HOME/phasers/profile.json` or else `~/.config/phasers/profile.json`, if that
///    file exists. An existing file that is invalid is an error too, since silently ignoring a
///    broken tuning would hide it.
///
/// A valid profile measured on a machine with a different core count ([`cores`](Self::cores)
/// against [`crate::available_cores`]) is set aside, not an error: its timings describe another
/// machine, so the built-in rule applies. [`Profile::status`] tells which case holds.
///
/// An error makes [`BarrierBuilder::build`](crate::BarrierBuilder::build) with `Auto` (and
/// [`Barrier::new`](crate::Barrier::new)) return [`Error::InvalidArgument`], whose message names
/// the file and what to do. It never affects a barrier built with a concrete algorithm, and
/// [`Algorithm::resolve`] never fails: it falls back to the built-in rule. Under the loom models
/// (`--cfg phasers_loom`) no profile is ever read.
///
/// # The file
///
/// JSON, format version 1. `cpu_model`, `created_by`, `created_unix_s` and `median_ns` are
/// informational and may be left out; unknown fields are ignored. Algorithms are written by
/// [`Algorithm::name`] and read by its `FromStr`, so aliases such as `sense` are accepted.
///
/// ```json
/// {
///   "format": "phasers-profile",
///   "version": 1,
///   "cores": 2,
///   "cpu_model": "Intel(R) Xeon(R) CPU @ 2.50GHz",
///   "created_by": "phasers tune 0.1.0",
///   "created_unix_s": 1795000000,
///   "barrier": [
///     { "threads": 1, "algorithm": "counting", "median_ns": 26.1 },
///     { "threads": 2, "algorithm": "dissemination", "median_ns": 139.0 },
///     { "threads": 4, "algorithm": "sense-reversing", "median_ns": 4100.0 }
///   ]
/// }
/// ```
///
/// # Example
///
/// ```
/// use phasers::barrier::{Profile, ProfileEntry};
/// use phasers::Algorithm;
///
/// let entry = |threads, algorithm| ProfileEntry { threads, algorithm, median_ns: None };
/// let profile = Profile::new(
///     2,
///     Some("example CPU".into()),
///     Some("a doctest".into()),
///     vec![entry(1, Algorithm::Counting), entry(4, Algorithm::Dissemination)],
/// )?;
/// assert_eq!(profile.choose(1), Algorithm::Counting);
/// assert_eq!(profile.choose(3), Algorithm::Counting); // 1 is the largest count not above 3
/// assert_eq!(profile.choose(64), Algorithm::Dissemination);
///
/// // The JSON round trip keeps everything.
/// let text = profile.to_json();
/// assert!(text.contains("\"dissemination\""));
/// assert_eq!(Profile::from_json(&text)?, profile);
///
/// // `save` creates the directories; `load` validates, and its errors name the file.
/// let dir = std::env::temp_dir().join(format!("phasers-profile-doc-{}", std::process::id()));
/// let path = dir.join("nested").join("profile.json");
/// profile.save(&path)?;
/// assert_eq!(Profile::load(&path)?, profile);
/// std::fs::write(&path, "{}").unwrap();
/// let err = Profile::load(&path).unwrap_err().to_string();
/// assert!(err.contains("profile.json") && err.contains("phasers bench barrier --write-profile"), "{err}");
/// std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), phasers::Error>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "profile")))]
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    cores: usize,
    cpu_model: Option<String>,
    created_by: Option<String>,
    created_unix_s: Option<u64>,
    /// Sorted by `threads`, no two alike, none `Auto`, never empty.
    entries: Vec<ProfileEntry>,
    /// The floors `phasers bench barrier --write-profile` measured, which the wait budgets use instead of measuring again.
    floors: Option<Floors>,
}

/// One line of a [`Profile`]: from `threads` parties on (up to the next entry), use `algorithm`.
///
/// ```
/// use phasers::barrier::ProfileEntry;
/// use phasers::Algorithm;
///
/// let entry = ProfileEntry { threads: 8, algorithm: Algorithm::McsTree, median_ns: Some(512.0) };
/// assert_eq!(entry.algorithm.name(), "mcs");
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "profile")))]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileEntry {
    /// The thread count that was measured, at least 1.
    pub threads: usize,
    /// The fastest algorithm at that count; never [`Algorithm::Auto`].
    pub algorithm: Algorithm,
    /// Its median time per episode in nanoseconds, for the record (finite and not negative).
    pub median_ns: Option<f64>,
}

impl Profile {
    /// The environment variable that names the profile file, or disables profiles with `off`.
    ///
    /// ```
    /// use phasers::{Profile, ProfileStatus};
    ///
    /// assert_eq!(Profile::ENV_VAR, "PHASERS_PROFILE");
    /// std::env::set_var(Profile::ENV_VAR, "off");
    /// assert_eq!(ProfileStatus::detect(), ProfileStatus::Disabled);
    /// ```
    pub const ENV_VAR: &'static str = "PHASERS_PROFILE";

    /// A profile measured on a machine with `cores` cores, stamped with the current time.
    ///
    /// `entries` may come in any order; they are sorted by thread count.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `cores` is 0, `entries` is empty, two entries have the same
    /// thread count, an entry has 0 threads, names [`Algorithm::Auto`], or has a `median_ns` that
    /// is negative or not finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Algorithm, Profile, ProfileEntry};
    ///
    /// let entry = |threads, algorithm| ProfileEntry { threads, algorithm, median_ns: None };
    /// let entries = vec![entry(8, Algorithm::Tournament), entry(1, Algorithm::Counting)];
    /// let profile = Profile::new(2, None, None, entries)?;
    /// assert_eq!(profile.entries()[0].threads, 1); // sorted by thread count
    /// // A profile names what was measured, and `Auto` is not an algorithm one can measure.
    /// assert!(Profile::new(2, None, None, vec![entry(1, Algorithm::Auto)]).is_err());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn new(
        cores: usize,
        cpu_model: Option<String>,
        created_by: Option<String>,
        entries: Vec<ProfileEntry>,
    ) -> Result<Profile> {
        let created_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .map(|elapsed| elapsed.as_secs());
        Profile::validated(cores, cpu_model, created_by, created_unix_s, entries)
            .map_err(|problem| Error::invalid(format!("cannot make a tuning profile: {problem}")))
    }

    /// The algorithm for `parties`: that of the entry with the largest thread count not above
    /// `parties`, or of the first entry when `parties` is below every count.
    ///
    /// Never [`Algorithm::Auto`].
    ///
    /// ```
    /// use phasers::{Algorithm, Profile, ProfileEntry};
    ///
    /// let entry = |threads, algorithm| ProfileEntry { threads, algorithm, median_ns: None };
    /// let entries = vec![entry(2, Algorithm::Counting), entry(16, Algorithm::Tournament)];
    /// let profile = Profile::new(2, None, None, entries)?;
    /// assert_eq!(profile.choose(1), Algorithm::Counting); // below every count: the first entry
    /// assert_eq!(profile.choose(15), Algorithm::Counting);
    /// assert_eq!(profile.choose(16), Algorithm::Tournament);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn choose(&self, parties: usize) -> Algorithm {
        let covering = self
            .entries
            .partition_point(|entry| entry.threads <= parties);
        self.entries[covering.saturating_sub(1)].algorithm
    }

    /// The core count of the machine the profile was measured on.
    ///
    /// ```
    /// use phasers::{Algorithm, Profile, ProfileEntry};
    ///
    /// let entry = ProfileEntry { threads: 1, algorithm: Algorithm::Counting, median_ns: None };
    /// let profile = Profile::new(8, None, None, vec![entry])?;
    /// assert_eq!(profile.cores(), 8); // used only where `available_cores()` is 8 too
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// The entries, sorted by thread count; never empty.
    ///
    /// ```
    /// use phasers::{Algorithm, Profile, ProfileEntry};
    ///
    /// let entry = |threads| ProfileEntry { threads, algorithm: Algorithm::Ticket, median_ns: None };
    /// let profile = Profile::new(2, None, None, vec![entry(4), entry(1), entry(2)])?;
    /// let threads: Vec<usize> = profile.entries().iter().map(|e| e.threads).collect();
    /// assert_eq!(threads, [1, 2, 4]);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn entries(&self) -> &[ProfileEntry] {
        &self.entries
    }

    /// The CPU the profile was measured on, as `phasers bench barrier --write-profile` described it.
    ///
    /// ```
    /// use phasers::{Algorithm, Profile, ProfileEntry};
    ///
    /// let entry = ProfileEntry { threads: 1, algorithm: Algorithm::Counting, median_ns: None };
    /// let model = Some("Example CPU @ 2.5GHz".to_owned());
    /// let profile = Profile::new(2, model, None, vec![entry])?;
    /// assert_eq!(profile.cpu_model(), Some("Example CPU @ 2.5GHz"));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn cpu_model(&self) -> Option<&str> {
        self.cpu_model.as_deref()
    }

    /// The program that wrote the profile, such as `phasers tune 0.1.0`.
    ///
    /// ```
    /// use phasers::{Algorithm, Profile, ProfileEntry};
    ///
    /// let entry = ProfileEntry { threads: 1, algorithm: Algorithm::Counting, median_ns: None };
    /// let profile = Profile::new(2, None, Some("my-tuner 1.0".into()), vec![entry])?;
    /// assert_eq!(profile.created_by(), Some("my-tuner 1.0"));
    /// assert_eq!(Profile::from_json(&profile.to_json())?.created_by(), Some("my-tuner 1.0"));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn created_by(&self) -> Option<&str> {
        self.created_by.as_deref()
    }

    /// When the profile was made, in seconds since the Unix epoch.
    ///
    /// ```
    /// use phasers::Profile;
    ///
    /// let text = r#"{"format": "phasers-profile", "version": 1, "cores": 2,
    ///                "created_unix_s": 1795000000,
    ///                "barrier": [{"threads": 1, "algorithm": "counting"}]}"#;
    /// assert_eq!(Profile::from_json(text)?.created_unix_s(), Some(1_795_000_000));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn created_unix_s(&self) -> Option<u64> {
        self.created_unix_s
    }

    /// The machine's floors as `phasers bench barrier --write-profile` measured them, if it recorded them. While this
    /// profile is in use, [`Floors::current`] returns them (unless `PHASERS_FLOORS` says
    /// otherwise), so no process needs to measure again.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::barrier::{Profile, ProfileEntry};
    /// use phasers::{Algorithm, Floors};
    ///
    /// let entry = ProfileEntry { threads: 2, algorithm: Algorithm::Counting, median_ns: None };
    /// let floors = Floors::new(Duration::from_nanos(60), Duration::from_micros(1), Duration::from_micros(20))?;
    /// let profile = Profile::new(2, None, None, vec![entry])?.with_floors(floors);
    /// let again = Profile::from_json(&profile.to_json())?;
    /// assert_eq!(again.floors().map(|f| f.wake()), Some(Duration::from_micros(20)));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn floors(&self) -> Option<Floors> {
        self.floors
    }

    /// The same profile, recording `floors` (see [`floors`](Self::floors)).
    ///
    /// ```
    /// use phasers::barrier::{Profile, ProfileEntry};
    /// use phasers::{Algorithm, Floors, FloorsSource};
    ///
    /// let entry = ProfileEntry { threads: 2, algorithm: Algorithm::Counting, median_ns: None };
    /// let floors = Floors::from_env_text("round_trip=60ns,yield=1us,wake=20us")?;
    /// let profile = Profile::new(2, None, None, vec![entry])?.with_floors(floors);
    /// assert_eq!(profile.floors().map(|f| f.source()), Some(FloorsSource::Profile));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn with_floors(mut self, floors: Floors) -> Profile {
        self.floors = Some(floors.recorded_in_profile());
        self
    }

    /// The one place the invariants are checked, for `new` and for files alike.
    pub(super) fn validated(
        cores: usize,
        cpu_model: Option<String>,
        created_by: Option<String>,
        created_unix_s: Option<u64>,
        mut entries: Vec<ProfileEntry>,
    ) -> Result<Profile, String> {
        if cores == 0 {
            return Err(
                "\"cores\" is 0; it is the measuring machine's core count, at least 1".into(),
            );
        }
        if entries.is_empty() {
            return Err(
                "\"barrier\" has no entries; a profile needs at least one thread count".into(),
            );
        }
        for entry in &entries {
            let threads = entry.threads;
            if threads == 0 {
                return Err("an entry has \"threads\": 0; thread counts start at 1".into());
            }
            if entry.algorithm == Algorithm::Auto {
                return Err(format!(
                    "the entry for {threads} threads names \"auto\"; a profile names the concrete \
                     algorithm that measured fastest"
                ));
            }
            if let Some(median) = entry.median_ns {
                if !median.is_finite() || median < 0.0 {
                    return Err(format!(
                        "the entry for {threads} threads has \"median_ns\": {median}; a time is a \
                         finite number of nanoseconds, at least 0"
                    ));
                }
            }
        }
        entries.sort_by_key(|entry| entry.threads);
        if let Some(pair) = entries
            .windows(2)
            .find(|pair| pair[0].threads == pair[1].threads)
        {
            return Err(format!(
                "{} threads has two entries ({} and {}); keep one entry per thread count",
                pair[0].threads, pair[0].algorithm, pair[1].algorithm
            ));
        }
        Ok(Profile {
            cores,
            cpu_model,
            created_by,
            created_unix_s,
            entries,
            floors: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(threads: usize, algorithm: Algorithm) -> ProfileEntry {
        ProfileEntry {
            threads,
            algorithm,
            median_ns: None,
        }
    }

    #[test]
    fn choose_takes_the_largest_count_not_above_the_parties() {
        let profile = Profile::new(
            4,
            None,
            None,
            vec![
                entry(2, Algorithm::Counting),
                entry(4, Algorithm::McsTree),
                entry(16, Algorithm::Dissemination),
            ],
        )
        .unwrap();
        for (parties, expected) in [
            (0, Algorithm::Counting), // below the first entry: the first entry
            (1, Algorithm::Counting),
            (2, Algorithm::Counting), // exact
            (3, Algorithm::Counting), // between
            (4, Algorithm::McsTree),
            (15, Algorithm::McsTree),
            (16, Algorithm::Dissemination),
            (17, Algorithm::Dissemination), // above the last entry: the last entry
            (usize::MAX, Algorithm::Dissemination),
        ] {
            assert_eq!(profile.choose(parties), expected, "{parties} parties");
        }
        let single = Profile::new(1, None, None, vec![entry(3, Algorithm::Ticket)]).unwrap();
        for parties in [0, 1, 3, 100] {
            assert_eq!(single.choose(parties), Algorithm::Ticket);
        }
    }

    #[test]
    fn new_refuses_what_a_file_would_refuse() {
        let message = |result: Result<Profile>| match result {
            Err(Error::InvalidArgument { message }) => message,
            other => panic!("expected InvalidArgument, got {other:?}"),
        };
        let one = || vec![entry(1, Algorithm::Counting)];
        let m = message(Profile::new(0, None, None, one()));
        assert!(m.contains("cannot make a tuning profile"), "{m}");
        assert!(
            m.contains("\"cores\" is 0") && m.contains("at least 1"),
            "{m}"
        );
        let m = message(Profile::new(2, None, None, vec![]));
        assert!(m.contains("no entries"), "{m}");
        let m = message(Profile::new(
            2,
            None,
            None,
            vec![entry(0, Algorithm::Ticket)],
        ));
        assert!(
            m.contains("\"threads\": 0") && m.contains("start at 1"),
            "{m}"
        );
        let m = message(Profile::new(2, None, None, vec![entry(2, Algorithm::Auto)]));
        assert!(
            m.contains("2 threads names \"auto\"") && m.contains("concrete"),
            "{m}"
        );
        let m = message(Profile::new(
            2,
            None,
            None,
            vec![entry(2, Algorithm::Ticket), entry(2, Algorithm::McsTree)],
        ));
        assert!(
            m.contains("2 threads has two entries (ticket and mcs)"),
            "{m}"
        );
        assert!(m.contains("one entry per thread count"), "{m}");
        for bad in [f64::NAN, f64::INFINITY, -1.0] {
            let m = message(Profile::new(
                2,
                None,
                None,
                vec![ProfileEntry {
                    threads: 1,
                    algorithm: Algorithm::Ticket,
                    median_ns: Some(bad),
                }],
            ));
            assert!(m.contains("\"median_ns\"") && m.contains("finite"), "{m}");
        }
    }
}
