//! The version 1 JSON form of a tuning profile, shown in `Profile`'s docs.
//!
//! The wire structs mirror the file; `Profile` keeps the validated form, so a file can only
//! become a `Profile` through `Profile::validated`.

use serde::{Deserialize, Serialize};

use super::profile::{Profile, ProfileEntry};
use crate::error::Error;
use crate::wait::Floors;
use crate::Algorithm;

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

/// `profile` as pretty-printed JSON, ending with a newline.
pub(super) fn write(profile: &Profile) -> String {
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
pub(super) fn read(text: &str) -> Result<Profile, String> {
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
                    && message.contains("phasers tune"),
                "{message}"
            );
        }
    }
}
