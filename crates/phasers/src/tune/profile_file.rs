//! The tuning profile as a file: its version 1 JSON form (read and written with serde), and
//! `load` and `save`.
//!
//! The wire structs mirror the file; `Profile` keeps the validated form, so a file can only
//! become a `Profile` through `Profile::validated`. Files written by earlier builds keep loading:
//! `tests/profile_compat.rs` reads fixtures written before the profile moved here.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::floors::Floors;
use super::profile::{Profile, ProfileEntry};
use crate::algorithm::Algorithm;
use crate::error::{Error, Result};

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
    "re-run `phasers bench barrier --write-profile` to rewrite it, delete it, or set PHASERS_PROFILE=off to ignore it";

/// The JSON shape of a profile; `Profile` itself keeps the parsed, validated form.
#[derive(Serialize, Deserialize)]
struct ProfileFile {
    format: String,
    version: u64,
    cores: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cpu_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created_unix_s: Option<u64>,
    barrier: Vec<EntryFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    floors: Option<FloorsFile>,
}

/// The floors, in nanoseconds (see `Floors`).
#[derive(Serialize, Deserialize)]
struct FloorsFile {
    round_trip_ns: f64,
    yield_ns: f64,
    wake_ns: f64,
}

impl FloorsFile {
    fn of(floors: Floors) -> Self {
        let ns = |value: std::time::Duration| value.as_secs_f64() * 1e9;
        FloorsFile {
            round_trip_ns: ns(floors.round_trip()),
            yield_ns: ns(floors.yield_handoff()),
            wake_ns: ns(floors.wake()),
        }
    }

    fn floors(&self) -> Result<Floors, String> {
        let duration = |name: &str, ns: f64| {
            std::time::Duration::try_from_secs_f64(ns / 1e9)
                .map_err(|_| format!("\"floors\".{name} is {ns}; a time is a finite number of ns"))
        };
        Floors::new(
            duration("round_trip_ns", self.round_trip_ns)?,
            duration("yield_ns", self.yield_ns)?,
            duration("wake_ns", self.wake_ns)?,
        )
        .map(Floors::recorded_in_profile)
        .map_err(|error| format!("\"floors\": {error}"))
    }
}

#[derive(Serialize, Deserialize)]
struct EntryFile {
    threads: usize,
    algorithm: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    median_ns: Option<f64>,
}

