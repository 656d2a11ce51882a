//! The tuning profile: which algorithm measured fastest at each thread count on this machine.
//!
//! `phasers tune` writes it; [`Algorithm::Auto`] reads it (see [`ProfileStatus`] for where it is
//! looked up and when it is set aside). This file holds the type and its validation;
//! `profile_json.rs` holds the file format, `profile_path.rs` and `profile_status.rs` the lookup.

use std::path::{Path, PathBuf};

use super::profile_json;
use super::profile_path;
use super::profile_status::{self, ProfileStatus};
use crate::error::{Error, Result};
use crate::wait::Floors;
use crate::Algorithm;

/// The measured choice of [`Algorithm::Auto`] on one machine, written by `phasers tune`.
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
/// assert!(err.contains("profile.json") && err.contains("phasers tune"), "{err}");
/// std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    cores: usize,
    cpu_model: Option<String>,
    created_by: Option<String>,
    created_unix_s: Option<u64>,
    /// Sorted by `threads`, no two alike, none `Auto`, never empty.
    entries: Vec<ProfileEntry>,
    /// The floors `phasers tune` measured, which the wait budgets use instead of measuring again.
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileEntry {
    /// The thread count that was measured, at least 1.
    pub threads: usize,
    /// The fastest algorithm at that count; never [`Algorithm::Auto`].
    pub algorithm: Algorithm,
    /// Its median time per episode in nanoseconds, for the record (finite and not negative).
    pub median_ns: Option<f64>,
}

/// Why a profile was refused, before the caller adds where it came from and what to do.
#[derive(Debug)]
pub(crate) enum Problem {
    /// The file could not be read at all.
    Unreadable(std::io::Error),
    /// It was read, but it is not a valid version 1 profile; the text says what is wrong.
    Malformed(String),
}