impl Profile {
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
    /// assert!(err.to_string().contains("phasers bench barrier --write-profile"), "{err}"); // says what to do
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn from_json(text: &str) -> Result<Profile> {
        parse(text).map_err(|problem| {
            Error::invalid(format!(
                "not a valid phasers tuning profile: {problem}; write a new one with `phasers bench barrier --write-profile`"
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
        render(self)
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
                 there with `phasers bench barrier --write-profile`",
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

    /// Reads `path` without the caller's context, for [`load`](Self::load) and the lookup.
    pub(crate) fn read(path: &Path) -> Result<Profile, Problem> {
        let text = std::fs::read_to_string(path).map_err(Problem::Unreadable)?;
        parse(&text).map_err(Problem::Malformed)
    }
}

/// `profile` as pretty-printed JSON, ending with a newline.
fn render(profile: &Profile) -> String {
    let file = ProfileFile {
        format: Profile::FORMAT.to_owned(),
        version: Profile::VERSION,
        cores: profile.cores(),
        cpu_model: profile.cpu_model().map(str::to_owned),
        created_by: profile.created_by().map(str::to_owned),
        created_unix_s: profile.created_unix_s(),
        barrier: profile
            .entries()
            .iter()
            .map(|entry| EntryFile {
                threads: entry.threads,
                algorithm: entry.algorithm.name().to_owned(),
                median_ns: entry.median_ns,
            })
            .collect(),
        floors: profile.floors().map(FloorsFile::of),
    };
    let mut text = serde_json::to_string_pretty(&file)
        .expect("a profile always serializes: plain fields, string keys, finite numbers");
    text.push('\n');
    text
}

/// Parses and validates `text`; the error says what is wrong, and the caller adds where the text
/// came from and what to do.
fn parse(text: &str) -> Result<Profile, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|err| format!("it is not JSON ({err})"))?;
    // Check the header before the shape, so that a file of another kind or version is reported
    // as such rather than as a missing field.
    let shown = |key: &str| {
        value
            .get(key)
            .map_or_else(|| "missing".to_owned(), |v| v.to_string())
    };
    if value.get("format").and_then(serde_json::Value::as_str) != Some(Profile::FORMAT) {
        return Err(format!(
            "its \"format\" is {}, not \"{}\", so it is not a phasers profile",
            shown("format"),
            Profile::FORMAT
        ));
    }
    if value.get("version").and_then(serde_json::Value::as_u64) != Some(Profile::VERSION) {
        return Err(format!(
            "its \"version\" is {}, and this build of phasers reads version {} only",
            shown("version"),
            Profile::VERSION
        ));
    }
    let file: ProfileFile = serde_json::from_value(value).map_err(|err| err.to_string())?;
    let entries = file
        .barrier
        .into_iter()
        .enumerate()
        .map(|(index, entry)| {
            let algorithm = entry.algorithm.parse::<Algorithm>().map_err(|err| {
                let detail = match err {
                    Error::InvalidArgument { message } => message,
                    other => other.to_string(),
                };
                format!("\"barrier\" entry {index}: {detail}")
            })?;
            Ok(ProfileEntry {
                threads: entry.threads,
                algorithm,
                median_ns: entry.median_ns,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let floors = file.floors.as_ref().map(FloorsFile::floors).transpose()?;
    let profile = Profile::validated(
        file.cores,
        file.cpu_model,
        file.created_by,
        file.created_unix_s,
        entries,
    )?;
    Ok(match floors {
        Some(floors) => profile.with_floors(floors),
        None => profile,
    })
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

    /// A profile file with the given cores and `barrier` array, the rest well formed.
    fn file(cores: &str, barrier: &str) -> String {
        format!(
            r#"{{"format": "phasers-profile", "version": 1, "cores": {cores}, "barrier": {barrier}}}"#
        )
    }

    fn refused(text: &str) -> String {
        match Profile::from_json(text) {
            Err(Error::InvalidArgument { message }) => message,
            other => panic!("expected InvalidArgument for {text}, got {other:?}"),
        }
    }

    #[test]
    fn the_documented_example_parses_and_optional_fields_may_be_absent() {
        let documented = r#"{
            "format": "phasers-profile",
            "version": 1,
            "cores": 2,
            "cpu_model": "Intel(R) Xeon(R) CPU @ 2.50GHz",
            "created_by": "phasers tune 0.1.0",
            "created_unix_s": 1795000000,
            "barrier": [
              { "threads": 1, "algorithm": "counting", "median_ns": 26.1 },
              { "threads": 2, "algorithm": "dissemination", "median_ns": 139.0 },
              { "threads": 4, "algorithm": "sense-reversing", "median_ns": 4100.0 }
            ]
        }"#;
        let profile = Profile::from_json(documented).unwrap();
        assert_eq!(profile.created_unix_s(), Some(1_795_000_000));
        assert_eq!(profile.entries().len(), 3);

        let minimal = Profile::from_json(&file(
            "3",
            r#"[{"threads": 2, "algorithm": "MCS_tree"}], "unknown": true"#,
        ))
        .unwrap();
        assert_eq!(minimal.cores(), 3);
        assert_eq!(minimal.cpu_model(), None);
        assert_eq!(minimal.created_by(), None);
        assert_eq!(minimal.created_unix_s(), None);
        // Aliases are read, and the canonical name is written back.
        assert_eq!(
            minimal.entries(),
            &[ProfileEntry {
                threads: 2,
                algorithm: Algorithm::McsTree,
                median_ns: None
            }]
        );
        let text = minimal.to_json();
        assert!(text.contains("\"mcs\""), "{text}");
        assert!(
            !text.contains("cpu_model") && !text.contains("median_ns"),
            "{text}"
        );
    }

    #[test]
    fn every_invalid_file_is_refused_with_a_reason() {
        let ok = r#"[{"threads": 1, "algorithm": "counting"}]"#;
        for (text, expected) in [
            ("not json".to_owned(), "it is not JSON"),
            ("[1, 2]".to_owned(), "\"format\" is missing"),
            ("{}".to_owned(), "\"format\" is missing"),
            (
                r#"{"format": "other-tool", "version": 1}"#.to_owned(),
                "\"format\" is \"other-tool\", not \"phasers-profile\"",
            ),
            (
                r#"{"format": "phasers-profile"}"#.to_owned(),
                "\"version\" is missing",
            ),
            (
                r#"{"format": "phasers-profile", "version": 2}"#.to_owned(),
                "\"version\" is 2, and this build of phasers reads version 1 only",
            ),
            (
                r#"{"format": "phasers-profile", "version": "1"}"#.to_owned(),
                "\"version\" is \"1\"",
            ),
            (
                r#"{"format": "phasers-profile", "version": 1, "barrier": []}"#.to_owned(),
                "missing field `cores`",
            ),
            (file("2", "{}"), "invalid type"),
            (file("-1", ok), "invalid value"),
            (file("0", ok), "\"cores\" is 0"),
            (file("2", "[]"), "\"barrier\" has no entries"),
            (
                file("2", r#"[{"threads": 0, "algorithm": "counting"}]"#),
                "\"threads\": 0",
            ),
            (
                file("2", r#"[{"threads": 1, "algorithm": "auto"}]"#),
                "names \"auto\"",
            ),
            (
                file("2", r#"[{"threads": 1, "algorithm": "bogus"}]"#),
                "\"barrier\" entry 0: unknown barrier algorithm \"bogus\"",
            ),
            (
                file("2", r#"[{"threads": 1}]"#),
                "missing field `algorithm`",
            ),
            (
                file(
                    "2",
                    r#"[{"threads": 3, "algorithm": "ticket"}, {"threads": 3, "algorithm": "mcs"}]"#,
                ),
                "3 threads has two entries",
            ),
            (
                file(
                    "2",
                    r#"[{"threads": 1, "algorithm": "ticket", "median_ns": -5}]"#,
                ),
                "\"median_ns\": -5",
            ),
        ] {
            let message = refused(&text);
            assert!(
                message.contains(expected),
                "{text}: expected {expected:?} in {message:?}"
            );
            assert!(
                message.starts_with("not a valid phasers tuning profile")
                    && message.contains("phasers bench barrier --write-profile"),
                "{message}"
            );
        }
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
        assert!(
            message.contains("re-run `phasers bench barrier --write-profile`"),
            "{message}"
        );
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