/// What a user can do about a profile file that is invalid, wherever it was found.
pub(crate) const WHAT_TO_DO: &str =
    "re-run `phasers tune` to rewrite it, delete it, or set PHASERS_PROFILE=off to ignore it";

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

    /// The `"format"` string every profile file starts with.
    ///
    /// ```
    /// use phasers::Profile;
    ///
    /// assert_eq!(Profile::FORMAT, "phasers-profile");
    /// // A JSON file of another tool is refused, whatever else it holds.
    /// assert!(Profile::from_json(r#"{"format": "other-tool", "version": 1}"#).is_err());
    /// ```
    pub const FORMAT: &'static str = "phasers-profile";

    /// The format version this build reads and writes.
    ///
    /// ```
    /// use phasers::Profile;
    ///
    /// assert_eq!(Profile::VERSION, 1);
    /// let newer = r#"{"format": "phasers-profile", "version": 2}"#;
    /// let err = Profile::from_json(newer).unwrap_err();
    /// assert!(err.to_string().contains("reads version 1 only"), "{err}");
    /// ```
    pub const VERSION: u64 = 1;

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

    /// Parses and validates a profile in the JSON format shown in the [type docs](Profile).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the text is not JSON, is not a version 1 phasers profile, or
    /// breaks a rule of [`new`](Self::new); the message says which.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Algorithm, Profile};
    ///
    /// let text = r#"{"format": "phasers-profile", "version": 1, "cores": 2,
    ///                "barrier": [{"threads": 1, "algorithm": "sense"}]}"#;
    /// let profile = Profile::from_json(text)?;
    /// assert_eq!(profile.choose(4), Algorithm::SenseReversing); // aliases are accepted
    /// let err = Profile::from_json("{}").unwrap_err();
    /// assert!(err.to_string().contains("phasers tune"), "{err}"); // says what to do
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn from_json(text: &str) -> Result<Profile> {
        profile_json::read(text).map_err(|problem| {
            Error::invalid(format!(
                "not a valid phasers tuning profile: {problem}; write a new one with `phasers tune`"
            ))
        })
    }

    /// The profile as pretty-printed JSON, which [`from_json`](Self::from_json) reads back.
    ///
    /// ```
    /// use phasers::{Algorithm, Profile, ProfileEntry};
    ///
    /// let entry = ProfileEntry { threads: 4, algorithm: Algorithm::McsTree, median_ns: None };
    /// let profile = Profile::new(2, None, None, vec![entry])?;
    /// let text = profile.to_json();
    /// assert!(text.contains(r#""algorithm": "mcs""#), "{text}"); // written by `Algorithm::name`
    /// assert_eq!(Profile::from_json(&text)?, profile);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        profile_json::write(self)
    }

    /// Reads and validates the profile at `path`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming `path` when it cannot be read or does not hold a valid
    /// profile (as [`from_json`](Self::from_json)); the message says what to do.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Profile;
    ///
    /// let dir = std::env::temp_dir().join(format!("phasers-doc-load-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("profile.json");
    /// let text = r#"{"format": "phasers-profile", "version": 1, "cores": 4,
    ///                "barrier": [{"threads": 1, "algorithm": "counting"}]}"#;
    /// std::fs::write(&path, text)?;
    /// assert_eq!(Profile::load(&path)?.cores(), 4);
    /// let err = Profile::load(&dir.join("nowhere.json")).unwrap_err();
    /// assert!(err.to_string().contains("nowhere.json"), "{err}"); // names the file
    /// std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(path: &Path) -> Result<Profile> {
        Profile::read(path).map_err(|problem| match problem {
            Problem::Unreadable(err) => Error::invalid(format!(
                "cannot read the tuning profile {}: {err}; check the path, or write a profile \
                 there with `phasers tune`",
                path.display()
            )),
            Problem::Malformed(problem) => Error::invalid(format!(
                "the tuning profile {} is invalid: {problem}; {WHAT_TO_DO}",
                path.display()
            )),
        })
    }

    /// Writes the profile to `path` as [JSON](Self::to_json), creating the parent directories.
    ///
    /// The text goes to a temporary file beside `path` that is then renamed over it, so a program
    /// starting meanwhile reads either the old profile or the new one, never half of one.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the path and the I/O error when a directory cannot be
    /// created or the file cannot be written.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Algorithm, Profile, ProfileEntry};
    ///
    /// let entry = ProfileEntry { threads: 1, algorithm: Algorithm::Counting, median_ns: None };
    /// let profile = Profile::new(2, None, None, vec![entry])?;
    /// let dir = std::env::temp_dir().join(format!("phasers-doc-save-{}", std::process::id()));
    /// let path = dir.join("phasers").join("profile.json"); // the directories are created
    /// profile.save(&path)?;
    /// assert_eq!(Profile::load(&path)?, profile);
    /// std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save(&self, path: &Path) -> Result<()> {
        let cannot = |what: &str, target: &Path, err: std::io::Error| {
            Error::invalid(format!(
                "cannot {what} {}: {err}; check the permissions, or save the profile elsewhere \
                 and point {} at it",
                target.display(),
                Profile::ENV_VAR
            ))
        };
        let parent = path.parent().filter(|dir| !dir.as_os_str().is_empty());
        if let Some(dir) = parent {
            std::fs::create_dir_all(dir)
                .map_err(|err| cannot("create the profile's directory", dir, err))?;
        }
        let Some(name) = path.file_name() else {
            return Err(Error::invalid(format!(
                "cannot save a tuning profile to {}: it names no file; give a path such as \
                 profile.json",
                path.display()
            )));
        };
        let mut temporary_name = name.to_owned();
        temporary_name.push(format!(".{}.tmp", std::process::id()));
        let temporary = path.with_file_name(temporary_name);
        std::fs::write(&temporary, self.to_json())
            .map_err(|err| cannot("write the tuning profile", &temporary, err))?;
        std::fs::rename(&temporary, path).map_err(|err| {
            // Leave no stray file behind; the rename error is the one worth reporting.
            let _ = std::fs::remove_file(&temporary);
            cannot("write the tuning profile", path, err)
        })
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

    /// The CPU the profile was measured on, as `phasers tune` described it.
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

    /// The machine's floors as `phasers tune` measured them, if it recorded them. While this
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

    /// Where a profile is looked up when `PHASERS_PROFILE` is unset:
    /// `$XDG_CONFIG_HOME/phasers/profile.json` when `XDG_CONFIG_HOME` is an absolute path, else
    /// `$HOME/.config/phasers/profile.json` when `HOME` is, else `None`.
    ///
    /// This is also where `phasers tune` writes by default.
    ///
    /// ```
    /// if let Some(path) = phasers::Profile::default_path() {
    ///     assert!(path.ends_with("phasers/profile.json"));
    /// }
    /// ```
    pub fn default_path() -> Option<PathBuf> {
        profile_path::default_path_from(
            std::env::var_os("XDG_CONFIG_HOME"),
            std::env::var_os("HOME"),
        )
    }

    /// Which profile `Auto` uses in this process, and why; looked up once, on first use.
    ///
    /// ```
    /// let status = phasers::Profile::status();
    /// // e.g. "profile /root/.config/phasers/profile.json: in use (measured on 2 cores)"
    /// println!("{status}");
    /// if let Some(profile) = status.profile() {
    ///     assert_eq!(profile.cores(), phasers::available_cores());
    /// }
    /// ```
    pub fn status() -> &'static ProfileStatus {
        profile_status::active()
    }

    /// The profile `Auto` uses in this process, if any: [`status`](Self::status)`().profile()`.
    ///
    /// ```
    /// use phasers::{Algorithm, Profile};
    ///
    /// // Set before anything in this process looks the profile up: none is used.
    /// std::env::set_var(Profile::ENV_VAR, "off");
    /// assert!(Profile::active().is_none());
    /// assert_eq!(Algorithm::Auto.resolve(8), Algorithm::Auto.resolve_builtin(8));
    /// ```
    pub fn active() -> Option<&'static Profile> {
        Profile::status().profile()
    }

    /// Reads `path` without the caller's context, for [`load`](Self::load) and the lookup.
    pub(crate) fn read(path: &Path) -> Result<Profile, Problem> {
        let text = std::fs::read_to_string(path).map_err(Problem::Unreadable)?;
        profile_json::read(&text).map_err(Problem::Malformed)
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

    fn sample() -> Profile {
        Profile::new(
            2,
            Some("Intel(R) Xeon(R) CPU @ 2.50GHz".into()),
            Some("phasers tune 0.1.0".into()),
            vec![
                ProfileEntry {
                    threads: 1,
                    algorithm: Algorithm::Counting,
                    median_ns: Some(26.1),
                },
                ProfileEntry {
                    threads: 2,
                    algorithm: Algorithm::Dissemination,
                    median_ns: Some(139.0),
                },
                ProfileEntry {
                    threads: 4,
                    algorithm: Algorithm::SenseReversing,
                    median_ns: Some(4100.0),
                },
            ],
        )
        .unwrap()
    }

    #[test]
    fn json_round_trip_keeps_every_field() {
        let profile = sample();
        assert!(profile.created_unix_s().is_some());
        let text = profile.to_json();
        assert!(text.contains("\"format\": \"phasers-profile\""), "{text}");
        assert!(text.contains("\"version\": 1"), "{text}");
        assert!(text.contains("\"sense-reversing\""), "{text}");
        assert!(text.ends_with('\n'));
        let back = Profile::from_json(&text).unwrap();
        assert_eq!(back, profile);
        assert_eq!(back.cores(), 2);
        assert_eq!(back.cpu_model(), Some("Intel(R) Xeon(R) CPU @ 2.50GHz"));
        assert_eq!(back.created_by(), Some("phasers tune 0.1.0"));
        assert_eq!(back.entries()[0].median_ns, Some(26.1));
    }

    #[test]
    fn entries_are_sorted_by_thread_count() {
        let profile = Profile::new(
            1,
            None,
            None,
            vec![entry(8, Algorithm::Tournament), entry(1, Algorithm::Ticket)],
        )
        .unwrap();
        let threads: Vec<usize> = profile.entries().iter().map(|e| e.threads).collect();
        assert_eq!(threads, [1, 8]);
        let parsed = Profile::from_json(
            r#"{"format": "phasers-profile", "version": 1, "cores": 1, "barrier": [
                {"threads": 8, "algorithm": "tournament"}, {"threads": 1, "algorithm": "ticket"}
            ]}"#,
        )
        .unwrap();
        assert_eq!(parsed.entries(), profile.entries());
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

    #[test]
    fn load_and_save_name_the_path() {
        let dir = std::env::temp_dir().join(format!("phasers-profile-unit-{}", std::process::id()));
        let path = dir.join("a").join("b").join("profile.json");
        let profile = sample();
        profile.save(&path).unwrap();
        assert_eq!(Profile::load(&path).unwrap(), profile);
        // Saving again replaces the file and leaves no temporary beside it.
        profile.save(&path).unwrap();
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["profile.json"]);

        std::fs::write(&path, r#"{"format": "phasers-profile", "version": 9}"#).unwrap();
        let message = Profile::load(&path).unwrap_err().to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("version\" is 9"), "{message}");
        assert!(message.contains("re-run `phasers tune`"), "{message}");
        assert!(message.contains("PHASERS_PROFILE=off"), "{message}");

        let missing = dir.join("missing.json");
        let message = Profile::load(&missing).unwrap_err().to_string();
        assert!(
            message.contains("cannot read the tuning profile"),
            "{message}"
        );
        assert!(message.contains("missing.json"), "{message}");

        // A parent that is a file cannot become a directory.
        let blocked = path.join("profile.json");
        let message = profile.save(&blocked).unwrap_err().to_string();
        assert!(
            message.contains("cannot create the profile's directory"),
            "{message}"
        );
        assert!(message.contains(&path.display().to_string()), "{message}");
        // A directory in place of the file cannot be replaced by one.
        let message = profile.save(&dir.join("a")).unwrap_err().to_string();
        assert!(
            message.contains("cannot write the tuning profile"),
            "{message}"
        );
        let message = profile.save(Path::new("/")).unwrap_err().to_string();
        assert!(message.contains("names no file"), "{message}");

        std::fs::remove_dir_all(&dir).unwrap();
    }
}
